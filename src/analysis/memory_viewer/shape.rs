//! XLA shapes as the Memory Viewer shows them: the text of `ShapeUtil::HumanStringWithLayout` and the
//! "unpadded" byte size XProf computes with the default layout.

use crate::proto::hlo::{LayoutProto, ShapeProto};
use std::fmt::Write;

/// `PrimitiveType` numbers (docs/formats.md §3) that the size and text rules single out.
const TUPLE: i32 = 13;
const OPAQUE_TYPE: i32 = 14;
const TOKEN: i32 = 17;

/// XLA's "unbounded dynamic" dimension size (`Shape::kUnboundedSize`), printed `?`.
const UNBOUNDED_DIMENSION: i64 = i64::MIN;
/// XLA's tile dimension that combines the remaining dimensions (`Tile::kCombineDimension`), printed `*`.
const COMBINE_DIMENSION: i64 = i64::MIN;

/// XProf resolves a logical buffer's shape from its defining instruction with only the *last* entry of
/// the shape index, one tuple level deep ("historical behaviour" in its source); an index out of range
/// keeps the whole shape. We do the same so labels and unpadded sizes match.
pub fn resolve_index<'a>(shape: &'a ShapeProto, shape_index: &[i64]) -> &'a ShapeProto {
    match shape_index.last() {
        Some(&i) => usize::try_from(i).ok().and_then(|i| shape.tuple_shapes.get(i)).unwrap_or(shape),
        None => shape,
    }
}

/// XLA's lowercase name of a primitive type (`primitive_util::LowercasePrimitiveTypeName`).
pub fn type_name(element_type: i32) -> &'static str {
    const NAMES: [&str; 35] = [
        "invalid",
        "pred",
        "s8",
        "s16",
        "s32",
        "s64",
        "u8",
        "u16",
        "u32",
        "u64",
        "f16",
        "f32",
        "f64",
        "tuple",
        "opaque",
        "c64",
        "bf16",
        "token",
        "c128",
        "f8e5m2",
        "f8e4m3fn",
        "s4",
        "u4",
        "f8e4m3b11fnuz",
        "f8e5m2fnuz",
        "f8e4m3fnuz",
        "s2",
        "u2",
        "f8e4m3",
        "f8e3m4",
        "s1",
        "u1",
        "f4e2m1fn",
        "f8e8m0fnu",
        "buffer",
    ];
    usize::try_from(element_type).ok().and_then(|i| NAMES.get(i)).copied().unwrap_or("invalid")
}

/// Bytes per element with no layout packing (`ShapeUtil::ByteSizeOfPrimitiveType`): sub-byte types
/// take a whole byte each once the layout (and its `element_size_in_bits`) is reset to the default.
fn element_bytes(element_type: i32) -> i64 {
    match element_type {
        1..=2 | 6 | 19..=33 => 1,
        3 | 7 | 10 | 16 => 2,
        4 | 8 | 11 => 4,
        5 | 9 | 12 | 15 => 8,
        18 => 16,
        _ => 0,
    }
}

/// XProf sizes tuples (index tables) and opaque values with the host's `sizeof(void*)`.
const POINTER_BYTES: i64 = 8;

/// The unpadded size of `shape`: element count × element size with the default layout, so tiling and
/// padding do not count (XProf's `ShapeUnpaddedSize`). A tuple counts one pointer per element.
pub fn unpadded_bytes(shape: &ShapeProto) -> i64 {
    match shape.element_type {
        TUPLE => POINTER_BYTES.saturating_mul(shape.tuple_shapes.len() as i64),
        TOKEN => 0,
        OPAQUE_TYPE => POINTER_BYTES,
        t => shape.dimensions.iter().fold(1i64, |n, &d| n.saturating_mul(d.max(0))).saturating_mul(element_bytes(t)),
    }
}

/// `ShapeUtil::HumanStringWithLayout`: `f32[100,1000]{1,0}`, `(s32[], u32[4]{0})`. Scalars print no
/// `{}`; every fifth tuple element is prefixed with an `/*index=N*/` comment, as XLA does.
///
/// The text stops at [`MAX_SHAPE_TEXT_BYTES`] with `…`: every buffer of an instruction repeats its
/// shape, so one huge tuple shared by many buffers would otherwise multiply into memory.
pub fn human_string_with_layout(shape: &ShapeProto) -> String {
    let mut s = String::new();
    write_shape(&mut s, shape, 0);
    if s.len() > MAX_SHAPE_TEXT_BYTES {
        let mut end = MAX_SHAPE_TEXT_BYTES;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
        s.push('…');
    }
    s
}

/// Nesting limit for tuple shapes: a hostile file could nest deeply enough to overflow the stack.
const MAX_TUPLE_DEPTH: usize = 64;
/// Longest shape text kept. Real shapes are far shorter (the largest fixture tuple is 331 bytes).
pub const MAX_SHAPE_TEXT_BYTES: usize = 4096;

fn write_shape(s: &mut String, shape: &ShapeProto, depth: usize) {
    if shape.element_type == TUPLE {
        s.push('(');
        if depth < MAX_TUPLE_DEPTH {
            for (i, t) in shape.tuple_shapes.iter().enumerate() {
                if s.len() > MAX_SHAPE_TEXT_BYTES {
                    break; // the caller cuts the text here; writing the rest would only be thrown away
                }
                if i > 0 {
                    s.push_str(", ");
                }
                if i > 0 && i % 5 == 0 {
                    let _ = write!(s, "/*index={i}*/");
                }
                write_shape(s, t, depth + 1);
            }
        } else {
            s.push_str("...");
        }
        s.push(')');
        return;
    }
    s.push_str(type_name(shape.element_type));
    s.push('[');
    for (i, &d) in shape.dimensions.iter().enumerate() {
        if s.len() > MAX_SHAPE_TEXT_BYTES {
            break;
        }
        if i > 0 {
            s.push(',');
        }
        if d == UNBOUNDED_DIMENSION {
            s.push('?');
            continue;
        }
        if shape.is_dynamic_dimension.get(i).copied().unwrap_or(false) {
            s.push_str("<=");
        }
        let _ = write!(s, "{d}");
    }
    s.push(']');
    let is_array = !matches!(shape.element_type, TOKEN | OPAQUE_TYPE);
    if let (Some(layout), true) = (&shape.layout, is_array) {
        let text = layout_string(layout);
        if !(shape.dimensions.is_empty() && text == "{}") {
            s.push_str(&text);
        }
    }
}

/// `Layout::ToString` for the layout fields our proto subset carries: `{1,0:T(8,128)E(4)S(1)}`.
fn layout_string(layout: &LayoutProto) -> String {
    let mut s = String::from("{");
    join(&mut s, &layout.minor_to_major);
    let mut attributes = String::new();
    if !layout.tiles.is_empty() {
        attributes.push('T');
        for tile in &layout.tiles {
            if attributes.len() > MAX_SHAPE_TEXT_BYTES {
                break;
            }
            attributes.push('(');
            for (i, &d) in tile.dimensions.iter().enumerate() {
                if attributes.len() > MAX_SHAPE_TEXT_BYTES {
                    break;
                }
                if i > 0 {
                    attributes.push(',');
                }
                if d == COMBINE_DIMENSION {
                    attributes.push('*');
                } else {
                    let _ = write!(attributes, "{d}");
                }
            }
            attributes.push(')');
        }
    }
    if layout.element_size_in_bits != 0 {
        let _ = write!(attributes, "E({})", layout.element_size_in_bits);
    }
    if layout.memory_space != 0 {
        let _ = write!(attributes, "S({})", layout.memory_space);
    }
    if !attributes.is_empty() {
        s.push(':');
        s.push_str(&attributes);
    }
    s.push('}');
    s
}

fn join(s: &mut String, values: &[i64]) {
    for (i, v) in values.iter().enumerate() {
        if s.len() > MAX_SHAPE_TEXT_BYTES {
            break;
        }
        if i > 0 {
            s.push(',');
        }
        let _ = write!(s, "{v}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::hlo::TileProto;

    fn array(t: i32, dims: &[i64], minor_to_major: Option<&[i64]>) -> ShapeProto {
        ShapeProto {
            element_type: t,
            dimensions: dims.to_vec(),
            layout: minor_to_major.map(|m| LayoutProto { minor_to_major: m.to_vec(), ..Default::default() }),
            ..Default::default()
        }
    }

    #[test]
    fn texts_match_xla() {
        assert_eq!(human_string_with_layout(&array(11, &[100, 1000], Some(&[1, 0]))), "f32[100,1000]{1,0}");
        assert_eq!(human_string_with_layout(&array(4, &[], Some(&[]))), "s32[]");
        let mut tiled = array(16, &[8, 128], Some(&[1, 0]));
        if let Some(l) = tiled.layout.as_mut() {
            l.tiles.push(TileProto { dimensions: vec![8, 128] });
            l.memory_space = 1;
        }
        assert_eq!(human_string_with_layout(&tiled), "bf16[8,128]{1,0:T(8,128)S(1)}");
        let tuple =
            ShapeProto { element_type: TUPLE, tuple_shapes: (0..6).map(|_| array(8, &[], Some(&[]))).collect(), ..Default::default() };
        assert_eq!(human_string_with_layout(&tuple), "(u32[], u32[], u32[], u32[], u32[], /*index=5*/u32[])");
        assert_eq!(unpadded_bytes(&tuple), 48);
    }

    #[test]
    fn unpadded_sizes_ignore_layout() {
        assert_eq!(unpadded_bytes(&array(11, &[100, 1000], Some(&[1, 0]))), 400_000);
        assert_eq!(unpadded_bytes(&array(21, &[3], None)), 3);
        assert_eq!(unpadded_bytes(&array(11, &[-1, 4], None)), 0);
    }

    #[test]
    fn huge_and_deep_shapes_stay_short() {
        let wide = ShapeProto {
            element_type: TUPLE,
            tuple_shapes: (0..100_000).map(|_| array(11, &[1, 2, 3], Some(&[2, 1, 0]))).collect(),
            ..Default::default()
        };
        let text = human_string_with_layout(&wide);
        assert!(text.len() <= MAX_SHAPE_TEXT_BYTES + '…'.len_utf8() && text.ends_with('…'), "{}", text.len());
        assert!(text.starts_with("(f32[1,2,3]{2,1,0}, "));
        let mut deep = array(11, &[], None);
        for _ in 0..1000 {
            deep = ShapeProto { element_type: TUPLE, tuple_shapes: vec![deep], ..Default::default() };
        }
        let text = human_string_with_layout(&deep);
        assert!(text.contains("(...)") && text.len() < 200, "{text}");
        let many_dims = array(11, &vec![7; 100_000], None);
        assert!(human_string_with_layout(&many_dims).len() <= MAX_SHAPE_TEXT_BYTES + 3);
    }
}
