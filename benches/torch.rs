//! PyTorch inputs, natively, once each as the page meets them: a Kineto trace decoded once and its
//! four views computed from it (what torch-tb-profiler's loader does before it serves any view), or a
//! CUDA memory snapshot decoded and its report made. Prints each phase's time; asserts nothing.
//!
//! `cargo bench --bench torch -- FILE...` (a `*.pt.trace.json[.gz]` or a `snapshot.pickle`; the large
//! ones are made by `bench/make_torch_trace.py` and `bench/make_torch_snapshot.py`). `bench/RESULTS.md`
//! times this binary as a whole process against the plugin's loader.

use std::time::Instant;
use tidemark::analysis::torch_snapshot;
use tidemark::decode::kineto::KinetoTrace;
use tidemark::decode::pickle_snapshot::TorchSnapshot;
use tidemark::engine::torch::{view_of, TorchView};

fn main() {
    let files: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    if files.is_empty() {
        eprintln!("usage: cargo bench --bench torch -- FILE... (a Kineto trace or a CUDA memory snapshot)");
        return;
    }
    for path in files {
        let t = Instant::now();
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let read = t.elapsed();
        println!("{path}: {:.1} MB, read in {:.2} s", bytes.len() as f64 / 1e6, read.as_secs_f64());
        if path.ends_with(".pickle") {
            let t = Instant::now();
            let snapshot = TorchSnapshot::decode(&bytes).unwrap_or_else(|e| panic!("{path}: {e}"));
            println!("  decode  {:>7.2} s  ({} events)", t.elapsed().as_secs_f64(), snapshot.event_count());
            drop(bytes);
            let t = Instant::now();
            let report = torch_snapshot::analyze(&snapshot);
            println!("  report  {:>7.2} s  ({} devices)", t.elapsed().as_secs_f64(), report.devices.len());
        } else {
            let t = Instant::now();
            let trace = KinetoTrace::decode(&bytes).unwrap_or_else(|e| panic!("{path}: {e}"));
            println!("  decode  {:>7.2} s", t.elapsed().as_secs_f64());
            drop(bytes);
            for view in [TorchView::Overview, TorchView::Operators(Default::default()), TorchView::Kernels, TorchView::Memory] {
                let t = Instant::now();
                let out = view_of(&trace, view).map(|v| v.to_string().len());
                println!("  {:<9} {:>7.2} s  ({} bytes of JSON)", format!("{view:?}"), t.elapsed().as_secs_f64(), out.unwrap_or(0));
            }
        }
    }
}
