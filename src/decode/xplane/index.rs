//! The index of an XSpace: where each plane and line lies, with the plane metadata and the line headers
//! decoded and each line's events counted, not read.
//!
//! The index is built by [`IndexBuilder`] from bytes that may still be arriving (the page reads a file
//! in slices): each call sees the file's bytes so far and indexes what they complete. A plane whose
//! bytes are all present is indexed whole; one still arriving has its lines indexed as each line's
//! last byte arrives, and its metadata decoded when its own last byte does. Fed the whole file at once
//! or slice by slice, it builds the same index.
//!
//! A file cut short is indexed up to the cut ([`super::salvage`]): what lies wholly before it.

use super::{Line, Plane, XSpace, FORMAT};
use crate::decode::wire::{self, Fields, Value, WireError};
use crate::decode::{DecodeError, Input, Progress};
use crate::proto::xplane as pb;
use prost::bytes::Bytes;
use prost::Message;
use std::ops::Range;

impl XSpace {
    /// Indexes `bytes` (an uncompressed XSpace). Reports progress in bytes scanned.
    pub fn index(bytes: impl Into<Input>, progress: Progress) -> Result<Self, DecodeError> {
        IndexBuilder::default().finish(bytes.into(), progress)
    }
}

/// An XSpace index being built from a file's bytes as they arrive (see the module's doc).
#[derive(Default)]
pub struct IndexBuilder {
    /// Offset of the next top-level field not yet taken in (the arriving plane's, while it arrives).
    at: usize,
    header: pb::XSpaceHeader,
    pub(super) planes: Vec<Plane>,
    /// The plane whose bytes are still arriving, if the last top-level field read is one.
    pub(super) arriving: Option<ArrivingPlane>,
    /// The whole file as shared bytes, where [`IndexBuilder::finish`] was given them so: planes'
    /// metadata is then decoded from slices of it (an embedded HLO proto is not copied).
    shared: Option<Bytes>,
}

/// A plane being indexed line by line as its bytes arrive.
pub(super) struct ArrivingPlane {
    pub(super) range: Range<usize>,
    /// Offset of the next field of the plane not yet taken in.
    pub(super) at: usize,
    pub(super) lines: Vec<Line>,
    /// A line did not index: the plane is indexed whole once it is here, which reports the error
    /// exactly as indexing the whole file does.
    pub(super) whole: bool,
}

impl IndexBuilder {
    /// Indexes what `bytes` (the file's first `bytes.len()` bytes; each call's extend the last's)
    /// completes. Reports progress (bytes, of `bytes.len()`) as each whole plane starts.
    pub fn advance(&mut self, bytes: &[u8], progress: Progress) -> Result<(), DecodeError> {
        loop {
            if let Some(plane) = &mut self.arriving {
                if !plane.advance(bytes) {
                    return Ok(());
                }
                let plane = self.arriving.take().expect("checked above");
                self.at = plane.range.end;
                self.planes.push(plane.finish(bytes, self.shared.as_ref()).map_err(|e| self.in_plane(e))?);
                continue;
            }
            let mut fields = Fields::new(bytes, self.at..bytes.len());
            let f = match fields.next() {
                None => return Ok(()),
                Some(Ok(f)) => f,
                Some(Err(WireError::Truncated { .. })) => {
                    // A plane's payload not all here yet: index its lines as they come.
                    if let Some(range) = len_field_head(bytes, self.at, 1) {
                        self.arriving = Some(ArrivingPlane { at: range.start, range, lines: Vec::new(), whole: false });
                        continue;
                    }
                    return Ok(());
                }
                Some(Err(e)) => return Err(DecodeError::from_wire(FORMAT, e)),
            };
            match (f.number, f.value) {
                (1, Value::Len(r)) => {
                    progress(r.start as u64, bytes.len() as u64);
                    self.planes.push(Plane::index(bytes, r, self.shared.as_ref()).map_err(|e| self.in_plane(e))?);
                }
                (2..=4, Value::Len(r)) => {
                    // Merge the small top-level string fields through prost (re-encoded key + payload).
                    self.header.merge(&bytes[f.at..r.end]).map_err(|e| DecodeError::from_prost(FORMAT, "space header", e))?;
                }
                _ => {}
            }
            self.at = fields.position();
        }
    }

    /// The index of `bytes`, the whole file (of which [`advance`](Self::advance) may have seen a part).
    ///
    /// A file whose top-level structure reads well up to a field that runs past its end was cut
    /// short: it is indexed up to the cut ([`IndexBuilder::salvage`]), and says where the cut is.
    pub fn finish(mut self, bytes: Input, progress: Progress) -> Result<XSpace, DecodeError> {
        #[cfg(target_os = "linux")]
        {
            self.shared = bytes.shared().cloned();
        }
        self.advance(&bytes, progress)?;
        // `advance` took in every complete top-level field: what follows, if anything, runs past the end.
        let truncation = match Fields::new(&bytes, self.at..bytes.len()).next() {
            None | Some(Ok(_)) => None,
            Some(Err(cut @ WireError::Truncated { .. })) => Some(self.salvage(&bytes, cut)?),
            Some(Err(e)) => return Err(DecodeError::from_wire(FORMAT, e)),
        };
        progress(bytes.len() as u64, bytes.len() as u64);
        let header = self.header;
        Ok(XSpace { bytes, errors: header.errors, warnings: header.warnings, hostnames: header.hostnames, planes: self.planes, truncation })
    }

    /// How far the index has read: bytes before this offset are all indexed.
    pub fn indexed_bytes(&self) -> usize {
        self.arriving.as_ref().map_or(self.at, |p| p.at)
    }

    /// Names the plane an error is in (by its position in the file).
    pub(super) fn in_plane(&self, e: DecodeError) -> DecodeError {
        let i = self.planes.len();
        match e {
            DecodeError::Corrupt { format, detail } => DecodeError::Corrupt { format, detail: format!("plane #{i}: {detail}") },
            e => e,
        }
    }
}

/// The payload range of the length-delimited field `number` whose key and length start at `at`, when
/// both are in `bytes` (its payload need not be).
pub(super) fn len_field_head(bytes: &[u8], at: usize, number: u64) -> Option<Range<usize>> {
    let mut p = at;
    let key = wire::varint_at(bytes, &mut p)?;
    if key != number << 3 | 2 {
        return None;
    }
    let len = usize::try_from(wire::varint_at(bytes, &mut p)?).ok()?;
    Some(p..p.checked_add(len)?)
}

impl ArrivingPlane {
    /// Indexes the lines `bytes` complete; true once the whole plane is here.
    fn advance(&mut self, bytes: &[u8]) -> bool {
        let here = bytes.len() >= self.range.end;
        while !self.whole && self.at < self.range.end {
            let mut fields = Fields::new(bytes, self.at..self.range.end);
            match fields.next() {
                Some(Ok(f)) => {
                    match (f.number, f.value) {
                        (3, Value::Len(r)) => match Plane::index_line(bytes, r) {
                            Ok(line) => self.lines.push(line),
                            Err(_) => self.whole = true,
                        },
                        (3, _) => self.whole = true,
                        _ => {}
                    }
                    self.at = fields.position();
                }
                Some(Err(WireError::Truncated { .. })) if !here => break,
                _ => self.whole = true,
            }
        }
        here
    }

    fn finish(self, bytes: &[u8], shared: Option<&Bytes>) -> Result<Plane, DecodeError> {
        if self.whole {
            return Plane::index(bytes, self.range, shared);
        }
        Ok(Plane { meta: Plane::decode_meta(bytes, self.range, shared)?, lines: self.lines })
    }
}

impl Plane {
    /// The plane's metadata is decoded while its lines are indexed, on two threads for a large plane:
    /// both walk it (the metadata's decoder passes over the lines, the index over the metadata).
    fn index(bytes: &[u8], range: Range<usize>, shared: Option<&Bytes>) -> Result<Self, DecodeError> {
        let split = range.len() >= crate::threads::SPLIT_BYTES;
        let (meta, lines) =
            crate::threads::join(split, || Self::decode_meta(bytes, range.clone(), shared), || Self::index_lines(bytes, range.clone()));
        Ok(Plane { meta: meta?, lines: lines? })
    }

    /// The metadata of the plane at `range` of `bytes`, decoded from `shared` (the same bytes,
    /// shared) where given: its byte fields are then slices of it, not copies.
    fn decode_meta(bytes: &[u8], range: Range<usize>, shared: Option<&Bytes>) -> Result<pb::XPlane, DecodeError> {
        match shared {
            Some(all) => pb::XPlane::decode(all.slice(range)),
            None => pb::XPlane::decode(&bytes[range]),
        }
        .map_err(|e| DecodeError::from_prost(FORMAT, "plane metadata", e))
    }

    fn index_lines(bytes: &[u8], range: Range<usize>) -> Result<Vec<Line>, DecodeError> {
        let line_ranges = wire::len_fields(bytes, range, 3).map_err(|e| DecodeError::from_wire(FORMAT, e))?;
        line_ranges.into_iter().map(|r| Self::index_line(bytes, r)).collect()
    }

    /// One pass over the line at `r`: its events are counted, and its other fields merged into the
    /// header through prost one by one (decoding the whole line would walk the events again).
    fn index_line(bytes: &[u8], r: Range<usize>) -> Result<Line, DecodeError> {
        Self::index_line_to_cut(bytes, r, false)
    }

    /// [`Plane::index_line`], where a line cut short (`cut`: `r` runs to the file's end, short of
    /// the line's) keeps the fields before the cut: its range ends after the last whole field, so
    /// an event cut in half is not one of its events.
    pub(super) fn index_line_to_cut(bytes: &[u8], r: Range<usize>, cut: bool) -> Result<Line, DecodeError> {
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
            let f = match fields.next() {
                None => break,
                Some(Err(WireError::Truncated { .. })) if cut => break,
                Some(f) => f.map_err(|e| DecodeError::from_wire(FORMAT, e))?,
            };
            if f.number == 4 {
                event_count += 1;
            } else {
                header.merge(&bytes[at..fields.position()]).map_err(|e| DecodeError::from_prost(FORMAT, "line header", e))?;
            }
            at = fields.position();
        }
        let range = if cut { r.start..at } else { r };
        Ok(Line { header, range, event_count })
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
