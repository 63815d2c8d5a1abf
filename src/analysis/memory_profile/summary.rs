//! XProf's peak summary, folded event by event in file order.

use super::{AggregationStats, Snapshot, Summary};

/// XProf's `UpdateProfileSummary`, `e` being the next event in file order: the last event whose
/// heap + stack is at least the peak so far becomes the peak (so with all-zero stats the last event
/// is the peak). Says whether `e` became the peak.
#[inline]
pub(super) fn add_to_summary(s: &mut Summary, e: &Snapshot) -> bool {
    s.peak_bytes_usage_lifetime = e.stats.peak_bytes_in_use;
    let in_use = e.stats.in_use_bytes();
    if in_use >= s.peak_stats.peak_bytes_in_use {
        s.peak_stats = AggregationStats { peak_bytes_in_use: in_use, ..e.stats };
        s.peak_stats_time_ps = e.time_offset_ps;
        s.memory_capacity_bytes = in_use.wrapping_add(e.stats.free_memory_bytes);
        return true;
    }
    false
}
