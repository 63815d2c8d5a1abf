//! A constant's value as XLA prints it in the instruction text (`Literal::PrintWithoutShapeOneline`):
//! `1`, `{1, 2, 3}`, `{ { 1, 2 }, { 3, 4 } }`; numbers in XLA's round-trip form (`%.6g`, or more digits
//! when that does not read back the same value).

use super::shape::primitive_type_name;
use crate::analysis::number_text::format_g;
use crate::proto::hlo::LiteralProto;
use std::fmt::Write;

/// One element of a literal, as text; `None` when the literal's storage for its type is missing or short.
fn element(literal: &LiteralProto, element_type: i32, i: usize, pred_as_digit: bool) -> Option<String> {
    let two_bytes = |b: &[u8]| b.get(2 * i..2 * i + 2).map(|s| u16::from_le_bytes([s[0], s[1]]));
    Some(match primitive_type_name(element_type) {
        "pred" => {
            let v = *literal.preds.get(i)?;
            match (pred_as_digit, v) {
                (true, v) => u8::from(v).to_string(),
                (false, true) => "true".into(),
                (false, false) => "false".into(),
            }
        }
        "s8" => (*literal.s8s.get(i)? as i8).to_string(),
        "u8" => literal.u8s.get(i)?.to_string(),
        "s16" => (two_bytes(&literal.s16s)? as i16).to_string(),
        "u16" => two_bytes(&literal.u16s)?.to_string(),
        "s32" => literal.s32s.get(i)?.to_string(),
        "u32" => literal.u32s.get(i)?.to_string(),
        "s64" => literal.s64s.get(i)?.to_string(),
        "u64" => literal.u64s.get(i)?.to_string(),
        "f32" => float_text(f64::from(*literal.f32s.get(i)?), 6, 9, |t| t.parse::<f32>().ok().map(f64::from)),
        "f64" => float_text(*literal.f64s.get(i)?, 15, 17, |t| t.parse::<f64>().ok()),
        "bf16" => format_g(f64::from(f32::from_bits(u32::from(two_bytes(&literal.bf16s)?) << 16)), 4),
        "f16" => format_g(half_to_f64(two_bytes(&literal.f16s)?), 5),
        "c64" => {
            let (re, im) = (*literal.c64s.get(2 * i)?, *literal.c64s.get(2 * i + 1)?);
            let f = |v: f32| float_text(f64::from(v), 6, 9, |t| t.parse::<f32>().ok().map(f64::from));
            format!("({}, {})", f(re), f(im))
        }
        "c128" => {
            let (re, im) = (*literal.c128s.get(2 * i)?, *literal.c128s.get(2 * i + 1)?);
            let f = |v: f64| float_text(v, 15, 17, |t| t.parse::<f64>().ok());
            format!("({}, {})", f(re), f(im))
        }
        _ => return None,
    })
}

/// XLA's `RoundTripFpToString` for f32/f64: `%.{short}g`, or `%.{long}g` when the short form does not
/// parse back to the same value.
fn float_text(v: f64, short: usize, long: usize, parse: impl Fn(&str) -> Option<f64>) -> String {
    let text = format_g(v, short);
    if v.is_nan() || parse(&text) == Some(v) {
        text
    } else {
        format_g(v, long)
    }
}

fn half_to_f64(bits: u16) -> f64 {
    let sign = if bits & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((bits >> 10) & 0x1f);
    let frac = f64::from(bits & 0x3ff);
    sign * match exp {
        0 => frac * 2f64.powi(-24),
        31 if frac == 0.0 => f64::INFINITY,
        31 => f64::NAN,
        e => (1.0 + frac / 1024.0) * 2f64.powi(e - 15),
    }
}

/// The value of an array literal without its shape, on one line; `None` when its data cannot be read
/// (XLA would not have written such a proto).
pub fn literal_text(literal: &LiteralProto) -> Option<String> {
    let shape = literal.shape.as_ref()?;
    let dims: Vec<usize> = shape.dimensions.iter().map(|&d| usize::try_from(d).ok()).collect::<Option<_>>()?;
    // Elements are stored in the literal's layout order (minor-to-major), row-major without one.
    let minor_to_major: Vec<usize> = match shape.layout.as_ref().filter(|l| l.minor_to_major.len() == dims.len()) {
        Some(l) => l.minor_to_major.iter().map(|&d| usize::try_from(d).ok()).collect::<Option<_>>()?,
        None => (0..dims.len()).rev().collect(),
    };
    let linear = |index: &[usize]| {
        let (mut offset, mut stride) = (0, 1);
        for &d in &minor_to_major {
            offset += index[d] * stride;
            stride *= dims[d];
        }
        offset
    };
    let mut out = String::new();
    let mut index = Vec::with_capacity(dims.len());
    write_nested(&mut out, literal, shape.element_type, &dims, &mut index, &linear)?;
    Some(out)
}

/// XLA's `DenseArrayPrintHelper` with `oneline`: braces per dimension, the innermost ones padded with
/// spaces in rank ≥ 2, `/*iN=M*/` markers in rank > 3.
fn write_nested(
    out: &mut String,
    literal: &LiteralProto,
    element_type: i32,
    dims: &[usize],
    index: &mut Vec<usize>,
    linear: &dyn Fn(&[usize]) -> usize,
) -> Option<()> {
    let rank = dims.len();
    let depth = index.len();
    if depth == rank {
        out.push_str(&element(literal, element_type, linear(index), rank > 0)?);
        return Some(());
    }
    let remaining = rank - depth;
    let size = dims[depth];
    // Opening brace.
    if rank == 1 {
        out.push('{');
    } else if remaining == 1 {
        out.push('{');
        if size > 1 {
            out.push(' ');
        }
    } else {
        out.push('{');
        if rank > 3 && depth > 0 {
            let _ = write!(out, " /*i{}={}*/", depth - 1, index[depth - 1]);
            if size > 0 {
                out.push(' ');
            }
        } else {
            out.push(' ');
        }
    }
    for i in 0..size {
        index.push(i);
        write_nested(out, literal, element_type, dims, index, linear)?;
        index.pop();
        if i + 1 < size {
            out.push_str(", ");
        }
    }
    // Closing brace.
    if rank == 1 {
        out.push('}');
    } else if remaining == 1 {
        if size > 1 {
            out.push(' ');
        }
        out.push('}');
    } else {
        out.push_str(" }");
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::hlo::ShapeProto;

    fn f32s(dims: &[i64], values: &[f32]) -> LiteralProto {
        let shape = ShapeProto { element_type: 11, dimensions: dims.to_vec(), ..ShapeProto::default() };
        LiteralProto { shape: Some(shape), f32s: values.to_vec(), ..LiteralProto::default() }
    }

    #[test]
    fn numbers_round_trip_as_xla_prints_them() {
        // 0.1f32 needs nine digits to read back.
        assert_eq!(literal_text(&f32s(&[], &[0.1])).unwrap(), "0.1");
        assert_eq!(literal_text(&f32s(&[], &[16777217.0])).unwrap(), "16777216");
        assert_eq!(literal_text(&f32s(&[], &[1.1754944e-38])).unwrap(), "1.17549435e-38");
    }

    #[test]
    fn arrays_nest_as_xla_prints_them() {
        assert_eq!(literal_text(&f32s(&[3], &[1.0, 2.0, 3.0])).unwrap(), "{1, 2, 3}");
        assert_eq!(literal_text(&f32s(&[2, 2], &[1.0, 2.0, 3.0, 4.0])).unwrap(), "{ { 1, 2 }, { 3, 4 } }");
        assert_eq!(literal_text(&f32s(&[0], &[])).unwrap(), "{}");
        assert_eq!(literal_text(&f32s(&[2], &[1.0])), None, "short data");
    }
}
