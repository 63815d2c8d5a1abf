//! The memory counter tracks: per memory ID (allocator), its heap and stack over time, drawn under the
//! host process as step charts on the trace's time axis. A Kineto trace's tracks are its caching
//! allocators' `[memory]` events, per device ([`CounterKind::AllocatedReserved`],
//! [`super::kineto`]), drawn under the process that wrote them.
//!
//! Each step is one memory event of the host plane at its own time in the trace (its line's
//! `timestamp_ns` plus its offset), holding the allocator's heap and stack after that event: the same
//! values as the Memory Profile's snapshots, which XProf places by the event's raw offset alone. The
//! two clocks differ by the line's start, and where a trace's lines holding memory events start at
//! different times (the AMD MI300X traces) no one offset maps the Memory Profile's times to the
//! trace's: so the tracks read the events' own times ([`CounterSeries::of`]), and the Memory Profile
//! keeps each event's line start for its links into the trace
//! ([`AllocatorProfile::trace_time_ps`](crate::analysis::memory_profile::AllocatorProfile::trace_time_ps)).

use super::layout::HOST_PID;
use crate::analysis::memory_events;
use crate::decode::xplane::names::HOST_PLANE;
use crate::decode::xplane::XSpace;
use crate::decode::DecodeError;
use serde::{Deserialize, Serialize};

/// The host plane of `space`, where the Memory Profile reads its events.
fn host_plane(space: &XSpace) -> Option<usize> {
    space.planes.iter().position(|p| p.name() == HOST_PLANE)
}

/// What a track's two figures are.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum CounterKind {
    /// XProf's allocator: `heap_bytes` allocated on the heap, `stack_bytes` reserved for the stack;
    /// in use is their sum.
    #[default]
    HeapStack,
    /// PyTorch's caching allocator (Kineto's `[memory]` events): `heap_bytes` is its `Total
    /// Allocated`, `stack_bytes` its `Total Reserved` (what it holds from the device, the allocated
    /// bytes among them); in use is the larger (the reserved, but for the CPU's, which reserves none).
    AllocatedReserved,
}

/// One allocator's memory events in trace time, in columns: sorted by time, events at one time in
/// file order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AllocatorSeries {
    pub memory_id: String,
    /// The process whose tracks it is drawn under.
    pub pid: u32,
    pub kind: CounterKind,
    pub time_ps: Vec<i64>,
    pub heap_bytes: Vec<i64>,
    pub stack_bytes: Vec<i64>,
}

impl AllocatorSeries {
    pub fn len(&self) -> usize {
        self.time_ps.len()
    }

    pub fn is_empty(&self) -> bool {
        self.time_ps.is_empty()
    }

    /// The bytes in use after event `i` ([`CounterKind`]): heap + stack, summed as the Memory
    /// Profile sums them; a caching allocator's reserved bytes (or allocated, if more).
    fn in_use_bytes(&self, i: usize) -> i64 {
        match self.kind {
            CounterKind::HeapStack => self.stack_bytes[i].wrapping_add(self.heap_bytes[i]),
            CounterKind::AllocatedReserved => self.stack_bytes[i].max(self.heap_bytes[i]),
        }
    }
}

/// Every allocator's series of a trace, by memory ID (the Memory Profile's order).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CounterSeries {
    pub allocators: Vec<AllocatorSeries>,
}

impl CounterSeries {
    /// The series of the host plane's memory events of `space`.
    pub fn of(space: &XSpace) -> Result<Self, DecodeError> {
        let Some(host) = host_plane(space) else { return Ok(CounterSeries::default()) };
        // Per memory ID, its events as (time, heap, stack) in file order.
        let mut events: std::collections::BTreeMap<String, Vec<(i64, i64, i64)>> = Default::default();
        memory_events::for_each(space, None, |e| {
            if e.plane_index == host {
                let point = (e.time_ps, e.heap_allocated_bytes, e.stack_reserved_bytes);
                match events.get_mut(e.memory_id.as_ref()) {
                    Some(v) => v.push(point),
                    None => {
                        events.insert(e.memory_id.into_owned(), vec![point]);
                    }
                }
            }
        })?;
        let allocators = events
            .into_iter()
            .map(|(memory_id, mut points)| {
                // Stable: events at one time keep their file order.
                points.sort_by_key(|p| p.0);
                let mut a = AllocatorSeries { memory_id, pid: HOST_PID, ..Default::default() };
                for (t, heap, stack) in points {
                    a.time_ps.push(t);
                    a.heap_bytes.push(heap);
                    a.stack_bytes.push(stack);
                }
                a
            })
            .collect();
        Ok(CounterSeries { allocators })
    }

    pub fn allocator(&self, memory_id: &str) -> Option<&AllocatorSeries> {
        self.allocators.iter().find(|a| a.memory_id == memory_id)
    }

    pub fn memory_ids(&self) -> impl Iterator<Item = &str> {
        self.allocators.iter().map(|a| a.memory_id.as_str())
    }

    /// The tracks, as the page lists them.
    pub fn tracks(&self) -> CounterTracks {
        let tracks = self
            .allocators
            .iter()
            .filter(|a| !a.is_empty())
            .map(|a| CounterTrack {
                memory_id: a.memory_id.clone(),
                pid: a.pid,
                kind: a.kind,
                event_count: a.len() as u64,
                max_in_use_bytes: (0..a.len()).map(|i| a.in_use_bytes(i)).max().unwrap_or(0),
                start_ps: a.time_ps[0],
                end_ps: a.time_ps[a.len() - 1],
            })
            .collect();
        CounterTracks { tracks }
    }
}

/// One allocator's track, as the page lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CounterTrack {
    pub memory_id: String,
    /// The process whose tracks it is drawn under.
    pub pid: u32,
    pub kind: CounterKind,
    /// Events (steps) of the allocator.
    pub event_count: u64,
    /// The most in use at any time ([`CounterKind`]): the track's scale.
    pub max_in_use_bytes: i64,
    /// First and last event, in the trace's time.
    pub start_ps: i64,
    pub end_ps: i64,
}

/// Every allocator's track.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CounterTracks {
    pub tracks: Vec<CounterTrack>,
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

/// The steps of allocator `a` for `q`.
pub fn window(a: &AllocatorSeries, q: &CounterQuery) -> CounterWindow {
    let ps_per_px = (q.end_ps.saturating_sub(q.start_ps) / i64::from(q.width_px.max(1))).max(1);
    let first = a.time_ps.partition_point(|&t| t < q.start_ps).saturating_sub(1);
    let mut w = CounterWindow { memory_id: q.memory_id.clone(), start_ps: q.start_ps, end_ps: q.end_ps, ..Default::default() };
    // The pixel column of the step being merged.
    let mut column = None;
    for i in first..a.len() {
        let t = a.time_ps[i];
        if t > q.end_ps {
            break;
        }
        let (heap, stack, in_use) = (a.heap_bytes[i], a.stack_bytes[i], a.in_use_bytes(i));
        let col = if t < q.start_ps { -1 } else { (t - q.start_ps) / ps_per_px };
        if column == Some(col) {
            let k = w.len() - 1;
            w.heap_bytes[k] = heap;
            w.stack_bytes[k] = stack;
            w.min_in_use_bytes[k] = w.min_in_use_bytes[k].min(in_use);
            w.max_in_use_bytes[k] = w.max_in_use_bytes[k].max(in_use);
            w.count[k] += 1;
            continue;
        }
        column = Some(col);
        w.time_ps.push(t);
        w.heap_bytes.push(heap);
        w.stack_bytes.push(stack);
        w.min_in_use_bytes.push(in_use);
        w.max_in_use_bytes.push(in_use);
        w.count.push(1);
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(points: &[(i64, i64, i64)]) -> AllocatorSeries {
        AllocatorSeries {
            memory_id: "m".into(),
            pid: HOST_PID,
            kind: CounterKind::HeapStack,
            time_ps: points.iter().map(|p| p.0).collect(),
            heap_bytes: points.iter().map(|p| p.1).collect(),
            stack_bytes: points.iter().map(|p| p.2).collect(),
        }
    }

    #[test]
    fn steps_merge_per_pixel_keeping_extremes_and_counts() {
        let a = series(&[(1000, 10, 0), (1005, 50, 1), (1006, 20, 0), (1030, 40, 2), (1100, 5, 0)]);
        // 10 ps a pixel from 1000: 1000 and 1005/1006 share column 0; 1030 is column 3.
        let q = CounterQuery { memory_id: "m".into(), start_ps: 1000, end_ps: 1100, width_px: 10 };
        let w = window(&a, &q);
        assert_eq!(w.time_ps, vec![1000, 1030, 1100]);
        assert_eq!(w.count, vec![3, 1, 1]);
        assert_eq!((w.heap_bytes[0], w.min_in_use_bytes[0], w.max_in_use_bytes[0]), (20, 10, 51));
        // A window opening later starts with the step in effect (its own time), then the rest.
        let q = CounterQuery { start_ps: 1010, end_ps: 1040, width_px: 1000, ..q };
        let w = window(&a, &q);
        assert_eq!(w.time_ps, vec![1006, 1030]);
        assert_eq!(w.at(1020), Some(0));
        assert_eq!(w.at(1035), Some(1));
        assert_eq!(w.at(1000), None);
    }
}
