//! The Framework Op Stats page's request through the worker protocol on `d2_tf_cnn`, against XProf's
//! own output: the table the page draws is XProf's (with or without `IDLE`), and the two
//! self-time-by-type charts add up XProf's rows of each side.

mod common;

use common::ask;

use serde_json::Value;
use std::collections::BTreeMap;
use tidemark::analysis::framework_op_stats::FrameworkOpTable;
use tidemark::engine::framework_op_stats::{FrameworkOpStatsView, TypeSelfTime};
use tidemark::engine::protocol::{request, RequestBody, ResponseBody};
use tidemark::engine::Scope;
use tidemark::engine::{EngineError, Session};

const D2: &str = "tf/d2_tf_cnn/d2_tf_cnn.xplane.pb.gz";

fn open(s: &mut Session, name: &str, bytes: Vec<u8>) -> u32 {
    match ask(s, RequestBody::Open { path: name.into() }, Some(bytes)) {
        ResponseBody::Opened { file_id, .. } => file_id,
        other => panic!("{other:?}"),
    }
}

fn page(s: &mut Session, file_id: u32, include_idle: bool) -> FrameworkOpStatsView {
    match ask(s, RequestBody::from(request::FrameworkOpStats { scope: Scope::file(file_id), include_idle }), None) {
        ResponseBody::FrameworkOpStats { view } => *view,
        other => panic!("{other:?}"),
    }
}

/// XProf's rows of one side (`Host` / `Device`) summed by type (cells 1, 2, 7).
fn oracle_by_type(table: &Value, side: &str) -> BTreeMap<String, f64> {
    let mut by_type = BTreeMap::new();
    for r in table["rows"].as_array().expect("rows") {
        if r["c"][1]["v"] == side {
            *by_type.entry(r["c"][2]["v"].as_str().unwrap_or_default().to_string()).or_insert(0.0) += r["c"][7]["v"].as_f64().unwrap();
        }
    }
    by_type
}

fn assert_chart(label: &str, chart: &[TypeSelfTime], expected: &BTreeMap<String, f64>) {
    let ours: BTreeMap<String, f64> = chart.iter().map(|t| (t.op_type.clone(), t.self_time_us)).collect();
    assert_eq!(ours.keys().collect::<Vec<_>>(), expected.keys().collect::<Vec<_>>(), "{label}: types");
    for (k, v) in expected {
        assert!((ours[k] - v).abs() <= 1e-9 * v.abs().max(1.0), "{label} {k}: {} vs XProf's {v}", ours[k]);
    }
    assert!(chart.windows(2).all(|w| w[0].self_time_us >= w[1].self_time_us), "{label}: largest first");
    let fractions: f64 = chart.iter().map(|t| t.fraction).sum();
    if chart.iter().any(|t| t.self_time_us > 0.0) {
        assert!((fractions - 1.0).abs() < 1e-9, "{label}: fractions add up");
    } else {
        assert_eq!(fractions, 0.0, "{label}: no self time, no shares");
    }
}

/// Both of XProf's tables through the page's request: rows as the engine's, charts summing XProf's
/// rows of each side by type. Returns the session and file id for more checks.
fn assert_page_is_xprofs(name: &str, bytes: Vec<u8>, oracle: &Value) -> (Session, u32) {
    let mut s = Session::new();
    let id = open(&mut s, name, bytes);
    for (t, include_idle) in [(0, true), (1, false)] {
        let view = page(&mut s, id, include_idle);
        assert_eq!(view.include_idle, include_idle);
        let stats = s.framework_op_stats(&Scope::file(id)).unwrap();
        let engine = if include_idle { stats.with_idle } else { stats.without_idle };
        let as_json = |t: &FrameworkOpTable| serde_json::to_value(t).unwrap();
        assert_eq!(common::json_diff(&as_json(&view.table), &as_json(&engine)), None, "{name} table {t}: the engine's");
        assert_eq!(view.table.rows.len(), oracle[t]["rows"].as_array().unwrap().len(), "{name} table {t}: rows");
        assert_chart(&format!("{name} host {t}"), &view.host_by_type, &oracle_by_type(&oracle[t], "Host"));
        assert_chart(&format!("{name} device {t}"), &view.device_by_type, &oracle_by_type(&oracle[t], "Device"));
    }
    (s, id)
}

#[test]
fn d2_tf_cnn_page_is_xprofs_table_with_and_without_idle() {
    let oracle = common::json("tf/d2_tf_cnn/d2_tf_cnn.framework_op_stats.json.gz");
    let (mut s, id) = assert_page_is_xprofs("d2_tf_cnn.xplane.pb.gz", common::bytes(D2), &oracle);
    for include_idle in [true, false] {
        let view = page(&mut s, id, include_idle);
        assert_eq!(view.device_type, "CPU");
        assert_eq!(view.table.rows.iter().any(|r| r.op_type == "IDLE"), include_idle);
        assert!(view.device_by_type.is_empty(), "a CPU trace has no device ops");
        let mul = view.table.rows.iter().find(|r| r.op_name == "sgd/Mul_12").expect("sgd/Mul_12");
        assert_eq!((mul.occurrences, mul.true_occurrences), (120, 60));
    }
}

/// The device side's chart on real GPU and TPU traces (read in place; skipped when absent).
#[test]
fn device_traces_chart_both_sides() {
    for (dir, name) in [("tf_v100_multi_worker", "v100_worker"), ("jax_tpu_v6e_inference", "tpu_v6e_inference")] {
        let Some(trace) = common::device_fixture(&format!("{dir}/{name}.xplane.pb")) else { continue };
        let oracle = common::json_at(&trace.with_file_name(format!("{name}.framework_op_stats.json")));
        let (mut s, id) = assert_page_is_xprofs(name, std::fs::read(&trace).expect("readable fixture"), &oracle);
        assert!(!page(&mut s, id, true).device_by_type.is_empty(), "{name}: device ops");
    }
}

#[test]
fn wire_form_and_unknown_file() {
    let json = serde_json::to_string(&RequestBody::from(request::FrameworkOpStats { scope: Scope::file(3), include_idle: false })).unwrap();
    assert_eq!(json, r#"{"type":"framework_op_stats","file_ids":[3],"include_idle":false}"#);
    let mut s = Session::new();
    match ask(&mut s, RequestBody::from(request::FrameworkOpStats { scope: Scope::file(9), include_idle: true }), None) {
        ResponseBody::Failed { error } => assert_eq!(error, EngineError::UnknownFile { file_id: 9 }),
        other => panic!("{other:?}"),
    }
}
