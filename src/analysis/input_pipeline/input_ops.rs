//! The input ops of the host: the host op table's rows whose type is an input op (tf.data's
//! `Dataset` ops, infeed enqueues, host-to-device copies, or the newer stage categories), by self
//! time, each put in a category; and the host's input time by category (XProf's `GenerateHostResult`).

use super::InputTimeBreakdown;

/// A row of the host op table, as this analysis needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct HostOp {
    pub name: String,
    /// The op's type (XProf calls it the category): `Dataset`, `MemcpyHToD`, `Conv2D`, ...
    pub op_type: String,
    pub occurrences: u64,
    pub time_ps: u64,
    pub self_time_ps: u64,
    pub is_eager: bool,
}

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
    pub op: HostOp,
    pub category: InputOpCategory,
    /// Fractions of the input ops' total self time (XProf's percent ÷ 100, computed its way).
    pub time_fraction: f64,
    pub self_time_fraction: f64,
}

/// The input ops among `host_ops`, by self time (descending), then name.
pub fn input_ops(host_ops: &[HostOp]) -> Vec<InputOp> {
    let mut ops: Vec<&HostOp> = host_ops.iter().filter(|op| is_input_op(&op.op_type)).collect();
    ops.sort_by(|a, b| b.self_time_ps.cmp(&a.self_time_ps).then_with(|| a.name.cmp(&b.name)));
    let total_ps: u64 = ops.iter().map(|op| op.self_time_ps).sum();
    // XProf stores 100 · time / total and its table divides by 100 again; kept for equal doubles.
    let fraction = |ps: u64| if total_ps == 0 { 0.0 } else { 100.0 * (ps as f64 / total_ps as f64) / 100.0 };
    ops.into_iter()
        .map(|op| InputOp {
            category: category(op),
            time_fraction: fraction(op.time_ps),
            self_time_fraction: fraction(op.self_time_ps),
            op: op.clone(),
        })
        .collect()
}

/// The host's input time by category, µs. `host_to_device_ratio`: the share of a step spent sending
/// input to the device; with none, all input time is reading and preprocessing.
pub fn input_time(ops: &[InputOp], host_to_device_ratio: f64) -> InputTimeBreakdown {
    let us = |c: InputOpCategory| ops.iter().filter(|o| o.category == c).map(|o| o.op.self_time_ps as f64 / 1e6).sum::<f64>();
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

/// XProf's `SafeDivide`: 0 where the divisor is (nearly) 0.
pub fn safe_divide(x: f64, y: f64) -> f64 {
    if y.abs() < 1e-10 {
        0.0
    } else {
        x / y
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
    op_type.starts_with("InfeedEnqueue") || op_type == "MemcpyHToD"
}

fn is_input_op(op_type: &str) -> bool {
    is_enqueue(op_type) || op_type == "Dataset" || new_style(op_type).is_some()
}

fn category(op: &HostOp) -> InputOpCategory {
    if let Some(c) = new_style(&op.op_type) {
        return c;
    }
    if is_enqueue(&op.op_type) {
        return InputOpCategory::Enqueue;
    }
    let name = op.name.as_str();
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
