//! Which planes of an XSpace are accelerators, as XProf picks them: the TPU planes if there are any,
//! else the GPU planes (a trace never mixes both); and which lines are XProf's own derived lines.

use crate::decode::xplane::names::{GPU_PLANE_PREFIX, TPU_PLANE_PREFIX};
use crate::decode::xplane::{Plane, XSpace};

/// The kind of accelerator a trace's device planes are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceKind {
    Tpu,
    Gpu,
}

/// The device planes in file order and their kind; `None` when the trace has none (CPU only).
pub fn device_planes(space: &XSpace) -> Option<(DeviceKind, Vec<&Plane>)> {
    let with = |prefix: &str| -> Vec<&Plane> { space.planes.iter().filter(|p| p.name().starts_with(prefix)).collect() };
    let tpu = with(TPU_PLANE_PREFIX);
    if !tpu.is_empty() {
        return Some((DeviceKind::Tpu, tpu));
    }
    let gpu = with(GPU_PLANE_PREFIX);
    (!gpu.is_empty()).then_some((DeviceKind::Gpu, gpu))
}

/// First id of the lines the profiler derives from others (`TensorFlow Ops`, `Steps`, …): 0xdeadbeef,
/// read as XProf's 32-bit thread ids.
pub const DERIVED_LINE_ID_MIN: i32 = 0xdead_beef_u32 as i32;
/// How many derived line ids there are.
const DERIVED_LINE_ID_COUNT: i32 = 290;

/// Whether a line is a derived one. XProf compares the id truncated to 32 bits (its thread ids are
/// `int32`), so a 64-bit id is read by its low half as a signed number.
pub fn is_derived_line(line_id: i64) -> bool {
    let id = line_id as i32;
    (DERIVED_LINE_ID_MIN..DERIVED_LINE_ID_MIN + DERIVED_LINE_ID_COUNT).contains(&id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derived_lines_are_recognised_by_their_low_32_bits() {
        // As written by TensorFlow: 0xdeadbeef + 3 sign-extended to 64 bits.
        assert!(is_derived_line(-559_038_734));
        assert!(is_derived_line(0xdead_beef));
        assert!(is_derived_line(0x1_0000_0000 + 0xdead_beef + 289));
        assert!(!is_derived_line(0xdead_beef + 290));
        assert!(!is_derived_line(17));
    }
}
