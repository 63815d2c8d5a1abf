//! The breakdown of memory in use at the peak (XProf's `ProcessActiveAllocations`).

use super::matcher::Ends;
use super::{ActivityMetadata, Snapshots, Summary};
use crate::analysis::memory_events::Activity;
use crate::fast_hash::FastMap;
use serde::Serialize;
use std::cmp::Reverse;

const UNUSED_PREALLOCATED: &str = "unused preallocated device memory";

/// One row of the breakdown: allocations with identical (bytes, requested bytes, op, region, dtype,
/// shape), merged.
///
/// Deterministic where XProf is not: XProf collects the live set from a hash map and sorts it with an
/// unstable sort, so which allocation represents a merged row (its address, time and stats in
/// `memoryProfileSnapshots`) changes from run to run. We break ties by XProf's own snapshot index: a
/// special row first, then allocations in time order — the representative is the earliest allocation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BreakdownRow {
    /// Index into `special_allocations` when the row's representative is a special row.
    pub special_index: Option<usize>,
    /// Indices into `snapshots` of every allocation merged into the row, in time order.
    pub snapshot_indices: Vec<usize>,
    /// How many allocations (and special rows) the row stands for.
    pub occurrences: u64,
    /// Tidemark-only: how many of the row's allocations had in fact been freed before the peak.
    ///
    /// XProf is provably wrong here: it replays only the peak's step, but steps overlap in time (tf.data
    /// and the next step's executor run alongside), so a deallocation grouped into another step is never
    /// seen and the allocation is reported live at the peak. On `d2_tf_cnn` this is most of the 418
    /// merged 256-byte allocations. We keep XProf's rows (the JSON must equal XProf's) and say how many
    /// of each row were already freed.
    pub freed_before_peak: u64,
}

/// The rows and the special allocations they may reference.
///
/// Only snapshots up to the peak time (all of those at exactly that time included) and in the peak's
/// step count: an allocation makes its address live, a deallocation frees it. Heap the live set does not
/// explain becomes `unused preallocated device memory` (if positive); a non-zero stack at the peak becomes
/// `stack`. Deallocations of allocations made before the step are subtracted from that unexplained heap
/// once more, as XProf does, to separate persistent memory from last step's frees.
pub(super) fn at_peak(
    snapshots: &Snapshots,
    strings: &[String],
    summary: &Summary,
    ends: &Ends,
) -> (Vec<BreakdownRow>, Vec<ActivityMetadata>) {
    let mut unexplained_heap_bytes = summary.peak_stats.heap_allocated_bytes;
    let mut freed_from_earlier_steps_bytes = 0i64;
    let mut live: FastMap<u64, usize> = FastMap::default();
    let to_peak = snapshots.times().partition_point(|&t| t <= summary.peak_stats_time_ps);
    for i in (0..to_peak).filter(|&i| snapshots.step_id(i) == summary.peak_step_id) {
        let (address, bytes) = (snapshots.address(i), snapshots.allocation_bytes(i));
        match snapshots.activity(i) {
            Activity::Allocation => {
                live.insert(address, i);
                unexplained_heap_bytes = unexplained_heap_bytes.wrapping_sub(bytes);
            }
            Activity::Deallocation => {
                if live.remove(&address).is_none() {
                    freed_from_earlier_steps_bytes = freed_from_earlier_steps_bytes.wrapping_add(bytes);
                }
                unexplained_heap_bytes = unexplained_heap_bytes.wrapping_add(bytes);
            }
        }
    }
    unexplained_heap_bytes = unexplained_heap_bytes.wrapping_sub(freed_from_earlier_steps_bytes);

    let mut specials = Vec::new();
    if unexplained_heap_bytes > 0 {
        specials.push(special(UNUSED_PREALLOCATED, "persist/dynamic", unexplained_heap_bytes, summary.peak_step_id));
    }
    let stack_bytes = summary.peak_stats.stack_reserved_bytes;
    if stack_bytes > 0 {
        specials.push(special("stack", "stack", stack_bytes, summary.peak_step_id));
    }

    // (row key, XProf's snapshot index: special k is −(k+1)), in XProf's row order, ties by index.
    // Only the strings of the live allocations are ranked: a profile's table holds every op name.
    let text = |id: super::StrId| strings.get(id as usize).map_or("", String::as_str);
    let mut used: Vec<super::StrId> = live.values().flat_map(|&i| snapshots.string_ids(i)).collect();
    used.sort_unstable();
    used.dedup();
    let ranks = StringRanks::new(used.into_iter().map(text), &specials);
    let str_rank = |id: super::StrId| ranks.of(text(id));
    let mut items: Vec<(RowKey, i64)> = live
        .values()
        .map(|&i| {
            let a = snapshots.row(i).activity;
            (RowKey::new(a.allocation_bytes, a.requested_bytes, a.string_ids().map(str_rank)), i as i64)
        })
        .chain(specials.iter().enumerate().map(|(k, m)| {
            let strs = m.strings().map(|s| ranks.of(s));
            (RowKey::new(m.allocation_bytes, m.requested_bytes, strs), -(k as i64) - 1)
        }))
        .collect();
    items.sort_unstable();

    let mut rows: Vec<BreakdownRow> = Vec::new();
    let mut row_key: Option<RowKey> = None;
    for (key, index) in items {
        if row_key != Some(key) {
            rows.push(BreakdownRow { special_index: None, snapshot_indices: Vec::new(), occurrences: 0, freed_before_peak: 0 });
            row_key = Some(key);
        }
        let Some(row) = rows.last_mut() else { continue };
        row.occurrences += 1;
        match usize::try_from(index) {
            Ok(i) => row.snapshot_indices.push(i),
            Err(_) => row.special_index = Some((-index - 1) as usize),
        }
    }
    count_freed_before_peak(snapshots, ends, summary.peak_stats_time_ps, &mut rows);
    (rows, specials)
}

/// Fills [`BreakdownRow::freed_before_peak`]: an allocation was freed before the peak when the
/// deallocation that ends it ([`Ends`]: the next event at its address, in any step) is before the peak
/// time.
fn count_freed_before_peak(snapshots: &Snapshots, ends: &Ends, peak_time_ps: i64, rows: &mut [BreakdownRow]) {
    let times = snapshots.times();
    for row in rows {
        let freed = |&i: &usize| ends.freed_by(i).is_some_and(|k| times[k] < peak_time_ps);
        row.freed_before_peak = row.snapshot_indices.iter().filter(|i| freed(i)).count() as u64;
    }
}

/// XProf's row order: allocation bytes and requested bytes descending, then op, region, dtype and shape
/// ascending (byte-wise, as `std::string` compares), the strings by their [`StringRanks`]. Rows equal
/// under it are merged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct RowKey {
    allocation_bytes: Reverse<i64>,
    requested_bytes: Reverse<i64>,
    /// Op, region, dtype, shape.
    strings: [u32; 4],
}

impl RowKey {
    fn new(allocation_bytes: i64, requested_bytes: i64, strings: [u32; 4]) -> Self {
        RowKey { allocation_bytes: Reverse(allocation_bytes), requested_bytes: Reverse(requested_bytes), strings }
    }
}

/// The byte-wise order of the strings the breakdown's rows hold (the live allocations' and the special
/// rows'), as ranks: the rows are sorted by integers, not by comparing op names (long, with shared
/// prefixes) again and again, which took most of the breakdown's time on `d2_tf_cnn`.
struct StringRanks<'a>(Vec<&'a str>);

impl<'a> StringRanks<'a> {
    fn new(strings: impl Iterator<Item = &'a str>, specials: &'a [ActivityMetadata]) -> Self {
        let special = specials.iter().flat_map(ActivityMetadata::strings);
        let mut all: Vec<&str> = strings.chain(special).chain([""]).collect();
        all.sort_unstable();
        all.dedup();
        StringRanks(all)
    }

    /// The rank of `s`, one of the strings given to [`StringRanks::new`].
    fn of(&self, s: &str) -> u32 {
        self.0.binary_search(&s).unwrap_or_else(|at| at) as u32
    }
}

fn special(op: &str, region: &str, bytes: i64, step_id: i64) -> ActivityMetadata {
    ActivityMetadata {
        activity: Activity::Allocation,
        requested_bytes: bytes,
        allocation_bytes: bytes,
        address: 0,
        tf_op_name: op.to_string(),
        step_id,
        region_type: region.to_string(),
        data_type: super::dtype::name(0),
        tensor_shape: "unknown".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::memory_profile::{AggregationStats, Snapshot, SnapshotActivity, StrId};

    fn alloc(time: i64, address: u64, bytes: i64, op: StrId) -> Snapshot {
        Snapshot {
            time_offset_ps: time,
            stats: AggregationStats::default(),
            activity: SnapshotActivity {
                activity: Activity::Allocation,
                requested_bytes: bytes,
                allocation_bytes: bytes,
                address,
                step_id: 1,
                tf_op_name: op,
                region_type: 3,
                data_type: 3,
                tensor_shape: 3,
            },
        }
    }

    /// Rows by bytes descending, then strings byte-wise (a special row's among them); equal
    /// allocations merged, represented by the earliest; the special row first among equals.
    #[test]
    fn rows_in_xprof_order_with_deterministic_representatives() {
        // The special row's "stack" sorts between "conv/b" and "x"; id 9 is not in the table: "".
        let strings: Vec<String> = ["x", "conv/b", "conv/a", ""].map(String::from).to_vec();
        let snapshots: Snapshots = [
            alloc(1, 0x10, 64, 0),
            alloc(2, 0x20, 64, 1),
            alloc(3, 0x30, 256, 0),
            alloc(4, 0x40, 64, 2),
            alloc(5, 0x50, 64, 1),
            alloc(6, 0x60, 64, 9),
        ]
        .into_iter()
        .collect();
        let summary = Summary {
            peak_stats: AggregationStats { stack_reserved_bytes: 64, heap_allocated_bytes: 576, ..Default::default() },
            peak_stats_time_ps: 6,
            peak_step_id: 1,
            ..Default::default()
        };
        let (rows, specials) = at_peak(&snapshots, &strings, &summary, &Ends::default());
        assert_eq!(specials.len(), 1, "the stack row; the heap is all explained");
        let shape: Vec<(Option<usize>, Vec<usize>)> = rows.iter().map(|r| (r.special_index, r.snapshot_indices.clone())).collect();
        assert_eq!(
            shape,
            vec![
                (None, vec![2]),    // 256 bytes
                (None, vec![5]),    // 64, "" (an id outside the table)
                (None, vec![3]),    // 64, "conv/a"
                (None, vec![1, 4]), // 64, "conv/b" twice: the earliest represents the row
                (Some(0), vec![]),  // 64, "stack"
                (None, vec![0]),    // 64, "x"
            ]
        );
        assert_eq!(rows.iter().map(|r| r.occurrences).sum::<u64>(), 7);
    }
}
