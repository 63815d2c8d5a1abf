//! `tidemark graph-viewer`: an HLO module's graph around an instruction, as XProf's graph viewer
//! draws it — DOT (the default), Tidemark's JSON, or a list of the modules; `--overview`: the whole
//! module with each fusion one node (the page's overview).

use crate::args::Args;
use crate::open::open_file;
use tidemark::analysis::graph_viewer::dot::to_dot;
use tidemark::analysis::graph_viewer::{GraphOptions, DEFAULT_WIDTH};
use tidemark::engine::Session;

const USAGE: &str = "usage: tidemark graph-viewer FILE --module M [--node NAME] [--width N] [--format dot|json] [--overview]";

pub fn run(argv: &[String]) -> i32 {
    let args = match Args::parse(argv, &["module", "node", "width", "format"]).and_then(|a| a.check_flags(&["overview"]).map(|_| a)) {
        Ok(a) => a,
        Err(e) => return usage(&e),
    };
    let [path] = args.files.as_slice() else { return usage("give exactly one FILE") };
    let width = match args.option("width").map(str::parse::<u32>) {
        None => DEFAULT_WIDTH,
        Some(Ok(n)) => n,
        Some(Err(_)) => return usage("--width takes a whole number of hops"),
    };
    let format = args.option("format").unwrap_or("dot");
    if !matches!(format, "dot" | "json") {
        return usage("--format is dot or json");
    }
    let name = path.display().to_string();
    let mut session = Session::deferring_memory_profiles().deferring_steps();
    let file_id = match open_file(&mut session, path, &name) {
        Ok(id) => id,
        Err(e) => return fail(&e.to_string()),
    };
    let modules = match session.graph_viewer_modules(file_id) {
        Ok(m) => m,
        Err(e) => return fail(&e.to_string()),
    };
    let module = match (args.option("module"), modules.as_slice()) {
        (Some(m), _) => m.to_string(),
        (None, []) => {
            return fail(&format!("{name}: no HLO modules here; the graph viewer reads XLA HloProtos and XProf traces (*.xplane.pb)"))
        }
        (None, [one]) => one.name.clone(),
        (None, many) => {
            eprintln!("tidemark graph-viewer: {name} holds {} modules; choose one with --module:", many.len());
            for m in many {
                eprintln!("  {}  ({} instructions)", m.name, m.instructions);
            }
            return 2;
        }
    };
    let graph = if args.flag("overview") {
        if args.option("node").is_some() {
            return usage("--overview draws the whole module: give no --node");
        }
        session.graph_overview_graph(file_id, &module)
    } else {
        session.graph_viewer(file_id, &module, &GraphOptions { node: args.option("node").map(str::to_string), width })
    };
    let graph = match graph {
        Ok(g) => g,
        Err(e) => return fail(&e.to_string()),
    };
    for note in &graph.notes {
        eprintln!("tidemark graph-viewer: note: {note}");
    }
    if format == "json" {
        // The graph, and what the trace and the buffer assignment say of its instructions (the
        // page's colouring and card).
        let figures = match session.graph_figures(file_id, &module, &graph) {
            Ok(f) => f,
            Err(e) => return fail(&e.to_string()),
        };
        let mut json = serde_json::to_value(&graph).unwrap_or_default();
        json["figures"] = serde_json::to_value(&figures).unwrap_or_default();
        println!("{}", serde_json::to_string_pretty(&json).unwrap_or_default());
    } else {
        print!("{}", to_dot(&graph));
    }
    0
}

fn usage(message: &str) -> i32 {
    eprintln!("tidemark graph-viewer: {message}\n{USAGE}");
    2
}

fn fail(message: &str) -> i32 {
    eprintln!("tidemark graph-viewer: {message}");
    1
}
