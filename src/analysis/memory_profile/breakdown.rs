//! The breakdown of memory in use at the peak (XProf's `ProcessActiveAllocations`).

use super::{ActivityMetadata, ActivityRef, Snapshot, Summary};
use crate::analysis::memory_events::Activity;
use serde::Serialize;
use std::cmp::Ordering;
use crate::fast_hash::FastMap;

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
pub(super) fn at_peak(snapshots: &[Snapshot], strings: &[String], summary: &Summary) -> (Vec<BreakdownRow>, Vec<ActivityMetadata>) {
    let mut unexplained_heap_bytes = summary.peak_stats.heap_allocated_bytes;
    let mut freed_from_earlier_steps_bytes = 0i64;
    let mut live: FastMap<u64, usize> = FastMap::default();
    for (i, s) in snapshots.iter().enumerate() {
        if s.time_offset_ps > summary.peak_stats_time_ps {
            break;
        }
        let a = &s.activity;
        if a.step_id != summary.peak_step_id {
            continue;
        }
        match a.activity {
            Activity::Allocation => {
                live.insert(a.address, i);
                unexplained_heap_bytes = unexplained_heap_bytes.wrapping_sub(a.allocation_bytes);
            }
            Activity::Deallocation => {
                if live.remove(&a.address).is_none() {
                    freed_from_earlier_steps_bytes = freed_from_earlier_steps_bytes.wrapping_add(a.allocation_bytes);
                }
                unexplained_heap_bytes = unexplained_heap_bytes.wrapping_add(a.allocation_bytes);
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

    // (XProf's snapshot index: special k is −(k+1); metadata).
    let mut items: Vec<(i64, ActivityRef)> = live
        .values()
        .map(|&i| (i as i64, snapshots[i].activity.resolve(strings)))
        .chain(specials.iter().enumerate().map(|(k, m)| (-(k as i64) - 1, m.as_activity_ref())))
        .collect();
    items.sort_by(|a, b| row_order(&a.1, &b.1).then(a.0.cmp(&b.0)));

    let mut rows: Vec<BreakdownRow> = Vec::new();
    let mut row_meta: Option<ActivityRef> = None;
    for (index, meta) in items {
        let same = row_meta.is_some_and(|m| row_order(&m, &meta) == Ordering::Equal);
        if !same {
            rows.push(BreakdownRow { special_index: None, snapshot_indices: Vec::new(), occurrences: 0, freed_before_peak: 0 });
            row_meta = Some(meta);
        }
        let Some(row) = rows.last_mut() else { continue };
        row.occurrences += 1;
        match usize::try_from(index) {
            Ok(i) => row.snapshot_indices.push(i),
            Err(_) => row.special_index = Some((-index - 1) as usize),
        }
    }
    count_freed_before_peak(snapshots, summary.peak_stats_time_ps, &mut rows);
    (rows, specials)
}

/// Fills [`BreakdownRow::freed_before_peak`] in one pass: an allocation is freed before the peak when the
/// next event at its address (in any step) is a deallocation before the peak time.
fn count_freed_before_peak(snapshots: &[Snapshot], peak_time_ps: i64, rows: &mut [BreakdownRow]) {
    let mut row_of: FastMap<usize, usize> = FastMap::default();
    for (r, row) in rows.iter().enumerate() {
        row_of.extend(row.snapshot_indices.iter().map(|&i| (i, r)));
    }
    let mut pending: FastMap<u64, usize> = FastMap::default(); // address → row
    for (i, s) in snapshots.iter().enumerate() {
        if s.time_offset_ps >= peak_time_ps || (pending.is_empty() && row_of.is_empty()) {
            break;
        }
        let address = s.activity.address;
        if let Some(r) = pending.remove(&address) {
            if s.activity.activity == Activity::Deallocation {
                rows[r].freed_before_peak += 1;
            }
        }
        if let Some(r) = row_of.remove(&i) {
            pending.insert(address, r);
        }
    }
}

/// XProf's row order: allocation bytes and requested bytes descending, then op, region, dtype and shape
/// ascending (byte-wise, as `std::string` compares). Rows equal under it are merged.
fn row_order(a: &ActivityRef, b: &ActivityRef) -> Ordering {
    b.allocation_bytes
        .cmp(&a.allocation_bytes)
        .then(b.requested_bytes.cmp(&a.requested_bytes))
        .then_with(|| a.tf_op_name.cmp(b.tf_op_name))
        .then_with(|| a.region_type.cmp(b.region_type))
        .then_with(|| a.data_type.cmp(b.data_type))
        .then_with(|| a.tensor_shape.cmp(b.tensor_shape))
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
