//! The HLO modules a trace carries in `/host:metadata`, indexed as XProf's device tools look them up:
//! by program id, then by instruction name. A module whose proto does not decode is left out (XProf
//! logs it and goes on), so its ops simply find no instruction.

use crate::analysis::gpu_cost::{module_costs, CostError, InstructionCost};
use crate::analysis::hlo_text::{shape_text, ModuleText};
use crate::analysis::memory_viewer::source::{source_info, SourceInfo};
use crate::decode::hlo::{decode_proto, embedded_modules};
use crate::decode::xplane::XSpace;
use crate::proto::hlo as pb;
use std::collections::HashMap;

/// What the device tools need of one HLO instruction.
#[derive(Debug, Clone, PartialEq)]
pub struct XlaInstruction {
    pub opcode: String,
    /// The framework op the instruction came from, as XProf 2.24 writes it: `op_name:op_type` (JAX
    /// leaves the type empty: `jit(f)/dot_general:`; no metadata gives `:`).
    pub tf_op_name: String,
    /// XProf's "HLO expression": XLA's text of the instruction, e.g. `%fusion.1 = bf16[8]{0}
    /// fusion(bf16[8]{0} %p), kind=kLoop, calls=%fused_computation` (see [`crate::analysis::hlo_text`]).
    pub expression: String,
    /// The result shape with its layout, e.g. `f32[5,1024]{1,0:T(8,128)}`.
    pub shape: String,
    /// `file:line` the instruction came from, when the HLO says.
    pub source: Option<String>,
    /// Where it came from with its call stack (what XProf's GPU op tables show), when the HLO says.
    pub source_info: Option<SourceInfo>,
    /// XLA's op category (`HloInstruction::ToCategory`): what XProf's GPU op tables give the
    /// instruction's kernels and show for a fused instruction (`loop fusion`, `data formatting`, ...).
    pub category: String,
    /// For a fusion: the names of the instructions fused into it that XProf lists as its children, in
    /// the fused computation's order (parameters and tuples left out).
    pub fused: Vec<String>,
    /// The name XLA gives the instruction and its duplicates across modules (`OpMetadata`), if any.
    pub deduplicated_name: String,
    /// Its FLOPs and bytes per execution from XLA's GPU cost analysis (the GPU op tables read it):
    /// `Ok(None)` where XProf has none, an error where Tidemark cannot compute XProf's.
    pub gpu_cost: Result<Option<InstructionCost>, CostError>,
}

/// The instructions of one module by name (the first of a repeated name wins, as in XProf).
#[derive(Debug, Clone, Default)]
pub struct XlaModule {
    pub name: String,
    /// XProf's name of the module (`jit_train_step(14)`): its `/host:metadata` event's name, which the
    /// Memory Viewer lists it by.
    pub xprof_name: String,
    instructions: HashMap<String, XlaInstruction>,
}

impl XlaModule {
    pub fn instruction(&self, name: &str) -> Option<&XlaInstruction> {
        self.instructions.get(name)
    }
}

/// Every decodable module of a trace, by program id.
#[derive(Debug, Clone, Default)]
pub struct XlaModules {
    by_program_id: HashMap<u64, XlaModule>,
}

impl XlaModules {
    /// Reads the modules of `space`. A module's program id is its `program_id` stat, or (as XProf
    /// does) its event metadata id when it has none; the first module of a program id wins.
    pub fn from_space(space: &XSpace) -> Self {
        Self::from_decoded(decoded_modules(space))
    }

    /// [`XlaModules::from_space`] from the modules [`decoded_modules`] gives, for a caller that has
    /// decoded them already.
    pub fn from_decoded(modules: Vec<(u64, String, pb::HloProto)>) -> Self {
        let by_program_id = modules
            .into_iter()
            .map(|(program_id, xprof_name, proto)| (program_id, XlaModule { xprof_name, ..index_module(&proto) }))
            .collect();
        XlaModules { by_program_id }
    }

    /// The instruction `name` of program `program_id`, if that module is here and has it.
    pub fn instruction(&self, program_id: u64, name: &str) -> Option<&XlaInstruction> {
        self.by_program_id.get(&program_id)?.instruction(name)
    }

    /// The name of program `program_id`'s module.
    pub fn module_name(&self, program_id: u64) -> Option<&str> {
        self.by_program_id.get(&program_id).map(|m| m.name.as_str())
    }

    /// Adds `other`'s modules whose program id is not here yet (XProf's combined program-id map: the
    /// first host's module of an id wins).
    pub fn merge(&mut self, other: &XlaModules) {
        for (id, m) in &other.by_program_id {
            self.by_program_id.entry(*id).or_insert_with(|| m.clone());
        }
    }

    /// XProf's name of program `program_id`'s module (`jit_train_step(14)`).
    pub fn xprof_name(&self, program_id: u64) -> Option<&str> {
        self.by_program_id.get(&program_id).map(|m| m.xprof_name.as_str())
    }

    /// XProf's name of program `program_id`'s module when it holds instruction `name`: where an op
    /// row's "buffers" and "graph" links can go. A kernel XLA launched outside any instruction (the
    /// `DelayKernel` of `jit_stage`) has a program but no node to show.
    pub fn xprof_name_holding(&self, program_id: u64, name: &str) -> Option<&str> {
        self.instruction(program_id, name).and(self.xprof_name(program_id))
    }

    /// The program id of the one module named `module_name`; `None` when no module or several have
    /// that name.
    pub fn program_id_named(&self, module_name: &str) -> Option<u64> {
        let mut ids = self.by_program_id.iter().filter(|(_, m)| m.name == module_name).map(|(&id, _)| id);
        let first = ids.next()?;
        ids.next().is_none().then_some(first)
    }

    pub fn is_empty(&self) -> bool {
        self.by_program_id.is_empty()
    }
}

/// Every decodable module of `space` once, by program id as XProf keys them (its `program_id` stat,
/// else its event metadata id; the first module of an id wins), with XProf's name for it
/// (`jit_train_step(14)`): for readers that need less of each module than [`XlaModules`] indexes.
pub fn decoded_modules(space: &XSpace) -> Vec<(u64, String, pb::HloProto)> {
    first_of_each_program(every_decoded_module(space))
}

/// Every decodable module of `space`, by program id as [`decoded_modules`] keys them, a program id
/// repeated where the trace repeats it: for readers that look at every module (whether the run trains)
/// as well as at the first of each program.
pub fn every_decoded_module(space: &XSpace) -> Vec<(u64, String, pb::HloProto)> {
    embedded_modules(space)
        .into_iter()
        .filter_map(|m| Some((m.program_id.unwrap_or(m.metadata_id as u64), m.name.to_string(), decode_proto(m.proto_bytes.clone()).ok()?)))
        .collect()
}

/// The first module of each program id of `modules`, in their order.
pub fn first_of_each_program(modules: Vec<(u64, String, pb::HloProto)>) -> Vec<(u64, String, pb::HloProto)> {
    let mut seen = std::collections::HashSet::new();
    modules.into_iter().filter(|(program_id, _, _)| seen.insert(*program_id)).collect()
}

fn index_module(proto: &pb::HloProto) -> XlaModule {
    let Some(module) = proto.hlo_module.as_ref() else { return XlaModule::default() };
    let text = ModuleText::new(module);
    let costs = module_costs(module);
    let mut instructions = HashMap::new();
    for instr in module.computations.iter().flat_map(|c| &c.instructions) {
        instructions.entry(instr.name.clone()).or_insert_with(|| {
            let meta = instr.metadata.as_ref();
            let (op_type, op_name) = meta.map_or(("", ""), |m| (m.op_type.as_str(), m.op_name.as_str()));
            XlaInstruction {
                opcode: instr.opcode.clone(),
                tf_op_name: tf_op_fullname(op_type, op_name),
                expression: text.expression(instr),
                shape: instr.shape.as_ref().map(shape_text).unwrap_or_default(),
                source: text.source(instr),
                source_info: source_info(instr, module.stack_frame_index.as_ref()),
                category: text.category(instr),
                fused: text.fused_instructions(instr).into_iter().map(|f| f.name.clone()).collect(),
                deduplicated_name: meta.map(|m| m.deduplicated_name.clone()).unwrap_or_default(),
                gpu_cost: costs.cost(&instr.name),
            }
        });
    }
    XlaModule { name: module.name.clone(), xprof_name: String::new(), instructions }
}

/// The framework op name XProf gives an HLO instruction from its metadata: `name:type` (its Op
/// Profile shows `:` for an instruction without metadata); XLA's argument/result markers are their
/// own type.
pub fn tf_op_fullname(op_type: &str, op_name: &str) -> String {
    let op_type = match op_type {
        "" if op_name == "XLA_Args" || op_name == "XLA_Retvals" => op_name,
        t => t,
    };
    format!("{op_name}:{op_type}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tf_op_fullname_follows_xprof() {
        assert_eq!(tf_op_fullname("", "jit(f)/dot_general"), "jit(f)/dot_general:");
        assert_eq!(tf_op_fullname("MatMul", "dense/MatMul"), "dense/MatMul:MatMul");
        assert_eq!(tf_op_fullname("", "XLA_Args"), "XLA_Args:XLA_Args");
        assert_eq!(tf_op_fullname("", ""), ":");
    }
}
