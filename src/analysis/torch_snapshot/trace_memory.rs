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
    Ok(TraceMemory {
        matched: points.iter().filter(|p| p.event_index.is_some()).count() as u64,
        points,
        snapshot_start_us,
        snapshot_end_us,
    })
}
