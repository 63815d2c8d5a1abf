//! What the cost rules need of an XLA shape: element counts and byte sizes as XLA's default shape-size
//! function gives them (an array's elements times its element size, a tuple's pointer table of 8
//! bytes per element, nothing for a shape without a layout), and its leaves with their indices.

use super::CostError;
use crate::proto::hlo::ShapeProto;

/// XLA `PrimitiveType` numbers the cost rules look at.
pub mod element_type {
    pub const PRED: i32 = 1;
    pub const S8: i32 = 2;
    pub const S16: i32 = 3;
    pub const S32: i32 = 4;
    pub const S64: i32 = 5;
    pub const U8: i32 = 6;
    pub const U16: i32 = 7;
    pub const U32: i32 = 8;
    pub const U64: i32 = 9;
    pub const F16: i32 = 10;
    pub const F32: i32 = 11;
    pub const F64: i32 = 12;
    pub const TUPLE: i32 = 13;
    pub const OPAQUE: i32 = 14;
    pub const C64: i32 = 15;
    pub const BF16: i32 = 16;
    pub const TOKEN: i32 = 17;
    pub const C128: i32 = 18;
}

/// Pointer size XLA's default shape-size function assumes for tuple tables.
const POINTER_BYTES: i64 = 8;

pub fn is_tuple(shape: &ShapeProto) -> bool {
    shape.element_type == element_type::TUPLE
}

/// Bits of one element of an array type (XLA's `primitive_util::BitWidth`); `None` for types the
/// cost rules do not size (sub-byte and 8-bit float formats, tuples, tokens).
pub fn bit_width(ty: i32) -> Option<u32> {
    use element_type::*;
    Some(match ty {
        PRED => 1,
        S8 | U8 => 8,
        S16 | U16 | F16 | BF16 => 16,
        S32 | U32 | F32 => 32,
        S64 | U64 | F64 | C64 => 64,
        C128 => 128,
        _ => return None,
    })
}

fn element_bytes(ty: i32) -> Result<i64, CostError> {
    match ty {
        element_type::PRED => Ok(1),
        t => bit_width(t).map(|b| i64::from(b / 8)).ok_or(CostError::ElementType(t)),
    }
}

/// Elements of an array shape (1 for a scalar); 0 for a tuple.
pub fn elements(shape: &ShapeProto) -> i64 {
    if is_tuple(shape) || shape.element_type == element_type::TOKEN {
        return 0;
    }
    shape.dimensions.iter().product()
}

/// Elements of every array leaf of `shape` (XLA's `ElementsInRecursive`).
pub fn elements_recursive(shape: &ShapeProto) -> i64 {
    if is_tuple(shape) {
        shape.tuple_shapes.iter().map(elements_recursive).sum()
    } else {
        elements(shape)
    }
}

/// Whether every leaf of `shape` has a layout (XLA's `LayoutUtil::HasLayout`).
fn has_layout(shape: &ShapeProto) -> bool {
    if is_tuple(shape) {
        shape.tuple_shapes.iter().all(has_layout)
    } else {
        shape.element_type == element_type::TOKEN || shape.element_type == element_type::OPAQUE || shape.layout.is_some()
    }
}

/// Bytes of `shape` as the cost analysis counts them (`GetShapeSize`): 0 without a layout.
pub fn size_bytes(shape: &ShapeProto) -> Result<i64, CostError> {
    if !has_layout(shape) {
        return Ok(0);
    }
    Ok(match shape.element_type {
        element_type::TUPLE => POINTER_BYTES * shape.tuple_shapes.len() as i64,
        element_type::TOKEN => 0,
        element_type::OPAQUE => POINTER_BYTES,
        t => elements(shape) * element_bytes(t)?,
    })
}

/// The leaves of `shape` with their indices, in XLA's pre-order (an array is its own leaf at `[]`).
pub fn leaves(shape: &ShapeProto) -> Vec<(Vec<i64>, &ShapeProto)> {
    fn walk<'a>(shape: &'a ShapeProto, index: &mut Vec<i64>, out: &mut Vec<(Vec<i64>, &'a ShapeProto)>) {
        if is_tuple(shape) {
            for (i, s) in shape.tuple_shapes.iter().enumerate() {
                index.push(i as i64);
                walk(s, index, out);
                index.pop();
            }
        } else {
            out.push((index.clone(), shape));
        }
    }
    let mut out = Vec::new();
    walk(shape, &mut Vec::new(), &mut out);
    out
}

/// The memory space of a leaf, when it has a layout.
pub fn memory_space(leaf: &ShapeProto) -> Option<i64> {
    leaf.layout.as_ref().map(|l| l.memory_space)
}
