//! The allocator's `MemoryAllocation` / `MemoryDeallocation` events of an XSpace, typed
//! (docs/formats.md §2). The input of the Memory Profile and of the overview's per-allocator counts.

use crate::decode::xplane::names::TF_OP;
use crate::decode::xplane::{IdTable, Line, Plane, RawEvent, RoleValues, XSpace};
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
    pub region_type: Cow<'a, str>,
    pub data_type: i64,
    pub tensor_shape: Cow<'a, str>,
}

/// The stats [`Reader::read`] reads, by name (from the event's bytes: a scan need not select them).
/// Not the allocator's `id` stat: TensorFlow's executor step id, which XProf replaces by the step
/// grouping's (and a negative one is a 10-byte varint in every event).
pub const STATS: [&str; 15] = [
    "allocator_name",
    "bytes_reserved",
    "bytes_allocated",
    "bytes_available",
    "fragmentation",
    "peak_bytes_in_use",
    "requested_bytes",
    "allocation_bytes",
    "addr",
    TF_OP,
    "region_type",
    "data_type",
    "shape",
    "index_on_host",
    "device_ordinal",
];

/// Each stat's role: its position + 1 in [`STATS`].
mod role {
    pub const ALLOCATOR_NAME: u8 = 1;
    pub const BYTES_RESERVED: u8 = 2;
    pub const BYTES_ALLOCATED: u8 = 3;
    pub const BYTES_AVAILABLE: u8 = 4;
    pub const FRAGMENTATION: u8 = 5;
    pub const PEAK_BYTES_IN_USE: u8 = 6;
    pub const REQUESTED_BYTES: u8 = 7;
    pub const ALLOCATION_BYTES: u8 = 8;
    pub const ADDR: u8 = 9;
    pub const TF_OP: u8 = 10;
    pub const REGION_TYPE: u8 = 11;
    pub const DATA_TYPE: u8 = 12;
    pub const SHAPE: u8 = 13;
    pub const INDEX_ON_HOST: u8 = 14;
    pub const DEVICE_ORDINAL: u8 = 15;
}

/// The roles of the two stats that name the memory ID when `allocator_name` is missing.
const FALLBACK_ROLES: [u8; 2] = [role::INDEX_ON_HOST, role::DEVICE_ORDINAL];

/// The most stats a reader can watch for ([`Reader::watching`]).
const MAX_WATCHED: usize = 8;
/// Roles: [`STATS`], then the watched stats.
const ROLES: usize = STATS.len() + MAX_WATCHED;

/// The role of each stat metadata id of one plane: position + 1 in [`STATS`], then the watched stats
/// (0: a stat the reader ignores), looked up once per stat of each memory event.
struct StatIds(IdTable<u8>);

impl StatIds {
    fn new(plane: &Plane, watched: &[&str]) -> Self {
        let names = STATS.iter().chain(watched.iter().take(MAX_WATCHED));
        StatIds(IdTable::new(names.enumerate().filter_map(|(i, n)| plane.stat_id(n).map(|id| (id, i as u8 + 1)))))
    }
    /// The role of a stat, 0 for one the reader ignores.
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
    /// Whether a memory event read so far had one of the watched stats ([`Reader::watching`]), or a
    /// header field after its stats ([`Reader::saw_unexpected`]).
    unexpected: std::sync::atomic::AtomicBool,
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
        Some(Reader { plane, plane_index, kinds, ids: StatIds::new(plane, &[]), names, unexpected: false.into() })
    }

    /// A reader like this one that also notes whether any memory event it reads has one of the stats `names` (at
    /// most eight; [`Reader::saw_unexpected`]): for a caller that assumes none has, and checks, rather
    /// than have another scan read every memory event's stats to find out.
    pub fn watching(&self, names: &[&str]) -> Self {
        Reader {
            plane: self.plane,
            plane_index: self.plane_index,
            kinds: self.kinds.clone(),
            ids: StatIds::new(self.plane, names),
            names: self.names.clone(),
            unexpected: false.into(),
        }
    }

    /// Whether a memory event read so far had one of the watched stats, or a header field after its
    /// stats: what a scan of the same events that skips their stats ([`Want::Header`]) cannot see.
    ///
    /// [`Want::Header`]: crate::decode::xplane::Want::Header
    pub fn saw_unexpected(&self) -> bool {
        self.unexpected.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Whether events with this metadata id are memory events.
    #[inline]
    pub fn wants(&self, metadata_id: i64) -> bool {
        self.kinds.get(metadata_id) != 0
    }

    /// The memory event `ev` (event `event_index` of line `line_index`), or `None` for other events.
    pub fn read(
        &self,
        line: &Line,
        line_index: usize,
        event_index: usize,
        ev: &RawEvent<'a, '_>,
    ) -> Result<Option<MemoryEvent<'a>>, DecodeError> {
        let mut e = MemoryEvent::default();
        Ok(self.read_into(line, line_index, event_index, ev, &mut e)?.then_some(e))
    }

    /// [`Reader::read`] into `e` (every field set): `false`, and `e` unchanged, for other events. For
    /// scans of many events, which reuse one `e` rather than move a fresh one (a few hundred bytes)
    /// around for each. The stats are read from the event's bytes: a memory event carries a dozen,
    /// which are decoded straight into their fields.
    #[inline]
    pub fn read_into(
        &self,
        line: &Line,
        line_index: usize,
        event_index: usize,
        ev: &RawEvent<'a, '_>,
        e: &mut MemoryEvent<'a>,
    ) -> Result<bool, DecodeError> {
        let h = &ev.header;
        let activity = match self.kinds.get(h.metadata_id) {
            1 => Activity::Allocation,
            2 => Activity::Deallocation,
            _ => return Ok(false),
        };
        let base_ps = line.header.timestamp_ns.saturating_mul(1000);
        // The value fields are all set below, from the stats.
        e.activity = activity;
        e.plane_index = self.plane_index;
        e.line_index = line_index;
        e.event_index = event_index;
        e.time_ps = base_ps.saturating_add(h.offset_ps);
        e.offset_ps = h.offset_ps;
        let role = |id| self.ids.role(id);
        let mut values = RoleValues::<ROLES>::default();
        // XProf's fallback memory ID is the first integer of two stats in file order, which the roles
        // do not keep: an event with both is read stat by stat, as is any unusual one.
        let (fallback_id, late_header) = if ev.role_values(role, &mut values) && !FALLBACK_ROLES.iter().all(|&r| values.is_set(r)) {
            (FALLBACK_ROLES.iter().find_map(|&r| values.integer(r)), values.late_header())
        } else {
            values = RoleValues::default();
            let mut first = None;
            let (stats, late_header) = ev.read_stats(|id| role(id) != 0)?;
            for stat in stats {
                let r = role(stat.metadata_id);
                if FALLBACK_ROLES.contains(&r) && first.is_none() {
                    first = self.plane.raw_stat_value(&stat)?.and_then(|v| v.as_i64());
                }
                values.set(r, &stat);
            }
            (first, late_header)
        };
        if late_header || (STATS.len() as u8 + 1..=ROLES as u8).any(|r| values.is_set(r)) {
            self.unexpected.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        e.memory_id = self.text(&values, role::ALLOCATOR_NAME)?;
        e.stack_reserved_bytes = values.int(role::BYTES_RESERVED);
        e.heap_allocated_bytes = values.int(role::BYTES_ALLOCATED);
        e.free_memory_bytes = values.int(role::BYTES_AVAILABLE);
        e.fragmentation = values.double(role::FRAGMENTATION);
        e.peak_bytes_in_use = values.int(role::PEAK_BYTES_IN_USE);
        e.requested_bytes = values.int(role::REQUESTED_BYTES);
        e.allocation_bytes = values.int(role::ALLOCATION_BYTES);
        e.address = values.integer(role::ADDR).map_or(0, |a| a as u64);
        e.tf_op_name = self.text(&values, role::TF_OP)?;
        e.region_type = self.text(&values, role::REGION_TYPE)?;
        e.data_type = values.int(role::DATA_TYPE);
        e.tensor_shape = self.text(&values, role::SHAPE)?;
        if e.memory_id.is_empty() {
            if let Some(id) = fallback_id {
                e.memory_id = Cow::Owned(id.to_string());
            }
        }
        Ok(true)
    }

    /// The string of `role`: stat metadata names (allocator names often are references) come from
    /// the reader's table.
    #[inline(always)]
    fn text(&self, values: &RoleValues<'a, ROLES>, role: u8) -> Result<Cow<'a, str>, DecodeError> {
        match values.reference(role) {
            Some(r) => Ok(Cow::Borrowed(self.names.get(r as i64))),
            None => values.text(role, self.plane),
        }
    }
}

/// Visits every memory event of `space` in file order (planes → lines → events), except those of
/// plane `skip_plane`.
pub fn for_each<'a>(space: &'a XSpace, skip_plane: Option<usize>, mut visit: impl FnMut(MemoryEvent<'a>)) -> Result<(), DecodeError> {
    for (plane_index, plane) in space.planes.iter().enumerate().filter(|&(i, _)| Some(i) != skip_plane) {
        let Some(reader) = Reader::new(plane_index, plane) else { continue };
        let no_stats = plane.stat_selection(&[]);
        for (line_index, line) in plane.lines.iter().enumerate() {
            space.for_each_raw_event(
                line,
                &no_stats,
                |m| reader.wants(m),
                |event_index, ev| {
                    if let Some(e) = reader.read(line, line_index, event_index, ev)? {
                        visit(e);
                    }
                    Ok(())
                },
            )?;
        }
    }
    Ok(())
}
