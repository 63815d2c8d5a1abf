//! The Trace Viewer against XProf 2.24's trace_viewer JSON of the real GPU/TPU profiles (read in place).

mod common;

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use tidemark::analysis::trace_viewer::export;
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

/// Arguments XProf's preprocessing adds that we do not (see the test's doc).
const ADDED_BY_PREPROCESSING: [&str; 3] = ["flow", "is_eager", "group_id"];

/// (pid, thread name) → the multiset of events (as canonical JSON text without pid/tid).
type Events = BTreeMap<(u64, String), BTreeMap<String, usize>>;

fn split(trace: &Value) -> (Vec<Value>, Events) {
    let mut meta = Vec::new();
    let mut events: Events = BTreeMap::new();
    let all = trace["traceEvents"].as_array().expect("traceEvents");
    let thread_names: BTreeMap<(u64, u64), String> = all
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "thread_name")
        .map(|e| ((e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap()), e["args"]["name"].as_str().unwrap().to_string()))
        .collect();
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
            args.retain(|k, _| !ADDED_BY_PREPROCESSING.contains(&k.as_str()));
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

/// Lines XProf derives from the device events in its preprocessing (`derived_timeline.cc`), which we do
/// not make: on GPUs with several streams each group is suffixed ` - from #<stream>`.
const DERIVED_LINES: [&str; 8] = [
    "Framework Name Scope",
    "Framework Ops",
    "XLA Modules",
    "XLA Ops",
    "Source code",
    "Host Offload Ops row ",
    "TensorFlow Name Scope",
    "TensorFlow Ops",
];

/// Our trace_viewer JSON against XProf's, per fixture:
/// - every thread we show has exactly XProf's events (a multiset of name, `ph`, `ts`, `dur` and
///   arguments), threads matched by process and thread name; XProf writes them in another order;
/// - the only threads XProf shows that we lack are the lines it derives ([`DERIVED_LINES`]);
/// - process metadata is equal, and thread metadata (tid, name, sort index) too, except on GPU planes
///   where XProf derives per-stream lines and renumbers the stream lines' tids with them;
/// - left out of the comparison: the arguments XProf's preprocessing adds ([`ADDED_BY_PREPROCESSING`]:
///   `flow` from its event connections, whose ids hash with a per-process salt, `is_eager` copied from
///   the host launch to the kernel, `group_id` from step grouping of device events).
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
            our_threads.is_subset(&xprof_threads),
            "{name}: threads XProf lacks: {:?}",
            our_threads.difference(&xprof_threads).collect::<Vec<_>>()
        );
        let derived: Vec<_> = xprof_threads.difference(&our_threads).collect();
        for (_, t) in &derived {
            assert!(
                DERIVED_LINES.iter().any(|d| t.starts_with(d)),
                "{name}: XProf shows thread {t:?}, which we lack and it does not derive"
            );
        }
        println!("{name}: {} threads equal; {} threads XProf derives are not made", our_threads.len(), derived.len());

        for key in &our_threads {
            let (ours, theirs) = (our_events.get(key).cloned().unwrap_or_default(), xprof_events.get(key).cloned().unwrap_or_default());
            let first = |a: &BTreeMap<String, usize>, b: &BTreeMap<String, usize>| {
                a.iter().find(|(k, n)| b.get(*k) != Some(n)).map(|(k, n)| format!("{n}× {k}"))
            };
            assert!(ours == theirs, "{name} {key:?}: only ours {:?}; only XProf's {:?}", first(&ours, &theirs), first(&theirs, &ours));
        }

        let renumbered: BTreeSet<u64> = xprof_threads.iter().filter(|(_, t)| t.contains(" - from #")).map(|(pid, _)| *pid).collect();
        let comparable = |meta: &[Value]| -> BTreeSet<String> {
            meta.iter()
                .filter(|m| m.get("tid").is_none() || !renumbered.contains(&m["pid"].as_u64().unwrap()))
                .filter(|m| m.get("tid").is_none() || our_threads.iter().any(|(pid, _)| *pid == m["pid"].as_u64().unwrap()))
                .map(|m| m.to_string())
                .collect()
        };
        let (ours_m, xprof_m) = (comparable(&our_meta), comparable(&xprof_meta));
        let xprof_m: BTreeSet<String> = xprof_m
            .into_iter()
            .filter(|m| {
                // Thread metadata of derived lines, which we do not make.
                let v: Value = serde_json::from_str(m).unwrap();
                let tid = v.get("tid").and_then(|t| t.as_u64());
                tid.is_none_or(|tid| our_meta.iter().any(|o| o["pid"] == v["pid"] && o.get("tid").and_then(|t| t.as_u64()) == Some(tid)))
            })
            .collect();
        assert!(
            ours_m == xprof_m,
            "{name}: metadata only ours {:?}, only XProf's {:?}",
            ours_m.difference(&xprof_m).collect::<Vec<_>>(),
            xprof_m.difference(&ours_m).collect::<Vec<_>>()
        );
    }
}
