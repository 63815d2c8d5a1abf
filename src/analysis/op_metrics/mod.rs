//! Op metrics: the one table of "what ran, how often, for how long" that every op tool reads
//! (framework op stats, HLO op stats, Op Profile, the roofline, the input-pipeline op table).
//!
//! The shapes follow XProf's `OpMetrics` / `OpMetricsDb` protos field by field, so that each tool can
//! apply XProf's formulas to the same numbers. The host side ([`host`]) fills them from the host
//! threads' TraceMe events; the device side (GPU kernels, TPU `XLA Ops`) from the device planes.
//! Rows are keyed by (`hlo_module_id`, `name`) and merged with [`OpMetricsDbBuilder`].
//!
//! Times are picoseconds (`u64`, as XProf keeps them; sums wrap as XProf's do rather than panic).

pub mod builder;
mod eager;
pub mod host;
pub mod roofline;
pub mod tf_op;
pub mod window;

pub use builder::OpMetricsDbBuilder;
pub use roofline::{HardwareType, PerfEnv, RooflineMetrics};
pub use tf_op::{parse_tf_op_fullname, TfOp, TfOpCategory};
pub use window::TimeWindow;

use serde::{Deserialize, Serialize};

/// The name and category of the row that holds a db's idle time.
pub const IDLE: &str = "IDLE";

/// Metrics of one op, summed over its occurrences (XProf's `OpMetrics`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OpMetrics {
    /// The HLO module (program) id of a device op; 0 for a framework op; the stage id of an
    /// input-pipeline stage on the host.
    pub hlo_module_id: u64,
    /// A deterministic id of the op within its HLO module, when the trace has one.
    pub stable_op_id: Option<i64>,
    /// The op's name: a TF op name (`sequential/dense/MatMul`), a JAX op name, an HLO instruction name.
    pub name: String,
    /// A longer name (for an HLO op: its expression).
    pub long_name: String,
    /// The op's category: a framework op type (`MatMul`, `Dataset`), an HLO category (`convolution`), or
    /// [`IDLE`].
    pub category: String,
    /// For an HLO op, the framework op it came from (`tf_op` of its metadata).
    pub provenance: String,
    /// For an HLO op, the name shared by its duplicates across modules; empty for framework ops.
    pub deduplicated_name: String,
    /// Whether any occurrence ran eagerly.
    pub is_eager: bool,
    /// Number of executions (XProf's count: on the host it includes memory events that name the op,
    /// see [`OpMetrics::memory_event_occurrences`]).
    pub occurrences: u64,
    /// Of [`OpMetrics::occurrences`], those counted from allocator events (`MemoryAllocation` /
    /// `MemoryDeallocation`) whose `tf_op` stat names this op: XProf counts each as one more execution.
    /// Tidemark's own figure; `occurrences - memory_event_occurrences` is the true count.
    pub memory_event_occurrences: u64,
    /// Total time, self plus children.
    pub time_ps: u64,
    /// [`OpMetrics::time_ps`] scaled to the default performance state (0 when the trace has no scaling).
    pub normalized_time_ps: u64,
    /// The shortest occurrence (self plus children).
    pub min_time_ps: u64,
    /// Total self time (time not spent in nested ops).
    pub self_time_ps: u64,
    /// FLOPs (XProf's deprecated integer field, still what some tables print).
    pub flops: u64,
    pub model_flops: u64,
    /// FLOPs normalised to the device's peak (XProf's `flops_v2`).
    pub flops_v2: f64,
    /// The model's FLOPs (0: same as `flops_v2`).
    pub model_flops_v2: f64,
    pub vdd_energy_j: Option<f64>,
    pub fingerprint: u64,
    pub bytes_accessed: u64,
    pub memory_accessed_breakdown: Vec<MemoryAccessed>,
    pub dma_stall_ps: u64,
    /// Number of cores the op ran on.
    pub num_cores: u32,
    /// Size in bits of the type the hardware computed in.
    pub computation_primitive_size: u32,
    pub autotuned: bool,
    pub source_info: Option<SourceInfo>,
    pub core_type: CoreType,
    /// Nested ops: the ops fused into a fusion.
    pub children: Option<Box<OpMetricsDb>>,
}

/// Bytes one op moved in one memory space, one way (XProf's `OpMetrics.MemoryAccessed`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryAccessed {
    pub operation_type: MemoryOperation,
    /// Device-specific memory space id (1: HBM; see [`memory_space`]).
    pub memory_space: u64,
    pub bytes_accessed: u64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum MemoryOperation {
    #[default]
    Unknown,
    Read,
    Write,
}

/// XProf's generic memory space ids (`MemorySpace` and `PerformanceInfo.MemoryAccessed.MemorySpace`).
pub mod memory_space {
    pub const UNDEFINED: u64 = 0;
    pub const HBM: u64 = 1;
    pub const CMEM: u64 = 2;
    pub const VMEM: u64 = 3;
    pub const ON_CHIP: u64 = 0x7FFF_FFFE;
    pub const ALL: u64 = 0x7FFF_FFFF;
}

/// Where an op comes from in the user's source.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceInfo {
    pub file_name: String,
    pub line_number: i32,
    pub stack_frame: String,
}

impl SourceInfo {
    /// `file:line`, or `None` where the trace names no source file or line.
    pub fn file_line(&self) -> Option<String> {
        (!self.file_name.is_empty() && self.line_number != -1).then(|| format!("{}:{}", self.file_name, self.line_number))
    }
}

/// Which TPU core kind ran the op.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum CoreType {
    #[default]
    Unknown,
    TensorCore,
    SparseCore,
}

/// Time spent computing at 16 and 32 bits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PrecisionStats {
    pub compute_16bit_ps: u64,
    pub compute_32bit_ps: u64,
}

/// A table of op metrics with the totals they are fractions of (XProf's `OpMetricsDb`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OpMetricsDb {
    /// One row per (`hlo_module_id`, `name`), in the order first seen; an [`IDLE`] row once the db is
    /// complete.
    pub metrics: Vec<OpMetrics>,
    /// Total time: on the host, per thread the span from its first to its last op boundary (at least its
    /// op time), summed over threads.
    pub total_time_ps: u64,
    /// Σ self time of all ops.
    pub total_op_time_ps: u64,
    pub normalized_total_op_time_ps: u64,
    /// Host `InfeedEnqueue` time and the gaps between their starts (for the host-to-device ratio).
    pub total_host_infeed_enq_duration_ps: u64,
    pub total_host_infeed_enq_start_timestamp_ps_diff: u64,
    pub precision_stats: PrecisionStats,
    /// Unioned over cores (not summed): a device is idle when every core is.
    pub idle_time_ps: u64,
    pub busy_time_ps: u64,
}

impl OpMetrics {
    /// Whether this row holds idle time.
    pub fn is_idle(&self) -> bool {
        self.category == IDLE
    }

    /// The occurrences without XProf's memory-event inflation.
    pub fn true_occurrences(&self) -> u64 {
        self.occurrences.saturating_sub(self.memory_event_occurrences)
    }
}

impl OpMetricsDb {
    /// `total_op_time_ps`, or `total_time_ps` with idle (XProf's `TotalTimePs`).
    pub fn total_time_ps(&self, exclude_idle: bool) -> u64 {
        if exclude_idle {
            self.total_op_time_ps
        } else {
            self.total_time_ps
        }
    }

    /// Time without any op running (XProf's `IdleTimePs`; never negative: see [`OpMetricsDb::set_total_time_ps`]).
    pub fn idle_ps(&self) -> u64 {
        self.total_time_ps.saturating_sub(self.total_op_time_ps)
    }

    /// Sets the total time, at least the op time (XProf's `SetTotalTimePs`).
    pub fn set_total_time_ps(&mut self, total_time_ps: u64) {
        self.total_time_ps = self.total_op_time_ps.max(total_time_ps);
    }

    /// Appends the [`IDLE`] row: total minus op time, no occurrences (XProf's `AddIdleOp`).
    pub fn add_idle_op(&mut self) {
        let idle_ps = self.idle_ps();
        self.metrics.push(OpMetrics {
            name: IDLE.into(),
            category: IDLE.into(),
            time_ps: idle_ps,
            self_time_ps: idle_ps,
            ..OpMetrics::default()
        });
    }

    /// The rows by self time, longest first, then by name; at most `max_rows` (XProf's
    /// `SortedOpMetricsDb`). XProf leaves rows equal in both to its sort; here they keep the db's order.
    pub fn sorted_by_self_time(&self, max_rows: Option<usize>) -> Vec<&OpMetrics> {
        let mut rows: Vec<&OpMetrics> = self.metrics.iter().collect();
        rows.sort_by(|a, b| b.self_time_ps.cmp(&a.self_time_ps).then_with(|| a.name.cmp(&b.name)));
        if let Some(max) = max_rows {
            rows.truncate(max);
        }
        rows
    }
}

/// Picoseconds as microseconds, as XProf divides (`PicoToMicro`).
pub fn ps_to_us(ps: u64) -> f64 {
    ps as f64 / 1e6
}

/// `dividend / divisor`, or 0 when the divisor is within 1e-10 of zero (XProf's `SafeDivide`).
pub fn safe_divide(dividend: f64, divisor: f64) -> f64 {
    const EPSILON: f64 = 1e-10;
    if -EPSILON < divisor && divisor < EPSILON {
        0.0
    } else {
        dividend / divisor
    }
}
