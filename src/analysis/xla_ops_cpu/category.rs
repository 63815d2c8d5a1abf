//! XProf's category of an HLO instruction, as XLA names it (`HloInstruction::ToCategory`, the
//! `hlo_category` that device traces carry): a fusion by its kind (`loop fusion`, `input fusion`,
//! `output fusion`, `custom fusion`), `data formatting` for copies, transposes and reshapes,
//! `non-fusion elementwise` for the elementwise opcodes, else the opcode itself.
//!
//! Two refinements of XLA's need more of the instruction than Tidemark reads and are not made: a
//! `bitcast-convert` between types of different widths is not elementwise in XLA (here it is), and a
//! convolution with dilations is `convolution base-dilated` / `window-dilated` (here `convolution`).

use crate::analysis::xla_modules::XlaInstruction;

/// The category of an op without an instruction (its module is not in the trace).
pub const UNKNOWN: &str = "unknown";

/// The category of `instruction`.
pub fn category(instruction: &XlaInstruction) -> String {
    of_opcode(&instruction.opcode, &instruction.fusion_kind)
}

/// The category of an instruction of `opcode` (`fusion_kind` is XLA's `kLoop`, ..., read for fusions).
pub fn of_opcode(opcode: &str, fusion_kind: &str) -> String {
    match opcode {
        "fusion" => match fusion_kind {
            "kLoop" => "loop fusion",
            "kInput" => "input fusion",
            "kOutput" => "output fusion",
            "kCustom" => "custom fusion",
            _ => "fusion",
        }
        .to_string(),
        "transpose" | "copy" | "reshape" | "dynamic-reshape" => "data formatting".to_string(),
        op if is_elementwise(op) => "non-fusion elementwise".to_string(),
        op => op.to_string(),
    }
}

/// XLA's elementwise opcodes (`HloInstruction::IsOpElementwise`, and the instructions whose
/// `IsElementwise` holds on their own: constants, `rng`, `map` over all dimensions in order).
fn is_elementwise(opcode: &str) -> bool {
    matches!(
        opcode,
        // Unary.
        "abs" | "round-nearest-afz" | "round-nearest-even" | "ceil" | "count-leading-zeros" | "convert" | "bitcast-convert" | "cosine" | "erf" | "exponential"
            | "exponential-minus-one" | "floor" | "imag" | "is-finite" | "log" | "log-plus-one" | "not" | "negate" | "popcnt" | "real"
            | "reduce-precision" | "rsqrt" | "logistic" | "sign" | "sine" | "sqrt" | "cbrt" | "tan" | "tanh"
            // Binary.
            | "add" | "atan2" | "compare" | "complex" | "divide" | "maximum" | "minimum" | "multiply" | "power" | "remainder"
            | "subtract" | "and" | "or" | "xor" | "shift-left" | "shift-right-arithmetic" | "shift-right-logical" | "stochastic-convert"
            // Ternary.
            | "select" | "clamp"
            // Elementwise by their own rule.
            | "constant" | "rng" | "map"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn categories_follow_xla() {
        assert_eq!(of_opcode("fusion", "kLoop"), "loop fusion");
        assert_eq!(of_opcode("fusion", "kOutput"), "output fusion");
        assert_eq!(of_opcode("fusion", "kCustom"), "custom fusion");
        assert_eq!(of_opcode("copy", ""), "data formatting");
        assert_eq!(of_opcode("transpose", ""), "data formatting");
        assert_eq!(of_opcode("multiply", ""), "non-fusion elementwise");
        assert_eq!(of_opcode("dot", ""), "dot");
        assert_eq!(of_opcode("call", ""), "call");
        assert_eq!(of_opcode("concatenate", ""), "concatenate");
    }
}
