//! One line's memory events as snapshots, per memory ID, in file order, with the line's part of the
//! peak summary.

use super::interner::{same_bytes, Interner};
use super::{AggregationStats, Snapshot, SnapshotActivity, Snapshots};
use crate::analysis::memory_events::MemoryEvent;
use crate::decode::xplane::Line;
use crate::fast_hash::FastMap;
use std::borrow::Cow;

/// Collects the memory events of one line per memory ID.
#[derive(Default)]
pub(super) struct Collector<'a> {
    /// Per memory ID, in order of appearance.
    pub(super) ids: Vec<(Cow<'a, str>, Collected<'a>)>,
    /// Where each memory ID is in `ids`.
    index: FastMap<Cow<'a, str>, usize>,
    /// The previous event's entry in `ids`: nearly every event repeats it.
    recent: Option<usize>,
    /// Memory events added so far.
    pub(super) count: usize,
    /// How many memory events are coming, where known: the room the first memory ID's snapshots get
    /// up front (see [`Collector::expecting`]).
    expected: usize,
    /// Where the line starts in the trace (ps): an event's time in the trace is this plus its offset,
    /// as the trace's readers place it.
    pub(super) line_start_ps: i64,
}

impl<'a> Collector<'a> {
    /// A collector for the memory events of `line`.
    pub(super) fn on_line(line: &Line) -> Self {
        Collector { line_start_ps: line.header.timestamp_ns.saturating_mul(1000), ..Collector::default() }
    }

    /// A collector for at most `n` memory events of `line`, known before reading them. Their times get
    /// their room at once rather than by doubling (the other columns' widths are not known yet). Room
    /// beyond what is used is never written, so it costs no memory until it is given back
    /// ([`Collector::shrink_to_fit`]).
    pub(super) fn expecting(line: &Line, n: usize) -> Self {
        Collector { expected: n, ..Collector::on_line(line) }
    }

    /// Gives back the room no event took.
    pub(super) fn shrink_to_fit(&mut self) {
        self.ids.iter_mut().for_each(|(_, c)| c.snapshots.shrink_to_fit());
    }

    /// Adds `e`, the line's next memory event, as a snapshot without its step.
    pub(super) fn add(&mut self, e: &MemoryEvent<'a>) {
        let k = match self.recent {
            Some(k) if same_bytes(self.ids[k].0.as_bytes(), e.memory_id.as_bytes()) => k,
            _ => {
                let ids = &mut self.ids;
                let expected = std::mem::take(&mut self.expected);
                *self.index.entry(e.memory_id.clone()).or_insert_with(|| {
                    let mut collected = Collected::default();
                    // An upper bound may be more than the machine lends: then the room grows as usual.
                    let _ = collected.snapshots.try_reserve_exact(expected);
                    ids.push((e.memory_id.clone(), collected));
                    ids.len() - 1
                })
            }
        };
        self.recent = Some(k);
        let c = &mut self.ids[k].1;
        // Until the step grouping is done, the event's rank among the line's memory events stands in
        // for its step ([`Pending::from_lines`](super::pending::Pending::from_lines), [`Pending::finish`](super::pending::Pending::finish)).
        let s = snapshot(e, self.count as i64, &mut c.strings);
        if s.stats.in_use_bytes() >= c.peak.map_or(0, |i| c.snapshots.in_use_bytes(i)) {
            c.peak = Some(c.snapshots.len());
        }
        c.snapshots.push(&s);
        self.count += 1;
    }
}

/// One memory ID's events on one line as the scan collects them.
#[derive(Default)]
pub(super) struct Collected<'a> {
    /// In file order, each with its rank among the line's memory events as its step.
    pub(super) snapshots: Snapshots,
    pub(super) strings: Interner<'a>,
    /// The line's part of the summary, which XProf takes in file order ([`add_to_summary`](super::summary::add_to_summary)): its last
    /// event whose heap + stack is at least that of every event before it on the line (and at least 0).
    /// Whole lines then fold in order as their events would have one by one, since only such an
    /// event can be the last to raise or equal the peak.
    pub(super) peak: Option<usize>,
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
