//! The Trace Viewer of a PyTorch profiler (Kineto) trace, against the trace's own JSON read here
//! with serde_json: every complete and instant event shown, on its process's tracks (CPU threads
//! before GPU streams, named by the metadata events); the times of a kernel exact to the ns the trace
//! wrote; one flow link per `s`/`f` pair (`ac2g` from the launch to its kernel, `fwdbwd`); the
//! `[memory]` events as the GPU's counter track; the CLI's summary and JSON.

mod common;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;
use tidemark::analysis::trace_viewer::counters::{CounterKind, CounterQuery};
use tidemark::analysis::trace_viewer::flows::LinkKind;
use tidemark::engine::Session;

const TRACE: &str = "nvidia_h200_pytorch/p2_torch_resnet/tb/vm_2031.1795841222637258163.pt.trace.json.gz";

fn trace() -> Option<PathBuf> {
    common::device_fixture(TRACE)
}

/// One raw event, its times kept as written.
#[derive(Deserialize)]
struct Raw<'a> {
    ph: Option<String>,
    cat: Option<String>,
    name: Option<String>,
    #[serde(borrow)]
    ts: Option<&'a RawValue>,
    #[serde(borrow)]
    dur: Option<&'a RawValue>,
    pid: Option<Value>,
    id: Option<Value>,
    #[serde(default)]
    args: Value,
}

/// µs written with up to three decimals, as integer ns, from the text (no double in between).
fn ns(v: &RawValue) -> i64 {
    let text = v.get();
    let (whole, frac) = text.split_once('.').unwrap_or((text, ""));
    assert!(frac.len() <= 3, "{text}: more than ns precision");
    whole.parse::<i64>().expect("µs") * 1000 + format!("{frac:0<3}").parse::<i64>().expect("fraction")
}

struct Fixture {
    session: Session,
    id: u32,
    text: String,
}

fn open(path: &PathBuf) -> Fixture {
    let bytes = std::fs::read(path).expect("fixture");
    let text = String::from_utf8(tidemark::decode::gzip::inflate(&bytes).expect("gunzip")).expect("utf-8");
    let mut session = Session::new();
    let id = session.open(path.to_str().expect("utf-8 path"), bytes, &mut |_, _| {}).expect("opens").id;
    Fixture { session, id, text }
}

fn raw_events(text: &str) -> Vec<Raw<'_>> {
    #[derive(Deserialize)]
    struct Top<'a> {
        #[serde(rename = "traceEvents", borrow)]
        trace_events: Vec<Raw<'a>>,
    }
    serde_json::from_str::<Top>(text).expect("the trace's JSON").trace_events
}

fn is_event(r: &Raw) -> bool {
    matches!(r.ph.as_deref(), Some("X" | "i" | "I"))
}

#[test]
fn every_event_on_its_track_with_exact_times() {
    let Some(path) = trace() else { return };
    let Fixture { mut session, id, text } = open(&path);
    let raw = raw_events(&text);
    let events: Vec<&Raw> = raw.iter().filter(|r| is_event(r)).collect();
    let outline = session.trace_outline(id).unwrap();
    assert_eq!(outline.event_count, events.len() as u64, "every complete and instant event");
    let on_threads: u64 = outline.processes.iter().flat_map(|p| &p.threads).map(|t| u64::from(t.event_count)).sum();
    assert_eq!(on_threads, outline.event_count);
    // CPU threads first, then the GPU's stream, named by the metadata.
    let first: Vec<(&str, &str)> =
        outline.processes[..2].iter().flat_map(|p| p.threads.iter().map(move |t| (p.name.as_str(), t.name.as_str()))).collect();
    assert_eq!(
        first,
        [
            ("python3 (pid 2031): CPU", "thread 2031 (python3)"),
            ("python3 (pid 2031): CPU", "thread 2056 (python3)"),
            ("python3 (pid 0): GPU 0", "stream 7"),
        ]
    );
    // Per process, the raw events' count.
    let mut by_pid: BTreeMap<String, u64> = BTreeMap::new();
    for r in &events {
        *by_pid.entry(r.pid.as_ref().map_or(String::new(), |p| p.to_string())).or_default() += 1;
    }
    assert_eq!(
        outline.processes.iter().find(|p| p.pid == 2031).map(|p| p.threads.iter().map(|t| u64::from(t.event_count)).sum()),
        by_pid.get("2031").copied()
    );

    // The longest kernel: its start (from the earliest event) and duration to the ns, its arguments.
    let origin = events.iter().map(|r| ns(r.ts.unwrap())).min().unwrap();
    let kernel = events.iter().filter(|r| r.cat.as_deref() == Some("kernel")).max_by_key(|r| ns(r.dur.unwrap())).expect("a kernel");
    let name = kernel.name.as_deref().unwrap();
    let found = session.trace_search(id, name).unwrap();
    let raw_same_name =
        events.iter().filter(|r| r.name.as_deref().is_some_and(|n| n.to_lowercase().contains(&name.to_lowercase()))).count();
    assert_eq!(found.count, raw_same_name, "search finds every event whose name holds it");
    let start_ps = (ns(kernel.ts.unwrap()) - origin) * 1000;
    let store = session.trace_store(id).unwrap();
    let e = *found.event.iter().find(|&&e| store.start_ps()[e as usize] == start_ps).expect("the kernel at its start");
    assert_eq!(store.duration_ps(e as usize), ns(kernel.dur.unwrap()) * 1000);
    let d = session.trace_event_details(id, e).unwrap().expect("details");
    assert_eq!((d.name.as_str(), d.category.as_str(), d.tid), (name, "kernel", 7));
    let arg = |k: &str| d.args.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    for key in ["grid", "block", "correlation", "stream", "registers per thread"] {
        assert_eq!(arg(key), Some(kernel.args[key].to_string()), "{key}");
    }
}

#[test]
fn flows_pair_each_start_with_its_end() {
    let Some(path) = trace() else { return };
    let Fixture { mut session, id, text } = open(&path);
    let raw = raw_events(&text);
    // (category, id) → which of `s` and `f` it has.
    let mut steps: BTreeMap<(String, String), (bool, bool)> = BTreeMap::new();
    for r in raw.iter().filter(|r| matches!(r.ph.as_deref(), Some("s" | "f"))) {
        let slot = steps.entry((r.cat.clone().unwrap_or_default(), r.id.as_ref().map_or(String::new(), |i| i.to_string()))).or_default();
        if r.ph.as_deref() == Some("s") {
            slot.0 = true;
        } else {
            slot.1 = true;
        }
    }
    let mut pairs: BTreeMap<String, usize> = BTreeMap::new();
    for ((cat, _), _) in steps.iter().filter(|(_, &(s, f))| s && f) {
        *pairs.entry(cat.clone()).or_default() += 1;
    }
    assert!(pairs["ac2g"] > 0 && pairs["fwdbwd"] > 0, "{pairs:?}");
    let links = session.trace_flow_index(id).unwrap().links().to_vec();
    let store = session.trace_store(id).unwrap();
    let mut ours: BTreeMap<String, usize> = BTreeMap::new();
    for l in &links {
        let LinkKind::Chrome { category, .. } = l.kind else { panic!("{l:?}: not a Chrome flow") };
        *ours.entry(store.names()[category as usize].clone()).or_default() += 1;
    }
    assert_eq!(ours, pairs, "one link per s/f pair");
    // A launch links the runtime call to the kernel of its correlation id.
    let mut checked = 0;
    for l in &links {
        let LinkKind::Chrome { id: correlation, .. } = l.kind else { continue };
        let (from, to) =
            (session.trace_event_details(id, l.from).unwrap().unwrap(), session.trace_event_details(id, l.to).unwrap().unwrap());
        if from.category != "cuda_runtime" && from.category != "cuda_driver" {
            assert_eq!((from.tid, to.tid), (2031, 2056), "fwdbwd runs from the forward thread to the backward one");
            continue;
        }
        let correlation_of = |d: &tidemark::analysis::trace_viewer::details::EventDetails| {
            d.args.iter().find(|(k, _)| k == "correlation").map(|(_, v)| v.parse::<i64>().unwrap())
        };
        assert_eq!((correlation_of(&from), correlation_of(&to)), (Some(correlation), Some(correlation)), "{} → {}", from.name, to.name);
        assert!(from.start_ps <= to.start_ps);
        checked += 1;
    }
    assert_eq!(checked, pairs["ac2g"]);
}

#[test]
fn memory_events_are_the_gpu_counter_track() {
    let Some(path) = trace() else { return };
    let Fixture { mut session, id, text } = open(&path);
    let raw = raw_events(&text);
    let origin = raw.iter().filter(|r| is_event(r)).map(|r| ns(r.ts.unwrap())).min().unwrap();
    let mut want: Vec<(i64, i64, i64)> = raw
        .iter()
        .filter(|r| r.name.as_deref() == Some("[memory]") && r.args["Device Type"] == 1 && r.args["Device Id"] == 0)
        .map(|r| {
            let (allocated, reserved) = (r.args["Total Allocated"].as_i64().unwrap(), r.args["Total Reserved"].as_i64().unwrap());
            ((ns(r.ts.unwrap()) - origin) * 1000, allocated, reserved)
        })
        .collect();
    want.sort_by_key(|p| p.0);
    let tracks = session.trace_counter_tracks(id).unwrap().tracks;
    // One track per device: the CPU's (whose events hold zeros) and the GPU's.
    let ids: Vec<&str> = tracks.iter().map(|t| t.memory_id.as_str()).collect();
    assert_eq!(ids, ["CPU", "GPU 0"]);
    let cpu = raw.iter().filter(|r| r.name.as_deref() == Some("[memory]") && r.args["Device Type"] == 0).count();
    assert_eq!(tracks[0].event_count, cpu as u64);
    let t = &tracks[1];
    assert_eq!((t.memory_id.as_str(), t.pid, t.kind, t.event_count), ("GPU 0", 2031, CounterKind::AllocatedReserved, want.len() as u64));
    assert_eq!(t.max_in_use_bytes, want.iter().map(|p| p.2.max(p.1)).max().unwrap(), "the most reserved");
    // The CPU's allocator reserves nothing: its scale is what it allocated.
    let cpu_most = raw
        .iter()
        .filter(|r| r.name.as_deref() == Some("[memory]") && r.args["Device Type"] == 0)
        .map(|r| r.args["Total Allocated"].as_i64().unwrap())
        .max();
    assert_eq!(Some(tracks[0].max_in_use_bytes), cpu_most);
    // At a ps a pixel, each event is a step of its own.
    let q =
        CounterQuery { memory_id: t.memory_id.clone(), start_ps: t.start_ps, end_ps: t.end_ps, width_px: (t.end_ps - t.start_ps) as u32 };
    let w = session.trace_counters(id, &q).unwrap();
    let steps: Vec<(i64, i64, i64)> = (0..w.len()).map(|k| (w.time_ps[k], w.heap_bytes[k], w.stack_bytes[k])).collect();
    let distinct_times: Vec<(i64, i64, i64)> = {
        // Events at one time merge into one step holding the last one's values.
        let mut v: Vec<(i64, i64, i64)> = Vec::new();
        for p in &want {
            match v.last_mut() {
                Some(last) if last.0 == p.0 => *last = *p,
                _ => v.push(*p),
            }
        }
        v
    };
    assert_eq!(steps, distinct_times);
}

#[test]
fn the_cli_summarises_and_writes_every_event() {
    let Some(path) = trace() else { return };
    let file = path.to_str().expect("utf-8 path");
    let text = String::from_utf8(tidemark::decode::gzip::inflate(&std::fs::read(&path).unwrap()).unwrap()).unwrap();
    let count = raw_events(&text).iter().filter(|r| is_event(r)).count();
    let (code, out, err) = common::tidemark(&["trace-viewer", file]);
    assert_eq!(code, 0, "{err}");
    let first = out.lines().next().unwrap_or_default();
    let shown = count.to_string().as_bytes().rchunks(3).rev().map(|c| std::str::from_utf8(c).unwrap()).collect::<Vec<_>>().join(",");
    assert!(first.starts_with(&format!("{shown} events on ")), "{first}");
    assert!(out.contains("stream 7") && !out.contains("XProf's cap"), "{out}");
    let (code, out, err) = common::tidemark(&["trace-viewer", file, "--json"]);
    assert_eq!(code, 0, "{err}");
    let json: Value = serde_json::from_str(&out).expect("JSON");
    let written = json["traceEvents"].as_array().unwrap().iter().filter(|e| matches!(e["ph"].as_str(), Some("X" | "i"))).count();
    assert_eq!(written, count);
}

/// Valid JSON a profiler might write oddly: ids as floats, negatives or beyond 64 bits, negative and
/// missing durations, metadata of the wrong type, flows that bind nowhere, an empty trace. Each opens
/// in the Trace Viewer, every query answered, none panics.
#[test]
fn odd_traces_open_without_panic() {
    let odd = [
        r#"{"schemaVersion":1,"traceEvents":[]}"#,
        r#"{"schemaVersion":1,"traceEvents":[
            {"ph":"X","name":"a","ts":5,"dur":-3,"pid":1.5,"tid":-2},
            {"ph":"X","name":"b","ts":1e3,"pid":18446744073709551615,"tid":null,"args":{"x":[1,{"y":null}]}},
            {"ph":"i","name":"[memory]","ts":2,"pid":1,"tid":1,"args":{"Total Allocated":5,"Total Reserved":3,"Device Type":7}},
            {"ph":"M","name":"process_name","pid":1,"args":{"name":42}},
            {"ph":"M","name":"thread_sort_index","pid":1,"tid":1,"args":{"sort_index":"first"}},
            {"ph":"s","id":1,"cat":"c","ts":0,"pid":9,"tid":9},
            {"ph":"t","id":1,"cat":"c","ts":1,"pid":1,"tid":1},
            {"ph":"f","id":1,"cat":"c","ts":99999,"pid":1,"tid":1},
            {"ph":"f","id":"x","cat":"c","ts":1,"pid":1,"tid":1}]}"#,
    ];
    for (k, json) in odd.iter().enumerate() {
        let mut s = Session::new();
        let id = s.open(&format!("odd{k}.pt.trace.json"), json.as_bytes().to_vec(), &mut |_, _| {}).expect("opens").id;
        let outline = s.trace_outline(id).unwrap();
        for e in 0..outline.event_count as u32 {
            assert!(s.trace_event_details(id, e).unwrap().is_some());
        }
        s.trace_flow_index(id).unwrap();
        for t in s.trace_counter_tracks(id).unwrap().tracks {
            let q = CounterQuery { memory_id: t.memory_id.clone(), start_ps: outline.start_ps, end_ps: outline.end_ps, width_px: 100 };
            s.trace_counters(id, &q).unwrap();
        }
        let mut json = Vec::new();
        let written = s.trace_export_json(id, None, &mut json).unwrap();
        assert_eq!(written as u64, outline.event_count);
        serde_json::from_slice::<Value>(&json).expect("the export is JSON");
    }
}
