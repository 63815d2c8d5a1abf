//! How XProf names an event and writes its arguments in the trace viewer (tsl
//! `ConvertXPlaneToTraceEvents`): the name is the metadata's display name when it has one (the full
//! name then goes to the argument `long_name`), else its name; a `step_name` stat renames the event.
//! The arguments are the metadata's stats then the event's own, by stat name (a later stat of the same
//! name overwrites an earlier one), each as text ([`stat_text`]), leaving out stats without a value and
//! XProf's internal ones; they are listed sorted by name.

use super::layout::{INTERNAL_EVENTS, INTERNAL_STATS};
use crate::analysis::number_text::six_digits;
use crate::decode::xplane::{IdTable, Plane, RawStat, StatValue};
use crate::decode::DecodeError;
use std::collections::BTreeMap;

/// The stat that renames an event (`StatType::kStepName`).
pub use crate::decode::xplane::names::STEP_NAME;
/// The argument that keeps an event's full name when it is shown by its display name.
pub const LONG_NAME: &str = "long_name";

/// An event's name and arguments as XProf's trace viewer shows them.
#[derive(Debug, Clone, PartialEq)]
pub struct EventText {
    pub name: String,
    /// Sorted by name.
    pub args: Vec<(String, String)>,
}

/// What naming the events of one plane needs, looked up once.
pub struct PlaneText<'a> {
    plane: &'a Plane,
    internal_events: IdTable<bool>,
    internal_stats: IdTable<bool>,
    step_name: IdTable<bool>,
}

impl<'a> PlaneText<'a> {
    pub fn new(plane: &'a Plane) -> Self {
        let internal_events = IdTable::new(
            plane.meta.event_metadata.iter().filter(|(_, m)| INTERNAL_EVENTS.contains(&m.name.as_str())).map(|(&id, _)| (id, true)),
        );
        PlaneText {
            plane,
            internal_events,
            internal_stats: plane.stat_selection(&INTERNAL_STATS),
            step_name: plane.stat_selection(&[STEP_NAME]),
        }
    }

    pub fn plane(&self) -> &'a Plane {
        self.plane
    }

    /// Whether events of this metadata are never shown.
    pub fn is_internal(&self, metadata_id: i64) -> bool {
        self.internal_events.get(metadata_id)
    }

    /// The `step_name` stats: what a scan must select to name events ([`PlaneText::name`]).
    pub fn step_name_stats(&self) -> &IdTable<bool> {
        &self.step_name
    }

    /// The event's name from its metadata and its own `step_name` stats, if any among `own_stats`.
    pub fn name(&self, metadata_id: i64, own_stats: &[RawStat<'a>]) -> Result<String, DecodeError> {
        let mut name = None;
        for stat in own_stats.iter().filter(|s| self.step_name.get(s.metadata_id)) {
            if let Some(v) = self.plane.raw_stat_value(stat)? {
                name = Some(stat_text(&v));
            }
        }
        Ok(match name {
            Some(n) => n,
            None => self.metadata_name(metadata_id),
        })
    }

    /// The name of events of this metadata that have no `step_name` of their own.
    pub fn metadata_name(&self, metadata_id: i64) -> String {
        let Some(m) = self.plane.meta.event_metadata.get(&metadata_id) else { return String::new() };
        let step_name = m.stats.iter().rev().filter(|s| self.step_name.get(s.metadata_id)).find_map(|s| self.plane.stat_value(s));
        match step_name {
            Some(v) => stat_text(&v),
            None if m.display_name.is_empty() => m.name.clone(),
            None => m.display_name.clone(),
        }
    }

    /// The event's name and arguments, from its metadata and all its own stats.
    pub fn describe(&self, metadata_id: i64, own_stats: &[RawStat<'a>]) -> Result<EventText, DecodeError> {
        let mut args: BTreeMap<String, String> = BTreeMap::new();
        let meta = self.plane.meta.event_metadata.get(&metadata_id);
        if let Some(m) = meta.filter(|m| !m.display_name.is_empty()) {
            args.insert(LONG_NAME.into(), m.name.clone());
        }
        let mut step_name = None;
        let mut add = |id: i64, v: Option<StatValue>| {
            let Some(v) = v else { return };
            if self.internal_stats.get(id) {
                return;
            }
            let text = stat_text(&v);
            if self.step_name.get(id) {
                step_name = Some(text.clone());
            }
            args.insert(self.plane.stat_name(id).to_string(), text);
        };
        for s in meta.map(|m| m.stats.as_slice()).unwrap_or_default() {
            add(s.metadata_id, self.plane.stat_value(s));
        }
        for s in own_stats {
            add(s.metadata_id, self.plane.raw_stat_value(s)?);
        }
        let name = match step_name {
            Some(n) => n,
            None => meta.map(|m| if m.display_name.is_empty() { m.name.clone() } else { m.display_name.clone() }).unwrap_or_default(),
        };
        Ok(EventText { name, args: args.into_iter().collect() })
    }
}

/// A stat's value as XProf writes it (`XStatVisitor::ToString`): integers in decimal, doubles with six
/// significant digits (`absl::StrCat`), strings and references as their text, bytes as
/// `<opaque bytes>`.
pub fn stat_text(v: &StatValue) -> String {
    match v {
        StatValue::Int(i) => i.to_string(),
        StatValue::Uint(u) => u.to_string(),
        StatValue::Double(d) => six_digits(*d),
        StatValue::Str(s) => s.to_string(),
        StatValue::Bytes(_) => "<opaque bytes>".into(),
    }
}
