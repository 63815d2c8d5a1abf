//! Tidemark-only figures: exact event counts and leak hints. XProf has neither (its page counts
//! allocations over the ≤1000 sampled points only, which undercounts any longer profile).

use super::Snapshots;
use crate::analysis::memory_events::Activity;
use crate::fast_hash::FastMap;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Allocation and deallocation counts: exact (every event) and as XProf's page shows them (sampled).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct EventCounts {
    pub allocations: u64,
    pub deallocations: u64,
    /// Over the sampled timeline only: the numbers XProf's page displays.
    pub sampled_allocations: u64,
    pub sampled_deallocations: u64,
}

/// Signs of memory that is not given back, over the profiling window.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct LeakHints {
    /// Sum of `allocation_bytes` over allocations / deallocations in the window.
    pub allocated_bytes: i64,
    pub deallocated_bytes: i64,
    /// Deallocations with no allocation at their address earlier in the window: memory allocated before
    /// the profile started.
    pub unmatched_deallocations: u64,
    /// Allocations still live when the window ends, grouped by op, largest first.
    pub live_at_end: Vec<LiveOpGroup>,
    pub live_at_end_bytes: i64,
    /// Per step (in order of first appearance), the lowest heap + stack seen during the step.
    pub step_floors: Vec<StepFloor>,
    /// True when there are at least [`MIN_GROWING_STEPS`] steps and every step's floor is strictly
    /// above the previous step's. The floor is the memory the step never gives back, so a floor that
    /// rises every step is memory retained step over step (a leak, or a cache still warming up); a
    /// profile whose usage returns to an earlier level in any step is not flagged. Steps are XProf's
    /// (its step grouping's, gaps filled as XProf does); the first and last may be cut by the window.
    pub heap_grows_every_step: bool,
    /// Last step's floor minus the first's (0 with fewer than two steps).
    pub floor_growth_bytes: i64,
}

/// Allocations of one op live at the end of the window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LiveOpGroup {
    pub tf_op_name: String,
    pub allocations: u64,
    pub allocation_bytes: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepFloor {
    pub step_id: i64,
    pub min_in_use_bytes: i64,
}

/// Fewest steps for [`LeakHints::heap_grows_every_step`]: two steps always differ one way or the other.
pub const MIN_GROWING_STEPS: usize = 3;

/// The counts of the time-sorted `snapshots` of which `allocations` are allocations.
pub(super) fn counts(snapshots: &Snapshots, sampled_indices: &[usize], allocations: u64) -> EventCounts {
    let is_alloc = |i: usize| i < snapshots.len() && snapshots.activity(i) == Activity::Allocation;
    let sampled_allocations = sampled_indices.iter().filter(|&&i| is_alloc(i)).count() as u64;
    EventCounts {
        allocations,
        deallocations: snapshots.len() as u64 - allocations,
        sampled_allocations,
        sampled_deallocations: sampled_indices.len() as u64 - sampled_allocations,
    }
}

/// What the counts and leak hints take from the walk that matches deallocations with allocations, in
/// time order ([`super::matcher::DeallocationMatcher`]). A live address re-allocated without a deallocation in
/// between counts by its newer allocation (the older one's free was not recorded), as XProf's
/// breakdown does.
#[derive(Debug, Default)]
pub(super) struct Matched {
    pub allocations: u64,
    pub allocated_bytes: i64,
    pub deallocated_bytes: i64,
    pub unmatched_deallocations: u64,
    /// Indices of the allocations live at the end, ascending.
    pub live_at_end: Vec<usize>,
}

/// Per step, in order of first appearance, the lowest heap + stack seen, events added one by one (in
/// the pass that gives them their steps).
#[derive(Default)]
pub(super) struct StepFloors {
    floors: Vec<StepFloor>,
    floor_of_step: FastMap<i64, usize>,
    last: Option<usize>,
}

impl StepFloors {
    #[inline]
    pub fn add(&mut self, step_id: i64, in_use: i64) {
        let floors = &mut self.floors;
        // Events in a row are nearly always of one step: the map is asked only when the step changes.
        let k = match self.last {
            Some(k) if floors[k].step_id == step_id => k,
            _ => *self.floor_of_step.entry(step_id).or_insert_with(|| {
                floors.push(StepFloor { step_id, min_in_use_bytes: in_use });
                floors.len() - 1
            }),
        };
        self.last = Some(k);
        floors[k].min_in_use_bytes = floors[k].min_in_use_bytes.min(in_use);
    }
}

/// The leak hints of the time-sorted snapshots, given what [`Matched`] found and their steps' floors.
pub(super) fn hints(snapshots: &Snapshots, strings: &[String], matched: Matched, floors: StepFloors) -> LeakHints {
    let mut h = LeakHints {
        allocated_bytes: matched.allocated_bytes,
        deallocated_bytes: matched.deallocated_bytes,
        unmatched_deallocations: matched.unmatched_deallocations,
        ..LeakHints::default()
    };
    let floors = floors.floors;

    let mut by_op: BTreeMap<&str, LiveOpGroup> = BTreeMap::new();
    for &i in &matched.live_at_end {
        let s = snapshots.row(i);
        let a = s.activity.resolve(strings);
        let g = by_op.entry(a.tf_op_name).or_insert_with(|| LiveOpGroup {
            tf_op_name: a.tf_op_name.to_string(),
            allocations: 0,
            allocation_bytes: 0,
        });
        g.allocations += 1;
        g.allocation_bytes = g.allocation_bytes.wrapping_add(a.allocation_bytes);
        h.live_at_end_bytes = h.live_at_end_bytes.wrapping_add(a.allocation_bytes);
    }
    h.live_at_end = by_op.into_values().collect();
    // Largest first; the BTreeMap already ordered equal sizes by op name, and the sort is stable.
    h.live_at_end.sort_by_key(|g| std::cmp::Reverse(g.allocation_bytes));

    h.heap_grows_every_step = floors.len() >= MIN_GROWING_STEPS && floors.windows(2).all(|w| w[1].min_in_use_bytes > w[0].min_in_use_bytes);
    h.floor_growth_bytes = match (floors.first(), floors.last()) {
        (Some(first), Some(last)) => last.min_in_use_bytes.wrapping_sub(first.min_in_use_bytes),
        _ => 0,
    };
    h.step_floors = floors;
    h
}
