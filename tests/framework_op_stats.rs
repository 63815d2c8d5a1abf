//! Framework op stats equal XProf 2.24's output (`<fixture>.framework_op_stats.json`): on every CPU
//! fixture the whole JSON (parsed; numbers to 1e-9 relative); on the TPU v6e and V100 traces the whole
//! JSON too (device rows from the device op db); on the AMD GPU traces, whose device op db Tidemark
//! does not build yet, the host rows.

mod common;

use serde_json::Value;
use tidemark::analysis::framework_op_stats::xprof_json::to_xprof_json;
use tidemark::analysis::framework_op_stats::FrameworkOpStats;
use tidemark::engine::Scope;
use tidemark::engine::Session;

fn stats_of(name: &str, bytes: Vec<u8>) -> FrameworkOpStats {
    let mut session = Session::new();
    let id = session.open(name, bytes, &mut |_, _| {}).unwrap_or_else(|e| panic!("{e}")).id;
    session.framework_op_stats(&Scope::file(id)).unwrap_or_else(|e| panic!("{e}"))
}

fn stats(rel: &str) -> FrameworkOpStats {
    stats_of(rel, common::bytes(rel))
}

/// Rows of one table equal in self time and name are in XProf's hash order: compare each run of such
/// rows as a set (their ranks and cumulative fractions depend on that order, so those cells are left
/// out of a run of more than one). No fixture has such a run today (names differ).
fn assert_table_equal(fixture: &str, table: usize, actual: &Value, expected: &Value) {
    let strip_rows = |v: &Value| {
        let mut v = v.clone();
        v["rows"] = Value::Null;
        v
    };
    if let Some(d) = common::json_diff(&strip_rows(actual), &strip_rows(expected)) {
        panic!("{fixture} table {table}: {d}");
    }
    let rows = |v: &Value| v["rows"].as_array().cloned().unwrap_or_default();
    let (a, e) = (rows(actual), rows(expected));
    assert_eq!(a.len(), e.len(), "{fixture} table {table}: row count");
    let key = |r: &Value| (r["c"][7]["v"].as_f64().unwrap_or(f64::NAN).to_bits(), r["c"][1]["v"].clone(), r["c"][3]["v"].to_string());
    let mut i = 0;
    while i < e.len() {
        let mut j = i + 1;
        while j < e.len() && key(&e[j]) == key(&e[i]) {
            j += 1;
        }
        if j - i == 1 {
            if let Some(d) = common::json_diff(&a[i], &e[i]) {
                panic!("{fixture} table {table} row {i}: {d}\n ours:  {}\n xprof: {}", a[i], e[i]);
            }
        } else {
            // Ties: rank (cell 0) and the cumulative fractions (10, 12) follow the order.
            let tie = |r: &Value| {
                let mut r = r.clone();
                for c in [0, 10, 12] {
                    r["c"][c] = Value::Null;
                }
                r.to_string()
            };
            let mut ours: Vec<String> = a[i..j].iter().map(tie).collect();
            let mut theirs: Vec<String> = e[i..j].iter().map(tie).collect();
            ours.sort();
            theirs.sort();
            assert_eq!(ours, theirs, "{fixture} table {table}: tied rows {i}..{j}");
        }
        i = j;
    }
}

fn assert_equal_to_xprof(dir: &str) {
    let name = dir.rsplit('/').next().unwrap();
    let oracle_rel = format!("{dir}/{name}.framework_op_stats.json");
    let oracle = if common::fixture(&oracle_rel).exists() { common::json(&oracle_rel) } else { common::json(&format!("{oracle_rel}.gz")) };
    let ours = to_xprof_json(&stats(&format!("{dir}/{name}.xplane.pb.gz")));
    for t in 0..2 {
        assert_table_equal(name, t, &ours[t], &oracle[t]);
    }
}

#[test]
fn d2_tf_cnn() {
    assert_equal_to_xprof("tf/d2_tf_cnn");
}

#[test]
fn d1_tf_keras_bfc() {
    assert_equal_to_xprof("tf/d1_tf_keras_bfc");
}

#[test]
fn d1_tf_keras_none() {
    assert_equal_to_xprof("tf/d1_tf_keras_none");
}

#[test]
fn d1_tf_keras_stats() {
    assert_equal_to_xprof("tf/d1_tf_keras_stats");
}

#[test]
fn a1_docs_seed() {
    assert_equal_to_xprof("jax/a1_docs_seed");
}

#[test]
fn a2_mlp_train() {
    assert_equal_to_xprof("jax/a2_mlp_train");
}

/// The host rows of a GPU/TPU fixture (the device rows need the device op db): every cell but the rank
/// (device rows come first) equal to XProf's host rows, in order; ties as sets.
fn assert_host_rows_equal_to_xprof(dir: &str, name: &str) {
    let Some(trace) = common::device_fixture(&format!("{dir}/{name}.xplane.pb")) else { return };
    let oracle = common::json_at(&trace.with_file_name(format!("{name}.framework_op_stats.json")));
    let ours = to_xprof_json(&stats_of(name, std::fs::read(&trace).expect("readable fixture")));
    let oracle_host_rows = oracle[0]["rows"].as_array().map_or(0, |rows| rows.iter().filter(|r| r["c"][1]["v"] == "Host").count());
    assert!(oracle_host_rows > 0, "{name}: XProf's table has host rows");
    for t in 0..2 {
        let host_rows = |v: &Value| {
            let mut v = v.clone();
            let rows: Vec<Value> = v["rows"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|r| r["c"][1]["v"] == "Host")
                .map(|r| {
                    let mut r = r.clone();
                    r["c"][0]["v"] = Value::Null;
                    r
                })
                .collect();
            v["rows"] = Value::Array(rows);
            // The device-only parts of the table (the Tensor Core column, the task type from device
            // rows) are the device side's.
            v["cols"] = Value::Null;
            v["p"] = Value::Null;
            v
        };
        assert_table_equal(name, t, &host_rows(&ours[t]), &host_rows(&oracle[t]));
    }
}

#[test]
fn tpu_v6e_inference_host_rows() {
    assert_host_rows_equal_to_xprof("jax_tpu_v6e_inference", "tpu_v6e_inference");
}

#[test]
fn v100_multi_worker_host_rows() {
    assert_host_rows_equal_to_xprof("tf_v100_multi_worker", "v100_worker");
}

#[test]
fn mi300x_conv_host_rows() {
    assert_host_rows_equal_to_xprof("jax_mi300x_conv", "mi300x_conv");
}

#[test]
fn mi300x_attention_host_rows() {
    assert_host_rows_equal_to_xprof("jax_mi300x_attention", "mi300x_attention");
}

#[test]
fn mi355x_te_attention_host_rows() {
    assert_host_rows_equal_to_xprof("jax_mi355x_te_attention", "mi355x_te_attention");
}

/// XProf counts an allocator event whose `tf_op` names an op as one more occurrence of that op. The
/// true count differs from XProf's exactly there: on each row by the number of allocator events of the
/// host plane that name it, counted here independently from the Memory Profile's event reader.
#[test]
fn true_occurrences_differ_exactly_where_allocator_events_name_the_op() {
    use std::collections::HashMap;
    use tidemark::analysis::memory_events;
    use tidemark::analysis::op_metrics::host::host_op_metrics_db;
    use tidemark::analysis::op_metrics::parse_tf_op_fullname;
    use tidemark::decode::xplane::names::HOST_PLANE;
    for rel in ["tf/d2_tf_cnn/d2_tf_cnn.xplane.pb.gz", "tf/d1_tf_keras_bfc/d1_tf_keras_bfc.xplane.pb.gz"] {
        let file = common::open(rel);
        let tidemark::decode::Profile::XSpace(space) = &file.profile else { panic!("{rel}: not an XSpace") };
        let host = space.planes.iter().position(|p| p.name() == HOST_PLANE);
        let mut naming: HashMap<String, u64> = HashMap::new();
        memory_events::for_each(space, None, |e| {
            if Some(e.plane_index) == host && !e.tf_op_name.is_empty() {
                *naming.entry(parse_tf_op_fullname(&e.tf_op_name).name.to_string()).or_default() += 1;
            }
        })
        .expect("memory events read");
        let db = host_op_metrics_db(space).expect("host op db");
        let mut inflated = 0;
        for m in &db.metrics {
            let expected = naming.get(&m.name).copied().unwrap_or(0);
            assert_eq!(m.occurrences - m.true_occurrences(), expected, "{rel}: {}", m.name);
            inflated += usize::from(expected > 0);
        }
        assert!(inflated > 0, "{rel}: allocator events name ops");
        assert!(naming.keys().all(|name| db.metrics.iter().any(|m| &m.name == name)), "{rel}: every named op has a row");
    }
    // The example: `sgd/Mul_12` ran 60 times; XProf shows 120.
    let d2 = stats("tf/d2_tf_cnn/d2_tf_cnn.xplane.pb.gz");
    let mul = d2.with_idle.rows.iter().find(|r| r.op_name == "sgd/Mul_12").expect("sgd/Mul_12 row");
    assert_eq!((mul.occurrences, mul.true_occurrences), (120, 60));
}

/// The CLI: `--json` prints XProf's JSON; the text shows the true occurrences beside XProf's.
#[test]
fn cli_prints_xprof_json_and_a_readable_table() {
    let bin = env!("CARGO_BIN_EXE_tidemark");
    let file = common::fixture("tf/d2_tf_cnn/d2_tf_cnn.xplane.pb.gz");
    let run = |extra: &[&str]| {
        let out = std::process::Command::new(bin).arg("framework-op-stats").arg(&file).args(extra).output().expect("runs");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).expect("UTF-8")
    };
    let json: Value = serde_json::from_str(&run(&["--json"])).expect("JSON");
    let oracle = common::json("tf/d2_tf_cnn/d2_tf_cnn.framework_op_stats.json.gz");
    for t in 0..2 {
        assert_table_equal("d2_tf_cnn (CLI)", t, &json[t], &oracle[t]);
    }
    let text = run(&[]);
    let mul = text.lines().find(|l| l.ends_with(" sgd/Mul_12")).expect("sgd/Mul_12 among the top rows");
    assert!(mul.contains("120 (60)"), "{mul}");
    let bad = std::process::Command::new(bin).args(["framework-op-stats", "--frobnicate"]).output().expect("runs");
    assert_eq!(bad.status.code(), Some(2));
}

/// Where Tidemark builds the device op db (TPU `XLA Ops`, GPU kernels of framework ops), the whole of
/// both tables equals XProf's: device rows (HLO ops folded into their framework ops, idle in the first
/// table), host rows, and the properties.
fn assert_whole_tables_equal_to_xprof(dir: &str, name: &str) {
    let Some(trace) = common::device_fixture(&format!("{dir}/{name}.xplane.pb")) else { return };
    let oracle = common::json_at(&trace.with_file_name(format!("{name}.framework_op_stats.json")));
    let ours = to_xprof_json(&stats_of(name, std::fs::read(&trace).expect("readable fixture")));
    let device_rows = |v: &Value| v["rows"].as_array().unwrap().iter().filter(|r| r["c"][1]["v"] == "Device").count();
    assert!(device_rows(&oracle[0]) > 0, "{name}: XProf's table has device rows");
    for t in 0..2 {
        assert_table_equal(name, t, &ours[t], &oracle[t]);
    }
}

#[test]
fn tpu_v6e_inference_whole_tables() {
    assert_whole_tables_equal_to_xprof("jax_tpu_v6e_inference", "tpu_v6e_inference");
}

#[test]
fn v100_multi_worker_whole_tables() {
    assert_whole_tables_equal_to_xprof("tf_v100_multi_worker", "v100_worker");
}
