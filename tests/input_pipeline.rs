//! The Input Pipeline Analyzer against XProf 2.24's `input_pipeline_analyzer` JSON on every CPU fixture,
//! table by table, and the step table row by row.

mod common;

use serde_json::Value;
use tidemark::analysis::input_pipeline::{xprof_json, InputPipeline};
use tidemark::analysis::op_metrics::host::host_op_metrics_db;
use tidemark::analysis::steps;
use tidemark::decode::Profile;

fn analysis(stem: &str) -> InputPipeline {
    let file = common::open(&format!("{stem}.xplane.pb.gz"));
    let Profile::XSpace(space) = &file.profile else { panic!("{stem}: not a trace") };
    let db = steps::step_db(space).unwrap_or_else(|e| panic!("{stem}: {e}"));
    InputPipeline::new(&db, &host_op_metrics_db(space).unwrap_or_else(|e| panic!("{stem}: {e}")), "CPU_ONLY")
}

/// Row by row, the step table's rows that differ from XProf's (name, our row, XProf's row).
fn step_rows_differing(actual: &Value, expected: &Value) -> Vec<String> {
    let rows = |v: &Value| v[1]["rows"].as_array().cloned().unwrap_or_default();
    let (a, e) = (rows(actual), rows(expected));
    let mut out = Vec::new();
    if a.len() != e.len() {
        out.push(format!("{} rows != expected {}", a.len(), e.len()));
    }
    for (x, y) in a.iter().zip(&e) {
        if let Some(d) = common::json_diff(x, y) {
            out.push(format!("{}: {d}", y["c"][0]["v"]));
        }
    }
    out
}

#[test]
fn step_tables_equal_xprof() {
    let mut failures = Vec::new();
    for stem in common::CPU_TRACES {
        let expected = common::json(&format!("{stem}.input_pipeline_analyzer.json"));
        let actual = xprof_json::input_pipeline_json(&analysis(stem));
        let rows = step_rows_differing(&actual, &expected);
        if !rows.is_empty() {
            failures.push(format!("{stem}: {} rows differ:\n  {}", rows.len(), rows.join("\n  ")));
        }
        if let Some(d) = common::json_diff(&actual[1]["p"], &expected[1]["p"]) {
            failures.push(format!("{stem}: step table p: {d}"));
        }
        for i in [0, 2, 3, 4] {
            if let Some(d) = common::json_diff(&actual[i], &expected[i]) {
                failures.push(format!("{stem}: table {i}: {d}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
