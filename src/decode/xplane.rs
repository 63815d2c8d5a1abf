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

    /// Visits the events of `line` whose metadata id satisfies `wanted`, decoding only those.
    pub fn for_each_event(
        &self,
        line: &Line,
        mut wanted: impl FnMut(i64) -> bool,
        mut visit: impl FnMut(pb::XEvent),
    ) -> Result<(), DecodeError> {
        let events = wire::len_fields(&self.bytes, line.range.clone(), 4).map_err(|e| DecodeError::from_wire(FORMAT, e))?;
        for r in events {
            let metadata_id = Fields::new(&self.bytes, r.clone())
                .find_map(|f| match f {
                    Ok(Field { number: 1, value: Value::Varint(v), .. }) => Some(v as i64),
                    _ => None,
                })
                .unwrap_or(0);
            if wanted(metadata_id) {
                let ev = pb::XEvent::decode(&self.bytes[r]).map_err(|e| DecodeError::from_prost(FORMAT, "event", e))?;
                visit(ev);
            }
        }
        Ok(())
    }

    /// All events of `line`, decoded.
    pub fn events(&self, line: &Line) -> Result<Vec<pb::XEvent>, DecodeError> {
        let mut out = Vec::with_capacity(line.event_count);
        self.for_each_event(line, |_| true, |e| out.push(e))?;
        Ok(out)
    }
}

use wire::Field;

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
        Some(match stat.value.as_ref()? {
            V::DoubleValue(v) => StatValue::Double(*v),
            V::Uint64Value(v) => StatValue::Uint(*v),
            V::Int64Value(v) => StatValue::Int(*v),
            V::StrValue(s) => StatValue::Str(Cow::Borrowed(s)),
            V::BytesValue(b) => StatValue::Bytes(b),
            V::RefValue(r) => StatValue::Str(Cow::Borrowed(self.stat_name(*r as i64))),
            V::CompressedStrValue(b) => {
                let s = gzip::inflate_with_limit(b, compressed_stat_limit(b.len())).ok()?;
                StatValue::Str(Cow::Owned(String::from_utf8_lossy(&s).into_owned()))
            }
        })
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
