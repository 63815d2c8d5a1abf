//! The Input Pipeline page's request through the worker protocol, against XProf's own
//! `input_pipeline_analyzer` JSON: the verdict, every step's categories and the input ops the page
//! draws are XProf's (d2: 58 steps; d1: 18, potentially input-bound), and a trace without steps says so.

mod common;

use common::ask;

use serde_json::Value;
use tidemark::analysis::input_pipeline::{one_digit, CATEGORIES};
use tidemark::engine::input_pipeline::InputPipelineView;
use tidemark::engine::protocol::{request, RequestBody, ResponseBody};
use tidemark::engine::Session;

fn view_of(rel: &str) -> InputPipelineView {
    let mut s = Session::new();
    let file_id = match ask(&mut s, RequestBody::Open { path: rel.into() }, Some(common::bytes(&format!("{rel}.xplane.pb.gz")))) {
        ResponseBody::Opened { file_id, .. } => file_id,
        other => panic!("{other:?}"),
    };
    match ask(&mut s, RequestBody::from(request::InputPipeline { file_ids: vec![file_id] }), None) {
        ResponseBody::InputPipeline { view } => *view,
        other => panic!("{other:?}"),
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// The view against XProf's JSON `oracle`: verdict, statistics, every step's cells, the input ops.
fn assert_equal_to_xprof(label: &str, v: &InputPipelineView, oracle: &Value) {
    let p = &oracle[1]["p"];
    assert_eq!(v.verdict.statement, p["input_conclusion"].as_str().unwrap(), "{label}: verdict");
    assert_eq!(v.verdict.next_step, p["summary_nextstep"].as_str().unwrap(), "{label}: next step");
    assert_eq!(v.verdict.all_other_statement, p["all_other_statement"].as_str().unwrap(), "{label}: all others");
    assert_eq!(v.hardware_type, p["hardware_type"].as_str().unwrap(), "{label}");
    assert_eq!(one_digit(v.step_time_ms.average), p["steptime_ms_average"].as_str().unwrap(), "{label}: average");
    assert_eq!(one_digit(v.step_time_ms.minimum), p["steptime_ms_minimum"].as_str().unwrap(), "{label}: minimum");
    assert_eq!(one_digit(v.step_time_ms.maximum), p["steptime_ms_maximum"].as_str().unwrap(), "{label}: maximum");
    for (c, stats) in CATEGORIES.iter().zip(&v.category_ms) {
        assert_eq!(one_digit(stats.average), p[format!("{}_avg", c.key)].as_str().unwrap(), "{label}: {} average", c.key);
        let sdv = stats.standard_deviation.map_or("-nan".to_string(), one_digit);
        assert_eq!(sdv, p[format!("{}_sdv", c.key)].as_str().unwrap(), "{label}: {} deviation", c.key);
    }
    let rows = oracle[1]["rows"].as_array().unwrap();
    assert_eq!(v.steps.names.len(), rows.len(), "{label}: steps");
    let column = |id: &str| oracle[1]["cols"].as_array().unwrap().iter().position(|c| c["id"] == id).unwrap();
    for (i, row) in rows.iter().enumerate() {
        let cell = |id: &str| row["c"][column(id)]["v"].clone();
        assert_eq!(v.steps.names[i], cell("stepnum").as_str().unwrap(), "{label}: step {i}");
        assert!(close(v.steps.step_time_ms[i], cell("stepTimeMs").as_f64().unwrap()), "{label}: step {i} time");
        for (k, c) in CATEGORIES.iter().enumerate() {
            assert!(close(v.steps.category_ms[k][i], cell(c.id).as_f64().unwrap()), "{label}: step {i} {}", c.id);
        }
    }
    let ops = oracle[2]["rows"].as_array().unwrap();
    assert_eq!(v.input_ops.names.len(), ops.len(), "{label}: input ops");
    for (i, op) in ops.iter().enumerate() {
        let c = |k: usize| op["c"][k]["v"].clone();
        assert_eq!(v.input_ops.names[i], c(0).as_str().unwrap(), "{label}: op {i}");
        assert_eq!(v.input_ops.occurrences[i] as f64, c(1).as_f64().unwrap(), "{label}: op {i} count");
        for (ours, k) in [
            (&v.input_ops.time_ms, 2),
            (&v.input_ops.time_fraction, 3),
            (&v.input_ops.self_time_ms, 4),
            (&v.input_ops.self_time_fraction, 5),
        ] {
            assert!(close(ours[i], c(k).as_f64().unwrap()), "{label}: op {i} cell {k}");
        }
        assert_eq!(v.input_ops.categories[i], c(6).as_str().unwrap(), "{label}: op {i} category");
    }
    let hp = &oracle[2]["p"];
    let b = &v.input_time;
    for (ours, key) in [
        (b.enqueue_us, "enqueue_us"),
        (b.demanded_file_read_us, "demanded_file_read_us"),
        (b.advanced_file_read_us, "advanced_file_read_us"),
        (b.preprocessing_us, "preprocessing_us"),
        (b.unclassified_non_enqueue_us, "unclassified_nonequeue_us"),
    ] {
        assert_eq!(format!("{ours:.3}"), hp[key].as_str().unwrap(), "{label}: {key}");
    }
    let warnings: Vec<&str> = oracle[4]["rows"].as_array().unwrap().iter().map(|r| r["c"][1]["v"].as_str().unwrap()).collect();
    assert_eq!(v.warnings, warnings, "{label}: diagnostics");
}

#[test]
fn the_page_draws_xprofs_figures() {
    for rel in ["tf/d2_tf_cnn/d2_tf_cnn", "tf/d1_tf_keras_bfc/d1_tf_keras_bfc"] {
        let v = view_of(rel);
        assert_equal_to_xprof(rel, &v, &common::json(&format!("{rel}.input_pipeline_analyzer.json")));
        // The waiting-for-input column is each step's input share.
        for i in 0..v.steps.names.len() {
            assert!(close(v.steps.input_percent[i], 100.0 * v.steps.category_ms[5][i] / v.steps.step_time_ms[i]), "{rel}: step {i}");
        }
        assert_eq!(v.steps_found, v.steps.names.len() + 2, "{rel}: the first and last dropped");
    }
}

#[test]
fn a_trace_without_steps_says_so() {
    let rel = "jax/a1_docs_seed/a1_docs_seed";
    let v = view_of(rel);
    assert_equal_to_xprof(rel, &v, &common::json(&format!("{rel}.input_pipeline_analyzer.json")));
    assert!(v.steps.names.is_empty() && v.steps.category_ms.iter().all(Vec::is_empty));
    assert_eq!(v.verdict.classification, "unknown");
    assert!(v.verdict.statement.starts_with("No step time measured"));
}

/// The wire form the page reads: the request's tag and the reply's columns.
#[test]
fn wire_form_is_pinned() {
    let json = serde_json::to_value(RequestBody::from(request::InputPipeline { file_ids: vec![3] })).unwrap();
    assert_eq!(json, serde_json::json!({"type": "input_pipeline", "file_ids": [3]}));
    let reply = serde_json::to_value(ResponseBody::InputPipeline { view: Box::default() }).unwrap();
    assert_eq!(reply["type"], "input_pipeline");
    let steps = reply["view"]["steps"].as_object().unwrap();
    let mut keys: Vec<&str> = steps.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["begin_ps", "category_ms", "group_ids", "input_percent", "names", "step_time_ms"]);
}
