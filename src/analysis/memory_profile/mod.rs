//! Memory Profile: per memory ID (allocator), the peak summary, the timeline (XProf's ≤1000-point sample
//! and full resolution), the breakdown of what was live at the peak, and Tidemark's own exact counts and
//! leak hints. Follows XProf's `xplane_to_memory_profile.cc` step by step (docs/formats.md §2) so the
//! [`xprof_json`] serialization equals XProf's output; where XProf is random we are deterministic, and
//! every such place says so.
//!
//! Pipeline per memory ID, as XProf does it:
//! 1. [`Summary`] from the events in file order (`add_to_summary`, line by line as the scan collects them).
//! 2. Snapshots sorted by time; each gets its step from XProf's step grouping ([`step_groups`]: the
//!    `stepId` is a group id, not the allocator's `id` stat), missing ones filled in; deallocations take
//!    their allocation's op, region, dtype and shape.
//! 3. The sampled timeline ([`sampling::max_filter`]).
//! 4. The peak step and the breakdown at the peak ([`BreakdownRow`]).
//!
//! Times are XProf's `time_offset_ps`: the event's raw `offset_ps`, not adding its line's `timestamp_ns`.
//! That is what XProf sorts, samples and reports, so the UI and the JSON use the same clock. (It is only
//! wrong for traces whose `/host:CPU` lines have different `timestamp_ns`; profilers write 0 there.)

mod breakdown;
pub mod dtype;
mod leaks;
pub mod sampling;
pub mod xprof_json;

use crate::analysis::memory_events::{self, Activity, MemoryEvent};
use crate::analysis::step_groups;
use crate::decode::xplane::{EventAt, Plane, RawEvent, Want, XSpace};
use crate::decode::DecodeError;
use crate::fast_hash::{FastMap, FxHasher};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::hash::{BuildHasher, BuildHasherDefault};
use std::ops::Range;
use std::sync::{Mutex, OnceLock};

pub use breakdown::BreakdownRow;
pub use leaks::{EventCounts, LeakHints, LiveOpGroup, StepFloor};

/// The plane XProf reads memory events from (its `kHostThreadsPlaneName`): the first plane of that name.
pub const HOST_PLANE: &str = "/host:CPU";
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
    /// Full-resolution timeline: every event, sorted by time (ties keep file order).
    pub snapshots: Vec<Snapshot>,
    /// Indices into `snapshots` of XProf's ≤1000-point timeline.
    pub sampled_indices: Vec<usize>,
    /// What was live at the peak, XProf's order, identical neighbours merged.
    pub breakdown: Vec<BreakdownRow>,
    /// The `unused preallocated device memory` and `stack` rows' metadata, referenced by `breakdown`.
    pub special_allocations: Vec<ActivityMetadata>,
    pub counts: EventCounts,
    pub leaks: LeakHints,
}

/// The Memory Profile of one file: one entry per memory ID, sorted by memory ID (XProf's `memoryIds`).
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct MemoryProfile {
    pub allocators: Vec<AllocatorProfile>,
}

/// One point to draw.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TimelinePoint {
    pub snapshot_index: usize,
    pub time_offset_ps: i64,
    pub stats: AggregationStats,
}

/// When one allocation was made and, if seen, freed.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Lifetime {
    pub allocation_index: usize,
    pub allocated_at_ps: i64,
    /// The deallocation that freed it; `None` when the window ends first (or the address is reused by
    /// another allocation without a deallocation in between, so the end is unknown).
    pub deallocation_index: Option<usize>,
    pub deallocated_at_ps: Option<i64>,
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
    /// The grouping's pass (and the building of its graph) on a second thread while this one reads
    /// the memory events: of the lines the grouping pass has been through, where it notes each
    /// line's memory events, else of the largest line left, in a lighter pass of its own that skips
    /// the stats of other events. Once through, both threads read what is left, in stretches. The
    /// grouping's pass skips the memory events' own stats in turn (a dozen each), taking them for
    /// leaves of their enclosing nodes, which they are unless one has a stat that makes it a node
    /// ([`step_groups::NODE_MAKING_STATS`]): the memory pass checks. The default where a second
    /// thread is available ([`crate::threads::available`]). A file that fails either pass, or fails
    /// the check, is read again by [`Scan::Once`], so the result and any error are the same either way.
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

/// [`analyze`], reading the host plane as `scan` says; the result does not depend on it.
pub fn analyze_with(space: &XSpace, scan: Scan) -> Result<MemoryProfile, DecodeError> {
    let Some(host_index) = space.planes.iter().position(|p| p.name() == HOST_PLANE) else {
        return Ok(MemoryProfile::default());
    };
    let plane = &space.planes[host_index];
    let Some(reader) = memory_events::Reader::new(host_index, plane) else {
        return Ok(MemoryProfile::default());
    };
    let scanned = match scan {
        Scan::Once => scan_once(space, plane, &reader),
        Scan::Parallel => match scan_in_parallel(space, plane, &reader.watching(&step_groups::NODE_MAKING_STATS)) {
            Some(scanned) => Ok(scanned),
            None => scan_once(space, plane, &reader),
        },
    };
    let (mut pending, groups) = scanned?;
    pending.sort_by(|a, b| a.memory_id.cmp(&b.memory_id));
    Ok(MemoryProfile { allocators: pending.into_iter().map(|p| p.finish(groups.as_ref())).collect() })
}

/// Each memory ID's profile up to its steps (in order of appearance), and the host plane's step
/// groups (`None` when there were no memory events to give steps to).
type Scanned = (Vec<Pending>, Option<step_groups::StepGroups>);

fn scan_once<'a>(space: &'a XSpace, plane: &'a Plane, reader: &memory_events::Reader<'a>) -> Result<Scanned, DecodeError> {
    let mut grouper = step_groups::Grouper::new(space, plane, |m| reader.wants(m));
    let mut lines = Vec::with_capacity(plane.lines.len());
    let mut event = MemoryEvent::default();
    let stats = plane.stat_selection(&step_groups::STATS);
    for (line_index, line) in plane.lines.iter().enumerate() {
        grouper.start_line(line);
        let mut collector = Collector::default();
        space.for_each_raw_event(
            line,
            &stats,
            |_| true,
            |event_index, ev| {
                grouper.push(ev)?;
                if reader.read_into(line, line_index, event_index, ev, &mut event)? {
                    collector.add(&event);
                }
                Ok(())
            },
        )?;
        lines.push(collector);
    }
    let pending = Pending::from_lines(lines);
    let groups = (!pending.is_empty()).then(|| grouper.finish());
    Ok((pending, groups))
}

fn scan_in_parallel<'a>(space: &'a XSpace, plane: &'a Plane, reader: &memory_events::Reader<'a>) -> Option<Scanned> {
    // Where each line's memory events are, noted by the grouping pass as it goes: a line read after
    // that is not walked again, only its memory events are read. This thread reads the noted lines
    // in file order, behind the grouping pass, and walks the largest line left when none is. Once
    // the grouping pass is through, both threads read what is left in stretches of a line's memory
    // events ([`Claims::split`]). So the work shares itself out, whichever pass is the longer on the
    // trace at hand, and neither thread is left reading a long line alone at the end.
    let noted: Vec<OnceLock<Vec<EventAt>>> = plane.lines.iter().map(|_| OnceLock::new()).collect();
    let claims = Mutex::new(Claims::new(plane));
    let claim = |f: &dyn Fn(&mut Claims) -> Option<Work>| claims.lock().ok().and_then(|mut c| f(&mut c));
    let no_stats = plane.stat_selection(&[]);
    // A stretch's events are collected as if it were a line of its own: stretches of a line, in
    // order, make up the line (ranks, summary, strings and time order all follow file order).
    let read = |(line_index, stretch): Work| {
        let line = &plane.lines[line_index];
        let (mut collector, mut event) = (Collector::default(), MemoryEvent::default());
        let add = |event_index, ev: &RawEvent<'a, '_>| {
            if reader.read_into(line, line_index, event_index, ev, &mut event)? {
                collector.add(&event);
            }
            Ok(())
        };
        let start = match (noted[line_index].get(), stretch) {
            (Some(events), stretch) => {
                let stretch = stretch.unwrap_or(0..events.len());
                space.for_each_event_at(line, &events[stretch.clone()], add)?;
                stretch.start
            }
            (None, _) => {
                space.for_each_raw_event(line, &no_stats, |m| reader.wants(m), add)?;
                0
            }
        };
        Ok::<_, DecodeError>(((line_index, start), collector))
    };
    let (noted, claims) = (&noted, &claims);
    std::thread::scope(|scope| {
        let (lines_read, lines_to_merge) = std::sync::mpsc::channel();
        let grouping = scope.spawn(move || {
            let mut grouper = step_groups::Grouper::new(space, plane, |m| reader.wants(m));
            let stats = plane.stat_selection(&step_groups::STATS);
            let plain = grouper.plain_tracked();
            let want = |m| if plain.get(m) { Want::Header } else { Want::Stats };
            for (line_index, line) in plane.lines.iter().enumerate() {
                grouper.start_line(line);
                // Not for a line the other thread is already reading.
                let note = claims.lock().is_ok_and(|c| !c.taken[line_index]);
                let mut events = Vec::new();
                space.for_each_raw_event(line, &stats, want, |event_index, ev| {
                    if note && reader.wants(ev.header.metadata_id) {
                        events.push(ev.at(event_index));
                    }
                    grouper.push(ev)
                })?;
                let _ = noted[line_index].set(events);
            }
            if let Ok(mut c) = claims.lock() {
                c.split(|line| noted[line].get().map_or(0, Vec::len));
            }
            let mine: Vec<_> = std::iter::from_fn(|| claim(&Claims::stretch)).map(read).collect::<Result<_, _>>()?;
            // The other thread merges the lines while this one finishes the grouping.
            let _ = lines_read.send(mine);
            Ok::<_, DecodeError>(grouper.finish())
        });
        let next = |c: &mut Claims| c.next(noted);
        let memory: Result<Vec<_>, DecodeError> = std::iter::from_fn(|| claim(&next)).map(read).collect();
        // The work that needs no steps is done while the grouping thread may still be running.
        let pending = lines_to_merge.recv().ok().zip(memory.ok()).filter(|_| !reader.saw_unexpected()).map(|(theirs, mut lines)| {
            lines.extend(theirs);
            lines.sort_by_key(|&(at, _)| at);
            Pending::from_lines(lines.into_iter().map(|(_, c)| c).collect())
        });
        let groups = grouping.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)).ok()?;
        Some((pending?, Some(groups)))
    })
}

/// What one thread reads at a time in [`scan_in_parallel`]: a line, or a stretch of the memory events
/// noted on it (indices into its notes).
type Work = (usize, Option<Range<usize>>);

/// Memory events in a stretch ([`Claims::split`]): a few hundred microseconds of reading, so that the
/// last stretch taken leaves the other thread waiting for little.
const STRETCH: usize = 2048;

/// Which lines of the host plane have had their memory events taken for reading ([`scan_in_parallel`]),
/// with three ways through them, each passing every line once at most.
struct Claims {
    taken: Vec<bool>,
    /// Lines by size, largest first, and the next one to look at.
    by_size: Vec<usize>,
    next_largest: usize,
    /// The next line, in file order, to look at among those the grouping pass has noted.
    next_noted: usize,
    /// Once every line is noted ([`Claims::split`]), what is left, in stretches.
    stretches: Option<std::vec::IntoIter<Work>>,
}

impl Claims {
    fn new(plane: &Plane) -> Self {
        let mut by_size: Vec<usize> = (0..plane.lines.len()).collect();
        by_size.sort_by_key(|&i| std::cmp::Reverse(plane.lines[i].range().len()));
        Claims { taken: vec![false; by_size.len()], by_size, next_largest: 0, next_noted: 0, stretches: None }
    }

    fn take(&mut self, line: usize) -> Option<usize> {
        (!std::mem::replace(&mut self.taken[line], true)).then_some(line)
    }

    /// Once every line is noted (with `memory_events` each): the lines not taken yet, cut into
    /// stretches of [`STRETCH`] memory events, the lines with the most first.
    fn split(&mut self, memory_events: impl Fn(usize) -> usize) {
        let mut left: Vec<usize> = std::iter::from_fn(|| self.largest()).collect();
        left.sort_by_key(|&line| std::cmp::Reverse(memory_events(line)));
        let stretches = left.into_iter().flat_map(|line| {
            let n = memory_events(line);
            (0..n.div_ceil(STRETCH)).map(move |k| (line, Some(k * STRETCH..n.min((k + 1) * STRETCH))))
        });
        self.stretches = Some(stretches.collect::<Vec<_>>().into_iter());
    }

    /// The next stretch, once [`Claims::split`] has cut them.
    fn stretch(&mut self) -> Option<Work> {
        self.stretches.as_mut()?.next()
    }

    /// What the thread that is not grouping reads next: a noted line in file order while the
    /// grouping pass goes on, else the largest line left; then the stretches.
    fn next<T>(&mut self, noted: &[OnceLock<T>]) -> Option<Work> {
        if self.stretches.is_some() {
            return self.stretch();
        }
        self.noted(noted).or_else(|| self.largest()).map(|line| (line, None))
    }

    /// The largest line not yet taken.
    fn largest(&mut self) -> Option<usize> {
        while let Some(&line) = self.by_size.get(self.next_largest) {
            self.next_largest += 1;
            if let Some(line) = self.take(line) {
                return Some(line);
            }
        }
        None
    }

    /// The first line not yet taken among those noted so far (the grouping pass notes them in order).
    fn noted<T>(&mut self, noted: &[OnceLock<T>]) -> Option<usize> {
        while noted.get(self.next_noted).is_some_and(|n| n.get().is_some()) {
            self.next_noted += 1;
            if let Some(line) = self.take(self.next_noted - 1) {
                return Some(line);
            }
        }
        None
    }
}

/// Collects the memory events of one line per memory ID.
#[derive(Default)]
struct Collector<'a> {
    /// Per memory ID, in order of appearance.
    ids: Vec<(Cow<'a, str>, Collected<'a>)>,
    /// Where each memory ID is in `ids`.
    index: FastMap<Cow<'a, str>, usize>,
    /// The previous event's entry in `ids`: nearly every event repeats it.
    recent: Option<usize>,
    /// Memory events added so far.
    count: usize,
}

impl<'a> Collector<'a> {
    /// Adds `e`, the line's next memory event, as a snapshot without its step.
    fn add(&mut self, e: &MemoryEvent<'a>) {
        let k = match self.recent {
            Some(k) if same_bytes(self.ids[k].0.as_bytes(), e.memory_id.as_bytes()) => k,
            _ => {
                let ids = &mut self.ids;
                *self.index.entry(e.memory_id.clone()).or_insert_with(|| {
                    ids.push((e.memory_id.clone(), Collected::default()));
                    ids.len() - 1
                })
            }
        };
        self.recent = Some(k);
        let c = &mut self.ids[k].1;
        // Until the step grouping is done, the event's rank among the line's memory events stands in
        // for its step ([`Pending::from_lines`], [`Pending::finish`]).
        let s = snapshot(e, self.count as i64, &mut c.strings);
        if s.stats.in_use_bytes() >= c.peak.map_or(0, |i| c.snapshots[i].stats.in_use_bytes()) {
            c.peak = Some(c.snapshots.len());
        }
        c.snapshots.push(s);
        self.count += 1;
    }
}

/// One memory ID's events on one line as the scan collects them.
#[derive(Default)]
struct Collected<'a> {
    /// In file order, each with its rank among the line's memory events as its step.
    snapshots: Vec<Snapshot>,
    strings: Interner<'a>,
    /// The line's part of the summary, which XProf takes in file order ([`add_to_summary`]): its last
    /// event whose heap + stack is at least that of every event before it on the line (and at least 0).
    /// Whole lines then fold in order as their events would have one by one, since only such an
    /// event can be the last to raise or equal the peak.
    peak: Option<usize>,
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
        let first = self.snapshots.partition_point(|s| s.time_offset_ps < start_ps);
        let end = self.snapshots.partition_point(|s| s.time_offset_ps <= end_ps).max(first);
        let window = &self.snapshots[first..end];
        sampling::max_filter(window.len(), max_points, |i| window[i].stats.in_use_bytes())
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
            None => row.snapshot_indices.first().and_then(|&i| self.snapshots.get(i)).map(|s| self.activity(&s.activity)),
        }
    }

    /// Lifetimes of every allocation merged into each breakdown row (none for a special row), row by
    /// row, each in the row's order; the same as [`Self::lifetime`] of each, in one pass over the
    /// snapshots for all rows (a row can merge thousands of allocations and a view shows every row,
    /// and looking each one's end up separately would be quadratic).
    pub fn breakdown_lifetimes(&self) -> Vec<Vec<Lifetime>> {
        let rows = || self.breakdown.iter().flat_map(|r| r.snapshot_indices.iter().copied());
        let mut ends: FastMap<usize, Option<usize>> = FastMap::default();
        let Some(first) = rows().min() else { return vec![Vec::new(); self.breakdown.len()] };
        let wanted: FastMap<usize, ()> = rows().map(|i| (i, ())).collect();
        // Allocations of the rows waiting for the next event at their address.
        let mut waiting: FastMap<u64, Vec<usize>> = FastMap::default();
        for (k, s) in self.snapshots.iter().enumerate().skip(first) {
            if let Some(pending) = waiting.remove(&s.activity.address) {
                let end = (s.activity.activity == Activity::Deallocation).then_some(k);
                ends.extend(pending.into_iter().map(|i| (i, end)));
            }
            if wanted.contains_key(&k) && s.activity.activity == Activity::Allocation {
                waiting.entry(s.activity.address).or_default().push(k);
            }
        }
        ends.extend(waiting.into_values().flatten().map(|i| (i, None)));
        self.breakdown
            .iter()
            .map(|row| {
                row.snapshot_indices
                    .iter()
                    .filter_map(|&i| {
                        let end = *ends.get(&i)?;
                        Some(Lifetime {
                            allocation_index: i,
                            allocated_at_ps: self.snapshots[i].time_offset_ps,
                            deallocation_index: end,
                            deallocated_at_ps: end.map(|k| self.snapshots[k].time_offset_ps),
                        })
                    })
                    .collect()
            })
            .collect()
    }

    /// The lifetime of the allocation at `snapshots[allocation_index]`: it ends at the next event at
    /// the same address if that is a deallocation. `None` if the index is not an allocation.
    pub fn lifetime(&self, allocation_index: usize) -> Option<Lifetime> {
        let alloc = self.snapshots.get(allocation_index)?;
        if alloc.activity.activity != Activity::Allocation {
            return None;
        }
        let next = self.snapshots[allocation_index + 1..]
            .iter()
            .position(|s| s.activity.address == alloc.activity.address)
            .map(|k| allocation_index + 1 + k)
            .filter(|&k| self.snapshots[k].activity.activity == Activity::Deallocation);
        Some(Lifetime {
            allocation_index,
            allocated_at_ps: alloc.time_offset_ps,
            deallocation_index: next,
            deallocated_at_ps: next.map(|k| self.snapshots[k].time_offset_ps),
        })
    }

    fn point(&self, i: usize) -> Option<TimelinePoint> {
        self.snapshots.get(i).map(|s| TimelinePoint { snapshot_index: i, time_offset_ps: s.time_offset_ps, stats: s.stats })
    }
}

/// One memory ID's profile as far as it goes without the step grouping, which may still be running on
/// another thread: summary, time order, deallocation metadata, sampled timeline, counts.
struct Pending {
    memory_id: String,
    /// In time order, each with its rank among the host plane's memory events as its step.
    snapshots: Vec<Snapshot>,
    strings: Vec<String>,
    summary: Summary,
    sampled_indices: Vec<usize>,
    counts: leaks::EventCounts,
    matched: leaks::Matched,
}

impl Pending {
    /// Each memory ID's profile up to its steps, in order of appearance, from the memory events of
    /// every line of the host plane, in order ([`Collector`]s).
    fn from_lines(lines: Vec<Collector>) -> Vec<Pending> {
        // Where each line's ranks start among the plane's memory events.
        let starts: Vec<i64> = lines
            .iter()
            .scan(0i64, |next, c| {
                let start = *next;
                *next += c.count as i64;
                Some(start)
            })
            .collect();
        let mut order: Vec<String> = Vec::new();
        let mut runs: FastMap<String, Vec<(i64, Collected)>> = FastMap::default();
        for (c, start) in lines.into_iter().zip(starts) {
            for (id, collected) in c.ids {
                let id = id.into_owned();
                if !runs.contains_key(&id) {
                    order.push(id.clone());
                }
                runs.entry(id).or_default().push((start, collected));
            }
        }
        order
            .into_iter()
            .map(|id| {
                let lines = runs.remove(&id).unwrap_or_default();
                Pending::new(id, lines)
            })
            .collect()
    }

    /// One memory ID's events, line by line in order, each line's with where its ranks start.
    fn new(memory_id: String, lines: Vec<(i64, Collected)>) -> Self {
        // One string table in order of first use, as one pass over the lines would make it; each
        // line's events then index it as they are put in time order, and carry their rank among the
        // plane's memory events. The lines' summaries fold in file order.
        let mut strings = Interner::default();
        let mut runs = Vec::with_capacity(lines.len());
        let mut summary = Summary::default();
        for (start, c) in lines {
            if let Some(peak) = c.peak {
                add_to_summary(&mut summary, &c.snapshots[peak]);
            }
            if let Some(last) = c.snapshots.last() {
                summary.peak_bytes_usage_lifetime = last.stats.peak_bytes_in_use;
            }
            let ids = strings.merge(c.strings);
            runs.push(Run { snapshots: c.snapshots, ids, start });
        }
        // As each event takes its place in time order: its deallocation metadata, and its height for
        // the sampled timeline, which then reads a compact list rather than every snapshot again.
        let n = runs.iter().map(|r| r.snapshots.len()).sum();
        let mut matcher = DeallocationMatcher::with_capacity(n);
        let mut heights = Vec::with_capacity(n);
        let snapshots = merge_in_time_order(runs, n, |placed, s| {
            matcher.place(placed, s);
            heights.push(s.stats.in_use_bytes());
        });
        let sampled_indices = sampling::max_filter(heights.len(), MAX_TIMELINE_POINTS, |i| heights[i]);
        let matched = matcher.finish();
        let counts = leaks::counts(&snapshots, &sampled_indices, matched.allocations);
        Pending { memory_id, snapshots, strings: strings.strings, summary, sampled_indices, counts, matched }
    }

    /// The rest of the pipeline, once each memory event's step (group id) is known by its rank.
    fn finish(self, groups: Option<&step_groups::StepGroups>) -> AllocatorProfile {
        let Pending { memory_id, mut snapshots, strings, mut summary, sampled_indices, counts, matched } = self;
        // One pass: each event's step (its group, else XProf's `UpdateStepId`: the last valid step
        // + 1, 0 before any), the peak's step (that of the last event at the peak height), and
        // the steps' floors.
        let mut last_valid = INVALID_STEP_ID;
        let mut floors = leaks::StepFloors::default();
        summary.peak_step_id = 0;
        for s in &mut snapshots {
            let rank = usize::try_from(s.activity.step_id).ok();
            let step_id = match groups.zip(rank).and_then(|(g, r)| g.group_id(r)) {
                Some(group) => {
                    last_valid = group;
                    group
                }
                None => last_valid.wrapping_add(1),
            };
            s.activity.step_id = step_id;
            let in_use = s.stats.in_use_bytes();
            if in_use == summary.peak_stats.peak_bytes_in_use {
                summary.peak_step_id = step_id;
            }
            floors.add(step_id, in_use);
        }
        let (breakdown, special_allocations) = breakdown::at_peak(&snapshots, &strings, &summary);
        let leaks = leaks::hints(&snapshots, &strings, matched, floors);
        AllocatorProfile { memory_id, summary, strings, snapshots, sampled_indices, breakdown, special_allocations, counts, leaks }
    }
}

/// Gives each distinct string one [`StrId`], in order of first use (so the table is deterministic).
/// Dtype names have their own ids (a dtype name may also appear as, say, a shape: harmless).
struct Interner<'a> {
    /// By a hash of the string: looked up once per new event string, and the match then checked
    /// against `strings` inline ([`same_bytes`]), where a map of the strings themselves compares
    /// keys through the C library's `memcmp`. A string whose hash another already has goes to
    /// `collided`.
    ids: FastMap<u64, StrId>,
    collided: FastMap<Box<str>, StrId>,
    dtypes: FastMap<i64, StrId>,
    /// `dtypes` for the small dtype numbers (TensorFlow's are below 128), looked up once per event:
    /// [`NO_ID`] until first met.
    small_dtypes: [StrId; 128],
    strings: Vec<String>,
    /// Per field (op, region, shape), the string of the last event that borrowed it from the file, and
    /// its id. Events in a row often repeat them, and comparing with the copy in the file just read is
    /// cheaper than a table lookup, whose own copies a long scan keeps pushing out of the cache.
    recent: [Option<(&'a str, StrId)>; 3],
}

/// "No id yet" in [`Interner::small_dtypes`].
const NO_ID: StrId = StrId::MAX;

impl Default for Interner<'_> {
    fn default() -> Self {
        Interner {
            ids: FastMap::default(),
            collided: FastMap::default(),
            dtypes: FastMap::default(),
            small_dtypes: [NO_ID; 128],
            strings: Vec::new(),
            recent: [None; 3],
        }
    }
}

impl<'a> Interner<'a> {
    /// [`Interner::id`] of a string of field `field` (see [`Interner::recent`]). A `Cow`, not a `str`:
    /// only a string borrowed from the file lives long enough to be remembered.
    #[inline]
    #[allow(clippy::ptr_arg)]
    fn field_id(&mut self, field: usize, s: &Cow<'a, str>) -> StrId {
        match (s, self.recent[field]) {
            (Cow::Borrowed(s), Some((last, id))) if same_bytes(last.as_bytes(), s.as_bytes()) => id,
            (Cow::Borrowed(s), _) => {
                let id = self.id(s);
                self.recent[field] = Some((s, id));
                id
            }
            (Cow::Owned(s), _) => self.id(s),
        }
    }

    fn id(&mut self, s: &str) -> StrId {
        let hash = BuildHasherDefault::<FxHasher>::default().hash_one(s);
        match self.ids.get(&hash) {
            Some(&id) if same_bytes(self.strings[id as usize].as_bytes(), s.as_bytes()) => id,
            Some(_) => match self.collided.get(s) {
                Some(&id) => id,
                None => {
                    let id = self.push(s.to_string());
                    self.collided.insert(s.into(), id);
                    id
                }
            },
            None => {
                let id = self.push(s.to_string());
                self.ids.insert(hash, id);
                id
            }
        }
    }

    /// The id of a dtype's XProf name (names are made once per distinct dtype, not per event).
    #[inline]
    fn dtype(&mut self, dtype: i64) -> StrId {
        let small = usize::try_from(dtype).ok().filter(|&d| d < self.small_dtypes.len());
        if let Some(&id) = small.map(|d| &self.small_dtypes[d]).filter(|&&id| id != NO_ID) {
            return id;
        }
        let id = match self.dtypes.get(&dtype) {
            Some(&id) => id,
            None => {
                let id = self.push(dtype::name(dtype));
                self.dtypes.insert(dtype, id);
                id
            }
        };
        if let Some(d) = small {
            self.small_dtypes[d] = id;
        }
        id
    }

    /// Adds the strings of `other` (another line's table) that are new, in its order; returns the id
    /// here of each of its ids.
    fn merge(&mut self, other: Interner) -> Vec<StrId> {
        let mut dtype_of: Vec<Option<i64>> = vec![None; other.strings.len()];
        for (&dtype, &id) in &other.dtypes {
            dtype_of[id as usize] = Some(dtype);
        }
        other
            .strings
            .into_iter()
            .zip(dtype_of)
            .map(|(s, dtype)| match dtype {
                Some(d) => self.dtype(d),
                None => self.id(&s),
            })
            .collect()
    }

    fn push(&mut self, s: String) -> StrId {
        self.strings.push(s);
        (self.strings.len() - 1) as StrId
    }
}

/// `a == b`, word by word inline: op names and shapes are a few dozen bytes, for which a call to the
/// C library's `memcmp` costs more than the comparison.
#[inline(always)]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let (mut x, mut y) = (a.chunks_exact(8), b.chunks_exact(8));
    let word = |c: &[u8]| u64::from_ne_bytes(c.try_into().expect("8 bytes"));
    (&mut x).zip(&mut y).all(|(p, q)| word(p) == word(q)) && x.remainder().iter().zip(y.remainder()).all(|(p, q)| p == q)
}

/// One line's events of one memory ID, in file order, with its string ids still the line's own.
struct Run {
    snapshots: Vec<Snapshot>,
    /// The profile's string id of each of the line's.
    ids: Vec<StrId>,
    /// Where the line's ranks start among the plane's memory events.
    start: i64,
}

impl Run {
    /// Event `i` with the profile's string ids and its rank among the plane's memory events.
    #[inline]
    fn take(&self, i: usize) -> Snapshot {
        let mut s = self.snapshots[i];
        let a = &mut s.activity;
        for id in [&mut a.tf_op_name, &mut a.region_type, &mut a.data_type, &mut a.tensor_shape] {
            *id = self.ids[*id as usize];
        }
        a.step_id += self.start;
        s
    }
}

/// The `n` events of `runs` (each line's) in one list by time, stably: events at the same time in the
/// order of the runs, then of each run. Only (time, run, index) triples are sorted, and each event is
/// then copied once, to its place, after `place` has seen it with the events placed before it; the
/// sort finds the runs already in order (a line's events nearly always are) and merges them.
fn merge_in_time_order(runs: Vec<Run>, n: usize, mut place: impl FnMut(&[Snapshot], &mut Snapshot)) -> Vec<Snapshot> {
    let mut out = Vec::with_capacity(n);
    let mut push = |mut s: Snapshot| {
        place(&out, &mut s);
        out.push(s);
    };
    match runs.as_slice() {
        [run] if run.snapshots.is_sorted_by_key(|s| s.time_offset_ps) => (0..run.snapshots.len()).for_each(|i| push(run.take(i))),
        _ => {
            let mut order: Vec<(i64, u32, u32)> = Vec::with_capacity(n);
            for (r, run) in runs.iter().enumerate() {
                order.extend(run.snapshots.iter().enumerate().map(|(i, s)| (s.time_offset_ps, r as u32, i as u32)));
            }
            order.sort_by_key(|&(time, _, _)| time);
            order.into_iter().for_each(|(_, r, i)| push(runs[r as usize].take(i as usize)));
        }
    }
    out
}

/// XProf's `UpdateProfileSummary`, `e` being the next event in file order: the last event whose
/// heap + stack is at least the peak so far becomes the peak (so with all-zero stats the last event
/// is the peak).
#[inline]
fn add_to_summary(s: &mut Summary, e: &Snapshot) {
    s.peak_bytes_usage_lifetime = e.stats.peak_bytes_in_use;
    let in_use = e.stats.in_use_bytes();
    if in_use >= s.peak_stats.peak_bytes_in_use {
        s.peak_stats = AggregationStats { peak_bytes_in_use: in_use, ..e.stats };
        s.peak_stats_time_ps = e.time_offset_ps;
        s.memory_capacity_bytes = in_use.wrapping_add(e.stats.free_memory_bytes);
    }
}

fn snapshot<'a>(e: &MemoryEvent<'a>, step_id: i64, strings: &mut Interner<'a>) -> Snapshot {
    Snapshot {
        time_offset_ps: e.offset_ps,
        stats: AggregationStats {
            stack_reserved_bytes: e.stack_reserved_bytes,
            heap_allocated_bytes: e.heap_allocated_bytes,
            free_memory_bytes: e.free_memory_bytes,
            fragmentation: e.fragmentation,
            peak_bytes_in_use: e.peak_bytes_in_use,
        },
        activity: SnapshotActivity {
            activity: e.activity,
            requested_bytes: e.requested_bytes,
            allocation_bytes: e.allocation_bytes,
            address: e.address,
            step_id,
            tf_op_name: strings.field_id(0, &e.tf_op_name),
            region_type: strings.field_id(1, &e.region_type),
            data_type: strings.dtype(e.data_type),
            tensor_shape: strings.field_id(2, &e.tensor_shape),
        },
    }
}

/// XProf's `UpdateDeallocation`, event by event in time order: a deallocation takes op, region, dtype
/// and shape from the oldest unmatched allocation at its address (a repeated allocation at a pending
/// address is ignored). The same walk gives the leak hints and counts what they need of it
/// ([`leaks::Matched`]): an address is pending here exactly when it is live there, where the newest
/// allocation at it counts.
struct DeallocationMatcher {
    /// Address → (oldest, newest) unmatched allocation.
    pending: FastMap<u64, (usize, usize)>,
    matched: leaks::Matched,
}

impl DeallocationMatcher {
    /// For `n` events: sized for the live allocations of a typical trace up front rather than grown
    /// by rehashing.
    fn with_capacity(n: usize) -> Self {
        DeallocationMatcher {
            pending: FastMap::with_capacity_and_hasher(n.min(1 << 12), Default::default()),
            matched: leaks::Matched::default(),
        }
    }

    /// `s`, the event after `placed` (those before it in time order).
    #[inline]
    fn place(&mut self, placed: &[Snapshot], s: &mut Snapshot) {
        let (i, m) = (placed.len(), &mut self.matched);
        let d = &mut s.activity;
        match d.activity {
            Activity::Allocation => {
                m.allocations += 1;
                m.allocated_bytes = m.allocated_bytes.wrapping_add(d.allocation_bytes);
                self.pending.entry(d.address).and_modify(|(_, newest)| *newest = i).or_insert((i, i));
            }
            Activity::Deallocation => {
                m.deallocated_bytes = m.deallocated_bytes.wrapping_add(d.allocation_bytes);
                match self.pending.remove(&d.address) {
                    Some((j, _)) => {
                        let a = &placed[j].activity;
                        d.tf_op_name = a.tf_op_name;
                        d.region_type = a.region_type;
                        d.data_type = a.data_type;
                        d.tensor_shape = a.tensor_shape;
                    }
                    None => m.unmatched_deallocations += 1,
                }
            }
        }
    }

    fn finish(self) -> leaks::Matched {
        let mut m = self.matched;
        m.live_at_end = self.pending.into_values().map(|(_, newest)| newest).collect();
        m.live_at_end.sort_unstable();
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each line is taken once: noted lines in file order while the grouping pass goes on, else the
    /// largest left; once all are noted, the rest in stretches, the lines with the most memory events
    /// first.
    #[test]
    fn lines_are_claimed_once_each() {
        // Line sizes 5, 50, 20, 40, 30 bytes, with 9, 0, 1, 3, 7 memory events (STRETCH + 1 on line 4).
        let memory_events = [9, 0, 1, 3, STRETCH + 1];
        let mut c = Claims { taken: vec![false; 5], by_size: vec![1, 3, 4, 2, 0], next_largest: 0, next_noted: 0, stretches: None };
        let noted: Vec<OnceLock<()>> = (0..5).map(|_| OnceLock::new()).collect();
        assert_eq!(c.next(&noted), Some((1, None)), "none noted: the largest");
        let _ = noted[0].set(());
        let _ = noted[1].set(());
        assert_eq!(c.next(&noted), Some((0, None)), "noted, in file order");
        assert_eq!(c.next(&noted), Some((3, None)), "line 1 was taken, line 2 not noted yet: the largest left");
        (2..5).for_each(|l| {
            let _ = noted[l].set(());
        });
        c.split(|l| memory_events[l]);
        let rest: Vec<Work> = std::iter::from_fn(|| c.next(&noted)).collect();
        assert_eq!(rest, [(4, Some(0..STRETCH)), (4, Some(STRETCH..STRETCH + 1)), (2, Some(0..1))]);
    }

    /// The summary folded line by line ([`Collected::peak`]) equals XProf's event-by-event fold over
    /// the file, ties and negative heights included, and the time order merges lines stably.
    #[test]
    fn line_summaries_fold_as_the_events_would() {
        // (heap, stack, time) per event, per line, in file order.
        let lines: [&[(i64, i64, i64)]; 4] =
            [&[(5, 0, 10), (7, 0, 30), (7, 0, 20), (-1, 0, 40)], &[(-3, 0, 15), (-2, 0, 25)], &[(0, 7, 30), (6, 0, 5)], &[(-9, 0, 30)]];
        let mut collectors = Vec::new();
        let mut expected = Summary::default();
        for line in lines {
            let mut c = Collector::default();
            for &(heap, stack, time) in line {
                let e = MemoryEvent {
                    memory_id: "m".into(),
                    heap_allocated_bytes: heap,
                    stack_reserved_bytes: stack,
                    peak_bytes_in_use: heap * 10 + time,
                    offset_ps: time,
                    ..MemoryEvent::default()
                };
                c.add(&e);
                add_to_summary(&mut expected, c.ids[0].1.snapshots.last().expect("added"));
            }
            collectors.push(c);
        }
        let [p] = Pending::from_lines(collectors).try_into().ok().expect("one memory ID");
        assert_eq!(p.summary, expected);
        assert_eq!((expected.peak_stats_time_ps, expected.peak_bytes_usage_lifetime), (30, -60));
        let order: Vec<(i64, i64)> = p.snapshots.iter().map(|s| (s.time_offset_ps, s.stats.heap_allocated_bytes)).collect();
        assert_eq!(order, [(5, 6), (10, 5), (15, -3), (20, 7), (25, -2), (30, 7), (30, 0), (30, -9), (40, -1)]);
    }

    /// Ids in order of first use, the same string always the same id, even when another string has
    /// its hash (forced here: a real collision of the keyed 64-bit hash cannot be picked).
    #[test]
    fn interner_ids_survive_hash_collisions() {
        let mut t = Interner::default();
        assert_eq!((t.id("conv"), t.id("relu"), t.id("conv")), (0, 1, 0));
        let hash_of_pool = BuildHasherDefault::<FxHasher>::default().hash_one("pool");
        t.ids.insert(hash_of_pool, 0); // "pool" now collides with "conv"
        assert_eq!((t.id("pool"), t.id("pool"), t.id("conv"), t.id("relu")), (2, 2, 0, 1));
        assert_eq!(t.strings, ["conv", "relu", "pool"]);
    }
}
