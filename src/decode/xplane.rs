//! A lazy XSpace: planes and lines are indexed by byte range; events are decoded only for the lines
//! (and event kinds) an analysis asks for. Most of a JAX trace is the Python tracer line, which no
//! memory tool needs, so it is counted but never materialised.

use super::sniff::Format;
use super::wire::{self, Fields, Value};
use super::{gzip, DecodeError, Input, Progress};
use crate::fast_hash::FastMap;
use crate::proto::xplane as pb;
use prost::Message;
use std::borrow::Cow;
use std::ops::Range;

const FORMAT: Format = Format::XSpace;

/// An indexed XSpace that owns the file's (decompressed) bytes.
pub struct XSpace {
    bytes: Input,
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

impl Line {
    /// Byte range of the whole XLine message in [`XSpace::bytes`].
    pub fn range(&self) -> Range<usize> {
        self.range.clone()
    }
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

    /// An unsigned integer (ids such as program ids use all 64 bits), a signed one reinterpreted.
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            StatValue::Uint(v) => Some(*v),
            StatValue::Int(v) => Some(*v as u64),
            _ => None,
        }
    }
}

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

    /// The (uncompressed) XSpace bytes this index points into.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    pub fn plane_named(&self, name: &str) -> Option<&Plane> {
        self.planes.iter().find(|p| p.meta.name == name)
    }

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

/// Values by metadata id, looked up once per event or stat over millions of them: a vector indexed by
/// id when the ids are small (profilers number metadata 1, 2, 3, ...), else a map. An id not given
/// reads as `T::default()`.
#[derive(Debug, Clone)]
pub enum IdTable<T> {
    Dense(Vec<T>),
    Sparse(FastMap<i64, T>),
}

impl IdTable<bool> {
    /// Whether any id is picked.
    pub fn any(&self) -> bool {
        match self {
            IdTable::Dense(v) => v.iter().any(|&b| b),
            IdTable::Sparse(m) => m.values().any(|&b| b),
        }
    }
}

impl<T: Copy + Default> IdTable<T> {
    /// From (id, value) pairs; a repeated id keeps its last value.
    pub fn new(entries: impl IntoIterator<Item = (i64, T)>) -> Self {
        let entries: Vec<(i64, T)> = entries.into_iter().collect();
        let dense_len = entries.len().saturating_mul(4).saturating_add(1024);
        if entries.iter().all(|&(id, _)| usize::try_from(id).is_ok_and(|i| i < dense_len)) {
            let len = entries.iter().map(|&(id, _)| id as usize + 1).max().unwrap_or(0);
            let mut v = vec![T::default(); len];
            for (id, x) in entries {
                v[id as usize] = x;
            }
            IdTable::Dense(v)
        } else {
            IdTable::Sparse(entries.into_iter().collect())
        }
    }

    #[inline(always)]
    pub fn get(&self, id: i64) -> T {
        match self {
            IdTable::Dense(v) => usize::try_from(id).ok().and_then(|i| v.get(i)).copied().unwrap_or_default(),
            IdTable::Sparse(m) => m.get(&id).copied().unwrap_or_default(),
        }
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

/// The last value of each role among the stats of one event, for a reader of a dozen stats of each of
/// many events (the allocator's): each stat metadata id it reads gets a role, 1..=N, and the values
/// land by role in one array, read back in a fixed order ([`RawEvent::role_values`], or
/// [`RoleValues::set`] stat by stat), where a value per stat resolved on its own and matched on its
/// role costs more than the decoding. A stat without a value leaves its role as it was.
#[derive(Debug, Clone, Copy)]
pub struct RoleValues<'a, const N: usize> {
    values: [Option<RawValue<'a>>; N],
    /// A header field came after a stat ([`Want::Header`] would have missed it).
    late_header: bool,
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

    /// Whether [`RawEvent::role_values`] met a header field after a stat.
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
    fn read_all(bytes: &'a [u8], range: Range<usize>, out: &mut Vec<Self>) -> Result<(), wire::WireError> {
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
    fn read_id_fast(bytes: &[u8], start: usize, end: usize) -> Option<(i64, usize)> {
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
    fn read_value_fast(bytes: &'a [u8], metadata_id: i64, at: usize, end: usize) -> Option<Self> {
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

    #[test]
    fn empty_space_indexes() {
        let mut noop = |_: u64, _: u64| {};
        let s = XSpace::index(pb::XSpaceHeader { hostnames: vec!["h".into()], ..Default::default() }.encode_to_vec(), &mut noop).unwrap();
        assert_eq!(s.hostnames, vec!["h"]);
        assert!(s.planes.is_empty());
    }
}
