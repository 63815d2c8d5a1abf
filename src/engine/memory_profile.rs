//! The Memory Profile of an opened file, and the page's views of it.
//!
//! The analysis walks every allocator event, so the worker computes it once per file and keeps it
//! ([`Session::cached_memory_profile`]); switching memory IDs, zooming and selecting rows then only
//! slice the kept profile. The views below are what crosses the worker boundary: the summary, the
//! ≤1000-point timeline with each point's event, and the breakdown with each row's metadata and
//! lifetimes resolved — never the full snapshot list, which can be millions of events.

use super::{EngineError, Session};
use crate::analysis::allocation_names::{self, AllocationName, AllocationNames, AllocatorNames, NameKind, PeakRow, PoolAtPeak};
use crate::analysis::memory_events::Activity;
use crate::analysis::memory_profile::{
    self, ActivityMetadata, AggregationStats, AllocatorProfile, EventCounts, LeakHints, Lifetime, MemoryProfile, Summary, TimelinePoint,
};
use crate::decode::Profile;
use serde::{Deserialize, Serialize};

/// Most points one timeline reply may carry, whatever the page asks: a few screens wide.
pub const MAX_WINDOW_POINTS: usize = 8192;

/// One point of the timeline with the event that produced it, for hover details.
///
/// It crosses to the page as JSON arrays, not an object ([`TimelineEventRow`]): a reply carries a
/// thousand of them (up to [`MAX_WINDOW_POINTS`] when zooming), and as objects their field names made
/// up most of the reply (the view of `d1_tf_keras_bfc`: 424 KB of timeline, 22 ms to write in the
/// worker and 36 ms to parse in the page).
#[derive(Debug, Clone, PartialEq)]
pub struct TimelineEvent {
    pub point: TimelinePoint,
    pub activity: ActivityMetadata,
    /// What asked for the event's allocation: an index into [`NamedPeakView::labels`], where the
    /// trace's allocations are named.
    pub name: Option<u32>,
}

/// [`TimelineEvent`] on the wire: the point (snapshot index, time, time in the trace), its stats
/// (stack, heap, free, fragmentation, peak), then the event (activity, requested and allocated bytes,
/// address, op, step, region, dtype, shape), then its name's index.
type TimelineEventRow = (usize, i64, i64, StatsRow, ActivityRow, Option<u32>);
type StatsRow = (i64, i64, i64, f64, i64);
type ActivityRow = (Activity, i64, i64, u64, String, i64, String, String, String);

impl Serialize for TimelineEvent {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (p, s, a) = (&self.point, &self.point.stats, &self.activity);
        (
            p.snapshot_index,
            p.time_offset_ps,
            p.trace_time_ps,
            (s.stack_reserved_bytes, s.heap_allocated_bytes, s.free_memory_bytes, s.fragmentation, s.peak_bytes_in_use),
            (
                a.activity,
                a.requested_bytes,
                a.allocation_bytes,
                a.address,
                &a.tf_op_name,
                a.step_id,
                &a.region_type,
                &a.data_type,
                &a.tensor_shape,
            ),
            self.name,
        )
            .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for TimelineEvent {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let (
            snapshot_index,
            time_offset_ps,
            trace_time_ps,
            (stack_reserved_bytes, heap_allocated_bytes, free_memory_bytes, fragmentation, peak_bytes_in_use),
            (activity, requested_bytes, allocation_bytes, address, tf_op_name, step_id, region_type, data_type, tensor_shape),
            name,
        ): TimelineEventRow = Deserialize::deserialize(deserializer)?;
        let stats = AggregationStats { stack_reserved_bytes, heap_allocated_bytes, free_memory_bytes, fragmentation, peak_bytes_in_use };
        Ok(TimelineEvent {
            point: TimelinePoint { snapshot_index, time_offset_ps, trace_time_ps, stats },
            activity: ActivityMetadata {
                activity,
                requested_bytes,
                allocation_bytes,
                address,
                tf_op_name,
                step_id,
                region_type,
                data_type,
                tensor_shape,
            },
            name,
        })
    }
}

/// One breakdown row as the page shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BreakdownEntry {
    pub metadata: ActivityMetadata,
    pub occurrences: u64,
    /// See [`memory_profile::BreakdownRow::freed_before_peak`].
    pub freed_before_peak: u64,
    /// Lifetimes of the row's allocations (empty for the special rows), for drawing on the timeline.
    pub lifetimes: Vec<Lifetime>,
    /// What asked for the row's (first) allocation ([`AllocationName::label`]), where the trace's
    /// allocations are named ([`AllocatorView::named`]); `None` for a computed row or without names.
    pub name: Option<String>,
}

/// What was live at an allocator's peak, named by what asked for each allocation: the module run and
/// its buffer-assignment allocation, the compiler, a transfer ([`allocation_names`]; Tidemark's own,
/// for traces whose allocations carry no op). Every live allocation, not only the peak step's as
/// XProf's breakdown: the rows, `before_trace_bytes` and `stack_bytes` add up to `peak_bytes`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NamedPeakView {
    /// What the trace cannot say, one sentence each, with what to record.
    pub reasons: Vec<String>,
    /// Why this allocator's events could not be named, when they could not (nothing else is then set).
    pub unaligned: Option<String>,
    pub peak_bytes: i64,
    pub before_trace_bytes: i64,
    pub stack_bytes: i64,
    /// Live allocations grouped by name, most bytes first.
    pub rows: Vec<NamedPeakRow>,
    /// The rows' bytes per kind and per module (`""` for none), most first: the peak's bars.
    pub by_kind: Vec<(NameKind, i64)>,
    pub by_module: Vec<(String, i64)>,
    /// The peak's two bars: its bytes by kind (the stack and what was allocated before the trace as
    /// kinds of their own) and by module, each part a share of `peak_bytes`.
    pub peak_bars: Bars,
    /// The last floor's two bars, each part a share of its `in_use_bytes`; `None` without floors.
    pub last_floor_bars: Option<Bars>,
    /// The by-kind grouping's "preallocated but unused", which the trace bounds but does not state.
    pub pool: PoolAtPeak,
    /// The label of each of the allocator's names ([`AllocationName::label`]), which a timeline
    /// point's [`TimelineEvent::name`] indexes: the hover names the allocation under the cursor.
    pub labels: Vec<String>,
    /// Each step's heap floor (its lowest heap + stack: what stays allocated between steps) by name,
    /// kind and module, in the leak hints' step order.
    pub floors: Vec<NamedFloor>,
    /// What is still live when the window ends, by name: the leak hints' suspects (their bytes add up
    /// to the leak hints' `live_at_end_bytes`).
    pub live_at_end: Vec<NamedPeakRow>,
    pub live_at_end_by_module: Vec<(String, i64)>,
    /// `live_at_end_by_module` as a bar, each part a share of all that is live at the end.
    pub live_at_end_bar: Vec<BarPart>,
}

/// One part of a bar of bytes, with its share of the bar's total worked out here: the page draws its
/// width and prints the share as given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BarPart {
    /// What the part's figures are keyed by (`data-key`): the kind's label, the module (`""`: none).
    pub key: String,
    pub label: String,
    pub bytes: i64,
    /// `bytes` over the bar's total (0 when the total is not positive).
    pub fraction: f64,
}

/// A set of bytes by kind and by module, as two bars.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Bars {
    pub by_kind: Vec<BarPart>,
    pub by_module: Vec<BarPart>,
}

impl Bars {
    /// The bars of `by_kind` and `by_module`, with `stack_bytes` and `before_trace_bytes` as kinds of
    /// their own where positive; each part a share of `total`.
    fn of(by_kind: &[(NameKind, i64)], by_module: &[(String, i64)], stack_bytes: i64, before_trace_bytes: i64, total: i64) -> Bars {
        let kinds = by_kind
            .iter()
            .map(|&(k, bytes)| (k.label().to_string(), k.label().to_string(), bytes))
            .chain((stack_bytes > 0).then(|| ("stack".to_string(), "stack".to_string(), stack_bytes)))
            .chain(
                (before_trace_bytes > 0)
                    .then(|| ("before_trace".to_string(), "allocated before the trace".to_string(), before_trace_bytes)),
            );
        Bars { by_kind: bar(kinds, total), by_module: module_bar(by_module, total) }
    }
}

/// Bytes by module as a bar, each part a share of `total`.
fn module_bar(by_module: &[(String, i64)], total: i64) -> Vec<BarPart> {
    let label = |m: &String| if m.is_empty() { "no module".to_string() } else { m.clone() };
    bar(by_module.iter().map(|(m, bytes)| (m.clone(), label(m), *bytes)), total)
}

/// `(key, label, bytes)` parts as a bar of `total`.
fn bar(parts: impl Iterator<Item = (String, String, i64)>, total: i64) -> Vec<BarPart> {
    let share = |bytes: i64| if total > 0 { bytes as f64 / total as f64 } else { 0.0 };
    parts.map(|(key, label, bytes)| BarPart { key, label, bytes, fraction: share(bytes) }).collect()
}

/// One step's heap floor by name: what was live at the step's lowest heap + stack. The rows,
/// `before_trace_bytes` and `stack_bytes` add up to `in_use_bytes`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NamedFloor {
    pub step_id: i64,
    pub in_use_bytes: i64,
    pub stack_bytes: i64,
    pub before_trace_bytes: i64,
    /// The floor's event's time in the trace, for a link to it.
    pub trace_time_ps: Option<i64>,
    pub rows: Vec<NamedPeakRow>,
    pub by_kind: Vec<(NameKind, i64)>,
    pub by_module: Vec<(String, i64)>,
}

/// Allocations of one name live at the peak.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NamedPeakRow {
    pub name: AllocationName,
    pub allocations: u64,
    pub allocation_bytes: i64,
    pub requested_bytes: i64,
    /// For a module's temporary: the module's largest buffers at its own peak (instruction, bytes),
    /// what fills the temporary.
    pub largest_buffers: Vec<(String, i64)>,
}

/// One memory ID, ready to draw.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AllocatorView {
    pub memory_id: String,
    pub summary: Summary,
    pub counts: EventCounts,
    pub leaks: LeakHints,
    /// Events of this memory ID (the full-resolution timeline's length).
    pub snapshot_count: usize,
    /// Time of the first and last event: the timeline's full extent.
    pub first_time_ps: i64,
    pub last_time_ps: i64,
    /// The peak's event's time in the trace (`None` when no event is the peak).
    pub peak_trace_time_ps: Option<i64>,
    /// The latest of the events' times in the trace: where a lifetime not seen to end is followed to.
    pub end_trace_time_ps: i64,
    /// Every event reports zero bytes (TensorFlow's CPU allocator without BFC records stats but no
    /// sizes): there is nothing to draw, only counts.
    pub zero_bytes: bool,
    /// XProf's ≤1000-point sampled timeline.
    pub timeline: Vec<TimelineEvent>,
    pub breakdown: Vec<BreakdownEntry>,
    /// The peak by name, for a trace whose allocations carry no op (JAX's); `None` for one whose ops
    /// name them (TensorFlow's).
    pub named: Option<NamedPeakView>,
}

/// The Memory Profile of a file as the page asks for it: which memory IDs exist, and one of them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryProfileView {
    pub file_id: u32,
    /// Sorted, as XProf lists them. Empty when the file has no allocator events.
    pub memory_ids: Vec<String>,
    /// The requested memory ID, or the first one; `None` only when there are none. Its peak, points
    /// and lifetimes carry their events' times in the trace, so its links into the Trace Viewer cost
    /// no second request.
    pub allocator: Option<AllocatorView>,
}

/// A stretch of the full-resolution timeline (zooming in).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimelineWindow {
    pub file_id: u32,
    pub memory_id: String,
    pub start_ps: i64,
    pub end_ps: i64,
    /// Events in the window; `events.len() < event_count` means they were reduced by the max filter.
    pub event_count: usize,
    pub events: Vec<TimelineEvent>,
}

impl Session {
    /// The Memory Profile of file `file_id` (an XProf trace), handed over: the one kept since the file
    /// was opened (no longer kept), else computed now.
    pub fn take_memory_profile(&mut self, file_id: u32) -> Result<MemoryProfile, EngineError> {
        match self.memory_profiles.remove(&file_id) {
            Some(p) => Ok(p),
            None => self.compute_memory_profile(file_id),
        }
    }

    fn compute_memory_profile(&self, file_id: u32) -> Result<MemoryProfile, EngineError> {
        let f = self.file(file_id)?;
        let file = f.file.name.clone();
        match &f.file.profile {
            Profile::XSpace(space) => {
                memory_profile::analyze(space).map_err(|e| EngineError::Analysis { file, tool: TOOL.into(), message: e.to_string() })
            }
            other => Err(EngineError::WrongFormat {
                file,
                tool: TOOL.into(),
                found: other.format(),
                needs: "an XProf trace (*.xplane.pb) with allocator events".into(),
            }),
        }
    }

    /// Every allocator event of file `file_id` named by the module run, compile or transfer it belongs
    /// to and the buffer-assignment allocation it is, given the file's Memory Profile `profile`.
    pub fn allocation_names(&self, file_id: u32, profile: &MemoryProfile) -> Result<AllocationNames, EngineError> {
        let f = self.file(file_id)?;
        let file = f.file.name.clone();
        match &f.file.profile {
            Profile::XSpace(space) => allocation_names::analyze(space, profile).map_err(|e| EngineError::Analysis {
                file,
                tool: TOOL.into(),
                message: e.to_string(),
            }),
            other => Err(EngineError::WrongFormat {
                file,
                tool: TOOL.into(),
                found: other.format(),
                needs: "an XProf trace (*.xplane.pb) with allocator events".into(),
            }),
        }
    }

    /// The Memory Profile of `file_id`, computed on first use and kept until the file is closed.
    pub fn cached_memory_profile(&mut self, file_id: u32) -> Result<&MemoryProfile, EngineError> {
        if !self.memory_profiles.contains_key(&file_id) {
            let profile = self.compute_memory_profile(file_id)?;
            self.memory_profiles.insert(file_id, profile);
        }
        self.memory_profiles.get(&file_id).ok_or(EngineError::UnknownFile { file_id })
    }

    /// The Memory Profile of `file_id` and its allocation names where its allocations carry no op
    /// ([`allocation_names::needed`]), both computed on first use and kept until the file is closed.
    pub fn cached_named_memory_profile(&mut self, file_id: u32) -> Result<(&MemoryProfile, Option<&AllocationNames>), EngineError> {
        self.cached_memory_profile(file_id)?;
        let profile = self.memory_profiles.get(&file_id).ok_or(EngineError::UnknownFile { file_id })?;
        if !self.allocation_names.contains_key(&file_id) {
            let names = if allocation_names::needed(profile) { Some(self.allocation_names(file_id, profile)?) } else { None };
            self.allocation_names.insert(file_id, names);
        }
        let profile = self.memory_profiles.get(&file_id).ok_or(EngineError::UnknownFile { file_id })?;
        Ok((profile, self.allocation_names.get(&file_id).and_then(Option::as_ref)))
    }

    /// The page's view of `memory_id` (or the first memory ID) of file `file_id`, its peak named where
    /// the trace's allocations carry no op ([`allocation_names::needed`]); the names are computed on
    /// first use and kept with the profile.
    pub fn memory_profile_view(&mut self, file_id: u32, memory_id: Option<&str>) -> Result<MemoryProfileView, EngineError> {
        let file = self.file(file_id)?.file.name.clone();
        let (profile, names) = self.cached_named_memory_profile(file_id)?;
        let chosen = match memory_id {
            Some(id) => Some(profile.allocator(id).ok_or_else(|| no_such_memory_id(profile, file, id))?),
            None => profile.allocators.first(),
        };
        let (memory_ids, allocator) = (profile.memory_ids().map(str::to_string).collect(), chosen.map(|a| allocator_view(a, names)));
        Ok(MemoryProfileView { file_id, memory_ids, allocator })
    }

    /// The events of `memory_id` between `start_ps` and `end_ps` (inclusive), at most `max_points` of
    /// them (capped at [`MAX_WINDOW_POINTS`]), reduced by the max filter so no spike is lost.
    pub fn memory_timeline_window(
        &mut self,
        file_id: u32,
        memory_id: &str,
        start_ps: i64,
        end_ps: i64,
        max_points: usize,
    ) -> Result<TimelineWindow, EngineError> {
        let file = self.file(file_id)?.file.name.clone();
        let (profile, names) = self.cached_named_memory_profile(file_id)?;
        let a = profile.allocator(memory_id).ok_or_else(|| no_such_memory_id(profile, file, memory_id))?;
        let times = a.snapshots.times();
        let first = times.partition_point(|&t| t < start_ps);
        let end = times.partition_point(|&t| t <= end_ps).max(first);
        let points = a.timeline_window(start_ps, end_ps, max_points.clamp(1, MAX_WINDOW_POINTS));
        let names = names.and_then(|n| n.allocator(memory_id));
        Ok(TimelineWindow {
            file_id,
            memory_id: memory_id.to_string(),
            start_ps,
            end_ps,
            event_count: end - first,
            events: events(a, names, points),
        })
    }
}

/// The tool's name in errors.
const TOOL: &str = "Memory Profile";

fn no_such_memory_id(profile: &MemoryProfile, file: String, id: &str) -> EngineError {
    EngineError::UnknownMemoryId { file, memory_id: id.to_string(), known: profile.memory_ids().map(str::to_string).collect() }
}

/// The events of `points`, each named from `names` (the allocator's, where named and aligned).
fn events(a: &AllocatorProfile, names: Option<&AllocatorNames>, points: Vec<TimelinePoint>) -> Vec<TimelineEvent> {
    points
        .into_iter()
        .filter_map(|point| {
            let name = names.and_then(|n| n.name_of.get(point.snapshot_index).copied()).filter(|&i| i != u32::MAX);
            a.snapshots.get(point.snapshot_index).map(|s| TimelineEvent { point, activity: a.activity(&s.activity).to_metadata(), name })
        })
        .collect()
}

fn allocator_view(a: &AllocatorProfile, names: Option<&AllocationNames>) -> AllocatorView {
    let allocator_names = names.and_then(|n| n.allocator(&a.memory_id));
    let zero_bytes = a.snapshots.iter().all(|s| {
        s.activity.allocation_bytes == 0 && s.stats.in_use_bytes() == 0 && s.stats.free_memory_bytes == 0 && s.stats.peak_bytes_in_use == 0
    });
    AllocatorView {
        memory_id: a.memory_id.clone(),
        summary: a.summary.clone(),
        counts: a.counts,
        leaks: a.leaks.clone(),
        snapshot_count: a.snapshots.len(),
        first_time_ps: a.snapshots.first().map_or(0, |s| s.time_offset_ps),
        last_time_ps: a.snapshots.last().map_or(0, |s| s.time_offset_ps),
        peak_trace_time_ps: a.peak_trace_time_ps(),
        end_trace_time_ps: (0..a.snapshots.len()).filter_map(|i| a.trace_time_ps(i)).max().unwrap_or(0),
        zero_bytes,
        timeline: events(a, allocator_names, a.sampled_timeline()),
        breakdown: a
            .breakdown
            .iter()
            .zip(a.breakdown_lifetimes())
            .filter_map(|(row, lifetimes)| {
                Some(BreakdownEntry {
                    metadata: a.row_metadata(row)?.to_metadata(),
                    occurrences: row.occurrences,
                    freed_before_peak: row.freed_before_peak,
                    lifetimes,
                    name: allocator_names
                        .filter(|_| row.special_index.is_none())
                        .and_then(|n| n.name(*row.snapshot_indices.first()?))
                        .map(|n| n.label.clone()),
                })
            })
            .collect(),
        named: names.map(|n| named_peak(n, a, allocator_names)),
    }
}

/// The named peak of one allocator, `n` its names (`None` when the trace's names have none for it).
fn named_peak(names: &AllocationNames, a: &AllocatorProfile, n: Option<&AllocatorNames>) -> NamedPeakView {
    let mut view = NamedPeakView {
        reasons: names.reasons.clone(),
        unaligned: None,
        peak_bytes: 0,
        before_trace_bytes: 0,
        stack_bytes: 0,
        rows: Vec::new(),
        by_kind: Vec::new(),
        by_module: Vec::new(),
        peak_bars: Bars::default(),
        last_floor_bars: None,
        pool: PoolAtPeak::default(),
        labels: Vec::new(),
        floors: Vec::new(),
        live_at_end: Vec::new(),
        live_at_end_by_module: Vec::new(),
        live_at_end_bar: Vec::new(),
    };
    let Some(n) = n.filter(|n| n.unaligned.is_none()) else {
        view.unaligned = Some(n.and_then(|n| n.unaligned.clone()).unwrap_or_else(|| "its events were not found among the host's".into()));
        return view;
    };
    let p = &n.peak;
    view.rows = named_rows(names, n, &p.rows);
    view.peak_bytes = p.peak_bytes;
    view.before_trace_bytes = p.before_trace_bytes;
    view.stack_bytes = p.stack_bytes;
    view.by_kind = p.by_kind.clone();
    view.by_module = p.by_module.clone();
    view.peak_bars = Bars::of(&p.by_kind, &p.by_module, p.stack_bytes, p.before_trace_bytes, p.peak_bytes);
    view.pool = p.pool.clone();
    view.labels = n.names.iter().map(|x| x.label.clone()).collect();
    view.floors = n
        .floors
        .iter()
        .map(|f| NamedFloor {
            step_id: f.step_id,
            in_use_bytes: f.in_use_bytes,
            stack_bytes: f.stack_bytes,
            before_trace_bytes: f.live.before_trace_bytes,
            trace_time_ps: a.trace_time_ps(f.snapshot_index),
            rows: named_rows(names, n, &f.live.rows),
            by_kind: f.live.by_kind.clone(),
            by_module: f.live.by_module.clone(),
        })
        .collect();
    view.live_at_end = named_rows(names, n, &n.live_at_end.rows);
    view.last_floor_bars =
        view.floors.last().map(|f| Bars::of(&f.by_kind, &f.by_module, f.stack_bytes, f.before_trace_bytes, f.in_use_bytes));
    view.live_at_end_by_module = n.live_at_end.by_module.clone();
    let live_at_end_bytes = n.live_at_end.by_module.iter().map(|(_, b)| b).sum();
    view.live_at_end_bar = module_bar(&n.live_at_end.by_module, live_at_end_bytes);
    view
}

/// `rows` of allocator `n` with their names, a temporary's with its module's largest buffers.
fn named_rows(names: &AllocationNames, n: &AllocatorNames, rows: &[PeakRow]) -> Vec<NamedPeakRow> {
    let largest = |name: &AllocationName| {
        let module = name.module.as_deref().filter(|_| name.kind == NameKind::Temporary);
        module.and_then(|m| names.modules.iter().find(|x| x.xprof_name == m)).map(|m| m.largest_buffers.clone()).unwrap_or_default()
    };
    rows.iter()
        .filter_map(|r| {
            let name = n.names.get(r.name as usize)?;
            Some(NamedPeakRow {
                name: name.clone(),
                allocations: r.allocations,
                allocation_bytes: r.allocation_bytes,
                requested_bytes: r.requested_bytes,
                largest_buffers: largest(name),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A timeline event is a JSON array on the wire (no field names; its stats and event as arrays within), and reads back equal.
    #[test]
    fn timeline_events_travel_as_arrays() {
        let event = TimelineEvent {
            point: TimelinePoint {
                snapshot_index: 7,
                time_offset_ps: -3,
                trace_time_ps: 1_000_000_000_000_000,
                stats: AggregationStats {
                    stack_reserved_bytes: 1,
                    heap_allocated_bytes: 2,
                    free_memory_bytes: 3,
                    fragmentation: 0.25,
                    peak_bytes_in_use: 4,
                },
            },
            activity: ActivityMetadata {
                activity: Activity::Deallocation,
                requested_bytes: 5,
                allocation_bytes: 6,
                address: u64::MAX,
                tf_op_name: "conv \"1\"".into(),
                step_id: -1,
                region_type: "temp".into(),
                data_type: "float".into(),
                tensor_shape: "[2,3]".into(),
            },
            name: Some(2),
        };
        let json = serde_json::to_string(&event).unwrap();
        assert_eq!(
            json,
            r#"[7,-3,1000000000000000,[1,2,3,0.25,4],["Deallocation",5,6,18446744073709551615,"conv \"1\"",-1,"temp","float","[2,3]"],2]"#
        );
        assert_eq!(serde_json::from_str::<TimelineEvent>(&json).unwrap(), event);
    }

    /// A bar's parts carry their share of the total the sentence beside it names; the stack and what
    /// was allocated before the trace are kinds of their own only where positive; no total, no share.
    #[test]
    fn bars_give_each_part_its_share() {
        let kinds = [(NameKind::Output, 600), (NameKind::Temporary, 200)];
        let modules = [("jit_step(1)".to_string(), 700), (String::new(), 100)];
        let bars = Bars::of(&kinds, &modules, 150, 50, 1000);
        fn of(parts: &[BarPart]) -> Vec<(&str, &str, i64, f64)> {
            parts.iter().map(|p| (p.key.as_str(), p.label.as_str(), p.bytes, p.fraction)).collect()
        }
        assert_eq!(
            of(&bars.by_kind),
            [
                ("outputs", "outputs", 600, 0.6),
                ("temporaries", "temporaries", 200, 0.2),
                ("stack", "stack", 150, 0.15),
                ("before_trace", "allocated before the trace", 50, 0.05)
            ]
        );
        assert_eq!(of(&bars.by_module), [("jit_step(1)", "jit_step(1)", 700, 0.7), ("", "no module", 100, 0.1)]);
        let freed_before = Bars::of(&kinds, &modules, 0, -40, 760);
        assert_eq!(freed_before.by_kind.len(), 2);
        assert!(Bars::of(&kinds, &modules, 0, 0, 0).by_kind.iter().all(|p| p.fraction == 0.0));
    }
}
