//! Device framework ops on the NVIDIA H200 JAX traces equal XProf 2.24's: framework op stats (its
//! `Device` rows, JAX's `jit(train_step)/...` ops timed from the kernels, then the host rows), the
//! Overview's shares of framework ops on host and device and their eager shares, the run's training
//! flag and the table's task type, and the run comparison's device ops. Read in place from
//! `../shared/fixtures/device/` beside the checkout (skipped with a note when absent).
//!
//! Two columns of the device rows come from other tools, and are compared where those equal XProf: the
//! FLOP and bandwidth ones (and the bound they decide) from the ops' GPU cost, once the trace's every
//! HLO op is costed ([`tidemark::analysis::device_ops::DeviceOps::uncosted`]), and the Tensor Core share
//! from the kernel stats' Tensor Core use, where Kernel Stats equal XProf's.

mod common;

use serde_json::Value;
use std::collections::HashMap;
use tidemark::analysis::framework_op_stats::xprof_json::to_xprof_json as framework_op_stats_json;
use tidemark::analysis::kernel_stats::xprof_json::to_xprof_json as kernel_stats_json;
use tidemark::analysis::overview_page::xprof_json::overview_page_json;
use tidemark::engine::{Scope, Session};

/// The NVIDIA H200 JAX traces (folder/name prefix under the device fixtures).
const NVIDIA_FIXTURES: &[&str] = &[
    "nvidia_h200_jax/n1_mlp_adam/n1_mlp_adam",
    "nvidia_h200_jax/n2_cnn_bf16/n2_cnn_bf16",
    "nvidia_h200_jax/n3_lm_scan/n3_lm_scan",
    "nvidia_h200_jax/n4_decode/n4_decode",
    "nvidia_h200_jax/n6_oom_seed/n6_oom_seed",
];

/// Framework op stats columns XProf computes from the ops' FLOPs and bytes.
const COST_COLUMNS: &[&str] = &["measured_flop_rate", "model_flop_rate", "measured_memory_bw", "operational_intensity", "bound_by"];

/// The framework op stats column XProf computes from the kernel stats.
const TENSOR_CORE_COLUMN: &[&str] = &["gpu_tensorcore_utilization"];

/// The Overview's `p` fields this test owns (the rest of the page is other tests').
const OVERVIEW_FIELDS: &[&str] =
    &["host_tf_op_percent", "device_tf_op_percent", "host_op_time_eager_percent", "device_op_time_eager_percent"];

/// XProf's output of `tool` for the fixture `name` (present: its trace was found).
fn oracle(name: &str, tool: &str) -> Value {
    let stem = name.rsplit('/').next().unwrap();
    let trace = common::device_fixture(&format!("{name}.xplane.pb.gz")).unwrap();
    common::json_at(&trace.with_file_name(format!("{stem}.{tool}.json")))
}

/// Opens the fixture `name` in `session`: its file id, or `None` where the fixtures are absent.
fn open(session: &mut Session, name: &str) -> Option<u32> {
    let trace = common::device_fixture(&format!("{name}.xplane.pb.gz"))?;
    Some(session.open(name, std::fs::read(&trace).unwrap(), &mut |_, _| {}).unwrap_or_else(|e| panic!("{name}: {e}")).id)
}

struct Fixture {
    name: &'static str,
    session: Session,
    id: u32,
}

impl Fixture {
    fn oracle(&self, tool: &str) -> Value {
        oracle(self.name, tool)
    }

    /// Whether Tidemark's Kernel Stats equal XProf's on this trace.
    fn kernel_stats_equal(&mut self) -> bool {
        let stats = self.session.kernel_stats(&Scope::file(self.id)).unwrap_or_else(|e| panic!("{}: {e}", self.name));
        common::json_diff(&kernel_stats_json(&stats), &self.oracle("kernel_stats")).is_none()
    }

    /// Whether every HLO op the trace's kernels ran is costed as XProf costs it.
    fn fully_costed(&mut self) -> bool {
        let metrics = self.session.op_metrics(&Scope::file(self.id)).unwrap_or_else(|e| panic!("{}: {e}", self.name));
        metrics.device.as_ref().map(|d| d.uncosted.is_empty()).unwrap_or_else(|e| panic!("{}: {e}", self.name))
    }
}

/// Each NVIDIA fixture present, opened in a session of its own.
fn fixtures() -> impl Iterator<Item = Fixture> {
    NVIDIA_FIXTURES.iter().filter_map(|&name| {
        let mut session = Session::new();
        let id = open(&mut session, name)?;
        Some(Fixture { name, session, id })
    })
}

/// `tables` (XProf's framework op stats: a DataTable with `IDLE`, one without) with the columns
/// `blank` of their device rows blanked.
fn without_device_columns(tables: &Value, blank: &[&str]) -> Value {
    Value::Array(tables.as_array().unwrap().iter().map(|t| without_device_columns_of(t, blank)).collect())
}

fn without_device_columns_of(table: &Value, blank: &[&str]) -> Value {
    let mut table = table.clone();
    let columns: Vec<usize> = table["cols"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .filter(|(_, c)| blank.contains(&c["id"].as_str().unwrap_or("")))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(columns.len(), blank.len(), "XProf's columns");
    for row in table["rows"].as_array_mut().unwrap() {
        let cells = row["c"].as_array_mut().unwrap();
        if cells[1]["v"] == "Device" {
            for &i in &columns {
                cells[i]["v"] = Value::Null;
            }
        }
    }
    table
}

#[test]
fn framework_op_stats_and_task_type_equal_xprof() {
    for mut f in fixtures() {
        let stats = f.session.framework_op_stats(&Scope::file(f.id)).unwrap_or_else(|e| panic!("{}: {e}", f.name));
        let actual = framework_op_stats_json(&stats);
        let expected = f.oracle("framework_op_stats");
        for (table, oracle) in [&stats.with_idle, &stats.without_idle].into_iter().zip(expected.as_array().unwrap()) {
            assert_eq!(table.task_type, oracle["p"]["task_type"].as_str().unwrap(), "{}: task type", f.name);
        }
        let device_rows = |v: &Value| v[0]["rows"].as_array().unwrap().iter().filter(|r| r["c"][1]["v"] == "Device").count();
        assert_eq!(device_rows(&actual), device_rows(&expected), "{}: device rows", f.name);
        assert!(stats.with_idle.rows.iter().any(|r| r.on_device), "{}: device rows", f.name);
        let mut blank = Vec::new();
        if !f.fully_costed() {
            blank.extend(COST_COLUMNS);
        }
        if !f.kernel_stats_equal() {
            blank.extend(TENSOR_CORE_COLUMN);
        }
        let (actual, expected) = (without_device_columns(&actual, &blank), without_device_columns(&expected, &blank));
        if let Some(d) = common::json_diff(&actual, &expected) {
            panic!("framework_op_stats of {} differs from XProf: {d}", f.name);
        }
    }
}

#[test]
fn overview_op_shares_and_training_equal_xprof() {
    for mut f in fixtures() {
        let page = overview_page_json(f.session.overview_page(&[f.id]).unwrap_or_else(|e| panic!("{}: {e}", f.name)));
        let expected = f.oracle("overview_page");
        for field in OVERVIEW_FIELDS {
            assert_eq!(page[0]["p"][field], expected[0]["p"][field], "{}: {field}", f.name);
        }
        assert_eq!(page[2]["p"]["is_training"], expected[2]["p"]["is_training"], "{}: is_training", f.name);
        let view = f.session.overview_page_view(&[f.id]).unwrap();
        let percent = |v: &Value| v.as_str().unwrap().trim_end_matches('%').parse::<f64>().unwrap();
        assert_eq!(format!("{:.1}", view.device_tf_op_percent), format!("{:.1}", percent(&expected[0]["p"]["device_tf_op_percent"])));
        assert_eq!(format!("{:.1}", view.host_tf_op_percent), format!("{:.1}", percent(&expected[0]["p"]["host_tf_op_percent"])));
    }
}

/// XProf's device rows of a framework op stats oracle (the table with `IDLE`): (type, op) → (self
/// time µs, total time µs).
fn oracle_device_ops(oracle: &Value) -> HashMap<(String, String), (f64, f64)> {
    let text = |v: &Value| v.as_str().unwrap().to_string();
    oracle[0]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["c"])
        .filter(|c| c[1]["v"] == "Device")
        .map(|c| ((text(&c[2]["v"]), text(&c[3]["v"])), (c[7]["v"].as_f64().unwrap(), c[5]["v"].as_f64().unwrap())))
        .collect()
}

fn close(actual: f64, expected: f64) -> bool {
    actual == expected || (actual - expected).abs() <= 1e-9 * actual.abs().max(expected.abs())
}

/// Two NVIDIA runs compared: the device ops are XProf's device rows of both runs, each with its self
/// and total time in each run (0 where a run lacks it).
#[test]
fn run_comparison_device_ops_equal_xprof() {
    let [current, baseline] = [NVIDIA_FIXTURES[0], NVIDIA_FIXTURES[1]];
    let mut session = Session::new();
    let (Some(current_id), Some(baseline_id)) = (open(&mut session, current), open(&mut session, baseline)) else { return };
    let (current_oracle, baseline_oracle) =
        (oracle_device_ops(&oracle(current, "framework_op_stats")), oracle_device_ops(&oracle(baseline, "framework_op_stats")));
    let c = session.run_comparison(&[current_id], &[baseline_id]).unwrap_or_else(|e| panic!("{e}"));
    let mut keys: Vec<&(String, String)> = current_oracle.keys().chain(baseline_oracle.keys()).collect();
    keys.sort();
    keys.dedup();
    let device: Vec<_> = c.ops.iter().filter(|o| o.on_device).collect();
    assert_eq!(device.len(), keys.len(), "device ops of either run");
    for o in device {
        let key = (o.op_type.clone(), o.op_name.clone());
        let (current_self, current_total) = current_oracle.get(&key).copied().unwrap_or_default();
        let (baseline_self, baseline_total) = baseline_oracle.get(&key).copied().unwrap_or_default();
        for (what, actual, expected) in [
            ("current self", o.self_time_us.current, current_self),
            ("baseline self", o.self_time_us.baseline, baseline_self),
            ("current total", o.total_time_us.current, current_total),
            ("baseline total", o.total_time_us.baseline, baseline_total),
        ] {
            assert!(close(actual, expected), "{key:?} {what}: {actual} != XProf's {expected}");
        }
    }
    let busy = |ops: &HashMap<(String, String), (f64, f64)>| ops.iter().filter(|((t, _), _)| t != "IDLE").map(|(_, (s, _))| s).sum::<f64>();
    assert!(close(c.device_self_time_us.current, busy(&current_oracle)));
    assert!(close(c.device_self_time_us.baseline, busy(&baseline_oracle)));
}
