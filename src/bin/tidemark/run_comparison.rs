//! `tidemark run-comparison`: a run against a baseline run — op times and allocator peaks with their
//! changes — as a readable summary, or the engine's comparison as JSON (`--json`). Two PyTorch runs
//! (folders of `*.pt.trace.json[.gz]`, one per rank, or single traces) compare their ops, kernels,
//! step time and ranks.

use crate::args::{open_run_dir, Args, RunError};
use crate::framework_op_stats::truncate;
use crate::units::{bytes, duration_us};
use std::fmt::Write;
use std::path::Path;
use tidemark::engine::run_comparison::{Change, Presence, RunComparison};
use tidemark::engine::Session;

const USAGE: &str = "usage: tidemark run-comparison RUN_DIR|FILE (--baseline BASE_RUN_DIR|FILE | BASE_RUN_DIR|FILE) [--json]";
/// Op rows shown in the text output (the JSON has all).
const TOP_ROWS: usize = 25;

pub fn run(argv: &[String]) -> i32 {
    const COMMAND: &str = "run-comparison";
    let usage_error = |e: String| RunError::Usage(e).report(COMMAND, USAGE);
    let args = match Args::parse(argv, &["baseline"]).and_then(|a| a.check_flags(&["json"]).map(|_| a)) {
        Ok(a) => a,
        Err(e) => return usage_error(e),
    };
    let (current, baseline) = match (args.files.as_slice(), args.option("baseline")) {
        ([current], Some(baseline)) => (current, Path::new(baseline)),
        ([current, baseline], None) => (current, baseline.as_path()),
        _ => return usage_error("give one run folder (or trace) and a baseline run folder (or trace), after it or as --baseline".into()),
    };
    let mut session = Session::new();
    let opened = open(&mut session, current).and_then(|c| open(&mut session, baseline).map(|b| (c, b)));
    let (current, baseline) = match opened {
        Ok(ids) => ids,
        Err(e) => return e.report(COMMAND, USAGE),
    };
    let comparison = match session.run_comparison(&current, &baseline) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("tidemark: {e}");
            return 1;
        }
    };
    if args.flag("json") {
        match serde_json::to_string(&comparison) {
            Ok(json) => println!("{json}"),
            Err(e) => {
                eprintln!("tidemark: {e}");
                return 1;
            }
        }
    } else {
        print!("{}", text(&comparison));
    }
    0
}

/// A run folder's traces, named `<folder name>/<path in it>` (so the comparison names each run), or
/// one trace alone.
fn open(session: &mut Session, path: &Path) -> Result<Vec<u32>, RunError> {
    let name = path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
    if path.is_dir() {
        open_run_dir(session, path, &format!("{name}/"))
    } else {
        crate::open::open_file(session, path, &name).map(|id| vec![id]).map_err(RunError::Open)
    }
}

/// `+12.3%`, or `new` where the baseline is 0.
fn percent(c: &Change) -> String {
    match c.ratio {
        Some(r) => format!("{:+.1}%", (r - 1.0) * 100.0),
        None if c.current == 0.0 => "0.0%".into(),
        None => "new".into(),
    }
}

fn signed_us(us: f64) -> String {
    format!(
        "{}{}",
        if us > 0.0 {
            "+"
        } else if us < 0.0 {
            "-"
        } else {
            ""
        },
        duration_us(us.abs())
    )
}

fn presence(p: Presence) -> &'static str {
    match p {
        Presence::Both => "",
        Presence::OnlyInCurrent => "only in current",
        Presence::OnlyInBaseline => "only in baseline",
    }
}

fn text(c: &RunComparison) -> String {
    let run_name = |r: &tidemark::engine::run_comparison::RunInfo| if r.run.is_empty() { "(files)".to_string() } else { r.run.clone() };
    let mut s = format!("{} against baseline {}\n", run_name(&c.current), run_name(&c.baseline));
    for h in &c.hosts {
        let _ = writeln!(s, "  host {} {}", h.host, presence(h.presence));
    }
    for (side, t) in [("device", &c.device_self_time_us), ("host", &c.host_self_time_us)] {
        let _ = writeln!(
            s,
            "  {side} op self time: {} vs {} ({}, {})",
            duration_us(t.current),
            duration_us(t.baseline),
            signed_us(t.delta),
            percent(t)
        );
    }
    if let Some(st) = &c.step_time {
        let a = &st.average_ms;
        let _ = writeln!(
            s,
            "  step time average: {:.3} ms ({} steps) vs {:.3} ms ({} steps) ({:+.3} ms, {})",
            a.current,
            st.current_steps,
            a.baseline,
            st.baseline_steps,
            a.delta,
            percent(a)
        );
    }
    let _ = writeln!(s, "\n  ops by change in self time ({} rows)", c.ops.len());
    let _ = writeln!(s, "  {:<6} {:<20} {:>11} {:>11} {:>11} {:>8}  op", "where", "type", "self", "baseline", "change", "change %");
    for o in c.ops.iter().take(TOP_ROWS) {
        let t = &o.self_time_us;
        let _ = writeln!(
            s,
            "  {:<6} {:<20} {:>11} {:>11} {:>11} {:>8}  {} {}",
            if o.on_device { "device" } else { "host" },
            truncate(&o.op_type, 20),
            duration_us(t.current),
            duration_us(t.baseline),
            signed_us(t.delta),
            percent(t),
            o.op_name,
            presence(o.presence)
        );
    }
    if c.ops.len() > TOP_ROWS {
        let _ = writeln!(s, "  ... {} more rows (--json for all)", c.ops.len() - TOP_ROWS);
    }
    let _ = writeln!(s, "\n  memory peaks by host and allocator");
    for m in &c.memory {
        let peak = |p: Option<tidemark::engine::run_comparison::MemoryPeak>| p.map_or("-".to_string(), |p| bytes(p.peak_bytes));
        let delta = m
            .delta_peak_bytes
            .map_or_else(|| presence(m.presence).to_string(), |d| format!("{}{}", if d > 0 { "+" } else { "" }, bytes(d)));
        let _ = writeln!(s, "  {:<16} {:<28} {:>11} {:>11}  {}", m.host, m.memory_id, peak(m.current), peak(m.baseline), delta);
    }
    if c.memory.is_empty() {
        let _ = writeln!(s, "  no allocator events in either run");
    }
    if let Some(t) = &c.torch {
        let _ = writeln!(s, "\n  ranks: average step (us) and its split, current vs baseline");
        let _ =
            writeln!(s, "  {:<10} {:>21} {:>21} {:>21} {:>21} {:>21}", "rank", "step", "computation", "communication", "memcpy", "other");
        for r in &t.ranks {
            let cell = |c: &Change| format!("{} ({})", duration_us(c.current), signed_us(c.delta));
            let _ = writeln!(
                s,
                "  {:<10} {:>21} {:>21} {:>21} {:>21} {:>21}  {}",
                r.rank,
                cell(&r.step_us),
                cell(&r.computation_us),
                cell(&r.communication_us),
                cell(&r.memcpy_us),
                cell(&r.other_us),
                presence(r.presence)
            );
        }
        let _ = writeln!(s, "\n  kernels by change in total time ({} rows)", t.kernels.len());
        let _ = writeln!(s, "  {:>11} {:>11} {:>11} {:>8}  kernel", "total", "baseline", "change", "change %");
        for k in t.kernels.iter().take(TOP_ROWS) {
            let c = &k.total_time_us;
            let _ = writeln!(
                s,
                "  {:>11} {:>11} {:>11} {:>8}  {} {}",
                duration_us(c.current),
                duration_us(c.baseline),
                signed_us(c.delta),
                percent(c),
                truncate(&k.name, 120),
                presence(k.presence)
            );
        }
        if t.kernels.len() > TOP_ROWS {
            let _ = writeln!(s, "  ... {} more rows (--json for all)", t.kernels.len() - TOP_ROWS);
        }
    }
    for n in &c.notes {
        let _ = writeln!(s, "  note: {n}");
    }
    s
}
