//! Stats: read from the wire ([`RawStat`], [`RoleValues`]) or decoded, and resolved ([`StatValue`]):
//! references to the plane's stat metadata named, compressed strings inflated within bounds.

use super::{wrong_wire_type, Plane, FORMAT};
use crate::decode::wire::{self, Fields, Value};
use crate::decode::{gzip, DecodeError};
use crate::proto::xplane as pb;
use std::borrow::Cow;
use std::ops::Range;

/// A stat's value with interned strings resolved.
#[derive(Debug, Clone, PartialEq)]
pub enum StatValue<'a> {
    Int(i64),
    Uint(u64),
    Double(f64),
    Str(Cow<'a, str>),
    Bytes(&'a [u8]),
}

impl StatValue<'_> {
    /// An integer, however it was stored.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            StatValue::Int(v) => Some(*v),
            StatValue::Uint(v) => i64::try_from(*v).ok(),
            _ => None,
        }
    }

    /// An unsigned integer (ids such as program ids use all 64 bits), a signed one reinterpreted.
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            StatValue::Uint(v) => Some(*v),
            StatValue::Int(v) => Some(*v as u64),
            _ => None,
        }
    }
    pub fn as_str(&self) -> Option<&str> {
        match self {
            StatValue::Str(s) => Some(s),
            _ => None,
        }
    }
}

/// One `XStat` as it lies on the wire (see [`RawEvent`](super::RawEvent)).
#[derive(Debug, Clone, Copy)]
pub struct RawStat<'a> {
    pub metadata_id: i64,
    pub(super) value: Option<RawValue<'a>>,
}

/// The `value` oneof of an `XStat`, borrowed.
#[derive(Debug, Clone, Copy)]
pub(super) enum RawValue<'a> {
    Double(f64),
    Uint(u64),
    Int(i64),
    Str(&'a [u8]),
    Bytes(&'a [u8]),
    Ref(u64),
    Compressed(&'a [u8]),
}

/// The last value of each role among the stats of one event, for a reader of a dozen stats of each of
/// many events (the allocator's): each stat metadata id it reads gets a role, 1..=N, and the values
/// land by role in one array, read back in a fixed order ([`RawEvent::role_values`](super::RawEvent::role_values), or
/// [`RoleValues::set`] stat by stat), where a value per stat resolved on its own and matched on its
/// role costs more than the decoding. A stat without a value leaves its role as it was.
#[derive(Debug, Clone, Copy)]
pub struct RoleValues<'a, const N: usize> {
    pub(super) values: [Option<RawValue<'a>>; N],
    /// A header field came after a stat ([`Want::Header`](super::Want::Header) would have missed it).
    pub(super) late_header: bool,
}

impl<const N: usize> Default for RoleValues<'_, N> {
    fn default() -> Self {
        RoleValues { values: [None; N], late_header: false }
    }
}

impl<'a, const N: usize> RoleValues<'a, N> {
    /// Sets `role` (1..=N; others are ignored) to the value of `stat`, if it has one.
    pub fn set(&mut self, role: u8, stat: &RawStat<'a>) {
        if let (Some(slot), Some(v)) = (self.values.get_mut(usize::from(role).wrapping_sub(1)), stat.value) {
            *slot = Some(v);
        }
    }

    fn get(&self, role: u8) -> Option<RawValue<'a>> {
        self.values.get(usize::from(role).wrapping_sub(1)).copied().flatten()
    }

    /// Whether [`RawEvent::role_values`](super::RawEvent::role_values) met a header field after a stat.
    pub fn late_header(&self) -> bool {
        self.late_header
    }

    pub fn is_set(&self, role: u8) -> bool {
        self.get(role).is_some()
    }

    /// The value if it is an `int64_value`, else 0.
    #[inline]
    pub fn int(&self, role: u8) -> i64 {
        match self.get(role) {
            Some(RawValue::Int(v)) => v,
            _ => 0,
        }
    }

    /// The value if it is a `double_value`, else 0.
    #[inline]
    pub fn double(&self, role: u8) -> f64 {
        match self.get(role) {
            Some(RawValue::Double(v)) => v,
            _ => 0.0,
        }
    }

    /// The value as an integer however it is stored ([`StatValue::as_i64`]).
    #[inline]
    pub fn integer(&self, role: u8) -> Option<i64> {
        match self.get(role)? {
            RawValue::Int(v) => Some(v),
            RawValue::Uint(v) => i64::try_from(v).ok(),
            _ => None,
        }
    }

    /// The value if it is a reference to the plane's stat metadata (named by the string it stands for).
    #[inline]
    pub fn reference(&self, role: u8) -> Option<u64> {
        match self.get(role)? {
            RawValue::Ref(r) => Some(r),
            _ => None,
        }
    }

    /// The value as a string of `plane` ([`Plane::raw_stat_value`]); "" for a value of another kind.
    pub fn text(&self, role: u8, plane: &'a Plane) -> Result<Cow<'a, str>, DecodeError> {
        Ok(match self.get(role) {
            Some(v) => match plane.resolve(v)? {
                Some(StatValue::Str(s)) => s,
                _ => Cow::Borrowed(""),
            },
            None => Cow::Borrowed(""),
        })
    }
}

impl<'a> RawStat<'a> {
    /// The value if it is a number: resolved inline, for hot loops that mostly meet numbers (other
    /// values go through [`Plane::raw_stat_value`]).
    #[inline(always)]
    pub fn number(&self) -> Option<StatValue<'static>> {
        match self.value? {
            RawValue::Int(v) => Some(StatValue::Int(v)),
            RawValue::Uint(v) => Some(StatValue::Uint(v)),
            RawValue::Double(v) => Some(StatValue::Double(v)),
            _ => None,
        }
    }

    /// Appends the stats (field 4) among the event fields in `bytes[range]` to `out`.
    pub(super) fn read_all(bytes: &'a [u8], range: Range<usize>, out: &mut Vec<Self>) -> Result<(), wire::WireError> {
        for f in Fields::new(bytes, range) {
            if let wire::Field { number: 4, value: Value::Len(r), .. } = f? {
                out.push(RawStat::read(bytes, r)?);
            }
        }
        Ok(())
    }

    /// The metadata id of the stat in `bytes[start..end]` laid out as [`RawStat::read_value_fast`]
    /// reads it, and where its value starts. `None` if the stat does not start with its metadata id.
    #[inline(always)]
    pub(super) fn read_id_fast(bytes: &[u8], start: usize, end: usize) -> Option<(i64, usize)> {
        if start >= end || bytes[start] != 0x08 {
            return None;
        }
        let mut p = start + 1;
        let metadata_id = wire::varint_in(bytes, &mut p, end)? as i64;
        Some((metadata_id, p))
    }

    /// [`RawStat::read`] for a stat laid out as profilers write it: its metadata id (read by
    /// [`RawStat::read_id_fast`]: `metadata_id`, the value at `at`), then at most one value field
    /// ending at `end`, nothing else. `None` for any other layout (or a malformed stat).
    #[inline(always)]
    pub(super) fn read_value_fast(bytes: &'a [u8], metadata_id: i64, at: usize, end: usize) -> Option<Self> {
        let mut p = at;
        if p == end {
            return Some(RawStat { metadata_id, value: None });
        }
        let key = *bytes.get(p)?;
        p += 1;
        let value = match key {
            0x11 => {
                let b = bytes.get(p..p.checked_add(8).filter(|&e| e <= end)?)?;
                p += 8;
                RawValue::Double(f64::from_le_bytes(b.try_into().ok()?))
            }
            0x18 => RawValue::Uint(wire::varint_in(bytes, &mut p, end)?),
            0x20 => RawValue::Int(wire::varint_in(bytes, &mut p, end)? as i64),
            0x38 => RawValue::Ref(wire::varint_in(bytes, &mut p, end)?),
            0x2a | 0x32 | 0x42 => {
                let n = usize::try_from(wire::varint_in(bytes, &mut p, end)?).ok()?;
                let b = bytes.get(p..p.checked_add(n).filter(|&e| e <= end)?)?;
                p += n;
                match key {
                    0x2a => RawValue::Str(b),
                    0x32 => RawValue::Bytes(b),
                    _ => RawValue::Compressed(b),
                }
            }
            _ => return None,
        };
        (p == end).then_some(RawStat { metadata_id, value: Some(value) })
    }

    #[inline]
    pub(super) fn read(bytes: &'a [u8], range: Range<usize>) -> Result<Self, wire::WireError> {
        let mut s = RawStat { metadata_id: 0, value: None };
        for f in Fields::new(bytes, range) {
            let f = f?;
            let value = match (f.number, f.value) {
                (1, Value::Varint(v)) => {
                    s.metadata_id = v as i64;
                    continue;
                }
                (2, Value::Fixed64(v)) => RawValue::Double(f64::from_bits(v)),
                (3, Value::Varint(v)) => RawValue::Uint(v),
                (4, Value::Varint(v)) => RawValue::Int(v as i64),
                (5, Value::Len(r)) => RawValue::Str(&bytes[r]),
                (6, Value::Len(r)) => RawValue::Bytes(&bytes[r]),
                (7, Value::Varint(v)) => RawValue::Ref(v),
                (8, Value::Len(r)) => RawValue::Compressed(&bytes[r]),
                (1..=8, _) => return Err(wrong_wire_type(f.at)),
                _ => continue,
            };
            s.value = Some(value);
        }
        Ok(s)
    }
}

impl Plane {
    /// A stat's value with `ref_value` resolved to the referenced stat metadata's name and
    /// `compressed_str_value` inflated (bounded).
    pub fn stat_value<'a>(&'a self, stat: &'a pb::XStat) -> Option<StatValue<'a>> {
        use pb::x_stat::Value as V;
        // Strings of a decoded stat are valid UTF-8 already (prost checked them).
        self.resolve(match stat.value.as_ref()? {
            V::DoubleValue(v) => RawValue::Double(*v),
            V::Uint64Value(v) => RawValue::Uint(*v),
            V::Int64Value(v) => RawValue::Int(*v),
            V::StrValue(s) => RawValue::Str(s.as_bytes()),
            V::BytesValue(b) => RawValue::Bytes(b),
            V::RefValue(r) => RawValue::Ref(*r),
            V::CompressedStrValue(b) => RawValue::Compressed(b),
        })
        .ok()
        .flatten()
    }

    /// [`Plane::stat_value`] for a stat read from the wire. A string stat that is not UTF-8 is an error,
    /// as it is when prost decodes the event.
    pub fn raw_stat_value<'a>(&'a self, stat: &RawStat<'a>) -> Result<Option<StatValue<'a>>, DecodeError> {
        stat.value.map_or(Ok(None), |v| self.resolve(v))
    }

    #[inline]
    fn resolve<'a>(&'a self, value: RawValue<'a>) -> Result<Option<StatValue<'a>>, DecodeError> {
        Ok(Some(match value {
            RawValue::Double(v) => StatValue::Double(v),
            RawValue::Uint(v) => StatValue::Uint(v),
            RawValue::Int(v) => StatValue::Int(v),
            RawValue::Str(b) => StatValue::Str(Cow::Borrowed(
                std::str::from_utf8(b).map_err(|_| DecodeError::Corrupt { format: FORMAT, detail: "a string stat is not UTF-8".into() })?,
            )),
            RawValue::Bytes(b) => StatValue::Bytes(b),
            RawValue::Ref(r) => StatValue::Str(Cow::Borrowed(self.stat_name(r as i64))),
            RawValue::Compressed(b) => {
                let Ok(s) = gzip::inflate_with_limit(b, compressed_stat_limit(b.len())) else { return Ok(None) };
                StatValue::Str(Cow::Owned(String::from_utf8_lossy(&s).into_owned()))
            }
        }))
    }

    /// The plane-level stat named `name`.
    pub fn stat(&self, name: &str) -> Option<StatValue<'_>> {
        let id = self.stat_id(name)?;
        self.meta.stats.iter().find(|s| s.metadata_id == id).and_then(|s| self.stat_value(s))
    }
}

/// The most a `compressed_str_value` may inflate to. Stats are inflated on every read and their text
/// kept (op names, shapes), so a file of many small bombs must not multiply into memory: a string may
/// be 256× its compressed size (text compresses 5–10×) plus 64 KiB, and never more than 16 MiB. A
/// stat over the limit reads as absent.
fn compressed_stat_limit(compressed_len: usize) -> u64 {
    (compressed_len as u64).saturating_mul(256).saturating_add(64 << 10).min(16 << 20)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compressed_stats_are_bounded() {
        use std::io::Write;
        let gz = |data: &[u8]| {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
            e.write_all(data).unwrap();
            e.finish().unwrap()
        };
        let plane = Plane { meta: pb::XPlane::default(), lines: Vec::new() };
        let stat = |b: Vec<u8>| pb::XStat { metadata_id: 1, value: Some(pb::x_stat::Value::CompressedStrValue(b)) };
        let small = stat(gz(b"jit(train_step)/dot_general"));
        assert_eq!(plane.stat_value(&small), Some(StatValue::Str(Cow::Owned("jit(train_step)/dot_general".into()))));
        // 8 MiB of one letter compresses ~1000×: far past 256× + 64 KiB.
        let bomb = stat(gz(&vec![b'a'; 8 << 20]));
        assert_eq!(plane.stat_value(&bomb), None);
    }
}
