//! The buffers live at the peak: indefinite allocations first (largest logical buffer of each), then
//! the simulated buffers in allocation order; buffers under the small-buffer size fold into one entry.

use super::assignment::{Assignment, LogicalBuffer};
use super::heap_simulation::Replay;
use super::source::{source_info, SourceInfo};
use super::{GroupTotal, HeapObject};
use std::collections::BTreeMap;

/// The peak snapshot before the timeline figures are added.
pub struct PeakSnapshot {
    /// Program order: indefinite first, then simulated, then the small fold.
    pub objects: Vec<HeapObject>,
    /// Indices into `objects`, largest first (stable among equal sizes).
    pub by_size: Vec<usize>,
    /// Bytes of the indefinite allocations added to every heap size: only those with a describable
    /// logical buffer of non-zero size count, as in XProf.
    pub indefinite_bytes: i64,
    /// Colour number given to each buffer drawn on its own; the allocation blocks reuse them.
    pub color_of_buffer: BTreeMap<i64, i32>,
    pub by_group: Vec<GroupTotal>,
}

struct Builder<'s, 'a> {
    assignment: &'s Assignment<'a>,
    small_buffer_bytes: i64,
    objects: Vec<HeapObject>,
    color_of_buffer: BTreeMap<i64, i32>,
    small_bytes: i64,
    by_group: BTreeMap<&'static str, GroupTotal>,
}

pub fn snapshot(assignment: &Assignment, color: i64, replay: &Replay, small_buffer_bytes: i64) -> PeakSnapshot {
    let mut b = Builder {
        assignment,
        small_buffer_bytes,
        objects: Vec::new(),
        color_of_buffer: BTreeMap::new(),
        small_bytes: 0,
        by_group: BTreeMap::new(),
    };
    let mut indefinite_bytes = 0i64;
    for allocation in assignment.allocations_of(color).filter(|a| a.is_indefinite()) {
        // An indefinite allocation holds several logical buffers, all at offset 0; show the largest
        // (first of equals), which is normally the allocation's own size.
        let mut best: Option<&LogicalBuffer> = None;
        for assigned in &allocation.proto.assigned {
            let Some(buffer) = assignment.buffer(assigned.logical_buffer_id) else { continue };
            if buffer.size_bytes() > best.map_or(0, |b| b.size_bytes()) {
                best = Some(buffer);
            }
        }
        if let Some(buffer) = best {
            indefinite_bytes = indefinite_bytes.saturating_add(allocation.proto.size);
            b.count_group(allocation.category(), allocation.proto.size);
            b.add(buffer);
        }
    }
    for id in &replay.peak_buffer_ids {
        let Some(buffer) = assignment.buffer(*id) else { continue };
        let category = assignment.allocation_of(buffer).map_or("Temporary", |a| a.category());
        b.count_group(category, buffer.size_bytes());
        b.add(buffer);
    }
    if b.small_bytes != 0 {
        let color_index = b.objects.len() as i32;
        b.objects.push(HeapObject {
            color_index,
            label: format!("small (<{small_buffer_bytes} bytes)"),
            logical_buffer_id: None,
            size_bytes: b.small_bytes,
            unpadded_bytes: 0,
            instruction_name: String::new(),
            shape: String::new(),
            op_name: String::new(),
            group: None,
            opcode: String::new(),
            source: None,
        });
    }
    let mut by_size: Vec<usize> = (0..b.objects.len()).collect();
    by_size.sort_by(|&x, &y| b.objects[y].size_bytes.cmp(&b.objects[x].size_bytes));
    PeakSnapshot {
        objects: b.objects,
        by_size,
        indefinite_bytes,
        color_of_buffer: b.color_of_buffer,
        by_group: b.by_group.into_values().collect(),
    }
}

impl Builder<'_, '_> {
    fn add(&mut self, buffer: &LogicalBuffer) {
        if buffer.size_bytes() < self.small_buffer_bytes {
            self.small_bytes = self.small_bytes.saturating_add(buffer.size_bytes());
            return;
        }
        let color_index = self.objects.len() as i32;
        self.color_of_buffer.insert(buffer.id(), color_index);
        self.objects.push(heap_object(self.assignment, buffer, color_index));
    }

    fn count_group(&mut self, group: &'static str, bytes: i64) {
        let total = self.by_group.entry(group).or_insert(GroupTotal { group: group.into(), bytes: 0, buffer_count: 0 });
        total.bytes = total.bytes.saturating_add(bytes);
        total.buffer_count += 1;
    }
}

fn heap_object(assignment: &Assignment, buffer: &LogicalBuffer, color_index: i32) -> HeapObject {
    let shape = buffer.shape_text();
    HeapObject {
        color_index,
        label: format!("{}: {shape} # {}", buffer.instruction.name, buffer.op_name()),
        logical_buffer_id: Some(buffer.id()),
        size_bytes: buffer.size_bytes(),
        unpadded_bytes: buffer.unpadded_bytes(),
        instruction_name: buffer.name_with_shape_index(),
        shape,
        op_name: buffer.op_name().to_string(),
        group: assignment.allocation_of(buffer).map(|a| a.category().into()),
        opcode: buffer.instruction.opcode.clone(),
        source: buffer_source(assignment, buffer),
    }
}

/// The source of the instruction that defines `buffer`.
pub fn buffer_source(assignment: &Assignment, buffer: &LogicalBuffer) -> Option<SourceInfo> {
    let index = assignment.proto.hlo_module.as_ref().and_then(|m| m.stack_frame_index.as_ref());
    source_info(buffer.instruction, index)
}
