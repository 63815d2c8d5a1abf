//! The events of a GPU plane as XProf's GPU tools read them (its `GpuEventStats`): every event of the
//! plane's non-derived lines, with the stats that say what launched it.

use crate::analysis::device_planes::is_derived_line;
use crate::analysis::op_metrics::window::starts_in;
use crate::analysis::op_metrics::TimeWindow;
use crate::decode::xplane::names::{HLO_MODULE, HLO_OP, IS_EAGER, KERNEL_DETAILS, PROGRAM_ID, TF_OP};
use crate::decode::xplane::{Line, Plane, RawEvent, StatValue, XSpace};
use crate::decode::DecodeError;

/// The stats [`GpuEventStats`] reads.
const STATS: &[&str] =
    &[KERNEL_DETAILS, TF_OP, "equation", HLO_OP, PROGRAM_ID, IS_EAGER, "flops", "bytes_accessed", HLO_MODULE, "cuda_graph_exec_id"];

/// What a GPU event's stats say (the last of a repeated stat wins; absent text is empty).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GpuEventStats {
    /// Launch parameters: present on kernels only.
    pub kernel_details: String,
    /// The framework op that launched it (`name:Type`).
    pub tf_op: String,
    /// An einsum's equation.
    pub equation: String,
    /// The innermost HLO op of the `::`-separated `hlo_op` stat.
    pub hlo_op: String,
    pub program_id: Option<u64>,
    pub is_eager: bool,
    /// FLOPs and bytes of one execution, where the profiler recorded them on the event.
    pub flops: u64,
    pub bytes_accessed: u64,
    /// The whole `hlo_op` stat: the HLO ops from outermost to innermost, `::`-separated.
    pub hlo_op_path: String,
    pub hlo_module: String,
    /// A CUDA graph's execution (which XProf treats as a kernel).
    pub is_cuda_graph_execution: bool,
}

impl GpuEventStats {
    pub fn is_kernel(&self) -> bool {
        !self.kernel_details.is_empty()
    }

    /// The HLO ops of the `hlo_op` stat, outermost first (none without one).
    pub fn hlo_op_names(&self) -> impl Iterator<Item = &str> {
        self.hlo_op_path.split("::").filter(|_| !self.hlo_op_path.is_empty())
    }

    fn set(&mut self, stat: &str, value: StatValue<'_>) {
        let text = || value.as_str().unwrap_or("").to_string();
        match stat {
            KERNEL_DETAILS => self.kernel_details = text(),
            TF_OP => self.tf_op = text(),
            "equation" => self.equation = text(),
            HLO_OP => {
                self.hlo_op_path = text();
                self.hlo_op = self.hlo_op_path.rsplit("::").next().unwrap_or("").to_string();
            }
            HLO_MODULE => self.hlo_module = text(),
            "cuda_graph_exec_id" => self.is_cuda_graph_execution = true,
            PROGRAM_ID => self.program_id = value.as_u64(),
            IS_EAGER => self.is_eager = value.as_i64().is_some_and(|v| v != 0),
            "flops" => self.flops = value.as_u64().unwrap_or(0),
            "bytes_accessed" => self.bytes_accessed = value.as_u64().unwrap_or(0),
            _ => {}
        }
    }
}

/// Calls `visit` with every event of `plane`'s non-derived lines that starts inside `window` (its
/// line's start plus its offset; every event without a window), in line order, and its stats.
pub fn for_each_event<'a>(
    space: &'a XSpace,
    plane: &'a Plane,
    window: Option<TimeWindow>,
    mut visit: impl FnMut(&RawEvent<'a, '_>, GpuEventStats),
) -> Result<(), DecodeError> {
    for line in plane.lines.iter().filter(|l| !is_derived_line(l.header.id)) {
        let line_start_ps = line.header.timestamp_ns.saturating_mul(1000);
        for_each_line_event(space, plane, line, |event, stats| {
            if starts_in(window, line_start_ps.saturating_add(event.header.offset_ps)) {
                visit(event, stats);
            }
        })?;
    }
    Ok(())
}

/// Calls `visit` with every event of one line of `plane`, in order, and its stats.
pub fn for_each_line_event<'a>(
    space: &'a XSpace,
    plane: &'a Plane,
    line: &Line,
    mut visit: impl FnMut(&RawEvent<'a, '_>, GpuEventStats),
) -> Result<(), DecodeError> {
    let selection = plane.stat_selection(STATS);
    space.for_each_raw_event(
        line,
        &selection,
        |_| true,
        |_, event| {
            let mut stats = GpuEventStats::default();
            for raw in event.stats {
                if let Some(value) = plane.raw_stat_value(raw)? {
                    stats.set(plane.stat_name(raw.metadata_id), value);
                }
            }
            visit(event, stats);
            Ok(())
        },
    )
}
