//! What each module's run allocates: its buffer assignment's allocations that are neither parameters
//! (the caller's arrays), constants (loaded with the executable) nor thread-local (never on the device
//! heap), with the kind, output index and shape each is named by.

use crate::analysis::memory_viewer::assignment::Assignment;
use crate::analysis::memory_viewer::{self, Options};
use crate::proto::hlo::{HloModuleProto, HloProto};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// What a buffer-assignment allocation holds, as XProf's Memory Viewer groups them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BufferKind {
    /// A result the caller gets back (`maybe_live_out`).
    Output,
    /// The module's scratch memory (every other allocation of the heap).
    Temporary,
}

/// One allocation a module's run makes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunAllocation {
    /// Its index in the buffer assignment.
    pub index: i64,
    pub size_bytes: i64,
    pub kind: BufferKind,
    /// For an output, its position in the module's result tuple (`{3}`), where the entry's root says.
    pub output_index: Option<Vec<i64>>,
    /// The shape of its (largest) buffer, with layout: `f32[2048,2048]{1,0}`.
    pub shape: String,
    /// The instruction (with shape index) defining its largest buffer: what the Memory Viewer
    /// highlights.
    pub instruction: String,
}

/// One module of the trace with what its runs allocate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModuleAllocations {
    pub program_id: u64,
    /// XProf's name, `jit_train_step(5314)`: the Memory Viewer's.
    pub xprof_name: String,
    /// The HLO module's own name, `jit_train_step`: what the host events name.
    pub name: String,
    pub allocations: Vec<RunAllocation>,
    /// The Memory Viewer's temporaries (its total allocation less what lives for the whole program).
    pub temporaries_bytes: i64,
    /// The Memory Viewer's largest buffers at the module's own peak, largest first (at most
    /// [`LARGEST_BUFFERS`]): what fills a temporary allocation.
    pub largest_buffers: Vec<(String, i64)>,
}

/// How many of a module's largest buffers at its peak are listed.
pub const LARGEST_BUFFERS: usize = 3;

/// The modules of `decoded` (program id, XProf's name, proto) that have a buffer assignment.
pub fn modules(decoded: &[(u64, String, HloProto)]) -> Vec<ModuleAllocations> {
    decoded.iter().filter_map(|(program_id, xprof_name, proto)| module(*program_id, xprof_name, proto)).collect()
}

fn module(program_id: u64, xprof_name: &str, proto: &HloProto) -> Option<ModuleAllocations> {
    let hlo = proto.hlo_module.as_ref()?;
    let viewer = memory_viewer::analyze(proto, Options::default()).ok()?;
    let assignment = Assignment::new(proto);
    let outputs = output_positions(hlo);
    let mut allocations = Vec::new();
    for a in assignment.allocations.values() {
        let p = a.proto;
        if p.is_entry_computation_parameter || p.is_constant || p.is_thread_local {
            continue;
        }
        let kind = if p.maybe_live_out { BufferKind::Output } else { BufferKind::Temporary };
        let buffers: Vec<_> = assignment.buffers.values().filter(|b| b.allocation_index == p.index).collect();
        let largest = buffers.iter().max_by_key(|b| (b.size_bytes(), std::cmp::Reverse(b.id())));
        let output_index = (kind == BufferKind::Output)
            .then(|| buffers.iter().find_map(|b| outputs.get(&(b.instruction.id, b.shape_index().to_vec())).cloned()))
            .flatten();
        allocations.push(RunAllocation {
            index: p.index,
            size_bytes: p.size,
            kind,
            output_index,
            shape: largest.map(|b| b.shape_text()).unwrap_or_default(),
            instruction: largest.map(|b| b.name_with_shape_index()).unwrap_or_default(),
        });
    }
    let largest_buffers = viewer
        .peak_buffers_by_size
        .iter()
        .filter_map(|&i| viewer.peak_buffers.get(i))
        .filter(|b| b.logical_buffer_id.is_some())
        .take(LARGEST_BUFFERS)
        .map(|b| (b.instruction_name.clone(), b.size_bytes))
        .collect();
    Some(ModuleAllocations {
        program_id,
        xprof_name: xprof_name.to_string(),
        name: hlo.name.clone(),
        allocations,
        temporaries_bytes: viewer.figures.temporary_allocation_bytes,
        largest_buffers,
    })
}

/// Where each element of the entry computation's result comes from: (defining instruction id, its
/// shape index) → the element's index in the result. Tuple elements are followed through
/// `get-tuple-element` and `bitcast`, which define no buffer of their own.
fn output_positions(module: &HloModuleProto) -> HashMap<(i64, Vec<i64>), Vec<i64>> {
    let instructions: HashMap<i64, _> = module.computations.iter().flat_map(|c| &c.instructions).map(|i| (i.id, i)).collect();
    let Some(entry) = module.computations.iter().find(|c| c.id == module.entry_computation_id) else { return HashMap::new() };
    let Some(root) = instructions.get(&entry.root_id) else { return HashMap::new() };
    let resolve = |mut id: i64| {
        let mut index = Vec::new();
        // Bounded: a malformed module may loop.
        for _ in 0..instructions.len() {
            let Some(i) = instructions.get(&id) else { break };
            match (i.opcode.as_str(), i.operand_ids.first()) {
                ("get-tuple-element", Some(&op)) => {
                    index.insert(0, i.tuple_index);
                    id = op;
                }
                ("bitcast", Some(&op)) => id = op,
                _ => break,
            }
        }
        (id, index)
    };
    if root.opcode == "tuple" {
        root.operand_ids.iter().enumerate().map(|(k, &op)| (resolve(op), vec![k as i64])).collect()
    } else {
        HashMap::from([(resolve(root.id), Vec::new())])
    }
}
