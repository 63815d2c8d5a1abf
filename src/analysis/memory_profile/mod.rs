//! Memory Profile: per memory ID (allocator), the peak summary, the timeline (XProf's ≤1000-point sample
//! and full resolution), the breakdown of what was live at the peak, and Tidemark's own exact counts and
//! leak hints. Follows XProf's `xplane_to_memory_profile.cc` step by step (docs/formats.md §2) so the
//! [`xprof_json`] serialization equals XProf's output; where XProf is random we are deterministic, and
//! every such place says so.
//!
//! Pipeline per memory ID, as XProf does it:
//! 1. [`Summary`] from the events in file order (`add_to_summary`, line by line as the scan collects them).
//! 2. Snapshots sorted by time; each gets its step from XProf's step grouping ([`step_groups`]: the
//!    `stepId` is a group id, not the allocator's `id` stat; in a file grouped when it was saved, the
//!    `group_id` stat the event carries), missing ones filled in; deallocations take their allocation's
//!    op, region, dtype and shape.
//! 3. The sampled timeline ([`sampling::max_filter`]).
//! 4. The peak step and the breakdown at the peak ([`BreakdownRow`]).
//!
//! Times are XProf's `time_offset_ps`: the event's raw `offset_ps`, not adding its line's `timestamp_ns`.
//! That is what XProf sorts, samples and reports, so the UI and the JSON use the same clock. The
//! `/host:CPU` lines need not start together (on the AMD MI300X traces they do not), so no one offset
//! turns these times into the trace's: each event keeps its line's start, as an index into a table of
//! the allocator's distinct line starts ([`AllocatorProfile::trace_time_ps`]), for the links into the
//! Trace Viewer.
//!
//! Beside the allocators, XProf lists the TPU's XLA programs ([`hlo_modules`]).
//!
//! By job: [`scan`] reads the host plane (once, or grouping first and then on two threads),
//! [`collector`] turns each line's memory events into snapshots with their strings interned
//! ([`interner`]), kept as columns ([`columns`]), [`summary`] folds XProf's peak summary, [`pending`] puts each memory ID's events in
//! time order ([`time_order`]) while [`matcher`] matches deallocations to allocations and records
//! where each allocation ends, then gives the events their steps; [`breakdown`], [`leaks`] and
//! [`lifetimes`] read the result; [`line_starts`] keeps where each event's line starts in the trace.

mod breakdown;
mod collector;
pub mod columns;
pub mod dtype;
mod hlo_modules;
mod interner;
mod leaks;
mod lifetimes;
mod line_starts;
mod matcher;
mod pending;
pub mod sampling;
mod scan;
mod summary;
mod time_order;
pub mod xprof_json;

use crate::analysis::memory_events::{self, Activity};
use crate::analysis::step_groups;
use crate::decode::xplane::names::HOST_PLANE;
use crate::decode::xplane::XSpace;
use crate::decode::DecodeError;
use scan::{scan_in_parallel, scan_once, scan_recorded};
use serde::{Deserialize, Serialize};

pub use breakdown::BreakdownRow;
pub use columns::Snapshots;
pub use hlo_modules::ModuleRun;
pub use leaks::{EventCounts, LeakHints, LiveOpGroup, StepFloor};

/// XProf's timeline budget (`max_num_snapshots`).
pub const MAX_TIMELINE_POINTS: usize = 1000;
/// XProf's step id for "no step annotation" (`kInvalidStepId`), replaced while post-processing.
const INVALID_STEP_ID: i64 = -1;

/// The allocator's state right after one event (XProf's `MemoryAggregationStats`).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct AggregationStats {
    pub stack_reserved_bytes: i64,
    pub heap_allocated_bytes: i64,
    pub free_memory_bytes: i64,
    pub fragmentation: f64,
    pub peak_bytes_in_use: i64,
}

impl AggregationStats {
    /// Heap + stack: the height of the timeline and what the peak maximises. Wrapping, as in XProf's
    /// C++, so absurd file values cannot panic.
    pub fn in_use_bytes(&self) -> i64 {
        self.stack_reserved_bytes.wrapping_add(self.heap_allocated_bytes)
    }
}

/// What one event did (XProf's `MemoryActivityMetadata`); also the shape of the special breakdown rows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActivityMetadata {
    pub activity: Activity,
    pub requested_bytes: i64,
    pub allocation_bytes: i64,
    pub address: u64,
    pub tf_op_name: String,
    pub step_id: i64,
    pub region_type: String,
    /// XProf's name for the TensorFlow dtype ([`dtype::name`]).
    pub data_type: String,
    pub tensor_shape: String,
}

impl ActivityMetadata {
    /// Op, region, dtype and shape: the strings a breakdown row is ordered and filtered by.
    pub fn strings(&self) -> [&str; 4] {
        [&self.tf_op_name, &self.region_type, &self.data_type, &self.tensor_shape]
    }

    pub fn as_activity_ref(&self) -> ActivityRef<'_> {
        ActivityRef {
            activity: self.activity,
            requested_bytes: self.requested_bytes,
            allocation_bytes: self.allocation_bytes,
            address: self.address,
            tf_op_name: &self.tf_op_name,
            step_id: self.step_id,
            region_type: &self.region_type,
            data_type: &self.data_type,
            tensor_shape: &self.tensor_shape,
        }
    }
}

/// [`ActivityMetadata`] borrowed: a snapshot's strings resolved in its profile's string table, or a
/// special row's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ActivityRef<'a> {
    pub activity: Activity,
    pub requested_bytes: i64,
    pub allocation_bytes: i64,
    pub address: u64,
    pub tf_op_name: &'a str,
    pub step_id: i64,
    pub region_type: &'a str,
    pub data_type: &'a str,
    pub tensor_shape: &'a str,
}

impl ActivityRef<'_> {
    pub fn to_metadata(&self) -> ActivityMetadata {
        ActivityMetadata {
            activity: self.activity,
            requested_bytes: self.requested_bytes,
            allocation_bytes: self.allocation_bytes,
            address: self.address,
            tf_op_name: self.tf_op_name.to_string(),
            step_id: self.step_id,
            region_type: self.region_type.to_string(),
            data_type: self.data_type.to_string(),
            tensor_shape: self.tensor_shape.to_string(),
        }
    }
}

/// Index of a string in [`AllocatorProfile::strings`].
pub type StrId = u32;

/// What one event did, compactly: [`ActivityMetadata`] with its strings interned, since a profile keeps
/// every event (millions) and most share a handful of op names, regions, dtypes and shapes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SnapshotActivity {
    pub activity: Activity,
    pub requested_bytes: i64,
    pub allocation_bytes: i64,
    pub address: u64,
    pub step_id: i64,
    pub tf_op_name: StrId,
    pub region_type: StrId,
    /// XProf's name for the TensorFlow dtype ([`dtype::name`]).
    pub data_type: StrId,
    pub tensor_shape: StrId,
}

impl SnapshotActivity {
    /// Op, region, dtype and shape.
    pub fn string_ids(&self) -> [StrId; 4] {
        [self.tf_op_name, self.region_type, self.data_type, self.tensor_shape]
    }

    /// With its strings looked up in `strings` (the profile's [`AllocatorProfile::strings`]; an id
    /// not in it reads as "").
    pub fn resolve<'a>(&self, strings: &'a [String]) -> ActivityRef<'a> {
        let str = |id: StrId| strings.get(id as usize).map_or("", String::as_str);
        ActivityRef {
            activity: self.activity,
            requested_bytes: self.requested_bytes,
            allocation_bytes: self.allocation_bytes,
            address: self.address,
            tf_op_name: str(self.tf_op_name),
            step_id: self.step_id,
            region_type: str(self.region_type),
            data_type: str(self.data_type),
            tensor_shape: str(self.tensor_shape),
        }
    }
}

/// One event after post-processing (XProf's `MemoryProfileSnapshot`); resolve its activity with
/// [`AllocatorProfile::activity`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Snapshot {
    pub time_offset_ps: i64,
    pub stats: AggregationStats,
    pub activity: SnapshotActivity,
}

/// The peak within the profiling window, and the allocator's own lifetime peak.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Summary {
    /// `peak_bytes_in_use` of the last event in file order: the allocator's peak since it was created.
    pub peak_bytes_usage_lifetime: i64,
    /// Stats of the window's peak event, with `peak_bytes_in_use` replaced by its heap + stack.
    pub peak_stats: AggregationStats,
    pub peak_stats_time_ps: i64,
    /// Heap + stack + free at the peak.
    pub memory_capacity_bytes: i64,
    /// The step the breakdown is taken from: that of the last snapshot (in time order) at the peak height.
    pub peak_step_id: i64,
}

/// Everything about one memory ID.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AllocatorProfile {
    pub memory_id: String,
    pub summary: Summary,
    /// The distinct strings of the snapshots' activities, in order of first use.
    pub strings: Vec<String>,
    /// Full-resolution timeline: every event, sorted by time (ties keep file order), as columns.
    pub snapshots: Snapshots,
    /// Indices into `snapshots` of XProf's ≤1000-point timeline.
    pub sampled_indices: Vec<usize>,
    /// What was live at the peak, XProf's order, identical neighbours merged.
    pub breakdown: Vec<BreakdownRow>,
    /// The `unused preallocated device memory` and `stack` rows' metadata, referenced by `breakdown`.
    pub special_allocations: Vec<ActivityMetadata>,
    pub counts: EventCounts,
    pub leaks: LeakHints,
    /// Where each allocation ends, as the matcher found it ([`AllocatorProfile::lifetime`]).
    #[serde(skip)]
    ends: matcher::Ends,
    /// Where the lines holding the allocator's events start in the trace, which each snapshot
    /// indexes ([`Snapshots::line_start_index`]), and the peak event's.
    #[serde(skip)]
    line_starts: line_starts::LineStarts,
}

/// The Memory Profile of one file: one entry per memory ID, sorted by memory ID (XProf's `memoryIds`).
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct MemoryProfile {
    pub allocators: Vec<AllocatorProfile>,
    /// The XLA programs the TPU ran, which XProf lists with the profile (none on other devices).
    pub hlo_modules: Vec<ModuleRun>,
    /// The host plane's lines (indices) holding memory events, in order: where a later reader of the
    /// same events ([`crate::analysis::allocation_names`]) finds them all without reading the others.
    #[serde(skip)]
    pub lines_with_events: Vec<usize>,
}

/// One point to draw.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TimelinePoint {
    pub snapshot_index: usize,
    pub time_offset_ps: i64,
    /// The same event's time in the trace ([`AllocatorProfile::trace_time_ps`]).
    pub trace_time_ps: i64,
    pub stats: AggregationStats,
}

/// When one allocation was made and, if seen, freed: in the Memory Profile's times and in the trace's.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Lifetime {
    pub allocation_index: usize,
    pub allocated_at_ps: i64,
    /// The deallocation that freed it; `None` when the window ends first (or the address is reused by
    /// another allocation without a deallocation in between, so the end is unknown).
    pub deallocation_index: Option<usize>,
    pub deallocated_at_ps: Option<i64>,
    /// The allocation's and deallocation's own times in the trace ([`AllocatorProfile::trace_time_ps`]).
    pub allocated_trace_ps: i64,
    pub deallocated_trace_ps: Option<i64>,
}

/// Computes the Memory Profile of `space`. A file without memory events gives an empty profile.
///
/// Only the first `/host:CPU` plane is read, as XProf does. XProf outputs nothing at all for a file with
/// no such plane; we give the empty profile (the same as XProf's answer for a plane without events).
pub fn analyze(space: &XSpace) -> Result<MemoryProfile, DecodeError> {
    analyze_with(space, Scan::default())
}

/// How [`analyze`] reads the host plane. The memory events need XProf's step grouping, which needs
/// every host event (a memory event's step is its group id; ungrouped events get filled in later).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scan {
    /// One pass serves both: each event is read once. The only way in the browser (one thread).
    Once,
    /// The grouping first, alone (its pass skips the memory events' own stats, a dozen each, taking
    /// them for leaves of their enclosing nodes, which they are unless one has a stat that makes it a
    /// node: [`step_groups::NODE_MAKING_STATS`], which the memory pass checks), then the memory events
    /// on two threads sharing the lines, largest first, in a lighter pass that skips the stats of
    /// other events. The grouping's graph and the snapshots, the two largest things the analysis
    /// holds, are so never held together. The default where a second thread is available
    /// ([`crate::threads::available`]). A file that fails either pass, or fails the check, is read
    /// again by [`Scan::Once`], so the result and any error are the same either way.
    Parallel,
}

impl Default for Scan {
    fn default() -> Self {
        if crate::threads::available() {
            Scan::Parallel
        } else {
            Scan::Once
        }
    }
}

/// [`analyze`], reading the host plane as `scan` says; the result does not depend on it. A file grouped
/// when it was saved needs no grouping and is read in one pass either way.
pub fn analyze_with(space: &XSpace, scan: Scan) -> Result<MemoryProfile, DecodeError> {
    let Some(host_index) = space.planes.iter().position(|p| p.name() == HOST_PLANE) else {
        return Ok(MemoryProfile::default());
    };
    let plane = &space.planes[host_index];
    let hlo_modules = hlo_modules::module_runs(space)?;
    let Some(reader) = memory_events::Reader::new(host_index, plane) else {
        return Ok(MemoryProfile { hlo_modules, ..MemoryProfile::default() });
    };
    let scanned = match scan {
        _ if step_groups::recorded_grouped(space) => scan_recorded(space, plane, &reader),
        Scan::Once => scan_once(space, plane, &reader),
        Scan::Parallel => match scan_in_parallel(space, plane, &reader.watching(&step_groups::NODE_MAKING_STATS)) {
            Some(scanned) => Ok(scanned),
            None => scan_once(space, plane, &reader),
        },
    };
    let scan::Scanned { mut pending, steps, lines_with_events } = scanned?;
    pending.sort_by(|a, b| a.memory_id.cmp(&b.memory_id));
    let allocators = pending.into_iter().map(|p| p.finish(steps.as_ref())).collect();
    Ok(MemoryProfile { allocators, hlo_modules, lines_with_events })
}

impl MemoryProfile {
    pub fn memory_ids(&self) -> impl Iterator<Item = &str> {
        self.allocators.iter().map(|a| a.memory_id.as_str())
    }

    pub fn allocator(&self, memory_id: &str) -> Option<&AllocatorProfile> {
        self.allocators.iter().find(|a| a.memory_id == memory_id)
    }
}

impl AllocatorProfile {
    /// XProf's ≤1000-point timeline.
    pub fn sampled_timeline(&self) -> Vec<TimelinePoint> {
        self.sampled_indices.iter().filter_map(|&i| self.point(i)).collect()
    }

    /// The snapshots with `start_ps <= time_offset_ps <= end_ps`, reduced to at most `max_points` by the
    /// same max filter as the overview, so a zoomed chart never hides a spike.
    pub fn timeline_window(&self, start_ps: i64, end_ps: i64, max_points: usize) -> Vec<TimelinePoint> {
        let times = self.snapshots.times();
        let first = times.partition_point(|&t| t < start_ps);
        let end = times.partition_point(|&t| t <= end_ps).max(first);
        sampling::max_filter(end - first, max_points, |i| self.snapshots.in_use_bytes(first + i))
            .into_iter()
            .filter_map(|i| self.point(first + i))
            .collect()
    }

    /// A snapshot's activity with its strings resolved.
    pub fn activity(&self, a: &SnapshotActivity) -> ActivityRef<'_> {
        a.resolve(&self.strings)
    }

    /// The metadata a breakdown row shows: its special allocation, or its first allocation's.
    pub fn row_metadata(&self, row: &BreakdownRow) -> Option<ActivityRef<'_>> {
        match row.special_index {
            Some(k) => self.special_allocations.get(k).map(ActivityMetadata::as_activity_ref),
            None => row.snapshot_indices.first().and_then(|&i| self.snapshots.get(i)).map(|s| s.activity.resolve(&self.strings)),
        }
    }

    /// The time in the trace of snapshot `i`: its line's start plus its offset, the time the Trace
    /// Viewer places the same event at.
    pub fn trace_time_ps(&self, i: usize) -> Option<i64> {
        let offset_ps = *self.snapshots.times().get(i)?;
        Some(self.line_starts.trace_time_ps(self.snapshots.line_start_index(i), offset_ps))
    }

    /// The time in the trace of the summary's peak event; `None` when no event is the peak.
    pub fn peak_trace_time_ps(&self) -> Option<i64> {
        self.line_starts.peak_trace_time_ps(self.summary.peak_stats_time_ps)
    }

    fn point(&self, i: usize) -> Option<TimelinePoint> {
        let (s, trace_time_ps) = (self.snapshots.get(i)?, self.trace_time_ps(i)?);
        Some(TimelinePoint { snapshot_index: i, time_offset_ps: s.time_offset_ps, trace_time_ps, stats: s.stats })
    }
}
