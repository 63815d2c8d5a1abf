//! One memory ID's events assembled into its profile: in time order with their deallocations matched,
//! sampled and counted, all of which needs no steps ([`Pending::new`]), then given their steps,
//! breakdown and leak hints ([`Pending::finish`]).

use super::collector::{Collected, Collector};
use super::columns::NarrowInts;
use super::interner::Interner;
use super::line_starts::LineStarts;
use super::matcher::{DeallocationMatcher, Ends};
use super::summary::add_to_summary;
use super::time_order::{merge_in_time_order, Run};
use super::{breakdown, leaks, sampling, AllocatorProfile, Snapshots, Summary, INVALID_STEP_ID, MAX_TIMELINE_POINTS};
use crate::analysis::step_groups;
use crate::fast_hash::FastMap;

/// The host plane's memory events' steps, by their rank among those events (file order).
pub(super) enum Steps {
    /// XProf's step grouping, run on the host plane here.
    Grouped(step_groups::StepGroups),
    /// The `group_id` stats the events were recorded with, for a file grouped when it was saved
    /// ([`step_groups::recorded_grouped`]), which XProf does not group again.
    Recorded(Vec<Option<i64>>),
}

impl Steps {
    /// The group of the memory event of this rank, if it has one.
    fn of(&self, rank: usize) -> Option<i64> {
        match self {
            Steps::Grouped(groups) => groups.group_id(rank),
            Steps::Recorded(ids) => ids.get(rank).copied().flatten(),
        }
    }
}

/// One line's events of one memory ID, as the scan collected them.
struct LineRun<'a> {
    /// Where the line's ranks start among the plane's memory events.
    start: i64,
    /// Where the line starts in the trace.
    line_start_ps: i64,
    collected: Collected<'a>,
}

/// One memory ID's profile as far as it goes without the steps: summary, time order, deallocation
/// metadata, sampled timeline, counts.
pub(super) struct Pending {
    pub(super) memory_id: String,
    /// In time order, each with its rank among the host plane's memory events as its step.
    snapshots: Snapshots,
    strings: Vec<String>,
    summary: Summary,
    sampled_indices: Vec<usize>,
    counts: leaks::EventCounts,
    matched: leaks::Matched,
    ends: Ends,
    line_starts: LineStarts,
}

impl Pending {
    /// Each memory ID's profile up to its steps, in order of appearance, from the memory events of
    /// every line of the host plane, in order ([`Collector`]s).
    pub(super) fn from_lines(lines: Vec<Collector>) -> Vec<Pending> {
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
        let mut runs: FastMap<String, Vec<LineRun>> = FastMap::default();
        for (c, start) in lines.into_iter().zip(starts) {
            let line_start_ps = c.line_start_ps;
            for (id, collected) in c.ids {
                let id = id.into_owned();
                if !runs.contains_key(&id) {
                    order.push(id.clone());
                }
                runs.entry(id).or_default().push(LineRun { start, line_start_ps, collected });
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

    /// One memory ID's events, line by line in order.
    fn new(memory_id: String, lines: Vec<LineRun>) -> Self {
        // One string table in order of first use, as one pass over the lines would make it; each
        // line's events then index it as they are put in time order, and carry their rank among the
        // plane's memory events and their line's start. The lines' summaries fold in file order.
        let mut strings = Interner::default();
        let mut runs = Vec::with_capacity(lines.len());
        let mut summary = Summary::default();
        let mut line_starts = LineStarts::default();
        for LineRun { start, line_start_ps, collected: c } in lines {
            let line_start = line_starts.index_of(line_start_ps);
            if let Some(peak) = c.peak.and_then(|i| c.snapshots.get(i)) {
                if add_to_summary(&mut summary, &peak) {
                    line_starts.set_peak(line_start);
                }
            }
            if let Some(last) = c.snapshots.last() {
                summary.peak_bytes_usage_lifetime = last.stats.peak_bytes_in_use;
            }
            let ids = strings.merge(c.strings);
            runs.push(Run { snapshots: c.snapshots, ids, start, line_start });
        }
        // As each event takes its place in time order: its deallocation metadata.
        let n = runs.iter().map(|r| r.snapshots.len()).sum();
        let mut matcher = DeallocationMatcher::with_capacity(n);
        let snapshots = merge_in_time_order(runs, n, |all, i| matcher.place(all, i));
        let sampled_indices = sampling::max_filter(snapshots.len(), MAX_TIMELINE_POINTS, |i| snapshots.in_use_bytes(i));
        let (matched, ends) = matcher.finish();
        let counts = leaks::counts(&snapshots, &sampled_indices, matched.allocations);
        Pending { memory_id, snapshots, strings: strings.strings, summary, sampled_indices, counts, matched, ends, line_starts }
    }

    /// The rest of the pipeline, once each memory event's step (group id) is known by its rank.
    pub(super) fn finish(self, groups: Option<&Steps>) -> AllocatorProfile {
        let Pending { memory_id, mut snapshots, strings, mut summary, sampled_indices, counts, matched, ends, line_starts } = self;
        // One pass: each event's step (its group, else XProf's `UpdateStepId`: the last valid step
        // + 1, 0 before any), the peak's step (that of the last event at the peak height), and
        // the steps' floors.
        let mut last_valid = INVALID_STEP_ID;
        let mut floors = leaks::StepFloors::default();
        summary.peak_step_id = 0;
        let mut steps = NarrowInts::default();
        for i in 0..snapshots.len() {
            let rank = usize::try_from(snapshots.step_id(i)).ok();
            let step_id = match groups.zip(rank).and_then(|(g, r)| g.of(r)) {
                Some(group) => {
                    last_valid = group;
                    group
                }
                None => last_valid.wrapping_add(1),
            };
            steps.push(step_id);
            let in_use = snapshots.in_use_bytes(i);
            if in_use == summary.peak_stats.peak_bytes_in_use {
                summary.peak_step_id = step_id;
            }
            floors.add(step_id, in_use);
        }
        steps.shrink_to_fit();
        snapshots.set_step_ids(steps);
        let (breakdown, special_allocations) = breakdown::at_peak(&snapshots, &strings, &summary, &ends);
        let leaks = leaks::hints(&snapshots, &strings, matched, floors);
        AllocatorProfile {
            memory_id,
            summary,
            strings,
            snapshots,
            sampled_indices,
            breakdown,
            special_allocations,
            counts,
            leaks,
            ends,
            line_starts,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::memory_events::MemoryEvent;

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
                add_to_summary(&mut expected, &c.ids[0].1.snapshots.last().expect("added"));
            }
            collectors.push(c);
        }
        let [p] = Pending::from_lines(collectors).try_into().ok().expect("one memory ID");
        assert_eq!(p.summary, expected);
        assert_eq!((expected.peak_stats_time_ps, expected.peak_bytes_usage_lifetime), (30, -60));
        let order: Vec<(i64, i64)> = p.snapshots.iter().map(|s| (s.time_offset_ps, s.stats.heap_allocated_bytes)).collect();
        assert_eq!(order, [(5, 6), (10, 5), (15, -3), (20, 7), (25, -2), (30, 7), (30, 0), (30, -9), (40, -1)]);
    }
}
