//! A line's events read straight from the wire, without allocating per event: the scans every analysis
//! of the host plane runs.

use super::stats::{RawStat, RawValue, RoleValues};
use super::{wrong_wire_type, IdTable, Line, XSpace, FORMAT};
use crate::decode::wire::{self, Fields, Value};
use crate::decode::DecodeError;
use std::ops::Range;

impl XSpace {
    /// Visits the events of `line` that `wanted` (a pure function of the metadata id: a `bool`, or a
    /// [`Want`]) wants, in order, with their position among all events of the line, read straight from
    /// the wire ([`RawEvent`]) with only the stats whose metadata ids `stats` selects (none for an event
    /// wanted for its [`Want::Header`] alone). Nothing is allocated per event (the stats go to one
    /// buffer reused for the whole line), each event is read in one pass, and the stats of unwanted
    /// events are skipped unread. One scan of a line can so serve several analyses at once
    /// (the Memory Profile reads allocator events and groups steps over all host events in one pass).
    ///
    /// Events laid out as profilers write them (known fields only, each stat its id then its value)
    /// take a fast path ([`EventHeader::read_fast`]), where a stat not selected is passed over by its
    /// length, its value unread (and so unchecked: what is not read cannot be wrong). Any other
    /// layout, and any malformed event, is re-read by the general scanner, which gives the same answer
    /// or the precise error.
    pub fn for_each_raw_event<'a, W: Into<Want>>(
        &'a self,
        line: &Line,
        stats: &IdTable<bool>,
        mut wanted: impl FnMut(i64) -> W,
        mut visit: impl FnMut(usize, &RawEvent<'a, '_>) -> Result<(), DecodeError>,
    ) -> Result<(), DecodeError> {
        let mut wanted = |id| -> Want { wanted(id).into() };
        let wire_err = |e| DecodeError::from_wire(FORMAT, e);
        let bytes = &self.bytes[..line.range.end];
        let mut index = 0;
        let mut buf = Vec::new();
        let any_stats = stats.any();
        let mut pos = line.range.start;
        while pos < bytes.len() {
            // An event is field 4, length-delimited: key byte 0x22.
            let mut p = pos + 1;
            let fast = (bytes[pos] == 0x22)
                .then(|| wire::varint_at(bytes, &mut p))
                .flatten()
                .and_then(|n| usize::try_from(n).ok())
                .and_then(|n| p.checked_add(n))
                .filter(|&end| end <= bytes.len())
                .map(|end| p..end);
            let event = match fast {
                Some(r) => {
                    pos = r.end;
                    r
                }
                None => {
                    let mut fields = Fields::new(bytes, pos..bytes.len());
                    let Some(f) = fields.next() else { break };
                    let f = f.map_err(wire_err)?;
                    pos = fields.position();
                    match (f.number, f.value) {
                        (4, Value::Len(r)) => r,
                        (4, _) => return Err(wire_err(wrong_wire_type(f.at))),
                        _ => continue,
                    }
                }
            };
            let header = match EventHeader::read_fast(bytes, event.clone(), &mut wanted, stats, any_stats, &mut buf) {
                Some(h) => h,
                None => {
                    let h = EventHeader::read(bytes, event.clone(), &mut wanted, &mut buf).map_err(wire_err)?;
                    buf.retain(|s| stats.get(s.metadata_id));
                    h
                }
            };
            if let Some(header) = header {
                visit(index, &RawEvent { header, stats: &buf, file: bytes, start: event.start, end: event.end })?;
            }
            index += 1;
        }
        Ok(())
    }
}

/// What a scan wants of an event ([`XSpace::for_each_raw_event`]), by its metadata id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want {
    Nothing,
    /// The event without its stats, its header read only up to its first stat: profilers write the
    /// header fields first, and the stats (a dozen, for an allocator event) are not walked. A header
    /// field after the stats would be missed, so a caller asking for this must see every such event
    /// read whole by another pass ([`RawEvent::role_values`] reports such a field).
    Header,
    /// The event with its selected stats.
    Stats,
}

impl From<bool> for Want {
    fn from(wanted: bool) -> Self {
        if wanted {
            Want::Stats
        } else {
            Want::Nothing
        }
    }
}

/// One `XEvent`, read from the wire without allocating: the header fields decoded, the stats as they lie
/// in the file. Fields are read as prost would (the last occurrence of a field wins, unknown fields are
/// skipped, a known field with the wrong wire type is an error); string stats are checked for UTF-8
/// only when resolved ([`Plane::raw_stat_value`](super::Plane::raw_stat_value)).
#[derive(Debug, Clone, Copy)]
pub struct RawEvent<'a, 's> {
    pub header: EventHeader,
    /// The event's own stats that the scan selected, in file order.
    pub stats: &'s [RawStat<'a>],
    /// The file, and where in it the event's message lies: for readers of many stats of a few events
    /// ([`RawEvent::role_values`]), which the scan then need not select.
    file: &'a [u8],
    start: usize,
    end: usize,
}

/// Where one event of a line lies, with its header: a scan that walks the line can note its events
/// of interest so that another reads them later ([`XSpace::for_each_event_at`]) without walking the
/// line again.
#[derive(Debug, Clone, Copy)]
pub struct EventAt {
    pub header: EventHeader,
    /// Its position among all events of its line.
    pub index: usize,
    start: usize,
    end: usize,
}

impl XSpace {
    /// Visits the events `events` of `line` (noted by [`RawEvent::at`] in a scan of that line) with
    /// their positions among the line's events, with no stats selected: as
    /// [`XSpace::for_each_raw_event`] gives them to a scan that selects none.
    pub fn for_each_event_at<'a>(
        &'a self,
        line: &Line,
        events: &[EventAt],
        mut visit: impl FnMut(usize, &RawEvent<'a, '_>) -> Result<(), DecodeError>,
    ) -> Result<(), DecodeError> {
        let file = &self.bytes[..line.range.end];
        events.iter().try_for_each(|at| visit(at.index, &RawEvent { header: at.header, stats: &[], file, start: at.start, end: at.end }))
    }
}

impl<'a> RawEvent<'a, '_> {
    /// Where this event lies, being event `index` of its line.
    pub fn at(&self, index: usize) -> EventAt {
        EventAt { header: self.header, index, start: self.start, end: self.end }
    }

    /// Sets each role of `out` that a stat of the event has (`role` of its metadata id, 1..=N; 0 for
    /// a stat not read) to the last such stat's value, read straight from the event's bytes in
    /// [`RawStat::read_value_fast`]'s layout, with numbers, strings and references only. `false` if
    /// the event is laid out otherwise or holds another kind of value: then `out` is not to be
    /// trusted, and the caller reads the stats with [`RawEvent::read_stats`] instead.
    #[inline]
    pub fn role_values<const N: usize>(&self, role: impl Fn(i64) -> u8, out: &mut RoleValues<'a, N>) -> bool {
        let (file, end) = (self.file, self.end);
        let mut p = self.start;
        let mut stats_seen = false;
        while p < end {
            let key = file[p];
            p += 1;
            match key {
                0x08 | 0x10 | 0x18 | 0x28 => {
                    out.late_header |= stats_seen;
                    if wire::varint_in(file, &mut p, end).is_none() {
                        return false;
                    }
                }
                0x22 => {
                    stats_seen = true;
                    // Nearly every stat: its length, then its metadata id (`08 id`), one byte each.
                    let (stat_end, id, at) = match file.get(p..p + 3) {
                        Some(&[len, 0x08, id]) if len < 0x80 && id < 0x80 => (p + 1 + usize::from(len), i64::from(id), p + 3),
                        _ => {
                            let Some(stat_end) = wire::varint_in(file, &mut p, end)
                                .and_then(|n| usize::try_from(n).ok())
                                .and_then(|n| p.checked_add(n))
                                .filter(|&e| e <= end)
                            else {
                                return false;
                            };
                            let Some((id, at)) = RawStat::read_id_fast(file, p, stat_end) else { return false };
                            (stat_end, id, at)
                        }
                    };
                    if stat_end > end || at > stat_end {
                        return false;
                    }
                    let slot = usize::from(role(id)).wrapping_sub(1);
                    if slot < N && file.get(at) == Some(&0x20) {
                        // An `int64_value`, most of an allocator event's stats.
                        let mut q = at + 1;
                        match wire::varint_in(file, &mut q, stat_end) {
                            Some(v) if q == stat_end => out.values[slot] = Some(RawValue::Int(v as i64)),
                            _ => return false,
                        }
                    } else if slot < N {
                        match RawStat::read_value_fast(file, id, at, stat_end) {
                            Some(RawStat { value: None, .. }) => {}
                            Some(RawStat {
                                value:
                                    Some(
                                        v @ (RawValue::Int(_)
                                        | RawValue::Uint(_)
                                        | RawValue::Double(_)
                                        | RawValue::Str(_)
                                        | RawValue::Ref(_)),
                                    ),
                                ..
                            }) => {
                                out.values[slot] = Some(v);
                            }
                            _ => return false,
                        }
                    }
                    p = stat_end;
                }
                _ => return false,
            }
        }
        true
    }

    /// The stats of the event whose metadata id `keep` picks, read as prost would (any layout;
    /// an error for a malformed one), and whether a header field comes after a stat.
    pub fn read_stats(&self, keep: impl Fn(i64) -> bool) -> Result<(Vec<RawStat<'a>>, bool), DecodeError> {
        let wire_err = |e| DecodeError::from_wire(FORMAT, e);
        let (mut out, mut stats_seen, mut late_header) = (Vec::new(), false, false);
        for f in Fields::new(self.file, self.start..self.end) {
            match f.map_err(wire_err)? {
                wire::Field { number: 4, value, .. } => {
                    stats_seen = true;
                    if let Value::Len(r) = value {
                        let stat = RawStat::read(self.file, r).map_err(wire_err)?;
                        if keep(stat.metadata_id) {
                            out.push(stat);
                        }
                    }
                }
                wire::Field { number: 1 | 2 | 3 | 5, .. } => late_header |= stats_seen,
                _ => {}
            }
        }
        Ok((out, late_header))
    }
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
    /// [`EventHeader::read`] for an event laid out as profilers write it: only the fields `XEvent`
    /// declares, each with its usual wire type, the metadata id before the stats, and every stat
    /// starting with its metadata id; the stats `select` picks are kept, and must be in
    /// [`RawStat::read_value_fast`]'s layout. The others are passed over by their length, unread (none at
    /// all when `any_selected` is false). `None` for any other layout or a malformed event, which the
    /// caller re-reads with [`EventHeader::read`].
    #[inline]
    fn read_fast<'a>(
        bytes: &'a [u8],
        range: Range<usize>,
        wanted: &mut impl FnMut(i64) -> Want,
        select: &IdTable<bool>,
        any_selected: bool,
        stats: &mut Vec<RawStat<'a>>,
    ) -> Option<Option<Self>> {
        stats.clear();
        let end = range.end;
        if end > bytes.len() {
            return None;
        }
        let mut e = EventHeader::default();
        let mut want = None;
        let mut p = range.start;
        while p < end {
            let key = bytes[p];
            p += 1;
            match key {
                0x08 if want.is_none() => e.metadata_id = wire::varint_in(bytes, &mut p, end)? as i64,
                0x10 => e.offset_ps = wire::varint_in(bytes, &mut p, end)? as i64,
                0x18 => e.duration_ps = wire::varint_in(bytes, &mut p, end)? as i64,
                0x28 => {
                    wire::varint_in(bytes, &mut p, end)?;
                    e.offset_ps = 0;
                }
                0x22 => {
                    let n = usize::try_from(wire::varint_in(bytes, &mut p, end)?).ok()?;
                    let stat_end = p.checked_add(n).filter(|&e| e <= end)?;
                    let w = *want.get_or_insert_with(|| wanted(e.metadata_id));
                    if w == Want::Header {
                        return Some(Some(e));
                    }
                    if w == Want::Stats && any_selected {
                        let (id, at) = RawStat::read_id_fast(bytes, p, stat_end)?;
                        if select.get(id) {
                            stats.push(RawStat::read_value_fast(bytes, id, at, stat_end)?);
                        }
                        p = stat_end;
                    } else {
                        // No stat of this event is read: the rest are passed over in a tight loop (a key
                        // byte and a one-byte length, nearly always), back to the loop above at anything else.
                        p = stat_end;
                        while p + 1 < end && bytes[p] == 0x22 && bytes[p + 1] < 0x80 {
                            p += 2 + usize::from(bytes[p + 1]);
                        }
                        if p > end {
                            return None;
                        }
                    }
                }
                _ => return None,
            }
        }
        Some((want.unwrap_or_else(|| wanted(e.metadata_id)) != Want::Nothing).then_some(e))
    }

    /// Reads the event in `bytes[range]` if `wanted(metadata_id)`, its stats replacing the contents of
    /// `stats`. Whether to read the stats is decided at the first stat with the metadata id seen so far
    /// (profilers write the id first); an id that comes after the stats makes the stats be read again.
    /// `#[inline]`: in its own module, out of line, it cost the scan's loop 10 % more instructions.
    #[inline]
    fn read<'a>(
        bytes: &'a [u8],
        range: Range<usize>,
        wanted: &mut impl FnMut(i64) -> Want,
        stats: &mut Vec<RawStat<'a>>,
    ) -> Result<Option<Self>, wire::WireError> {
        stats.clear();
        let mut e = EventHeader::default();
        // (metadata id the decision was made with, what is wanted of the event)
        let mut decided: Option<(i64, Want)> = None;
        for f in Fields::new(bytes, range.clone()) {
            let f = f?;
            match (f.number, f.value) {
                (1, Value::Varint(v)) => e.metadata_id = v as i64,
                (2, Value::Varint(v)) => e.offset_ps = v as i64,
                (5, Value::Varint(_)) => e.offset_ps = 0,
                (3, Value::Varint(v)) => e.duration_ps = v as i64,
                (4, Value::Len(r)) => {
                    let (_, want) = *decided.get_or_insert_with(|| (e.metadata_id, wanted(e.metadata_id)));
                    if want == Want::Stats {
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
                if want == Want::Stats {
                    RawStat::read_all(bytes, range, stats)?;
                }
                want
            }
            None => wanted(e.metadata_id),
        };
        Ok((want != Want::Nothing).then_some(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::xplane::Plane;
    use crate::proto::xplane as pb;
    use prost::Message;

    /// Every stat layout a profiler writes: one-byte and longer lengths and ids (the fast path and
    /// the general one), each kind of value, a stat without a value, a role set twice (the last wins);
    /// and a stat too short to hold its id or its value is refused, not misread.
    #[test]
    fn role_values_read_every_stat_layout() {
        let plane = Plane { meta: pb::XPlane::default(), lines: Vec::new() };
        let long = "x".repeat(200);
        let stat = |metadata_id, value| pb::XStat { metadata_id, value };
        use pb::x_stat::Value as V;
        let event = pb::XEvent {
            metadata_id: 7,
            data: Some(pb::x_event::Data::OffsetPs(5)),
            duration_ps: 0,
            stats: vec![
                stat(3, Some(V::Int64Value(-2))),
                stat(300, Some(V::Uint64Value(1 << 40))),
                stat(4, Some(V::StrValue(long.clone()))),
                stat(5, Some(V::DoubleValue(0.5))),
                stat(6, Some(V::RefValue(9))),
                stat(8, None),
                stat(3, Some(V::Int64Value(11))),
            ],
        };
        let bytes = event.encode_to_vec();
        fn raw(bytes: &[u8]) -> RawEvent<'_, '_> {
            RawEvent { header: EventHeader::default(), stats: &[], file: bytes, start: 0, end: bytes.len() }
        }
        let role = |id: i64| match id {
            3 => 1,
            300 => 2,
            4 => 3,
            5 => 4,
            6 => 5,
            8 => 6,
            _ => 0,
        };
        let mut v = RoleValues::<6>::default();
        assert!(raw(&bytes).role_values(role, &mut v));
        assert_eq!((v.int(1), v.integer(2), v.double(4), v.reference(5), v.is_set(6)), (11, Some(1 << 40), 0.5, Some(9), false));
        assert_eq!(v.text(3, &plane).unwrap(), long);
        // `22 01 08`: a stat of one byte, the id's tag without the id.
        let mut v = RoleValues::<6>::default();
        assert!(!raw(&[0x22, 0x01, 0x08]).role_values(role, &mut v));
        assert!(!raw(&[0x22, 0x05, 0x08, 0x03]).role_values(role, &mut v), "a stat running past the event");
        assert!(!raw(&[0x22, 0x01, 0x08, 0x03]).role_values(role, &mut v), "an id past the stat's end");
        assert!(!raw(&[0x22, 0x03, 0x08, 0x03, 0x20]).role_values(role, &mut v), "an integer's key without its varint");
        assert!(
            !raw(&[0x22, 0x04, 0x08, 0x03, 0x20, 0x80, 0x22, 0x02, 0x08, 0x03]).role_values(role, &mut v),
            "a varint running past its stat"
        );
        assert!(!raw(&[0x22, 0x05, 0x08, 0x03, 0x20, 0x05, 0x10]).role_values(role, &mut v), "a field after the value");
    }
}
