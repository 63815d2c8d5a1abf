//! XProf's `overview_page` JSON: `[analysis, step-time table, run environment, recommendation,
//! inference latency, {}, diagnostics]`.

use super::recommendation::tips;
use super::{Figure, OverviewPage};
use crate::analysis::data_table::{warnings_table, Cell, ColumnType, DataTable};
use crate::analysis::input_pipeline::{one_digit, xprof_json as input_json};
use crate::analysis::number_text::six_digits;
use serde_json::{json, Value};
use ColumnType::{Boolean, Number, String as Text};

pub fn overview_page_json(o: &OverviewPage) -> Value {
    Value::Array(vec![
        analysis_table(o).into_json(),
        input_json::step_table(&o.input).into_json(),
        run_environment_table(o).into_json(),
        recommendation_table(o).into_json(),
        inference_latency_table().into_json(),
        json!({}),
        warnings_table(&o.input.warnings).into_json(),
    ])
}

/// XProf's `%.1lf%%`.
fn percent(x: f64) -> String {
    if x >= 0.0 {
        format!("{}%", one_digit(x))
    } else {
        "unknown".into()
    }
}

fn analysis_table(o: &OverviewPage) -> DataTable {
    let gpu = o.run_environment.device_type.contains("GPU");
    let ops = [
        ("selfTimePercent", Number, "Time (%)"),
        ("cumulativeTimePercent", Number, "Cumulative time (%)"),
        ("category", Text, "Category"),
        ("operation", Text, "Operation"),
    ];
    let rates: &[(&'static str, ColumnType, &'static str)] = if gpu {
        &[
            ("flopRate", Number, "GFLOPs/Sec"),
            ("tcEligibility", Boolean, "TensorCore eligibility"),
            ("tcUtilization", Boolean, "Op is using TensorCore"),
        ]
    } else {
        &[("flopRate", Number, "Bf16 Normalized Flop Rate(GFLOPs/Sec)")]
    };
    let mut t = DataTable::with_columns(&[&ops[..], rates].concat());
    for op in &o.top_device_ops {
        let mut row = vec![
            Cell::Number(op.self_time_fraction),
            Cell::Number(op.cumulative_time_fraction),
            Cell::Text(&op.category),
            Cell::Text(&op.name),
            Cell::Number(op.flop_rate),
        ];
        if gpu {
            row.extend([Cell::Boolean(op.tensor_core_eligible), Cell::Boolean(op.using_tensor_core)]);
        }
        t.row(row);
    }
    // 0 where there is no figure, as XProf writes it.
    t.property("host_trace_level", "0");
    t.property("host_tf_op_percent", percent(o.host_tf_op_percent));
    t.property("device_tf_op_percent", percent(o.device_tf_op_percent));
    t.property("host_op_time_eager_percent", percent(o.host_op_time_eager_percent));
    t.property("device_op_time_eager_percent", percent(o.device_op_time_eager_percent));
    t.property("remark_text", "");
    t.property("remark_color", "");
    t.property("mxu_utilization_percent", percent(0.0));
    let u = &o.utilisation;
    t.property("hbm_utilization_percent", figure(u.memory_bw_utilization_relative_to_hw_limit));
    if gpu {
        t.property("device_compute_16bit_percent", percent(o.device_compute_16bit_percent));
        t.property("device_compute_32bit_percent", percent(o.device_compute_32bit_percent));
    } else {
        // XProf writes the TPU table for every other device, CPU included.
        t.property("flop_rate_utilization_relative_to_roofline", figure(u.flop_rate_utilization_relative_to_roofline));
        t.property("memory_bw_utilization_relative_to_hw_limit", figure(u.memory_bw_utilization_relative_to_hw_limit));
        t.property("device_idle_time_percent", figure(u.device_idle_time_percent));
        t.property("device_duty_cycle_percent", figure(u.device_duty_cycle_percent));
        t.property("device_duty_cycle_high_confidence_percent", figure(u.device_duty_cycle_high_confidence_percent));
        t.property("host_idle_time_percent", figure(u.host_idle_time_percent));
        if let Some(ps) = o.tpu_idle_time_ps {
            t.property("idle_time_high_confidence_ps", six_digits(ps as f64));
        }
    }
    t
}

/// A figure as XProf writes it: `0.0%` where there is none.
fn figure(f: Figure) -> String {
    percent(f.xprof_percent())
}

fn run_environment_table(o: &OverviewPage) -> DataTable {
    let r = &o.run_environment;
    let mut t = DataTable::with_columns(&[
        ("host_id", Text, "host_id"),
        ("command_line", Text, "command_line"),
        ("start_time", Text, "start_time"),
        ("bns_address", Text, "bns_address"),
    ]);
    t.property("host_count", r.host_count.to_string());
    t.property("task_count", format!("{} (num tasks per host = {})", r.task_count, r.task_count / r.host_count.max(1)));
    t.property("device_type", r.device_type.clone());
    t.property("device_core_count", r.device_core_count.to_string());
    t.property("is_training", r.is_training.to_string());
    t
}

fn recommendation_table(o: &OverviewPage) -> DataTable {
    let b = &o.input.bottleneck;
    let mut t = DataTable::with_columns(&[("tip_type", Text, "tip_type"), ("link", Text, "link"), ("description", Text, "description")]);
    for tip in tips(o.run_environment.hardware_type) {
        t.row([Cell::Text(&tip.tip_type), Cell::Text(&tip.xprof_link()), Cell::Text(&tip.description)]);
    }
    t.property("bottleneck", b.input_classification);
    t.property("statement", b.input_statement.clone());
    t.property("kernel_launch_bottleneck", "no");
    t.property("kernel_launch_statement", "");
    t.property("all_other_bottleneck", b.all_other_classification);
    t.property("all_other_statement", b.all_other_statement.clone());
    t.property("precision_statement", o.precision_statement.clone());
    t.property("device_collectives_bottleneck", "no");
    t.property("device_collectives_statement", "");
    t.property(
        "non_bottleneck_tip_types",
        match b.input_classification {
            "host" => "device",
            "device" => "host",
            _ => "",
        },
    );
    t
}

/// Filled by XProf for inference runs with serving latency data, which host traces do not carry.
fn inference_latency_table() -> DataTable {
    DataTable::with_columns(&[
        ("percentile", Text, "percentile"),
        ("hostTimeMs", Number, "Host time (in ms)"),
        ("deviceTimeMs", Number, "Device time (in ms)"),
        ("communicationTimeMs", Number, "Host-device communication time (in ms)"),
        ("totalTimeMs", Number, "Total latency (in ms)"),
    ])
}
