//! What was live at chosen events, by name: the peak, each step's floor (the lowest usage of the
//! step: what stays allocated between steps) and the end of the window (the leak hints' suspects).
//! One replay of the allocator's events serves them all.

use super::{AllocationName, NameKind};
use crate::analysis::memory_events::Activity;
use crate::analysis::memory_profile::AllocatorProfile;
use crate::fast_hash::FastMap;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Allocations of one name live at an event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeakRow {
    /// Index into [`super::AllocatorNames::names`].
    pub name: u32,
    pub allocations: u64,
    pub allocation_bytes: i64,
    pub requested_bytes: i64,
    /// The allocations' snapshot indices, in time order.
    pub snapshot_indices: Vec<usize>,
}

/// The allocations live just after one event, grouped by name.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct LiveNames {
    /// Most bytes first (ties by name index).
    pub rows: Vec<PeakRow>,
    /// Heap at the event held by allocations made before the window (none of its events saw them):
    /// negative where the window's events free more than they allocate (frees of allocations made
    /// before it at reused addresses).
    pub before_trace_bytes: i64,
    /// Bytes per kind ([`NameKind::label`]) and per module (`""` for allocations of no one module),
    /// most first.
    pub by_kind: Vec<(NameKind, i64)>,
    pub by_module: Vec<(String, i64)>,
}

/// One step's heap floor by name: what was live at the step's lowest heap + stack (its first event
/// at that level).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FloorNames {
    pub step_id: i64,
    /// The floor's event.
    pub snapshot_index: usize,
    /// Heap + stack there: the leak hints' floor of the step.
    pub in_use_bytes: i64,
    pub stack_bytes: i64,
    pub live: LiveNames,
}

/// The live set just after each of `targets` (snapshot indices), in their order, replayed by address
/// as XProf's breakdown does: an address allocated again holds the later allocation; a free of an
/// address not allocated in the window frees nothing seen.
pub(super) fn live_at(a: &AllocatorProfile, targets: &[usize], name_of: &[u32], names: &[AllocationName]) -> Vec<LiveNames> {
    let s = &a.snapshots;
    let mut order: Vec<usize> = (0..targets.len()).collect();
    order.sort_by_key(|&k| targets[k]);
    let mut out = vec![LiveNames::default(); targets.len()];
    // By address; the order is not kept (each live set is sorted where grouped).
    let mut live: FastMap<u64, usize> = FastMap::default();
    let mut next = 0;
    for k in order {
        let t = targets[k];
        while next <= t && next < s.len() {
            match s.activity(next) {
                Activity::Allocation => live.insert(s.address(next), next),
                Activity::Deallocation => live.remove(&s.address(next)),
            };
            next += 1;
        }
        let heap = s.get(t).map_or(0, |x| x.stats.heap_allocated_bytes);
        out[k] = group(a, live.values().copied(), heap, name_of, names);
    }
    out
}

/// `indices` (live allocations) grouped by name; `heap` the heap they are part of.
fn group(a: &AllocatorProfile, indices: impl Iterator<Item = usize>, heap: i64, name_of: &[u32], names: &[AllocationName]) -> LiveNames {
    let s = &a.snapshots;
    let mut indices: Vec<usize> = indices.collect();
    indices.sort_unstable();
    let mut rows: BTreeMap<u32, PeakRow> = BTreeMap::new();
    let mut live_bytes = 0i64;
    for i in indices.into_iter().filter(|&i| i < s.len()) {
        let (allocation_bytes, requested_bytes) = (s.allocation_bytes(i), s.requested_bytes(i));
        let id = name_of[i];
        let row = rows.entry(id).or_insert(PeakRow {
            name: id,
            allocations: 0,
            allocation_bytes: 0,
            requested_bytes: 0,
            snapshot_indices: Vec::new(),
        });
        row.allocations += 1;
        row.allocation_bytes += allocation_bytes;
        row.requested_bytes += requested_bytes;
        row.snapshot_indices.push(i);
        live_bytes += allocation_bytes;
    }
    let mut rows: Vec<PeakRow> = rows.into_values().collect();
    rows.sort_by_key(|r| (std::cmp::Reverse(r.allocation_bytes), r.name));
    let mut by_kind: BTreeMap<NameKind, i64> = BTreeMap::new();
    let mut by_module: BTreeMap<String, i64> = BTreeMap::new();
    for r in &rows {
        let n = &names[r.name as usize];
        *by_kind.entry(n.kind).or_default() += r.allocation_bytes;
        *by_module.entry(n.module.clone().unwrap_or_default()).or_default() += r.allocation_bytes;
    }
    LiveNames { rows, before_trace_bytes: heap - live_bytes, by_kind: sorted_by_bytes(by_kind), by_module: sorted_by_bytes(by_module) }
}

/// Each step's floor event ([`crate::analysis::memory_profile::LeakHints::step_floors`]): the step's
/// first event at its lowest heap + stack, in the leak hints' order.
pub(super) fn floor_events(a: &AllocatorProfile) -> Vec<(i64, usize)> {
    let s = &a.snapshots;
    let mut first_at: BTreeMap<i64, usize> = BTreeMap::new();
    let floors: BTreeMap<i64, i64> = a.leaks.step_floors.iter().map(|f| (f.step_id, f.min_in_use_bytes)).collect();
    for i in 0..s.len() {
        let step = s.step_id(i);
        if floors.get(&step) == Some(&s.in_use_bytes(i)) {
            first_at.entry(step).or_insert(i);
        }
    }
    a.leaks.step_floors.iter().filter_map(|f| Some((f.step_id, *first_at.get(&f.step_id)?))).collect()
}

fn sorted_by_bytes<K: Ord>(m: BTreeMap<K, i64>) -> Vec<(K, i64)> {
    let mut v: Vec<(K, i64)> = m.into_iter().collect();
    v.sort_by_key(|(_, b)| std::cmp::Reverse(*b));
    v
}
