//! The input ops of the host: the host op table's rows whose type is an input op (tf.data's
//! `Dataset` ops, infeed enqueues, host-to-device copies, or the newer stage categories), by self
//! time, each put in a category; and the host's input time by category (XProf's `GenerateHostResult`).

use super::InputTimeBreakdown;
use crate::analysis::op_metrics::tf_op::DATASET_OP;
use crate::analysis::op_metrics::{ps_to_us, safe_divide, OpMetrics, OpMetricsDb};
use crate::analysis::steps::events::is_infeed_enqueue;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputOpCategory {
    Enqueue,
    DemandedFileRead,
    AdvancedFileRead,
    Preprocessing,
    Unknown,
}

impl InputOpCategory {
    pub fn label(self) -> &'static str {
        match self {
            InputOpCategory::Enqueue => "Enqueue",
            InputOpCategory::DemandedFileRead => "Demanded file read",
            InputOpCategory::AdvancedFileRead => "Advanced file read",
            InputOpCategory::Preprocessing => "Preprocessing",
            InputOpCategory::Unknown => "Unknown",
        }
    }
}

/// One input op with its share of all input ops' self time.
#[derive(Debug, Clone, PartialEq)]
pub struct InputOp {
    pub name: String,
    /// XProf's count: its runs, plus the allocator events that name it.
    pub occurrences: u64,
    pub time_ps: u64,
    pub self_time_ps: u64,
    pub category: InputOpCategory,
    /// Fractions of the input ops' total self time (XProf's percent ÷ 100, computed its way).
    pub time_fraction: f64,
    pub self_time_fraction: f64,
}

/// The input ops of the host op table, by self time (descending), then name. (The op table's
/// category is the op's type: `Dataset`, `MemcpyHToD`, `Conv2D`, ...)
pub fn input_ops(host_ops: &OpMetricsDb) -> Vec<InputOp> {
    let ops: Vec<&OpMetrics> = host_ops.sorted_by_self_time(None).into_iter().filter(|op| is_input_op(&op.category)).collect();
    let total_ps: u64 = ops.iter().map(|op| op.self_time_ps).sum();
    // XProf stores 100 · time / total and its table divides by 100 again; kept for equal doubles.
    let fraction = |ps: u64| 100.0 * safe_divide(ps as f64, total_ps as f64) / 100.0;
    ops.into_iter()
        .map(|op| InputOp {
            name: op.name.clone(),
            occurrences: op.occurrences,
            time_ps: op.time_ps,
            self_time_ps: op.self_time_ps,
            category: category(&op.name, &op.category),
            time_fraction: fraction(op.time_ps),
            self_time_fraction: fraction(op.self_time_ps),
        })
        .collect()
}

/// The host's input time by category, µs. `host_to_device_ratio`: the share of a step spent sending
/// input to the device; with none, all input time is reading and preprocessing.
pub fn input_time(ops: &[InputOp], host_to_device_ratio: f64) -> InputTimeBreakdown {
    // Summed from +0.0 as XProf's map entries start (Rust's `f64` sum of nothing is -0.0, which
    // would print as "-0.000").
    let us = |c: InputOpCategory| ops.iter().filter(|o| o.category == c).fold(0.0, |sum, o| sum + ps_to_us(o.self_time_ps));
    let enqueue_us = us(InputOpCategory::Enqueue);
    let (demanded, advanced, preprocessing) =
        (us(InputOpCategory::DemandedFileRead), us(InputOpCategory::AdvancedFileRead), us(InputOpCategory::Preprocessing));
    let total_us = demanded + advanced + preprocessing;
    let ratio = host_to_device_ratio.min(1.0);
    let non_enqueue_us = if ratio != 0.0 { enqueue_us * (1.0 - ratio) / ratio } else { total_us };
    let scaled = |x: f64| safe_divide(non_enqueue_us * x, total_us);
    let (demanded_file_read_us, advanced_file_read_us, preprocessing_us) = (scaled(demanded), scaled(advanced), scaled(preprocessing));
    InputTimeBreakdown {
        enqueue_us,
        demanded_file_read_us,
        advanced_file_read_us,
        preprocessing_us,
        unclassified_non_enqueue_us: (non_enqueue_us - demanded_file_read_us - advanced_file_read_us - preprocessing_us).max(0.0),
    }
}

/// The newer stage categories.
fn new_style(op_type: &str) -> Option<InputOpCategory> {
    match op_type.to_ascii_lowercase().as_str() {
        "enqueue" => Some(InputOpCategory::Enqueue),
        "read" => Some(InputOpCategory::DemandedFileRead),
        "preprocessing" => Some(InputOpCategory::Preprocessing),
        "unknown" => Some(InputOpCategory::Unknown),
        _ => None,
    }
}

fn is_enqueue(op_type: &str) -> bool {
    is_infeed_enqueue(op_type) || op_type == "MemcpyHToD"
}

/// XProf leaves `IteratorGetNext` out: it waits for input rather than producing it.
fn is_input_op(op_type: &str) -> bool {
    is_enqueue(op_type) || op_type == DATASET_OP || new_style(op_type).is_some()
}

fn category(name: &str, op_type: &str) -> InputOpCategory {
    if let Some(c) = new_style(op_type) {
        return c;
    }
    if is_enqueue(op_type) {
        return InputOpCategory::Enqueue;
    }
    let reads_files =
        ["::TFRecord", "::TextLine", "::FixedLengthRecord", "::SSTable", "::RecordIO", "::ArrayRecord"].iter().any(|s| name.ends_with(s));
    if !reads_files {
        InputOpCategory::Preprocessing
    } else if ["::MemoryReader", "::MemoryWriter", "::Interleave", "::Prefetch", "::ParallelMap"].iter().any(|s| name.contains(s)) {
        InputOpCategory::AdvancedFileRead
    } else {
        InputOpCategory::DemandedFileRead
    }
}
