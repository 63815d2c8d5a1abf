//! The buffer assignment of one module, indexed: allocations by index, logical buffers by id with their
//! defining instruction and resolved shape, and which heap-simulator trace belongs to which allocation.
//! This mirrors XProf's `HloProtoBufferWrapper`, but in index order everywhere (XProf iterates hash maps).

use super::shape;
use crate::proto::hlo::{BufferAllocationProto, HeapSimulatorTrace, HloInstructionProto, HloProto, LogicalBufferProto, ShapeProto};
use std::collections::{BTreeMap, HashMap};

/// One buffer allocation and the trace XProf associates with it.
pub struct Allocation<'a> {
    pub proto: &'a BufferAllocationProto,
    /// The last trace whose first event's buffer lives in this allocation (XProf does not trust the
    /// trace's own `buffer_allocation_index`).
    pub trace_index: Option<usize>,
}

impl Allocation<'_> {
    /// Allocations whose lifetime the heap simulation does not cover: they are live for the whole
    /// program and added to every heap size.
    ///
    /// XProf 2.24.2 does not count thread-local allocations here (its older source did): every fixture
    /// leaves them out of `indefiniteLifetimes`, the heap sizes and `indefiniteBufferAllocationMib`.
    pub fn is_indefinite(&self) -> bool {
        let p = self.proto;
        p.is_entry_computation_parameter || p.is_constant || p.maybe_live_out
    }

    /// Thread-local and tuple (index table) allocations cannot be reused by the heap.
    pub fn is_reusable(&self) -> bool {
        !self.proto.is_thread_local && !self.proto.is_tuple
    }

    /// XProf's group name, first match wins.
    pub fn category(&self) -> &'static str {
        let p = self.proto;
        if p.is_entry_computation_parameter {
            "Parameter"
        } else if p.maybe_live_out {
            "Output"
        } else if p.is_thread_local {
            "Thread-local"
        } else if p.is_constant {
            "Constant"
        } else {
            "Temporary"
        }
    }
}

/// A logical buffer that XProf can describe: assigned to an allocation and defined by a known
/// instruction. Buffers failing either are skipped, as XProf does.
pub struct LogicalBuffer<'a> {
    pub proto: &'a LogicalBufferProto,
    /// Index of the allocation the buffer is assigned to.
    pub allocation_index: i64,
    pub instruction: &'a HloInstructionProto,
    /// Offset within the allocation.
    pub offset_bytes: i64,
    pub shape: &'a ShapeProto,
}

impl LogicalBuffer<'_> {
    pub fn id(&self) -> i64 {
        self.proto.id
    }

    pub fn size_bytes(&self) -> i64 {
        self.proto.size
    }

    pub fn unpadded_bytes(&self) -> i64 {
        shape::unpadded_bytes(self.shape)
    }

    pub fn shape_text(&self) -> String {
        shape::human_string_with_layout(self.shape)
    }

    /// `name` or `name{0,1}` with the shape index.
    pub fn name_with_shape_index(&self) -> String {
        let index = self.shape_index();
        if index.is_empty() {
            return self.instruction.name.clone();
        }
        let parts: Vec<String> = index.iter().map(i64::to_string).collect();
        format!("{}{{{}}}", self.instruction.name, parts.join(","))
    }

    pub fn shape_index(&self) -> &[i64] {
        self.proto.defined_at.as_ref().map_or(&[], |d| d.shape_index.as_slice())
    }

    pub fn op_name(&self) -> &str {
        self.instruction.metadata.as_ref().map_or("", |m| m.op_name.as_str())
    }
}

pub struct Assignment<'a> {
    pub proto: &'a HloProto,
    pub allocations: BTreeMap<i64, Allocation<'a>>,
    pub buffers: HashMap<i64, LogicalBuffer<'a>>,
    pub traces: &'a [HeapSimulatorTrace],
    /// What was skipped while indexing (unknown ids), for the notes.
    pub skipped: Vec<String>,
}

/// At most this many skipped items are named in the notes; the rest are counted.
const MAX_NAMED_SKIPS: usize = 5;

impl<'a> Assignment<'a> {
    /// Indexes `proto`, which must have a buffer assignment (the caller checks).
    pub fn new(proto: &'a HloProto) -> Self {
        let empty = &[][..];
        let module = proto.hlo_module.as_ref();
        let ba = proto.buffer_assignment.as_ref();
        let instructions: HashMap<i64, &HloInstructionProto> =
            module.map_or(&[][..], |m| m.computations.as_slice()).iter().flat_map(|c| c.instructions.iter()).map(|i| (i.id, i)).collect();
        let logical: HashMap<i64, &LogicalBufferProto> =
            ba.map_or(&[][..], |b| b.logical_buffers.as_slice()).iter().map(|l| (l.id, l)).collect();

        let mut skipped = Vec::new();
        let mut allocations = BTreeMap::new();
        let mut buffers = HashMap::new();
        for alloc in ba.map_or(&[][..], |b| b.buffer_allocations.as_slice()) {
            allocations.insert(alloc.index, Allocation { proto: alloc, trace_index: None });
            for assigned in &alloc.assigned {
                let Some(lb) = logical.get(&assigned.logical_buffer_id) else {
                    skipped.push(format!("logical buffer {} (allocation {}) is not defined", assigned.logical_buffer_id, alloc.index));
                    continue;
                };
                let instruction_id = lb.defined_at.as_ref().map_or(0, |d| d.instruction_id);
                let Some(instruction) = instructions.get(&instruction_id) else {
                    skipped.push(format!("logical buffer {}: instruction {instruction_id} is not in the module", lb.id));
                    continue;
                };
                let shape_index = lb.defined_at.as_ref().map_or(&[][..], |d| d.shape_index.as_slice());
                let shape = instruction.shape.as_ref().map(|s| shape::resolve_index(s, shape_index));
                buffers.insert(
                    lb.id,
                    LogicalBuffer {
                        proto: lb,
                        allocation_index: alloc.index,
                        instruction,
                        offset_bytes: assigned.offset,
                        shape: shape.unwrap_or(&DEFAULT_SHAPE),
                    },
                );
            }
        }
        let traces = ba.map_or(empty, |b| b.heap_simulator_traces.as_slice());
        for (i, trace) in traces.iter().enumerate() {
            let Some(first) = trace.events.first() else { continue };
            let Some(buffer) = buffers.get(&first.buffer_id) else { continue };
            if let Some(a) = allocations.get_mut(&buffer.allocation_index) {
                a.trace_index = Some(i);
            }
        }
        Assignment { proto, allocations, buffers, traces, skipped }
    }

    /// The allocations of memory space `color`, by index.
    pub fn allocations_of(&self, color: i64) -> impl Iterator<Item = &Allocation<'a>> {
        self.allocations.values().filter(move |a| a.proto.color == color)
    }

    pub fn buffer(&self, id: i64) -> Option<&LogicalBuffer<'a>> {
        self.buffers.get(&id)
    }

    pub fn allocation_of(&self, buffer: &LogicalBuffer) -> Option<&Allocation<'a>> {
        self.allocations.get(&buffer.allocation_index)
    }

    /// The heap-simulator trace for memory space `color`: the trace of the first non-indefinite
    /// allocation of that color that has one, else the trace with the most events on buffers of that
    /// color (first of equals). XProf takes "first" in hash order; we take index order.
    pub fn trace_for(&self, color: i64) -> Option<usize> {
        if let Some(i) = self.allocations_of(color).filter(|a| !a.is_indefinite()).find_map(|a| a.trace_index) {
            return Some(i);
        }
        let mut best = None;
        let mut best_count = 0;
        for (i, trace) in self.traces.iter().enumerate() {
            let count = trace.events.iter().filter(|e| self.buffer(e.buffer_id).is_some_and(|b| b.proto.color == color)).count();
            if count > best_count {
                best = Some(i);
                best_count = count;
            }
        }
        best
    }

    /// Notes naming (some of) the skipped items.
    pub fn skip_notes(&self) -> Vec<String> {
        summarize_skips(&self.skipped)
    }
}

/// A shape for instructions that have none: XProf's `Shape()` (invalid type, no dimensions).
static DEFAULT_SHAPE: ShapeProto =
    ShapeProto { element_type: 0, dimensions: Vec::new(), tuple_shapes: Vec::new(), layout: None, is_dynamic_dimension: Vec::new() };

/// The first few skip reasons, then a count of the rest.
pub fn summarize_skips(skipped: &[String]) -> Vec<String> {
    let mut notes: Vec<String> = skipped.iter().take(MAX_NAMED_SKIPS).map(|s| format!("skipped: {s}")).collect();
    if skipped.len() > MAX_NAMED_SKIPS {
        notes.push(format!("skipped {} more items like these", skipped.len() - MAX_NAMED_SKIPS));
    }
    notes
}
