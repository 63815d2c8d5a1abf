//! A Kineto trace's `[memory]` curve beside a CUDA memory snapshot of the same run. Both were
//! stamped by one process on one clock: a trace event at `baseTimeNanoseconds / 1000 + ts` is the
//! snapshot event with that `time_us` ([`crate::decode::kineto::KinetoTrace::epoch_us`]). Each
//! CUDA allocation (free) of the trace is matched to the snapshot's `alloc` (`free_requested`) at
//! the same address nearest in time, within [`MATCH_WINDOW_US`], whose requested bytes fit the
//! block the trace records (the allocator rounds requests up), so a point of the trace's curve
//! opens the allocator's state at that moment.

use crate::decode::kineto::{Kind, KinetoTrace};
use crate::decode::pickle_snapshot::TorchSnapshot;
use crate::fast_hash::FastMap;
use serde::{Deserialize, Serialize};

/// How far apart (µs) a trace event and its snapshot event may be stamped: the two records are
/// written a few calls apart inside the allocator, most within 1 µs.
pub const MATCH_WINDOW_US: f64 = 10.0;

/// The Kineto `device_type` of CUDA memory events.
const CUDA: i64 = 1;

/// The trace's CUDA memory events of one device, on the snapshot's clock.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceMemory {
    pub points: Vec<TracePoint>,
    /// Points matched to a snapshot event.
    pub matched: u64,
    /// The snapshot's first and last event times on the device (µs since the epoch), the
    /// timeline's time axis.
    pub snapshot_start_us: i64,
    pub snapshot_end_us: i64,
    /// The trace's first event's start and last event's end (µs since the epoch): the clock range
    /// it was recorded over, which [`TraceMemory::fit`] lays against the snapshot's.
    pub trace_start_us: f64,
    pub trace_end_us: f64,
}

impl TraceMemory {
    /// The point of the highest `Total Allocated` (the first of equals): the trace's peak.
    pub fn peak(&self) -> Option<&TracePoint> {
        self.points.iter().rev().max_by_key(|p| p.total_allocated)
    }

    /// The first and last point's times (µs since the epoch).
    pub fn extent(&self) -> Option<(f64, f64)> {
        Some((self.points.first()?.time_us, self.points.last()?.time_us))
    }

    /// How long (µs) the trace's clock range and the snapshot's overlap.
    pub fn overlap_us(&self) -> f64 {
        (self.trace_end_us.min(self.snapshot_end_us as f64) - self.trace_start_us.max(self.snapshot_start_us as f64)).max(0.0)
    }

    /// Whether this trace belongs with the snapshot, from the data alone: one process stamps both on
    /// one clock, so the trace of the snapshot's run has CUDA memory events that are the snapshot's
    /// own (same address, same µs). A time range that merely overlaps is not enough (another rank
    /// of the run records at the same time, on its own device and addresses); a trace of another
    /// run shares no clock range at all.
    pub fn fit(&self) -> TraceFit {
        let verdict = if self.matched > 0 {
            Verdict::Belongs
        } else if self.overlap_us() == 0.0 {
            let after = self.trace_start_us > self.snapshot_end_us as f64;
            let gap_us =
                if after { self.trace_start_us - self.snapshot_end_us as f64 } else { self.snapshot_start_us as f64 - self.trace_end_us };
            Verdict::Apart { gap_us, after }
        } else if self.points.is_empty() {
            Verdict::NoMemoryEvents
        } else {
            Verdict::NoMatch
        };
        TraceFit {
            points: self.points.len() as u64,
            matched: self.matched,
            trace_start_us: self.trace_start_us,
            trace_end_us: self.trace_end_us,
            overlap_us: self.overlap_us(),
            verdict,
        }
    }
}

/// How a Kineto trace relates to a snapshot ([`TraceMemory::fit`]): what the snapshot view needs
/// to offer only the traces of its run, and to say why it leaves the others out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceFit {
    /// The trace's CUDA memory events of the device, and how many are the snapshot's.
    pub points: u64,
    pub matched: u64,
    /// The trace's clock range (µs since the epoch; 0 without a base time).
    pub trace_start_us: f64,
    pub trace_end_us: f64,
    /// How long it overlaps the snapshot's events.
    pub overlap_us: f64,
    pub verdict: Verdict,
}

/// Whether a trace belongs with a snapshot, and if not, why.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Verdict {
    /// Some of its memory events are the snapshot's: the same run.
    Belongs,
    /// No `baseTimeNanoseconds`: its times cannot be put on any clock.
    NoClock,
    /// Recorded `gap_us` before (or `after`) the snapshot's events: another run.
    Apart { gap_us: f64, after: bool },
    /// Its time overlaps the snapshot's but it records no CUDA memory events of the device.
    NoMemoryEvents,
    /// Its time overlaps but none of its memory events is the snapshot's: another process's.
    NoMatch,
}

impl TraceFit {
    /// The fit of a trace without a base time.
    pub fn no_clock() -> TraceFit {
        TraceFit { points: 0, matched: 0, trace_start_us: 0.0, trace_end_us: 0.0, overlap_us: 0.0, verdict: Verdict::NoClock }
    }

    /// Why the trace is left out (`None` when it belongs), for a reader: what it is and what to open.
    pub fn why_not(&self, device: usize) -> Option<String> {
        Some(match self.verdict {
            Verdict::Belongs => return None,
            Verdict::NoClock => "it has no baseTimeNanoseconds, so its times cannot be put on the snapshot's clock".to_string(),
            Verdict::Apart { gap_us, after } => format!(
                "it was recorded {} {} the snapshot's events, so it is another run's",
                crate::units::duration_us(gap_us),
                if after { "after" } else { "before" }
            ),
            Verdict::NoMemoryEvents => format!(
                "its time overlaps the snapshot's but it records no CUDA memory events of device {device} (profile with profile_memory=True)"
            ),
            Verdict::NoMatch => format!(
                "its time overlaps the snapshot's, but none of its {} CUDA memory events of device {device} is the snapshot's (address and time): another process's",
                crate::units::count(self.points)
            ),
        })
    }
}

/// One `[memory]` event of the trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TracePoint {
    /// µs since the epoch.
    pub time_us: f64,
    /// The block's bytes: positive allocated, negative freed.
    pub bytes: i64,
    /// `Total Allocated` after the event (the trace's curve).
    pub total_allocated: i64,
    pub addr: u64,
    /// The matching snapshot event of the device, if any.
    pub event_index: Option<i64>,
}

/// Why a trace cannot be laid beside a snapshot.
#[derive(Debug, Clone, PartialEq)]
pub enum TraceMemoryError {
    NoDevice { device: usize, devices: usize },
    NoBaseTime,
}

impl std::fmt::Display for TraceMemoryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TraceMemoryError::NoDevice { device, devices } => write!(f, "the snapshot has no device {device} (it has {devices})"),
            TraceMemoryError::NoBaseTime => {
                f.write_str("the trace has no baseTimeNanoseconds, so its times cannot be put on the snapshot's clock")
            }
        }
    }
}

/// The trace's CUDA memory events on `device`, each with its matching snapshot event.
pub fn trace_memory(trace: &KinetoTrace, s: &TorchSnapshot, device: usize) -> Result<TraceMemory, TraceMemoryError> {
    let d = s.devices.get(device).ok_or(TraceMemoryError::NoDevice { device, devices: s.devices.len() })?;
    if trace.base_time_ns.is_none() {
        return Err(TraceMemoryError::NoBaseTime);
    }
    // The snapshot's allocations and requested frees by address.
    let (alloc, free) = (s.find_str("alloc"), s.find_str("free_requested"));
    let mut allocs: FastMap<i64, Vec<usize>> = FastMap::default();
    let mut frees: FastMap<i64, Vec<usize>> = FastMap::default();
    for i in 0..d.len() {
        let a = Some(d.action[i]);
        if a == alloc {
            allocs.entry(d.addr[i]).or_default().push(i);
        } else if a == free {
            frees.entry(d.addr[i]).or_default().push(i);
        }
    }
    let mut points = Vec::new();
    for e in trace.events.iter().filter(|e| e.kind == Kind::Memory) {
        let m = &trace.memory[e.detail as usize];
        let (Some(addr), Some(at)) = (m.addr, trace.epoch_us(e.ts)) else { continue };
        if m.device_type != Some(CUDA) || m.device_id.is_some_and(|id| id != device as i64) || m.bytes == 0 {
            continue;
        }
        let candidates = if m.bytes > 0 { &allocs } else { &frees };
        let nearest = candidates
            .get(&(addr as i64))
            .into_iter()
            .flatten()
            .copied()
            .filter(|&i| (d.time_us[i] as f64 - at).abs() <= MATCH_WINDOW_US && d.size[i] <= m.bytes.abs())
            .min_by(|&a, &b| (d.time_us[a] as f64 - at).abs().total_cmp(&(d.time_us[b] as f64 - at).abs()).then(a.cmp(&b)));
        let total = if m.total_allocated.is_finite() { m.total_allocated as i64 } else { 0 };
        points.push(TracePoint { time_us: at, bytes: m.bytes, total_allocated: total, addr, event_index: nearest.map(|i| i as i64) });
    }
    points.sort_by(|a, b| a.time_us.total_cmp(&b.time_us));
    let (snapshot_start_us, snapshot_end_us) = super::bands::time_extent(d);
    let (trace_start_us, trace_end_us) = clock_range(trace);
    Ok(TraceMemory {
        matched: points.iter().filter(|p| p.event_index.is_some()).count() as u64,
        points,
        snapshot_start_us,
        snapshot_end_us,
        trace_start_us,
        trace_end_us,
    })
}

/// How `trace` fits the snapshot's `device` ([`TraceMemory::fit`]); a trace without a base time
/// fits no clock.
pub fn trace_fit(trace: &KinetoTrace, s: &TorchSnapshot, device: usize) -> Result<TraceFit, TraceMemoryError> {
    match trace_memory(trace, s, device) {
        Ok(m) => Ok(m.fit()),
        Err(TraceMemoryError::NoBaseTime) => Ok(TraceFit::no_clock()),
        Err(e) => Err(e),
    }
}

/// The first event's start and the last event's end of `trace` (µs since the epoch; the trace has a
/// base time).
fn clock_range(trace: &KinetoTrace) -> (f64, f64) {
    let start = trace.events.iter().map(|e| e.ts).fold(f64::INFINITY, f64::min);
    let end = trace.events.iter().map(|e| e.ts + e.dur.max(0.0)).fold(f64::NEG_INFINITY, f64::max);
    if start.is_finite() && end.is_finite() {
        (trace.epoch_us(start).unwrap_or(start), trace.epoch_us(end).unwrap_or(end))
    } else {
        (0.0, 0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A trace recorded over `trace` (µs) beside a snapshot over 100..200 µs, with `points` CUDA
    /// memory events of which `matched` are the snapshot's.
    fn memory(trace: (f64, f64), points: usize, matched: u64) -> TraceMemory {
        let point = |i: usize| TracePoint {
            time_us: trace.0 + i as f64,
            bytes: 512,
            total_allocated: 512 * (i as i64 + 1),
            addr: 0x1000 + i as u64,
            event_index: (i < matched as usize).then_some(i as i64),
        };
        TraceMemory {
            points: (0..points).map(point).collect(),
            matched,
            snapshot_start_us: 100,
            snapshot_end_us: 200,
            trace_start_us: trace.0,
            trace_end_us: trace.1,
        }
    }

    #[test]
    fn a_trace_belongs_only_when_its_events_are_the_snapshots() {
        let own = memory((150.0, 250.0), 3, 2);
        assert_eq!(own.fit().verdict, Verdict::Belongs);
        assert_eq!((own.overlap_us(), own.fit().why_not(0)), (50.0, None));
        // Apart on the clock, either side, by the gap between the two ranges.
        assert_eq!(memory((300.0, 400.0), 3, 0).fit().verdict, Verdict::Apart { gap_us: 100.0, after: true });
        assert_eq!(memory((10.0, 40.0), 3, 0).fit().verdict, Verdict::Apart { gap_us: 60.0, after: false });
        // Overlapping but with nothing to match, or nothing matching: another process's.
        let silent = memory((120.0, 180.0), 0, 0).fit();
        assert_eq!(silent.verdict, Verdict::NoMemoryEvents);
        assert!(silent.why_not(3).expect("left out").contains("device 3"));
        let other = memory((120.0, 180.0), 4, 0).fit();
        assert_eq!(other.verdict, Verdict::NoMatch);
        assert!(other.why_not(0).expect("left out").contains("none of its 4 CUDA memory events"));
        assert!(TraceFit::no_clock().why_not(0).expect("left out").contains("baseTimeNanoseconds"));
    }

    #[test]
    fn the_peak_is_the_first_highest_point() {
        let mut m = memory((150.0, 250.0), 3, 3);
        m.points[2].total_allocated = m.points[1].total_allocated;
        assert_eq!(m.peak().map(|p| p.time_us), Some(151.0));
        assert_eq!(m.extent(), Some((150.0, 152.0)));
        assert_eq!(memory((150.0, 250.0), 0, 0).peak(), None);
    }
}
