//! The Trace Viewer of a PyTorch profiler (Kineto) trace: every complete and instant event of its
//! [`Timeline`], on tracks laid out and named as chrome://tracing names them, linked by its flow
//! events, with its caching allocators' `[memory]` events as counter tracks.
//!
//! - **Processes** are the `pid`s that have events, sorted by `process_sort_index` (else by pid):
//!   Kineto gives the CPU process its pid and the GPUs 5,000,000 + device, so the CPU threads come
//!   before the GPU streams. A process is named as chrome://tracing names it: `python3 (pid 2031)`
//!   from its `process_name`, `Process Spans` without one, then its `process_labels` (`: CPU`,
//!   `: GPU 0`). A pid written as text (Kineto's `"Spans"`) is listed under an id from the top of the
//!   32-bit range ([`TEXT_IDS_FROM`] downwards, in text order), as is a tid.
//! - **Threads** are the (pid, tid) tracks with events, sorted by `thread_sort_index` (else tid),
//!   named by their last `thread_name` (`thread 2031 (python3)`, `stream 7`), else by the tid.
//! - **Times** are ps from the earliest event's start ([`Layout::origin_ns`]), the exact ns Kineto
//!   wrote ([`crate::decode::kineto::micros_to_ns`]).
//! - **Flows** chain each (category, id)'s `s`, `t`, `f` steps in time order (`s` first on ties), each
//!   step bound to a slice of its thread as the Chrome trace format binds it: the deepest complete
//!   event that encloses its time, or for an `f` without `"bp":"e"` the next one that starts at or
//!   after it. A chain starts at an `s`: an `f` without one (Kineto writes these for runtime calls
//!   that launched nothing) links nothing.
//! - **Details** are the event's `args` as written (strings as they are, anything else as JSON), and
//!   its category.

use super::counters::{AllocatorSeries, CounterKind, CounterSeries};
use super::details::{self, EventDetails};
use super::flows::{FlowIndex, Link, LinkKind};
use super::store::{GivenProcess, GivenThread, Source, TraceStore};
use crate::decode::kineto::{Kind, KinetoTrace, Label, MetadataKind, Timeline};
use std::collections::BTreeMap;
use std::io::{self, Write};

/// Ids of pids and tids written as text are taken downwards from here.
pub const TEXT_IDS_FROM: u32 = u32::MAX;

/// Where each track of a timeline is shown.
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    /// Processes in display order, each thread's `events` empty (see [`Layout::given`]).
    pub processes: Vec<GivenProcess>,
    /// Per track of the timeline: its store thread (index into [`TraceStore::threads`]).
    pub thread_of_track: Vec<Option<u32>>,
    /// Per store thread: its track (index into the timeline's tracks).
    pub track_of_thread: Vec<u32>,
    /// The id each shown pid is listed under.
    pub pid_ids: BTreeMap<Label, u32>,
    /// The earliest event's start: time 0 of the store.
    pub origin_ns: i64,
}

/// The 32-bit ids of `labels` (sorted, distinct): an integer that fits is itself, text and other
/// integers take ids down from [`TEXT_IDS_FROM`] in their order.
fn ids(labels: &[&Label]) -> Vec<u32> {
    let mut next = TEXT_IDS_FROM;
    labels
        .iter()
        .map(|l| match l.as_int().and_then(|i| u32::try_from(i).ok()) {
            Some(id) => id,
            None => {
                next -= 1;
                next + 1
            }
        })
        .collect()
}

impl Layout {
    /// The processes and threads of `tl` that have events, in chrome://tracing's order and names.
    pub fn of(tl: &Timeline) -> Layout {
        // The last metadata of each kind wins, as in chrome://tracing.
        let mut process_text: BTreeMap<(&Label, u8), &str> = BTreeMap::new();
        let mut thread_name: BTreeMap<(&Label, &Label), &str> = BTreeMap::new();
        let mut process_sort: BTreeMap<&Label, i64> = BTreeMap::new();
        let mut thread_sort: BTreeMap<(&Label, &Label), i64> = BTreeMap::new();
        for m in &tl.metadata {
            match m.kind {
                MetadataKind::ProcessName => drop(process_text.insert((&m.pid, 0), &m.text)),
                MetadataKind::ProcessLabels => drop(process_text.insert((&m.pid, 1), &m.text)),
                MetadataKind::ProcessSortIndex => drop(process_sort.insert(&m.pid, m.sort_index)),
                MetadataKind::ThreadName => drop(thread_name.insert((&m.pid, &m.tid), &m.text)),
                MetadataKind::ThreadSortIndex => drop(thread_sort.insert((&m.pid, &m.tid), m.sort_index)),
            }
        }
        let mut has_events = vec![false; tl.tracks.len()];
        for &t in &tl.track {
            has_events[t as usize] = true;
        }
        // Tracks with events, by pid then tid.
        let mut by_pid: BTreeMap<&Label, BTreeMap<&Label, u32>> = BTreeMap::new();
        for (k, (pid, tid)) in tl.tracks.iter().enumerate().filter(|&(k, _)| has_events[k]) {
            by_pid.entry(pid).or_default().insert(tid, k as u32);
        }
        let pids: Vec<&Label> = by_pid.keys().copied().collect();
        let pid_ids = ids(&pids);
        let sort_key = |sort: Option<i64>, label: &Label| sort.or(label.as_int()).unwrap_or(i64::MAX);
        let mut order: Vec<usize> = (0..pids.len()).collect();
        order.sort_by_key(|&i| (sort_key(process_sort.get(pids[i]).copied(), pids[i]), pids[i]));
        let mut layout = Layout {
            processes: Vec::new(),
            thread_of_track: vec![None; tl.tracks.len()],
            track_of_thread: Vec::new(),
            pid_ids: pids.iter().zip(&pid_ids).map(|(&l, &id)| (l.clone(), id)).collect(),
            origin_ns: tl.ts_ns.iter().copied().min().unwrap_or(0),
        };
        for i in order {
            let (pid, tids) = (pids[i], &by_pid[pids[i]]);
            let name = match process_text.get(&(pid, 0)).filter(|n| !n.is_empty()) {
                Some(n) => format!("{n} (pid {pid})"),
                None => format!("Process {pid}"),
            };
            let name = match process_text.get(&(pid, 1)).filter(|l| !l.is_empty()) {
                Some(labels) => format!("{name}: {labels}"),
                None => name,
            };
            let tid_labels: Vec<&Label> = tids.keys().copied().collect();
            let tid_ids = ids(&tid_labels);
            let mut threads: Vec<(i64, &Label, u32, u32)> = tid_labels
                .iter()
                .zip(&tid_ids)
                .map(|(&tid, &id)| (sort_key(thread_sort.get(&(pid, tid)).copied(), tid), tid, id, tids[tid]))
                .collect();
            threads.sort();
            let threads = threads
                .into_iter()
                .map(|(_, tid, id, track)| {
                    layout.thread_of_track[track as usize] = Some(layout.track_of_thread.len() as u32);
                    layout.track_of_thread.push(track);
                    let name = thread_name.get(&(pid, tid)).map(|n| n.trim().to_string()).unwrap_or_else(|| tid.to_string());
                    GivenThread { tid: id, name, events: Vec::new() }
                })
                .collect();
            layout.processes.push(GivenProcess { pid: pid_ids[i], name, threads });
        }
        layout
    }

    /// The processes with each thread's events (indices into the timeline).
    fn given(&self, tl: &Timeline) -> Vec<GivenProcess> {
        let mut events: Vec<Vec<u32>> = vec![Vec::new(); self.track_of_thread.len()];
        for (e, &track) in tl.track.iter().enumerate() {
            if let Some(t) = self.thread_of_track[track as usize] {
                events[t as usize].push(e as u32);
            }
        }
        let mut events = events.into_iter();
        let mut processes = self.processes.clone();
        for t in processes.iter_mut().flat_map(|p| &mut p.threads) {
            t.events = events.next().unwrap_or_default();
        }
        processes
    }

    /// A time of the timeline (ns) in the store's ps.
    pub fn ps(&self, ts_ns: i64) -> i64 {
        ts_ns.saturating_sub(self.origin_ns).saturating_mul(1000)
    }
}

/// The event store of `tl` laid out by `layout`.
pub fn store(tl: &Timeline, layout: &Layout) -> TraceStore {
    let start_ps: Vec<i64> = tl.ts_ns.iter().map(|&t| layout.ps(t)).collect();
    let duration_ps: Vec<i64> = tl.dur_ns.iter().map(|&d| d.saturating_mul(1000)).collect();
    TraceStore::from_events(&layout.given(tl), tl.names.clone(), &start_ps, &duration_ps, &tl.name)
}

/// The timeline index of store event `event`.
fn index_of(store: &TraceStore, event: u32) -> Option<usize> {
    match store.source(event)? {
        Source::Given { index } => Some(index as usize),
        _ => None,
    }
}

/// Event `event` in full: its `args` (sorted by key) and category; `None` for an index out of range.
pub fn details(tl: &Timeline, store: &TraceStore, event: u32) -> Option<EventDetails> {
    let i = index_of(store, event)?;
    let args = serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(tl.args_json(i)).unwrap_or_default();
    let args = args
        .into_iter()
        .map(|(k, v)| {
            let text = match v {
                serde_json::Value::String(s) => s,
                other => other.to_string(),
            };
            (k, text)
        })
        .collect();
    let category = tl.names[tl.category[i] as usize].clone();
    details::of_event(store, event, tl.name_of(i).to_string(), args, category)
}

/// The store event a flow step at `ts_ps` on store thread `thread` binds to: the deepest complete
/// event enclosing it (`enclosing`), else the first complete event starting at or after it.
fn bind(tl: &Timeline, store: &TraceStore, thread: u32, ts_ps: i64, enclosing: bool) -> Option<u32> {
    let t = store.threads.get(thread as usize)?;
    let starts = &store.start_ps()[t.events.start as usize..t.events.end as usize];
    let complete = |e: u32| index_of(store, e).is_some_and(|i| !tl.instant[i]);
    if !enclosing {
        let first = t.events.start + starts.partition_point(|&s| s < ts_ps) as u32;
        return (first..t.events.end).find(|&e| complete(e));
    }
    // The latest-starting event that encloses the time is the deepest (events nest, and on a tie of
    // starts the shorter, deeper one sorts later); those before it ended before the time.
    let after = t.events.start + starts.partition_point(|&s| s <= ts_ps) as u32;
    let earliest = t.events.start + starts.partition_point(|&s| s < ts_ps.saturating_sub(t.max_duration_ps)) as u32;
    (earliest..after).rev().find(|&e| complete(e) && store.start_ps()[e as usize].saturating_add(store.duration_ps(e as usize)) >= ts_ps)
}

/// The flow links of `tl` between `store`'s events ([`LinkKind::Chrome`]), categories named by the
/// store's names.
pub fn flows(tl: &Timeline, store: &TraceStore, layout: &Layout) -> FlowIndex {
    // Steps by (category, id), then time, `s` before `t` before `f`.
    let rank = |phase: u8| match phase {
        b's' => 0,
        b't' => 1,
        _ => 2,
    };
    let mut steps: Vec<(u32, i64, i64, u8, Option<u32>)> = tl
        .flows
        .iter()
        .map(|f| {
            let ts_ps = layout.ps(f.ts_ns);
            let event = layout.thread_of_track[f.track as usize].and_then(|t| bind(tl, store, t, ts_ps, f.enclosing));
            (f.category, f.id, ts_ps, rank(f.phase), event)
        })
        .collect();
    steps.sort_unstable();
    let mut links = Vec::new();
    let mut from: Option<u32> = None;
    for (k, &(category, id, _, rank, event)) in steps.iter().enumerate() {
        if k > 0 && (steps[k - 1].0, steps[k - 1].1) != (category, id) {
            from = None;
        }
        match rank {
            0 => from = event,
            _ => {
                if let (Some(a), Some(b)) = (from, event) {
                    links.push(Link { from: a, to: b, kind: LinkKind::Chrome { category, id } });
                }
                from = if rank == 1 { event } else { None };
            }
        }
    }
    FlowIndex::from_links(links, store)
}

/// The memory ID of a `[memory]` event's device, as PyTorch names devices.
fn memory_id(device_type: Option<i64>, device_id: Option<i64>) -> String {
    match (device_type, device_id) {
        (Some(0), _) => "CPU".to_string(),
        (Some(1), Some(id)) => format!("GPU {id}"),
        (t, id) => format!("device type {} id {}", t.map_or("?".into(), |t| t.to_string()), id.map_or("?".into(), |i| i.to_string())),
    }
}

/// The caching allocators' series of `trace`: per device, each `[memory]` event's `Total Allocated`
/// and `Total Reserved` at its time (an event without them is left out), drawn under the process of
/// the device's first event.
pub fn counters(trace: &KinetoTrace, layout: &Layout) -> CounterSeries {
    let pid_of = |pid: Option<i64>| layout.pid_ids.get(&Label::Int(pid?)).copied();
    let mut by_device: BTreeMap<String, AllocatorSeries> = BTreeMap::new();
    let mut points: BTreeMap<String, Vec<(i64, i64, i64)>> = BTreeMap::new();
    for e in trace.events.iter().filter(|e| e.kind == Kind::Memory) {
        let m = &trace.memory[e.detail as usize];
        if m.total_allocated.is_nan() || m.total_reserved.is_nan() {
            continue;
        }
        let id = memory_id(m.device_type, m.device_id);
        by_device.entry(id.clone()).or_insert_with(|| AllocatorSeries {
            memory_id: id.clone(),
            // A pid written as text (never an allocator's, in Kineto's traces): the first process.
            pid: pid_of(e.pid).or_else(|| layout.processes.first().map(|p| p.pid)).unwrap_or_default(),
            kind: CounterKind::AllocatedReserved,
            ..Default::default()
        });
        let (allocated, reserved) = (m.total_allocated as i64, m.total_reserved as i64);
        points.entry(id).or_default().push((layout.ps(crate::decode::kineto::micros_to_ns(e.ts)), allocated, reserved));
    }
    let allocators = by_device
        .into_iter()
        .map(|(id, mut a)| {
            let mut p = points.remove(&id).unwrap_or_default();
            // Stable: events at one time keep their file order.
            p.sort_by_key(|p| p.0);
            (a.time_ps, a.heap_bytes, a.stack_bytes) =
                (p.iter().map(|p| p.0).collect(), p.iter().map(|p| p.1).collect(), p.iter().map(|p| p.2).collect());
            a
        })
        .collect();
    CounterSeries { allocators }
}

/// `ns` as µs with three decimals, as Kineto writes times.
fn write_micros(out: &mut impl Write, ns: i64) -> io::Result<()> {
    let sign = if ns < 0 { "-" } else { "" };
    let abs = ns.unsigned_abs();
    write!(out, "{sign}{}.{:03}", abs / 1000, abs % 1000)
}

/// A label as JSON: an integer, or a string.
fn label_json(l: &Label) -> String {
    match l {
        Label::Int(i) => i.to_string(),
        Label::Text(t) => serde_json::Value::from(t.as_str()).to_string(),
    }
}

/// Writes the Chrome trace JSON of the events that overlap `range_ps` (all when `None`), as the
/// trace wrote them (pid, tid, `ts`/`dur` in µs, category, `args`), after the metadata naming the
/// shown processes and threads; returns the number of events written. Flow events are not written.
pub fn write_json(
    tl: &Timeline,
    store: &TraceStore,
    layout: &Layout,
    range_ps: Option<(i64, i64)>,
    out: &mut impl Write,
) -> io::Result<usize> {
    out.write_all(br#"{"displayTimeUnit":"ns","traceEvents":["#)?;
    let str_json = |s: &str| serde_json::Value::from(s).to_string();
    for (k, t) in store.threads.iter().enumerate() {
        let (pid, tid) = &tl.tracks[layout.track_of_thread[k] as usize];
        let process = store.processes.iter().find(|p| p.threads.contains(&k)).map_or("", |p| p.name.as_str());
        if store.processes.iter().any(|p| p.threads.start == k) {
            writeln!(
                out,
                r#"{{"ph":"M","name":"process_name","pid":{},"tid":0,"args":{{"name":{}}}}},"#,
                label_json(pid),
                str_json(process)
            )?;
        }
        writeln!(
            out,
            r#"{{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":{}}}}},"#,
            label_json(pid),
            label_json(tid),
            str_json(&t.name)
        )?;
    }
    let mut written = 0;
    for (k, t) in store.threads.iter().enumerate() {
        let (pid, tid) = &tl.tracks[layout.track_of_thread[k] as usize];
        for e in t.events.clone() {
            let (start, duration) = (store.start_ps()[e as usize], store.duration_ps(e as usize).max(0));
            if range_ps.is_some_and(|(from, to)| start > to || start + duration < from) {
                continue;
            }
            let Some(i) = index_of(store, e) else { continue };
            // A thread-scoped instant, or a complete event.
            let phase = if tl.instant[i] { r#""i","s":"t""# } else { r#""X""# };
            let (category, name) = (str_json(&tl.names[tl.category[i] as usize]), str_json(tl.name_of(i)));
            write!(out, r#"{{"ph":{phase},"cat":{category},"name":{name},"pid":{},"tid":{},"ts":"#, label_json(pid), label_json(tid))?;
            write_micros(out, tl.ts_ns[i])?;
            if !tl.instant[i] {
                out.write_all(br#","dur":"#)?;
                write_micros(out, tl.dur_ns[i])?;
            }
            let args = tl.args_json(i);
            if !args.is_empty() {
                out.write_all(br#","args":"#)?;
                out.write_all(args.as_bytes())?;
            }
            out.write_all(b"},\n")?;
            written += 1;
        }
    }
    out.write_all(b"{}]}")?;
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_names_and_orders_tracks_and_flows_bind_as_chrome_binds_them() {
        let trace = KinetoTrace::decode(
            br#"{"schemaVersion":1,"traceEvents":[
            {"name":"process_name","ph":"M","ts":0,"pid":0,"tid":0,"args":{"name":"python3"}},
            {"name":"process_labels","ph":"M","ts":0,"pid":0,"tid":0,"args":{"labels":"GPU 0"}},
            {"name":"process_sort_index","ph":"M","ts":0,"pid":0,"tid":0,"args":{"sort_index":5000000}},
            {"name":"process_sort_index","ph":"M","ts":0,"pid":10,"tid":0,"args":{"sort_index":10}},
            {"name":"thread_name","ph":"M","ts":0,"pid":0,"tid":7,"args":{"name":"stream 7 "}},
            {"ph":"X","cat":"kernel","name":"K","ts":0.05,"dur":0.03,"pid":0,"tid":7},
            {"ph":"X","cat":"cpu_op","name":"A","ts":0,"dur":0.1,"pid":10,"tid":10},
            {"ph":"X","cat":"cuda_runtime","name":"L","ts":0.01,"dur":0.01,"pid":10,"tid":10},
            {"ph":"i","s":"t","name":"[memory]","ts":0.01,"pid":10,"tid":10},
            {"ph":"s","id":1,"cat":"ac2g","name":"ac2g","ts":0.01,"pid":10,"tid":10},
            {"ph":"f","id":1,"cat":"ac2g","name":"ac2g","ts":0.05,"pid":0,"tid":7,"bp":"e"},
            {"ph":"f","id":2,"cat":"ac2g","name":"ac2g","ts":0.01,"pid":10,"tid":10,"bp":"e"},
            {"ph":"s","id":3,"cat":"fwdbwd","name":"fwdbwd","ts":0,"pid":10,"tid":10},
            {"ph":"f","id":3,"cat":"fwdbwd","name":"fwdbwd","ts":0.04,"pid":0,"tid":7}]}"#,
        )
        .unwrap();
        let tl = &trace.timeline;
        let layout = Layout::of(tl);
        let names: Vec<(&str, Vec<&str>)> =
            layout.processes.iter().map(|p| (p.name.as_str(), p.threads.iter().map(|t| t.name.as_str()).collect())).collect();
        assert_eq!(names, [("Process 10", vec!["10"]), ("python3 (pid 0): GPU 0", vec!["stream 7"])], "CPU first, by sort index");
        let store = store(tl, &layout);
        assert_eq!(store.event_count(), 4);
        let index = flows(tl, &store, &layout);
        let named = |e: u32| store.name_of(e).to_string();
        let links: Vec<(String, String, String)> = index
            .links()
            .iter()
            .map(|l| {
                (
                    named(l.from),
                    named(l.to),
                    store.names()[match l.kind {
                        LinkKind::Chrome { category, .. } => category as usize,
                        _ => unreachable!(),
                    }]
                    .clone(),
                )
            })
            .collect();
        // The launch's `s` binds to the launch (not the instant at its time, not the op around it);
        // the `f` without "bp":"e" to the next slice; the lone `f` links nothing.
        let want = |a: &str, b: &str, c: &str| (a.to_string(), b.to_string(), c.to_string());
        assert_eq!(links, [want("A", "K", "fwdbwd"), want("L", "K", "ac2g")]);
        let d = details(tl, &store, index.links()[1].to).unwrap();
        assert_eq!((d.category.as_str(), d.start_ps, d.duration_ps), ("kernel", 50_000, 30_000));
        let series = counters(&trace, &layout);
        assert!(series.allocators.is_empty(), "a [memory] event without totals draws nothing");
    }
}
