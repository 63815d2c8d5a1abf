//! The first screen after a drop (the tool a file opens on) and the reason each empty tool gives, on
//! the real fixtures: the facts they rest on (steps, allocator events, HLO modules) checked against
//! XProf's own output beside each trace, the device planes against the raw trace.

mod common;

use std::path::{Path, PathBuf};
use tidemark::engine::first_screen::{empty_reason, landing, EmptyReason};
use tidemark::engine::tool::{Suite, Tool};
use tidemark::engine::{FileDetails, Session};

/// The overview of the file at `path`, opened as the page opens it.
fn overview_at(path: &Path) -> FileDetails {
    let mut session = Session::new();
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let name = path.file_name().expect("a file").to_string_lossy().into_owned();
    session.open(&name, bytes, &mut |_, _| {}).unwrap_or_else(|e| panic!("{e}")).overview.clone()
}

/// What XProf's outputs beside trace `<stem>.xplane.pb[.gz]` say of it: its steps (the Input Pipeline
/// Analyzer's step table), whether its Memory Profile has a memory ID, and its HLO modules (one
/// `memory_viewer` output each; `NO_MODULE` where there is none).
struct Oracle {
    steps: usize,
    has_memory_ids: bool,
    modules: Vec<String>,
}

fn oracle(trace: &Path) -> Oracle {
    let dir = trace.parent().expect("a folder");
    let file = trace.file_name().expect("a file").to_string_lossy();
    let stem = file.trim_end_matches(".gz").trim_end_matches(".xplane.pb").to_string();
    let json = |tool: &str| common::json_at(&common::plain_or_gz(dir.join(format!("{stem}.{tool}.json"))));
    let input = json("input_pipeline_analyzer");
    let memory = json("memory_profile");
    let prefix = format!("{stem}.memory_viewer.");
    let mut modules: Vec<String> = std::fs::read_dir(dir)
        .expect("the fixture's folder")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter_map(|n| Some(n.strip_prefix(&prefix)?.trim_end_matches(".gz").strip_suffix(".json")?.to_string()))
        // XProf's output for a trace without modules.
        .filter(|m| m != "NO_MODULE")
        .collect();
    modules.sort();
    Oracle {
        steps: input[1]["rows"].as_array().expect("step rows").len(),
        has_memory_ids: memory["memoryIds"].as_array().is_some_and(|ids| !ids.is_empty()),
        modules,
    }
}

/// Every trace with XProf's outputs beside it: the CPU ones here, the device ones where present.
fn traces() -> Vec<PathBuf> {
    let mut all: Vec<PathBuf> = common::CPU_TRACES.iter().map(|s| common::fixture(&format!("{s}.xplane.pb.gz"))).collect();
    for rel in [
        "nvidia_h200_jax/n1_mlp_adam/n1_mlp_adam.xplane.pb.gz",
        "nvidia_h200_jax/n2_cnn_bf16/n2_cnn_bf16.xplane.pb.gz",
        "nvidia_h200_jax/n6_oom_seed/n6_oom_seed.xplane.pb.gz",
        "jax_tpu_v6e_inference/tpu_v6e_inference.xplane.pb",
        "jax_mi300x_conv/mi300x_conv.xplane.pb",
        "jax_mi300x_attention/mi300x_attention.xplane.pb",
        "tf_v100_multi_worker/v100_worker.xplane.pb",
    ] {
        all.extend(common::device_fixture(rel));
    }
    all
}

fn device_events(o: &FileDetails) -> usize {
    o.planes.iter().filter(|p| p.name.starts_with("/device:GPU:") || p.name.starts_with("/device:TPU:")).map(|p| p.event_count).sum()
}

/// The facts the first screen reads equal XProf's, and each trace opens where those facts say: on
/// its Overview with steps, else its Memory Profile with allocator events, else its Op Profile with
/// device events, else its Trace Viewer.
#[test]
fn traces_open_on_the_tool_their_facts_name() {
    for path in traces() {
        let name = path.display().to_string();
        let o = overview_at(&path);
        let x = oracle(&path);
        assert_eq!(o.steps, Some(x.steps), "{name}: steps");
        assert_eq!(o.allocators.iter().any(|a| a.allocations > 0), x.has_memory_ids, "{name}: allocator events");
        let mut modules: Vec<String> = o.hlo_modules.iter().map(|m| m.name.clone()).collect();
        modules.sort();
        assert_eq!(modules, x.modules, "{name}: HLO modules");
        let expected = if x.steps > 0 {
            Tool::OverviewPage
        } else if x.has_memory_ids {
            Tool::MemoryProfile
        } else if device_events(&o) > 0 {
            Tool::OpProfile
        } else {
            Tool::TraceViewer
        };
        assert_eq!(landing(&o, false), expected, "{name}");
        // Opened with other files: the run's Overview.
        assert_eq!(landing(&o, true), Tool::OverviewPage, "{name}");
        // Only the OOM seed left a compile unfinished.
        assert_eq!(o.unfinished_compiles.is_empty(), !name.contains("n6_oom_seed"), "{name}: {:?}", o.unfinished_compiles);
    }
}

#[test]
fn dumps_and_device_memory_profiles_open_on_their_memory_tool() {
    let dump = overview_at(&common::fixture("hlo/module_0042.jit_mlp_train_step.cpu_after_optimizations.hlo.pb"));
    assert_eq!(landing(&dump, false), Tool::MemoryViewer);
    assert_eq!(landing(&dump, true), Tool::MemoryViewer);
    let prof = overview_at(&common::fixture("pprof/docs_leak/memory3.prof"));
    assert_eq!(landing(&prof, false), Tool::DeviceMemory);
    assert_eq!(landing(&prof, true), Tool::DeviceMemory);
    // Neither is a trace: their tools' own errors say what the trace tools need.
    for tool in Tool::ALL {
        assert_eq!(empty_reason(tool, &dump), None);
        assert_eq!(empty_reason(tool, &prof), None);
    }
}

/// JAX on CPU (a1): XProf's Memory Profile has no memory ID, its step table no row, and the trace no
/// device plane — each empty tool says which.
#[test]
fn a_jax_cpu_trace_says_why_each_tool_is_empty() {
    let path = common::fixture("jax/a1_docs_seed/a1_docs_seed.xplane.pb.gz");
    let (o, x) = (overview_at(&path), oracle(&path));
    assert!(!x.has_memory_ids && x.steps == 0 && !x.modules.is_empty());
    assert!(o.planes.iter().all(|p| !p.name.starts_with("/device:")));
    for tool in [Tool::MemoryProfile, Tool::MemoryAcrossHosts] {
        assert_eq!(empty_reason(tool, &o), Some(EmptyReason::NoAllocatorEvents { on_device: false }), "{tool:?}");
    }
    for tool in [Tool::OverviewPage, Tool::InputPipeline] {
        assert_eq!(empty_reason(tool, &o), Some(EmptyReason::NoSteps), "{tool:?}");
    }
    for tool in [Tool::OpProfile, Tool::HloStats, Tool::KernelStats, Tool::RooflineModel] {
        assert_eq!(empty_reason(tool, &o), Some(EmptyReason::NoDevicePlanes), "{tool:?}");
    }
    // It has HLO modules and events to show.
    assert_eq!(empty_reason(Tool::MemoryViewer, &o), None);
    assert_eq!(empty_reason(Tool::TraceViewer, &o), None);
}

/// TensorFlow without XLA (d1, no allocator stats): no HLO module (XProf writes `NO_MODULE`), steps.
#[test]
fn a_tf_trace_without_xla_says_it_has_no_hlo_modules() {
    let path = common::fixture("tf/d1_tf_keras_none/d1_tf_keras_none.xplane.pb.gz");
    let (o, x) = (overview_at(&path), oracle(&path));
    assert!(x.modules.is_empty() && x.steps > 0);
    assert_eq!(empty_reason(Tool::MemoryViewer, &o), Some(EmptyReason::NoHloProtos));
    assert_eq!(empty_reason(Tool::OverviewPage, &o), None);
    assert_eq!(landing(&o, false), Tool::OverviewPage);
}

/// The OOM seed (n6): `a @ a` too large for the H200 fails while the compiler autotunes, so the
/// trace shows `jit_oom` compiling but holds no module of it (XProf's Memory Viewer outputs beside it
/// name the others), no allocator event and no device event: XProf's tools are all empty. Every
/// trace tool says why, and the file opens on the Trace Viewer, the one with something to show.
#[test]
fn the_oom_seed_says_its_module_never_finished_compiling() {
    let Some(path) = common::device_fixture("nvidia_h200_jax/n6_oom_seed/n6_oom_seed.xplane.pb.gz") else { return };
    let (o, x) = (overview_at(&path), oracle(&path));
    assert!(!x.modules.is_empty() && !x.modules.iter().any(|m| m.starts_with("jit_oom(")));
    assert!(!x.has_memory_ids && x.steps == 0 && device_events(&o) == 0);
    assert_eq!(o.unfinished_compiles, ["jit_oom"]);
    assert_eq!(landing(&o, false), Tool::TraceViewer);
    let oom = EmptyReason::UnfinishedCompile { modules: vec!["jit_oom".into()] };
    // The tools of other formats (device memory profiles, PyTorch traces, CUDA memory snapshots) say
    // nothing of an XProf trace.
    for tool in Tool::ALL.into_iter().filter(|t| t.in_suite(Suite::XProf) && *t != Tool::DeviceMemory) {
        assert_eq!(empty_reason(tool, &o).as_ref(), Some(&oom), "{tool:?}");
    }
    assert_eq!(empty_reason(Tool::TorchOverview, &o), None);
    assert!(oom.sentence().starts_with("jit_oom began compiling in this trace"));
    // Without the unfinished compile, the same trace's GPU run without allocator events says so.
    let plain = FileDetails { unfinished_compiles: Vec::new(), ..o };
    assert_eq!(empty_reason(Tool::MemoryProfile, &plain), Some(EmptyReason::NoAllocatorEvents { on_device: true }));
    assert_eq!(empty_reason(Tool::OpProfile, &plain), Some(EmptyReason::NoDeviceEvents));
}

/// The CLI prints the page's sentence: first in each tool's text output, and in `inspect` with the
/// tool a file opens on.
#[test]
fn the_cli_gives_the_same_sentences() {
    let a1 = common::fixture("jax/a1_docs_seed/a1_docs_seed.xplane.pb.gz");
    let a1 = a1.to_str().expect("utf-8 path");
    let o = overview_at(Path::new(a1));
    for (command, tool) in [
        ("memory-profile", Tool::MemoryProfile),
        ("overview-page", Tool::OverviewPage),
        ("input-pipeline-analyzer", Tool::InputPipeline),
        ("op-profile", Tool::OpProfile),
        ("kernel-stats", Tool::KernelStats),
    ] {
        let (_, out, _) = common::tidemark(&[command, a1]);
        let sentence = empty_reason(tool, &o).expect("a reason").sentence();
        assert_eq!(out.lines().next(), Some(sentence.as_str()), "{command}");
        // XProf's own JSON stays as it was.
        let (_, json, _) = common::tidemark(&[command, a1, "--json"]);
        assert!(!json.contains(&sentence), "{command} --json");
    }
    let (code, out, _) = common::tidemark(&["inspect", a1]);
    assert_eq!(code, 0);
    assert!(out.contains("  opens on: Trace Viewer\n"), "{out}");
    assert!(out.contains(&EmptyReason::NoSteps.sentence()), "{out}");
    // The tool's own name for the same command.
    assert_eq!(common::tidemark(&["file-details", a1]).1, out);
    let none = common::fixture("tf/d1_tf_keras_none/d1_tf_keras_none.xplane.pb.gz");
    let (_, out, err) = common::tidemark(&["memory-viewer", none.to_str().expect("utf-8 path")]);
    assert_eq!(out.lines().next(), Some(EmptyReason::NoHloProtos.sentence().as_str()), "{out}{err}");
}
