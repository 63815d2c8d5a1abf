//! The memory counter tracks: per memory ID (allocator), its heap and stack over time, drawn under the
//! host process as step charts on the trace's time axis. The values are the Memory Profile's own
//! snapshots ([`crate::analysis::memory_profile`]), never read again here; only their clock differs.
//!
//! The Memory Profile's times are its events' raw `offset_ps`, as XProf reports them; the trace viewer
//! adds the line's `timestamp_ns`. [`memory_clock`] finds what to add: the start of the host lines
//! that hold memory events (profilers give them all one start; where they differ, the first line's
//! is used and the clock says it is not exact).

use crate::analysis::memory_events::Reader;
use crate::analysis::memory_profile::{AllocatorProfile, MemoryProfile, Snapshots, HOST_PLANE};
use crate::decode::xplane::{IdTable, Want, XSpace};
use crate::decode::DecodeError;
use serde::{Deserialize, Serialize};

/// How the Memory Profile's times map to the trace's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryClock {
    /// Add to a Memory Profile time to get the trace's time (ps).
    pub offset_ps: i64,
    /// `false` when the host lines with memory events start at different times, so one offset is
    /// right for some of them only.
    pub exact: bool,
}

impl MemoryClock {
    pub fn to_trace_ps(&self, memory_ps: i64) -> i64 {
        memory_ps.saturating_add(self.offset_ps)
    }
}

/// The clock of the Memory Profile of `space`: the start of the host plane's lines that hold memory
/// events (an offset of 0 when there are none).
pub fn memory_clock(space: &XSpace) -> Result<MemoryClock, DecodeError> {
    let Some((index, plane)) = space.planes.iter().enumerate().find(|(_, p)| p.name() == HOST_PLANE) else {
        return Ok(MemoryClock { offset_ps: 0, exact: true });
    };
    let Some(reader) = Reader::new(index, plane) else { return Ok(MemoryClock { offset_ps: 0, exact: true }) };
    let mut starts: Vec<i64> = Vec::new();
    for line in &plane.lines {
        // Once one is found, the rest of the line is passed over unread.
        let any = std::cell::Cell::new(false);
        space.for_each_raw_event(
            line,
            &IdTable::new([]),
            |m| if !any.get() && reader.wants(m) { Want::Header } else { Want::Nothing },
            |_, _| {
                any.set(true);
                Ok(())
            },
        )?;
        if any.get() {
            starts.push(line.header.timestamp_ns.saturating_mul(1000));
        }
    }
    let offset_ps = starts.first().copied().unwrap_or(0);
    Ok(MemoryClock { offset_ps, exact: starts.iter().all(|&s| s == offset_ps) })
}

/// One allocator's track, as the page lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CounterTrack {
    pub memory_id: String,
    /// Events (steps) of the allocator.
    pub event_count: u64,
    /// The most heap + stack at any time: the track's scale.
    pub max_in_use_bytes: i64,
    /// First and last event, in the trace's time.
    pub start_ps: i64,
    pub end_ps: i64,
}

/// Every allocator's track and the clock that places them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CounterTracks {
    pub tracks: Vec<CounterTrack>,
    pub clock: MemoryClock,
}

/// The tracks of `profile`, on `clock`.
pub fn tracks(profile: &MemoryProfile, clock: MemoryClock) -> CounterTracks {
    let tracks = profile
        .allocators
        .iter()
        .filter(|a| !a.snapshots.is_empty())
        .map(|a| CounterTrack {
            memory_id: a.memory_id.clone(),
            event_count: a.snapshots.len() as u64,
            max_in_use_bytes: a.snapshots.iter().map(|s| s.stats.in_use_bytes()).max().unwrap_or(0),
            start_ps: clock.to_trace_ps(a.snapshots.first().map_or(0, |s| s.time_offset_ps)),
            end_ps: clock.to_trace_ps(a.snapshots.last().map_or(0, |s| s.time_offset_ps)),
        })
        .collect();
    CounterTracks { tracks, clock }
}

/// What the page asks for: one allocator's values over a window (trace time) `width_px` wide.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CounterQuery {
    pub memory_id: String,
    pub start_ps: i64,
    pub end_ps: i64,
    pub width_px: u32,
}

/// One allocator's steps over a window, in columns (one entry a step). A step holds from its time to
/// the next one's. Events less than a pixel apart are merged into one step that carries their count,
/// the values after the last of them, and the least and most heap + stack among them, so no spike
/// is lost however far out the view is. The step in effect when the window opens comes first (its
/// time before the window's start).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CounterWindow {
    pub memory_id: String,
    pub start_ps: i64,
    pub end_ps: i64,
    /// In the trace's time.
    pub time_ps: Vec<i64>,
    pub heap_bytes: Vec<i64>,
    pub stack_bytes: Vec<i64>,
    pub min_in_use_bytes: Vec<i64>,
    pub max_in_use_bytes: Vec<i64>,
    /// Events the step stands for.
    pub count: Vec<u32>,
}

impl CounterWindow {
    pub fn len(&self) -> usize {
        self.time_ps.len()
    }

    pub fn is_empty(&self) -> bool {
        self.time_ps.is_empty()
    }

    /// The step in effect at `t_ps`: the last that starts at or before it.
    pub fn at(&self, t_ps: i64) -> Option<usize> {
        self.time_ps.partition_point(|&t| t <= t_ps).checked_sub(1)
    }
}

/// The steps of allocator `a` for `q`, on `clock`.
pub fn window(a: &AllocatorProfile, clock: MemoryClock, q: &CounterQuery) -> CounterWindow {
    steps(&a.snapshots, clock, q)
}

/// [`window`] of an allocator's `snapshots` (sorted by time).
fn steps(snapshots: &Snapshots, clock: MemoryClock, q: &CounterQuery) -> CounterWindow {
    let ps_per_px = (q.end_ps.saturating_sub(q.start_ps) / i64::from(q.width_px.max(1))).max(1);
    let first = snapshots.times().partition_point(|&t| clock.to_trace_ps(t) < q.start_ps).saturating_sub(1);
    let mut w = CounterWindow { memory_id: q.memory_id.clone(), start_ps: q.start_ps, end_ps: q.end_ps, ..Default::default() };
    // The pixel column of the step being merged.
    let mut column = None;
    for s in snapshots.rows(first..snapshots.len()) {
        let t = clock.to_trace_ps(s.time_offset_ps);
        if t > q.end_ps {
            break;
        }
        let in_use = s.stats.in_use_bytes();
        let col = if t < q.start_ps { -1 } else { (t - q.start_ps) / ps_per_px };
        if column == Some(col) {
            let k = w.len() - 1;
            w.heap_bytes[k] = s.stats.heap_allocated_bytes;
            w.stack_bytes[k] = s.stats.stack_reserved_bytes;
            w.min_in_use_bytes[k] = w.min_in_use_bytes[k].min(in_use);
            w.max_in_use_bytes[k] = w.max_in_use_bytes[k].max(in_use);
            w.count[k] += 1;
            continue;
        }
        column = Some(col);
        w.time_ps.push(t);
        w.heap_bytes.push(s.stats.heap_allocated_bytes);
        w.stack_bytes.push(s.stats.stack_reserved_bytes);
        w.min_in_use_bytes.push(in_use);
        w.max_in_use_bytes.push(in_use);
        w.count.push(1);
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::memory_events::Activity;
    use crate::analysis::memory_profile::{AggregationStats, Snapshot, SnapshotActivity};

    fn snapshots(points: &[(i64, i64, i64)]) -> Snapshots {
        let activity = SnapshotActivity {
            activity: Activity::Allocation,
            requested_bytes: 0,
            allocation_bytes: 0,
            address: 0,
            step_id: 0,
            tf_op_name: 0,
            region_type: 0,
            data_type: 0,
            tensor_shape: 0,
        };
        points
            .iter()
            .map(|&(t, heap, stack)| Snapshot {
                time_offset_ps: t,
                stats: AggregationStats { heap_allocated_bytes: heap, stack_reserved_bytes: stack, ..Default::default() },
                activity,
            })
            .collect()
    }

    #[test]
    fn steps_merge_per_pixel_keeping_extremes_and_counts() {
        let a = snapshots(&[(0, 10, 0), (5, 50, 1), (6, 20, 0), (30, 40, 2), (100, 5, 0)]);
        let clock = MemoryClock { offset_ps: 1000, exact: true };
        // 10 ps a pixel from 1000: 1000 and 1005/1006 share column 0; 1030 is column 3.
        let q = CounterQuery { memory_id: "m".into(), start_ps: 1000, end_ps: 1100, width_px: 10 };
        let w = steps(&a, clock, &q);
        assert_eq!(w.time_ps, vec![1000, 1030, 1100]);
        assert_eq!(w.count, vec![3, 1, 1]);
        assert_eq!((w.heap_bytes[0], w.min_in_use_bytes[0], w.max_in_use_bytes[0]), (20, 10, 51));
        // A window opening later starts with the step in effect (its own time), then the rest.
        let q = CounterQuery { start_ps: 1010, end_ps: 1040, width_px: 1000, ..q };
        let w = steps(&a, clock, &q);
        assert_eq!(w.time_ps, vec![1006, 1030]);
        assert_eq!(w.at(1020), Some(0));
        assert_eq!(w.at(1035), Some(1));
        assert_eq!(w.at(1000), None);
    }
}
