//! Which planes and lines XProf's trace viewer shows, under which process and thread ids and names,
//! in which order (tsl `xplane_to_trace_events.cc`, `trace_events_to_json.cc`).
//!
//! - Processes: the host plane `/host:CPU` is pid 701; the device planes are the `/device:GPU:*`
//!   planes, else the `/device:TPU:*` ones, else the `/device:CUSTOM:*` ones, each pid 1 + plane id.
//!   A process is named after its plane; processes are sorted by pid (`process_sort_index` = pid).
//!   (Two device planes with one id would share a pid; XProf merges their threads, here the later
//!   plane replaces the earlier.)
//! - Threads: one per distinct line display id (the line's id when `display_id` is 0), cut to 32 bits
//!   as XProf's resource ids are; named by the line's display name (its name when that is empty).
//!   Lines sharing a display id share the thread (the last line's name wins). Threads are sorted and
//!   listed by tid (`thread_sort_index` = tid: XProf 2.24 writes that for host threads too, where the
//!   tsl source numbers them in line order).
//! - Device lines without events are not shown (XProf's preprocessing removes them from device
//!   planes; empty host lines stay).
//! - The events of lines named `Async XLA Ops` are left out (their thread is still listed), and so are
//!   XProf's internal events ([`INTERNAL_EVENTS`]).
//! - Where XProf's preprocessing derives lines ([`super::derived`]), a plane's lines take the thread
//!   ids it gives them and its derived lines are threads of their own.

use super::derived::DerivedTimeline;
use crate::decode::xplane::names::{
    CUSTOM_PLANE_PREFIX, GPU_PLANE_PREFIX, HOST_PLANE, PROGRAM_ID, SYMBOL_ID, TPU_PLANE_PREFIX, XLA_ASYNC_OPS_LINE,
};
use crate::decode::xplane::{Line, XSpace};
use std::collections::BTreeMap;

/// XProf's process id of the host threads (`kHostThreadsDeviceId`).
pub const HOST_PID: u32 = 701;
/// Device plane prefixes, the first that names any plane wins (`kGpuPlanePrefix`, `kTpuPlanePrefix`,
/// `kCustomPlanePrefix`).
pub const DEVICE_PLANE_PREFIXES: [&str; 3] = [GPU_PLANE_PREFIX, TPU_PLANE_PREFIX, CUSTOM_PLANE_PREFIX];
/// Events XProf never shows (`IsInternalEvent`): allocator events and tf.data producer/consumer marks.
pub const INTERNAL_EVENTS: [&str; 13] = [
    "MemoryAllocation",
    "MemoryDeallocation",
    "PrefetchProduce",
    "PrefetchConsume",
    "ParallelInterleaveProduce",
    "ParallelInterleaveConsume",
    "ParallelInterleaveInitializedInput",
    "ParallelMapProduce",
    "ParallelMapConsume",
    "MapAndBatchProduce",
    "MapAndBatchConsume",
    "ParseExampleProduce",
    "ParseExampleConsume",
];
/// Stats XProf never shows as arguments (`IsInternalStat`).
pub const INTERNAL_STATS: [&str; 8] = ["_pt", "_p", "_ct", "_c", "_r", "flops", PROGRAM_ID, SYMBOL_ID];

/// One process of the trace viewer: a plane.
#[derive(Debug, Clone, PartialEq)]
pub struct Process {
    pub pid: u32,
    /// The plane's name (`process_name`; none is written when empty).
    pub name: String,
    /// Index of the plane in the file.
    pub plane: usize,
    /// Sorted by tid.
    pub threads: Vec<Thread>,
}

/// One thread of the trace viewer: the lines of a plane with one display id.
#[derive(Debug, Clone, PartialEq)]
pub struct Thread {
    pub tid: u32,
    /// `thread_name` (none is written when empty).
    pub name: String,
    /// The lines (indices in the plane, file order) whose events the thread shows.
    pub lines: Vec<usize>,
    /// The derived lines (indices in the plane's [`super::derived::DerivedPlane::lines`]) it shows.
    pub derived: Vec<usize>,
}

/// The display id XProf gives a line, as its 32-bit resource id.
pub fn line_tid(line: &Line) -> u32 {
    let h = &line.header;
    (if h.display_id != 0 { h.display_id } else { h.id }) as u32
}

/// The name XProf shows for a line.
pub fn line_name(line: &Line) -> &str {
    let h = &line.header;
    if h.display_name.is_empty() {
        &h.name
    } else {
        &h.display_name
    }
}

/// The processes XProf's trace viewer shows for `space` with its `derived` lines, sorted by pid.
pub fn processes(space: &XSpace, derived: &DerivedTimeline) -> Vec<Process> {
    let mut by_pid: BTreeMap<u32, Process> = BTreeMap::new();
    let host = space.planes.iter().position(|p| p.name() == HOST_PLANE).map(|i| (HOST_PID, i));
    let devices = DEVICE_PLANE_PREFIXES
        .iter()
        .map(|prefix| space.planes.iter().enumerate().filter(|(_, p)| p.name().starts_with(prefix)).collect::<Vec<_>>())
        .find(|planes| !planes.is_empty())
        .unwrap_or_default();
    let devices = devices.into_iter().map(|(i, p)| ((p.meta.id as u32).wrapping_add(1), i));
    for (pid, plane_index) in host.into_iter().chain(devices) {
        let plane = &space.planes[plane_index];
        let process = by_pid.entry(pid).or_insert_with(|| Process { pid, name: String::new(), plane: plane_index, threads: Vec::new() });
        process.name = plane.name().to_string();
        process.plane = plane_index;
        let mut threads: BTreeMap<u32, Thread> = BTreeMap::new();
        let new_thread = |tid| Thread { tid, name: String::new(), lines: Vec::new(), derived: Vec::new() };
        let derived = derived.plane(plane_index);
        for (i, line) in plane.lines.iter().enumerate() {
            if pid != HOST_PID && line.event_count == 0 {
                continue;
            }
            let tid = derived.and_then(|d| d.line_tid(i)).unwrap_or_else(|| line_tid(line));
            let t = threads.entry(tid).or_insert_with(|| new_thread(tid));
            t.name = line_name(line).to_string();
            if line_name(line) != XLA_ASYNC_OPS_LINE {
                t.lines.push(i);
            }
        }
        for (k, line) in derived.map(|d| d.lines.as_slice()).unwrap_or_default().iter().enumerate() {
            let t = threads.entry(line.tid).or_insert_with(|| new_thread(line.tid));
            t.name = line.name.clone();
            t.derived.push(k);
        }
        process.threads = threads.into_values().collect();
    }
    by_pid.into_values().collect()
}
