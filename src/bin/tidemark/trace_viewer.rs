//! `tidemark trace-viewer`: XProf's trace_viewer JSON of a trace (`--json`; a PyTorch profiler
//! trace's events as it wrote them), or a readable summary of what the Trace Viewer shows: processes,
//! threads, event counts and the time span.

use crate::args::{open_one, OpenedFile};
use crate::units::count;
use std::io::Write;
use tidemark::analysis::trace_viewer::export::{cap_cutoff, micros, XPROF_MAX_EVENTS};
use tidemark::decode::Format;
use tidemark::engine::Session;

const USAGE: &str = "usage: tidemark trace-viewer FILE [--json]";

pub fn run(argv: &[String]) -> i32 {
    let OpenedFile { args, mut session, id, .. } = match open_one("trace-viewer", USAGE, argv, &[], &["json"]) {
        Ok(opened) => opened,
        Err(code) => return code,
    };
    let result = if args.flag("json") { json(&session, id) } else { summary(&mut session, id) };
    match result {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("tidemark: {e}");
            1
        }
    }
}

fn json(session: &Session, id: u32) -> Result<(), String> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 20, stdout.lock());
    session.trace_export_json(id, None, &mut out).map_err(|e| e.to_string())?;
    out.write_all(b"\n").and_then(|_| out.flush()).map_err(|e| format!("cannot write the JSON: {e}"))
}

fn summary(session: &mut Session, id: u32) -> Result<(), String> {
    let kineto = session.get(id).is_some_and(|f| f.file.profile.format() == Format::Kineto);
    let store = session.trace_store(id).map_err(|e| e.to_string())?;
    let outline = store.outline();
    let mut s = String::new();
    use std::fmt::Write as _;
    let _ = writeln!(
        s,
        "{} events on {} threads of {} processes, from {} µs to {} µs ({} µs)",
        count(outline.event_count),
        count(store.threads.len() as u64),
        count(outline.processes.len() as u64),
        micros(outline.start_ps),
        micros(outline.end_ps),
        micros(outline.end_ps - outline.start_ps)
    );
    for p in &outline.processes {
        let events: u64 = p.threads.iter().map(|t| u64::from(t.event_count)).sum();
        let _ = writeln!(s, "  pid {:>4}  {:<40} {:>12} events, {} threads", p.pid, p.name, count(events), p.threads.len());
        for t in &p.threads {
            let _ = writeln!(
                s,
                "      tid {:>10}  {:<40} {:>12} events, nesting depth {}",
                t.tid,
                t.name,
                count(u64::from(t.event_count)),
                t.depth_count
            );
        }
    }
    // XProf's cap is of XProf's own traces: a PyTorch profiler trace is not XProf's to cut.
    let capped = if kineto { None } else { Some(cap_cutoff(store.start_ps(), XPROF_MAX_EVENTS)) };
    match capped {
        None => {}
        Some(Some((cutoff_ps, dropped))) => {
            let _ = writeln!(
                s,
                "XProf's trace_viewer keeps {} events: it would drop the {} that start after {} µs; `--json` keeps them all.",
                count(XPROF_MAX_EVENTS as u64),
                count(dropped as u64),
                micros(cutoff_ps)
            );
        }
        Some(None) => {
            let _ = writeln!(s, "XProf's cap of {} events drops none of them.", count(XPROF_MAX_EVENTS as u64));
        }
    }
    print!("{s}");
    Ok(())
}
