//! `tidemark xla-ops-cpu`: the XLA ops a CPU trace's host threads ran, one row per (module, HLO op) —
//! Tidemark's own table (XProf has no such tool). `--json` prints it as Tidemark's JSON, marked so.

use crate::args::{open_one, OpenedFile};
use crate::framework_op_stats::truncate;
use crate::units::{count, duration_us};
use std::fmt::Write;
use tidemark::analysis::xla_ops_cpu::XlaOpsCpu;

const USAGE: &str = "usage: tidemark xla-ops-cpu FILE [--json]";
/// Rows shown in the text output (the JSON has all).
const TOP_ROWS: usize = 25;

pub fn run(argv: &[String]) -> i32 {
    let OpenedFile { args, name, mut session, id } = match open_one("xla-ops-cpu", USAGE, argv, &[], &["json"]) {
        Ok(f) => f,
        Err(code) => return code,
    };
    let ops = match session.xla_ops_cpu(id) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("tidemark: {e}");
            return 1;
        }
    };
    if args.flag("json") {
        println!("{}", json(&name, &ops));
    } else {
        print!("{}", text(&name, &ops));
    }
    0
}

/// The table as Tidemark's JSON: `producer` and `note` say it is not XProf output.
fn json(name: &str, ops: &XlaOpsCpu) -> String {
    let mut v = serde_json::to_value(ops).expect("plain data serialises");
    if let Some(o) = v.as_object_mut() {
        o.insert("producer".into(), "Tidemark".into());
        o.insert("tool".into(), "xla_ops_cpu".into());
        o.insert(
            "note".into(),
            "Tidemark's own analysis of the host threads' XLA op events; XProf has no such tool. Times in picoseconds.".into(),
        );
        o.insert("file".into(), name.into());
    }
    v.to_string()
}

fn text(name: &str, ops: &XlaOpsCpu) -> String {
    let rows = &ops.rows;
    let mut s = format!(
        "{name}\n  XLA ops on CPU (Tidemark's own table, not in XProf): {} ops, {} runs, {} self time on {} threads\n",
        count(rows.len() as u64),
        count(ops.total_occurrences),
        duration_us(ops.total_self_time_ps as f64 / 1e6),
        ops.threads.len()
    );
    if rows.is_empty() {
        s.push_str("  no XLA op events on the host threads (they come from JAX/XLA programs run on CPU)\n");
        return s;
    }
    let _ = writeln!(
        s,
        "  {:>11} {:>11} {:>11} {:>11} {:>7}  {:<22} {:<24} op",
        "occurrences", "total", "avg", "self", "self %", "category", "module"
    );
    for r in rows.iter().take(TOP_ROWS) {
        let _ = writeln!(
            s,
            "  {:>11} {:>11} {:>11} {:>11} {:>6.2}%  {:<22} {:<24} {}",
            count(r.occurrences),
            duration_us(r.total_time_ps as f64 / 1e6),
            duration_us(r.avg_time_ps / 1e6),
            duration_us(r.self_time_ps as f64 / 1e6),
            r.self_time_fraction * 100.0,
            truncate(&r.category, 22),
            truncate(r.memory_viewer_module.as_deref().unwrap_or(&r.module), 24),
            r.op_name
        );
    }
    if rows.len() > TOP_ROWS {
        let _ = writeln!(s, "  ... {} more rows (--json for all)", rows.len() - TOP_ROWS);
    }
    if !ops.unresolved_modules.is_empty() {
        let _ = writeln!(s, "  modules not in the trace's metadata (no instruction details): {}", ops.unresolved_modules.join(", "));
    }
    s
}
