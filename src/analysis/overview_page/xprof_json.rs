//! XProf's `overview_page` JSON: `[analysis, step-time table, run environment, recommendation,
//! inference latency, {}, diagnostics]`.

use super::OverviewPage;
use crate::analysis::data_table::{warnings_table, Cell, ColumnType, DataTable};
use crate::analysis::input_pipeline::{one_digit, xprof_json as input_json};
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
    // Device utilisation and duty cycle are not computed: 0 (exact on host-only traces).
    t.property("host_trace_level", "0");
    t.property("host_tf_op_percent", percent(o.host_tf_op_percent));
    t.property("device_tf_op_percent", percent(o.device_tf_op_percent));
    t.property("host_op_time_eager_percent", percent(o.host_op_time_eager_percent));
    t.property("device_op_time_eager_percent", percent(o.device_op_time_eager_percent));
    t.property("remark_text", "");
    t.property("remark_color", "");
    t.property("mxu_utilization_percent", percent(0.0));
    t.property("hbm_utilization_percent", percent(0.0));
    if gpu {
        t.property("device_compute_16bit_percent", percent(o.device_compute_16bit_percent));
        t.property("device_compute_32bit_percent", percent(o.device_compute_32bit_percent));
    } else {
        // XProf writes the TPU table for every other device, CPU included.
        for key in [
            "flop_rate_utilization_relative_to_roofline",
            "memory_bw_utilization_relative_to_hw_limit",
            "device_idle_time_percent",
            "device_duty_cycle_percent",
            "device_duty_cycle_high_confidence_percent",
            "host_idle_time_percent",
        ] {
            t.property(key, percent(0.0));
        }
    }
    t
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
    let device = o.run_environment.hardware_type;
    // XProf points TPU users at op_profile and names their timelines "TPU core".
    let (op_tool, timeline) = if device == "TPU" { ("op_profile", "TPU core") } else { ("framework_op_stats", device) };
    let mut t = DataTable::with_columns(&[("tip_type", Text, "tip_type"), ("link", Text, "link"), ("description", Text, "description")]);
    let host_time = "Next steps for reducing the Host time";
    let device_time = "Next steps for reducing the Device time";
    let docs = "Other useful resources";
    let rows: [(&str, String, &str); 7] = [
        ("faq", "Refer to the TF2 Profiler FAQ".into(), "Tool troubleshooting / FAQ"),
        ("host", "input_pipeline_analyzer (especially Section 3 for the breakdown of input operations on the Host)".into(), host_time),
        ("host", "trace_viewer (look at the activities on the timeline of each Host Thread near the bottom of the trace view)".into(), host_time),
        ("device", format!("{op_tool} (identify the time-consuming operations executed on the {device})"), device_time),
        ("device", format!("trace_viewer (look at the activities on the timeline of each {timeline} in the trace view)"), device_time),
        ("doc", "<a href=\"https://www.tensorflow.org/guide/data_performance_analysis\" target=\"_blank\">Analyze tf.data performance with the TF Profiler</a>".into(), docs),
        ("doc", "<a href=\"https://www.tensorflow.org/guide/data_performance\" target=\"_blank\">Better performance with the tf.data API</a>".into(), docs),
    ];
    for (kind, link, description) in rows {
        t.row([Cell::Text(kind), Cell::Text(&link), Cell::Text(description)]);
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
