//! `tidemark torch-snapshot`: a PyTorch CUDA memory snapshot per device — the trace's events, the
//! peak of active memory and what was live there by Python frame, the segments at the dump, lost
//! history, the largest allocations, leak suspects and OOMs; `--at N` adds the allocator's state
//! after event N. `--json` prints the report: the figures of `snapshot.oracle.json` under its names
//! in each device's object, Tidemark's own beside them. `--trace TRACE` lays a Kineto trace of the
//! same run on the snapshot's clock instead, as the page's Trace memory panel does: how many of its
//! CUDA memory events are the snapshot's, when and how long it ran, its peak beside the snapshot's,
//! and (`--json`) every point.

use crate::args::OneShotSession;
use crate::args::{open_one, OpenedFile};
use crate::units::{bytes, count, duration_us};
use std::fmt::Write;
use tidemark::analysis::torch_snapshot::{AllocatorState, DeviceReport, SnapshotReport, TraceMemory};

const USAGE: &str = "usage: tidemark torch-snapshot SNAPSHOT [--device D] [--at EVENT | --trace TRACE] [--json]";
/// Rows of each list in the text output (the JSON has all).
const TOP_ROWS: usize = 10;

pub fn run(argv: &[String]) -> i32 {
    let OpenedFile { args, name, session, id } = match open_one("torch-snapshot", USAGE, argv, &["device", "at", "trace"], &["json"]) {
        Ok(f) => f,
        Err(code) => return code,
    };
    let number =
        |key: &str| args.option(key).map(|v| v.parse::<i64>().map_err(|_| format!("--{key} needs a number, not `{v}`"))).transpose();
    let (device, at) = match (number("device"), number("at")) {
        (Ok(d), Ok(a)) => (d, a),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("tidemark torch-snapshot: {e}\n{USAGE}");
            return 2;
        }
    };
    let report = match session.torch_snapshot(id) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("tidemark: {e}");
            return 1;
        }
    };
    if let Some(trace) = args.option("trace") {
        if at.is_some() {
            eprintln!("tidemark torch-snapshot: --at and --trace are two views; give one\n{USAGE}");
            return 2;
        }
        let device = device.unwrap_or(0);
        let Ok(device) = usize::try_from(device) else {
            eprintln!("tidemark torch-snapshot: --device needs a device index, not {device}\n{USAGE}");
            return 2;
        };
        return trace_run(session, id, &name, &report, trace, device, args.flag("json"));
    }
    let state = match at {
        None => None,
        Some(at) => match session.torch_snapshot_state(id, usize::try_from(device.unwrap_or(0)).unwrap_or(usize::MAX), at) {
            Ok(s) => Some(s),
            Err(e) => {
                eprintln!("tidemark: {e}");
                return 1;
            }
        },
    };
    if args.flag("json") {
        let mut v = serde_json::to_value(&report).expect("plain data serialises");
        if let (Some(o), Some(state)) = (v.as_object_mut(), &state) {
            o.insert("state_at".into(), serde_json::to_value(state).expect("plain data serialises"));
        }
        println!("{v}");
    } else {
        print!("{}", text(&name, &report, device, state.as_ref()));
    }
    0
}

/// `--trace`: Kineto trace `trace` on snapshot `id`'s clock, on `device`.
fn trace_run(mut session: OneShotSession, id: u32, name: &str, report: &SnapshotReport, trace: &str, device: usize, json: bool) -> i32 {
    let memory = crate::open::open_file(&mut session, std::path::Path::new(trace), trace)
        .and_then(|tid| session.torch_snapshot_trace_memory(id, tid, device));
    let memory = match memory {
        Ok(m) => m,
        Err(e) => {
            eprintln!("tidemark: {e}");
            return 1;
        }
    };
    let Some(r) = report.devices.get(&device.to_string()) else {
        eprintln!("tidemark: {name}: the snapshot has no device {device}");
        return 1;
    };
    if json {
        println!("{}", trace_json(name, trace, device, &memory, r));
    } else {
        print!("{}", trace_text(name, trace, device, &memory, r));
    }
    0
}

/// The trace's figures as the page's Trace memory panel shows them (offsets from the snapshot's
/// first event), the snapshot's peak beside its own, the fit and every point.
fn trace_json(name: &str, trace: &str, device: usize, m: &TraceMemory, r: &DeviceReport) -> serde_json::Value {
    let first = r.history.first_time_us.unwrap_or(0) as f64;
    let (start, end) = m.extent().unwrap_or((first, first));
    serde_json::json!({
        "snapshot": name,
        "trace": trace,
        "device": device,
        "points": m.points.len(),
        "matched": m.matched,
        "start_offset_us": start - first,
        "span_us": end - start,
        "peak": m.peak(),
        "snapshot_peak_with_prior_bytes": r.peak_with_prior_bytes,
        "snapshot_peak_with_prior_event_index": r.peak_with_prior_event_index,
        "snapshot_peak_active_bytes": r.peak_active_bytes,
        "fit": m.fit(),
        "trace_memory": m,
    })
}

fn trace_text(name: &str, trace: &str, device: usize, m: &TraceMemory, r: &DeviceReport) -> String {
    let first = r.history.first_time_us.unwrap_or(0) as f64;
    let mut s = format!("{name} with {trace}\n  the trace's CUDA memory on the snapshot's clock, device {device}\n");
    let fit = m.fit();
    if let Some(why) = fit.why_not(device) {
        let _ = writeln!(s, "  not this snapshot's run: {why}");
    }
    let _ = writeln!(
        s,
        "  {} CUDA memory events, {} matched to the snapshot's (same address, within {} µs)",
        count(m.points.len() as u64),
        count(m.matched),
        tidemark::analysis::torch_snapshot::MATCH_WINDOW_US
    );
    if let Some((start, end)) = m.extent() {
        let _ = writeln!(s, "  from {} after the snapshot's first event, for {}", duration_us(start - first), duration_us(end - start));
    }
    if let Some(p) = m.peak() {
        let event = p.event_index.map_or("no matching snapshot event".to_string(), |e| format!("snapshot event {e}"));
        let _ =
            writeln!(s, "  highest allocated in the trace: {} at {} ({event})", bytes(p.total_allocated), duration_us(p.time_us - first));
    }
    // The snapshot's peak may fall outside the trace's span: before its first matched event, or after its last.
    let matched = || m.points.iter().filter_map(|p| p.event_index);
    let peak = r.peak_with_prior_event_index;
    let place = match (matched().min(), matched().max()) {
        (Some(a), _) if peak < a => " (before the trace began)",
        (_, Some(b)) if peak > b => " (after the trace ended)",
        (Some(_), Some(_)) => " (while the trace recorded)",
        _ => "",
    };
    let _ = writeln!(
        s,
        "  the snapshot's peak: {} active with what was live before its trace, at event {peak}{place}",
        bytes(r.peak_with_prior_bytes),
    );
    s
}

fn text(name: &str, report: &SnapshotReport, only: Option<i64>, state: Option<&AllocatorState>) -> String {
    let mut s = format!("{name}\n  PyTorch CUDA memory snapshot: {} device trace(s)\n", report.devices.len());
    for (d, r) in &report.devices {
        if only.is_some_and(|o| o.to_string() != *d) {
            continue;
        }
        device_text(&mut s, d, r);
    }
    if let Some(st) = state {
        state_text(&mut s, st);
    }
    s
}

fn device_text(s: &mut String, d: &str, r: &DeviceReport) {
    let events: Vec<String> = r.events.iter().map(|(a, n)| format!("{} {a}", count(*n))).collect();
    let _ = writeln!(s, "\ndevice {d}: {} events ({})", count(r.history.trace_events), events.join(", "));
    let _ = writeln!(s, "  {}", r.history.sentence);
    match r.peak_time_us {
        Some(t) => {
            let _ = writeln!(s, "  peak active: {} at event {} (time_us {t})", bytes(r.peak_active_bytes), r.peak_event_index);
        }
        None => {
            let _ = writeln!(s, "  peak active: nothing allocated in the trace");
        }
    }
    if r.history.lost {
        let _ = writeln!(
            s,
            "  peak with what was live before the trace: {} at event {}",
            bytes(r.peak_with_prior_bytes),
            r.peak_with_prior_event_index
        );
    }
    let g = &r.segments;
    let states: Vec<String> = g.blocks_by_state.iter().map(|(k, n)| format!("{} {k}", count(*n))).collect();
    let _ = writeln!(
        s,
        "  segments at the dump: {} holding {} reserved, {} allocated, {} active; blocks: {}",
        count(g.count),
        bytes(g.total_size),
        bytes(g.allocated_size),
        bytes(g.active_size),
        states.join(", ")
    );
    let _ = writeln!(s, "  reserved over the trace: {}; unseen frees: {}", bytes(r.reserved_delta_bytes), count(r.unseen_frees));
    let _ = writeln!(s, "  live at the peak (size × count, innermost Python frame):");
    for row in r.live_at_peak.iter().take(TOP_ROWS) {
        let frame = if row.frame.is_empty() { "(no Python frame)" } else { &row.frame };
        let _ = writeln!(
            s,
            "    {:>12} × {:<4} = {:>12}  {frame}",
            bytes(row.size),
            row.count,
            bytes(row.size.saturating_mul(row.count as i64))
        );
    }
    more(s, r.live_at_peak.len());
    let _ = writeln!(s, "  largest allocations:");
    for a in r.largest_allocations.iter().take(TOP_ROWS) {
        let freed = a.freed_at_event_index.map_or("never freed".to_string(), |f| format!("freed at event {f}"));
        // Where the allocation has no Python frame (a backward pass's, on autograd's thread), its C++ caller.
        let stack: Vec<String> = match a.python_stack.as_slice() {
            [] => a.cpp_stack.iter().take(1).map(|f| format!("(C++) {f}")).collect(),
            python => python.iter().filter(|f| !f.folded).map(|f| f.text()).collect(),
        };
        let _ = writeln!(s, "    {:>12} at event {:<6} {freed:<20} {}", bytes(a.size), a.event_index, stack.join(" ← "));
    }
    let _ = writeln!(s, "  still live at the trace's end, by frame:");
    for f in r.never_freed.iter().take(TOP_ROWS) {
        let frame = if f.frame.is_empty() { "(no Python frame)" } else { &f.frame };
        let _ = writeln!(s, "    {:>12} in {:>5} allocations  {frame}", bytes(f.bytes), count(f.count));
    }
    more(s, r.never_freed.len());
    let suspects: Vec<_> = r.growth.iter().filter(|g| g.suspect).collect();
    let _ = writeln!(
        s,
        "  leak suspects (grew over most of the trace): {}",
        if suspects.is_empty() { "none".to_string() } else { count(suspects.len() as u64) }
    );
    for g in suspects.iter().take(TOP_ROWS) {
        let frame = if g.frame.is_empty() { "(no Python frame)" } else { &g.frame };
        let _ = writeln!(
            s,
            "    grew in {} of {} intervals, {} → {}  {frame}",
            g.growth.grew_steps,
            g.growth.steps,
            bytes(g.bytes[0]),
            bytes(*g.bytes.last().unwrap_or(&0))
        );
    }
    for o in &r.ooms {
        let _ = writeln!(s, "  oom at event {}: {}", o.event_index, o.sentence);
    }
}

fn more(s: &mut String, n: usize) {
    if n > TOP_ROWS {
        let _ = writeln!(s, "    ... {} more (--json for all)", n - TOP_ROWS);
    }
}

fn state_text(s: &mut String, st: &AllocatorState) {
    let _ = writeln!(
        s,
        "\nallocator state of device {} after event {}: {} segments, {} reserved, {} allocated, {} pending free in {} blocks; free {} (largest piece {}, fragmentation {:.1}%)",
        st.device,
        st.event_index,
        st.segments.len(),
        bytes(st.reserved_bytes),
        bytes(st.allocated_bytes),
        bytes(st.pending_free_bytes),
        st.pending_free_blocks,
        bytes(st.free_bytes),
        bytes(st.largest_free_bytes),
        st.fragmentation * 100.0
    );
    for g in &st.segments {
        let _ = writeln!(
            s,
            "    segment 0x{:x}: {} of {} allocated in {} blocks, largest free piece {}",
            g.address,
            bytes(g.allocated_bytes),
            bytes(g.total_size),
            g.blocks.len(),
            bytes(g.largest_free_bytes)
        );
    }
}
