//! The active-memory timeline as PyTorch's viewer draws it (`MemoryViz.js`): each allocation a band
//! stacked on the ones live before it, from its `alloc` to its `free_completed`, what was live before
//! the trace at the bottom. A trace of 100k+ events has far more bands and events than a screen has
//! pixels, so a window of it is cut into columns (about one per few pixels): each column shows the
//! allocator at its highest point (a max filter, so no peak is lost), allocations too small to see
//! at the window's height are summed into one band, and only the largest [`MAX_BANDS`] are drawn
//! one by one.

use super::{python_stack, Actions, FrameText};
use crate::decode::pickle_snapshot::{DeviceTrace, TorchSnapshot};
use crate::fast_hash::FastMap;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The most bands drawn one by one in a window: the largest; the rest are summed.
pub const MAX_BANDS: usize = 2000;
/// The most columns a window is cut into.
pub const MAX_COLUMNS: usize = 10_000;

/// What the window's x axis counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Axis {
    /// The event's index in the device's trace.
    #[default]
    Event,
    /// The event's `time_us`.
    Time,
}

/// The bands of a window of a device's trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bands {
    pub device: usize,
    pub axis: Axis,
    /// The window, in the axis's units (event indices, or `time_us`), both ends included.
    pub start: i64,
    pub end: i64,
    /// The window on the time axis (µs since the epoch, both ends included): on the event axis its
    /// first and last events' times, so a view on time (the Trace memory panel) can show what the
    /// window spans; on the time axis the window itself.
    pub start_time_us: i64,
    pub end_time_us: i64,
    /// The whole trace's extent on that axis.
    pub full_start: i64,
    pub full_end: i64,
    /// Events inside the window.
    pub events_in_window: u64,
    /// Allocations smaller than this are summed ([`Column::small_bytes`]): one row of pixels at the
    /// window's height.
    pub min_band_bytes: i64,
    /// The highest stack of the window's columns.
    pub max_bytes: i64,
    pub columns: Vec<Column>,
    /// The allocations drawn one by one, largest first.
    pub bands: Vec<Band>,
}

/// A column: the axis range it covers and the allocator at the highest point in it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Column {
    /// Its range on the axis, `from` included, `to` not.
    pub from: i64,
    pub to: i64,
    /// The event shown: the column's highest (-1: before the first event).
    pub event_index: i64,
    /// Bytes live before the trace and not yet freed by it (the bottom band).
    pub prior_bytes: i64,
    /// The trace's allocations summed (smaller than [`Bands::min_band_bytes`] or past [`MAX_BANDS`]),
    /// stacked on the prior bytes, and how many.
    pub small_bytes: i64,
    pub small_count: u64,
    /// Everything active: the top of the stack.
    pub total_bytes: i64,
    /// Reserved bytes (the dump's segments less what the trace reserved after this event).
    pub reserved_bytes: i64,
}

/// One allocation drawn as a band.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Band {
    pub alloc_event_index: u64,
    /// Its `free_completed`, `None` when the trace never freed it.
    pub freed_at_event_index: Option<u64>,
    pub addr: i64,
    pub size: i64,
    /// The first column it is live in; [`Band::bottoms`] follow from there, one per column.
    pub first_column: u32,
    /// The bytes below it in each column it is live in.
    pub bottoms: Vec<i64>,
    pub frame: String,
    pub python_stack: Vec<FrameText>,
}

/// The first and last time (µs since the epoch) of a device's trace: the timeline's time axis.
pub fn time_extent(t: &DeviceTrace) -> (i64, i64) {
    (t.time_us.iter().copied().min().unwrap_or(0), t.time_us.iter().copied().max().unwrap_or(0))
}

/// The bands of device `device` over `window` (axis units, both ends; `None`: the whole trace) in
/// at most `columns` columns, allocations under `1 / rows` of the window's highest stack summed.
/// `None` for a device the snapshot does not have.
pub fn bands(s: &TorchSnapshot, device: usize, axis: Axis, window: Option<(i64, i64)>, columns: usize, rows: u32) -> Option<Bands> {
    let t = s.devices.get(device)?;
    let acts = Actions::of(s);
    let n = t.len();
    let replay = Replay::of(s, device, t, &acts);
    let (full_start, full_end) = match axis {
        Axis::Event => (0, n as i64 - 1),
        Axis::Time => time_extent(t),
    };
    let (start, end) = window.map_or((full_start, full_end), |(a, b)| (a.min(b), a.max(b)));
    let end = end.max(start);
    let position = |i: usize| match axis {
        Axis::Event => i as i64,
        Axis::Time => t.time_us[i],
    };
    // The window's events: the trace in order; on the time axis those whose time is inside it.
    let inside: Vec<usize> = (0..n).filter(|&i| (start..=end).contains(&position(i))).collect();
    let span = i128::from(end) - i128::from(start) + 1;
    let n_cols = match axis {
        Axis::Event => columns.clamp(1, MAX_COLUMNS).min(span as usize),
        Axis::Time => columns.clamp(1, MAX_COLUMNS),
    };
    let edge = |b: usize| (i128::from(start) + span * b as i128 / n_cols as i128) as i64;
    // Each column's highest event; an empty one shows the state after the last event before it.
    let mut samples: Vec<i64> = Vec::with_capacity(n_cols);
    let first_inside = inside.first().copied().unwrap_or(n);
    let mut last: i64 = (0..first_inside).rev().find(|&i| position(i) < start).map_or(-1, |i| i as i64);
    let mut k = 0;
    for b in 0..n_cols {
        let to = edge(b + 1);
        let mut best: Option<usize> = None;
        while k < inside.len() && (position(inside[k]) < to || b + 1 == n_cols) {
            let i = inside[k];
            if best.is_none_or(|m| replay.total[i] > replay.total[m]) {
                best = Some(i);
            }
            last = i as i64;
            k += 1;
        }
        samples.push(best.map_or(last, |i| i as i64));
    }
    let total_at = |e: i64| usize::try_from(e).map_or(replay.active_at_start, |i| replay.total[i]);
    let max_bytes = samples.iter().map(|e| total_at(*e)).max().unwrap_or(0).max(0);
    let min_band_bytes = (max_bytes / i64::from(rows.max(1))).max(1);
    // The bands: allocations live at some column's event and large enough, the largest first.
    let mut sorted: Vec<i64> = samples.clone();
    sorted.sort_unstable();
    let live_at_a_sample = |a: usize| {
        let freed = replay.freed_at.get(&(a as u32)).map_or(i64::MAX, |f| i64::from(*f));
        let first = sorted.partition_point(|e| *e < a as i64);
        first < sorted.len() && sorted[first] < freed
    };
    let mut kept: Vec<usize> =
        (0..n).filter(|&i| Some(t.action[i]) == acts.alloc && t.size[i] >= min_band_bytes && live_at_a_sample(i)).collect();
    kept.sort_by(|a, b| t.size[*b].cmp(&t.size[*a]).then(a.cmp(b)));
    kept.truncate(MAX_BANDS);
    let band_of: FastMap<u32, usize> = kept.iter().enumerate().map(|(b, a)| (*a as u32, b)).collect();
    let mut bands: Vec<Band> = kept
        .iter()
        .map(|&a| Band {
            alloc_event_index: a as u64,
            freed_at_event_index: replay.freed_at.get(&(a as u32)).map(|f| u64::from(*f)),
            addr: t.addr[a],
            size: t.size[a],
            first_column: 0,
            bottoms: Vec::new(),
            frame: super::frame_text(s, t.stack[a]),
            python_stack: python_stack(s, t.stack[a]),
        })
        .collect();
    // Replay again, stacking each column's live allocations in the order they became live.
    let mut live = Stack::default();
    let mut next = 0usize;
    let mut out_cols = Vec::with_capacity(n_cols);
    for (b, &e) in samples.iter().enumerate() {
        while (next as i64) <= e {
            let (a, addr) = (Some(t.action[next]), t.addr[next]);
            if a == acts.alloc {
                live.alloc(addr, next as u32);
            } else if a == acts.free_completed {
                live.free(addr);
            }
            next += 1;
        }
        let prior = usize::try_from(e).map_or(replay.active_at_start, |i| replay.active_at_start.saturating_sub(replay.unseen_freed[i]));
        let (mut small_bytes, mut small_count) = (0i64, 0u64);
        let mut drawn = Vec::new();
        for a in live.in_order() {
            match band_of.get(&a) {
                Some(band) => drawn.push(*band),
                None => {
                    small_bytes = small_bytes.saturating_add(t.size[a as usize]);
                    small_count += 1;
                }
            }
        }
        let mut bottom = prior.saturating_add(small_bytes);
        for band in drawn {
            let band = &mut bands[band];
            if band.bottoms.is_empty() {
                band.first_column = b as u32;
            }
            band.bottoms.push(bottom);
            bottom = bottom.saturating_add(band.size);
        }
        out_cols.push(Column {
            from: edge(b),
            to: edge(b + 1),
            event_index: e,
            prior_bytes: prior,
            small_bytes,
            small_count,
            total_bytes: bottom,
            reserved_bytes: usize::try_from(e)
                .map_or(replay.reserved_before, |i| replay.reserved_before.saturating_add(replay.reserved[i])),
        });
    }
    let (start_time_us, end_time_us) = match axis {
        Axis::Time => (start, end),
        Axis::Event => {
            let times = || inside.iter().map(|&i| t.time_us[i]);
            (times().min().unwrap_or(0), times().max().unwrap_or(0))
        }
    };
    Some(Bands {
        device,
        axis,
        start,
        end,
        start_time_us,
        end_time_us,
        full_start,
        full_end,
        events_in_window: inside.len() as u64,
        min_band_bytes,
        max_bytes,
        columns: out_cols,
        bands,
    })
}

/// One pass over the trace: everything active after each event (what was live before the trace
/// included), when each allocation was freed, and the reserved bytes.
struct Replay {
    total: Vec<i64>,
    unseen_freed: Vec<i64>,
    /// Reserved bytes after each event relative to the trace's start, and before the first event.
    reserved: Vec<i64>,
    reserved_before: i64,
    freed_at: FastMap<u32, u32>,
    active_at_start: i64,
}

impl Replay {
    fn of(s: &TorchSnapshot, device: usize, t: &DeviceTrace, acts: &Actions) -> Replay {
        let n = t.len();
        let mut live: FastMap<i64, u32> = FastMap::default();
        let (mut active, mut unseen, mut reserved) = (0i64, 0i64, 0i64);
        let mut freed_at = FastMap::default();
        let (mut trace, mut unseen_freed, mut reserved_curve) = (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
        for i in 0..n {
            let (a, addr, size) = (Some(t.action[i]), t.addr[i], t.size[i]);
            if a == acts.alloc {
                if let Some(prev) = live.insert(addr, i as u32) {
                    active = active.saturating_sub(t.size[prev as usize]);
                }
                active = active.saturating_add(size);
            } else if a == acts.free_completed {
                match live.remove(&addr) {
                    Some(e) => {
                        active = active.saturating_sub(t.size[e as usize]);
                        freed_at.insert(e, i as u32);
                    }
                    None => unseen = unseen.saturating_add(size),
                }
            }
            reserved = reserved.saturating_add(acts.reserved_change(t.action[i], size));
            trace.push(active);
            unseen_freed.push(unseen);
            reserved_curve.push(reserved);
        }
        let live_at_end: std::collections::HashSet<i64> = live.keys().copied().collect();
        let active_at_start = super::live_before_trace(s, device, &live_at_end).1.saturating_add(unseen);
        let total = (0..n).map(|i| active_at_start.saturating_add(trace[i]).saturating_sub(unseen_freed[i])).collect();
        let reserved_at_end: i64 =
            s.segments.iter().filter(|g| g.device == device as i64).map(|g| g.total_size).fold(0, i64::saturating_add);
        let reserved_before = reserved_at_end.saturating_sub(reserved_curve.last().copied().unwrap_or(0));
        Replay { total, unseen_freed, reserved: reserved_curve, reserved_before, freed_at, active_at_start }
    }
}

/// The live allocations in the order they became live (an address allocated again while live keeps
/// its place, as the report's replay has it).
#[derive(Default)]
struct Stack {
    by_addr: FastMap<i64, u64>,
    by_order: BTreeMap<u64, u32>,
    next: u64,
}

impl Stack {
    fn alloc(&mut self, addr: i64, event: u32) {
        let order = *self.by_addr.entry(addr).or_insert_with(|| {
            self.next += 1;
            self.next
        });
        self.by_order.insert(order, event);
    }

    fn free(&mut self, addr: i64) {
        if let Some(order) = self.by_addr.remove(&addr) {
            self.by_order.remove(&order);
        }
    }

    fn in_order(&self) -> impl Iterator<Item = u32> + '_ {
        self.by_order.values().copied()
    }
}
