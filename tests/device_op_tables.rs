//! The device op tables (Kernel Stats, HLO Op Stats, Op Profile, the roofline, and on the AMD traces
//! framework op stats and the overview) equal XProf 2.24's output: on the real GPU/TPU traces
//! beside the checkout (read in place, skipped with a note when absent) and, in their empty form, on
//! the CPU fixtures.

mod common;

use serde_json::Value;
use tidemark::analysis::framework_op_stats::xprof_json::to_xprof_json as framework_op_stats_json;
use tidemark::analysis::hlo_stats::xprof_json::to_xprof_json as hlo_stats_json;
use tidemark::analysis::kernel_stats::xprof_json::to_xprof_json as kernel_stats_json;
use tidemark::analysis::op_profile::xprof_json::to_xprof_json as op_profile_json;
use tidemark::analysis::overview_page::xprof_json::overview_page_json;
use tidemark::analysis::roofline_model::xprof_json::to_xprof_json as roofline_json;
use tidemark::engine::Scope;
use tidemark::engine::Session;

/// Every CPU fixture (trace, oracle prefix).
const CPU_FIXTURES: &[&str] = &[
    "jax/a1_docs_seed/a1_docs_seed",
    "jax/a2_mlp_train/a2_mlp_train",
    "tf/d1_tf_keras_bfc/d1_tf_keras_bfc",
    "tf/d1_tf_keras_none/d1_tf_keras_none",
    "tf/d1_tf_keras_stats/d1_tf_keras_stats",
    "tf/d2_tf_cnn/d2_tf_cnn",
];

/// The AMD GPU fixtures (folder/name prefix).
const AMD_FIXTURES: &[&str] =
    &["jax_mi300x_conv/mi300x_conv", "jax_mi300x_attention/mi300x_attention", "jax_mi355x_te_attention/mi355x_te_attention"];

/// Every device fixture (folder/name prefix).
const DEVICE_FIXTURES: &[&str] = &[
    "jax_tpu_v6e_inference/tpu_v6e_inference",
    "tf_v100_multi_worker/v100_worker",
    "jax_mi300x_conv/mi300x_conv",
    "jax_mi300x_attention/mi300x_attention",
    "jax_mi355x_te_attention/mi355x_te_attention",
];

fn open_session(name: &str, bytes: Vec<u8>) -> (Session, u32) {
    let mut session = Session::new();
    let id = session.open(name, bytes, &mut |_, _| {}).unwrap_or_else(|e| panic!("{e}")).id;
    (session, id)
}

fn assert_same(tool: &str, fixture: &str, actual: &Value, expected: &Value) {
    if let Some(d) = common::json_diff(actual, expected) {
        panic!("{tool} of {fixture} differs from XProf: {d}");
    }
}

#[test]
fn kernel_stats_is_empty_on_cpu_traces() {
    for f in CPU_FIXTURES {
        let (mut session, id) = open_session(f, common::bytes(&format!("{f}.xplane.pb.gz")));
        let stats = session.kernel_stats(&Scope::file(id)).unwrap();
        assert!(stats.reports.is_empty(), "{f}");
        assert_same("kernel_stats", f, &kernel_stats_json(&stats), &common::json(&format!("{f}.kernel_stats.json")));
    }
}

#[test]
fn kernel_stats_equals_xprof_on_device_traces() {
    for f in DEVICE_FIXTURES {
        let Some(trace) = common::device_fixture(&format!("{f}.xplane.pb")) else { continue };
        let oracle = common::json_at(&trace.with_file_name(format!("{}.kernel_stats.json", f.rsplit('/').next().unwrap())));
        let (mut session, id) = open_session(f, std::fs::read(&trace).unwrap());
        let stats = session.kernel_stats(&Scope::file(id)).unwrap();
        let rows = oracle["rows"].as_array().map_or(0, Vec::len);
        assert_eq!(stats.reports.len(), rows, "{f}: rows");
        assert_same("kernel_stats", f, &kernel_stats_json(&stats), &oracle);
        // Kept: asked again, the same analysis comes back.
        assert!(std::sync::Arc::ptr_eq(&stats, &session.kernel_stats(&Scope::file(id)).unwrap()));
    }
}

#[test]
fn hlo_stats_is_empty_on_cpu_traces() {
    for f in CPU_FIXTURES {
        let (mut session, id) = open_session(f, common::bytes(&format!("{f}.xplane.pb.gz")));
        let stats = session.hlo_stats(&Scope::file(id)).unwrap();
        assert!(stats.rows.is_empty(), "{f}");
        assert_same("hlo_stats", f, &hlo_stats_json(&stats), &common::json(&format!("{f}.hlo_stats.json")));
    }
}

/// The TPU trace: every row and cell as XProf's, in XProf's order (its rows have no ties in self time
/// and name, so no row order is XProf's hash order here).
#[test]
fn hlo_stats_equals_xprof_on_the_tpu_trace() {
    let f = "jax_tpu_v6e_inference/tpu_v6e_inference";
    let Some(trace) = common::device_fixture(&format!("{f}.xplane.pb")) else { return };
    let oracle = common::json_at(&trace.with_file_name("tpu_v6e_inference.hlo_stats.json"));
    let (mut session, id) = open_session(f, std::fs::read(&trace).unwrap());
    let stats = session.hlo_stats(&Scope::file(id)).unwrap();
    assert_same("hlo_stats", f, &hlo_stats_json(&stats), &oracle);
}

#[test]
fn roofline_model_is_empty_on_cpu_traces() {
    for f in CPU_FIXTURES {
        let (mut session, id) = open_session(f, common::bytes(&format!("{f}.xplane.pb.gz")));
        let model = session.roofline_model(&Scope::file(id)).unwrap();
        assert!(model.records.is_empty(), "{f}");
        assert_same("roofline_model", f, &roofline_json(&model), &common::json(&format!("{f}.roofline_model.json")));
    }
}

/// The TPU trace: both record sets (infeed/outfeed included, excluded), the peaks and the diagnostics,
/// in XProf's order (no ties in self time and name).
#[test]
fn roofline_model_equals_xprof_on_the_tpu_trace() {
    let f = "jax_tpu_v6e_inference/tpu_v6e_inference";
    let Some(trace) = common::device_fixture(&format!("{f}.xplane.pb")) else { return };
    let oracle = common::json_at(&trace.with_file_name("tpu_v6e_inference.roofline_model.json"));
    let (mut session, id) = open_session(f, std::fs::read(&trace).unwrap());
    let model = session.roofline_model(&Scope::file(id)).unwrap();
    assert_same("roofline_model", f, &roofline_json(&model), &oracle);
}

/// The V100 TensorFlow trace: its kernels carry no framework or XLA op, so the device op db holds only
/// idle time and HLO Op Stats is empty, as XProf's.
#[test]
fn hlo_stats_on_the_v100_trace() {
    let f = "tf_v100_multi_worker/v100_worker";
    let Some(trace) = common::device_fixture(&format!("{f}.xplane.pb")) else { return };
    let oracle = common::json_at(&trace.with_file_name("v100_worker.hlo_stats.json"));
    let (mut session, id) = open_session(f, std::fs::read(&trace).unwrap());
    let ops = session.device_ops(&Scope::file(id), "op tables").unwrap();
    assert_eq!(ops.db.metrics.len(), 1, "only the idle row");
    assert!(ops.db.metrics[0].is_idle());
    // XProf's Op Profile shows that idle row's time (its tree is only the idle node here).
    let op_profile = common::json_at(&trace.with_file_name("v100_worker.op_profile.json"));
    assert_eq!(Some(ops.db.total_time_ps), op_profile["byProgram"]["metrics"]["rawTime"].as_u64());
    assert_same("hlo_stats", f, &hlo_stats_json(&session.hlo_stats(&Scope::file(id)).unwrap()), &oracle);
}

/// The AMD GPU traces (MI300X, MI355X; JAX): the device op db built from XLA kernels costed by XLA's GPU
/// cost analysis equals XProf's in every tool that reads it: HLO Op Stats, Op Profile, framework op
/// stats (device and host rows) and the Overview Page (top device ops, run environment) — every cell,
/// in XProf's order (their rows have no ties in self time and name within a program).
#[test]
fn device_tools_equal_xprof_on_the_amd_traces() {
    for f in AMD_FIXTURES {
        let Some(trace) = common::device_fixture(&format!("{f}.xplane.pb")) else { continue };
        let stem = f.rsplit('/').next().unwrap();
        let oracle = |tool: &str| common::json_at(&trace.with_file_name(format!("{stem}.{tool}.json")));
        let (mut session, id) = open_session(f, std::fs::read(&trace).unwrap());
        let hlo_stats = session.hlo_stats(&Scope::file(id)).unwrap();
        assert!(!hlo_stats.rows.is_empty(), "{f}: XLA ops on the device");
        assert_same("hlo_stats", f, &hlo_stats_json(&hlo_stats), &oracle("hlo_stats"));
        assert_same("op_profile", f, &op_profile_json(&session.op_profile(&Scope::file(id)).unwrap()), &oracle("op_profile"));
        let stats = session.framework_op_stats(&Scope::file(id)).unwrap();
        assert!(stats.with_idle.rows.iter().any(|r| r.on_device), "{f}: device rows");
        assert_same("framework_op_stats", f, &framework_op_stats_json(&stats), &oracle("framework_op_stats"));
        assert_same("overview_page", f, &overview_page_json(session.overview_page(&[id]).unwrap()), &oracle("overview_page"));
    }
}

/// The roofline on the AMD traces: XProf's GPU table (shared memory / L1 as VMEM write, the GPU's
/// peaks from its capabilities), both record sets and the diagnostics, equal to XProf's.
#[test]
fn roofline_model_equals_xprof_on_the_amd_traces() {
    for f in AMD_FIXTURES {
        let Some(trace) = common::device_fixture(&format!("{f}.xplane.pb")) else { continue };
        let stem = f.rsplit('/').next().unwrap();
        let oracle = common::json_at(&trace.with_file_name(format!("{stem}.roofline_model.json")));
        let (mut session, id) = open_session(f, std::fs::read(&trace).unwrap());
        assert_same("roofline_model", f, &roofline_json(&session.roofline_model(&Scope::file(id)).unwrap()), &oracle);
    }
}

/// The V100 TensorFlow trace: its plane names no vendor, so XProf (and Tidemark) give it zero peak
/// FLOP/s and shared-memory bandwidth beside the recorded HBM bandwidth; its one step has a program
/// record of its own (all zero: a GPU step's op db is empty); no "no step marker" warning.
#[test]
fn roofline_model_equals_xprof_on_the_v100_trace() {
    let f = "tf_v100_multi_worker/v100_worker";
    let Some(trace) = common::device_fixture(&format!("{f}.xplane.pb")) else { return };
    let oracle = common::json_at(&trace.with_file_name("v100_worker.roofline_model.json"));
    let (mut session, id) = open_session(f, std::fs::read(&trace).unwrap());
    let model = session.roofline_model(&Scope::file(id)).unwrap();
    assert!(model.records.iter().any(|r| r.span == tidemark::analysis::roofline_model::RecordSpan::Step(0)), "the step's record");
    assert_same("roofline_model", f, &roofline_json(&model), &oracle);
}

#[test]
fn op_profile_is_empty_on_cpu_traces() {
    for f in CPU_FIXTURES {
        let (mut session, id) = open_session(f, common::bytes(&format!("{f}.xplane.pb.gz")));
        let profile = session.op_profile(&Scope::file(id)).unwrap();
        assert!(profile.by_program.children.is_empty(), "{f}");
        assert_same("op_profile", f, &op_profile_json(&profile), &common::json(&format!("{f}.op_profile.json")));
    }
}

/// The V100 trace: only idle time on the device, so XProf's tree is the idle node alone.
#[test]
fn op_profile_equals_xprof_on_the_v100_trace() {
    let f = "tf_v100_multi_worker/v100_worker";
    let Some(trace) = common::device_fixture(&format!("{f}.xplane.pb")) else { return };
    let oracle = common::json_at(&trace.with_file_name("v100_worker.op_profile.json"));
    let (mut session, id) = open_session(f, std::fs::read(&trace).unwrap());
    assert_same("op_profile", f, &op_profile_json(&session.op_profile(&Scope::file(id)).unwrap()), &oracle);
}

/// The TPU trace: XProf's whole tree, by program with and without idle, fusions with their fused
/// instructions (name, HLO text, category, framework op, one occurrence, no time).
#[test]
fn op_profile_equals_xprof_on_the_tpu_trace() {
    let f = "jax_tpu_v6e_inference/tpu_v6e_inference";
    let Some(trace) = common::device_fixture(&format!("{f}.xplane.pb")) else { return };
    let oracle = common::json_at(&trace.with_file_name("tpu_v6e_inference.op_profile.json"));
    let (mut session, id) = open_session(f, std::fs::read(&trace).unwrap());
    let profile = session.op_profile(&Scope::file(id)).unwrap();
    let fused = |n: &tidemark::analysis::op_profile::Node| n.children.len();
    assert!(
        profile
            .by_program
            .children
            .iter()
            .flat_map(|p| &p.children)
            .flat_map(|c| &c.children)
            .any(|n| n.children.iter().any(|op| fused(op) > 0)),
        "fusions list their fused instructions"
    );
    assert_same("op_profile", f, &op_profile_json(&profile), &oracle);
}

/// One op-metrics pass per file: every table reads the same cached dbs (the device db HLO Op Stats and
/// the roofline read is the one in the file's op metrics), and `close` forgets them.
#[test]
fn every_table_reads_one_op_metrics_pass_and_close_forgets_it() {
    let f = "jax_tpu_v6e_inference/tpu_v6e_inference";
    let Some(trace) = common::device_fixture(&format!("{f}.xplane.pb")) else { return };
    let (mut session, id) = open_session(f, std::fs::read(&trace).unwrap());
    let metrics = session.op_metrics(&Scope::file(id)).unwrap();
    session.framework_op_stats(&Scope::file(id)).unwrap();
    session.hlo_stats(&Scope::file(id)).unwrap();
    session.op_profile(&Scope::file(id)).unwrap();
    session.roofline_model(&Scope::file(id)).unwrap();
    session.kernel_stats(&Scope::file(id)).unwrap();
    session.overview_page(&[id]).unwrap();
    assert!(std::sync::Arc::ptr_eq(&metrics, &session.op_metrics(&Scope::file(id)).unwrap()), "built once");
    let device = metrics.device.as_ref().expect("the TPU trace has a device op db");
    assert!(std::sync::Arc::ptr_eq(device, &session.device_ops(&Scope::file(id), "op tables").unwrap()));
    assert!(session.close(id));
    let e = session.hlo_stats(&Scope::file(id)).unwrap_err();
    assert_eq!(e, tidemark::engine::EngineError::UnknownFile { file_id: id });
}
