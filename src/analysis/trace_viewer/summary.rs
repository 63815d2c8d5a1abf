//! Search results and the summary of a selected time range (events by name: count, total and self
//! time), both answered from the store's columns.

use super::lod::first_candidate;
use super::store::{StoreThread, TraceStore};
use serde::{Deserialize, Serialize};
use std::ops::Range;

/// The time of the events nested directly in each event of `events` (a range of `thread`'s events):
/// the part of each event one level deeper that lies inside it.
pub fn child_time_ps(store: &TraceStore, thread: &StoreThread, events: Range<u32>) -> Vec<i64> {
    let (starts, depths) = (store.start_ps(), store.depth());
    let end_of = |e: usize| starts[e].saturating_add(store.duration_ps(e).max(0));
    let mut child = vec![0i64; events.len()];
    let Some(last_end) = events.clone().map(|e| end_of(e as usize)).max() else { return child };
    // The latest event at each depth among those seen: the parent of the next event one level deeper.
    let mut open: Vec<Option<u32>> = Vec::new();
    for e in events.start..thread.events.end {
        let i = e as usize;
        if starts[i] >= last_end && e >= events.end {
            break;
        }
        let d = usize::from(depths[i]);
        if let Some(parent) = d.checked_sub(1).and_then(|p| open.get(p).copied().flatten()).filter(|p| events.contains(p)) {
            let overlap = end_of(i).min(end_of(parent as usize)) - starts[i];
            child[(parent - events.start) as usize] += overlap.max(0);
        }
        open.resize(d + 1, None);
        open[d] = Some(e);
    }
    child
}

/// The events a search found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SearchResult {
    /// How many events match.
    pub count: usize,
    /// The matches (indices into the store's columns), by start time then thread order.
    pub event: Vec<u32>,
    pub start_ps: Vec<i64>,
}

/// The events (indices into the store's columns) that `matches` accepts, by start time then thread
/// order.
pub fn search(store: &TraceStore, matches: impl Fn(u32) -> bool) -> SearchResult {
    let mut event: Vec<u32> = (0..store.event_count() as u32).filter(|&e| matches(e)).collect();
    event.sort_by_key(|&e| (store.start_ps()[e as usize], e));
    let start_ps = event.iter().map(|&e| store.start_ps()[e as usize]).collect();
    SearchResult { count: event.len(), event, start_ps }
}

/// The events of one name in a range.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NameSummary {
    pub name: String,
    pub count: u64,
    pub total_ps: i64,
    pub self_ps: i64,
}

/// The events that start in `[from_ps, to_ps)` on `threads` (indices into the store's threads; all
/// when `None`), by name: most total time first, then by name.
pub fn range_summary(store: &TraceStore, from_ps: i64, to_ps: i64, threads: Option<&[u32]>) -> Vec<NameSummary> {
    let mut by_name: Vec<(u64, i64, i64)> = vec![(0, 0, 0); store.names().len()];
    for (t, thread) in store.threads.iter().enumerate() {
        if threads.is_some_and(|ts| !ts.contains(&(t as u32))) {
            continue;
        }
        let first = first_candidate(store, thread.events.clone(), 0, from_ps);
        let last = first + store.start_ps()[first as usize..thread.events.end as usize].partition_point(|&s| s < to_ps) as u32;
        let child = child_time_ps(store, thread, first..last);
        for (e, child) in (first..last).zip(child) {
            let i = e as usize;
            let duration = store.duration_ps(i).max(0);
            let slot = &mut by_name[store.name_ids()[i] as usize];
            *slot = (slot.0 + 1, slot.1 + duration, slot.2 + (duration - child));
        }
    }
    let mut rows: Vec<NameSummary> = by_name
        .into_iter()
        .enumerate()
        .filter(|(_, (count, _, _))| *count > 0)
        .map(|(n, (count, total_ps, self_ps))| NameSummary { name: store.names()[n].clone(), count, total_ps, self_ps })
        .collect();
    rows.sort_by(|a, b| b.total_ps.cmp(&a.total_ps).then_with(|| a.name.cmp(&b.name)));
    rows
}
