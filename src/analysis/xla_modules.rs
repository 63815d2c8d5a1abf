//! The HLO modules a trace carries in `/host:metadata`, indexed as XProf's device tools look them up:
//! by program id, then by instruction name. A module whose proto does not decode is left out (XProf
//! logs it and goes on), so its ops simply find no instruction.

use crate::analysis::gpu_cost::{module_costs, CostError, InstructionCost};
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
    /// XLA's category of the instruction (`loop fusion`, `custom-call`, …).
    pub category: String,
    /// Its FLOPs and bytes per execution from XLA's GPU cost analysis (the GPU op tables read it):
    /// `Ok(None)` where XProf has none, an error where Tidemark cannot compute XProf's.
    pub gpu_cost: Result<Option<InstructionCost>, CostError>,
}

/// The instructions of one module by name (the first of a repeated name wins, as in XProf).
#[derive(Debug, Clone, Default)]
pub struct XlaModule {
    pub name: String,
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
        let mut by_program_id = HashMap::new();
        for m in embedded_modules(space) {
            let Ok(proto) = decode_proto(m.proto_bytes) else { continue };
            let program_id = m.program_id.unwrap_or(m.metadata_id as u64);
            by_program_id.entry(program_id).or_insert_with(|| index_module(&proto));
        }
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

    pub fn is_empty(&self) -> bool {
        self.by_program_id.is_empty()
    }
}

fn index_module(proto: &pb::HloProto) -> XlaModule {
    let module = proto.hlo_module.as_ref();
    let costs = module.map(module_costs).unwrap_or_default();
    let mut instructions = HashMap::new();
    for instr in module.iter().flat_map(|m| &m.computations).flat_map(|c| &c.instructions) {
        instructions.entry(instr.name.clone()).or_insert_with(|| {
            let meta = instr.metadata.as_ref();
            let (op_type, op_name) = meta.map_or(("", ""), |m| (m.op_type.as_str(), m.op_name.as_str()));
            XlaInstruction {
                opcode: instr.opcode.clone(),
                tf_op_name: tf_op_fullname(op_type, op_name),
                category: category(instr),
                gpu_cost: costs.cost(&instr.name),
            }
        });
    }
    XlaModule { name: module.map(|m| m.name.clone()).unwrap_or_default(), instructions }
}

/// XLA's `ToCategory` of an instruction: fusions by kind, data movement as "data formatting",
/// elementwise ops as "non-fusion elementwise", anything else its opcode.
fn category(instr: &pb::HloInstructionProto) -> String {
    let fusion = match instr.fusion_kind.as_str() {
        "kLoop" => "loop fusion",
        "kInput" => "input fusion",
        "kOutput" => "output fusion",
        _ => "custom fusion",
    };
    match instr.opcode.as_str() {
        "fusion" => fusion.to_string(),
        "transpose" | "copy" | "copy-start" | "copy-done" => "data formatting".to_string(),
        op if crate::analysis::gpu_cost::is_elementwise_opcode(op) => "non-fusion elementwise".to_string(),
        op => op.to_string(),
    }
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
