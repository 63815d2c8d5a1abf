//! A file cut short (a profiler stopped while writing, a copy interrupted) is indexed up to the cut:
//! every plane, line and event that lies wholly before it. The plane being written when the file was
//! cut keeps its complete lines, and its line cut in the middle keeps its complete events (an event
//! cut in half is dropped).
//!
//! A plane's metadata (its event and stat names) is written after its lines, so the cut plane may hold
//! events whose names were never written. They are named by their metadata id (`#12`), which no
//! analysis mistakes for a real name, and [`Truncation::names_lost_in`] says where.
//!
//! Only a file whose top-level structure reads well up to the cut is salvaged: anything malformed
//! before it is still the error it was, and a file with nothing before the cut still says where it
//! ends. So bytes that are not a trace at all are refused as before.

use super::index::{len_field_head, ArrivingPlane, IndexBuilder};
use super::{wrong_wire_type, Line, Plane, FORMAT};
use crate::decode::wire::{Fields, Value, WireError};
use crate::decode::DecodeError;
use crate::proto::xplane as pb;
use prost::Message;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// Where a file cut short ends, and what of it was lost.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Truncation {
    /// The (inflated) file's length in bytes: the cut. Everything wholly before it is indexed.
    pub truncated_at: u64,
    /// Where the top-level field cut short would have ended: the file was at least this long.
    pub at_least_bytes: u64,
    /// The planes (by name) whose metadata lay after the cut: their events and stats are named by
    /// metadata id (`#12`).
    pub names_lost_in: Vec<String>,
}

impl IndexBuilder {
    /// Takes in what lies wholly before the cut that `cut` (a top-level field running past the end
    /// of `bytes`) reports, or fails with it when nothing does.
    pub(super) fn salvage(&mut self, bytes: &[u8], cut: WireError) -> Result<Truncation, DecodeError> {
        let WireError::Truncated { needed_end, .. } = cut else {
            return Err(DecodeError::from_wire(FORMAT, cut));
        };
        let mut names_lost_in = Vec::new();
        if let Some(arriving) = self.arriving.take() {
            if let Some((plane, names_lost)) = arriving.salvage(bytes).map_err(|e| self.in_plane(e))? {
                if names_lost {
                    names_lost_in.push(plane_label(&plane, self.planes.len()));
                }
                self.planes.push(plane);
            }
        }
        if self.planes.is_empty() {
            return Err(DecodeError::from_wire(FORMAT, cut));
        }
        Ok(Truncation { truncated_at: bytes.len() as u64, at_least_bytes: needed_end, names_lost_in })
    }
}

/// The plane's name, or its position where it has none (its name may lie after the cut too).
fn plane_label(plane: &Plane, position: usize) -> String {
    if plane.meta.name.is_empty() {
        format!("plane #{position}")
    } else {
        plane.meta.name.clone()
    }
}

impl ArrivingPlane {
    /// The plane's fields before the end of `bytes`, which cuts it: its complete lines, the complete
    /// events of the line cut in the middle, the metadata written before the cut (names the lines
    /// need but that lay after it given by id), and whether any name was so lost. `None` when nothing
    /// of the plane lies before the cut.
    pub(super) fn salvage(self, bytes: &[u8]) -> Result<Option<(Plane, bool)>, DecodeError> {
        let start = self.range.start;
        // A plane whose lines did not index is read again from its start, for the error.
        let (mut lines, mut at) = if self.whole { (Vec::new(), start) } else { (self.lines, self.at) };
        let mut fields = Fields::new(bytes, at..bytes.len());
        loop {
            match fields.next() {
                None => break,
                Some(Ok(f)) => {
                    match (f.number, f.value) {
                        (3, Value::Len(r)) => lines.push(Plane::index_line_to_cut(bytes, r, false)?),
                        (3, _) => return Err(DecodeError::from_wire(FORMAT, wrong_wire_type(f.at))),
                        _ => {}
                    }
                    at = fields.position();
                }
                Some(Err(WireError::Truncated { .. })) => {
                    if let Some(r) = len_field_head(bytes, at, 3) {
                        let line = Plane::index_line_to_cut(bytes, r.start..bytes.len(), true)?;
                        if line.event_count > 0 {
                            lines.push(line);
                        }
                    }
                    break;
                }
                Some(Err(e)) => return Err(DecodeError::from_wire(FORMAT, e)),
            }
        }
        if at == start && lines.is_empty() {
            return Ok(None);
        }
        let mut meta = pb::XPlane::decode(&bytes[start..at]).map_err(|e| DecodeError::from_prost(FORMAT, "plane metadata", e))?;
        let names_lost = name_by_id(bytes, &mut meta, &lines);
        Ok(Some((Plane { meta, lines }, names_lost)))
    }
}

/// Gives every event and stat metadata id that `lines` use but `meta` lacks the name `#<id>`; whether
/// there was any. Ids are read as prost reads them (an absent id is 0); a malformed event is passed
/// over here, and reported by the analysis that reads it.
fn name_by_id(bytes: &[u8], meta: &mut pb::XPlane, lines: &[Line]) -> bool {
    let (mut event_ids, mut stat_ids) = (BTreeSet::new(), BTreeSet::new());
    for line in lines {
        for event in Fields::new(bytes, line.range()).map_while(Result::ok) {
            let (4, Value::Len(event)) = (event.number, event.value) else { continue };
            let mut metadata_id = 0;
            for f in Fields::new(bytes, event).map_while(Result::ok) {
                match (f.number, f.value) {
                    (1, Value::Varint(id)) => metadata_id = id as i64,
                    (4, Value::Len(stat)) => {
                        let mut stat_id = 0;
                        for s in Fields::new(bytes, stat).map_while(Result::ok) {
                            match (s.number, s.value) {
                                (1, Value::Varint(id)) => stat_id = id as i64,
                                // A `ref_value` names a stat metadata entry whose name is the value.
                                (7, Value::Varint(id)) => {
                                    stat_ids.insert(id as i64);
                                }
                                _ => {}
                            }
                        }
                        stat_ids.insert(stat_id);
                    }
                    _ => {}
                }
            }
            event_ids.insert(metadata_id);
        }
    }
    let mut lost = false;
    for id in event_ids {
        meta.event_metadata.entry(id).or_insert_with(|| {
            lost = true;
            pb::XEventMetadata { id, name: format!("#{id}"), ..Default::default() }
        });
    }
    for id in stat_ids {
        meta.stat_metadata.entry(id).or_insert_with(|| {
            lost = true;
            pb::XStatMetadata { id, name: format!("#{id}"), ..Default::default() }
        });
    }
    lost
}
