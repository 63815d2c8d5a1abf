//! TensorFlow host ops' execution mode equals XProf 2.24's: framework op stats' `eager` column
//! ("Eager" / "Function") on every host row, and the Overview's host-op eager share, on the TensorFlow
//! traces (the CPU fixtures in the repository, their two-host run, and the V100 multi-worker GPU trace
//! under `../shared/fixtures/device/`, a file grouped when it was recorded, whose ops keep their
//! recorded `is_eager`). XProf marks an op eager by the `EagerExecute` nearest to it in its step
//! grouping's event graph; Tidemark follows the op's own thread (`analysis::op_metrics::host`, equal on
//! every fixture); its unit tests cover what no fixture has (a recorded-grouped trace with eager ops).

mod common;

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use tidemark::analysis::framework_op_stats::xprof_json::to_xprof_json;
use tidemark::analysis::overview_page::xprof_json::overview_page_json;
use tidemark::engine::{Scope, Session};

/// The TensorFlow traces in the repository (relative to `tests/fixtures`), each with XProf's outputs.
const TF_FIXTURES: &[&str] = &[
    "tf/d1_tf_keras_bfc/d1_tf_keras_bfc",
    "tf/d1_tf_keras_stats/d1_tf_keras_stats",
    "tf/d1_tf_keras_none/d1_tf_keras_none",
    "tf/d2_tf_cnn/d2_tf_cnn",
];

/// Each host row's execution mode, by (type, operation); a repeated key keeps every mode it has.
fn host_modes(table: &Value) -> BTreeMap<(String, String), Vec<String>> {
    let cols: Vec<&str> = table["cols"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap()).collect();
    let col = |id: &str| cols.iter().position(|&c| c == id).unwrap_or_else(|| panic!("no column {id}"));
    let (side, type_, op, eager) = (col("host_or_device"), col("type"), col("operation"), col("eager"));
    let text = |r: &Value, i: usize| r["c"][i]["v"].as_str().unwrap_or_default().to_string();
    let mut modes: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for r in table["rows"].as_array().unwrap() {
        if text(r, side) == "Host" {
            modes.entry((text(r, type_), text(r, op))).or_default().push(text(r, eager));
        }
    }
    for m in modes.values_mut() {
        m.sort();
    }
    modes
}

/// Compares the run `hosts` (trace paths) with XProf's framework op stats and Overview outputs.
fn check(name: &str, hosts: &[&Path], framework_op_stats: &Value, overview_page: &Value) {
    let mut session = Session::new();
    let ids: Vec<u32> = hosts
        .iter()
        .map(|p| {
            session.open(&p.display().to_string(), std::fs::read(p).unwrap(), &mut |_, _| {}).unwrap_or_else(|e| panic!("{name}: {e}")).id
        })
        .collect();
    let ours = to_xprof_json(&session.framework_op_stats(&Scope::run(&ids)).unwrap_or_else(|e| panic!("{name}: {e}")));
    let (ours, theirs) = (host_modes(&ours[0]), host_modes(&framework_op_stats[0]));
    assert!(!theirs.is_empty(), "{name}: XProf lists host ops");
    assert_eq!(ours.len(), theirs.len(), "{name}: host rows");
    for (key, modes) in &theirs {
        assert_eq!(ours.get(key), Some(modes), "{name}: execution mode of {key:?}");
    }
    let page = overview_page_json(session.overview_page(&ids).unwrap_or_else(|e| panic!("{name}: {e}")));
    for field in ["host_op_time_eager_percent", "host_tf_op_percent"] {
        assert_eq!(page[0]["p"][field], overview_page[0]["p"][field], "{name}: {field}");
    }
}

#[test]
fn tf_cpu_traces_equal_xprof() {
    let mut eager_rows = 0;
    for stem in TF_FIXTURES {
        let trace = common::fixture(&format!("{stem}.xplane.pb.gz"));
        let oracle = |tool: &str| common::json_at(&common::plain_or_gz(common::fixture(&format!("{stem}.{tool}.json"))));
        let framework_op_stats = oracle("framework_op_stats");
        eager_rows += host_modes(&framework_op_stats[0]).values().flatten().filter(|m| *m == "Eager").count();
        check(stem, &[&trace], &framework_op_stats, &oracle("overview_page"));
    }
    // Both modes occur: the keras traces' eager input pipeline beside their compiled steps.
    assert!(eager_rows > 0, "some host op is eager in XProf's outputs");
}

#[test]
fn tf_two_host_run_equals_xprof() {
    let hosts = ["tf/d1_tf_keras_bfc/d1_tf_keras_bfc.xplane.pb.gz", "tf/d2_tf_cnn/d2_tf_cnn.xplane.pb.gz"].map(common::fixture);
    let oracle = |tool: &str| common::json(&format!("runs/tf_two_hosts/tf_two_hosts.{tool}.json"));
    check("tf_two_hosts", &hosts.each_ref().map(|p| p.as_path()), &oracle("framework_op_stats"), &oracle("overview_page"));
}

#[test]
fn tf_v100_gpu_trace_equals_xprof() {
    let Some(trace) = common::device_fixture("tf_v100_multi_worker/v100_worker.xplane.pb") else { return };
    let oracle = |tool: &str| common::json_at(&trace.with_file_name(format!("v100_worker.{tool}.json")));
    check("tf_v100_multi_worker", &[&trace], &oracle("framework_op_stats"), &oracle("overview_page"));
}
