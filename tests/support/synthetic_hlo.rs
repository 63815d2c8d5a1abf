//! A large HloProto with buffer assignment, built in memory: the Memory Viewer's stress input (no real
//! fixture has more than a few hundred buffers). Shared by `tests/memory_viewer_synthetic.rs` (which
//! also writes it for the browser benchmark) and `benches/memory_viewer.rs`.
//!
//! One instruction per buffer; every buffer lives in one temporary allocation at an offset chosen
//! first-fit among the buffers live at the same time (so blocks never overlap, as in XLA's heap),
//! with deterministic pseudo-random sizes (64 B to 4 MiB, log-uniform) and lifetimes; plus two entry
//! parameters and one output, which are live for the whole program.

use tidemark::proto::hlo::{
    buffer_allocation_proto::Assigned,
    heap_simulator_trace::{event::Kind, Event},
    logical_buffer_proto::Location,
    BufferAllocationProto, BufferAssignmentProto, HeapSimulatorTrace, HloComputationProto, HloInstructionProto, HloModuleProto, HloProto,
    LayoutProto, LogicalBufferProto, OpMetadata, ShapeProto,
};

/// XLA's `F32` element type.
const F32: i32 = 11;
/// Indefinite buffers: two parameters and one output.
const PARAMETER_BYTES: [i64; 2] = [64 << 20, 16 << 20];
const OUTPUT_BYTES: i64 = 8 << 20;

/// A small, seeded generator: the same module every run.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

fn f32_vector(elements: i64) -> ShapeProto {
    ShapeProto {
        element_type: F32,
        dimensions: vec![elements],
        tuple_shapes: Vec::new(),
        layout: Some(LayoutProto { minor_to_major: vec![0], ..Default::default() }),
        is_dynamic_dimension: vec![false],
    }
}

fn instruction(id: i64, name: String, opcode: &str, elements: i64) -> HloInstructionProto {
    HloInstructionProto {
        name,
        opcode: opcode.into(),
        shape: Some(f32_vector(elements)),
        metadata: Some(OpMetadata {
            op_name: format!("jit(synthetic)/layer_{}/{opcode}", id % 97),
            source_file: "synthetic_model.py".into(),
            source_line: (10 + id % 500) as i32,
            ..Default::default()
        }),
        id,
        ..Default::default()
    }
}

fn logical_buffer(id: i64, size: i64) -> LogicalBufferProto {
    LogicalBufferProto {
        id,
        size,
        defined_at: Some(Location { instruction_name: String::new(), shape_index: Vec::new(), instruction_id: id }),
        color: 0,
    }
}

/// The first offset where `size` bytes fit between the `live` intervals (sorted by offset).
fn first_fit(live: &[(i64, i64, usize)], size: i64) -> i64 {
    let mut at = 0;
    for &(offset, len, _) in live {
        if offset - at >= size {
            return at;
        }
        at = at.max(offset + len);
    }
    at
}

/// A module with `buffers` temporary buffers (plus three indefinite ones).
pub fn synthetic_module(buffers: usize) -> HloProto {
    let mut rng = Lcg(0x5eed_7d3a);
    let mut instructions = Vec::new();
    let mut logical_buffers = Vec::new();
    let mut allocations = Vec::new();
    let indefinite: Vec<(i64, &str, bool)> =
        vec![(PARAMETER_BYTES[0], "parameter", true), (PARAMETER_BYTES[1], "parameter", true), (OUTPUT_BYTES, "fusion", false)];
    for (index, &(size, opcode, is_parameter)) in indefinite.iter().enumerate() {
        let id = index as i64;
        instructions.push(instruction(id, format!("{opcode}.{id}"), opcode, size / 4));
        logical_buffers.push(logical_buffer(id, size));
        allocations.push(BufferAllocationProto {
            index: id,
            size,
            is_entry_computation_parameter: is_parameter,
            parameter_number: if is_parameter { id } else { 0 },
            maybe_live_out: !is_parameter,
            assigned: vec![Assigned { logical_buffer_id: id, offset: 0, size, element_type: F32 }],
            ..Default::default()
        });
    }

    // Temporaries: allocate one per step, free those whose lifetime ended before it.
    let first = indefinite.len() as i64;
    let mut events = Vec::new();
    let mut assigned = Vec::new();
    // Live temporaries: (offset, size, id index), sorted by offset.
    let mut live: Vec<(i64, i64, usize)> = Vec::new();
    let mut ends: Vec<(usize, usize)> = Vec::new(); // (last step, buffer index)
    let mut heap_end = 0i64;
    for i in 0..buffers {
        let id = first + i as i64;
        let name = format!("fusion.{i}");
        ends.sort_unstable_by(|a, b| b.cmp(a));
        while ends.last().is_some_and(|&(end, _)| end < i) {
            let (_, gone) = ends.pop().expect("checked");
            live.retain(|&(_, _, k)| k != gone);
            let gone_id = first + gone as i64;
            events.push(Event {
                kind: Kind::Free as i32,
                buffer_id: gone_id,
                computation_name: "main".into(),
                instruction_name: format!("fusion.{gone}"),
                share_with_canonical_id: 0,
            });
        }
        // 64 B .. 4 MiB, log-uniform, in whole f32 elements.
        let elements = 16i64 << rng.below(17);
        let elements = elements + rng.below(elements as u64) as i64 / 16 * 16;
        let size = elements * 4;
        let offset = first_fit(&live, size);
        heap_end = heap_end.max(offset + size);
        let at = live.partition_point(|&(o, _, _)| o < offset);
        live.insert(at, (offset, size, i));
        // Mostly short lifetimes, some long ones (activations kept for the backward pass).
        let life = if rng.below(10) == 0 { 1 + rng.below(2000) } else { 1 + rng.below(40) };
        ends.push((i + life as usize, i));
        instructions.push(instruction(id, name.clone(), "fusion", elements));
        logical_buffers.push(logical_buffer(id, size));
        assigned.push(Assigned { logical_buffer_id: id, offset, size, element_type: F32 });
        events.push(Event {
            kind: Kind::Alloc as i32,
            buffer_id: id,
            computation_name: "main".into(),
            instruction_name: name,
            share_with_canonical_id: 0,
        });
    }
    ends.sort_unstable();
    for (_, gone) in ends {
        events.push(Event {
            kind: Kind::Free as i32,
            buffer_id: first + gone as i64,
            computation_name: "main".into(),
            instruction_name: format!("fusion.{gone}"),
            share_with_canonical_id: 0,
        });
    }
    allocations.push(BufferAllocationProto { index: first, size: heap_end, assigned, ..Default::default() });
    HloProto {
        hlo_module: Some(HloModuleProto {
            name: format!("synthetic_{buffers}"),
            entry_computation_name: "main".into(),
            computations: vec![HloComputationProto { name: "main".into(), instructions, id: 1, ..Default::default() }],
            id: 1,
            stack_frame_index: None,
        }),
        buffer_assignment: Some(BufferAssignmentProto {
            logical_buffers,
            buffer_aliases: Vec::new(),
            buffer_allocations: allocations,
            heap_simulator_traces: vec![HeapSimulatorTrace { events, whole_module_simulation: true, buffer_allocation_index: first }],
        }),
    }
}
