//! XProf's `overview_page` JSON: `[analysis, step-time table, run environment, recommendation,
//! inference latency, {}, diagnostics]`.

use super::OverviewPage;
use crate::analysis::data_table::{Cell, DataTable};
use crate::analysis::input_pipeline::{one_digit, xprof_json as input_json};
use serde_json::{json, Value};

pub fn overview_page_json(o: &OverviewPage) -> Value {
    Value::Array(vec![
        analysis_table(o).to_json(),
        input_json::step_table(&o.input).to_json(),
        run_environment_table(o).to_json(),
        recommendation_table(o).to_json(),
        inference_latency_table().to_json(),
        json!({}),
        input_json::diagnostics_table(&o.input.warnings).to_json(),
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
    let mut t = DataTable::new();
    let gpu = o.run_environment.device_type.contains("GPU");
    t.column("selfTimePercent", "number", "Time (%)")
        .column("cumulativeTimePercent", "number", "Cumulative time (%)")
        .column("category", "string", "Category")
        .column("operation", "string", "Operation");
    if gpu {
        t.column("flopRate", "number", "GFLOPs/Sec").column("tcEligibility", "boolean", "TensorCore eligibility").column(
            "tcUtilization",
            "boolean",
            "Op is using TensorCore",
        );
    } else {
        t.column("flopRate", "number", "Bf16 Normalized Flop Rate(GFLOPs/Sec)");
    }
    // No device op table here: the device figures stay 0 (exact on host-only traces).
    t.property("host_trace_level", "0")
        .property("host_tf_op_percent", percent(o.host_tf_op_percent))
        .property("device_tf_op_percent", percent(0.0))
        .property("host_op_time_eager_percent", percent(o.host_op_time_eager_percent))
        .property("device_op_time_eager_percent", percent(0.0))
        .property("remark_text", "")
        .property("remark_color", "")
        .property("mxu_utilization_percent", percent(0.0))
        .property("hbm_utilization_percent", percent(0.0));
    let device_keys: &[&str] = if gpu {
        &["device_compute_16bit_percent", "device_compute_32bit_percent"]
    } else {
        // XProf writes the TPU table for every other device, CPU included.
        &[
            "flop_rate_utilization_relative_to_roofline",
            "memory_bw_utilization_relative_to_hw_limit",
            "device_idle_time_percent",
            "device_duty_cycle_percent",
            "device_duty_cycle_high_confidence_percent",
            "host_idle_time_percent",
        ]
    };
    for key in device_keys {
        t.property(key, percent(0.0));
    }
    t
}

fn run_environment_table(o: &OverviewPage) -> DataTable {
    let r = &o.run_environment;
    let mut t = DataTable::new();
    t.column("host_id", "string", "host_id")
        .column("command_line", "string", "command_line")
        .column("start_time", "string", "start_time")
        .column("bns_address", "string", "bns_address");
    t.property("host_count", r.host_count.to_string())
        .property("task_count", format!("{} (num tasks per host = {})", r.task_count, r.task_count / r.host_count.max(1)))
        .property("device_type", r.device_type.clone())
        .property("device_core_count", r.device_core_count.to_string())
        .property("is_training", r.is_training.to_string());
    t
}

fn recommendation_table(o: &OverviewPage) -> DataTable {
    let b = &o.input.bottleneck;
    let device = o.run_environment.hardware_type;
    // XProf points TPU users at op_profile and names their timelines "TPU core".
    let (op_tool, timeline) = if device == "TPU" { ("op_profile", "TPU core") } else { ("framework_op_stats", device) };
    let mut t = DataTable::new();
    t.column("tip_type", "string", "tip_type").column("link", "string", "link").column("description", "string", "description");
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
        t.row([Cell::Text(kind.into()), Cell::Text(link), Cell::Text(description.into())]);
    }
    t.property("bottleneck", b.input_classification)
        .property("statement", b.input_statement.clone())
        .property("kernel_launch_bottleneck", "no")
        .property("kernel_launch_statement", "")
        .property("all_other_bottleneck", b.all_other_classification)
        .property("all_other_statement", b.all_other_statement.clone())
        .property("precision_statement", "")
        .property("device_collectives_bottleneck", "no")
        .property("device_collectives_statement", "")
        .property(
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
    let mut t = DataTable::new();
    t.column("percentile", "string", "percentile")
        .column("hostTimeMs", "number", "Host time (in ms)")
        .column("deviceTimeMs", "number", "Device time (in ms)")
        .column("communicationTimeMs", "number", "Host-device communication time (in ms)")
        .column("totalTimeMs", "number", "Total latency (in ms)");
    t
}
