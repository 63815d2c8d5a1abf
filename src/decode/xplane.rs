//! A lazy XSpace: planes and lines are indexed by byte range; events are decoded only for the lines
//! (and event kinds) an analysis asks for. Most of a JAX trace is the Python tracer line, which no
//! memory tool needs, so it is counted but never materialised.

use super::sniff::Format;
use super::wire::{self, Fields, Value};
use super::{gzip, DecodeError, Progress};
use crate::proto::xplane as pb;
use prost::Message;
use std::borrow::Cow;
use std::ops::Range;

const FORMAT: Format = Format::XSpace;

/// An indexed XSpace that owns the file's (decompressed) bytes.
pub struct XSpace {
    bytes: Vec<u8>,
    pub errors: Vec<String>,
    pub warnings: Vec<String>,
    pub hostnames: Vec<String>,
    pub planes: Vec<Plane>,
}

/// A plane's metadata (decoded) and its lines (indexed, not decoded).
pub struct Plane {
    pub meta: pb::XPlane,
    pub lines: Vec<Line>,
}

/// A line's header and where its events are.
pub struct Line {
    pub header: pb::XLine,
    /// Byte range of the whole XLine message in [`XSpace::bytes`].
    range: Range<usize>,
    pub event_count: usize,
}

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
    pub fn as_str(&self) -> Option<&str> {
        match self {
            StatValue::Str(s) => Some(s),
            _ => None,
        }
    }
}

impl XSpace {
    /// Indexes `bytes` (an uncompressed XSpace). Reports progress in bytes scanned.
    pub fn index(bytes: Vec<u8>, progress: Progress) -> Result<Self, DecodeError> {
        let total = bytes.len() as u64;
        let mut plane_ranges = Vec::new();
        let mut header = pb::XSpaceHeader::default();
        for f in Fields::new(&bytes, 0..bytes.len()) {
            let f = f.map_err(|e| DecodeError::from_wire(FORMAT, e))?;
            match (f.number, f.value) {
                (1, Value::Len(r)) => plane_ranges.push(r),
                (2..=4, Value::Len(r)) => {
                    // Merge the small top-level string fields through prost (re-encoded key + payload).
                    header
                        .merge(&bytes[f.at..r.end])
                        .map_err(|e| DecodeError::from_prost(FORMAT, "space header", e))?;
                }
                _ => {}
            }
        }
        let mut planes = Vec::with_capacity(plane_ranges.len());
        for (i, r) in plane_ranges.into_iter().enumerate() {
            progress(r.start as u64, total);
            planes.push(Plane::index(&bytes, r).map_err(|e| match e {
                DecodeError::Corrupt { format, detail } => {
                    DecodeError::Corrupt { format, detail: format!("plane #{i}: {detail}") }
                }
                e => e,
            })?);
        }
        progress(total, total);
        Ok(XSpace {
            bytes,
            errors: header.errors,
            warnings: header.warnings,
            hostnames: header.hostnames,
            planes,
        })
    }

    /// The (uncompressed) XSpace bytes this index points into.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    pub fn plane_named(&self, name: &str) -> Option<&Plane> {
        self.planes.iter().find(|p| p.meta.name == name)
    }

    /// Visits the events of `line` whose metadata id satisfies `wanted` (a pure predicate), in order,
    /// with their position among all events of the line, read straight from the wire ([`RawEvent`]).
    /// Nothing is allocated per event (the stats go to one buffer reused for the whole line), each
    /// event is read in one pass, and the stats of unwanted events are skipped unread. One scan of a
    /// line can so serve several analyses at once (the Memory Profile reads allocator events and
    /// groups steps over all host events in the same pass).
    pub fn for_each_raw_event<'a>(
        &'a self,
        line: &Line,
        mut wanted: impl FnMut(i64) -> bool,
        mut visit: impl FnMut(usize, &RawEvent<'a, '_>) -> Result<(), DecodeError>,
    ) -> Result<(), DecodeError> {
        let wire_err = |e| DecodeError::from_wire(FORMAT, e);
        let mut index = 0;
        let mut stats = Vec::new();
        for f in Fields::new(&self.bytes, line.range.clone()) {
            let f = f.map_err(wire_err)?;
            match (f.number, f.value) {
                (4, Value::Len(r)) => {
                    if let Some(header) = EventHeader::read(&self.bytes, r, &mut wanted, &mut stats).map_err(wire_err)? {
                        visit(index, &RawEvent { header, stats: &stats })?;
                    }
                    index += 1;
                }
                (4, _) => return Err(wire_err(wrong_wire_type(f.at))),
                _ => {}
            }
        }
        Ok(())
    }
}

fn wrong_wire_type(at: usize) -> wire::WireError {
    wire::WireError::Malformed { at, what: "unexpected wire type for a known field" }
}

/// One `XEvent`, read from the wire without allocating: the header fields decoded, the stats as they lie
/// in the file. Fields are read as prost would (the last occurrence of a field wins, unknown fields are
/// skipped, a known field with the wrong wire type is an error); string stats are checked for UTF-8
/// only when resolved ([`Plane::raw_stat_value`]).
#[derive(Debug, Clone, Copy)]
pub struct RawEvent<'a, 's> {
    pub header: EventHeader,
    /// The event's own stats, in file order.
    pub stats: &'s [RawStat<'a>],
}

/// The scalar fields of an `XEvent`.
#[derive(Debug, Clone, Copy, Default)]
pub struct EventHeader {
    pub metadata_id: i64,
    /// `offset_ps`, or 0 when the `data` oneof holds `num_occurrences` instead.
    pub offset_ps: i64,
    pub duration_ps: i64,
}

impl EventHeader {
    /// Reads the event in `bytes[range]` if `wanted(metadata_id)`, its stats replacing the contents of
    /// `stats`. Whether to read the stats is decided at the first stat with the metadata id seen so far
    /// (profilers write the id first); an id that comes after the stats makes the stats be read again.
    fn read<'a>(
        bytes: &'a [u8],
        range: Range<usize>,
        wanted: &mut impl FnMut(i64) -> bool,
        stats: &mut Vec<RawStat<'a>>,
    ) -> Result<Option<Self>, wire::WireError> {
        stats.clear();
        let mut e = EventHeader::default();
        // (metadata id the decision was made with, whether the event is wanted)
        let mut decided: Option<(i64, bool)> = None;
        for f in Fields::new(bytes, range.clone()) {
            let f = f?;
            match (f.number, f.value) {
                (1, Value::Varint(v)) => e.metadata_id = v as i64,
                (2, Value::Varint(v)) => e.offset_ps = v as i64,
                (5, Value::Varint(_)) => e.offset_ps = 0,
                (3, Value::Varint(v)) => e.duration_ps = v as i64,
                (4, Value::Len(r)) => {
                    let (_, want) = *decided.get_or_insert_with(|| (e.metadata_id, wanted(e.metadata_id)));
                    if want {
                        stats.push(RawStat::read(bytes, r)?);
                    }
                }
                (1..=5, _) => return Err(wrong_wire_type(f.at)),
                _ => {}
            }
        }
        let want = match decided {
            Some((id, want)) if id == e.metadata_id => want,
            Some(_) => {
                let want = wanted(e.metadata_id);
                stats.clear();
                if want {
                    RawStat::read_all(bytes, range, stats)?;
                }
                want
            }
            None => wanted(e.metadata_id),
        };
        Ok(want.then_some(e))
    }
}

/// One `XStat` as it lies on the wire (see [`RawEvent`]).
#[derive(Debug, Clone, Copy)]
pub struct RawStat<'a> {
    pub metadata_id: i64,
    value: Option<RawValue<'a>>,
}

/// The `value` oneof of an `XStat`, borrowed.
#[derive(Debug, Clone, Copy)]
enum RawValue<'a> {
    Double(f64),
    Uint(u64),
    Int(i64),
    Str(&'a [u8]),
    Bytes(&'a [u8]),
    Ref(u64),
    Compressed(&'a [u8]),
}

impl<'a> RawStat<'a> {
    /// Appends the stats (field 4) among the event fields in `bytes[range]` to `out`.
    fn read_all(bytes: &'a [u8], range: Range<usize>, out: &mut Vec<Self>) -> Result<(), wire::WireError> {
        for f in Fields::new(bytes, range) {
            if let wire::Field { number: 4, value: Value::Len(r), .. } = f? {
                out.push(RawStat::read(bytes, r)?);
            }
        }
        Ok(())
    }

    #[inline]
    fn read(bytes: &'a [u8], range: Range<usize>) -> Result<Self, wire::WireError> {
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
    fn index(bytes: &[u8], range: Range<usize>) -> Result<Self, DecodeError> {
        let meta = pb::XPlane::decode(&bytes[range.clone()]).map_err(|e| DecodeError::from_prost(FORMAT, "plane metadata", e))?;
        let line_ranges = wire::len_fields(bytes, range, 3).map_err(|e| DecodeError::from_wire(FORMAT, e))?;
        let mut lines = Vec::with_capacity(line_ranges.len());
        for r in line_ranges {
            let header = pb::XLine::decode(&bytes[r.clone()]).map_err(|e| DecodeError::from_prost(FORMAT, "line header", e))?;
            let event_count = wire::count_fields(bytes, r.clone(), 4).map_err(|e| DecodeError::from_wire(FORMAT, e))?;
            lines.push(Line { header, range: r, event_count });
        }
        Ok(Plane { meta, lines })
    }

    pub fn name(&self) -> &str {
        &self.meta.name
    }

    pub fn event_count(&self) -> usize {
        self.lines.iter().map(|l| l.event_count).sum()
    }

    /// Ids of the event metadata named `name` (an event's kind is its metadata's name).
    pub fn event_metadata_ids(&self, name: &str) -> Vec<i64> {
        self.meta.event_metadata.iter().filter(|(_, m)| m.name == name).map(|(id, _)| *id).collect()
    }

    pub fn event_name(&self, metadata_id: i64) -> &str {
        self.meta.event_metadata.get(&metadata_id).map(|m| m.name.as_str()).unwrap_or("")
    }

    pub fn stat_name(&self, metadata_id: i64) -> &str {
        self.meta.stat_metadata.get(&metadata_id).map(|m| m.name.as_str()).unwrap_or("")
    }

    /// Id of the stat metadata named `name`, if the plane has one.
    pub fn stat_id(&self, name: &str) -> Option<i64> {
        self.meta.stat_metadata.iter().find(|(_, m)| m.name == name).map(|(id, _)| *id)
    }

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

    fn resolve<'a>(&'a self, value: RawValue<'a>) -> Result<Option<StatValue<'a>>, DecodeError> {
        Ok(Some(match value {
            RawValue::Double(v) => StatValue::Double(v),
            RawValue::Uint(v) => StatValue::Uint(v),
            RawValue::Int(v) => StatValue::Int(v),
            RawValue::Str(b) => StatValue::Str(Cow::Borrowed(
                std::str::from_utf8(b)
                    .map_err(|_| DecodeError::Corrupt { format: FORMAT, detail: "a string stat is not UTF-8".into() })?,
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

    #[test]
    fn empty_space_indexes() {
        let mut noop = |_: u64, _: u64| {};
        let s = XSpace::index(pb::XSpaceHeader { hostnames: vec!["h".into()], ..Default::default() }.encode_to_vec(), &mut noop).unwrap();
        assert_eq!(s.hostnames, vec!["h"]);
        assert!(s.planes.is_empty());
    }
}
