//! The allocator's `MemoryAllocation` / `MemoryDeallocation` events of an XSpace, typed
//! (shared/FORMATS.md §2). The input of the Memory Profile and of the overview's per-allocator counts.

use crate::decode::xplane::{IdTable, Line, Plane, RawEvent, RawStat, StatValue, XSpace};
use crate::decode::DecodeError;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

pub const ALLOCATION: &str = "MemoryAllocation";
pub const DEALLOCATION: &str = "MemoryDeallocation";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Activity {
    #[default]
    Allocation,
    Deallocation,
}

/// One allocator event with its stats. Integer stats are read only from their integer fields and
/// `fragmentation` only from its double field, as XProf does; a missing stat is 0 / "". Strings borrow
/// from the file (or its stat metadata), so reading an event allocates nothing.
/// `Default` is a blank event for [`Reader::read_into`] to fill.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct MemoryEvent<'a> {
    pub activity: Activity,
    /// Index of the plane in the file; with `line_index`, the file (visit) order XProf uses for its peak.
    pub plane_index: usize,
    pub line_index: usize,
    /// Position of the event among all events of its line (for joining with per-event analyses such
    /// as step grouping).
    pub event_index: usize,
    /// `line.timestamp_ns * 1000 + offset_ps`.
    pub time_ps: i64,
    /// The event's raw `offset_ps`: XProf reports the peak time with this.
    pub offset_ps: i64,
    /// The memory ID: the allocator name (or `index_on_host` / `device_ordinal` when absent).
    pub memory_id: Cow<'a, str>,
    pub stack_reserved_bytes: i64,
    pub heap_allocated_bytes: i64,
    pub free_memory_bytes: i64,
    pub fragmentation: f64,
    pub peak_bytes_in_use: i64,
    pub requested_bytes: i64,
    pub allocation_bytes: i64,
    pub address: u64,
    pub tf_op_name: Cow<'a, str>,
    pub step_id: i64,
    pub region_type: Cow<'a, str>,
    pub data_type: i64,
    pub tensor_shape: Cow<'a, str>,
}

/// The stats [`Reader::read`] reads, by name (from the event's bytes: a scan need not select them).
pub const STATS: [&str; 16] = [
    "allocator_name",
    "bytes_reserved",
    "bytes_allocated",
    "bytes_available",
    "fragmentation",
    "peak_bytes_in_use",
    "requested_bytes",
    "allocation_bytes",
    "addr",
    "tf_op",
    "id",
    "region_type",
    "data_type",
    "shape",
    "index_on_host",
    "device_ordinal",
];

/// Where in [`STATS`] the two stats are that name the memory ID when `allocator_name` is missing.
const FALLBACK_IDS: std::ops::Range<usize> = 14..16;

/// Position + 1 in [`STATS`] of the stat metadata ids of one plane (0: a stat the reader ignores),
/// looked up once per stat of each memory event.
struct StatIds(IdTable<u8>);

impl StatIds {
    fn new(plane: &Plane) -> Self {
        StatIds(IdTable::new(STATS.iter().enumerate().filter_map(|(i, n)| plane.stat_id(n).map(|id| (id, i as u8 + 1)))))
    }
    #[inline]
    fn index(&self, metadata_id: i64) -> Option<usize> {
        (self.0.get(metadata_id) as usize).checked_sub(1)
    }

    /// Position + 1 in [`STATS`], 0 for a stat the reader ignores.
    #[inline]
    fn role(&self, metadata_id: i64) -> u8 {
        self.0.get(metadata_id)
    }
}

/// Reads the memory events of one plane out of its raw events, so a caller scanning the plane's lines
/// for other reasons too (step grouping) reads each event once.
pub struct Reader<'a> {
    plane: &'a Plane,
    plane_index: usize,
    /// By event metadata id: 1 for allocations, 2 for deallocations, 0 for other events.
    kinds: IdTable<u8>,
    ids: StatIds,
    /// Stat metadata names by id: the strings of reference stats (allocator names often are).
    names: IdTable<&'a str>,
}

impl<'a> Reader<'a> {
    /// `None` when the plane has no memory event kinds at all (nothing to read).
    pub fn new(plane_index: usize, plane: &'a Plane) -> Option<Self> {
        let alloc_ids = plane.event_metadata_ids(ALLOCATION);
        let dealloc_ids = plane.event_metadata_ids(DEALLOCATION);
        if alloc_ids.is_empty() && dealloc_ids.is_empty() {
            return None;
        }
        let kinds = IdTable::new(alloc_ids.into_iter().map(|id| (id, 1)).chain(dealloc_ids.into_iter().map(|id| (id, 2))));
        let names = IdTable::new(plane.meta.stat_metadata.iter().map(|(&id, m)| (id, m.name.as_str())));
        Some(Reader { plane, plane_index, kinds, ids: StatIds::new(plane), names })
    }

    /// Whether events with this metadata id are memory events.
    pub fn wants(&self, metadata_id: i64) -> bool {
        self.kinds.get(metadata_id) != 0
    }

    /// The memory event `ev` (event `event_index` of line `line_index`), or `None` for other events.
    pub fn read(&self, line: &Line, line_index: usize, event_index: usize, ev: &RawEvent<'a, '_>) -> Result<Option<MemoryEvent<'a>>, DecodeError> {
        let mut e = MemoryEvent::default();
        Ok(self.read_into(line, line_index, event_index, ev, &mut e)?.then_some(e))
    }

    /// [`Reader::read`] into `e` (every field set): `false`, and `e` unchanged, for other events. For
    /// scans of many events, which reuse one `e` rather than move a fresh one (a few hundred bytes)
    /// around for each. The stats are read from the event's bytes: a memory event carries a dozen,
    /// which are decoded straight into their fields.
    #[inline]
    pub fn read_into(&self, line: &Line, line_index: usize, event_index: usize, ev: &RawEvent<'a, '_>, e: &mut MemoryEvent<'a>) -> Result<bool, DecodeError> {
        let h = &ev.header;
        let activity = match self.kinds.get(h.metadata_id) {
            1 => Activity::Allocation,
            2 => Activity::Deallocation,
            _ => return Ok(false),
        };
        let base_ps = line.header.timestamp_ns.saturating_mul(1000);
        let reset = |e: &mut MemoryEvent<'a>| {
            e.activity = activity;
            e.plane_index = self.plane_index;
            e.line_index = line_index;
            e.event_index = event_index;
            e.time_ps = base_ps.saturating_add(h.offset_ps);
            e.offset_ps = h.offset_ps;
            e.memory_id = Cow::Borrowed("");
            e.stack_reserved_bytes = 0;
            e.heap_allocated_bytes = 0;
            e.free_memory_bytes = 0;
            e.fragmentation = 0.0;
            e.peak_bytes_in_use = 0;
            e.requested_bytes = 0;
            e.allocation_bytes = 0;
            e.address = 0;
            e.tf_op_name = Cow::Borrowed("");
            e.step_id = 0;
            e.region_type = Cow::Borrowed("");
            e.data_type = 0;
            e.tensor_shape = Cow::Borrowed("");
        };
        reset(e);
        let mut fallback_id = None;
        // The last stat with a value of each kind, as the fast path finds them; then applied in the
        // order of STATS, the same every event, where applying them in file order would jump to a
        // different field at each stat.
        let mut last: [Option<RawStat<'a>>; STATS.len()] = [None; STATS.len()];
        let laid_out_as_usual = ev.visit_stats_fast(
            |id| self.ids.role(id),
            |role, stat| {
                if stat.has_value() {
                    last[usize::from(role) - 1] = Some(stat);
                }
            },
        );
        // The fallback memory ID is the first of two stats in file order, which `last` does not keep.
        let fallbacks_both_given = last[FALLBACK_IDS].iter().all(Option::is_some);
        if laid_out_as_usual && !fallbacks_both_given {
            for (which, stat) in last.iter().enumerate() {
                if let Some(stat) = stat {
                    self.apply(e, &mut fallback_id, which, stat)?;
                }
            }
        } else {
            for stat in ev.read_stats(|id| self.ids.role(id) != 0)? {
                let Some(which) = self.ids.index(stat.metadata_id) else { continue };
                self.apply(e, &mut fallback_id, which, &stat)?;
            }
        }
        if e.memory_id.is_empty() {
            if let Some(id) = fallback_id {
                e.memory_id = Cow::Owned(id.to_string());
            }
        }
        Ok(true)
    }

    /// Sets the field of `e` that `stat`, of kind `which` (its position in [`STATS`]), gives (a stat
    /// without a value changes nothing).
    #[inline(always)]
    fn apply(&self, e: &mut MemoryEvent<'a>, fallback_id: &mut Option<i64>, which: usize, stat: &RawStat<'a>) -> Result<(), DecodeError> {
        let v = match (stat.number(), stat.ref_value()) {
            (Some(v), _) => v,
            (_, Some(r)) => StatValue::Str(Cow::Borrowed(self.names.get(r as i64))),
            _ => match self.plane.raw_stat_value(stat)? {
                Some(v) => v,
                None => return Ok(()),
            },
        };
        let int = match v {
            StatValue::Int(i) => i,
            _ => 0,
        };
        let text = |v: StatValue<'a>| match v {
            StatValue::Str(s) => s,
            _ => Cow::Borrowed(""),
        };
        match which {
            0 => e.memory_id = text(v),
            1 => e.stack_reserved_bytes = int,
            2 => e.heap_allocated_bytes = int,
            3 => e.free_memory_bytes = int,
            4 => e.fragmentation = if let StatValue::Double(d) = v { d } else { 0.0 },
            5 => e.peak_bytes_in_use = int,
            6 => e.requested_bytes = int,
            7 => e.allocation_bytes = int,
            8 => e.address = v.as_i64().map_or(0, |a| a as u64),
            9 => e.tf_op_name = text(v),
            10 => e.step_id = int,
            11 => e.region_type = text(v),
            12 => e.data_type = int,
            13 => e.tensor_shape = text(v),
            _ => *fallback_id = fallback_id.or(v.as_i64()),
        }
        Ok(())
    }
}

/// Visits every memory event of `space` in file order (planes → lines → events), except those of
/// plane `skip_plane`.
pub fn for_each<'a>(space: &'a XSpace, skip_plane: Option<usize>, mut visit: impl FnMut(MemoryEvent<'a>)) -> Result<(), DecodeError> {
    for (plane_index, plane) in space.planes.iter().enumerate().filter(|&(i, _)| Some(i) != skip_plane) {
        let Some(reader) = Reader::new(plane_index, plane) else { continue };
        let no_stats = plane.stat_selection(&[]);
        for (line_index, line) in plane.lines.iter().enumerate() {
            space.for_each_raw_event(line, &no_stats, |m| reader.wants(m), |event_index, ev| {
                if let Some(e) = reader.read(line, line_index, event_index, ev)? {
                    visit(e);
                }
                Ok(())
            })?;
        }
    }
    Ok(())
}
