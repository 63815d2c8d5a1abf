//! The events of a GPU plane as XProf's GPU tools read them (its `GpuEventStats`): every event of the
//! plane's non-derived lines, with the stats that say what launched it.

use crate::analysis::device_planes::is_derived_line;
use crate::decode::xplane::{Plane, RawEvent, StatValue, XSpace};
use crate::decode::DecodeError;

/// The stats [`GpuEventStats`] reads.
const STATS: &[&str] = &["kernel_details", "tf_op", "equation", "hlo_op", "program_id", "is_eager", "flops", "bytes_accessed"];

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
}

impl GpuEventStats {
    pub fn is_kernel(&self) -> bool {
        !self.kernel_details.is_empty()
    }

    fn set(&mut self, stat: &str, value: StatValue<'_>) {
        let text = || value.as_str().unwrap_or("").to_string();
        match stat {
            "kernel_details" => self.kernel_details = text(),
            "tf_op" => self.tf_op = text(),
            "equation" => self.equation = text(),
            "hlo_op" => self.hlo_op = value.as_str().and_then(|s| s.rsplit("::").next()).unwrap_or("").to_string(),
            "program_id" => self.program_id = value.as_u64(),
            "is_eager" => self.is_eager = value.as_i64().is_some_and(|v| v != 0),
            "flops" => self.flops = value.as_u64().unwrap_or(0),
            "bytes_accessed" => self.bytes_accessed = value.as_u64().unwrap_or(0),
            _ => {}
        }
    }
}

/// Calls `visit` with every event of `plane`'s non-derived lines, in line order, and its stats.
pub fn for_each_event<'a>(
    space: &'a XSpace,
    plane: &'a Plane,
    mut visit: impl FnMut(&RawEvent<'a, '_>, GpuEventStats),
) -> Result<(), DecodeError> {
    let selection = plane.stat_selection(STATS);
    for line in plane.lines.iter().filter(|l| !is_derived_line(l.header.id)) {
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
        )?;
    }
    Ok(())
}
