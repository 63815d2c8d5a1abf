//! `tidemark bundle`: the page's "Export offline HTML", for CI artifacts ("attach the memory report of
//! every nightly run"). The app's assets come from a built page (`trunk build --release` → `dist/`).

use crate::args::Args;
use std::path::{Path, PathBuf};
use tidemark::engine::bundle::{self, Assets};
use tidemark::engine::Session;

const USAGE: &str = "usage: tidemark bundle FILE|DIR... -o OUT.html [--slim] [--tool TOOL] [--file NAME] [--module NAME] [--memory-id ID] \
     [--dist DIR] [--max-bytes N] [--json]";

/// The exit status when the profiles would embed more than `--max-bytes`: a caller (the notebook
/// package) tells it from a failure and may ask again for the slim copy.
const TOO_LARGE: i32 = 3;

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
    Ok(Assets {
        js: read(bundle::JS_NAME)?,
        wasm: read(bundle::WASM_NAME)?,
        engine_js: read(bundle::ENGINE_JS_NAME)?,
        engine_wasm: read(bundle::ENGINE_WASM_NAME)?,
        css: read(bundle::CSS_NAME)?,
    })
}

pub fn run(argv: &[String]) -> i32 {
    let args = match Args::parse(argv, &["o", "tool", "file", "module", "memory-id", "dist", "max-bytes"])
        .and_then(|a| a.check_flags(&["slim", "json"]).map(|_| a))
    {
        Ok(a) => a,
        Err(e) => {
            eprintln!("tidemark bundle: {e}\n{USAGE}");
            return 2;
        }
    };
    let max_bytes = match args.option("max-bytes").map(str::parse::<u64>) {
        None => None,
        Some(Ok(n)) => Some(n),
        Some(Err(_)) => {
            eprintln!("tidemark bundle: --max-bytes takes a number of bytes\n{USAGE}");
            return 2;
        }
    };
    let (Some(out), files) = (args.option("o"), args.expanded_inputs()) else {
        eprintln!("tidemark bundle: -o OUT.html is required\n{USAGE}");
        return 2;
    };
    if args.files.is_empty() {
        eprintln!("tidemark bundle: no files given\n{USAGE}");
        return 2;
    }
    let files = match files {
        Ok(f) if f.is_empty() => {
            eprintln!(
                "tidemark bundle: no profile in {}: Tidemark reads XProf traces (*.xplane.pb[.gz]), XLA HloProto dumps (*.hlo.pb) and JAX device memory profiles (*.prof)",
                args.files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>().join(", ")
            );
            return 1;
        }
        Ok(f) => f,
        Err(e) => {
            eprintln!("tidemark bundle: {e}");
            return 1;
        }
    };
    // The sizes on disk first, so a folder far too large is refused before anything is read.
    let on_disk: u64 = files.iter().map(|i| std::fs::metadata(&i.path).map_or(0, |m| m.len())).sum();
    if let Some(max) = max_bytes.filter(|&max| on_disk > max && !args.flag("slim")) {
        return too_large(&args, on_disk, max, false);
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
    let embedded: u64 = profiles.iter().map(|p| p.bytes.len() as u64).sum();
    if let Some(max) = max_bytes.filter(|&max| embedded > max) {
        return too_large(&args, embedded, max, args.flag("slim"));
    }
    // Without --tool the page lands where its first screen would (engine::first_screen), as after a drop.
    let mut view: Vec<(&str, &str)> = vec![("file", args.option("file").unwrap_or(&names[0]))];
    for key in ["tool", "module", "memory-id"] {
        if let Some(v) = args.option(key) {
            view.push((key, v));
        }
    }
    let html = bundle::build(&assets, &profiles, &bundle::view_hash(&view));
    if let Err(e) = std::fs::write(out, &html) {
        eprintln!("tidemark bundle: {out}: {e}");
        return 1;
    }
    if args.flag("json") {
        let listed: Vec<serde_json::Value> = profiles
            .iter()
            .zip(&files)
            .map(|(p, i)| serde_json::json!({"name": p.name, "embedded_bytes": p.bytes.len(), "source_bytes": std::fs::metadata(&i.path).map_or(0, |m| m.len())}))
            .collect();
        let summary =
            serde_json::json!({"out": out, "bytes": html.len(), "slim": args.flag("slim"), "embedded_bytes": embedded, "profiles": listed});
        println!("{summary}");
    }
    eprintln!("wrote {out} ({} bytes, {} profile(s)); open it from disk, no server needed", html.len(), profiles.len());
    0
}

/// Refuses a bundle whose profiles come to `bytes`, over `max`: the reason in words (and, with
/// `--json`, as an object on stdout), and [`TOO_LARGE`].
fn too_large(args: &Args, bytes: u64, max: u64, slim: bool) -> i32 {
    let what = if slim { "their slim copies" } else { "the profiles" };
    eprintln!(
        "tidemark bundle: {what} come to {:.1} MB, over the {:.1} MB asked for (--max-bytes){}",
        bytes as f64 / 1e6,
        max as f64 / 1e6,
        if slim { "" } else { "; --slim keeps only what the memory tools read" }
    );
    if args.flag("json") {
        println!("{}", serde_json::json!({"error": "too_large", "bytes": bytes, "max_bytes": max, "slim": slim}));
    }
    TOO_LARGE
}
