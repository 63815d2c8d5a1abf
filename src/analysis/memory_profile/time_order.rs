//! Each line's events of one memory ID put in one list in time order, in place.

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
    /// Gives `s`, one of this run's events, the profile's string ids and its rank among the plane's
    /// memory events.
    #[inline]
    fn globalise(&self, s: &mut Snapshot) {
        let a = &mut s.activity;
        for id in [&mut a.tf_op_name, &mut a.region_type, &mut a.data_type, &mut a.tensor_shape] {
            *id = self.ids[*id as usize];
        }
        a.step_id += self.start;
    }
}

/// The `n` events of `runs` (each line's) in one list by time, stably: events at the same time in the
/// order of the runs, then of each run. Each event is then shown to `place` with the events placed
/// before it, in order.
///
/// The list is built where the events already are, so a profile never holds its events twice: the
/// largest run's buffer takes the others' events (natively a large buffer grows by moving its pages,
/// not copying them), each run freed once copied, and is then sorted in place. A single run, nearly
/// always in time order already, is used as it is.
pub(super) fn merge_in_time_order(runs: Vec<Run>, n: usize, mut place: impl FnMut(&[Snapshot], &mut Snapshot)) -> Vec<Snapshot> {
    let (mut all, in_file_order) = gather(runs, n);
    if !(in_file_order && all.is_sorted_by_key(|s| s.time_offset_ps)) {
        // By time, then by rank among the plane's memory events (file order): the stable order,
        // whichever order the runs were gathered in. The runs are each nearly in time order, which
        // the sort finds and merges (with room for half the events beside them).
        all.sort_by_key(|s| (s.time_offset_ps, s.activity.step_id));
    }
    for i in 0..all.len() {
        let (placed, rest) = all.split_at_mut(i);
        place(placed, &mut rest[0]);
    }
    all
}

/// The events of `runs` in one buffer, globalised ([`Run::globalise`]), and whether they are in the
/// runs' order (else the largest run's come first).
fn gather(mut runs: Vec<Run>, n: usize) -> (Vec<Snapshot>, bool) {
    let largest = (0..runs.len()).max_by_key(|&r| (runs[r].snapshots.len(), std::cmp::Reverse(r))).unwrap_or(0);
    let Some(base) = runs.get_mut(largest) else { return (Vec::new(), true) };
    let mut all = std::mem::take(&mut base.snapshots);
    all.iter_mut().for_each(|s| base.globalise(s));
    all.reserve_exact(n.saturating_sub(all.len()));
    for run in runs {
        all.extend(run.snapshots.iter().map(|&(mut s)| {
            run.globalise(&mut s);
            s
        }));
    }
    (all, largest == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(time: i64, rank: i64) -> Snapshot {
        Snapshot {
            time_offset_ps: time,
            stats: Default::default(),
            activity: super::super::SnapshotActivity {
                activity: crate::analysis::memory_events::Activity::Allocation,
                requested_bytes: 0,
                allocation_bytes: 0,
                address: 0,
                step_id: rank,
                tf_op_name: 0,
                region_type: 0,
                data_type: 0,
                tensor_shape: 0,
            },
        }
    }

    /// Several runs, out of order and with ties, come out by time, ties in run then file order, each
    /// placed after exactly the events before it, with its rank offset by its run's start.
    #[test]
    fn runs_merge_stably_in_place() {
        let run = |start: i64, times: &[i64]| Run {
            snapshots: times.iter().enumerate().map(|(i, &t)| at(t, i as i64)).collect(),
            ids: vec![0],
            start,
        };
        // The largest run is not the first: its buffer takes the others' events, ahead of theirs.
        let runs = vec![run(0, &[30, 10]), run(2, &[20, 10, 10, 40]), run(6, &[5, 30, 30])];
        let mut seen = Vec::new();
        let all = merge_in_time_order(runs, 9, |placed, s| seen.push((placed.len(), s.activity.step_id)));
        let got: Vec<(i64, i64)> = all.iter().map(|s| (s.time_offset_ps, s.activity.step_id)).collect();
        assert_eq!(got, [(5, 6), (10, 1), (10, 3), (10, 4), (20, 2), (30, 0), (30, 7), (30, 8), (40, 5)]);
        assert_eq!(seen, got.iter().enumerate().map(|(i, &(_, rank))| (i, rank)).collect::<Vec<_>>());
        // A single run out of time order is sorted too.
        let all = merge_in_time_order(vec![run(0, &[3, 1, 2, 1])], 4, |_, _| {});
        let got: Vec<(i64, i64)> = all.iter().map(|s| (s.time_offset_ps, s.activity.step_id)).collect();
        assert_eq!(got, [(1, 1), (1, 3), (2, 2), (3, 0)]);
    }
}
