//! `tidemark framework-op-stats`: XProf's framework op stats ("TensorFlow Stats") as a readable table,
//! or as XProf's own JSON (`--json`).

use crate::args::open_run;
use crate::step_window::step_window;
use crate::units::{count, duration_us};
use std::fmt::Write;
use tidemark::analysis::framework_op_stats::{xprof_json, FrameworkOpRow, FrameworkOpStats};
use tidemark::engine::Scope;

const USAGE: &str = "usage: tidemark framework-op-stats FILE|RUN_DIR [--step N] [--json]";
/// Rows shown in the text output (the JSON has all of XProf's).
const TOP_ROWS: usize = 25;

pub fn run(argv: &[String]) -> i32 {
    let mut run = match open_run("framework-op-stats", USAGE, argv, &["step"], &["json"]) {
        Ok(r) => r,
        Err(code) => return code,
    };
    let step = match step_window(&mut run, "framework-op-stats", USAGE) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let scope = Scope::run(&run.ids).within(step.as_ref().map(|s| s.window));
    let stats = match run.session.framework_op_stats(&scope) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("tidemark: {e}");
            return 1;
        }
    };
    // Kept with the table (the same pass): the HLO ops whose GPU cost Tidemark cannot compute.
    let note = run.session.op_metrics(&scope).ok().and_then(|m| match &m.device {
        Ok(d) => d.cost_note(),
        Err(_) => None,
    });
    if let Some(note) = note {
        eprintln!("tidemark: note: {note}");
    }
    if run.args.flag("json") {
        println!("{}", serde_json::to_string(&xprof_json::tables(&stats)).unwrap_or_default());
    } else {
        print!("{}{}{}", run.hosts_line(), step.map(|s| s.line()).unwrap_or_default(), text(&run.name, &stats));
    }
    0
}

fn text(name: &str, stats: &FrameworkOpStats) -> String {
    let rows = &stats.with_idle.rows;
    let mut s =
        format!("{name}\n  framework ops ({} rows, {}; device type {})\n", rows.len(), stats.with_idle.task_type, stats.device_type);
    if rows.is_empty() {
        s.push_str("  no framework ops: the trace has no host plane or no op events\n");
        return s;
    }
    let _ = writeln!(
        s,
        "  {:>4} {:<6} {:<24} {:>11} {:>11} {:>11} {:>7} {:>7}  op",
        "rank", "where", "type", "occurrences", "self", "avg self", "self %", "cum %"
    );
    for r in rows.iter().take(TOP_ROWS) {
        let (fraction, cumulative) = if r.on_device {
            (r.device_self_time_fraction, r.device_cumulative_self_time_fraction)
        } else {
            (r.host_self_time_fraction, r.host_cumulative_self_time_fraction)
        };
        let _ = writeln!(
            s,
            "  {:>4} {:<6} {:<24} {:>11} {:>11} {:>11} {:>6.2}% {:>6.2}%  {}",
            r.rank,
            if r.on_device { "device" } else { "host" },
            truncate(&r.op_type, 24),
            occurrences(r),
            duration_us(r.total_self_time_us),
            duration_us(r.avg_self_time_us),
            fraction * 100.0,
            cumulative * 100.0,
            r.op_name
        );
    }
    if rows.len() > TOP_ROWS {
        let _ = writeln!(s, "  ... {} more rows (--json for all)", rows.len() - TOP_ROWS);
    }
    let inflated = rows.iter().filter(|r| r.true_occurrences != r.occurrences).count();
    if inflated > 0 {
        let _ = writeln!(
            s,
            "  note: XProf counts each allocator event that names an op as one more occurrence of it; {} rows show XProf's count with the true one after it (\"120 (60)\")",
            count(inflated as u64)
        );
    }
    s
}

/// XProf's occurrence count, with the true count beside it where allocator events inflate it.
fn occurrences(r: &FrameworkOpRow) -> String {
    if r.true_occurrences == r.occurrences {
        count(r.occurrences)
    } else {
        format!("{} ({})", count(r.occurrences), count(r.true_occurrences))
    }
}

/// `s`, cut to `width` characters with an ellipsis when longer.
pub(crate) fn truncate(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        s.to_string()
    } else {
        let head: String = s.chars().take(width - 1).collect();
        format!("{head}…")
    }
}
