//! Framework op stats (XProf's "TensorFlow Stats"): one row per framework op, device ops first, then
//! host ops, each side by self time (XProf's `op_stats_to_tf_stats.cc`). Two tables: with the `IDLE`
//! rows and fractions of total time, and without them and fractions of op time.
//!
//! Per side XProf keeps the top 500 rows by (self time desc, name asc), `IDLE` among them. Times are
//! µs as doubles (ps / 1e6), averages divide by occurrences (0 for none), the "percent" columns hold
//! fractions of the side's total, and the cumulative ones are running double sums (so the last may be
//! 1.0000000000000004). Rows equal in self time and name keep the db's order (XProf leaves them to
//! its sort).

pub mod xprof_json;

use super::op_metrics::roofline::{roofline_metrics, HardwareType, PerfEnv};
use super::op_metrics::tf_op::{is_jax_op_name_and_type, is_tf_op_name, is_tf_op_type, tf_name_scopes};
use super::op_metrics::{ps_to_us, safe_divide, OpMetrics, OpMetricsDb};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Rows XProf keeps per side (host, device).
pub const MAX_ROWS_PER_SIDE: usize = 500;

/// What the tables are built from.
#[derive(Debug, Clone, Copy)]
pub struct Inputs<'a> {
    /// The host op db ([`super::op_metrics::host::host_op_metrics_db`]).
    pub host: &'a OpMetricsDb,
    /// The device op db converted to framework ops (XProf's `CreateTfMetricsDbFromDeviceOpMetricsDb`,
    /// with its `IDLE` row); empty on a trace without devices.
    pub device: &'a OpMetricsDb,
    /// Fraction of each device op's kernel time on Tensor Cores, by op name (GPU kernel stats).
    pub tensor_core_utilization: &'a HashMap<String, f64>,
    pub perf_env: &'a PerfEnv,
    pub hardware: HardwareType,
    /// The run environment's device type (`CPU`, a GPU model, `TPU v6 lite`); "GPU" in it adds the
    /// Tensor Core column.
    pub device_type: &'a str,
}

/// Both tables.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FrameworkOpStats {
    pub with_idle: FrameworkOpTable,
    pub without_idle: FrameworkOpTable,
    pub device_type: String,
}

/// One table: its rows, ranked 1.. across both sides.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FrameworkOpTable {
    pub rows: Vec<FrameworkOpRow>,
    /// "Training" if any row's op is in a gradient name scope (TF `gradient_tape`, `gradients*`) or a JAX
    /// `transpose(` scope, else "Inference".
    pub task_type: String,
}

/// One framework op (XProf's `TfStatsRecord`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FrameworkOpRow {
    pub rank: u32,
    pub on_device: bool,
    /// The op type (`MatMul`, `Dataset`, `IDLE`, "" when unknown).
    pub op_type: String,
    pub op_name: String,
    /// XProf's count (host: including allocator events that name the op).
    pub occurrences: u64,
    /// Tidemark's count: executions only (see [`OpMetrics::memory_event_occurrences`]).
    pub true_occurrences: u64,
    pub total_time_us: f64,
    pub avg_time_us: f64,
    pub total_self_time_us: f64,
    pub avg_self_time_us: f64,
    /// Self time as a fraction of the device side's total (0 on host rows).
    pub device_self_time_fraction: f64,
    pub device_cumulative_self_time_fraction: f64,
    /// Self time as a fraction of the host side's total (0 on device rows).
    pub host_self_time_fraction: f64,
    pub host_cumulative_self_time_fraction: f64,
    /// GFLOP/s over total time.
    pub measured_flop_rate: f64,
    pub model_flop_rate: f64,
    /// GiB/s.
    pub measured_memory_bw: f64,
    pub operational_intensity: f64,
    pub gpu_tensorcore_utilization: f64,
    pub bound_by: String,
    pub is_eager: bool,
}

/// Both tables of `inputs`.
pub fn framework_op_stats(inputs: &Inputs) -> FrameworkOpStats {
    FrameworkOpStats { with_idle: table(inputs, false), without_idle: table(inputs, true), device_type: inputs.device_type.to_string() }
}

fn table(inputs: &Inputs, exclude_idle: bool) -> FrameworkOpTable {
    let mut rows: Vec<FrameworkOpRow> = Vec::new();
    for on_device in [true, false] {
        let db = if on_device { inputs.device } else { inputs.host };
        let total_us = ps_to_us(db.total_time_ps(exclude_idle));
        let mut cumulative = 0.0;
        for m in db.sorted_by_self_time(Some(MAX_ROWS_PER_SIDE)) {
            if exclude_idle && m.is_idle() {
                continue;
            }
            let mut row = record(m, on_device, inputs);
            row.rank = rows.len() as u32 + 1;
            let fraction = safe_divide(row.total_self_time_us, total_us);
            cumulative += fraction;
            if on_device {
                row.gpu_tensorcore_utilization = inputs.tensor_core_utilization.get(&row.op_name).copied().unwrap_or(0.0);
                (row.device_self_time_fraction, row.device_cumulative_self_time_fraction) = (fraction, cumulative);
            } else {
                (row.host_self_time_fraction, row.host_cumulative_self_time_fraction) = (fraction, cumulative);
            }
            rows.push(row);
        }
    }
    let training = rows.iter().any(|r| has_gradients(&r.op_name, &r.op_type));
    FrameworkOpTable { rows, task_type: if training { "Training" } else { "Inference" }.to_string() }
}

/// A row's own columns (XProf's `ConvertOpMetricsToTfStatsRecord`).
fn record(m: &OpMetrics, on_device: bool, inputs: &Inputs) -> FrameworkOpRow {
    let total_time_us = ps_to_us(m.time_ps);
    let total_self_time_us = ps_to_us(m.self_time_ps);
    let roofline = roofline_metrics(m, inputs.perf_env, inputs.hardware, false);
    FrameworkOpRow {
        on_device,
        op_type: m.category.clone(),
        op_name: m.name.clone(),
        occurrences: m.occurrences,
        true_occurrences: m.true_occurrences(),
        total_time_us,
        avg_time_us: safe_divide(total_time_us, m.occurrences as f64),
        total_self_time_us,
        avg_self_time_us: safe_divide(total_self_time_us, m.occurrences as f64),
        measured_flop_rate: roofline.measured_flop_rate,
        model_flop_rate: roofline.model_flop_rate,
        measured_memory_bw: roofline.measured_memory_bw,
        operational_intensity: roofline.operational_intensity,
        bound_by: roofline.bound_by.to_string(),
        is_eager: m.is_eager,
        ..FrameworkOpRow::default()
    }
}

/// Whether an op is part of a gradient computation (XProf's `ModelTracker`): a TF op in a
/// `gradient_tape` or `gradients*` name scope, or a JAX op (or an op without a type) in a `transpose(`
/// scope.
pub fn has_gradients(name: &str, op_type: &str) -> bool {
    if is_tf_op_type(op_type) && is_tf_op_name(name) {
        tf_name_scopes(name).any(|scope| scope.strip_prefix("gradient").is_some_and(|rest| rest == "_tape" || rest.starts_with('s')))
    } else if op_type.is_empty() || is_jax_op_name_and_type(name, op_type) {
        name.split('/').any(|scope| scope.starts_with("transpose("))
    } else {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gradient_scopes_make_training() {
        assert!(has_gradients("gradient_tape/model/dense/MatMul", "MatMul"));
        assert!(has_gradients("gradients_2/model/dense/MatMul", "MatMul"));
        assert!(!has_gradients("model/gradient_tape", "MatMul"), "the op's own name is not a scope");
        assert!(!has_gradients("gradient_x/model/MatMul", "MatMul"));
        assert!(has_gradients("jit(train)/transpose(jvp(f))/dot_general", "dot_general"));
        assert!(has_gradients("transpose(jvp(f))/x", ""));
        assert!(!has_gradients("jit(f)/transpose[permutation=(1, 0)]", "transpose"));
    }
}
