//! `tidemark bundle`: the page's "Export offline HTML", for CI artifacts ("attach the memory report of
//! every nightly run"). The app's assets come from a built page (`trunk build --release` → `dist/`).

use crate::args::Args;
use std::path::{Path, PathBuf};
use tidemark::engine::bundle::{self, Assets};
use tidemark::engine::Session;

const USAGE: &str =
    "usage: tidemark bundle FILE|DIR... -o OUT.html [--slim] [--tool TOOL] [--file NAME] [--module NAME] [--memory-id ID] [--dist DIR]";

fn dist_dir(args: &Args) -> PathBuf {
    if let Some(d) = args.option("dist") {
        return PathBuf::from(d);
    }
    if let Ok(d) = std::env::var("TIDEMARK_DIST") {
        return PathBuf::from(d);
    }
    PathBuf::from("dist")
}

fn read_assets(dist: &Path) -> Result<Assets, String> {
    let read = |name: &str| {
        std::fs::read(dist.join(name)).map_err(|e| {
            format!(
                "{}: {e}. Build the page first (`trunk build --release`, or scripts/serve.sh) or point --dist at a built page",
                dist.join(name).display()
            )
        })
    };
    Ok(Assets { js: read(bundle::JS_NAME)?, wasm: read(bundle::WASM_NAME)?, css: read(bundle::CSS_NAME)? })
}

pub fn run(argv: &[String]) -> i32 {
    let args =
        match Args::parse(argv, &["o", "tool", "file", "module", "memory-id", "dist"]).and_then(|a| a.check_flags(&["slim"]).map(|_| a)) {
            Ok(a) => a,
            Err(e) => {
                eprintln!("tidemark bundle: {e}\n{USAGE}");
                return 2;
            }
        };
    let (Some(out), Ok(files)) = (args.option("o"), args.expanded_inputs()) else {
        eprintln!("tidemark bundle: -o OUT.html is required\n{USAGE}");
        return 2;
    };
    if files.is_empty() {
        eprintln!("tidemark bundle: no files given\n{USAGE}");
        return 2;
    }
    let assets = match read_assets(&dist_dir(&args)) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("tidemark bundle: {e}");
            return 1;
        }
    };
    // Every file must open: a report with a file that cannot be read helps nobody.
    let mut session = Session::new();
    let mut names = Vec::new();
    for input in &files {
        let (path, name) = (&input.path, input.relative.clone());
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("tidemark: {}: cannot read the file: {e}", path.display());
                return 1;
            }
        };
        if let Err(e) = session.open(&name, bytes, &mut |_, _| {}) {
            eprintln!("tidemark: {e}");
            return 1;
        }
        names.push(name);
    }
    // --slim: traces shed the lines no memory tool reads (see engine::slim); other files go as they are.
    let slim: Vec<Option<Vec<u8>>> =
        session.files().iter().map(|f| if args.flag("slim") { tidemark::engine::slim::of(&f.file) } else { None }).collect();
    let profiles: Vec<bundle::Profile> = session
        .files()
        .iter()
        .zip(&names)
        .zip(&slim)
        .map(|((f, name), s)| bundle::Profile { name, bytes: s.as_deref().unwrap_or_else(|| f.file.source_bytes()) })
        .collect();
    let first = names.first().cloned().unwrap_or_default();
    let mut view: Vec<(&str, &str)> =
        vec![("tool", args.option("tool").unwrap_or("file-details")), ("file", args.option("file").unwrap_or(&first))];
    for key in ["module", "memory-id"] {
        if let Some(v) = args.option(key) {
            view.push((key, v));
        }
    }
    let html = bundle::build(&assets, &profiles, &bundle::view_hash(&view));
    if let Err(e) = std::fs::write(out, &html) {
        eprintln!("tidemark bundle: {out}: {e}");
        return 1;
    }
    eprintln!("wrote {out} ({} bytes, {} profile(s)); open it from disk, no server needed", html.len(), profiles.len());
    0
}
