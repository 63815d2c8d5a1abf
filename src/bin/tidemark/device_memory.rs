//! `tidemark device-memory`: live device memory by Python stack, diffs and leak suspects of JAX
//! device memory profiles, as text or JSON (docs/device-memory-json.md).

use crate::args::Args;
use crate::open::open_file;
use crate::units::{bytes, count};
use std::fmt::Write;
use std::path::Path;
use tidemark::analysis::device_memory as dm;
use tidemark::engine::device_memory::DeviceMemoryQuery;
use tidemark::engine::Session;

const USAGE: &str = "usage: tidemark device-memory FILE|DIR... [--base FILE] [--json] [--all-frames] [--kind buffer|executable]";
/// Rows shown per table in text output; `--json` has them all.
const TEXT_ROWS: usize = 10;

pub fn run(argv: &[String]) -> i32 {
    let parsed = Args::parse(argv, &["base", "kind"]).and_then(|a| a.check_flags(&["json", "all-frames"]).map(|_| a));
    let (args, files) = match parsed.and_then(|a| a.expanded_files().map(|f| (a, f))) {
        Ok((a, f)) if !f.is_empty() && (a.option("base").is_none() || f.len() == 1) => (a, f),
        Ok(_) => return usage_error("give one or more FILEs, or exactly one FILE with --base"),
        Err(e) => return usage_error(&e),
    };
    let query =
        DeviceMemoryQuery { fold_library_frames: !args.flag("all-frames"), kind: args.option("kind").map(str::to_string), device: None };
    // The page's path: every file opened in one session, every report asked of it.
    let mut session = Session::new();
    let base = match args.option("base").map(|b| open(&mut session, Path::new(b))).transpose() {
        Ok(b) => b,
        Err(e) => return fail(&e),
    };
    let mut ids = Vec::new();
    for f in &files {
        match open(&mut session, f) {
            Ok(id) => ids.push(id),
            Err(e) => return fail(&e),
        }
    }
    let name = |id: u32| session.get(id).map(|f| f.file.name.clone()).unwrap_or_default();
    let json = args.flag("json");
    let out = match (base, ids.as_slice()) {
        (Some(base), [target]) => session.device_memory_diff_report(base, *target, &query).map(|report| {
            if json {
                to_json(serde_json::json!({ "mode": "diff", "base": name(base), "new": name(*target), "report": report }))
            } else {
                diff_text(&name(base), &name(*target), &report)
            }
        }),
        (_, [id]) => session.device_memory_report(*id, &query).map(|report| {
            if json {
                to_json(serde_json::json!({ "mode": "profile", "file": name(*id), "report": report }))
            } else {
                profile_text(&name(*id), &report)
            }
        }),
        (_, many) => session.device_memory_series_report(many, &query).map(|report| {
            if json {
                to_json(serde_json::json!({ "mode": "series", "report": report }))
            } else {
                series_text(&report)
            }
        }),
    };
    match out {
        Ok(text) => {
            print!("{text}");
            0
        }
        Err(e) => fail(&e.to_string()),
    }
}

fn usage_error(e: &str) -> i32 {
    eprintln!("tidemark device-memory: {e}\n{USAGE}");
    2
}

fn fail(e: &str) -> i32 {
    eprintln!("tidemark device-memory: {e}");
    1
}

fn open(session: &mut Session, path: &Path) -> Result<u32, String> {
    open_file(session, path, &path.display().to_string()).map_err(|e| e.to_string())
}

fn to_json(v: serde_json::Value) -> String {
    serde_json::to_string_pretty(&v).expect("reports serialize") + "\n"
}

fn signed_bytes(n: i64) -> String {
    if n > 0 {
        format!("+{}", bytes(n))
    } else {
        bytes(n)
    }
}

/// `<module>:19 → func2:15 → func1:12 → _operator_mul:775`
fn stack_line(frames: &[dm::Frame]) -> String {
    frames.iter().map(|f| format!("{}:{}", f.function, f.line)).collect::<Vec<_>>().join(" → ")
}

fn more(s: &mut String, total: usize) {
    if total > TEXT_ROWS {
        let _ = writeln!(s, "    … {} more (see --json)", total - TEXT_ROWS);
    }
}

fn notes(s: &mut String, notes: &[String]) {
    for n in notes {
        let _ = writeln!(s, "  note: {n}");
    }
}

fn profile_text(name: &str, r: &dm::ProfileReport) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{name}\n  live: {} in {} samples", bytes(r.total_bytes), count(r.total_count as u64));
    for k in &r.by_kind {
        let device = if k.device.is_empty() { "-" } else { &k.device };
        let _ = writeln!(s, "    {:<12} {:<10} {:>12} {:>6}", k.kind, device, bytes(k.bytes), count(k.count as u64));
    }
    let _ = writeln!(s, "  top functions:\n    {:>12} {:>12}  function", "flat", "cum");
    for f in r.functions.iter().take(TEXT_ROWS) {
        let _ = writeln!(s, "    {:>12} {:>12}  {} ({})", bytes(f.flat_bytes), bytes(f.cum_bytes), f.function, f.file);
    }
    more(&mut s, r.functions.len());
    let _ = writeln!(s, "  stacks:");
    for st in r.stacks.iter().take(TEXT_ROWS) {
        let _ = writeln!(s, "    {:>12} {:>4}× {:<10} {}", bytes(st.bytes), st.count, st.kind, st.site);
        let _ = writeln!(s, "        {}", stack_line(&st.frames));
    }
    more(&mut s, r.stacks.len());
    notes(&mut s, &r.notes);
    s
}

fn diff_text(base: &str, new: &str, r: &dm::DiffReport) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{new} minus base {base}\n  live: {} → {} ({}), samples {} → {}",
        bytes(r.base_total_bytes),
        bytes(r.new_total_bytes),
        signed_bytes(r.delta_bytes),
        r.base_total_count,
        r.new_total_count
    );
    let _ = writeln!(s, "  changed stacks:");
    for d in r.stacks.iter().take(TEXT_ROWS) {
        let _ = writeln!(s, "    {:>13} {:>+4}× {:<10} {}", signed_bytes(d.delta_bytes), d.delta_count, d.kind, d.site);
        let _ = writeln!(s, "        {}", stack_line(&d.frames));
    }
    if r.stacks.is_empty() {
        let _ = writeln!(s, "    none");
    }
    more(&mut s, r.stacks.len());
    notes(&mut s, &r.notes);
    s
}

fn series_text(r: &dm::SeriesReport) -> String {
    let mut s = String::new();
    let order = if r.ordered_by_number { "by the number in the file name" } else { "in the order given" };
    let _ = writeln!(s, "{} snapshots, {order}:", r.snapshots.len());
    for snap in &r.snapshots {
        let _ = writeln!(s, "    {:>12}  {}", bytes(snap.total_bytes), snap.name);
    }
    let _ = writeln!(s, "  leak suspects: {}", r.suspect_count);
    for (rank, st) in r.stacks.iter().take_while(|st| st.suspect).take(TEXT_ROWS).enumerate() {
        let _ = writeln!(s, "    {}. {}", rank + 1, st.explanation);
        let _ = writeln!(s, "        {}", stack_line(&st.frames));
    }
    more(&mut s, r.suspect_count);
    let _ = writeln!(s, "  largest other stacks:");
    for st in r.stacks.iter().skip(r.suspect_count).take(TEXT_ROWS) {
        let _ = writeln!(s, "    {:<10} {}", st.kind, st.explanation);
    }
    more(&mut s, r.stacks.len() - r.suspect_count);
    notes(&mut s, &r.notes);
    s
}
