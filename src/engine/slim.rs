//! A smaller copy of a profile for sharing: the lines no memory tool reads are dropped.
//!
//! Most of a JAX trace is host threads and the Python tracer line, while its Memory Viewer needs only
//! the HLO protos in `/host:metadata`. A plane without allocator events keeps its metadata (names,
//! HLO protos) but loses its lines; planes with allocator events are kept whole, since the Memory
//! Profile groups their events into steps. The copy carries a warning saying what was removed, which
//! the Overview shows, so nobody mistakes it for the full trace.

use crate::analysis::memory_events::{ALLOCATION, DEALLOCATION};
use crate::decode::wire::{put_len_field, Fields, Value};
use crate::decode::xplane::XSpace;

/// The raw bytes of each field in `buf[range]` whose number is not `drop`, concatenated.
fn without_field(buf: &[u8], range: std::ops::Range<usize>, drop: u32) -> Vec<u8> {
    let end = range.end;
    let fields: Vec<_> = Fields::new(buf, range).filter_map(Result::ok).collect();
    let mut out = Vec::new();
    for (i, f) in fields.iter().enumerate() {
        let field_end = fields.get(i + 1).map_or(end, |n| n.at);
        if f.number != drop {
            out.extend_from_slice(&buf[f.at..field_end]);
        }
    }
    out
}

/// The slim copy of a decoded file, gzip-compressed, or `None` when it has nothing to drop (only an
/// XSpace has lines to drop).
pub fn of(file: &crate::decode::DecodedFile) -> Option<Vec<u8>> {
    match &file.profile {
        crate::decode::Profile::XSpace(space) => xspace(space).map(|b| super::bundle::compress(&b)),
        _ => None,
    }
}

/// Which planes keep their lines: those with allocator events.
fn kept_planes(space: &XSpace) -> Vec<bool> {
    space.planes.iter().map(|p| !p.event_metadata_ids(ALLOCATION).is_empty() || !p.event_metadata_ids(DEALLOCATION).is_empty()).collect()
}

fn dropped_lines(space: &XSpace, keep: &[bool]) -> usize {
    space.planes.iter().zip(keep).filter(|(_, k)| !**k).map(|(p, _)| p.lines.len()).sum()
}

/// Whether [`of`] would make a slim copy (cheap: nothing is encoded).
pub fn possible(file: &crate::decode::DecodedFile) -> bool {
    matches!(&file.profile, crate::decode::Profile::XSpace(space) if space.truncation.is_none() && dropped_lines(space, &kept_planes(space)) > 0)
}

/// The slim copy of `space`, or `None` when nothing can be dropped. A trace cut short is shared as
/// it is: a copy would leave out its cut plane and, well-formed, no longer say where it was cut.
pub fn xspace(space: &XSpace) -> Option<Vec<u8>> {
    let bytes = space.bytes();
    let keep = kept_planes(space);
    let dropped_lines = dropped_lines(space, &keep);
    if dropped_lines == 0 || space.truncation.is_some() {
        return None;
    }
    let dropped_events: usize = space.planes.iter().zip(&keep).filter(|(_, k)| !**k).map(|(p, _)| p.event_count()).sum();
    let mut out = Vec::with_capacity(bytes.len() / 4);
    let mut plane = 0;
    let fields: Vec<_> = Fields::new(bytes, 0..bytes.len()).filter_map(Result::ok).collect();
    for (i, f) in fields.iter().enumerate() {
        let field_end = fields.get(i + 1).map_or(bytes.len(), |n| n.at);
        match (&f.value, f.number) {
            (Value::Len(r), 1) => {
                if keep.get(plane).copied().unwrap_or(true) {
                    out.extend_from_slice(&bytes[f.at..field_end]);
                } else {
                    put_len_field(&mut out, 1, &without_field(bytes, r.clone(), 3));
                }
                plane += 1;
            }
            _ => out.extend_from_slice(&bytes[f.at..field_end]),
        }
    }
    let note = format!(
        "Tidemark shared a slim copy: {dropped_lines} line(s) with {dropped_events} event(s) that no memory tool reads were removed; the HLO modules and allocator events are complete"
    );
    put_len_field(&mut out, 3, note.as_bytes());
    Some(out)
}
