//! When each allocation was made and freed, read from the ends the matcher recorded
//! ([`super::matcher`]) rather than by walking the snapshots again.

use super::{AllocatorProfile, Lifetime};
use crate::analysis::memory_events::Activity;

impl AllocatorProfile {
    /// Lifetimes of every allocation merged into each breakdown row (none for a special row), row by
    /// row, each in the row's order: [`Self::lifetime`] of each.
    pub fn breakdown_lifetimes(&self) -> Vec<Vec<Lifetime>> {
        self.breakdown.iter().map(|row| row.snapshot_indices.iter().filter_map(|&i| self.lifetime(i)).collect()).collect()
    }

    /// The index of the deallocation that frees the allocation at `allocation_index`, where the window
    /// holds it.
    pub fn freed_by(&self, allocation_index: usize) -> Option<usize> {
        self.ends.freed_by(allocation_index)
    }

    /// The lifetime of the allocation at `snapshots[allocation_index]`: it ends at the next event at
    /// the same address if that is a deallocation. `None` if the index is not an allocation.
    pub fn lifetime(&self, allocation_index: usize) -> Option<Lifetime> {
        let alloc = self.snapshots.get(allocation_index)?;
        if alloc.activity.activity != Activity::Allocation {
            return None;
        }
        let end = self.ends.freed_by(allocation_index);
        Some(Lifetime {
            allocation_index,
            allocated_at_ps: alloc.time_offset_ps,
            deallocation_index: end,
            deallocated_at_ps: end.map(|k| self.snapshots.times()[k]),
            allocated_trace_ps: self.trace_time_ps(allocation_index)?,
            deallocated_trace_ps: end.and_then(|k| self.trace_time_ps(k)),
        })
    }
}
