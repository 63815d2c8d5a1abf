//! The Trace Viewer against XProf 2.24's trace_viewer JSON of the real GPU/TPU profiles (read in place).

mod common;

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use tidemark::analysis::trace_viewer::{details, export};
use tidemark::decode::{DecodedFile, Profile};

const DEVICE_TRACES: [&str; 5] = [
    "jax_mi300x_attention/mi300x_attention",
    "jax_mi300x_conv/mi300x_conv",
    "jax_mi355x_te_attention/mi355x_te_attention",
    "jax_tpu_v6e_inference/tpu_v6e_inference",
    "tf_v100_multi_worker/v100_worker",
];

fn decode(path: &std::path::Path) -> DecodedFile {
    let bytes = std::fs::read(path).unwrap();
    tidemark::decode::decode(&path.display().to_string(), bytes, &mut |_, _| {}).unwrap()
}

fn space(file: &DecodedFile) -> &tidemark::decode::xplane::XSpace {
    match &file.profile {
        Profile::XSpace(s) => s,
        _ => panic!("not an XSpace"),
    }
}

/// The argument XProf's preprocessing adds that is left out of the comparison everywhere: `flow`, from
/// its event connections, whose ids hash with a per-process salt.
const FLOW: &str = "flow";

/// (pid, thread name) → the multiset of events (as canonical JSON text without pid/tid).
type Events = BTreeMap<(u64, String), BTreeMap<String, usize>>;

fn split(trace: &Value) -> (Vec<Value>, Events) {
    let mut meta = Vec::new();
    let mut events: Events = BTreeMap::new();
    let all = trace["traceEvents"].as_array().expect("traceEvents");
    let thread_names = thread_names(trace);
    for e in all {
        let Some(obj) = e.as_object().filter(|o| !o.is_empty()) else { continue };
        if obj["ph"] == "M" {
            meta.push(e.clone());
            continue;
        }
        let (pid, tid) = (obj["pid"].as_u64().unwrap(), obj["tid"].as_u64().unwrap());
        let key = (pid, thread_names.get(&(pid, tid)).cloned().unwrap_or_default());
        let mut rest = obj.clone();
        rest.remove("pid");
        rest.remove("tid");
        if let Some(Value::Object(args)) = rest.get_mut("args") {
            args.retain(|k, _| k != FLOW);
            if args.is_empty() {
                rest.remove("args");
            }
        }
        // Numbers as doubles: XProf writes `1939402.0` where we write `1939402`.
        for k in ["ts", "dur"] {
            if let Some(v) = rest.get_mut(k) {
                *v = serde_json::json!(v.as_f64().unwrap());
            }
        }
        *events.entry(key).or_default().entry(Value::Object(rest).to_string()).or_default() += 1;
    }
    (meta, events)
}

/// (pid, tid) → thread name.
fn thread_names(trace: &Value) -> BTreeMap<(u64, u64), String> {
    trace["traceEvents"]
        .as_array()
        .expect("traceEvents")
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "thread_name")
        .map(|e| ((e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap()), e["args"]["name"].as_str().unwrap().to_string()))
        .collect()
}

/// Our trace_viewer JSON against XProf's, per fixture:
/// - the same threads, each with exactly XProf's events (a multiset of name, `ph`, `ts`, `dur` and
///   arguments), threads matched by process and thread name; XProf writes them in another order. That
///   includes the lines XProf derives from device events (on GPUs one group per stream, named ` - from
///   #<stream>`; on TPUs framework ops, name scopes, source lines and host-offload rows) and the
///   `is_eager` and `group_id` its grouping adds;
/// - process and thread metadata (names, tids, sort indices) are equal;
/// - left out: `flow` ([`FLOW`]), whose ids XProf hashes with a per-process salt.
#[test]
fn trace_viewer_json_equals_xprof_on_device_traces() {
    for name in DEVICE_TRACES {
        let Some(pb) = common::device_fixture(&format!("{name}.xplane.pb")) else { continue };
        let oracle = common::json_at(&common::device_fixture(&format!("{name}.trace_viewer.json.gz")).unwrap());
        let file = decode(&pb);
        let mut out = Vec::new();
        let written = export::write_json(space(&file), None, &mut out).unwrap();
        let ours: Value = serde_json::from_slice(&out).expect("our JSON parses");
        let (our_meta, our_events) = split(&ours);
        let (xprof_meta, xprof_events) = split(&oracle);
        assert_eq!(written, our_events.values().flat_map(|m| m.values()).sum::<usize>(), "{name}: events written");

        let thread = |m: &Value| (m["pid"].as_u64().unwrap(), m["args"]["name"].as_str().unwrap().to_string());
        let threads =
            |meta: &[Value]| -> BTreeSet<(u64, String)> { meta.iter().filter(|m| m["name"] == "thread_name").map(thread).collect() };
        let (our_threads, xprof_threads) = (threads(&our_meta), threads(&xprof_meta));
        assert!(
            our_threads == xprof_threads,
            "{name}: threads only ours {:?}, only XProf's {:?}",
            our_threads.difference(&xprof_threads).collect::<Vec<_>>(),
            xprof_threads.difference(&our_threads).collect::<Vec<_>>()
        );
        println!("{name}: {} threads equal", our_threads.len());

        for key in our_events.keys().chain(xprof_events.keys()).collect::<BTreeSet<_>>() {
            let (ours, theirs) = (our_events.get(key).cloned().unwrap_or_default(), xprof_events.get(key).cloned().unwrap_or_default());
            let first = |a: &BTreeMap<String, usize>, b: &BTreeMap<String, usize>| {
                a.iter().find(|(k, n)| b.get(*k) != Some(n)).map(|(k, n)| format!("{n}× {k}"))
            };
            assert!(ours == theirs, "{name} {key:?}: only ours {:?}; only XProf's {:?}", first(&ours, &theirs), first(&theirs, &ours));
        }

        let comparable = |meta: &[Value]| -> BTreeSet<String> { meta.iter().map(|m| m.to_string()).collect() };
        let (ours_m, xprof_m) = (comparable(&our_meta), comparable(&xprof_meta));
        assert!(
            ours_m == xprof_m,
            "{name}: metadata only ours {:?}, only XProf's {:?}",
            ours_m.difference(&xprof_m).collect::<Vec<_>>(),
            xprof_m.difference(&ours_m).collect::<Vec<_>>()
        );
    }
}

/// The CPU fixtures (no XProf trace_viewer oracle: checked by the same rules as the device ones).
const CPU_TRACES: [&str; 6] = [
    "jax/a1_docs_seed/a1_docs_seed.xplane.pb.gz",
    "jax/a2_mlp_train/a2_mlp_train.xplane.pb.gz",
    "tf/d1_tf_keras_bfc/d1_tf_keras_bfc.xplane.pb.gz",
    "tf/d1_tf_keras_none/d1_tf_keras_none.xplane.pb.gz",
    "tf/d1_tf_keras_stats/d1_tf_keras_stats.xplane.pb.gz",
    "tf/d2_tf_cnn/d2_tf_cnn.xplane.pb.gz",
];

/// Every trace we have, device ones read in place: (name, bytes).
fn all_traces() -> Vec<(String, Vec<u8>)> {
    let device = DEVICE_TRACES
        .iter()
        .filter_map(|n| common::device_fixture(&format!("{n}.xplane.pb")).map(|p| (n.to_string(), std::fs::read(p).unwrap())));
    device.chain(CPU_TRACES.iter().map(|n| (n.to_string(), common::bytes(n)))).collect()
}

/// An event as drawn: name, start and duration (ps).
type Drawn = (String, i64, i64);

/// The store holds exactly the events the JSON export writes: per thread the same (name, start,
/// duration) multiset, in start order, and the outline names XProf's processes and threads.
#[test]
fn the_store_holds_the_exported_events() {
    for (name, bytes) in all_traces() {
        let mut session = tidemark::engine::Session::new();
        let id = session.open(&name, bytes, &mut |_, _| {}).unwrap().id;
        let mut json = Vec::new();
        let written = session.trace_export_json(id, None, &mut json).unwrap();
        let json: Value = serde_json::from_slice(&json).unwrap();
        let store = session.trace_store(id).unwrap();
        assert_eq!(store.event_count(), written, "{name}");
        let mut exported: BTreeMap<(u64, u64), Vec<Drawn>> = BTreeMap::new();
        for e in json["traceEvents"].as_array().unwrap().iter().filter(|e| e.get("ph").is_some_and(|p| p != "M")) {
            let ps = |v: &Value| v.as_f64().map_or(0, |us| (us * 1e6).round() as i64);
            let key = (e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap());
            exported.entry(key).or_default().push((e["name"].as_str().unwrap().to_string(), ps(&e["ts"]), ps(&e["dur"])));
        }
        for t in &store.threads {
            let mut ours: Vec<Drawn> = t
                .events
                .clone()
                .map(|e| (store.name_of(e).to_string(), store.start_ps()[e as usize], store.duration_ps(e as usize)))
                .collect();
            assert!(ours.windows(2).all(|w| w[0].1 <= w[1].1), "{name} {}: sorted by start", t.name);
            // Microseconds as doubles read back to the picosecond for these traces' magnitudes.
            let mut theirs = exported.remove(&(u64::from(t.pid), u64::from(t.tid))).unwrap_or_default();
            ours.sort();
            theirs.sort();
            assert_eq!(ours, theirs, "{name} pid {} tid {}", t.pid, t.tid);
        }
        assert!(exported.is_empty(), "{name}: exported threads the store lacks: {:?}", exported.keys().collect::<Vec<_>>());
        let outline = session.trace_outline(id).unwrap();
        assert_eq!(outline.event_count as usize, written);
        assert_eq!(outline.processes.iter().map(|p| p.threads.len()).sum::<usize>(), session.trace_store(id).unwrap().threads.len());
    }
}

/// An event's details carry every argument XProf shows for it: on the AMD trace a kernel launch's
/// `hlo_op`, `hlo_module`, `tf_op`, `correlation_id`; on the TPU an XLA op's `long_name`; the flow
/// of a `ThreadpoolListener::Record`, unpacked.
#[test]
fn event_details_have_xprofs_arguments() {
    let Some(attention) = common::device_fixture("jax_mi300x_attention/mi300x_attention.xplane.pb") else { return };
    let oracle = common::json_at(&common::device_fixture("jax_mi300x_attention/mi300x_attention.trace_viewer.json.gz").unwrap());
    let mut session = tidemark::engine::Session::new();
    let id = session.open("attention", std::fs::read(attention).unwrap(), &mut |_, _| {}).unwrap().id;
    let launch = session.trace_search(id, "hipExtModuleLaunchKernel").unwrap();
    let in_oracle = oracle["traceEvents"].as_array().unwrap().iter().filter(|e| e["name"] == "hipExtModuleLaunchKernel").count();
    assert_eq!(launch.count, in_oracle);
    let d = session.trace_event_details(id, launch.event[0]).unwrap().unwrap();
    let expected = oracle["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["name"] == "hipExtModuleLaunchKernel")
        .min_by(|a, b| a["ts"].as_f64().partial_cmp(&b["ts"].as_f64()).unwrap())
        .unwrap();
    let ours: BTreeMap<&str, &str> = d.args.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    for (k, v) in expected["args"].as_object().unwrap() {
        if k != FLOW {
            assert_eq!(ours.get(k.as_str()).copied(), v.as_str(), "{k}");
        }
    }
    assert!(ours.contains_key("hlo_op") && ours.contains_key("tf_op"));
    assert_eq!((d.name.as_str(), d.pid, d.self_time_ps), ("hipExtModuleLaunchKernel", 701, d.duration_ps));

    // The file has no `flow` stats (XProf makes its flows from the producer/consumer contexts): a
    // region's start carries its consumer context, and the region XProf adds the same one.
    let start = session.trace_search(id, "ThreadpoolListener::StartRegion").unwrap();
    let d = session.trace_event_details(id, start.event[0]).unwrap().unwrap();
    assert_eq!(d.flow, None);
    let consumer = *d.contexts.iter().find(|c| !c.producer).expect("a consumer context");
    // A region XProf adds has no arguments of its own.
    let region = session.trace_search(id, "ThreadpoolListener::Region").unwrap();
    assert_eq!(region.count, 21);
    let d = session.trace_event_details(id, region.event[0]).unwrap().unwrap();
    assert!(d.args.is_empty());
    assert_eq!(d.contexts, vec![details::ContextLink { producer: false, context_type: 15, id: consumer.id }]);
    assert_eq!(session.trace_event_details(id, u32::MAX).unwrap(), None);

    let Some(tpu) = common::device_fixture("jax_tpu_v6e_inference/tpu_v6e_inference.xplane.pb") else { return };
    let id = session.open("tpu", std::fs::read(tpu).unwrap(), &mut |_, _| {}).unwrap().id;
    let e = first_event(&mut session, id, "XLA Ops");
    let d = session.trace_event_details(id, e).unwrap().unwrap();
    assert!(d.args.iter().any(|(k, v)| k == "long_name" && v.starts_with('%')), "{:?}", d.args);
}

/// The events of derived lines have details like any other: on the AMD trace an `XLA Ops - from #16`
/// event is shown by its HLO op with its full name, a kernel gets `is_eager`; on the TPU an XLA op
/// carries its step's `group_id`, and a `Framework Ops` event too.
#[test]
fn derived_events_have_details() {
    let Some(attention) = common::device_fixture("jax_mi300x_attention/mi300x_attention.xplane.pb") else { return };
    let mut session = tidemark::engine::Session::new();
    let id = session.open("attention", std::fs::read(attention).unwrap(), &mut |_, _| {}).unwrap().id;
    let e = first_event(&mut session, id, "XLA Ops - from #16");
    let d = session.trace_event_details(id, e).unwrap().unwrap();
    assert_eq!((d.name.as_str(), d.tid, d.thread_name.as_str()), ("custom-call.1", 5, "XLA Ops - from #16"));
    assert_eq!(d.args, vec![("long_name".to_string(), "19/custom-call.1".to_string())]);
    let e = first_event(&mut session, id, "Stream #16(Kernel)");
    let d = session.trace_event_details(id, e).unwrap().unwrap();
    assert!(d.args.contains(&("is_eager".to_string(), "0".to_string())), "{:?}", d.args);

    let Some(tpu) = common::device_fixture("jax_tpu_v6e_inference/tpu_v6e_inference.xplane.pb") else { return };
    let id = session.open("tpu", std::fs::read(tpu).unwrap(), &mut |_, _| {}).unwrap().id;
    let e = first_event(&mut session, id, "XLA Ops");
    let d = session.trace_event_details(id, e).unwrap().unwrap();
    assert!(d.args.iter().any(|(k, _)| k == "group_id"), "{:?}", d.args);
    let e = first_event(&mut session, id, "Framework Ops");
    let d = session.trace_event_details(id, e).unwrap().unwrap();
    assert_eq!(d.tid, 0xdead_beef + 3);
    assert!(d.args.iter().any(|(k, _)| k == "group_id") && d.args.iter().any(|(k, _)| k == "long_name"), "{:?}", d.args);
}

/// The first event (by start) of the thread named `name` of the file's first process.
fn first_event(session: &mut tidemark::engine::Session, id: u32, name: &str) -> u32 {
    let outline = session.trace_outline(id).unwrap();
    let index = outline.processes[0].threads.iter().find(|t| t.name == name).unwrap().index as usize;
    session.trace_store(id).unwrap().threads[index].events.start
}

/// Search counts every event whose name contains the text, ignoring case; a range summary over the
/// whole trace counts every event, and self time never exceeds total time.
#[test]
fn search_and_range_summary_count_every_event() {
    let mut session = tidemark::engine::Session::new();
    let id = session.open("d2", common::bytes("tf/d2_tf_cnn/d2_tf_cnn.xplane.pb.gz"), &mut |_, _| {}).unwrap().id;
    let outline = session.trace_outline(id).unwrap();
    let store = session.trace_store(id).unwrap();
    let expected = (0..store.event_count() as u32).filter(|&e| store.name_of(e).to_lowercase().contains("executor")).count();
    let top_level: i64 = (0..store.event_count()).filter(|&e| store.depth()[e] == 0).map(|e| store.duration_ps(e).max(0)).sum();
    assert!(expected > 0);
    let found = session.trace_search(id, "EXECUTOR").unwrap();
    assert_eq!(found.count, expected);
    assert!(found.start_ps.windows(2).all(|w| w[0] <= w[1]));
    let rows = session.trace_range_summary(id, outline.start_ps, outline.end_ps + 1, None).unwrap();
    assert_eq!(rows.iter().map(|r| r.count).sum::<u64>(), outline.event_count);
    assert!(rows.iter().all(|r| 0 <= r.self_ps && r.self_ps <= r.total_ps), "self ≤ total");
    assert!(rows.windows(2).all(|w| w[0].total_ps >= w[1].total_ps));
    // Self times add up to the time covered by the top-level events, nested levels not counted twice.
    let total_self: i64 = rows.iter().map(|r| r.self_ps).sum();
    assert!(total_self <= top_level, "{total_self} > {top_level}");
}

/// The event store stays within 1.5× the (uncompressed) file's size; measured on the largest fixture
/// and on the benchmark trace when it is there.
#[test]
fn the_store_fits_the_memory_budget() {
    let mut traces = vec![("a2_mlp_train".to_string(), common::bytes("jax/a2_mlp_train/a2_mlp_train.xplane.pb.gz"))];
    let bench = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/traces/d2_tf_cnn_250.xplane.pb.gz");
    if let Ok(b) = std::fs::read(&bench) {
        traces.push(("d2_tf_cnn_250".into(), b));
    }
    for (name, bytes) in traces {
        let file = tidemark::decode::decode(&name, bytes, &mut |_, _| {}).unwrap();
        let space = space(&file);
        let clock = std::time::Instant::now();
        let store = tidemark::analysis::trace_viewer::TraceStore::build(space).unwrap();
        let built = clock.elapsed();
        let (store_bytes, file_bytes) = (store.heap_bytes(), space.bytes().len());
        let clock = std::time::Instant::now();
        let json_bytes = {
            let mut out = Vec::new();
            export::write_json(space, None, &mut out).unwrap();
            out.len()
        };
        println!(
            "{name}: {} events, store {store_bytes} B = {:.2}× the file's {file_bytes} B ({:.1} B/event), built in {built:.2?}; \
             JSON {json_bytes} B in {:.2?}",
            store.event_count(),
            store_bytes as f64 / file_bytes as f64,
            store_bytes as f64 / store.event_count() as f64,
            clock.elapsed()
        );
        assert!(store_bytes as f64 <= 1.5 * file_bytes as f64, "{name}");
    }
}

/// `tidemark trace-viewer`: the summary names the processes and threads and XProf's cap; `--json` is
/// the same JSON the engine writes; a usage error exits 2.
#[test]
fn cli_prints_summary_and_json() {
    let bin = env!("CARGO_BIN_EXE_tidemark");
    let file = common::fixture("tf/d1_tf_keras_bfc/d1_tf_keras_bfc.xplane.pb.gz");
    let out = std::process::Command::new(bin).args(["trace-viewer"]).arg(&file).output().expect("runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("pid  701  /host:CPU") && text.contains("XProf's cap of 5,000,000 events drops none"), "{text}");
    let out = std::process::Command::new(bin).args(["trace-viewer", "--json"]).arg(&file).output().expect("runs");
    assert!(out.status.success());
    let cli: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let mut session = tidemark::engine::Session::new();
    let id = session.open("d1", common::bytes("tf/d1_tf_keras_bfc/d1_tf_keras_bfc.xplane.pb.gz"), &mut |_, _| {}).unwrap().id;
    let mut engine = Vec::new();
    session.trace_export_json(id, None, &mut engine).unwrap();
    assert_eq!(cli, serde_json::from_slice::<Value>(&engine).unwrap());
    let out = std::process::Command::new(bin).args(["trace-viewer"]).output().expect("runs");
    assert_eq!(out.status.code(), Some(2));
}

/// A time-range export keeps exactly the events that overlap the range.
#[test]
fn range_export_keeps_the_events_that_overlap_it() {
    let mut session = tidemark::engine::Session::new();
    let id = session.open("d1", common::bytes("tf/d1_tf_keras_bfc/d1_tf_keras_bfc.xplane.pb.gz"), &mut |_, _| {}).unwrap().id;
    let outline = session.trace_outline(id).unwrap();
    let (from, to) =
        (outline.start_ps + (outline.end_ps - outline.start_ps) / 3, outline.start_ps + (outline.end_ps - outline.start_ps) / 2);
    let store = session.trace_store(id).unwrap();
    let expected =
        (0..store.event_count()).filter(|&e| store.start_ps()[e] <= to && store.start_ps()[e] + store.duration_ps(e) >= from).count();
    let mut out = Vec::new();
    let written = session.trace_export_json(id, Some((from, to)), &mut out).unwrap();
    assert_eq!(written, expected);
    assert!(written > 0 && written < outline.event_count as usize);
    let json: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(json["traceEvents"].as_array().unwrap().iter().filter(|e| e.get("ph").is_some_and(|p| p != "M")).count(), written);
}

/// A cut or corrupted trace gives a clear error or the events before the damage, never a panic.
#[test]
fn damaged_traces_never_panic() {
    use std::io::Read;
    let mut whole = Vec::new();
    flate2::read::GzDecoder::new(&common::bytes("tf/d1_tf_keras_none/d1_tf_keras_none.xplane.pb.gz")[..]).read_to_end(&mut whole).unwrap();
    let mut read = 0;
    for cut in [whole.len() / 7, whole.len() / 2, whole.len() - 3, whole.len()] {
        let mut bytes = whole[..cut].to_vec();
        // Also flip a byte in the middle of what is left.
        for damaged in [false, true] {
            if damaged {
                let mid = bytes.len() / 2;
                bytes[mid] ^= 0x5a;
            }
            let mut session = tidemark::engine::Session::new();
            let Ok(file) = session.open("cut", bytes.clone(), &mut |_, _| {}) else { continue };
            let id = file.id;
            if let Ok(outline) = session.trace_outline(id) {
                read += 1;
                let q = tidemark::analysis::trace_viewer::lod::LodQuery {
                    start_ps: outline.start_ps,
                    end_ps: outline.end_ps,
                    width_px: 800,
                    threads: None,
                };
                let spans = session.trace_spans(id, &q).unwrap();
                assert_eq!(spans.visible_events, outline.event_count);
                for e in [0, outline.event_count.saturating_sub(1) as u32] {
                    let _ = session.trace_event_details(id, e);
                }
            }
            let _ = session.trace_export_json(id, None, &mut Vec::new());
        }
    }
    println!("{read} of 8 damaged or whole copies opened and were read");
    assert!(read >= 1);
}
