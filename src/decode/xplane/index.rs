//! The index of an XSpace: where each plane and line lies, with the plane metadata and the line headers
//! decoded and each line's events counted, not read.

use super::{Line, Plane, XSpace, FORMAT};
use crate::decode::wire::{self, Fields, Value};
use crate::decode::{DecodeError, Input, Progress};
use crate::proto::xplane as pb;
use prost::Message;
use std::ops::Range;

impl XSpace {
    /// Indexes `bytes` (an uncompressed XSpace). Reports progress in bytes scanned.
    pub fn index(bytes: impl Into<Input>, progress: Progress) -> Result<Self, DecodeError> {
        let bytes: Input = bytes.into();
        let total = bytes.len() as u64;
        let mut plane_ranges = Vec::new();
        let mut header = pb::XSpaceHeader::default();
        for f in Fields::new(&bytes, 0..bytes.len()) {
            let f = f.map_err(|e| DecodeError::from_wire(FORMAT, e))?;
            match (f.number, f.value) {
                (1, Value::Len(r)) => plane_ranges.push(r),
                (2..=4, Value::Len(r)) => {
                    // Merge the small top-level string fields through prost (re-encoded key + payload).
                    header.merge(&bytes[f.at..r.end]).map_err(|e| DecodeError::from_prost(FORMAT, "space header", e))?;
                }
                _ => {}
            }
        }
        let mut planes = Vec::with_capacity(plane_ranges.len());
        for (i, r) in plane_ranges.into_iter().enumerate() {
            progress(r.start as u64, total);
            planes.push(Plane::index(&bytes, r).map_err(|e| match e {
                DecodeError::Corrupt { format, detail } => DecodeError::Corrupt { format, detail: format!("plane #{i}: {detail}") },
                e => e,
            })?);
        }
        progress(total, total);
        Ok(XSpace { bytes, errors: header.errors, warnings: header.warnings, hostnames: header.hostnames, planes })
    }
}

impl Plane {
    /// The plane's metadata is decoded while its lines are indexed, on two threads for a large plane:
    /// both walk it (the metadata's decoder passes over the lines, the index over the metadata).
    fn index(bytes: &[u8], range: Range<usize>) -> Result<Self, DecodeError> {
        let split = range.len() >= crate::threads::SPLIT_BYTES;
        let (meta, lines) = crate::threads::join(
            split,
            || pb::XPlane::decode(&bytes[range.clone()]).map_err(|e| DecodeError::from_prost(FORMAT, "plane metadata", e)),
            || Self::index_lines(bytes, range.clone()),
        );
        Ok(Plane { meta: meta?, lines: lines? })
    }

    fn index_lines(bytes: &[u8], range: Range<usize>) -> Result<Vec<Line>, DecodeError> {
        let line_ranges = wire::len_fields(bytes, range, 3).map_err(|e| DecodeError::from_wire(FORMAT, e))?;
        let mut lines = Vec::with_capacity(line_ranges.len());
        for r in line_ranges {
            // One pass over the line: its events are counted, and its other fields merged into the
            // header through prost one by one (decoding the whole line would walk the events again).
            let mut header = pb::XLine::default();
            let mut event_count = 0;
            let line = &bytes[..r.end];
            let mut at = r.start;
            while at < r.end {
                // An event (field 4, key byte 0x22), nearly every field of a line, is counted and
                // skipped without the general scanner, which reads every other field (and any error).
                if line[at] == 0x22 {
                    let mut p = at + 1;
                    let end = wire::varint_at(line, &mut p)
                        .and_then(|n| usize::try_from(n).ok())
                        .and_then(|n| p.checked_add(n))
                        .filter(|&end| end <= r.end);
                    if let Some(end) = end {
                        event_count += 1;
                        at = end;
                        continue;
                    }
                }
                let mut fields = Fields::new(bytes, at..r.end);
                let Some(f) = fields.next() else { break };
                let f = f.map_err(|e| DecodeError::from_wire(FORMAT, e))?;
                if f.number == 4 {
                    event_count += 1;
                } else {
                    header.merge(&bytes[at..fields.position()]).map_err(|e| DecodeError::from_prost(FORMAT, "line header", e))?;
                }
                at = fields.position();
            }
            lines.push(Line { header, range: r, event_count });
        }
        Ok(lines)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_space_indexes() {
        let mut noop = |_: u64, _: u64| {};
        let s = XSpace::index(pb::XSpaceHeader { hostnames: vec!["h".into()], ..Default::default() }.encode_to_vec(), &mut noop).unwrap();
        assert_eq!(s.hostnames, vec!["h"]);
        assert!(s.planes.is_empty());
    }
}
