//! A PyTorch CUDA memory snapshot read per device: the allocator's events replayed as PyTorch's own
//! viewer (`torch/cuda/_memory_viz.py`, `MemoryViz.js`) replays them for its active-memory timeline —
//! an `alloc` adds its bytes at its address, a `free_completed` removes them (a `free_requested`
//! only marks the block pending) — and the segments at the dump summed.
//!
//! The report's figures under the names of `snapshot.oracle.json` (the fixture's independent
//! reading) are that replay of the trace alone: a free of an address the trace never allocated is
//! counted (`unseen_frees`), not subtracted. The rest are Tidemark's own: what was live before the
//! trace began (the ring buffer's lost history, or allocations made before recording started), the
//! timeline, the largest allocations with their frames, what was never freed and what grew by frame
//! (leak suspects), each `oom` explained, and the allocator's state at any event ([`state_at`]).

mod bands;
mod frames;
mod growth;
mod state;
mod trace_memory;

pub use bands::{bands, Axis, Band, Bands, Column, MAX_BANDS, MAX_COLUMNS};
pub use frames::{innermost_python_frame, python_stack, FrameText};
pub use state::{state_at, AllocatorState, BlockState, SegmentState};
pub use trace_memory::{trace_fit, trace_memory, TraceFit, TraceMemory, TraceMemoryError, TracePoint, Verdict, MATCH_WINDOW_US};

use crate::analysis::device_memory::Growth;
use crate::decode::pickle_snapshot::{DeviceTrace, TorchSnapshot};
use crate::fast_hash::FastMap;
use growth::GrowthRecorder;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The most points of a device's timeline ([`DeviceReport::timeline`]): a max filter keeps each
/// bucket's highest point, so the peak is always drawn.
pub const TIMELINE_POINTS: usize = 1000;
/// Rows of [`DeviceReport::largest_allocations`].
pub const LARGEST: usize = 20;
/// Checkpoints of the trace (evenly spaced by event index, its end included) at which the live bytes
/// of each frame are compared for [`DeviceReport::growth`].
pub const GROWTH_CHECKPOINTS: usize = 8;

/// The report, by device index as text (`"0"`), as the oracle keys it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SnapshotReport {
    pub devices: BTreeMap<String, DeviceReport>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceReport {
    /// Events of the trace by `action`.
    pub events: BTreeMap<String, u64>,
    /// The most bytes allocated by the trace and not yet completely freed, at once.
    pub peak_active_bytes: i64,
    /// The `time_us` of the event that first reached the peak (`None` when nothing was allocated).
    pub peak_time_us: Option<i64>,
    /// Its index in the device's trace (-1 when nothing was allocated).
    pub peak_event_index: i64,
    /// What was live at the peak, by size and innermost Python frame; largest product first.
    pub live_at_peak: Vec<LiveRow>,
    /// `free_completed` events of addresses the trace never allocated.
    pub unseen_frees: u64,
    /// Bytes of `segment_alloc` minus `segment_free` over the trace.
    pub reserved_delta_bytes: i64,
    /// The device's segments at the dump.
    pub segments: SegmentTotals,
    // Tidemark's own figures below.
    /// Whether the trace holds the allocator's whole history, and what it lacks.
    pub history: History,
    /// Active bytes (the trace's, and with what was live before it) and reserved bytes over the
    /// trace, at most [`TIMELINE_POINTS`] points.
    pub timeline: Vec<TimelinePoint>,
    /// The peak of the active bytes counting what was live before the trace ([`History`]), as
    /// PyTorch's viewer draws it.
    pub peak_with_prior_bytes: i64,
    pub peak_with_prior_event_index: i64,
    /// The largest allocations of the trace, largest first.
    pub largest_allocations: Vec<LargeAllocation>,
    /// Allocations of the trace still live at its end, by innermost Python frame, most bytes first.
    pub never_freed: Vec<FrameBytes>,
    /// Each frame's live bytes at [`GROWTH_CHECKPOINTS`] points of the trace; leak suspects (grew in
    /// most intervals, ended larger) first.
    pub growth: Vec<FrameGrowth>,
    /// Each `oom` event, explained.
    pub ooms: Vec<Oom>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LiveRow {
    pub size: i64,
    /// `file.py:line function` of the innermost Python frame, empty when the stack has none.
    pub frame: String,
    pub count: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SegmentTotals {
    pub count: u64,
    pub total_size: i64,
    pub allocated_size: i64,
    pub active_size: i64,
    pub blocks_by_state: BTreeMap<String, u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct History {
    pub trace_events: u64,
    pub first_time_us: Option<i64>,
    pub last_time_us: Option<i64>,
    /// Blocks active at the dump that the trace never allocated, and their requested bytes.
    pub live_before_trace_blocks: u64,
    pub live_before_trace_bytes: i64,
    /// Bytes freed by the trace's unseen frees (their events' sizes).
    pub unseen_freed_bytes: i64,
    /// What was live when the trace begins: the two above together.
    pub active_at_start_bytes: i64,
    /// Whether history is missing (anything was live before the first event).
    pub lost: bool,
    /// One plain sentence.
    pub sentence: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimelinePoint {
    pub event_index: u64,
    pub time_us: i64,
    /// The trace's own active bytes (the oracle's replay).
    pub active_bytes: i64,
    /// With what was live before the trace ([`History::active_at_start_bytes`]), less unseen frees.
    pub active_with_prior_bytes: i64,
    /// Reserved bytes relative to the trace's start (segments allocated minus freed so far).
    pub reserved_delta_bytes: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LargeAllocation {
    pub event_index: u64,
    pub time_us: i64,
    pub addr: i64,
    pub size: i64,
    /// The index of its `free_completed`, `None` when the trace never freed it.
    pub freed_at_event_index: Option<u64>,
    pub frame: String,
    /// Python frames, innermost first; in each run of library frames all but the one the user's
    /// code called are marked folded.
    pub python_stack: Vec<FrameText>,
    /// C++ frames, innermost first, without the allocator's and the interpreter's own.
    pub cpp_stack: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FrameBytes {
    pub frame: String,
    pub count: u64,
    pub bytes: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FrameGrowth {
    pub frame: String,
    /// Live bytes at each checkpoint.
    pub bytes: Vec<i64>,
    pub checkpoints_event_index: Vec<u64>,
    pub growth: Growth,
    pub suspect: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Oom {
    pub event_index: u64,
    pub time_us: i64,
    /// The bytes the failed allocation asked for.
    pub requested_bytes: i64,
    /// What the device had free outside the allocator's cache (the entry's `device_free`).
    pub device_free_bytes: i64,
    /// Active bytes then (with what was live before the trace).
    pub active_bytes: i64,
    /// Reserved bytes then, from the segments at the dump and the trace's segment events.
    pub reserved_bytes: i64,
    /// Reserved but not active: cached, free, yet not in one piece large enough.
    pub cached_free_bytes: i64,
    pub frame: String,
    pub sentence: String,
}

/// The report of every device of `s`.
pub fn analyze(s: &TorchSnapshot) -> SnapshotReport {
    let devices = s.devices.iter().enumerate().map(|(d, t)| (d.to_string(), device(s, d, t))).collect();
    SnapshotReport { devices }
}

/// Action ids of a snapshot's strings, resolved once.
struct Actions {
    alloc: Option<u32>,
    free_requested: Option<u32>,
    free_completed: Option<u32>,
    segment_alloc: Option<u32>,
    segment_free: Option<u32>,
    segment_map: Option<u32>,
    segment_unmap: Option<u32>,
    oom: Option<u32>,
}

impl Actions {
    fn of(s: &TorchSnapshot) -> Self {
        Actions {
            alloc: s.find_str("alloc"),
            free_requested: s.find_str("free_requested"),
            free_completed: s.find_str("free_completed"),
            segment_alloc: s.find_str("segment_alloc"),
            segment_free: s.find_str("segment_free"),
            segment_map: s.find_str("segment_map"),
            segment_unmap: s.find_str("segment_unmap"),
            oom: s.find_str("oom"),
        }
    }

    /// The change to reserved bytes an event makes.
    fn reserved_change(&self, action: u32, size: i64) -> i64 {
        let a = Some(action);
        if a == self.segment_alloc || a == self.segment_map {
            size
        } else if a == self.segment_free || a == self.segment_unmap {
            size.saturating_neg()
        } else {
            0
        }
    }
}

/// The trace's allocations live at some point: by address, the order they became live (an address
/// allocated again while live keeps its place, as a Python dict's key does) and the `alloc` event.
#[derive(Default)]
struct Live {
    by_addr: FastMap<i64, (u64, u32)>,
    next_order: u64,
}

impl Live {
    /// Records the `alloc` at `event`; returns the size of an allocation it replaced, if any.
    fn alloc(&mut self, addr: i64, event: u32) {
        let order = self.next_order;
        let slot = self.by_addr.entry(addr).or_insert((order, event));
        if slot.0 == order {
            self.next_order += 1;
        }
        slot.1 = event;
    }

    fn free(&mut self, addr: i64) -> Option<u32> {
        self.by_addr.remove(&addr).map(|(_, e)| e)
    }

    /// The `alloc` events live, in no order.
    fn live_events(&self) -> impl Iterator<Item = u32> + '_ {
        self.by_addr.values().map(|(_, e)| *e)
    }

    /// The `alloc` events live, in the order they became live.
    fn events(&self) -> Vec<u32> {
        let mut v: Vec<(u64, u32)> = self.by_addr.values().copied().collect();
        v.sort_unstable();
        v.into_iter().map(|(_, e)| e).collect()
    }
}

fn device(s: &TorchSnapshot, d: usize, t: &DeviceTrace) -> DeviceReport {
    let acts = Actions::of(s);
    let n = t.len();
    // Counted by action id, named once each: a name's text per event was an allocation apiece.
    let mut by_action = vec![0u64; s.string_count()];
    for a in &t.action {
        by_action[*a as usize] += 1;
    }
    let events: BTreeMap<String, u64> =
        by_action.iter().enumerate().filter(|(_, c)| **c > 0).map(|(a, c)| (s.str(a as u32).to_string(), *c)).collect();
    // The replay: active bytes after each event.
    let mut live = Live::default();
    let (mut active, mut peak, mut peak_index, mut unseen, mut reserved) = (0i64, 0i64, -1i64, 0u64, 0i64);
    let mut unseen_freed_bytes = 0i64;
    // The event that freed each `alloc` event, by event ([`NOT_FREED`] where none did).
    let mut freed_at: Vec<u32> = vec![NOT_FREED; n];
    let mut curve = Vec::with_capacity(n);
    let (mut reserved_steps, mut unseen_steps) = (Steps::default(), Steps::default());
    let mut growth = GrowthRecorder::new(n);
    for i in 0..n {
        let (a, addr, size) = (Some(t.action[i]), t.addr[i], t.size[i]);
        if a == acts.alloc {
            live.alloc(addr, i as u32);
            active = active.saturating_add(size);
            if active > peak {
                (peak, peak_index) = (active, i as i64);
            }
        } else if a == acts.free_completed {
            match live.free(addr) {
                Some(e) => {
                    active = active.saturating_sub(t.size[e as usize]);
                    freed_at[e as usize] = i as u32;
                }
                None => {
                    unseen += 1;
                    unseen_freed_bytes = unseen_freed_bytes.saturating_add(size);
                    unseen_steps.set(i, unseen_freed_bytes);
                }
            }
        }
        let change = acts.reserved_change(t.action[i], size);
        if change != 0 {
            reserved = reserved.saturating_add(change);
            reserved_steps.set(i, reserved);
        }
        curve.push(active);
        growth.after(i, s, t, &live);
    }
    let live_at_end: Vec<u32> = live.events();
    let live_at_peak = if peak_index >= 0 { live_rows(s, t, &acts, peak_index as usize) } else { Vec::new() };
    let segs: Vec<_> = s.segments.iter().filter(|g| g.device == d as i64).collect();
    let mut blocks_by_state = BTreeMap::new();
    for b in segs.iter().flat_map(|g| &g.blocks) {
        *blocks_by_state.entry(s.str(b.state).to_string()).or_insert(0) += 1;
    }
    let segments = SegmentTotals {
        count: segs.len() as u64,
        total_size: sum(segs.iter().map(|g| g.total_size)),
        allocated_size: sum(segs.iter().map(|g| g.allocated_size)),
        active_size: sum(segs.iter().map(|g| g.active_size)),
        blocks_by_state,
    };
    let live_addrs: std::collections::HashSet<i64> = live_at_end.iter().map(|e| t.addr[*e as usize]).collect();
    let (before_blocks, before_bytes) = live_before_trace(s, d, &live_addrs);
    let history = history(t, unseen, unseen_freed_bytes, before_blocks, before_bytes);
    let start = history.active_at_start_bytes;
    let with_prior = |i: usize| start.saturating_add(curve[i]).saturating_sub(unseen_steps.at(i));
    let (mut peak_with_prior_bytes, mut peak_with_prior_event_index) = (start, -1i64);
    for i in 0..n {
        if with_prior(i) > peak_with_prior_bytes {
            (peak_with_prior_bytes, peak_with_prior_event_index) = (with_prior(i), i as i64);
        }
    }
    let timeline = reduce(n, &curve)
        .into_iter()
        .map(|i| TimelinePoint {
            event_index: i as u64,
            time_us: t.time_us[i],
            active_bytes: curve[i],
            active_with_prior_bytes: with_prior(i),
            reserved_delta_bytes: reserved_steps.at(i),
        })
        .collect();
    // Reserved bytes at an event: the dump's segments less what the trace reserved after it.
    let reserved_at_end = segments.total_size;
    let ooms = (0..n)
        .filter(|i| Some(t.action[*i]) == acts.oom)
        .map(|i| {
            let reserved_bytes = reserved_at_end.saturating_sub(reserved.saturating_sub(reserved_steps.at(i)));
            oom(s, t, i, with_prior(i), reserved_bytes)
        })
        .collect();
    DeviceReport {
        events,
        peak_active_bytes: peak,
        peak_time_us: (peak_index >= 0).then(|| t.time_us[peak_index as usize]),
        peak_event_index: peak_index,
        live_at_peak,
        unseen_frees: unseen,
        reserved_delta_bytes: reserved,
        segments,
        history,
        timeline,
        peak_with_prior_bytes,
        peak_with_prior_event_index,
        largest_allocations: largest(s, t, &acts, &freed_at),
        never_freed: by_frame(s, t, &live_at_end),
        growth: growth.finish(),
        ooms,
    }
}

/// A running total of the trace that changes at few of its events (reserved bytes at segment
/// events, unseen frees' bytes at unseen frees), kept as its changes: a value per event was 8 bytes
/// an event apiece, for values that are nearly all equal.
#[derive(Default)]
struct Steps(Vec<(usize, i64)>);

impl Steps {
    /// The total is `v` from event `i` on.
    fn set(&mut self, i: usize, v: i64) {
        self.0.push((i, v));
    }

    /// The total after event `i` (0 before the first change).
    fn at(&self, i: usize) -> i64 {
        match self.0.partition_point(|(j, _)| *j <= i) {
            0 => 0,
            k => self.0[k - 1].1,
        }
    }
}

/// Blocks active at the dump on device `d` that the trace did not leave live (`live_addrs`: the
/// addresses it did) were allocated before it: how many, and their requested bytes.
fn live_before_trace(s: &TorchSnapshot, d: usize, live_addrs: &std::collections::HashSet<i64>) -> (u64, i64) {
    let (mut blocks, mut bytes) = (0u64, 0i64);
    for b in s.segments.iter().filter(|g| g.device == d as i64).flat_map(|g| &g.blocks) {
        if s.str(b.state).starts_with("active") && !live_addrs.contains(&b.address) {
            blocks += 1;
            bytes = bytes.saturating_add(b.requested_size);
        }
    }
    (blocks, bytes)
}

/// The sum of file-given sizes, saturating (a corrupt file's sizes may overflow).
fn sum(v: impl Iterator<Item = i64>) -> i64 {
    v.fold(0, i64::saturating_add)
}

/// What was live after event `at`, rows of (size, innermost Python frame) with their counts, the
/// largest product first, then by frame; equal ones in the order their first allocation became live.
fn live_rows(s: &TorchSnapshot, t: &DeviceTrace, acts: &Actions, at: usize) -> Vec<LiveRow> {
    let mut live = Live::default();
    for i in 0..=at {
        let a = Some(t.action[i]);
        if a == acts.alloc {
            live.alloc(t.addr[i], i as u32);
        } else if a == acts.free_completed {
            live.free(t.addr[i]);
        }
    }
    let mut rows: Vec<LiveRow> = Vec::new();
    let mut index: FastMap<(i64, String), usize> = FastMap::default();
    for e in live.events() {
        let e = e as usize;
        let key = (t.size[e], frame_text(s, t.stack[e]));
        match index.get(&key) {
            Some(r) => rows[*r].count += 1,
            None => {
                rows.push(LiveRow { size: key.0, frame: key.1.clone(), count: 1 });
                index.insert(key, rows.len() - 1);
            }
        }
    }
    let product = |r: &LiveRow| i128::from(r.size) * i128::from(r.count);
    rows.sort_by(|a, b| product(b).cmp(&product(a)).then_with(|| a.frame.cmp(&b.frame)));
    rows
}

fn history(t: &DeviceTrace, unseen: u64, unseen_freed_bytes: i64, before_blocks: u64, before_bytes: i64) -> History {
    let bytes = |n: i64| crate::units::bytes(n);
    let lost = unseen > 0 || before_blocks > 0;
    let sentence = if !lost {
        "The trace holds the allocator's whole history: every block live at the dump was allocated inside it.".to_string()
    } else {
        let mut parts = Vec::new();
        if before_blocks > 0 {
            parts.push(format!("{before_blocks} blocks ({}) live at the dump were allocated before its first event", bytes(before_bytes)));
        }
        if unseen > 0 {
            parts.push(format!("{unseen} frees ({}) are of allocations it never saw", bytes(unseen_freed_bytes)));
        }
        format!(
            "The trace does not hold the allocator's whole history: {}. Those allocations were made before recording began \
             (torch.cuda.memory._record_memory_history) or their events fell out of its ring buffer (max_entries); the peak \
             of active bytes counts only what the trace allocated, and with them {} more was live when it began.",
            parts.join(", and "),
            bytes(before_bytes.saturating_add(unseen_freed_bytes))
        )
    };
    History {
        trace_events: t.len() as u64,
        first_time_us: t.time_us.first().copied(),
        last_time_us: t.time_us.last().copied(),
        live_before_trace_blocks: before_blocks,
        live_before_trace_bytes: before_bytes,
        unseen_freed_bytes,
        active_at_start_bytes: before_bytes.saturating_add(unseen_freed_bytes),
        lost,
        sentence,
    }
}

/// The indices of at most [`TIMELINE_POINTS`] events: the events cut into equal buckets, each
/// giving its highest point (the first of equal ones).
fn reduce(n: usize, curve: &[i64]) -> Vec<usize> {
    if n <= TIMELINE_POINTS {
        return (0..n).collect();
    }
    (0..TIMELINE_POINTS)
        .filter_map(|b| {
            let (lo, hi) = (b * n / TIMELINE_POINTS, (b + 1) * n / TIMELINE_POINTS);
            (lo..hi).reduce(|best, i| if curve[i] > curve[best] { i } else { best })
        })
        .collect()
}

/// A [`freed_at`](device) slot of an `alloc` event never freed (or not an `alloc`).
const NOT_FREED: u32 = u32::MAX;

fn largest(s: &TorchSnapshot, t: &DeviceTrace, acts: &Actions, freed_at: &[u32]) -> Vec<LargeAllocation> {
    let mut allocs: Vec<usize> = (0..t.len()).filter(|i| Some(t.action[*i]) == acts.alloc).collect();
    // Largest first, then earliest: a total order, so the first LARGEST selected and then sorted are
    // those a sort of every allocation would list first.
    let order = |a: &usize, b: &usize| t.size[*b].cmp(&t.size[*a]).then(a.cmp(b));
    if allocs.len() > LARGEST {
        allocs.select_nth_unstable_by(LARGEST, order);
        allocs.truncate(LARGEST);
    }
    allocs.sort_by(order);
    allocs
        .into_iter()
        .take(LARGEST)
        .map(|i| LargeAllocation {
            event_index: i as u64,
            time_us: t.time_us[i],
            addr: t.addr[i],
            size: t.size[i],
            freed_at_event_index: (freed_at[i] != NOT_FREED).then(|| u64::from(freed_at[i])),
            frame: frame_text(s, t.stack[i]),
            python_stack: python_stack(s, t.stack[i]),
            cpp_stack: frames::cpp_stack(s, t.stack[i]),
        })
        .collect()
}

/// The innermost Python frame of `stack` as text, empty when it has none.
fn frame_text(s: &TorchSnapshot, stack: u32) -> String {
    innermost_python_frame(s, stack).map(|f| f.text()).unwrap_or_default()
}

/// The `alloc` events `live`, grouped by innermost Python frame: most bytes first, then by frame.
fn by_frame(s: &TorchSnapshot, t: &DeviceTrace, live: &[u32]) -> Vec<FrameBytes> {
    let mut map: BTreeMap<String, (u64, i64)> = BTreeMap::new();
    for e in live {
        let slot = map.entry(frame_text(s, t.stack[*e as usize])).or_default();
        slot.0 += 1;
        slot.1 = slot.1.saturating_add(t.size[*e as usize]);
    }
    let mut rows: Vec<FrameBytes> = map.into_iter().map(|(frame, (count, bytes))| FrameBytes { frame, count, bytes }).collect();
    rows.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.frame.cmp(&b.frame)));
    rows
}

fn oom(s: &TorchSnapshot, t: &DeviceTrace, i: usize, active_bytes: i64, reserved_bytes: i64) -> Oom {
    let bytes = |n: i64| crate::units::bytes(n);
    let (requested_bytes, device_free_bytes) = (t.size[i], t.addr[i]);
    let cached_free_bytes = reserved_bytes.saturating_sub(active_bytes).max(0);
    let frame = frame_text(s, t.stack[i]);
    let at = if frame.is_empty() { String::new() } else { format!(" at {frame}") };
    let sentence = format!(
        "Out of memory{at}: {} were asked for while {} were active and {} reserved; the cache held {} reserved but not active \
         (free, yet in no piece of that size) and the device had {} free outside it.",
        bytes(requested_bytes),
        bytes(active_bytes),
        bytes(reserved_bytes),
        bytes(cached_free_bytes),
        bytes(device_free_bytes)
    );
    Oom {
        event_index: i as u64,
        time_us: t.time_us[i],
        requested_bytes,
        device_free_bytes,
        active_bytes,
        reserved_bytes,
        cached_free_bytes,
        frame,
        sentence,
    }
}
