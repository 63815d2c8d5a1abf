//! A lazy XSpace: planes and lines are indexed by byte range; events are decoded only for the lines
//! (and event kinds) an analysis asks for. Most of a JAX trace is the Python tracer line, which no
//! memory tool needs, so it is counted but never materialised.
//!
//! By job: [`index`] finds the planes and lines, [`events`] reads a line's events straight from the
//! wire, [`stats`] reads and resolves their stats, [`id_table`] looks values up by metadata id,
//! [`salvage`] indexes a file cut short up to the cut.

mod events;
mod id_table;
mod index;
pub mod names;
mod salvage;
mod stats;

pub use events::{EventAt, EventHeader, RawEvent, Want};
pub use id_table::IdTable;
pub use index::IndexBuilder;
pub use salvage::Truncation;
pub use stats::{RawStat, RoleValues, StatValue};

use super::sniff::Format;
use super::wire;
use super::Input;
use crate::proto::xplane as pb;
use std::ops::Range;

const FORMAT: Format = Format::XSpace;

/// An indexed XSpace that owns the file's (decompressed) bytes.
pub struct XSpace {
    bytes: Input,
    pub errors: Vec<String>,
    pub warnings: Vec<String>,
    pub hostnames: Vec<String>,
    pub planes: Vec<Plane>,
    /// Where the file was cut short, if it was: then `planes` are what lies before the cut.
    pub truncation: Option<Truncation>,
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

impl Line {
    /// Byte range of the whole XLine message in [`XSpace::bytes`].
    pub fn range(&self) -> Range<usize> {
        self.range.clone()
    }
}

impl XSpace {
    /// The (uncompressed) XSpace bytes this index points into.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The bytes this index points into, the index dropped (to read another file into them).
    pub fn into_bytes(self) -> Input {
        self.bytes
    }

    pub fn plane_named(&self, name: &str) -> Option<&Plane> {
        self.planes.iter().find(|p| p.meta.name == name)
    }
}

fn wrong_wire_type(at: usize) -> wire::WireError {
    wire::WireError::Malformed { at, what: "unexpected wire type for a known field" }
}

impl Plane {
    pub fn name(&self) -> &str {
        &self.meta.name
    }

    /// The ids of the stat metadata named any of `names`: what a scan reading those stats selects.
    pub fn stat_selection(&self, names: &[&str]) -> IdTable<bool> {
        IdTable::new(self.meta.stat_metadata.iter().filter(|(_, m)| names.contains(&m.name.as_str())).map(|(&id, _)| (id, true)))
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
}
