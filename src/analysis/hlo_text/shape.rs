//! Shapes as XLA prints them with their layout (`ShapeUtil::HumanStringWithLayout`):
//! `f32[5,1024]{1,0:T(8,128)S(5)}`, `(bf16[2]{0}, u8[16]{0})`, `s32[<=8]`, `token[]`.

use crate::proto::hlo::{LayoutProto, ShapeProto};
use std::fmt::Write;

/// Every this many tuple elements (and operands) XLA writes an `/*index=N*/` marker.
pub const INDEX_ANNOTATION_INTERVAL: usize = 5;

const TUPLE: i32 = 13;
const OPAQUE: i32 = 14;
const TOKEN: i32 = 17;

/// XLA's lower-case name of a primitive type (`PrimitiveType` enum numbers).
pub fn primitive_type_name(element_type: i32) -> &'static str {
    match element_type {
        1 => "pred",
        2 => "s8",
        3 => "s16",
        4 => "s32",
        5 => "s64",
        6 => "u8",
        7 => "u16",
        8 => "u32",
        9 => "u64",
        10 => "f16",
        11 => "f32",
        12 => "f64",
        TUPLE => "tuple",
        OPAQUE => "opaque",
        15 => "c64",
        16 => "bf16",
        TOKEN => "token",
        18 => "c128",
        19 => "f8e5m2",
        20 => "f8e4m3fn",
        21 => "s4",
        22 => "u4",
        23 => "f8e4m3b11fnuz",
        24 => "f8e5m2fnuz",
        25 => "f8e4m3fnuz",
        26 => "s2",
        27 => "u2",
        28 => "f8e4m3",
        29 => "f8e3m4",
        30 => "s1",
        31 => "u1",
        32 => "f4e2m1fn",
        33 => "f8e8m0fnu",
        34 => "buffer",
        _ => "invalid",
    }
}

/// Whether a shape of this element type has dimensions (not a tuple, token or opaque value).
fn is_array(element_type: i32) -> bool {
    !matches!(element_type, 0 | TUPLE | OPAQUE | TOKEN | 34)
}

/// `shape` with its layout, as XLA prints an instruction's or operand's shape.
pub fn shape_text(shape: &ShapeProto) -> String {
    let mut out = String::new();
    write_shape(&mut out, shape);
    out
}

pub fn write_shape(out: &mut String, shape: &ShapeProto) {
    if shape.element_type == TUPLE {
        out.push('(');
        for (i, element) in shape.tuple_shapes.iter().enumerate() {
            if i > 0 {
                write_separator(out, i);
            }
            write_shape(out, element);
        }
        out.push(')');
        return;
    }
    out.push_str(primitive_type_name(shape.element_type));
    out.push('[');
    if is_array(shape.element_type) {
        for (i, &d) in shape.dimensions.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            if shape.is_dynamic_dimension.get(i).copied().unwrap_or(false) {
                // XLA's unbounded size (`Shape::kUnboundedSize`) prints as `?`.
                if d == i64::MIN {
                    out.push('?');
                } else {
                    let _ = write!(out, "<={d}");
                }
            } else {
                let _ = write!(out, "{d}");
            }
        }
    }
    out.push(']');
    let Some(layout) = shape.layout.as_ref().filter(|_| is_array(shape.element_type)) else { return };
    let start = out.len();
    write_layout(out, layout);
    // A scalar's empty layout is not printed.
    if shape.dimensions.is_empty() && &out[start..] == "{}" {
        out.truncate(start);
    }
}

/// `, ` between list elements, with XLA's `/*index=N*/` marker every [`INDEX_ANNOTATION_INTERVAL`].
pub fn write_separator(out: &mut String, i: usize) {
    if i.is_multiple_of(INDEX_ANNOTATION_INTERVAL) {
        let _ = write!(out, ", /*index={i}*/");
    } else {
        out.push_str(", ");
    }
}

/// `{minor_to_major:T(tiles)L(n)#(t)*(t)E(n)S(n)M(n)}` (XLA's `Layout::Print`; what is default is
/// left out; a physical shape, `P(…)`, is not read).
fn write_layout(out: &mut String, layout: &LayoutProto) {
    out.push('{');
    join(out, &layout.minor_to_major, ",");
    let mut colon = false;
    let mut attribute = |out: &mut String, text: &str| {
        if !colon {
            out.push(':');
            colon = true;
        }
        out.push_str(text);
    };
    if !layout.tiles.is_empty() {
        let mut tiles = String::from("T");
        for tile in &layout.tiles {
            tiles.push('(');
            for (i, &d) in tile.dimensions.iter().enumerate() {
                if i > 0 {
                    tiles.push(',');
                }
                // XLA's `Tile::kCombineDimension`.
                if d == i64::MIN {
                    tiles.push('*');
                } else if d < 0 {
                    let _ = write!(tiles, "Invalid value {d}");
                } else {
                    let _ = write!(tiles, "{d}");
                }
            }
            tiles.push(')');
        }
        attribute(out, &tiles);
    }
    let alignment = layout.tail_padding_alignment_in_elements;
    if alignment != 0 && alignment != 1 {
        attribute(out, &format!("L({alignment})"));
    }
    for (t, marker) in [(layout.index_primitive_type, '#'), (layout.pointer_primitive_type, '*')] {
        if t != 0 {
            let integral = matches!(t, 2..=9 | 21 | 22 | 26 | 27 | 30 | 31);
            attribute(out, &format!("{marker}({})", if integral { primitive_type_name(t) } else { "invalid" }));
        }
    }
    if layout.element_size_in_bits != 0 {
        attribute(out, &format!("E({})", layout.element_size_in_bits));
    }
    if layout.memory_space != 0 {
        attribute(out, &format!("S({})", layout.memory_space));
    }
    if layout.dynamic_shape_metadata_prefix_bytes > 0 {
        attribute(out, &format!("M({})", layout.dynamic_shape_metadata_prefix_bytes));
    }
    out.push('}');
}

/// `values` joined by `sep`.
pub fn join<T: std::fmt::Display>(out: &mut String, values: &[T], sep: &str) {
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            out.push_str(sep);
        }
        let _ = write!(out, "{v}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::hlo::TileProto;

    fn array(element_type: i32, dims: &[i64], layout: Option<LayoutProto>) -> ShapeProto {
        ShapeProto { element_type, dimensions: dims.to_vec(), layout, ..ShapeProto::default() }
    }

    #[test]
    fn layouts_print_as_xla_does() {
        let tiled = LayoutProto {
            minor_to_major: vec![1, 0],
            tiles: vec![TileProto { dimensions: vec![8, 128] }],
            memory_space: 5,
            ..LayoutProto::default()
        };
        assert_eq!(shape_text(&array(11, &[4, 256], Some(tiled))), "f32[4,256]{1,0:T(8,128)S(5)}");
        // A scalar's empty layout is left out, a tiled one is not.
        assert_eq!(shape_text(&array(16, &[], Some(LayoutProto::default()))), "bf16[]");
        let scalar_tiled = LayoutProto { tiles: vec![TileProto { dimensions: vec![128] }], ..LayoutProto::default() };
        assert_eq!(shape_text(&array(11, &[], Some(scalar_tiled))), "f32[]{:T(128)}");
        assert_eq!(shape_text(&array(11, &[3], None)), "f32[3]");
        let dynamic = ShapeProto { is_dynamic_dimension: vec![true, false], ..array(4, &[8, 2], None) };
        assert_eq!(shape_text(&dynamic), "s32[<=8,2]");
    }

    #[test]
    fn tuples_mark_every_fifth_element() {
        let e = array(6, &[1], Some(LayoutProto { minor_to_major: vec![0], ..LayoutProto::default() }));
        let tuple = ShapeProto { element_type: TUPLE, tuple_shapes: vec![e; 6], ..ShapeProto::default() };
        assert_eq!(shape_text(&tuple), "(u8[1]{0}, u8[1]{0}, u8[1]{0}, u8[1]{0}, u8[1]{0}, /*index=5*/u8[1]{0})");
        assert_eq!(shape_text(&ShapeProto { element_type: TUPLE, ..ShapeProto::default() }), "()");
        assert_eq!(shape_text(&ShapeProto { element_type: TOKEN, ..ShapeProto::default() }), "token[]");
    }
}
