//! PyTorch CUDA memory snapshots (issue 31 part 2): the real ResNet-18 snapshot recorded on an NVIDIA
//! H200 (`../shared/fixtures/device/nvidia_h200_pytorch/p2_torch_resnet/snapshot.pickle`, read in
//! place) against its independent reading `snapshot.oracle.json` — every figure of it, through the
//! engine and through `tidemark torch-snapshot --json` — and Tidemark's own figures checked against
//! what the oracle's figures imply. A fixture absent is skipped with a note (a failure under
//! `CI=true`, [`common::device_fixture`]).

mod common;

use serde_json::Value;
use std::path::PathBuf;
use tidemark::analysis::torch_snapshot::SnapshotReport;
use tidemark::decode::{DecodeError, Format, Profile};
use tidemark::engine::Session;

const SNAPSHOT: &str = "nvidia_h200_pytorch/p2_torch_resnet/snapshot.pickle";
const ORACLE: &str = "nvidia_h200_pytorch/p2_torch_resnet/snapshot.oracle.json";
const TRACE: &str = "nvidia_h200_pytorch/p2_torch_resnet/tb/vm_2031.1795841222637258163.pt.trace.json.gz";

fn fixture() -> Option<(PathBuf, Value)> {
    let snapshot = common::device_fixture(SNAPSHOT)?;
    let oracle = common::json_at(&common::device_fixture(ORACLE)?);
    Some((snapshot, oracle))
}

/// `actual`'s devices, each cut to the keys the oracle has (the rest are Tidemark's own).
fn oracle_keys(actual: &Value, oracle: &Value) -> Value {
    let mut out = serde_json::Map::new();
    for (d, expected) in oracle["devices"].as_object().expect("devices") {
        let got = &actual["devices"][d];
        let cut: serde_json::Map<String, Value> =
            expected.as_object().expect("device").keys().filter_map(|k| got.get(k).map(|v| (k.clone(), v.clone()))).collect();
        out.insert(d.clone(), Value::Object(cut));
    }
    serde_json::json!({ "devices": out })
}

fn report(path: &PathBuf) -> (Session, u32, SnapshotReport) {
    let mut session = Session::new();
    let bytes = std::fs::read(path).expect("read");
    let id = session.open("snapshot.pickle", bytes, &mut |_, _| {}).expect("opens").id;
    let r = session.torch_snapshot(id).expect("report");
    (session, id, r)
}

#[test]
fn equals_the_oracle_through_the_engine() {
    let Some((path, oracle)) = fixture() else { return };
    let (_, _, r) = report(&path);
    let actual = serde_json::to_value(&r).expect("serialises");
    let cut = oracle_keys(&actual, &oracle);
    if let Some(d) = common::json_diff(&cut, &oracle) {
        panic!("differs from snapshot.oracle.json: {d}");
    }
    assert_eq!(cut, oracle, "every figure, with live_at_peak in the oracle's order");
}

#[test]
fn equals_the_oracle_through_the_cli() {
    let Some((path, oracle)) = fixture() else { return };
    let (code, out, err) = common::tidemark(&["torch-snapshot", path.to_str().expect("utf-8"), "--json"]);
    assert_eq!(code, 0, "{err}");
    let actual: Value = serde_json::from_str(&out).expect("json");
    assert_eq!(oracle_keys(&actual, &oracle), oracle);
    let (code, text, err) = common::tidemark(&["torch-snapshot", path.to_str().expect("utf-8")]);
    assert_eq!(code, 0, "{err}");
    let peak = oracle["devices"]["0"]["peak_event_index"].as_i64().expect("index");
    assert!(text.contains(&format!("at event {peak} (time_us {})", oracle["devices"]["0"]["peak_time_us"])), "{text}");
    assert!(text.contains("conv.py:548 _conv_forward"), "{text}");
}

/// Tidemark's own figures, each checked against what the oracle's figures and the dump imply.
#[test]
fn own_figures_agree_with_the_oracle() {
    let Some((path, oracle)) = fixture() else { return };
    let (session, id, r) = report(&path);
    let o = &oracle["devices"]["0"];
    let d = &r.devices["0"];
    let n = |v: &Value| v.as_i64().expect("number");
    // The timeline's highest point is the peak, at its event.
    let top = d.timeline.iter().max_by_key(|p| (p.active_bytes, std::cmp::Reverse(p.event_index))).expect("points");
    assert_eq!((top.active_bytes, top.event_index as i64), (n(&o["peak_active_bytes"]), n(&o["peak_event_index"])));
    assert_eq!(d.timeline.last().map(|p| p.reserved_delta_bytes), Some(n(&o["reserved_delta_bytes"])));
    // Blocks active at the dump that the trace did not leave live were allocated before it began.
    let live_at_end = n(&o["events"]["alloc"]) - n(&o["events"]["free_completed"]);
    let active_blocks = n(&o["segments"]["blocks_by_state"]["active_allocated"]);
    assert_eq!(n(&o["unseen_frees"]), 0);
    assert_eq!(d.history.live_before_trace_blocks as i64, active_blocks - live_at_end);
    assert!(d.history.lost && d.history.sentence.contains("before its first event"), "{}", d.history.sentence);
    assert_eq!(d.never_freed.iter().map(|f| f.count as i64).sum::<i64>(), live_at_end);
    // The allocator's state after the last event is the dump.
    let last = o["events"].as_object().expect("events").values().map(n).sum::<i64>() - 1;
    let end = session.torch_snapshot_state(id, 0, last).expect("state");
    assert_eq!(end.reserved_bytes, n(&o["segments"]["total_size"]));
    assert_eq!(end.allocated_bytes, n(&o["segments"]["active_size"]));
    assert_eq!(end.segments.len() as i64, n(&o["segments"]["count"]));
    assert_eq!(end.segments.iter().map(|g| g.blocks.len() as i64).sum::<i64>(), active_blocks);
    // Before the first event: the segments the trace did not allocate.
    let start = session.torch_snapshot_state(id, 0, -1).expect("state");
    assert_eq!(start.reserved_bytes, n(&o["segments"]["total_size"]) - n(&o["reserved_delta_bytes"]));
    assert_eq!(start.segments.iter().map(|g| g.blocks.len() as u64).sum::<u64>(), d.history.live_before_trace_blocks);
    // At the peak every allocation live is in a block.
    let at_peak = session.torch_snapshot_state(id, 0, n(&o["peak_event_index"])).expect("state");
    let live_rows: i64 = o["live_at_peak"].as_array().expect("rows").iter().map(|r| n(&r["count"])).sum();
    let blocks = at_peak.segments.iter().map(|g| g.blocks.len() as i64).sum::<i64>();
    assert_eq!(blocks, live_rows + d.history.live_before_trace_blocks as i64);
    assert!(at_peak.fragmentation >= 0.0 && at_peak.fragmentation < 1.0);
    // The largest allocations are the trace's, largest first, and no OOM happened.
    assert!(d.largest_allocations.windows(2).all(|w| w[0].size >= w[1].size));
    assert!(d.ooms.is_empty() && !o["events"].as_object().expect("events").contains_key("oom"));
    // Every Python frame is kept: a folded one is library code called from library code, so a run of
    // library frames shows its outermost (the call the user's code made) until it is unfolded.
    let stacks: Vec<_> = d.largest_allocations.iter().map(|a| &a.python_stack).collect();
    assert!(stacks.iter().any(|s| s.iter().any(|f| f.folded)), "the fixture's torch.nn frames are folded");
    for s in stacks {
        for (i, f) in s.iter().enumerate() {
            assert_eq!(f.folded, f.library && s.get(i + 1).is_some_and(|caller| caller.library), "{}", f.text());
        }
    }
    // Bad requests name what exists.
    let e = session.torch_snapshot_state(id, 0, last + 1).unwrap_err().to_string();
    assert!(e.contains(&format!("events 0 to {last}")), "{e}");
    assert!(session.torch_snapshot_state(id, 3, 0).unwrap_err().to_string().contains("no device 3"));
}

#[test]
fn recognised_by_content_and_described_by_inspect() {
    let Some((path, oracle)) = fixture() else { return };
    let bytes = std::fs::read(&path).expect("read");
    let f = tidemark::decode::decode("renamed.bin", bytes.clone(), &mut |_, _| {}).expect("decodes");
    let Profile::TorchSnapshot(s) = &f.profile else { panic!("not a snapshot") };
    assert_eq!(
        s.event_count() as i64,
        oracle["devices"]["0"]["events"].as_object().expect("events").values().map(|v| v.as_i64().expect("n")).sum::<i64>()
    );
    let (code, out, err) = common::tidemark(&["inspect", path.to_str().expect("utf-8"), "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).expect("json");
    let file = &v["files"][0];
    assert_eq!(file["format"], "torch_snapshot");
    assert_eq!(file["torch_snapshot"]["segment_count"], oracle["devices"]["0"]["segments"]["count"]);
    assert_eq!(file["torch_snapshot"]["reserved_bytes"], oracle["devices"]["0"]["segments"]["total_size"]);
    let (_, text, _) = common::tidemark(&["inspect", path.to_str().expect("utf-8")]);
    assert!(text.contains("CUDA memory snapshot") && text.contains("opens on: CUDA memory snapshot"), "{text}");
    // Other tools say what they need.
    let (code, _, err) = common::tidemark(&["memory-profile", path.to_str().expect("utf-8")]);
    assert_eq!(code, 1);
    assert!(err.contains("PyTorch CUDA memory snapshot"), "{err}");
}

/// The real snapshot cut short, or with its bytes changed, gives an error or a reading, never a
/// panic; a cut names where the file ends.
#[test]
fn damaged_snapshots_give_clear_errors() {
    let Some((path, _)) = fixture() else { return };
    let bytes = std::fs::read(&path).expect("read");
    // (From byte 24 on: the first key, `segments`, names it a snapshot.)
    for cut in [24, 100, 5_000, bytes.len() / 2, bytes.len() - 1] {
        match tidemark::decode::decode("s.pickle", bytes[..cut].to_vec(), &mut |_, _| {}) {
            Err(DecodeError::Truncated { format: Format::TorchSnapshot, end, .. }) => assert_eq!(end as usize, cut),
            Err(other) => panic!("cut at {cut}: {other}"),
            Ok(_) => panic!("cut at {cut} read"),
        }
    }
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..300 {
        let mut b = bytes.clone();
        for _ in 0..4 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let at = 16 + (seed as usize) % (b.len() - 16);
            b[at] = (seed >> 32) as u8;
        }
        match tidemark::decode::decode("s.pickle", b, &mut |_, _| {}) {
            Err(e) => assert!(!e.to_string().is_empty()),
            // A change that still reads (a number, a letter of a name) is analysed like any snapshot.
            Ok(f) => {
                let Profile::TorchSnapshot(s) = &f.profile else { panic!("not a snapshot") };
                let r = tidemark::analysis::torch_snapshot::analyze(s);
                for (d, t) in s.devices.iter().enumerate() {
                    assert!(r.devices.contains_key(&d.to_string()));
                    tidemark::analysis::torch_snapshot::state_at(s, d, t.len() as i64 / 2);
                }
            }
        }
    }
    // Another pickle is named as one, and refused.
    let e = tidemark::decode::decode("x.pkl", b"\x80\x04\x95\x06\0\0\0\0\0\0\0}\x94.".to_vec(), &mut |_, _| {}).err().expect("refused");
    assert!(e.to_string().contains("a Python pickle, but not a PyTorch CUDA memory snapshot"), "{e}");
}

/// The page's request: the snapshot sent as bytes, then its report and a state, through
/// `protocol::handle` as the worker answers them; the wire form pinned.
#[test]
fn the_protocol_serves_the_report_and_a_state() {
    use tidemark::engine::protocol::{handle, ResponseBody, VERSION};
    let Some((path, oracle)) = fixture() else { return };
    let mut session = Session::new();
    let open = format!(r#"{{"v":{VERSION},"seq":1,"body":{{"type":"open","path":"snapshot.pickle"}}}}"#);
    let ResponseBody::Opened { file_id, .. } = handle(&mut session, &open, Some(std::fs::read(&path).expect("read")), &mut |_| {}).body
    else {
        panic!("not opened")
    };
    let peak = oracle["devices"]["0"]["peak_event_index"].as_i64().expect("index");
    let ask = format!(
        r#"{{"v":{VERSION},"seq":2,"body":{{"type":"torch_snapshot","file_id":{file_id},"state_at":{{"device":0,"event_index":{peak}}}}}}}"#
    );
    let ResponseBody::TorchSnapshot { report, state } = handle(&mut session, &ask, None, &mut |_| {}).body else { panic!("no report") };
    let wire = serde_json::to_value(&report).expect("serialises");
    assert_eq!(oracle_keys(&wire, &oracle), oracle);
    assert_eq!(state.map(|s| *s), Some(session.torch_snapshot_state(file_id, 0, peak).expect("state")));
    let bad = format!(
        r#"{{"v":{VERSION},"seq":3,"body":{{"type":"torch_snapshot","file_id":{file_id},"state_at":{{"device":5,"event_index":0}}}}}}"#
    );
    let ResponseBody::Failed { error } = handle(&mut session, &bad, None, &mut |_| {}).body else { panic!("not refused") };
    assert!(error.to_string().contains("no device 5"), "{error}");
}

/// The page's timeline: bands stacked as PyTorch's viewer stacks them, a window of them thinned by a
/// max filter that keeps the peak, small allocations summed; and its wire form with the event picker's.
#[test]
fn the_timeline_bands_keep_the_peak_and_stack_every_allocation() {
    use tidemark::analysis::torch_snapshot::Axis;
    use tidemark::engine::protocol::{handle, ResponseBody, VERSION};
    let Some((path, _)) = fixture() else { return };
    let (mut session, id, r) = report(&path);
    let d = &r.devices["0"];
    let n = d.history.trace_events as i64;
    // Wide enough for every event: one column each, every allocation a band or summed.
    let all = session.torch_snapshot_timeline(id, 0, Axis::Event, None, n as usize, 1_000_000).expect("bands");
    assert_eq!((all.start, all.end, all.columns.len() as i64, all.events_in_window), (0, n - 1, n, n as u64));
    for (c, p) in all.columns.iter().zip(0..) {
        assert_eq!(c.event_index, p);
    }
    // The stack's top is the report's active bytes with what was live before the trace.
    for p in &d.timeline {
        assert_eq!(all.columns[p.event_index as usize].total_bytes, p.active_with_prior_bytes, "event {}", p.event_index);
    }
    assert_eq!(all.max_bytes, d.peak_with_prior_bytes);
    assert_eq!(all.columns[0].prior_bytes, d.history.active_at_start_bytes);
    assert_eq!(all.columns.last().map(|c| c.reserved_bytes), Some(d.segments.total_size));
    // Bands never overlap: each column's bands, by bottom, sit on one another.
    for (k, c) in all.columns.iter().enumerate() {
        let mut live: Vec<(i64, i64)> = all
            .bands
            .iter()
            .filter(|b| (b.first_column as usize..b.first_column as usize + b.bottoms.len()).contains(&k))
            .map(|b| (b.bottoms[k - b.first_column as usize], b.size))
            .collect();
        live.sort_unstable();
        let mut top = c.prior_bytes + c.small_bytes;
        for (bottom, size) in live {
            assert_eq!(bottom, top, "column {k}");
            top += size;
        }
        assert_eq!(top, c.total_bytes);
    }
    // Narrow: a few columns, each its highest event; the peak survives and small ones are summed.
    let few = session.torch_snapshot_timeline(id, 0, Axis::Event, None, 100, 300).expect("bands");
    assert_eq!(few.columns.len(), 100);
    assert_eq!(few.max_bytes, d.peak_with_prior_bytes);
    assert!(few.columns.iter().any(|c| c.event_index == d.peak_with_prior_event_index));
    assert!(few.bands.iter().all(|b| b.size >= few.min_band_bytes) && few.columns.iter().any(|c| c.small_count > 0));
    // A window by time holds the events inside it.
    let (t0, t1) = (d.history.first_time_us.expect("time"), d.history.last_time_us.expect("time"));
    let mid = t0 + (t1 - t0) / 2;
    let half = session.torch_snapshot_timeline(id, 0, Axis::Time, Some((t0, mid)), 200, 300).expect("bands");
    assert!(half.events_in_window > 0 && half.events_in_window < n as u64 && (half.start, half.end) == (t0, mid));
    assert!(session.torch_snapshot_timeline(id, 7, Axis::Event, None, 10, 10).unwrap_err().to_string().contains("no device 7"));
    // On the wire.
    let ask = format!(
        r#"{{"v":{VERSION},"seq":2,"body":{{"type":"torch_snapshot_timeline","file_id":{id},"device":0,"axis":"event","columns":100,"rows":300}}}}"#
    );
    let ResponseBody::TorchSnapshotTimeline { bands } = handle(&mut session, &ask, None, &mut |_| {}).body else { panic!("no bands") };
    assert_eq!(*bands, few);
    let peak = d.peak_event_index;
    let ask =
        format!(r#"{{"v":{VERSION},"seq":3,"body":{{"type":"torch_snapshot_state","file_id":{id},"device":0,"event_index":{peak}}}}}"#);
    let ResponseBody::TorchSnapshotState { state } = handle(&mut session, &ask, None, &mut |_| {}).body else { panic!("no state") };
    assert_eq!(*state, session.torch_snapshot_state(id, 0, peak).expect("state"));
}

/// The fixture's Kineto trace and its snapshot were recorded by the same process, and their clocks
/// agree: a trace event at `baseTimeNanoseconds / 1000 + ts` is the snapshot event stamped with that
/// `time_us` (µs since the epoch). Each CUDA allocation of the trace's `[memory]` events is an `alloc`
/// of the snapshot at its address within 10 µs (most within 1), whose request fits the block the
/// trace records (the allocator rounds requests up) — all but a few; each free its `free_requested`.
/// The matching is [`trace_memory`]'s, which the page's Trace memory panel draws; on the wire too.
#[test]
fn the_trace_and_the_snapshot_share_one_clock() {
    use tidemark::analysis::torch_snapshot::trace_memory;
    use tidemark::engine::protocol::{handle, ResponseBody, VERSION};
    let Some(snapshot_path) = common::device_fixture(SNAPSHOT) else { return };
    let Some(trace_path) = common::device_fixture(TRACE) else { return };
    let trace_bytes = std::fs::read(trace_path).expect("read");
    let trace = tidemark::decode::kineto::KinetoTrace::decode(&trace_bytes).expect("trace");
    let snapshot_bytes = std::fs::read(snapshot_path).expect("read");
    let snapshot = tidemark::decode::pickle_snapshot::TorchSnapshot::decode(&snapshot_bytes).expect("snapshot");
    let d = &snapshot.devices[0];
    let memory = trace_memory(&trace, &snapshot, 0).expect("the trace names its base time");
    let (alloc, free) = (snapshot.find_str("alloc"), snapshot.find_str("free_requested"));
    // The snapshot stamps a free about a µs before the trace does (after releasing the block).
    for (kind, action, sign, within_us) in [("allocations", alloc, 1, 1.0), ("frees", free, -1, 2.0)] {
        let points: Vec<_> = memory.points.iter().filter(|p| p.bytes.signum() == sign).collect();
        let matched: Vec<usize> = points.iter().filter_map(|p| p.event_index).map(|i| i as usize).collect();
        assert!(points.len() > 500, "{} CUDA {kind} in the trace", points.len());
        assert!(
            matched.len() * 100 >= points.len() * 95,
            "{} of {} {kind} found in the snapshot at their time",
            matched.len(),
            points.len()
        );
        let mut offsets: Vec<f64> = Vec::new();
        for p in points.iter().filter(|p| p.event_index.is_some()) {
            let i = p.event_index.unwrap() as usize;
            assert_eq!(Some(d.action[i]), action, "{kind}: the snapshot's event is of its kind");
            assert_eq!(d.addr[i], p.addr as i64);
            assert!(d.size[i] <= p.bytes.abs());
            offsets.push(d.time_us[i] as f64 - p.time_us);
        }
        assert!(offsets.iter().all(|o| o.abs() <= tidemark::analysis::torch_snapshot::MATCH_WINDOW_US));
        offsets.sort_by(f64::total_cmp);
        let median = offsets[offsets.len() / 2];
        assert!(median.abs() <= within_us, "{kind}: the clocks differ by {median} µs");
    }
    assert_eq!(memory.matched as usize, memory.points.iter().filter(|p| p.event_index.is_some()).count());
    assert!(memory.points.windows(2).all(|w| w[0].time_us <= w[1].time_us), "in time order");
    assert!(memory.snapshot_start_us <= memory.points[0].time_us as i64 + 10, "the trace falls within the snapshot");

    // On the wire: the snapshot and the trace opened in one session.
    let mut session = Session::new();
    let snap = session.open("snapshot.pickle", snapshot_bytes.clone(), &mut |_, _| {}).expect("open").id;
    let tr = session.open("tb/run.pt.trace.json.gz", trace_bytes.clone(), &mut |_, _| {}).expect("open").id;
    let ask = format!(
        r#"{{"v":{VERSION},"seq":1,"body":{{"type":"torch_snapshot_trace_memory","file_id":{snap},"trace_file_id":{tr},"device":0}}}}"#
    );
    let ResponseBody::TorchSnapshotTraceMemory { memory: wire } = handle(&mut session, &ask, None, &mut |_| {}).body else {
        panic!("no curve")
    };
    assert_eq!(*wire, memory);
    // The roles swapped, and a device the snapshot lacks: clear errors.
    assert!(session.torch_snapshot_trace_memory(tr, snap, 0).is_err());
    let e = session.torch_snapshot_trace_memory(snap, tr, 7).expect_err("no device 7").to_string();
    assert!(e.contains("no device 7"), "{e}");
}

/// The fixture's trace with its clock moved `shift_ns` on: the same run's events stamped as if
/// recorded another time (what another run of the same script writes), as plain JSON.
fn shifted_trace(trace_bytes: &[u8], shift_ns: i64) -> Vec<u8> {
    use std::io::Read;
    let mut text = String::new();
    flate2::read::GzDecoder::new(trace_bytes).read_to_string(&mut text).expect("gzip");
    let mut v: Value = serde_json::from_str(&text).expect("json");
    let base = v["baseTimeNanoseconds"].as_i64().expect("base time");
    v["baseTimeNanoseconds"] = Value::from(base + shift_ns);
    serde_json::to_vec(&v).expect("json")
}

/// The snapshot view offers only the traces its run recorded: the fixture's trace belongs (its
/// memory events are the snapshot's), the same trace stamped an hour later is another run's, told
/// apart by its clock, and one without a base time fits no clock. On the wire too, in the order asked.
#[test]
fn only_the_snapshots_own_trace_belongs_with_it() {
    use tidemark::analysis::torch_snapshot::{trace_fit, Verdict};
    use tidemark::engine::protocol::{handle, ResponseBody, VERSION};
    let Some(snapshot_path) = common::device_fixture(SNAPSHOT) else { return };
    let Some(trace_path) = common::device_fixture(TRACE) else { return };
    let trace_bytes = std::fs::read(trace_path).expect("read");
    let snapshot_bytes = std::fs::read(snapshot_path).expect("read");
    let snapshot = tidemark::decode::pickle_snapshot::TorchSnapshot::decode(&snapshot_bytes).expect("snapshot");
    let mut trace = tidemark::decode::kineto::KinetoTrace::decode(&trace_bytes).expect("trace");
    let own = trace_fit(&trace, &snapshot, 0).expect("device 0");
    assert_eq!(own.verdict, Verdict::Belongs);
    assert!(own.matched > 0 && own.overlap_us > 0.0, "{own:?}");
    assert_eq!(own.why_not(0), None);

    const HOUR_NS: i64 = 3_600_000_000_000;
    let later = tidemark::decode::kineto::KinetoTrace::decode(&shifted_trace(&trace_bytes, HOUR_NS)).expect("shifted");
    let fit = trace_fit(&later, &snapshot, 0).expect("device 0");
    let Verdict::Apart { gap_us, after } = fit.verdict else { panic!("{fit:?}") };
    assert!(after);
    // An hour on, less how far past the snapshot's last event the trace already began.
    let end = tidemark::analysis::torch_snapshot::trace_memory(&trace, &snapshot, 0).expect("memory").snapshot_end_us;
    assert_eq!(gap_us, own.trace_start_us + 3.6e9 - end as f64);
    assert_eq!((fit.matched, fit.overlap_us), (0, 0.0));
    let why = fit.why_not(0).expect("left out");
    assert!(why.contains("after the snapshot's events") && why.contains("another run"), "{why}");

    trace.base_time_ns = None;
    assert_eq!(trace_fit(&trace, &snapshot, 0).expect("device 0").verdict, Verdict::NoClock);
    assert!(trace_fit(&trace, &snapshot, 7).is_err(), "no device 7");

    let mut session = Session::new();
    let snap = session.open("snapshot.pickle", snapshot_bytes, &mut |_, _| {}).expect("open").id;
    let tr = session.open("tb/run.pt.trace.json.gz", trace_bytes.clone(), &mut |_, _| {}).expect("open").id;
    let other = session.open("other/run.pt.trace.json", shifted_trace(&trace_bytes, HOUR_NS), &mut |_, _| {}).expect("open").id;
    let ask = format!(
        r#"{{"v":{VERSION},"seq":1,"body":{{"type":"torch_snapshot_trace_fits","file_id":{snap},"device":0,"trace_file_ids":[{other},{tr}]}}}}"#
    );
    let ResponseBody::TorchSnapshotTraceFits { fits } = handle(&mut session, &ask, None, &mut |_| {}).body else { panic!("no fits") };
    assert_eq!(fits, vec![fit, own]);
    // A file that is not a Kineto trace: a clear error, not a fit.
    let e = session.torch_snapshot_trace_fits(snap, 0, &[snap]).expect_err("the snapshot is no trace").to_string();
    assert!(e.contains("PyTorch profiler trace"), "{e}");
}

/// A timeline window names its time span: on the event axis its first and last events' times (what
/// the Trace memory panel shows beside it), on the time axis the window itself.
#[test]
fn a_timeline_window_names_its_time_span() {
    use tidemark::analysis::torch_snapshot::Axis;
    let Some((path, _)) = fixture() else { return };
    let bytes = std::fs::read(&path).expect("read");
    let snapshot = tidemark::decode::pickle_snapshot::TorchSnapshot::decode(&bytes).expect("snapshot");
    let times = &snapshot.devices[0].time_us;
    let (session, id, _) = report(&path);
    let b = session.torch_snapshot_timeline(id, 0, Axis::Event, Some((1000, 2000)), 100, 100).expect("bands");
    let inside = &times[1000..=2000];
    assert_eq!((b.start_time_us, b.end_time_us), (*inside.iter().min().unwrap(), *inside.iter().max().unwrap()));
    assert!(b.start_time_us < b.end_time_us);
    let t = session.torch_snapshot_timeline(id, 0, Axis::Time, Some((b.start_time_us, b.end_time_us)), 100, 100).expect("bands");
    assert_eq!((t.start_time_us, t.end_time_us), (b.start_time_us, b.end_time_us));
    assert_eq!(t.events_in_window, times.iter().filter(|&&x| (b.start_time_us..=b.end_time_us).contains(&x)).count() as u64);
}

/// `tidemark torch-snapshot SNAPSHOT --trace TRACE`: the page's Trace memory panel from the command
/// line — the matched count, span and peak as [`trace_memory`] has them, every point with `--json`,
/// readable text without; a trace of another run is said to be one; bad combinations are usage errors.
#[test]
fn the_cli_lays_a_trace_on_the_snapshots_clock() {
    use tidemark::analysis::torch_snapshot::trace_memory;
    let Some(snapshot_path) = common::device_fixture(SNAPSHOT) else { return };
    let Some(trace_path) = common::device_fixture(TRACE) else { return };
    let (snap, tr) = (snapshot_path.to_str().expect("utf-8"), trace_path.to_str().expect("utf-8"));
    let trace_bytes = std::fs::read(&trace_path).expect("read");
    let trace = tidemark::decode::kineto::KinetoTrace::decode(&trace_bytes).expect("trace");
    let snapshot =
        tidemark::decode::pickle_snapshot::TorchSnapshot::decode(&std::fs::read(&snapshot_path).expect("read")).expect("snapshot");
    let memory = trace_memory(&trace, &snapshot, 0).expect("memory");
    let (_, _, r) = report(&snapshot_path);
    let d = &r.devices["0"];
    let first = d.history.first_time_us.expect("events") as f64;
    let (start, end) = memory.extent().expect("points");
    let peak = memory.peak().expect("points");

    let (code, out, err) = common::tidemark(&["torch-snapshot", snap, "--trace", tr, "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["trace_memory"], serde_json::to_value(&memory).expect("json"));
    assert_eq!((v["points"].as_u64(), v["matched"].as_u64()), (Some(memory.points.len() as u64), Some(memory.matched)));
    assert_eq!((v["start_offset_us"].as_f64(), v["span_us"].as_f64()), (Some(start - first), Some(end - start)));
    assert_eq!(v["peak"], serde_json::to_value(peak).expect("json"));
    assert_eq!(v["snapshot_peak_with_prior_bytes"].as_i64(), Some(d.peak_with_prior_bytes));
    assert_eq!(v["fit"]["verdict"]["kind"], "belongs");
    assert!(memory.points.iter().all(|p| p.total_allocated <= peak.total_allocated));

    let (code, text, err) = common::tidemark(&["torch-snapshot", snap, "--trace", tr]);
    assert_eq!(code, 0, "{err}");
    let count = tidemark::units::count;
    assert!(
        text.contains(&format!("{} CUDA memory events, {} matched", count(memory.points.len() as u64), count(memory.matched))),
        "{text}"
    );
    assert!(text.contains(&format!("highest allocated in the trace: {}", tidemark::units::bytes(peak.total_allocated))), "{text}");
    assert!(text.contains(&format!("the snapshot's peak: {}", tidemark::units::bytes(d.peak_with_prior_bytes))), "{text}");
    assert!(!text.contains("not this snapshot's run"), "{text}");

    // Another run's trace: still laid out, and said to be another run's.
    let dir = std::env::temp_dir().join(format!("tidemark-cli-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let other = dir.join("other.pt.trace.json");
    std::fs::write(&other, shifted_trace(&trace_bytes, 3_600_000_000_000)).expect("write");
    let (code, text, err) = common::tidemark(&["torch-snapshot", snap, "--trace", other.to_str().expect("utf-8")]);
    assert_eq!(code, 0, "{err}");
    assert!(text.contains("not this snapshot's run: it was recorded ") && text.contains("after the snapshot's events"), "{text}");
    assert!(text.contains(", 0 matched"), "{text}");
    std::fs::remove_dir_all(&dir).expect("clean up");

    // Usage errors and a trace that is not one.
    assert_eq!(common::tidemark(&["torch-snapshot", snap, "--trace", tr, "--at", "5"]).0, 2);
    assert_eq!(common::tidemark(&["torch-snapshot", snap, "--trace", tr, "--device", "-1"]).0, 2);
    let (code, _, err) = common::tidemark(&["torch-snapshot", snap, "--trace", snap]);
    assert_eq!(code, 1);
    assert!(err.contains("PyTorch profiler trace"), "{err}");
    let (code, _, err) = common::tidemark(&["torch-snapshot", snap, "--trace", tr, "--device", "7"]);
    assert_eq!(code, 1);
    assert!(err.contains("no device 7"), "{err}");
}
