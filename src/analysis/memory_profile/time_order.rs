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
/// The list is built where the events already are, so a profile never holds its events twice: a
/// single run's own buffer is reused (nearly always already in time order), and several runs are
/// copied one after another into one buffer, each run freed once copied; the order is then applied
/// in place, following its cycles, with only (time, index) pairs sorted beside the events.
pub(super) fn merge_in_time_order(runs: Vec<Run>, n: usize, mut place: impl FnMut(&[Snapshot], &mut Snapshot)) -> Vec<Snapshot> {
    let mut all = concatenate(runs, n);
    if !all.is_sorted_by_key(|s| s.time_offset_ps) {
        let mut order: Vec<(i64, usize)> = all.iter().enumerate().map(|(i, s)| (s.time_offset_ps, i)).collect();
        // Ties by index: the stable order, without a stable sort's scratch buffer.
        order.sort_unstable();
        permute(&mut all, order);
    }
    for i in 0..all.len() {
        let (placed, rest) = all.split_at_mut(i);
        place(placed, &mut rest[0]);
    }
    all
}

/// The events of `runs` one after another, globalised ([`Run::globalise`]).
fn concatenate(runs: Vec<Run>, n: usize) -> Vec<Snapshot> {
    let mut runs = runs.into_iter();
    if runs.len() == 1 {
        if let Some(mut run) = runs.next() {
            let mut snapshots = std::mem::take(&mut run.snapshots);
            snapshots.iter_mut().for_each(|s| run.globalise(s));
            return snapshots;
        }
    }
    let mut all = Vec::with_capacity(n);
    for run in runs {
        all.extend(run.snapshots.iter().map(|&(mut s)| {
            run.globalise(&mut s);
            s
        }));
    }
    all
}

/// Puts the event at `order[k].1` at position `k`, for every `k` (`order` a permutation of the
/// indices, paired with anything), moving each event once; `order` is used up as the record of what
/// has moved.
fn permute(all: &mut [Snapshot], mut order: Vec<(i64, usize)>) {
    for start in 0..all.len() {
        if order[start].1 == start {
            continue;
        }
        let first = all[start];
        let mut k = start;
        loop {
            let from = order[k].1;
            order[k].1 = k;
            if from == start {
                all[k] = first;
                break;
            }
            all[k] = all[from];
            k = from;
        }
    }
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
        let runs = vec![run(0, &[30, 10, 20, 10]), run(4, &[10, 40]), run(6, &[5, 30, 30])];
        let mut seen = Vec::new();
        let all = merge_in_time_order(runs, 9, |placed, s| seen.push((placed.len(), s.activity.step_id)));
        let got: Vec<(i64, i64)> = all.iter().map(|s| (s.time_offset_ps, s.activity.step_id)).collect();
        assert_eq!(got, [(5, 6), (10, 1), (10, 3), (10, 4), (20, 2), (30, 0), (30, 7), (30, 8), (40, 5)]);
        assert_eq!(seen, got.iter().enumerate().map(|(i, &(_, rank))| (i, rank)).collect::<Vec<_>>());
    }
}
