//! The Memory Viewer against XProf 2.24.2's own output (the `*.memory_viewer.*.json` fixtures) for
//! every module of every fixture, read both from HloProto files and from the xplanes that embed them.

mod common;

use common::memory_viewer::compare;
use common::{json_at as read_json, plain_or_gz as maybe_gz, tidemark};
use serde_json::Value;
use std::path::{Path, PathBuf};
use tidemark::analysis::memory_viewer::{analyze, modules, xprof_json::to_xprof_json, MemoryViewerError, Options};
use tidemark::decode::Profile;

fn fixtures() -> PathBuf {
    common::fixture("")
}

fn read_profile(path: &Path) -> Profile {
    common::open_at(path).profile
}

/// Our XProf-schema JSON for the only module of an HloProto file.
fn ours_for_file(path: &Path) -> Value {
    let Profile::Hlo(file) = read_profile(path) else { panic!("{} is not an HloProto", path.display()) };
    let viewer = analyze(&file.proto, Options::default()).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    to_xprof_json(&viewer)
}

fn report(failures: Vec<String>) {
    assert!(failures.is_empty(), "{} module(s) differ from XProf:\n{}", failures.len(), failures.join("\n\n"));
}

fn check(label: &str, ours: Value, oracle: &Path, failures: &mut Vec<String>) {
    let differences = compare(ours, &read_json(oracle));
    if !differences.is_empty() {
        let shown: Vec<&String> = differences.iter().take(20).collect();
        failures.push(format!(
            "{label} ({} differences):\n  {}",
            differences.len(),
            shown.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("\n  ")
        ));
    }
}

/// Files in `dir` whose names end with `suffix`, sorted.
fn files_ending(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("fixture dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.ends_with(suffix)))
        .collect();
    v.sort();
    v
}

#[test]
fn xla_dumps_match_xprof() {
    let dir = fixtures().join("hlo");
    let dumps = files_ending(&dir, ".cpu_after_optimizations.hlo.pb");
    assert_eq!(dumps.len(), 3);
    let mut failures = Vec::new();
    for dump in dumps {
        let name = dump.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let oracle = dir.join(name.replace(".hlo.pb", ".memory_viewer.json"));
        check(name, ours_for_file(&dump), &oracle, &mut failures);
    }
    report(failures);
}

/// The profile directories with XProf's per-module outputs: `<dir>/<module>.hlo_proto.pb[.gz]` beside
/// `<dir>/<dir>.memory_viewer.<module>.json[.gz]` and `<dir>/<dir>.xplane.pb.gz`.
const PROFILE_DIRS: [&str; 3] = ["jax/a1_docs_seed", "jax/a2_mlp_train", "tf/d2_tf_cnn"];

fn oracle_for(dir: &Path, module: &str) -> PathBuf {
    let base = dir.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    maybe_gz(dir.join(format!("{base}.memory_viewer.{module}.json")))
}

#[test]
fn extracted_hlo_protos_match_xprof() {
    let mut failures = Vec::new();
    let mut count = 0;
    for d in PROFILE_DIRS {
        let dir = fixtures().join(d);
        let mut protos = files_ending(&dir, ".hlo_proto.pb");
        protos.extend(files_ending(&dir, ".hlo_proto.pb.gz"));
        for proto in protos {
            let name = proto.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            let module = name.trim_end_matches(".gz").trim_end_matches(".hlo_proto.pb");
            check(&format!("{d}/{name}"), ours_for_file(&proto), &oracle_for(&dir, module), &mut failures);
            count += 1;
        }
    }
    assert_eq!(count, 16, "a1 has 6 modules, a2 9, d2 1");
    report(failures);
}

#[test]
fn modules_embedded_in_xplanes_match_xprof() {
    let mut failures = Vec::new();
    for d in PROFILE_DIRS {
        let dir = fixtures().join(d);
        let base = dir.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let profile = read_profile(&dir.join(format!("{base}.xplane.pb.gz")));
        let inputs = modules::module_inputs(&profile);
        // XProf's Memory Viewer outputs, one per module (the other JSONs beside them are other tools').
        let is_viewer_output = |p: &PathBuf| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.contains(".memory_viewer."));
        let oracles = [".json", ".json.gz"].into_iter().flat_map(|s| files_ending(&dir, s)).filter(is_viewer_output).count();
        assert_eq!(inputs.len(), oracles, "{d}: one XProf output per embedded module");
        for m in &inputs {
            let proto = m.proto.as_ref().unwrap_or_else(|e| panic!("{d}/{}: {e}", m.name));
            let viewer = analyze(proto, Options::default()).unwrap_or_else(|e| panic!("{d}/{}: {e}", m.name));
            check(&format!("{d} xplane: {}", m.name), to_xprof_json(&viewer), &oracle_for(&dir, &m.name), &mut failures);
        }
    }
    report(failures);
}

#[test]
fn before_optimizations_dumps_have_no_buffer_assignment() {
    for dump in files_ending(&fixtures().join("hlo"), ".before_optimizations.hlo.pb") {
        let Profile::Hlo(file) = read_profile(&dump) else { panic!("not an HloProto") };
        let err = analyze(&file.proto, Options::default()).expect_err("no buffer assignment");
        assert!(matches!(err, MemoryViewerError::NoBufferAssignment { .. }), "{err}");
        assert!(err.to_string().contains("after_optimizations"), "{err}");
    }
}

#[test]
fn output_is_deterministic() {
    let path = fixtures().join("jax/a2_mlp_train/jit_batch(12).hlo_proto.pb.gz");
    let a = serde_json::to_string(&ours_for_file(&path)).expect("json");
    let b = serde_json::to_string(&ours_for_file(&path)).expect("json");
    assert_eq!(a, b);
}

#[test]
fn peak_groups_sum_to_the_peak() {
    let Profile::Hlo(file) = read_profile(&fixtures().join("hlo/module_0042.jit_mlp_train_step.cpu_after_optimizations.hlo.pb")) else {
        panic!("not an HloProto")
    };
    let v = analyze(&file.proto, Options::default()).expect("analysis");
    assert_eq!(v.peak_by_group.iter().map(|g| g.bytes).sum::<i64>(), v.peak_heap_bytes);
    assert_eq!(v.figures.padding_overhead_bytes, 0, "CPU layouts have no padding");
    assert_eq!(v.memory_spaces, vec![0]);
    let f = v.figures.fragmentation.expect("has a temporary allocation");
    assert!((0.0..=1.0).contains(&f), "{f}");
}

#[test]
fn cli_json_matches_xprof() {
    let dir = fixtures().join("hlo");
    let dump = dir.join("module_0008.jit_tiny.cpu_after_optimizations.hlo.pb");
    let (code, stdout, stderr) = tidemark(&["memory-viewer", dump.to_str().unwrap_or_default(), "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let ours: Value = serde_json::from_str(&stdout).expect("JSON on stdout");
    let differences = compare(ours, &read_json(&dir.join("module_0008.jit_tiny.cpu_after_optimizations.memory_viewer.json")));
    assert!(differences.is_empty(), "{differences:#?}");
}

#[test]
fn cli_lists_modules_and_summarizes_one() {
    let xplane = fixtures().join("jax/a1_docs_seed/a1_docs_seed.xplane.pb.gz");
    let xplane = xplane.to_str().unwrap_or_default();
    let (code, stdout, stderr) = tidemark(&["memory-viewer", xplane]);
    assert_eq!(code, 0, "{stderr}");
    for name in ["jit__normal(4)", "jit_add(10)", "jit_stage(0)"] {
        assert!(stdout.contains(name), "{name} not listed:\n{stdout}");
    }
    let (code, stdout, stderr) = tidemark(&["memory-viewer", xplane, "--module", "jit_add(10)"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("76.29 MiB") && stdout.contains("broadcast_add_fusion"), "{stdout}");
    let (code, _, stderr) = tidemark(&["memory-viewer", xplane, "--module", "jit_add"]);
    assert_eq!(code, 0, "a unique module name is enough: {stderr}");
}

#[test]
fn cli_rejects_bad_input_clearly() {
    let hlo = fixtures().join("hlo");
    let before = hlo.join("module_0008.jit_tiny.before_optimizations.hlo.pb");
    let (code, _, stderr) = tidemark(&["memory-viewer", before.to_str().unwrap_or_default()]);
    assert_eq!(code, 1);
    assert!(stderr.contains("no buffer assignment"), "{stderr}");

    let xplane = fixtures().join("jax/a1_docs_seed/a1_docs_seed.xplane.pb.gz");
    let (code, _, stderr) = tidemark(&["memory-viewer", xplane.to_str().unwrap_or_default(), "--module", "nope"]);
    assert_eq!(code, 1);
    assert!(stderr.contains("jit_add(10)"), "lists the modules: {stderr}");

    let (code, _, stderr) = tidemark(&["memory-viewer", "/nonexistent/file.hlo.pb"]);
    assert_eq!(code, 1);
    assert!(stderr.contains("/nonexistent/file.hlo.pb"), "{stderr}");

    let (code, _, _) = tidemark(&["memory-viewer"]);
    assert_eq!(code, 2, "usage error");
}

#[test]
fn absent_memory_space_is_named() {
    let Profile::Hlo(file) = read_profile(&fixtures().join("hlo/module_0008.jit_tiny.cpu_after_optimizations.hlo.pb")) else {
        panic!("not an HloProto")
    };
    let err = analyze(&file.proto, Options { memory_space: 1, ..Options::default() }).expect_err("no space 1");
    assert_eq!(err, MemoryViewerError::NoSuchMemorySpace { memory_space: 1, present: vec![0] });
}

/// A one-instruction module whose only temporary allocation holds logical buffers 1 and 2, replaying
/// `events` (kind, buffer, canonical).
fn synthetic(events: &[(i32, i64, i64)]) -> tidemark::proto::hlo::HloProto {
    use tidemark::proto::hlo::*;
    let shape = ShapeProto { element_type: 11, dimensions: vec![1024], ..Default::default() };
    let instruction = HloInstructionProto { name: "x".into(), opcode: "parameter".into(), shape: Some(shape), id: 7, ..Default::default() };
    let buffer = |id| LogicalBufferProto {
        id,
        size: 4096,
        defined_at: Some(logical_buffer_proto::Location { instruction_id: 7, ..Default::default() }),
        ..Default::default()
    };
    let assigned = |id| buffer_allocation_proto::Assigned { logical_buffer_id: id, offset: 0, size: 4096, ..Default::default() };
    HloProto {
        hlo_module: Some(HloModuleProto {
            name: "m".into(),
            computations: vec![HloComputationProto { instructions: vec![instruction], ..Default::default() }],
            ..Default::default()
        }),
        buffer_assignment: Some(BufferAssignmentProto {
            logical_buffers: vec![buffer(1), buffer(2)],
            buffer_allocations: vec![BufferAllocationProto {
                size: 8192,
                assigned: vec![assigned(1), assigned(2), assigned(99)],
                ..Default::default()
            }],
            heap_simulator_traces: vec![HeapSimulatorTrace {
                events: events
                    .iter()
                    .map(|&(kind, buffer_id, share_with_canonical_id)| heap_simulator_trace::Event {
                        kind,
                        buffer_id,
                        share_with_canonical_id,
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            }],
            ..Default::default()
        }),
    }
}

#[test]
fn malformed_traces_are_errors_or_notes_never_panics() {
    let (alloc, free, share) = (0, 1, 2);
    let ok = analyze(&synthetic(&[(alloc, 1, 0), (alloc, 2, 0), (free, 1, 0), (free, 2, 0)]), Options::default()).expect("valid");
    assert_eq!(ok.peak_heap_bytes, 8192);
    assert!(ok.notes.iter().any(|n| n.contains("99")), "the unknown buffer is noted: {:?}", ok.notes);

    let unknown = analyze(&synthetic(&[(alloc, 1, 0), (free, 1, 0), (alloc, 42, 0)]), Options::default()).expect("skips unknown ids");
    assert!(unknown.notes.iter().any(|n| n.contains("unknown buffers")), "{:?}", unknown.notes);

    for (events, why) in [
        (&[(alloc, 1, 0), (free, 1, 0), (free, 1, 0)][..], "freed twice"),
        (&[(share, 1, 2), (share, 2, 1), (free, 1, 0)][..], "sharing cycle"),
        (&[(7, 1, 0)][..], "unknown event kind"),
    ] {
        let err = analyze(&synthetic(events), Options::default()).expect_err(why);
        assert!(matches!(err, MemoryViewerError::Trace(_)), "{why}: {err}");
    }
}
