//! Each line's events of one memory ID put in one list in time order.

use super::{Snapshots, StrId};

/// One line's events of one memory ID, in file order, with its string ids still the line's own.
pub(super) struct Run {
    pub(super) snapshots: Snapshots,
    /// The profile's string id of each of the line's.
    pub(super) ids: Vec<StrId>,
    /// Where the line's ranks start among the plane's memory events.
    pub(super) start: i64,
    /// The line's start in the trace, as an index into the profile's table of line starts.
    pub(super) line_start: usize,
}

/// The `n` events of `runs` (each line's) in one list by time, stably: events at the same time in the
/// order of the runs, then of each run, each with the profile's string ids and its rank among the
/// plane's memory events as its step and its line's start. Each event is then shown to `place` with its index, in order.
///
/// The runs are appended in order, each dropped once copied, so the events are held about once; when
/// they are not in time order already, the order is sorted as indices (4 bytes an event, where moving
/// the events themselves needed room for half of them beside them) and the columns are reordered one
/// at a time.
pub(super) fn merge_in_time_order(runs: Vec<Run>, n: usize, mut place: impl FnMut(&mut Snapshots, usize)) -> Snapshots {
    let mut all = Snapshots::default();
    let _ = all.try_reserve_exact(n);
    for run in runs {
        let Run { snapshots, ids, start, line_start } = run;
        all.append_mapped(snapshots, |id| ids[id as usize], |rank| rank + start, line_start);
    }
    let times = all.times();
    if !times.is_sorted() {
        // By time, then file order (the rank, which the append order follows): a stable sort of the
        // indices. The runs are each nearly in time order, which the sort finds and merges.
        let mut order: Vec<u32> = (0..n as u32).collect();
        order.sort_by_key(|&i| times[i as usize]);
        all.permute(&order);
    }
    all.shrink_to_fit();
    for i in 0..all.len() {
        place(&mut all, i);
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(time: i64, rank: i64) -> super::super::Snapshot {
        super::super::Snapshot {
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
    /// placed after exactly the events before it, with its rank offset by its run's start and its
    /// run's line start.
    #[test]
    fn runs_merge_stably_in_place() {
        // Each run's line start is its position in the list (0, 1, 2).
        let run = |start: i64, times: &[i64]| Run {
            snapshots: times.iter().enumerate().map(|(i, &t)| at(t, i as i64)).collect(),
            ids: vec![0],
            start,
            line_start: [0, 2, 6].iter().position(|&s| s == start).unwrap(),
        };
        let runs = vec![run(0, &[30, 10]), run(2, &[20, 10, 10, 40]), run(6, &[5, 30, 30])];
        let mut seen = Vec::new();
        let all = merge_in_time_order(runs, 9, |all, i| seen.push((i, all.step_id(i))));
        let got: Vec<(i64, i64)> = all.iter().map(|s| (s.time_offset_ps, s.activity.step_id)).collect();
        assert_eq!(got, [(5, 6), (10, 1), (10, 3), (10, 4), (20, 2), (30, 0), (30, 7), (30, 8), (40, 5)]);
        assert_eq!(seen, got.iter().enumerate().map(|(i, &(_, rank))| (i, rank)).collect::<Vec<_>>());
        let lines: Vec<usize> = (0..9).map(|i| all.line_start_index(i)).collect();
        assert_eq!(lines, [2, 0, 1, 1, 1, 0, 2, 2, 1]);
        // A single run out of time order is sorted too.
        let all = merge_in_time_order(vec![run(0, &[3, 1, 2, 1])], 4, |_, _| {});
        let got: Vec<(i64, i64)> = all.iter().map(|s| (s.time_offset_ps, s.activity.step_id)).collect();
        assert_eq!(got, [(1, 1), (1, 3), (2, 2), (3, 0)]);
    }
}
