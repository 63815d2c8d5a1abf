//! `tidemark memory-viewer`: XProf's Memory Viewer for one HLO module, as text or as XProf's JSON.

use crate::args::Args;
use crate::open::open_file;
use crate::units::bytes;
use std::fmt::Write;
use tidemark::analysis::memory_viewer::{xprof_json::to_xprof_json, MemoryViewer};
use tidemark::decode::Profile;
use tidemark::engine::memory_viewer::ModuleEntry;
use tidemark::engine::tool::Tool;
use tidemark::engine::{EngineError, Session};

const USAGE: &str = "usage: tidemark memory-viewer FILE [--module NAME] [--memory-space N] [--json]";
/// Buffers listed in the text summary.
const TOP_BUFFERS: usize = 20;

pub fn run(argv: &[String]) -> i32 {
    let args = match Args::parse(argv, &["module", "memory-space"]).and_then(|a| a.check_flags(&["json"]).map(|_| a)) {
        Ok(a) => a,
        Err(e) => return usage(&e),
    };
    let [path] = args.files.as_slice() else { return usage("give exactly one FILE") };
    // Without --memory-space: device memory where the module has it, else its first (as the page).
    let memory_space = match args.option("memory-space").map(str::parse::<i64>) {
        None => None,
        Some(Ok(n)) => Some(n),
        Some(Err(_)) => return usage("--memory-space takes an integer"),
    };
    let name = path.display().to_string();
    let mut session = Session::deferring_memory_profiles().deferring_steps();
    let file_id = match open_file(&mut session, path, &name) {
        Ok(id) => id,
        Err(e) => return fail(&e.to_string()),
    };
    if !args.flag("json") {
        print!("{}", crate::open::empty_reason_line(&session, &[file_id], Tool::MemoryViewer));
    }
    let one_module_dump = session.get(file_id).is_some_and(|f| matches!(f.file.profile, Profile::Hlo(_)));
    let module = match args.option("module") {
        Some(m) => m.to_string(),
        None => {
            let modules = session.memory_viewer_modules(Some(&[file_id]));
            match modules.first() {
                None => {
                    return fail(&format!(
                        "{name}: no HLO modules here; the Memory Viewer reads XLA HloProtos and XProf traces (*.xplane.pb)"
                    ))
                }
                Some(m) if one_module_dump => m.name.clone(),
                Some(_) => return list(&modules, args.flag("json")),
            }
        }
    };
    let viewer = match session.memory_viewer(file_id, &module, memory_space) {
        Ok(v) => v,
        Err(e) => return fail(&e.to_string()),
    };
    if args.flag("json") {
        println!("{}", serde_json::to_string_pretty(&to_xprof_json(&viewer)).unwrap_or_default());
    } else {
        print!("{}", summary(&module, &viewer));
    }
    0
}

fn usage(message: &str) -> i32 {
    eprintln!("tidemark memory-viewer: {message}\n{USAGE}");
    2
}

fn fail(message: &str) -> i32 {
    eprintln!("tidemark memory-viewer: {message}");
    1
}

/// Lists the modules of a trace with their peaks (largest first, as the page's selector), so the user
/// can pick one with `--module`.
fn list(modules: &[ModuleEntry], json: bool) -> i32 {
    if json {
        let listing: Vec<serde_json::Value> = modules
            .iter()
            .map(|m| {
                serde_json::json!({
                    "name": m.name,
                    "module_name": m.module_name,
                    "peak_heap_bytes": m.peak_heap_bytes,
                    "problem": m.problem.as_ref().map(EngineError::detail),
                })
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&listing).unwrap_or_default());
        return 0;
    }
    println!("HLO modules (choose one with --module NAME):");
    for m in modules {
        let peak = match (&m.peak_heap_bytes, &m.problem) {
            (Some(b), _) => format!("peak {}", bytes(*b)),
            (None, Some(p)) => p.detail(),
            (None, None) => String::new(),
        };
        println!("  {:<48} {peak}", m.name);
    }
    0
}

fn summary(name: &str, v: &MemoryViewer) -> String {
    let f = &v.figures;
    let mut s = String::new();
    let _ = writeln!(s, "{name}  (entry computation {}, memory space {})", v.entry_computation_name, v.options.memory_space);
    let at = v.instruction_names.get(v.peak_position).filter(|n| !n.is_empty()).map(|n| format!(", {n}")).unwrap_or_default();
    let rows = [
        ("peak heap", format!("{} at program point {}{at}", bytes(f.peak_heap_bytes), v.peak_position)),
        ("unpadded peak", bytes(f.peak_unpadded_heap_bytes)),
        ("padding overhead", bytes(f.padding_overhead_bytes)),
        ("entry parameters", bytes(f.entry_parameters_bytes)),
        ("maybe live out", bytes(f.maybe_live_out_bytes)),
        ("non-reusable", bytes(f.non_reusable_bytes)),
        ("total allocation", bytes(f.total_allocation_bytes)),
        ("indefinite allocation", bytes(f.indefinite_allocation_bytes)),
        ("fragmentation", f.fragmentation.map_or("n/a".into(), |x| format!("{:.1}%", x * 100.0))),
    ];
    for (label, value) in rows {
        let _ = writeln!(s, "  {label:<22} {value}");
    }
    let groups: Vec<String> = v.peak_by_group.iter().map(|g| format!("{} {} ({})", g.group, bytes(g.bytes), g.buffer_count)).collect();
    let groups = if groups.is_empty() { "nothing live".to_string() } else { groups.join(", ") };
    let _ = writeln!(s, "  at the peak by group:  {groups}");
    let _ = writeln!(s, "  largest buffers at the peak ({} of {}):", v.peak_buffers.len().min(TOP_BUFFERS), v.peak_buffers.len());
    for o in v.peak_buffers_by_size.iter().filter_map(|&i| v.peak_buffers.get(i)).take(TOP_BUFFERS) {
        let _ = writeln!(s, "    {:>11}  {:<12} {}", bytes(o.size_bytes), o.group.as_deref().unwrap_or(""), o.label);
    }
    for n in &v.notes {
        let _ = writeln!(s, "  note: {n}");
    }
    s
}
