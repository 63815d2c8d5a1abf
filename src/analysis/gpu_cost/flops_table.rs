//! FLOPs per element of XLA:GPU's elementwise ops: clock cycles XLA measured per element on an
//! sm_86 GPU, the profile its GPU cost analysis falls back to when it is not told the device (as in
//! XProf, which runs it without one). Ops the profile does not list cost 3 per element.

use super::shape::element_type::*;

/// Per-element cost of an op the profile does not list.
const DEFAULT_FLOPS_PER_ELEMENT: i64 = 3;

/// FLOPs one element of `opcode` on `element_type` costs.
pub fn flops_per_element(opcode: &str, element_type: i32) -> i64 {
    let cycles = match element_type {
        S8 => match opcode {
            "divide" => 370,
            "power" => 392,
            _ => 0,
        },
        S16 => match opcode {
            "divide" => 367,
            "power" => 396,
            _ => 0,
        },
        S32 => match opcode {
            "divide" => 306,
            _ => 0,
        },
        S64 => match opcode {
            "divide" => 918,
            "power" => 601,
            _ => 0,
        },
        U8 => match opcode {
            "divide" => 306,
            "power" => 388,
            _ => 0,
        },
        U16 => match opcode {
            "divide" => 302,
            "power" => 399,
            _ => 0,
        },
        U32 => match opcode {
            "divide" => 115,
            _ => 0,
        },
        U64 => match opcode {
            "divide" => 838,
            "power" => 604,
            _ => 0,
        },
        F16 => match opcode {
            "cbrt" => 925,
            "cosine" => 691,
            "exponential" => 108,
            "exponential-minus-one" => 396,
            "log" => 266,
            "log-plus-one" => 284,
            "logistic" => 226,
            "rsqrt" | "sqrt" => 97,
            "tanh" => 212,
            "atan2" => 482,
            "power" => 975,
            _ => 0,
        },
        F32 => match opcode {
            "cbrt" => 867,
            "cosine" | "sine" => 662,
            "exponential" => 86,
            "exponential-minus-one" => 381,
            "log" => 244,
            "log-plus-one" => 262,
            "logistic" => 176,
            "rsqrt" | "sqrt" => 75,
            "tanh" => 190,
            "atan2" => 486,
            "power" => 925,
            _ => 0,
        },
        F64 => match opcode {
            "cbrt" => 6339,
            "cosine" => 1717,
            "exponential" => 1652,
            "exponential-minus-one" => 1900,
            "log" => 608,
            "log-plus-one" => 2073,
            "logistic" => 2412,
            "rsqrt" => 698,
            "sine" => 1789,
            "sqrt" => 986,
            "tanh" => 1609,
            "add" | "multiply" | "subtract" => 97,
            "atan2" => 3747,
            "divide" => 2016,
            "power" => 5511,
            _ => 0,
        },
        C64 => match opcode {
            "exponential" => 1360,
            "exponential-minus-one" => 1400,
            "log" => 950,
            "log-plus-one" => 842,
            "rsqrt" => 2383,
            "sqrt" => 3193,
            "atan2" => 5353,
            "divide" => 687,
            "power" => 3351,
            _ => 0,
        },
        C128 => match opcode {
            "cosine" => 6613,
            "exponential" => 4028,
            "exponential-minus-one" => 4161,
            "log" => 7599,
            "log-plus-one" => 6962,
            "rsqrt" => 11318,
            "sine" => 5878,
            "sqrt" => 15606,
            "tanh" => 9939,
            "add" | "subtract" => 97,
            "atan2" => 39027,
            "divide" => 7941,
            "multiply" => 270,
            "power" => 18205,
            _ => 0,
        },
        _ => 0,
    };
    if cycles == 0 {
        DEFAULT_FLOPS_PER_ELEMENT
    } else {
        cycles
    }
}
