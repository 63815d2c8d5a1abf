//! XLA's instruction text, as XProf shows it for "HLO expression" and "HLO op text": XLA's
//! `HloInstruction::ToString` with the print options XProf passes (`UncachedExpression`: no metadata,
//! no backend config, no infeed/outfeed config, operand shapes printed, large constants elided; the
//! rest XLA's defaults: `%` names, layouts in shapes, called computations by name, `/*index=N*/` every
//! fifth operand), written from the module's HloProto:
//!
//! `%fusion.1 = bf16[8,128]{1,0} fusion(bf16[8,128]{1,0} %p0, f32[] %c), kind=kLoop, calls=%fused_computation`
//!
//! Also the shape alone (with layout), XLA's op category (`HloInstruction::ToCategory`) and the
//! instruction's source line.

mod attributes;
mod literal;
mod shape;

pub use shape::shape_text;

use crate::analysis::memory_viewer::source::source_info;
use crate::proto::hlo::{HloComputationProto, HloInstructionProto, HloModuleProto};
use std::collections::HashMap;

/// XProf keeps this much of an expression (`kMaxHlolNameSize`).
const MAX_EXPRESSION_BYTES: usize = 1_000_000;

/// A module's instructions and computations by id, to print an instruction's operands and called
/// computations.
pub struct ModuleText<'a> {
    module: &'a HloModuleProto,
    instructions: HashMap<i64, &'a HloInstructionProto>,
    computations: HashMap<i64, &'a HloComputationProto>,
}

impl<'a> ModuleText<'a> {
    pub fn new(module: &'a HloModuleProto) -> Self {
        let computations: HashMap<_, _> = module.computations.iter().map(|c| (c.id, c)).collect();
        let instructions = module.computations.iter().flat_map(|c| &c.instructions).map(|i| (i.id, i)).collect();
        ModuleText { module, instructions, computations }
    }

    fn instruction(&self, id: i64) -> Option<&'a HloInstructionProto> {
        self.instructions.get(&id).copied()
    }

    fn computation(&self, id: i64) -> Option<&'a HloComputationProto> {
        self.computations.get(&id).copied()
    }

    /// The instruction's text, as XProf shows it.
    pub fn expression(&self, instr: &HloInstructionProto) -> String {
        let mut out = format!("%{} = ", instr.name);
        if let Some(s) = &instr.shape {
            shape::write_shape(&mut out, s);
            out.push(' ');
        }
        let wrapped = self.async_wrapped(instr);
        match wrapped {
            Some(w) => {
                out.push_str(&w.opcode);
                out.push_str(instr.opcode.strip_prefix("async").unwrap_or(""));
            }
            None => out.push_str(&instr.opcode),
        }
        out.push('(');
        self.write_operands(&mut out, instr);
        out.push(')');
        for attribute in attributes::attributes(self, instr, wrapped) {
            out.push_str(", ");
            out.push_str(&attribute);
        }
        if out.len() > MAX_EXPRESSION_BYTES {
            let mut end = MAX_EXPRESSION_BYTES;
            while !out.is_char_boundary(end) {
                end -= 1;
            }
            out.truncate(end);
        }
        out
    }

    /// For `async-start`/`-update`/`-done` whose computation is one instruction over its parameters,
    /// that instruction: XLA then prints the op as `<opcode>-start(…)` with its attributes.
    fn async_wrapped(&self, instr: &HloInstructionProto) -> Option<&'a HloInstructionProto> {
        if !matches!(instr.opcode.as_str(), "async-start" | "async-update" | "async-done") {
            return None;
        }
        let computation = self.computation(*instr.called_computation_ids.first()?)?;
        let root = self.instruction(computation.root_id)?;
        computation.instructions.iter().all(|i| i.id == root.id || i.opcode == "parameter").then_some(root)
    }

    fn write_operands(&self, out: &mut String, instr: &HloInstructionProto) {
        match instr.opcode.as_str() {
            "parameter" => out.push_str(&instr.parameter_number.to_string()),
            "constant" => out.push_str(&constant_text(instr)),
            _ => {
                for (i, &id) in instr.operand_ids.iter().enumerate() {
                    if i > 0 {
                        shape::write_separator(out, i);
                    }
                    match self.instruction(id) {
                        Some(operand) => {
                            if let Some(s) = &operand.shape {
                                shape::write_shape(out, s);
                                out.push(' ');
                            }
                            out.push('%');
                            out.push_str(&operand.name);
                        }
                        None => out.push_str("null "),
                    }
                }
            }
        }
    }

    /// `%name` of computation `id` (empty name when the module lacks it).
    fn computation_name(&self, id: i64) -> String {
        format!("%{}", self.computation(id).map_or("", |c| c.name.as_str()))
    }

    /// The shape of operand `i` of `instr`, if known.
    fn operand(&self, instr: &HloInstructionProto, i: usize) -> Option<&'a HloInstructionProto> {
        self.instruction(*instr.operand_ids.get(i)?)
    }

    /// The instructions of a fusion's computation that XProf lists under it, in the computation's order
    /// (parameters and tuples left out, as XProf's `AddFusionChildrenToOpMetricsFromHloInstruction`).
    pub fn fused_instructions(&self, fusion: &HloInstructionProto) -> Vec<&'a HloInstructionProto> {
        if fusion.opcode != "fusion" {
            return Vec::new();
        }
        let Some(computation) = fusion.called_computation_ids.first().and_then(|&id| self.computation(id)) else {
            return Vec::new();
        };
        computation.instructions.iter().filter(|i| i.opcode != "parameter" && i.opcode != "tuple").collect()
    }

    /// XLA's category of `instr` (`HloInstruction::ToCategory`): a fusion by its kind
    /// (`HloFusionInstruction::ToCategory`: `loop fusion`, ...), `data formatting` for layout changes,
    /// `non-fusion elementwise` for elementwise ops, else the opcode.
    pub fn category(&self, instr: &HloInstructionProto) -> String {
        if instr.opcode == "fusion" {
            let kind = match instr.fusion_kind.as_str() {
                "kLoop" => Some("loop fusion"),
                "kInput" => Some("input fusion"),
                "kOutput" => Some("output fusion"),
                "kCustom" => Some("custom fusion"),
                _ => None,
            };
            if let Some(kind) = kind {
                return kind.into();
            }
        }
        if matches!(instr.opcode.as_str(), "transpose" | "copy" | "reshape" | "dynamic-reshape") {
            return "data formatting".into();
        }
        if self.is_elementwise(instr, 0) {
            return "non-fusion elementwise".into();
        }
        instr.opcode.clone()
    }

    fn is_elementwise(&self, instr: &HloInstructionProto, depth: usize) -> bool {
        match instr.opcode.as_str() {
            "constant" | "rng" => true,
            "map" => {
                let rank = instr.shape.as_ref().map_or(0, |s| s.dimensions.len());
                instr.dimensions.is_empty()
                    || (instr.dimensions.len() == rank && instr.dimensions.iter().enumerate().all(|(i, &d)| d == i as i64))
            }
            // Nested fusions are shallow in practice; the depth guards a malformed proto's cycle.
            "fusion" => {
                depth < 16
                    && self
                        .fused_computation_instructions(instr)
                        .iter()
                        .all(|i| i.opcode == "parameter" || self.is_elementwise(i, depth + 1))
            }
            "bitcast-convert" => {
                let bits = |s: Option<&crate::proto::hlo::ShapeProto>| s.map(|s| attributes::bit_width(s.element_type));
                bits(instr.shape.as_ref()) == bits(self.operand(instr, 0).and_then(|o| o.shape.as_ref()))
            }
            op => is_elementwise_opcode(op),
        }
    }

    fn fused_computation_instructions(&self, fusion: &HloInstructionProto) -> &'a [HloInstructionProto] {
        fusion.called_computation_ids.first().and_then(|&id| self.computation(id)).map_or(&[], |c| c.instructions.as_slice())
    }

    /// `file:line` of the instruction's source, from its stack frame or its metadata (as the Memory
    /// Viewer reads it).
    pub fn source(&self, instr: &HloInstructionProto) -> Option<String> {
        source_info(instr, self.module.stack_frame_index.as_ref()).map(|s| format!("{}:{}", s.file_name, s.line_number))
    }
}

/// A constant's operand text: its value when it has at most ten elements, else `{...}`.
fn constant_text(instr: &HloInstructionProto) -> String {
    let elided = || "{...}".to_string();
    let Some(s) = instr.shape.as_ref() else { return elided() };
    let elements = s.dimensions.iter().try_fold(1i64, |n, &d| n.checked_mul(d));
    let small = s.element_type != 13 && elements.is_some_and(|n| n <= 10);
    match instr.literal.as_ref().filter(|_| small) {
        Some(l) => literal::literal_text(l).unwrap_or_else(elided),
        None => elided(),
    }
}

/// XLA's `HloInstruction::IsOpElementwise`.
pub fn is_elementwise_opcode(opcode: &str) -> bool {
    matches!(
        opcode,
        "abs"
            | "acos"
            | "acosh"
            | "asin"
            | "asinh"
            | "atanh"
            | "round-nearest-afz"
            | "round-nearest-even"
            | "ceil"
            | "count-leading-zeros"
            | "convert"
            | "bitcast-convert"
            | "copy"
            | "cosine"
            | "cosh"
            | "erf"
            | "exponential"
            | "exponential-minus-one"
            | "floor"
            | "imag"
            | "is-finite"
            | "log"
            | "log-plus-one"
            | "not"
            | "negate"
            | "popcnt"
            | "real"
            | "reduce-precision"
            | "rsqrt"
            | "logistic"
            | "sign"
            | "sine"
            | "sinh"
            | "sqrt"
            | "cbrt"
            | "tan"
            | "tanh"
            | "add"
            | "atan2"
            | "compare"
            | "complex"
            | "divide"
            | "maximum"
            | "minimum"
            | "multiply"
            | "power"
            | "remainder"
            | "subtract"
            | "and"
            | "or"
            | "xor"
            | "shift-left"
            | "shift-right-arithmetic"
            | "shift-right-logical"
            | "stochastic-convert"
            | "select"
            | "clamp"
    )
}
