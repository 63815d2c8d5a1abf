//! `tidemark memory-across-hosts`: every allocator of every host of a run, closest to its capacity
//! first, as text or as the engine's JSON (`--json`, what the page's "Memory across hosts" draws).

use crate::args::open_run;
use crate::memory_profile::{by_kind, by_module};
use crate::units::{bytes, duration_us};
use std::fmt::Write;
use tidemark::engine::memory_across_hosts::MemoryAcrossHosts;

const USAGE: &str = "usage: tidemark memory-across-hosts FILE|RUN_DIR [--json]";

pub fn run(argv: &[String]) -> i32 {
    let mut run = match open_run("memory-across-hosts", USAGE, argv, &[], &["json"]) {
        Ok(r) => r,
        Err(code) => return code,
    };
    let overview = match run.session.memory_across_hosts(&run.ids) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("tidemark: {e}");
            return 1;
        }
    };
    if run.args.flag("json") {
        match serde_json::to_string(&overview) {
            Ok(s) => println!("{s}"),
            Err(e) => {
                eprintln!("tidemark: {}: cannot write JSON: {e}", run.name);
                return 1;
            }
        }
    } else {
        print!("{}", text(&run.name, run.ids.len(), &overview));
    }
    0
}

fn text(name: &str, hosts: usize, o: &MemoryAcrossHosts) -> String {
    let mut s = format!("{name}\n  memory across {hosts} host(s): {} allocators, closest to capacity first\n", o.allocators.len());
    if !o.allocators.is_empty() {
        let _ = writeln!(s, "  {:<24} {:<20} {:>12} {:>12} {:>7} {:>14}", "host", "allocator", "peak", "capacity", "%", "peak at");
    }
    for a in &o.allocators {
        let capacity = a.capacity_bytes.map_or_else(|| "-".to_string(), bytes);
        let fraction = a.peak_fraction.map_or_else(|| "-".to_string(), |f| format!("{:.1}%", f * 100.0));
        let _ = writeln!(
            s,
            "  {:<24} {:<20} {:>12} {:>12} {:>7} {:>14}",
            a.host,
            a.memory_id,
            bytes(a.peak_bytes),
            capacity,
            fraction,
            duration_us(a.peak_time_ps as f64 / 1e6)
        );
        if !a.peak_by_module.is_empty() {
            let _ = writeln!(s, "    peak by module: {}  [{}]", by_module(&a.peak_by_module), by_kind(&a.peak_by_kind));
        }
    }
    for p in &o.without_memory {
        let _ = writeln!(s, "  {p}: no allocator events");
    }
    let _ = writeln!(s, "  times from the run's earliest host start ({} ns since the epoch)", o.origin_ns);
    s
}
