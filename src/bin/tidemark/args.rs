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
        Ok(self.expanded_inputs()?.into_iter().map(|i| i.path).collect())
    }

    /// [`Args::expanded_files`], each with its path relative to what was named: below a directory
    /// argument, relative to it; a file argument, its file name (as a page names a dropped file).
    pub fn expanded_inputs(&self) -> Result<Vec<Input>, String> {
        let mut out = Vec::new();
        for f in &self.files {
            if f.is_dir() {
                expand(f, f, &mut out)?;
            } else {
                let relative = f.file_name().map_or_else(|| f.display().to_string(), |n| n.to_string_lossy().into_owned());
                out.push(Input { path: f.clone(), relative });
            }
        }
        Ok(out)
    }
}

/// A file to open and the path that names it.
pub struct Input {
    pub path: PathBuf,
    /// `/`-separated, relative to the directory it was found in (see [`Args::expanded_inputs`]).
    pub relative: String,
}

fn expand(root: &Path, dir: &Path, out: &mut Vec<Input>) -> Result<(), String> {
    let mut entries: Vec<PathBuf> =
        std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for e in entries {
        if e.is_dir() {
            expand(root, &e, out)?;
        } else if is_profile_name(&e) {
            let relative = e.strip_prefix(root).unwrap_or(&e).iter().map(|c| c.to_string_lossy()).collect::<Vec<_>>().join("/");
            out.push(Input { path: e, relative });
        }
    }
    Ok(())
}

fn is_profile_name(p: &Path) -> bool {
    p.file_name().and_then(|n| n.to_str()).is_some_and(tidemark::decode::sniff::is_profile_name)
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
    let mut session = Session::new();
    let id = crate::open::open_file(&mut session, path, &name).map_err(|e| {
        eprintln!("tidemark: {e}");
        1
    })?;
    Ok(OpenedFile { args, name, session, id })
}
