//! XProf's `input_pipeline_analyzer` JSON: `[max infeed core table, step table, host (input op) table,
//! recommendations, diagnostics]`. The max-infeed-core table and the step table have a TPU form.

use super::{c_fixed, one_digit, InputPipeline, StepRow, CATEGORIES};
use crate::analysis::data_table::{warnings_table, Cell, ColumnType, DataTable};
use serde_json::Value;
use ColumnType::{Number, String as Text};

pub fn input_pipeline_json(a: &InputPipeline) -> Value {
    Value::Array(vec![
        max_infeed_core_table(a).into_json(),
        step_table(a).into_json(),
        host_table(a).into_json(),
        recommendation_table().into_json(),
        warnings_table(&a.warnings).into_json(),
    ])
}

/// The step-time table (also the Overview Page's second table): XProf's TPU table on a TPU, else its
/// generic one.
pub fn step_table(a: &InputPipeline) -> DataTable {
    if a.hardware_type == TPU {
        tpu_step_table(a)
    } else {
        generic_step_table(a)
    }
}

/// XProf's hardware type name of TPUs.
const TPU: &str = "TPU";

/// Which core of a TPU waited longest for input at each step: its TPU table (empty elsewhere).
/// Tidemark computes no TPU steps (a TPU trace with steps is not analysed, see
/// [`crate::analysis::steps`]), so the table has XProf's headings and no step.
fn max_infeed_core_table(a: &InputPipeline) -> DataTable {
    let mut t = DataTable::new();
    if a.hardware_type == TPU {
        t.column("index", Text, "Index");
        t.row([Cell::Text("Step number")]);
        t.row([Cell::Text("Core name")]);
    }
    t
}

/// XProf's TPU step table for a TPU trace without steps (the only TPU traces analysed: see
/// [`max_infeed_core_table`]): its columns, no rows, and statistics of nothing, all 0.
fn tpu_step_table(a: &InputPipeline) -> DataTable {
    let mut t = DataTable::with_columns(&[
        ("stepnum", Text, "stepnum"),
        ("tcComputeTimeMs", Number, "TensorCore compute (in ms)"),
        ("scv0ComputeTimeMs", Number, "SparseCoreV0 compute (in ms)"),
        ("scv0InfeedTimeMs", Number, "SparseCoreV0 input (in ms)"),
        ("tcInfeedTimeMs", Number, "TensorCore input (in ms)"),
        ("tcOutfeedTimeMs", Number, "TensorCore output (in ms)"),
        ("tcIdleTimeMs", Number, "TensorCore idle (in ms)"),
        ("hostTransferTimeMs", Number, "Host transfer (in ms)"),
        ("tooltip", Text, "tooltip"),
        ("infeedPercentAverage", Number, "% step time waiting for input data"),
        ("infeedPercentMin", Number, "Infeed percent min"),
        ("infeedPercentMax", Number, "Infeed percent max"),
    ]);
    t.column_property("tooltip", "role", "tooltip");
    t.column_property("infeedPercentMin", "role", "interval");
    t.column_property("infeedPercentMax", "role", "interval");
    t.property("hardware_type", a.hardware_type);
    t.property(
        "step_time_graph_column_ids",
        "stepnum,tcComputeTimeMs,scv0ComputeTimeMs,scv0InfeedTimeMs,tcInfeedTimeMs,tcOutfeedTimeMs,tcIdleTimeMs,hostTransferTimeMs,tooltip",
    );
    let s = &a.step_time_ms;
    let two = |x: f64| c_fixed(x, 2);
    for (key, value) in
        [("average", s.average), ("standard_deviation", s.standard_deviation), ("minimum", s.minimum), ("maximum", s.maximum)]
    {
        t.property(&format!("steptime_ms_{key}"), two(value));
        // The share of each step waiting for input: no step, no share.
        t.property(&format!("infeed_percent_{key}"), one_digit(0.0));
    }
    for key in
        ["active_steptime", "tc_active", "tc_compute", "tc_infeed", "tc_outfeed", "tc_idle", "scv0_compute", "scv0_infeed", "host_transfer"]
    {
        t.property(&format!("{key}_ms_average"), two(0.0));
    }
    t.property("input_conclusion", a.bottleneck.input_statement.clone());
    t.property("output_conclusion", "");
    t.property("summary_nextstep", a.summary_next_step.clone());
    t
}

/// XProf's step table on hardware other than TPUs.
fn generic_step_table(a: &InputPipeline) -> DataTable {
    let mut columns = vec![("stepnum", Text, "Step number")];
    columns.extend(CATEGORIES.iter().map(|c| (c.id, Number, c.label)));
    columns.extend([("tooltip", Text, "tooltip"), ("stepTimeMs", Number, "Step time")]);
    let mut t = DataTable::with_columns(&columns);
    t.column_property("tooltip", "role", "tooltip");
    t.property(
        "step_time_graph_column_ids",
        "stepnum,deviceComputeTimeMs,deviceToDeviceTimeMs,deviceCollectivesTimeMs,hostComputeTimeMs,kernelLaunchTimeMs,infeedTimeMs,outfeedTimeMs,compileTimeMs,otherTimeMs, tooltip",
    );
    t.property("hardware_type", a.hardware_type);
    let s = &a.step_time_ms;
    t.property("steptime_ms_average", one_digit(s.average));
    t.property("steptime_ms_standard_deviation", one_digit(s.standard_deviation));
    t.property("steptime_ms_minimum", one_digit(s.minimum));
    t.property("steptime_ms_maximum", one_digit(s.maximum));
    for (c, summary) in CATEGORIES.iter().zip(&a.category_ms) {
        t.property(&format!("{}_avg", c.key), one_digit(summary.average));
        t.property(&format!("{}_sdv", c.key), one_digit(summary.standard_deviation));
    }
    let b = &a.bottleneck;
    t.property("input_conclusion", b.input_statement.clone());
    // XProf writes each statement under its `_bottleneck` key too.
    for key in ["device_collectives", "kernel_launch"] {
        t.property(&format!("{key}_bottleneck"), "");
        t.property(&format!("{key}_statement"), "");
    }
    t.property("all_other_bottleneck", b.all_other_statement.clone());
    t.property("all_other_statement", b.all_other_statement.clone());
    t.property("summary_nextstep", a.summary_next_step.clone());
    for s in &a.steps {
        push_step_row(&mut t, s);
    }
    t
}

fn push_step_row(t: &mut DataTable, s: &StepRow) {
    let breakdown = s.breakdown_ms();
    // The tooltip lists the categories last to first.
    let mut tooltip = format!("Step {}, duration: {} ms", s.name, c_fixed(s.step_time_ms, 2));
    for (c, ms) in CATEGORIES.iter().zip(breakdown).rev() {
        tooltip.push_str(&format!("\n-{}: {} ms", c.tooltip, c_fixed(ms, 2)));
    }
    let mut cells = vec![Cell::Text(&s.name)];
    cells.extend(breakdown.into_iter().map(Cell::Number));
    cells.extend([Cell::Text(&tooltip), Cell::Number(s.step_time_ms)]);
    t.row(cells);
}

fn host_table(a: &InputPipeline) -> DataTable {
    let mut t = DataTable::with_columns(&[
        ("opName", Text, "Input Op"),
        ("count", Number, "Count"),
        ("timeInMs", Number, "Total Time (in ms)"),
        ("timeInPercent", Number, "Total Time (as % of total input-processing time)"),
        ("selfTimeInMs", Number, "Total Self Time (in ms)"),
        ("selfTimeInPercent", Number, "Total Self Time (as % of total input-processing time)"),
        ("category", Text, "Category"),
    ]);
    for o in &a.input_ops {
        t.row([
            Cell::Text(&o.name),
            Cell::Number(o.occurrences as f64),
            Cell::Number(o.time_ps as f64 / 1e9),
            Cell::Number(o.time_fraction),
            Cell::Number(o.self_time_ps as f64 / 1e9),
            Cell::Number(o.self_time_fraction),
            Cell::Text(o.category.label()),
        ]);
    }
    let b = &a.input_time;
    let three = |x: f64| c_fixed(x, 3);
    t.property("enqueue_us", three(b.enqueue_us));
    t.property("demanded_file_read_us", three(b.demanded_file_read_us));
    t.property("advanced_file_read_us", three(b.advanced_file_read_us));
    t.property("preprocessing_us", three(b.preprocessing_us));
    t.property("unclassified_nonequeue_us", three(b.unclassified_non_enqueue_us));
    t
}

/// XProf's five fixed tips on the input pipeline.
pub const RECOMMENDATIONS: [&str; 5] = [
    "Enqueuing data: you may want to combine small input data chunks into fewer but larger chunks.",
    "Data preprocessing: you may increase num_parallel_calls in <a href=\"https://www.tensorflow.org/api_docs/python/tf/data/Dataset#map\" target=\"_blank\">Dataset map()</a> or preprocess the data OFFLINE.",
    "Reading data from files in advance: you may tune parameters in the following tf.data API (<a href=\"https://www.tensorflow.org/api_docs/python/tf/data/Dataset#prefetch\" target=\"_blank\">prefetch size</a>, <a href=\"https://www.tensorflow.org/api_docs/python/tf/data/Dataset#interleave\" target=\"_blank\">interleave cycle_length</a>, <a href=\"https://www.tensorflow.org/api_docs/python/tf/data/TFRecordDataset#class_tfrecorddataset\" target=\"_blank\">reader buffer_size</a>)",
    "Reading data from files on demand: you should read data IN ADVANCE using the following tf.data API (<a href=\"https://www.tensorflow.org/api_docs/python/tf/data/Dataset#prefetch\" target=\"_blank\">prefetch</a>, <a href=\"https://www.tensorflow.org/api_docs/python/tf/data/Dataset#interleave\" target=\"_blank\">interleave</a>, <a href=\"https://www.tensorflow.org/api_docs/python/tf/data/TFRecordDataset#class_tfrecorddataset\" target=\"_blank\">reader buffer</a>)",
    "Other data reading or processing: you may consider using the <a href=\"https://www.tensorflow.org/programmers_guide/datasets\" target=\"_blank\">tf.data API</a> (if you are not using it now)",
];

fn recommendation_table() -> DataTable {
    let mut t = DataTable::with_columns(&[("link", Text, "link")]);
    for r in RECOMMENDATIONS {
        t.row([Cell::Text(r)]);
    }
    t
}
