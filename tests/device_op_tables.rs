//! The device op tables (Kernel Stats, HLO Op Stats) equal XProf 2.24's output: on the real GPU/TPU traces
//! beside the checkout (read in place, skipped with a note when absent) and, in their empty form, on
//! the CPU fixtures.

mod common;

use serde_json::Value;
use tidemark::analysis::hlo_stats::table::to_xprof_json as hlo_stats_json;
use tidemark::analysis::kernel_stats::table::to_xprof_json as kernel_stats_json;
use tidemark::analysis::roofline_model::table::to_xprof_json as roofline_json;
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
        let stats = session.kernel_stats(id).unwrap();
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
        let stats = session.kernel_stats(id).unwrap();
        let rows = oracle["rows"].as_array().map_or(0, Vec::len);
        assert_eq!(stats.reports.len(), rows, "{f}: rows");
        assert_same("kernel_stats", f, &kernel_stats_json(&stats), &oracle);
        // Kept: asked again, the same analysis comes back.
        assert!(std::sync::Arc::ptr_eq(&stats, &session.kernel_stats(id).unwrap()));
    }
}

#[test]
fn hlo_stats_is_empty_on_cpu_traces() {
    for f in CPU_FIXTURES {
        let (mut session, id) = open_session(f, common::bytes(&format!("{f}.xplane.pb.gz")));
        let stats = session.hlo_stats(id).unwrap();
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
    let stats = session.hlo_stats(id).unwrap();
    assert_same("hlo_stats", f, &hlo_stats_json(&stats), &oracle);
}

#[test]
fn roofline_model_is_empty_on_cpu_traces() {
    for f in CPU_FIXTURES {
        let (mut session, id) = open_session(f, common::bytes(&format!("{f}.xplane.pb.gz")));
        let model = session.roofline_model(id).unwrap();
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
    let model = session.roofline_model(id).unwrap();
    assert_same("roofline_model", f, &roofline_json(&model), &oracle);
}
