//! The walk in time order that matches each deallocation with its allocation: it gives deallocations
//! their allocation's metadata, counts what the leak hints need, and records where each allocation
//! ends ([`Ends`]), the one place that works out "the next event at this address".

use super::{leaks, Snapshots};
use crate::analysis::memory_events::Activity;
use crate::fast_hash::FastMap;

/// XProf's `UpdateDeallocation`, event by event in time order: a deallocation takes op, region, dtype
/// and shape from the oldest unmatched allocation at its address (a repeated allocation at a pending
/// address is ignored). The same walk gives the leak hints and counts what they need of it
/// ([`leaks::Matched`]): an address is pending here exactly when it is live there, where the newest
/// allocation at it counts. While an address is pending, its newest allocation is the last event at
/// it, so a deallocation that clears it is the next event at that allocation's address: its end.
pub(super) struct DeallocationMatcher {
    /// Address → (oldest, newest) unmatched allocation.
    pending: FastMap<u64, (usize, usize)>,
    matched: leaks::Matched,
    ends: Ends,
}

impl DeallocationMatcher {
    /// For `n` events: sized for the live allocations of a typical trace up front rather than grown
    /// by rehashing.
    pub(super) fn with_capacity(n: usize) -> Self {
        DeallocationMatcher {
            pending: FastMap::with_capacity_and_hasher(n.min(1 << 12), Default::default()),
            matched: leaks::Matched::default(),
            ends: Ends(vec![Ends::UNKNOWN; n]),
        }
    }

    /// Event `i` of `all`, the events before it having been placed.
    #[inline]
    pub(super) fn place(&mut self, all: &mut Snapshots, i: usize) {
        let m = &mut self.matched;
        let (address, bytes) = (all.address(i), all.allocation_bytes(i));
        match all.activity(i) {
            Activity::Allocation => {
                m.allocations += 1;
                m.allocated_bytes = m.allocated_bytes.wrapping_add(bytes);
                self.pending.entry(address).and_modify(|(_, newest)| *newest = i).or_insert((i, i));
            }
            Activity::Deallocation => {
                m.deallocated_bytes = m.deallocated_bytes.wrapping_add(bytes);
                match self.pending.remove(&address) {
                    Some((j, newest)) => {
                        self.ends.0[newest] = u32::try_from(i).unwrap_or(Ends::UNKNOWN);
                        all.set_string_ids(i, all.string_ids(j));
                    }
                    None => m.unmatched_deallocations += 1,
                }
            }
        }
    }

    /// What the walk found, and where each of the `n` events' allocations ends.
    pub(super) fn finish(self) -> (leaks::Matched, Ends) {
        let mut m = self.matched;
        m.live_at_end = self.pending.into_values().map(|(_, newest)| newest).collect();
        m.live_at_end.sort_unstable();
        (m, self.ends)
    }
}

/// Per snapshot, for an allocation, the deallocation that ends it: the next event at its address when
/// that is a deallocation. Unknown when the window ends first, or when the address is allocated again
/// with no deallocation in between (the older allocation's free was not recorded).
///
/// Kept as `u32` (half the memory of `usize` beside every snapshot); an index past `u32::MAX` would
/// read as unknown, but no trace holds four billion memory events of one allocator.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Ends(Vec<u32>);

impl Ends {
    const UNKNOWN: u32 = u32::MAX;

    /// The index of the deallocation that ends the allocation at `allocation_index`, if known.
    pub fn freed_by(&self, allocation_index: usize) -> Option<usize> {
        self.0.get(allocation_index).filter(|&&k| k != Ends::UNKNOWN).map(|&k| k as usize)
    }
}
