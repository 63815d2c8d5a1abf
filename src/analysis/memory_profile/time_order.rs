//! Each line's events of one memory ID merged into one list in time order.

use super::{Snapshot, StrId};

/// One line's events of one memory ID, in file order, with its string ids still the line's own.
pub(super) struct Run {
    pub(super) snapshots: Vec<Snapshot>,
    /// The profile's string id of each of the line's.
    pub(super) ids: Vec<StrId>,
    /// Where the line's ranks start among the plane's memory events.
    pub(super) start: i64,
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
pub(super) fn merge_in_time_order(runs: Vec<Run>, n: usize, mut place: impl FnMut(&[Snapshot], &mut Snapshot)) -> Vec<Snapshot> {
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
