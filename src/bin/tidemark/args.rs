//! Minimal argument handling shared by the subcommands: positional files (directories expanded),
//! `--flag` switches and `--key value` options.

use std::mem::ManuallyDrop;
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
        Ok(self.expanded()?.0)
    }

    /// [`Args::expanded_inputs`], and the sidecars found beside them in the directories (TensorBoard's
    /// and XProf's tool outputs, which are not opened).
    pub fn expanded(&self) -> Result<(Vec<Input>, Vec<Input>), String> {
        let (mut out, mut sidecars) = (Vec::new(), Vec::new());
        for f in &self.files {
            if f.is_dir() {
                expand(f, f, &mut out, &mut sidecars)?;
            } else {
                let relative = f.file_name().map_or_else(|| f.display().to_string(), |n| n.to_string_lossy().into_owned());
                out.push(Input { path: f.clone(), relative });
            }
        }
        Ok((out, sidecars))
    }
}

/// A file to open and the path that names it.
pub struct Input {
    pub path: PathBuf,
    /// `/`-separated, relative to the directory it was found in (see [`Args::expanded_inputs`]).
    pub relative: String,
}

fn expand(root: &Path, dir: &Path, out: &mut Vec<Input>, sidecars: &mut Vec<Input>) -> Result<(), String> {
    let mut entries: Vec<PathBuf> =
        std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for e in entries {
        if e.is_dir() {
            expand(root, &e, out, sidecars)?;
            continue;
        }
        let relative = || e.strip_prefix(root).unwrap_or(&e).iter().map(|c| c.to_string_lossy()).collect::<Vec<_>>().join("/");
        let name = e.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if tidemark::decode::log_dir::is_sidecar(name) {
            sidecars.push(Input { relative: relative(), path: e });
        } else if is_profile_name(&e) {
            out.push(Input { relative: relative(), path: e });
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
    pub session: OneShotSession,
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
    let mut session = session_for(command, &args);
    let id = crate::open::open_file(&mut session, path, &name).map_err(|e| {
        eprintln!("tidemark: {e}");
        1
    })?;
    Ok(OpenedFile { args, name, session, id })
}

/// A command's session, never dropped: the process exits right after the command prints, and freeing
/// every decoded index, op db and cached analysis one by one first was pure cost (3–5% of the whole
/// process on a 1 MB device trace).
pub type OneShotSession = ManuallyDrop<Session>;

/// The session `command` opens its files in: of what [`Session::open`] and the op tables' pass compute
/// for the page (where any tool may be asked next), only what `command` reads.
/// - The Memory Profile at open: only `memory-profile`.
/// - The steps at open: only the commands that show them (`overview-page`, `input-pipeline-analyzer`,
///   whose empty-state line reads the count); the others that read them find them when asked.
/// - The host's framework ops: not the device-side tables without steps (`hlo-stats`, `op-profile`,
///   `kernel-stats`), unless `--step` limits them to a step (the steps are the Overview Page's, which
///   reads them; so does the Roofline, a row per step), nor `xla-ops-cpu`.
/// - The XLA ops on CPU: only `xla-ops-cpu`.
fn session_for(command: &str, args: &Args) -> OneShotSession {
    let mut session = if command == "memory-profile" { Session::new() } else { Session::deferring_memory_profiles() };
    if !matches!(command, "overview-page" | "input-pipeline-analyzer") {
        session = session.deferring_steps();
    }
    if matches!(command, "hlo-stats" | "op-profile" | "kernel-stats" | "xla-ops-cpu") && args.option("step").is_none() {
        session = session.leaving_out_host_ops();
    }
    if command != "xla-ops-cpu" {
        session = session.leaving_out_xla_ops_cpu();
    }
    ManuallyDrop::new(session)
}

/// The traces a run command reads, opened in a fresh session: one file, or every trace
/// (`*.xplane.pb[.gz]`) under a run folder, as the run's hosts in path order.
pub struct OpenedRun {
    pub args: Args,
    /// The path as given, for messages.
    pub name: String,
    pub session: OneShotSession,
    /// The hosts' file ids, in path order (the order the tools combine them in).
    pub ids: Vec<u32>,
}

/// [`open_one`] for the tools that combine a run's hosts: FILE opens as [`open_one`] opens it; RUN_DIR
/// opens as [`open_run_dir`] opens it.
pub fn open_run(command: &str, usage: &str, argv: &[String], valued: &[&str], flags: &[&str]) -> Result<OpenedRun, i32> {
    let args =
        Args::parse(argv, valued).and_then(|a| a.check_flags(flags).map(|_| a)).map_err(|e| RunError::Usage(e).report(command, usage))?;
    let dir = match args.files.as_slice() {
        [dir] if dir.is_dir() => dir.clone(),
        _ => {
            let f = open_one(command, usage, argv, valued, flags)?;
            return Ok(OpenedRun { args: f.args, name: f.name, session: f.session, ids: vec![f.id] });
        }
    };
    let mut session = session_for(command, &args);
    let ids = open_run_dir(&mut session, &dir, "").map_err(|e| e.report(command, usage))?;
    Ok(OpenedRun { args, name: dir.display().to_string(), session, ids })
}

/// Why a run could not be opened.
pub enum RunError {
    /// The folder is no run (no trace, or several runs): a usage error.
    Usage(String),
    /// One of its traces could not be read or opened.
    Open(tidemark::engine::EngineError),
}

impl RunError {
    /// Prints the error (a usage error with `usage`) and gives the exit status: 2 for usage, 1 for a
    /// file.
    pub fn report(self, command: &str, usage: &str) -> i32 {
        match self {
            RunError::Usage(e) => {
                eprintln!("tidemark {command}: {e}\n{usage}");
                2
            }
            RunError::Open(e) => {
                eprintln!("tidemark: {e}");
                1
            }
        }
    }
}

/// Opens every trace (`*.xplane.pb[.gz]`; in a folder without any, every PyTorch trace,
/// `*.pt.trace.json[.gz]`, one per rank) below the run folder `dir` into `session`, each named by its
/// path in the folder after `prefix` (through [`crate::open::open_file`]): the run's hosts' ids, in
/// path order (the order the tools combine them in). A folder without traces, or with traces of
/// several runs (folders), is a usage error.
pub fn open_run_dir(session: &mut Session, dir: &Path, prefix: &str) -> Result<Vec<u32>, RunError> {
    let name = dir.display().to_string();
    let args = Args { files: vec![dir.to_path_buf()], flags: Vec::new(), options: Vec::new() };
    let inputs = args.expanded_inputs().map_err(RunError::Usage)?;
    let of_kind = |suffix: &str| -> Vec<&Input> {
        inputs.iter().filter(|i| i.relative.to_ascii_lowercase().trim_end_matches(".gz").ends_with(suffix)).collect()
    };
    let xspace = of_kind(".xplane.pb");
    let traces = if xspace.is_empty() { of_kind(".pt.trace.json") } else { xspace };
    let mut run_dirs: Vec<String> = traces.iter().map(|i| tidemark::decode::log_dir::run_host(&i.relative).run_dir).collect();
    run_dirs.dedup();
    match run_dirs.len() {
        0 => return Err(RunError::Usage(format!("{name} holds no trace (*.xplane.pb, or PyTorch's *.pt.trace.json)"))),
        1 => {}
        _ => return Err(RunError::Usage(format!("{name} holds several runs ({}); give one run's folder", run_dirs.join(", ")))),
    }
    traces.iter().map(|t| crate::open::open_file(session, &t.path, &format!("{prefix}{}", t.relative)).map_err(RunError::Open)).collect()
}

impl OpenedRun {
    /// For a run of several hosts, the line that says so (text output begins with it); else empty.
    pub fn hosts_line(&self) -> String {
        if self.ids.len() < 2 {
            return String::new();
        }
        let hosts: Vec<&str> = self.ids.iter().filter_map(|&id| self.session.get(id)).map(|f| f.overview.run_host.host.as_str()).collect();
        format!("{}: {} hosts combined as XProf combines them ({})\n", self.name, hosts.len(), hosts.join(", "))
    }
}
