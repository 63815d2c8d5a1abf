//! The allocator's state at any event of a device's trace: its segments with their blocks, what is
//! pending free, and how fragmented the free space is. The dump's segments are the state after the
//! last event; the trace is undone from its end back to the chosen event (as PyTorch's viewer walks
//! it backwards for its segment view): an `alloc` undone frees its block, a `free_completed` undone
//! brings it back pending, a `free_requested` undone makes it allocated again, a `segment_alloc` or
//! `segment_map` undone removes its segment, a `segment_free` or `segment_unmap` undone brings it
//! back empty. Blocks brought back have the trace's (requested) sizes; those at the dump, the
//! allocator's (rounded) sizes.

use super::{frame_text, Actions};
use crate::decode::pickle_snapshot::TorchSnapshot;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AllocatorState {
    pub device: usize,
    /// The state after this event (-1: before the first).
    pub event_index: i64,
    pub time_us: Option<i64>,
    pub segments: Vec<SegmentState>,
    pub reserved_bytes: i64,
    pub allocated_bytes: i64,
    pub pending_free_bytes: i64,
    pub pending_free_blocks: u64,
    /// Reserved bytes in no active block.
    pub free_bytes: i64,
    /// The largest gap between active blocks of one segment.
    pub largest_free_bytes: i64,
    /// `1 - largest_free / free`: 0 when the free space is one piece (or there is none).
    pub fragmentation: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SegmentState {
    pub address: i64,
    pub total_size: i64,
    pub allocated_bytes: i64,
    pub largest_free_bytes: i64,
    pub blocks: Vec<BlockState>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BlockState {
    pub address: i64,
    pub size: i64,
    /// `active_allocated` or `active_pending_free`.
    pub state: String,
    pub frame: String,
}

/// The segment of `segs` that holds `addr`.
fn containing(segs: &mut BTreeMap<i64, Seg>, addr: i64) -> Option<&mut Seg> {
    segs.range_mut(..=addr).next_back().filter(|(a, g)| addr < a.saturating_add(g.size)).map(|(_, g)| g)
}

struct Seg {
    size: i64,
    /// Active blocks by address: size, pending, stack.
    blocks: BTreeMap<i64, (i64, bool, u32)>,
}

/// The state of device `device` after event `event_index` (-1: before the first); `None` for a
/// device the snapshot does not have or an index past its trace.
pub fn state_at(s: &TorchSnapshot, device: usize, event_index: i64) -> Option<AllocatorState> {
    let t = s.devices.get(device)?;
    if event_index < -1 || event_index >= t.len() as i64 {
        return None;
    }
    let acts = Actions::of(s);
    let pending = s.find_str("active_pending_free");
    let mut segs: BTreeMap<i64, Seg> = BTreeMap::new();
    for g in s.segments.iter().filter(|g| g.device == device as i64) {
        let blocks = g
            .blocks
            .iter()
            .filter(|b| s.str(b.state).starts_with("active"))
            .map(|b| (b.address, (b.size, Some(b.state) == pending, b.stack)))
            .collect();
        segs.insert(g.address, Seg { size: g.total_size, blocks });
    }
    for i in ((event_index + 1) as usize..t.len()).rev() {
        let (a, addr, size) = (Some(t.action[i]), t.addr[i], t.size[i]);
        if a == acts.alloc {
            if let Some(g) = containing(&mut segs, addr) {
                g.blocks.remove(&addr);
            }
        } else if a == acts.free_completed {
            if let Some(g) = containing(&mut segs, addr) {
                g.blocks.insert(addr, (size, true, t.stack[i]));
            }
        } else if a == acts.free_requested {
            if let Some(g) = containing(&mut segs, addr) {
                if let Some(b) = g.blocks.get_mut(&addr) {
                    b.1 = false;
                }
            }
        } else if a == acts.segment_alloc || a == acts.segment_map {
            segs.remove(&addr);
        } else if a == acts.segment_free || a == acts.segment_unmap {
            segs.insert(addr, Seg { size, blocks: BTreeMap::new() });
        }
    }
    let mut out = AllocatorState {
        device,
        event_index,
        time_us: usize::try_from(event_index).ok().map(|i| t.time_us[i]),
        segments: Vec::with_capacity(segs.len()),
        reserved_bytes: 0,
        allocated_bytes: 0,
        pending_free_bytes: 0,
        pending_free_blocks: 0,
        free_bytes: 0,
        largest_free_bytes: 0,
        fragmentation: 0.0,
    };
    for (address, g) in segs {
        let (mut cursor, mut largest, mut allocated) = (address, 0i64, 0i64);
        let mut blocks = Vec::with_capacity(g.blocks.len());
        for (b, (size, is_pending, stack)) in g.blocks {
            largest = largest.max(b.saturating_sub(cursor));
            cursor = cursor.max(b.saturating_add(size));
            allocated = allocated.saturating_add(size);
            if is_pending {
                out.pending_free_bytes = out.pending_free_bytes.saturating_add(size);
                out.pending_free_blocks += 1;
            }
            let state = if is_pending { "active_pending_free" } else { "active_allocated" };
            blocks.push(BlockState { address: b, size, state: state.to_string(), frame: frame_text(s, stack) });
        }
        largest = largest.max(address.saturating_add(g.size).saturating_sub(cursor));
        out.reserved_bytes = out.reserved_bytes.saturating_add(g.size);
        out.allocated_bytes = out.allocated_bytes.saturating_add(allocated);
        out.largest_free_bytes = out.largest_free_bytes.max(largest);
        out.segments.push(SegmentState { address, total_size: g.size, allocated_bytes: allocated, largest_free_bytes: largest, blocks });
    }
    out.free_bytes = out.reserved_bytes.saturating_sub(out.allocated_bytes).max(0);
    if out.free_bytes > 0 {
        out.fragmentation = 1.0 - out.largest_free_bytes as f64 / out.free_bytes as f64;
    }
    Some(out)
}
