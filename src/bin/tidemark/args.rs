//! Minimal argument handling shared by the subcommands: positional files (directories expanded),
//! `--flag` switches and `--key value` options.

use std::path::{Path, PathBuf};
use tidemark::engine::Session;

pub struct Args {
    pub files: Vec<PathBuf>,
    pub flags: Vec<String>,
    pub options: Vec<(String, String)>,
}

impl Args {
    /// Parses `argv`; `valued` names the options that take a value.
    pub fn parse(argv: &[String], valued: &[&str]) -> Result<Self, String> {
        let mut a = Args { files: Vec::new(), flags: Vec::new(), options: Vec::new() };
        let mut it = argv.iter();
        while let Some(arg) = it.next() {
            // `--name`, or `-o`-style single-letter options.
            let name = arg.strip_prefix("--").or_else(|| arg.strip_prefix('-').filter(|n| n.len() == 1));
            if let Some(name) = name {
                if valued.contains(&name) {
                    let v = it.next().ok_or_else(|| format!("--{name} needs a value"))?;
                    a.options.push((name.to_string(), v.clone()));
                } else {
                    a.flags.push(name.to_string());
                }
            } else {
                a.files.push(PathBuf::from(arg));
            }
        }
        Ok(a)
    }

    pub fn flag(&self, name: &str) -> bool {
        self.flags.iter().any(|f| f == name)
    }

    pub fn option(&self, name: &str) -> Option<&str> {
        self.options.iter().rev().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    /// Rejects flags the command does not know.
    pub fn check_flags(&self, known: &[&str]) -> Result<(), String> {
        match self.flags.iter().find(|f| !known.contains(&f.as_str())) {
            Some(f) => Err(format!("unknown option --{f}")),
            None => Ok(()),
        }
    }

    /// The files, with directories replaced by the files below them (sorted, so output is stable).
    pub fn expanded_files(&self) -> Result<Vec<PathBuf>, String> {
        let mut out = Vec::new();
        for f in &self.files {
            expand(f, &mut out)?;
        }
        Ok(out)
    }
}

/// The one trace a single-file command reads, opened in a fresh session.
pub struct OpenedFile {
    pub args: Args,
    /// The path as given, for messages.
    pub name: String,
    pub session: Session,
    pub id: u32,
}

/// Parses `argv` of `tidemark <command>` (`valued` options take a value; `flags` are the switches it
/// knows), reads its one FILE and opens it. On an error it prints it (with `usage` for a usage error)
/// and gives the exit status: 2 for usage, 1 for a file that cannot be read or opened.
pub fn open_one(command: &str, usage: &str, argv: &[String], valued: &[&str], flags: &[&str]) -> Result<OpenedFile, i32> {
    let args = Args::parse(argv, valued).and_then(|a| a.check_flags(flags).map(|_| a)).map_err(|e| {
        eprintln!("tidemark {command}: {e}\n{usage}");
        2
    })?;
    let [path] = args.files.as_slice() else {
        eprintln!("tidemark {command}: give exactly one trace file\n{usage}");
        return Err(2);
    };
    let name = path.display().to_string();
    let bytes = tidemark::engine::read_input::read_input(path).map_err(|e| {
        eprintln!("tidemark: {name}: cannot read the file: {e}");
        1
    })?;
    let mut session = Session::new();
    let id = session.open(&name, bytes, &mut |_, _| {}).map(|f| f.id).map_err(|e| {
        eprintln!("tidemark: {e}");
        1
    })?;
    Ok(OpenedFile { args, name, session, id })
}

fn expand(path: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
    if path.is_dir() {
        let mut entries: Vec<PathBuf> =
            std::fs::read_dir(path).map_err(|e| format!("{}: {e}", path.display()))?.filter_map(|e| e.ok().map(|e| e.path())).collect();
        entries.sort();
        for e in entries {
            if e.is_dir() {
                expand(&e, out)?;
            } else if is_profile_name(&e) {
                out.push(e);
            }
        }
        Ok(())
    } else {
        out.push(path.to_path_buf());
        Ok(())
    }
}

fn is_profile_name(p: &Path) -> bool {
    p.file_name().and_then(|n| n.to_str()).is_some_and(tidemark::decode::sniff::is_profile_name)
}
