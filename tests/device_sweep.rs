//! Every tool's `tidemark <tool> --json` against XProf 2.24's output on every real GPU/TPU fixture
//! (`../shared/fixtures/device/`: NVIDIA H200 JAX n1–n4 and the OOM seed, the TensorFlow V100 worker,
//! the AMD MI300X/MI355X JAX traces, the TPU v6e; the in-repo copy of n1 first), as issue 27's "done"
//! asks: parsed JSON, numbers within 1e-9 relative, XProf's hash-ordered ties compared as sets (Op
//! Profile children of equal time, the Memory Profile's merged rows and allocator map, the Memory
//! Viewer's equal-size buffers, the trace viewer's events and threads). A fixture absent is skipped
//! with a note (a failure under `CI=true`, [`common::device_fixture`]).
//!
//! The trace viewer is compared where XProf's output is kept (n1, n2, and the recorded-by-others
//! ones), as `tests/trace_viewer.rs` compares it: its `flow` ids, hashed with a per-process salt, are
//! left out. The Memory Viewer is compared for every HLO module of each trace (and the two GPU HLO
//! dumps), read in process (one decode per file).

mod common;

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use tidemark::analysis::memory_viewer::{analyze, modules, xprof_json::to_xprof_json, Options};

/// The device traces, as `<folder>/<stem>` under the device fixtures (add `.xplane.pb[.gz]`).
const TRACES: [&str; 10] = [
    "nvidia_h200_jax/n1_mlp_adam/n1_mlp_adam",
    "nvidia_h200_jax/n2_cnn_bf16/n2_cnn_bf16",
    "nvidia_h200_jax/n3_lm_scan/n3_lm_scan",
    "nvidia_h200_jax/n4_decode/n4_decode",
    "nvidia_h200_jax/n6_oom_seed/n6_oom_seed",
    "tf_v100_multi_worker/v100_worker",
    "jax_mi300x_attention/mi300x_attention",
    "jax_mi300x_conv/mi300x_conv",
    "jax_mi355x_te_attention/mi355x_te_attention",
    "jax_tpu_v6e_inference/tpu_v6e_inference",
];

/// The tools whose `--json` is XProf's JSON of the whole trace (the trace viewer's is compared apart).
const TOOLS: [&str; 8] = [
    "framework_op_stats",
    "hlo_stats",
    "kernel_stats",
    "op_profile",
    "roofline_model",
    "overview_page",
    "input_pipeline_analyzer",
    "memory_profile",
];

/// The GPU HloProto dumps beside the NVIDIA traces, each with XProf's Memory Viewer output.
const HLO_DUMPS: [&str; 2] = [
    "nvidia_h200_jax/xla_dump_gpu/module_5312.jit_train_step.sm_9.0a_gpu_after_optimizations",
    "nvidia_h200_jax/xla_dump_gpu/module_437688.jit_train_step.sm_9.0a_gpu_after_optimizations",
];

/// The trace `<stem>.xplane.pb` or `.xplane.pb.gz` of a fixture, where present.
fn trace(name: &str) -> Option<PathBuf> {
    let gz = name.starts_with("nvidia_h200_jax/");
    common::device_fixture(&format!("{name}.xplane.pb{}", if gz { ".gz" } else { "" }))
}

/// XProf's output of `tool` for the fixture `name` (`<name>.<tool>.json[.gz]`: the in-repo copy's,
/// else `../shared`'s); `None` where XProf's output is not kept.
fn oracle_path(name: &str, tool: &str) -> Option<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    [root.join("tests/fixtures/device"), root.join("../shared/fixtures/device")]
        .into_iter()
        .map(|dir| common::plain_or_gz(dir.join(format!("{name}.{tool}.json"))))
        .find(|p| p.exists())
}

fn oracle(name: &str, tool: &str) -> Option<Value> {
    oracle_path(name, tool).map(|p| common::json_at(&p))
}

/// `tidemark <tool> <trace> --json`, parsed.
fn cli_json(tool: &str, trace: &Path) -> Value {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tidemark"))
        .arg(tool.replace('_', "-"))
        .arg(trace)
        .arg("--json")
        .output()
        .expect("runs tidemark");
    assert!(out.status.success(), "{tool} {}: {}", trace.display(), String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{tool} {}: {e}", trace.display()))
}

/// Where `ours` differs from XProf's `theirs` for `tool` (`None`: equal).
fn tool_diff(tool: &str, name: &str, mut ours: Value, mut theirs: Value) -> Option<String> {
    match tool {
        "op_profile" => {
            common::sort_equal_time_children(&mut ours);
            common::sort_equal_time_children(&mut theirs);
        }
        "memory_profile" => {
            // Panics with the first difference (merged rows compared by key and count).
            common::memory_profile::compare(name, &theirs, &ours);
            return None;
        }
        _ => {}
    }
    common::json_diff(&ours, &theirs)
}

/// Each tool but the trace viewer and the Memory Viewer, on every device trace present.
#[test]
fn every_tool_equals_xprof_on_every_device_trace() {
    // n3 and n4 (the two largest, minutes each through the unoptimised CLI) are compared tool by tool
    // in-process by nvidia_op_costs, nvidia_framework_ops, kernel_stats_nvidia, nvidia_steps and
    // memory_profile_device; here the CLI's output of every other trace.
    let traces: Vec<(&str, PathBuf)> =
        TRACES.iter().filter(|n| !n.contains("/n3_") && !n.contains("/n4_")).filter_map(|n| Some((*n, trace(n)?))).collect();
    let jobs: Vec<(&str, &Path, &str)> = traces.iter().flat_map(|(n, p)| TOOLS.iter().map(move |t| (*n, p.as_path(), *t))).collect();
    let failures = run_parallel(&jobs, |&(name, path, tool)| {
        let theirs = oracle(name, tool).unwrap_or_else(|| panic!("{name}: XProf's {tool} output is missing"));
        tool_diff(tool, name, cli_json(tool, path), theirs).map(|d| format!("{tool} of {name}: {d}"))
    });
    assert!(failures.is_empty(), "differ from XProf:\n{}", failures.join("\n"));
}

/// Runs `check` over `jobs` on every core, returning the failures (panics included, as messages).
fn run_parallel<J: Sync>(jobs: &[J], check: impl Fn(&J) -> Option<String> + Sync) -> Vec<String> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).min(jobs.len().max(1));
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut failures = Vec::new();
                    while let Some(job) = jobs.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed)) {
                        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(job))) {
                            Ok(Some(f)) => failures.push(f),
                            Ok(None) => {}
                            Err(p) => failures.push(
                                p.downcast_ref::<String>()
                                    .cloned()
                                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                                    .unwrap_or_default(),
                            ),
                        }
                    }
                    failures
                })
            })
            .collect();
        workers.into_iter().flat_map(|w| w.join().expect("worker")).collect()
    })
}

/// The Memory Viewer of every HLO module of every device trace present, and of the GPU HLO dumps.
#[test]
fn memory_viewer_of_every_module_equals_xprof() {
    let mut failures = Vec::new();
    let mut compared = 0;
    let mut inputs: Vec<(&str, PathBuf, bool)> = TRACES.iter().filter_map(|n| Some((*n, trace(n)?, false))).collect();
    inputs.extend(HLO_DUMPS.iter().filter_map(|n| Some((*n, common::device_fixture(&format!("{n}.hlo.pb"))?, true))));
    for (name, path, dump) in inputs {
        let file = common::open_at(&path);
        for m in modules::module_inputs(&file.profile) {
            let proto = m.proto.as_ref().unwrap_or_else(|e| panic!("{name} {}: {e}", m.name));
            let viewer = analyze(proto, Options::default()).unwrap_or_else(|e| panic!("{name} {}: {e}", m.name));
            // Beside a trace: `<stem>.memory_viewer.<module>.json`; beside a dump: `<dump>.memory_viewer.json`.
            let tool = if dump { "memory_viewer".to_string() } else { format!("memory_viewer.{}", m.name) };
            let oracle = oracle(name, &tool).unwrap_or_else(|| panic!("{name}: no XProf output for {}", m.name));
            let differences = common::memory_viewer::compare(to_xprof_json(&viewer), &oracle);
            if !differences.is_empty() {
                failures.push(format!("{name} {}: {}", m.name, differences.join("\n  ")));
            }
            compared += 1;
        }
    }
    println!("{compared} modules compared");
    assert!(failures.is_empty(), "modules differ from XProf:\n{}", failures.join("\n"));
}

/// The trace viewer's JSON where XProf's is kept: per thread (process and thread name) the same
/// multiset of events (name, `ph`, `ts`, `dur`, arguments but `flow`), the same threads and metadata.
#[test]
fn trace_viewer_equals_xprof_where_its_output_is_kept() {
    let traces: Vec<(&str, PathBuf)> =
        TRACES.iter().filter_map(|n| Some((*n, trace(n)?))).filter(|(n, _)| oracle_path(n, "trace_viewer").is_some()).collect();
    let failures = run_parallel(&traces, |(name, path)| {
        let theirs = oracle(name, "trace_viewer").expect("kept");
        trace_diff(&cli_json("trace_viewer", path), &theirs).map(|d| format!("trace_viewer of {name}: {d}"))
    });
    assert!(failures.is_empty(), "differ from XProf:\n{}", failures.join("\n"));
}

/// (pid, thread name) → the multiset of its events, each as canonical JSON without pid and tid.
type Events = BTreeMap<(u64, String), BTreeMap<String, usize>>;

/// A trace viewer JSON's metadata events (as text) and its events by thread.
fn split(trace: &Value) -> (BTreeSet<String>, Events) {
    let all = trace["traceEvents"].as_array().expect("traceEvents");
    let thread_names: BTreeMap<(u64, u64), String> = all
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "thread_name")
        .map(|e| ((e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap()), e["args"]["name"].as_str().unwrap().to_string()))
        .collect();
    let mut meta = BTreeSet::new();
    let mut events: Events = BTreeMap::new();
    for e in all {
        let Some(obj) = e.as_object().filter(|o| !o.is_empty()) else { continue };
        if obj["ph"] == "M" {
            meta.insert(e.to_string());
            continue;
        }
        let (pid, tid) = (obj["pid"].as_u64().unwrap(), obj["tid"].as_u64().unwrap());
        let mut rest = obj.clone();
        rest.remove("pid");
        rest.remove("tid");
        if let Some(Value::Object(args)) = rest.get_mut("args") {
            args.retain(|k, _| k != "flow");
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
        let thread = (pid, thread_names.get(&(pid, tid)).cloned().unwrap_or_default());
        *events.entry(thread).or_default().entry(Value::Object(rest).to_string()).or_default() += 1;
    }
    (meta, events)
}

/// The first difference between our trace viewer JSON and XProf's, per thread.
fn trace_diff(ours: &Value, theirs: &Value) -> Option<String> {
    let ((our_meta, our_events), (their_meta, their_events)) = (split(ours), split(theirs));
    let first = |a: &BTreeMap<String, usize>, b: &BTreeMap<String, usize>| {
        a.iter().find(|(k, n)| b.get(*k) != Some(n)).map(|(k, n)| format!("{n}× {k}"))
    };
    for key in our_events.keys().chain(their_events.keys()).collect::<BTreeSet<_>>() {
        let (a, b) = (our_events.get(key).cloned().unwrap_or_default(), their_events.get(key).cloned().unwrap_or_default());
        if a != b {
            return Some(format!("{key:?}: only ours {:?}; only XProf's {:?}", first(&a, &b), first(&b, &a)));
        }
    }
    (our_meta != their_meta).then(|| {
        format!(
            "metadata only ours {:?}, only XProf's {:?}",
            our_meta.difference(&their_meta).collect::<Vec<_>>(),
            their_meta.difference(&our_meta).collect::<Vec<_>>()
        )
    })
}
