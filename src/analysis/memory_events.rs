//! The allocator's `MemoryAllocation` / `MemoryDeallocation` events of an XSpace, typed
//! (shared/FORMATS.md §2). The input of the Memory Profile and of the overview's per-allocator counts.

use crate::decode::xplane::{Plane, StatValue, XSpace};
use crate::decode::DecodeError;
use serde::{Deserialize, Serialize};

pub const ALLOCATION: &str = "MemoryAllocation";
pub const DEALLOCATION: &str = "MemoryDeallocation";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Activity {
    Allocation,
    Deallocation,
}

/// One allocator event with its stats. Integer stats are read only from their integer fields and
/// `fragmentation` only from its double field, as XProf does; a missing stat is 0 / "".
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MemoryEvent {
    pub activity: Activity,
    /// Index of the plane in the file; with `line_index`, the file (visit) order XProf uses for its peak.
    pub plane_index: usize,
    pub line_index: usize,
    /// Position of the event among all events of its line (for joining with per-event analyses such
    /// as step grouping).
    pub event_index: usize,
    /// `line.timestamp_ns * 1000 + offset_ps`.
    pub time_ps: i64,
    /// The event's raw `offset_ps`: XProf reports the peak time with this.
    pub offset_ps: i64,
    /// The memory ID: the allocator name (or `index_on_host` / `device_ordinal` when absent).
    pub memory_id: String,
    pub stack_reserved_bytes: i64,
    pub heap_allocated_bytes: i64,
    pub free_memory_bytes: i64,
    pub fragmentation: f64,
    pub peak_bytes_in_use: i64,
    pub requested_bytes: i64,
    pub allocation_bytes: i64,
    pub address: u64,
    pub tf_op_name: String,
    pub step_id: i64,
    pub region_type: String,
    pub data_type: i64,
    pub tensor_shape: String,
}

/// Stat ids of one plane, looked up once.
struct StatIds {
    ids: [Option<i64>; 16],
}

const STATS: [&str; 16] = [
    "allocator_name",
    "bytes_reserved",
    "bytes_allocated",
    "bytes_available",
    "fragmentation",
    "peak_bytes_in_use",
    "requested_bytes",
    "allocation_bytes",
    "addr",
    "tf_op",
    "id",
    "region_type",
    "data_type",
    "shape",
    "index_on_host",
    "device_ordinal",
];

impl StatIds {
    fn new(plane: &Plane) -> Self {
        StatIds { ids: STATS.map(|n| plane.stat_id(n)) }
    }
    fn index(&self, metadata_id: i64) -> Option<usize> {
        self.ids.iter().position(|id| *id == Some(metadata_id))
    }
}

/// Visits every memory event of `space` in file order (planes → lines → events).
pub fn for_each(space: &XSpace, mut visit: impl FnMut(MemoryEvent)) -> Result<(), DecodeError> {
    for (plane_index, plane) in space.planes.iter().enumerate() {
        let alloc_ids = plane.event_metadata_ids(ALLOCATION);
        let dealloc_ids = plane.event_metadata_ids(DEALLOCATION);
        if alloc_ids.is_empty() && dealloc_ids.is_empty() {
            continue;
        }
        let ids = StatIds::new(plane);
        for (line_index, line) in plane.lines.iter().enumerate() {
            let base_ps = line.header.timestamp_ns.saturating_mul(1000);
            // `wanted` is asked once per event, in order, so it can number them.
            let next_index = std::cell::Cell::new(0usize);
            space.for_each_event(
                line,
                |m| {
                    next_index.set(next_index.get() + 1);
                    alloc_ids.contains(&m) || dealloc_ids.contains(&m)
                },
                |ev| {
                    let event_index = next_index.get() - 1;
                    let activity = if alloc_ids.contains(&ev.metadata_id) { Activity::Allocation } else { Activity::Deallocation };
                    let offset_ps = match ev.data {
                        Some(crate::proto::xplane::x_event::Data::OffsetPs(o)) => o,
                        _ => 0,
                    };
                    let mut e = MemoryEvent {
                        activity,
                        plane_index,
                        line_index,
                        event_index,
                        time_ps: base_ps.saturating_add(offset_ps),
                        offset_ps,
                        memory_id: String::new(),
                        stack_reserved_bytes: 0,
                        heap_allocated_bytes: 0,
                        free_memory_bytes: 0,
                        fragmentation: 0.0,
                        peak_bytes_in_use: 0,
                        requested_bytes: 0,
                        allocation_bytes: 0,
                        address: 0,
                        tf_op_name: String::new(),
                        step_id: 0,
                        region_type: String::new(),
                        data_type: 0,
                        tensor_shape: String::new(),
                    };
                    let mut fallback_id = None;
                    for stat in &ev.stats {
                        let Some(which) = ids.index(stat.metadata_id) else { continue };
                        let Some(v) = plane.stat_value(stat) else { continue };
                        let int = match v {
                            StatValue::Int(i) => i,
                            _ => 0,
                        };
                        let text = || v.as_str().unwrap_or("").to_string();
                        match which {
                            0 => e.memory_id = text(),
                            1 => e.stack_reserved_bytes = int,
                            2 => e.heap_allocated_bytes = int,
                            3 => e.free_memory_bytes = int,
                            4 => e.fragmentation = if let StatValue::Double(d) = v { d } else { 0.0 },
                            5 => e.peak_bytes_in_use = int,
                            6 => e.requested_bytes = int,
                            7 => e.allocation_bytes = int,
                            8 => e.address = v.as_i64().map_or(0, |a| a as u64),
                            9 => e.tf_op_name = text(),
                            10 => e.step_id = int,
                            11 => e.region_type = text(),
                            12 => e.data_type = int,
                            13 => e.tensor_shape = text(),
                            _ => fallback_id = fallback_id.or(v.as_i64()),
                        }
                    }
                    if e.memory_id.is_empty() {
                        if let Some(id) = fallback_id {
                            e.memory_id = id.to_string();
                        }
                    }
                    visit(e);
                },
            )?;
        }
    }
    Ok(())
}

/// All memory events of `space`, in file order.
pub fn collect(space: &XSpace) -> Result<Vec<MemoryEvent>, DecodeError> {
    let mut out = Vec::new();
    for_each(space, |e| out.push(e))?;
    Ok(out)
}
