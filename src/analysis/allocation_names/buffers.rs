//! What each module's run allocates: its buffer assignment's allocations that are neither parameters
//! (the caller's arrays), constants (loaded with the executable) nor thread-local (never on the device
//! heap), with the kind, output index and shape each is named by, and the parameter an output holds
//! where the HLO says so ([`Held`]). A parameter aliased with an output (`donate_argnums`) is the one
//! parameter allocation a run may make: where the caller did not donate the array, the run's output
//! is a fresh allocation of the parameter's size.

use crate::analysis::memory_viewer::assignment::Assignment;
use crate::analysis::memory_viewer::{self, Options};
use crate::proto::hlo::{HloInstructionProto, HloModuleProto, HloProto, ShapeProto};
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
    /// For an output, the parameter it holds, where the HLO says so.
    pub holds: Option<Held>,
    /// For an output that holds no parameter (a new value: no aliasing, no copy), the entry
    /// parameters of exactly its shape, where its element of the result has one: what the HLO says of
    /// which variable it may be the next value of (new weights have their old weights' shape), never
    /// which one.
    pub shaped_as: Vec<Parameter>,
}

/// An entry parameter, by number and the variable JAX wrote in its `op_name`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Parameter {
    pub number: i64,
    pub variable: Option<String>,
}

impl Parameter {
    /// The variable where JAX named it, else `parameter 3`.
    pub fn text(&self) -> String {
        self.variable.clone().unwrap_or_else(|| format!("parameter {}", self.number))
    }
}

/// The parameter an output holds: the user's variable, where JAX named it. Only what the HLO states:
/// an output computed from a parameter (new weights from old) holds none, as no field ties them.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Held {
    pub parameter_number: i64,
    /// The element of a tuple parameter; empty for the whole parameter.
    pub parameter_shape_index: Vec<i64>,
    /// The parameter instruction's `op_name`: JAX writes the argument's path there (`p['c3']`,
    /// `s[0].trace['c3']`, `args[0]`). `None` where it is empty.
    pub variable: Option<String>,
    pub how: HeldHow,
}

/// How the HLO ties an output to a parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HeldHow {
    /// The module's input/output aliasing: the output is the parameter's new value, in the
    /// parameter's own buffer where the caller donated it.
    Aliased,
    /// The entry's result element is a copy of the parameter.
    Copied,
}

impl Held {
    /// What a label says: `holds p['c3'] (parameter 2, aliased)`, `a copy of args[0] (parameter 0)`.
    pub fn text(&self) -> String {
        let mut parameter = format!("parameter {}", self.parameter_number);
        if !self.parameter_shape_index.is_empty() {
            let index: Vec<String> = self.parameter_shape_index.iter().map(i64::to_string).collect();
            parameter.push_str(&format!(" {{{}}}", index.join(",")));
        }
        match (self.how, &self.variable) {
            (HeldHow::Aliased, Some(v)) => format!("holds {v} ({parameter}, aliased)"),
            (HeldHow::Aliased, None) => format!("holds {parameter} (aliased)"),
            (HeldHow::Copied, Some(v)) => format!("a copy of {v} ({parameter})"),
            (HeldHow::Copied, None) => format!("a copy of {parameter}"),
        }
    }
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
    /// The buffer assignment's constant allocations (index, bytes). No allocator event is ever one:
    /// XLA's GPU executable resolves them at its first run (`Resolve constant globals`) to globals
    /// of the loaded kernel module, which the CUDA/ROCm driver places, or to memory the executor
    /// allocates directly (`CreateOrShareConstant`), never through the BFC allocator the trace records.
    pub constants: Vec<(i64, i64)>,
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
    let entry = EntryOutputs::new(hlo);
    let mut allocations = Vec::new();
    let mut constants = Vec::new();
    for a in assignment.allocations.values() {
        let p = a.proto;
        if p.is_constant {
            constants.push((p.index, p.size));
        }
        // A parameter's allocation is the caller's array, unless an output is aliased with it.
        let aliased =
            p.is_entry_computation_parameter.then(|| entry.aliased_output(p.parameter_number, &p.parameter_shape_index)).flatten();
        if (p.is_entry_computation_parameter && aliased.is_none()) || p.is_constant || p.is_thread_local {
            continue;
        }
        let kind = if p.maybe_live_out { BufferKind::Output } else { BufferKind::Temporary };
        let buffers: Vec<_> = assignment.buffers.values().filter(|b| b.allocation_index == p.index).collect();
        let largest = buffers.iter().max_by_key(|b| (b.size_bytes(), std::cmp::Reverse(b.id())));
        let output_index = match aliased {
            Some(index) => Some(index),
            None if kind == BufferKind::Output => {
                buffers.iter().find_map(|b| entry.defined_at.get(&(b.instruction.id, b.shape_index().to_vec())).cloned())
            }
            None => None,
        };
        let holds = output_index.as_ref().and_then(|i| entry.held(i));
        let shaped_as = match (&output_index, &holds) {
            (Some(i), None) => entry.shaped_as(i),
            _ => Vec::new(),
        };
        allocations.push(RunAllocation {
            index: p.index,
            size_bytes: p.size,
            kind,
            output_index,
            shape: largest.map(|b| b.shape_text()).unwrap_or_default(),
            instruction: largest.map(|b| b.name_with_shape_index()).unwrap_or_default(),
            holds,
            shaped_as,
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
        constants,
        largest_buffers,
    })
}

/// An instruction (id, or a parameter's number) and a shape index within its value.
type ValueAt = (i64, Vec<i64>);

/// The entry computation's result: where each element's buffer is defined, and the parameter an
/// element holds where the HLO says so (the module's input/output aliasing, or a copy of a parameter).
struct EntryOutputs<'m> {
    /// (defining instruction id, its shape index) → the element's index in the result. Tuple elements
    /// are followed through `get-tuple-element` and `bitcast`, which define no buffer of their own.
    defined_at: HashMap<ValueAt, Vec<i64>>,
    /// Result index → the parameter (number, shape index) it is a copy of.
    copied: HashMap<Vec<i64>, ValueAt>,
    /// The entry's parameter instructions by number.
    parameters: HashMap<i64, &'m HloInstructionProto>,
    /// The entry root's shape: the result.
    result: Option<&'m ShapeProto>,
    module: &'m HloModuleProto,
}

impl<'m> EntryOutputs<'m> {
    fn new(module: &'m HloModuleProto) -> Self {
        let mut out = EntryOutputs { defined_at: HashMap::new(), copied: HashMap::new(), parameters: HashMap::new(), result: None, module };
        let instructions: HashMap<i64, &HloInstructionProto> =
            module.computations.iter().flat_map(|c| &c.instructions).map(|i| (i.id, i)).collect();
        let Some(entry) = module.computations.iter().find(|c| c.id == module.entry_computation_id) else { return out };
        out.parameters = entry.instructions.iter().filter(|i| i.opcode == "parameter").map(|i| (i.parameter_number, i)).collect();
        let Some(root) = instructions.get(&entry.root_id) else { return out };
        out.result = root.shape.as_ref();
        let elements: Vec<ValueAt> = if root.opcode == "tuple" {
            root.operand_ids.iter().enumerate().map(|(k, &op)| (op, vec![k as i64])).collect()
        } else {
            vec![(root.id, Vec::new())]
        };
        for (id, index) in elements {
            let (defining, copy) = resolve(&instructions, id);
            out.defined_at.insert(defining, index.clone());
            if let Some(parameter) = copy {
                out.copied.insert(index, parameter);
            }
        }
        out
    }

    /// The result index of the output aliased with parameter `number`'s element `shape_index`.
    fn aliased_output(&self, number: i64, shape_index: &[i64]) -> Option<Vec<i64>> {
        let entries = self.module.input_output_alias.as_ref().map_or(&[][..], |a| a.entries.as_slice());
        entries
            .iter()
            .find(|e| e.parameter_number == number && e.parameter_shape_index == shape_index)
            .map(|e| e.output_shape_index.clone())
    }

    /// The entry parameters (not tuples) of exactly the shape of result element `index`, by number.
    fn shaped_as(&self, index: &[i64]) -> Vec<Parameter> {
        let mut element = self.result;
        for &i in index {
            element = element.and_then(|s| s.tuple_shapes.get(usize::try_from(i).ok()?));
        }
        let Some(shape) = element.filter(|s| s.tuple_shapes.is_empty()) else { return Vec::new() };
        let mut out: Vec<Parameter> = self
            .parameters
            .iter()
            .filter(|(_, p)| p.shape.as_ref() == Some(shape))
            .map(|(&number, p)| Parameter { number, variable: variable(p) })
            .collect();
        out.sort_by_key(|p| p.number);
        out
    }

    /// The parameter result element `index` holds, where the aliasing or a copy says so.
    fn held(&self, index: &[i64]) -> Option<Held> {
        let entries = self.module.input_output_alias.as_ref().map_or(&[][..], |a| a.entries.as_slice());
        let (number, shape_index, how) = match entries.iter().find(|e| e.output_shape_index == index) {
            Some(e) => (e.parameter_number, e.parameter_shape_index.clone(), HeldHow::Aliased),
            None => {
                let (number, shape_index) = self.copied.get(index)?.clone();
                (number, shape_index, HeldHow::Copied)
            }
        };
        let variable = self.parameters.get(&number).and_then(|p| variable(p));
        Some(Held { parameter_number: number, parameter_shape_index: shape_index, variable, how })
    }
}

/// The variable JAX wrote in a parameter's `op_name` (`p['c3']`), where not empty.
fn variable(parameter: &HloInstructionProto) -> Option<String> {
    parameter.metadata.as_ref().map(|m| m.op_name.clone()).filter(|n| !n.is_empty())
}

/// Where the buffer of the value `id` is defined (instruction id, shape index), through
/// `get-tuple-element` and `bitcast`; and, where the value is a copy of a parameter (a chain of
/// `copy`, `bitcast` and `get-tuple-element` with at least one copy, ending at a parameter), that
/// parameter's number and shape index.
fn resolve(instructions: &HashMap<i64, &HloInstructionProto>, id: i64) -> (ValueAt, Option<ValueAt>) {
    let mut defining = None;
    let (mut at, mut index, mut copies) = (id, Vec::new(), 0);
    // Bounded: a malformed module may loop.
    for _ in 0..=instructions.len() {
        let Some(i) = instructions.get(&at) else { break };
        match (i.opcode.as_str(), i.operand_ids.first()) {
            ("get-tuple-element", Some(&op)) => {
                index.insert(0, i.tuple_index);
                at = op;
            }
            ("bitcast", Some(&op)) => at = op,
            ("copy", Some(&op)) => {
                defining.get_or_insert_with(|| (at, index.clone()));
                copies += 1;
                at = op;
            }
            ("parameter", _) if copies > 0 => return (defining.unwrap_or((at, index.clone())), Some((i.parameter_number, index))),
            _ => break,
        }
    }
    (defining.unwrap_or((at, index)), None)
}
