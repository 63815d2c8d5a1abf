//! The Input Pipeline Analyzer and Overview Page against XProf 2.24 on the real GPU/TPU profiles, read in
//! place (skipped where they are absent), through the engine's `Session` as the page and the CLI use it.
//!
//! - V100 (TensorFlow, grouped when recorded): XProf's one step from the GPUs' kernels (device compute,
//!   all others), its verdict, the precision shares of the overview: both tools equal.
//! - TPU v6e (JAX, no step line): no step, in XProf's TPU tables; both tools equal, the overview's TPU
//!   analysis (device and host idle time, the chips' duty cycle and idle time) included.
//! - AMD GPUs (JAX, saved ungrouped): grouped as XProf groups them (the host's events, and each kernel
//!   in the group of the host event that launched it): their hosts have no step marker, so no group and
//!   no step, in XProf as here; both tools equal.
//!
//! What differs is listed by table, so a change either way shows.

mod common;

use serde_json::Value;
use tidemark::analysis::input_pipeline::xprof_json::input_pipeline_json;
use tidemark::analysis::overview_page::xprof_json::overview_page_json;
use tidemark::engine::Session;

/// (folder/stem, tables of input_pipeline_analyzer that differ, tables of overview_page that differ,
/// whether Tidemark computes the trace's steps).
const DEVICE: [(&str, &[usize], &[usize], bool); 5] = [
    ("jax_mi300x_attention/mi300x_attention", &[], &[], true),
    ("jax_mi300x_conv/mi300x_conv", &[], &[], true),
    ("jax_mi355x_te_attention/mi355x_te_attention", &[], &[], true),
    ("jax_tpu_v6e_inference/tpu_v6e_inference", &[], &[], true),
    ("tf_v100_multi_worker/v100_worker", &[], &[], true),
];

fn differing(actual: &Value, expected: &Value) -> (Vec<usize>, Vec<String>) {
    let n = expected.as_array().map_or(0, Vec::len);
    assert_eq!(actual.as_array().map_or(0, Vec::len), n, "number of tables");
    let diffs: Vec<(usize, String)> = (0..n).filter_map(|i| common::json_diff(&actual[i], &expected[i]).map(|d| (i, d))).collect();
    (diffs.iter().map(|(i, _)| *i).collect(), diffs.into_iter().map(|(i, d)| format!("table {i}: {d}")).collect())
}

/// The file `stem` opened in a session, with its id; `None` where the device fixtures are absent.
fn open(stem: &str) -> Option<(Session, u32, std::path::PathBuf)> {
    let path = common::device_fixture(&format!("{stem}.xplane.pb"))?;
    let mut session = Session::new();
    let id = session.open(stem, std::fs::read(&path).expect("read"), &mut |_, _| {}).unwrap_or_else(|e| panic!("{stem}: {e}")).id;
    Some((session, id, path))
}

fn oracle(path: &std::path::Path, tool: &str) -> Value {
    let stem = path.file_name().and_then(|n| n.to_str()).and_then(|n| n.strip_suffix(".xplane.pb")).expect("a trace");
    common::json_at(&path.with_file_name(format!("{stem}.{tool}.json")))
}

#[test]
fn device_profiles_against_xprof() {
    let mut report = Vec::new();
    let mut failures = Vec::new();
    for (stem, ipa_differs, overview_differs, computed) in DEVICE {
        let Some((mut session, id, path)) = open(stem) else { continue };
        let page = session.overview_page(&[id]).unwrap_or_else(|e| panic!("{stem}: {e}")).clone();
        for (tool, actual, expected_differs) in [
            ("input_pipeline_analyzer", input_pipeline_json(&page.input), ipa_differs),
            ("overview_page", overview_page_json(&page), overview_differs),
        ] {
            let (tables, diffs) = differing(&actual, &oracle(&path, tool));
            report.push(format!("{stem} {tool}: {}", if diffs.is_empty() { "equal".to_string() } else { diffs.join("; ") }));
            if tables != expected_differs {
                failures.push(format!("{stem} {tool}: tables differing {tables:?}, expected {expected_differs:?}"));
            }
        }
        assert_eq!(page.input.device_steps_unsupported, !computed, "{stem}: whether its steps are computed");
    }
    eprintln!("{}", report.join("\n"));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The V100's one step, as the page's reply carries it: XProf's figures, cell by cell.
#[test]
fn v100_step_from_the_gpus() {
    let stem = "tf_v100_multi_worker/v100_worker";
    let Some((mut session, id, path)) = open(stem) else { return };
    let expected = oracle(&path, "input_pipeline_analyzer");
    let view = session.input_pipeline_view(&[id]).expect("view");
    let row = &expected[1]["rows"][0]["c"];
    assert_eq!(view.steps.names, [row[0]["v"].as_str().unwrap()]);
    assert_eq!(view.steps.step_time_ms, [row[11]["v"].as_f64().unwrap()]);
    for (k, column) in view.steps.category_ms.iter().enumerate() {
        assert_eq!(column, &[row[1 + k]["v"].as_f64().unwrap()], "category {k}");
    }
    assert!(view.steps.category_ms[0][0] > 0.0, "device compute");
    assert_eq!(view.hardware_type, "GPU");
    assert_eq!(view.verdict.statement, expected[1]["p"]["input_conclusion"].as_str().unwrap());
    // One step: its deviation is 0 where it has time, undefined (XProf's -nan) where it has none.
    assert_eq!(view.category_ms[0].standard_deviation, Some(0.0));
    assert_eq!(view.category_ms[3].standard_deviation, None);
}

/// The TPU trace has no step line: no step, said in XProf's words, in its TPU tables.
#[test]
fn tpu_without_a_step_line_has_no_step() {
    let stem = "jax_tpu_v6e_inference/tpu_v6e_inference";
    let Some((mut session, id, path)) = open(stem) else { return };
    let view = session.input_pipeline_view(&[id]).expect("view");
    assert!(view.steps.names.is_empty());
    assert_eq!(view.hardware_type, "TPU");
    assert_eq!(view.verdict.classification, "unknown");
    let expected = oracle(&path, "input_pipeline_analyzer");
    assert_eq!(common::json_diff(&input_pipeline_json(session.input_pipeline(&[id]).expect("analysis")), &expected), None);
}

/// On the TPU trace the overview's top ten device ops (from the device op table, folded into framework
/// ops), the host/device op shares and XProf's TPU analysis (idle times, duty cycle) equal XProf's.
#[test]
fn tpu_overview_equals_xprof() {
    let stem = "jax_tpu_v6e_inference/tpu_v6e_inference";
    let Some((mut session, id, path)) = open(stem) else { return };
    let actual = overview_page_json(session.overview_page(&[id]).expect("overview"));
    let expected = oracle(&path, "overview_page");
    for key in ["device_duty_cycle_percent", "device_idle_time_percent", "host_idle_time_percent", "idle_time_high_confidence_ps"] {
        assert_ne!(expected[0]["p"][key], Value::Null, "{key} in the oracle");
        assert_eq!(actual[0]["p"][key], expected[0]["p"][key], "{key}");
    }
    for i in 0..7 {
        assert_eq!(common::json_diff(&actual[i], &expected[i]), None, "table {i}");
    }
}
