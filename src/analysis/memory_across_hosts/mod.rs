//! Memory across hosts: every allocator of every host of a run with its peak, capacity and a small
//! timeline on the run's one time axis, the allocator closest to its capacity first — the page to
//! open when one worker of a pod runs out of memory.
//!
//! Every figure is read from each file's Memory Profile (the engine's `Session::cached_memory_profile`, kept per
//! file), so a row's peak is exactly what that host's Memory Profile shows: heap + stack at XProf's
//! peak event, at its time.
//!
//! The time axis: a memory event's time in its Memory Profile is its offset from its line's start
//! (XProf's `time_offset_ps`), and the profiler writes the host plane's lines relative to the start of
//! the profiling session (it subtracts that start from every line), which it records, in ns since the
//! Unix epoch on the host's clock, as the `Task Environment` plane's `profile_start_time`. An event's
//! time on the run's axis is its host's session start plus its line's start plus its offset. The
//! axis's origin is the earliest session start of the run ([`MemoryAcrossHosts::origin_ns`]). A host
//! plane's lines carry one start in the TensorFlow and JAX traces; where they differ, the earliest is
//! taken (the Memory Profile itself keeps offsets only). A trace without `profile_start_time` (older
//! profilers) is placed as if its session started at the epoch.

use crate::analysis::allocation_names::{AllocatorNames, NameKind};
use crate::analysis::memory_profile::AllocatorProfile;
use crate::decode::xplane::names::{HOST_PLANE, TASK_ENV_PLANE};
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;

/// Points of each allocator's small timeline (the max filter keeps every spike).
pub const TIMELINE_POINTS: usize = 300;

/// One allocator of one host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostAllocator {
    pub file_id: u32,
    /// The file's path as opened, and its host (the file name without its profile suffix).
    pub path: String,
    pub host: String,
    pub memory_id: String,
    /// Heap + stack at the peak: the host's Memory Profile's peak.
    pub peak_bytes: i64,
    /// Heap + stack + free at the peak (the Memory Profile's capacity), where the allocator reports
    /// free bytes at all (a bounded allocator, such as TensorFlow's BFC); `None` for one that never
    /// does (it has no limit the trace knows of).
    pub capacity_bytes: Option<i64>,
    /// `peak_bytes / capacity_bytes`; `None` without a capacity.
    pub peak_fraction: Option<f64>,
    /// The peak's time on the run's axis, ps from [`MemoryAcrossHosts::origin_ns`].
    pub peak_time_ps: i64,
    /// The peak's time as the host's own Memory Profile gives it (its `time_offset_ps`).
    pub peak_offset_ps: i64,
    /// The step the peak falls in (the Memory Profile's peak step id).
    pub peak_step_id: i64,
    /// Events of the allocator.
    pub event_count: usize,
    /// The peak by module and by kind, as the host's Memory Profile names it where its allocations
    /// carry no op (JAX's; [`crate::analysis::allocation_names`]): most bytes first, `""` for
    /// allocations of no one module. Empty where the host's allocations are not named.
    #[serde(default)]
    pub peak_by_module: Vec<(String, i64)>,
    #[serde(default)]
    pub peak_by_kind: Vec<(NameKind, i64)>,
    /// At most [`TIMELINE_POINTS`] points `(time ps on the run's axis, heap + stack bytes)`, the
    /// largest of each stretch of events kept.
    pub timeline: Vec<(i64, i64)>,
}

/// The run's allocators and the axis their timelines share.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MemoryAcrossHosts {
    /// The axis's origin: the earliest host start of the run, ns since the Unix epoch.
    pub origin_ns: i64,
    /// The axis's extent: the first and last event of any allocator, ps from the origin.
    pub start_ps: i64,
    pub end_ps: i64,
    /// Closest to capacity first (by `peak_fraction`, descending), then those without a capacity by
    /// peak bytes, descending; ties by path, then memory ID.
    pub allocators: Vec<HostAllocator>,
    /// Hosts (paths) with no allocator events, or whose file is no trace: nothing to show for them.
    pub without_memory: Vec<String>,
}

/// The run's overview from each host's start (ns since the epoch) and allocator rows (their times the
/// host's own offsets): every row placed on the run's one axis, from the earliest host start, and
/// sorted closest to capacity first; `without_memory` lists the hosts with nothing to show.
pub fn combine(hosts: Vec<(i64, Vec<HostAllocator>)>, without_memory: Vec<String>) -> MemoryAcrossHosts {
    let origin_ns = hosts.iter().map(|(s, _)| *s).min().unwrap_or(0);
    let mut allocators = Vec::new();
    for (start_ns, mut rows) in hosts {
        let shift_ps = start_ns.saturating_sub(origin_ns).saturating_mul(1000);
        for r in &mut rows {
            r.peak_time_ps = r.peak_offset_ps.saturating_add(shift_ps);
            for p in &mut r.timeline {
                p.0 = p.0.saturating_add(shift_ps);
            }
        }
        allocators.extend(rows);
    }
    allocators.sort_by(closest_to_capacity_first);
    let start_ps = allocators.iter().filter_map(|a| a.timeline.first()).map(|p| p.0).min().unwrap_or(0);
    let end_ps = allocators.iter().filter_map(|a| a.timeline.last()).map(|p| p.0).max().unwrap_or(0);
    MemoryAcrossHosts { origin_ns, start_ps, end_ps, allocators, without_memory }
}

/// Where the host's memory events' offsets start, ns since the epoch: its session's start
/// (`profile_start_time`, 0 where the trace lacks it) plus the earliest start of its host plane's
/// lines.
pub fn host_start_ns(space: &crate::decode::xplane::XSpace) -> i64 {
    let session_ns = space.plane_named(TASK_ENV_PLANE).and_then(|p| p.stat("profile_start_time")).and_then(|v| v.as_i64()).unwrap_or(0);
    let line_ns = space.plane_named(HOST_PLANE).and_then(|p| p.lines.iter().map(|l| l.header.timestamp_ns).min()).unwrap_or(0);
    session_ns.saturating_add(line_ns)
}

/// The row of allocator `a` of file `file_id`, its times still the file's own offsets, its peak
/// named by `named` where the allocations are.
pub fn allocator_row(file_id: u32, path: &str, host: &str, a: &AllocatorProfile, named: Option<&AllocatorNames>) -> HostAllocator {
    let s = &a.summary;
    let peak_bytes = s.peak_stats.peak_bytes_in_use;
    let bounded = a.snapshots.iter().any(|e| e.stats.free_memory_bytes > 0);
    let capacity_bytes = bounded.then_some(s.memory_capacity_bytes).filter(|c| *c > 0);
    let (first, last) = (a.snapshots.first().map_or(0, |e| e.time_offset_ps), a.snapshots.last().map_or(0, |e| e.time_offset_ps));
    HostAllocator {
        file_id,
        path: path.to_string(),
        host: host.to_string(),
        memory_id: a.memory_id.clone(),
        peak_bytes,
        capacity_bytes,
        peak_fraction: capacity_bytes.map(|c| peak_bytes as f64 / c as f64),
        peak_time_ps: s.peak_stats_time_ps,
        peak_offset_ps: s.peak_stats_time_ps,
        peak_step_id: s.peak_step_id,
        event_count: a.snapshots.len(),
        peak_by_module: named.map(|n| n.peak.by_module.clone()).unwrap_or_default(),
        peak_by_kind: named.map(|n| n.peak.by_kind.clone()).unwrap_or_default(),
        timeline: a.timeline_window(first, last, TIMELINE_POINTS).iter().map(|p| (p.time_offset_ps, p.stats.in_use_bytes())).collect(),
    }
}

/// The table's order: rows with a capacity first, fullest first; then the others, largest peak
/// first; ties by path, then memory ID.
fn closest_to_capacity_first(a: &HostAllocator, b: &HostAllocator) -> Ordering {
    let by_fill = match (a.peak_fraction, b.peak_fraction) {
        (Some(x), Some(y)) => y.total_cmp(&x),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => b.peak_bytes.cmp(&a.peak_bytes),
    };
    by_fill.then_with(|| a.path.cmp(&b.path)).then_with(|| a.memory_id.cmp(&b.memory_id))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(path: &str, memory_id: &str, peak_bytes: i64, capacity: Option<i64>) -> HostAllocator {
        HostAllocator {
            file_id: 0,
            path: path.into(),
            host: String::new(),
            memory_id: memory_id.into(),
            peak_bytes,
            capacity_bytes: capacity,
            peak_fraction: capacity.map(|c| peak_bytes as f64 / c as f64),
            peak_time_ps: 0,
            peak_offset_ps: 0,
            peak_step_id: 0,
            event_count: 0,
            peak_by_module: Vec::new(),
            peak_by_kind: Vec::new(),
            timeline: Vec::new(),
        }
    }

    #[test]
    fn fullest_first_then_largest_without_capacity_ties_by_path() {
        let mut rows = [
            row("b", "cpu", 900, None),
            row("a", "GPU_0_bfc", 50, Some(100)),
            row("b", "GPU_0_bfc", 90, Some(100)),
            row("a", "cpu", 900, None),
            row("c", "gpu_host_bfc", 10, None),
        ];
        rows.sort_by(closest_to_capacity_first);
        let order: Vec<(&str, &str)> = rows.iter().map(|r| (r.path.as_str(), r.memory_id.as_str())).collect();
        assert_eq!(order, [("b", "GPU_0_bfc"), ("a", "GPU_0_bfc"), ("a", "cpu"), ("b", "cpu"), ("c", "gpu_host_bfc")]);
    }
}
