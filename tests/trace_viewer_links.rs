//! The Trace Viewer's flow arrows and memory counter tracks on real traces: every link joins events
//! that carry the same link stats, no link meeting a window is left out of its answer, and the
//! counters are the Memory Profile's timeline on the trace's clock. (The Memory Profile's own links
//! into the trace: `tests/memory_profile_trace_links.rs`.)

mod common;

use std::path::Path;
use tidemark::analysis::memory_events;
use tidemark::analysis::trace_viewer::counters::CounterQuery;
use tidemark::analysis::trace_viewer::flows::{Link, LinkKind};
use tidemark::decode::Profile;
use tidemark::engine::trace_viewer::FlowQuery;
use tidemark::engine::Session;

const D1: &str = "tf/d1_tf_keras_bfc/d1_tf_keras_bfc.xplane.pb.gz";
const A2: &str = "jax/a2_mlp_train/a2_mlp_train.xplane.pb.gz";

fn open_at(s: &mut Session, path: &Path) -> u32 {
    let bytes = std::fs::read(path).unwrap();
    s.open(&path.display().to_string(), bytes, &mut |_, _| {}).unwrap().id
}

fn window(start_ps: i64, end_ps: i64, threads: Option<Vec<u32>>) -> FlowQuery {
    FlowQuery { start_ps, end_ps, threads, event: None, limit: u32::MAX }
}

/// Every link of file `id`, with the two ends' start times.
fn links(s: &mut Session, id: u32) -> Vec<(Link, i64, i64)> {
    let links = s.trace_flow_index(id).unwrap().links().to_vec();
    let store = s.trace_store(id).unwrap();
    links.into_iter().map(|l| (l, store.start_ps()[l.from as usize], store.start_ps()[l.to as usize])).collect()
}

/// No link meeting a window is missing from its answer, at any window, for any set of threads, and
/// each event's own query finds every link it is an end of.
fn assert_no_link_lost(s: &mut Session, id: u32) {
    let all = links(s, id);
    let outline = s.trace_outline(id).unwrap();
    let (t0, t1) = (outline.start_ps, outline.end_ps);
    let span = (t1 - t0).max(1);
    let thread_count = s.trace_store(id).unwrap().threads.len() as u32;
    let thread_of = |s: &mut Session, e: u32| {
        let store = s.trace_store(id).unwrap();
        store.threads.iter().position(|t| t.events.contains(&e)).unwrap() as u32
    };
    let ends: Vec<(u32, u32)> = all.iter().map(|(l, _, _)| (thread_of(s, l.from), thread_of(s, l.to))).collect();
    let some_threads: Vec<u32> = (0..thread_count).step_by(2).collect();
    for k in 0..40i64 {
        let (a, b) = (t0 + span * k / 40, t0 + span * (k + 1) / 40 + span / 97);
        for threads in [None, Some(some_threads.clone())] {
            let expected = all
                .iter()
                .zip(&ends)
                .filter(|((_, x, y), (tf, tt))| {
                    x.min(y) <= &b && x.max(y) >= &a && threads.as_ref().is_none_or(|ts| ts.contains(tf) || ts.contains(tt))
                })
                .count() as u64;
            let reply = s.trace_flows(id, &window(a, b, threads.clone())).unwrap();
            assert_eq!(reply.total, expected, "window {a}..{b}");
            assert_eq!(reply.arrows.len() as u64, expected);
            for arrow in &reply.arrows {
                assert_eq!((arrow.from_ps.min(arrow.to_ps) <= b, arrow.from_ps.max(arrow.to_ps) >= a), (true, true));
            }
        }
    }
    for (l, _, _) in all.iter().take(500) {
        for e in [l.from, l.to] {
            let reply = s.trace_flows(id, &FlowQuery { event: Some(e), ..window(0, 0, None) }).unwrap();
            assert!(reply.arrows.iter().any(|a| a.link == *l), "event {e} lost link {l:?}");
            assert!(reply.arrows.iter().all(|a| a.link.from == e || a.link.to == e));
        }
    }
}

/// The producer/consumer contexts of a CPU trace (thread-pool scheduling → the regions XProf adds)
/// link each producer to the consumers of the same (type, id), as the event details show them.
#[test]
fn cpu_context_links_join_producers_to_their_consumers() {
    for rel in [D1, A2] {
        let mut s = Session::new();
        let id = open_at(&mut s, &common::fixture(rel));
        let all = links(&mut s, id);
        assert!(!all.is_empty(), "{rel}: a CPU trace with thread-pool regions has context links");
        for (l, _, _) in all.iter().step_by((all.len() / 100).max(1)) {
            let LinkKind::Context { context_type, id: cid } = l.kind else { panic!("{rel}: {l:?} is not a context link") };
            let from = s.trace_event_details(id, l.from).unwrap().unwrap();
            let to = s.trace_event_details(id, l.to).unwrap().unwrap();
            assert!(from.contexts.iter().any(|c| c.producer && c.context_type == context_type && c.id == cid), "{rel}: {from:?}");
            assert!(to.contexts.iter().any(|c| !c.producer && c.context_type == context_type && c.id == cid), "{rel}: {to:?}");
        }
        assert_no_link_lost(&mut s, id);
    }
}

/// Every link of the TPU trace joins events that carry the link's stats, and none is lost at any
/// window. (This file's events have no `flow` stats of their own: the flows XProf's JSON shows are
/// added by its preprocessing, which Tidemark does not do; see the module doc of `flows`.)
#[test]
fn tpu_links_join_events_with_matching_stats() {
    let Some(path) = common::device_fixture("jax_tpu_v6e_inference/tpu_v6e_inference.xplane.pb") else { return };
    let mut s = Session::new();
    let id = open_at(&mut s, &path);
    for (l, from_ps, to_ps) in links(&mut s, id).iter().take(300) {
        let (from, to) = (s.trace_event_details(id, l.from).unwrap().unwrap(), s.trace_event_details(id, l.to).unwrap().unwrap());
        match l.kind {
            LinkKind::Flow { id: fid, .. } => {
                assert!(from_ps <= to_ps);
                assert_eq!((from.flow.map(|f| f.id), to.flow.map(|f| f.id)), (Some(fid), Some(fid)));
            }
            LinkKind::Context { context_type, id: cid } => {
                assert!(from.contexts.iter().any(|c| c.producer && c.context_type == context_type && c.id == cid));
                assert!(to.contexts.iter().any(|c| !c.producer && c.context_type == context_type && c.id == cid));
            }
            LinkKind::Launch { .. } => {}
            LinkKind::Chrome { .. } => panic!("{l:?}: an XSpace has no Chrome trace flows"),
        }
    }
    assert_no_link_lost(&mut s, id);
}

/// On the AMD trace each kernel launch on the host links to the kernel on the device with its
/// correlation id.
#[test]
fn gpu_launches_link_to_their_kernels() {
    let Some(path) = common::device_fixture("jax_mi300x_attention/mi300x_attention.xplane.pb") else { return };
    let mut s = Session::new();
    let id = open_at(&mut s, &path);
    let all = links(&mut s, id);
    let launches: Vec<_> = all.iter().filter(|(l, _, _)| matches!(l.kind, LinkKind::Launch { .. })).collect();
    assert!(launches.len() >= 100, "{} launches", launches.len());
    let arg = |d: &tidemark::analysis::trace_viewer::details::EventDetails| {
        d.args.iter().find(|(k, _)| k == "correlation_id").map(|(_, v)| v.clone())
    };
    for (l, _, _) in launches.iter().take(200) {
        let LinkKind::Launch { correlation_id } = l.kind else { unreachable!() };
        let (from, to) = (s.trace_event_details(id, l.from).unwrap().unwrap(), s.trace_event_details(id, l.to).unwrap().unwrap());
        assert_eq!(from.pid, 701);
        assert_ne!(to.pid, 701);
        assert_eq!(arg(&from), Some(correlation_id.to_string()));
        assert_eq!(arg(&to), Some(correlation_id.to_string()));
    }
    assert_no_link_lost(&mut s, id);
}

/// The counter track of each allocator is its Memory Profile timeline: at full resolution one step
/// per distinct time holding the values after that time's last event, equal to XProf's sampled points
/// where their time is unique; zoomed out, steps merge per pixel and keep every event's extremes.
#[test]
fn counter_tracks_are_the_memory_profile_timeline_on_the_trace_clock() {
    let mut s = Session::new();
    let id = open_at(&mut s, &common::fixture(D1));
    let tracks = s.trace_counter_tracks(id).unwrap();
    let profile = s.cached_memory_profile(id).unwrap().clone();
    assert_eq!(tracks.tracks.iter().map(|t| t.memory_id.as_str()).collect::<Vec<_>>(), profile.memory_ids().collect::<Vec<_>>());
    let oracle = common::json("tf/d1_tf_keras_bfc/d1_tf_keras_bfc.memory_profile.json.gz");
    let mut checked_oracle = 0;
    for t in &tracks.tracks {
        let a = profile.allocator(&t.memory_id).unwrap();
        let full = CounterQuery { memory_id: t.memory_id.clone(), start_ps: t.start_ps, end_ps: t.end_ps, width_px: u32::MAX };
        let w = s.trace_counters(id, &full).unwrap();
        assert_eq!(w.count.iter().map(|&c| c as u64).sum::<u64>(), t.event_count);
        let mut times: Vec<i64> = a.snapshots.iter().map(|x| x.time_offset_ps).collect();
        times.dedup();
        assert_eq!(w.len(), times.len(), "{}: one step per distinct time", t.memory_id);
        for (i, snap) in a.snapshots.iter().enumerate() {
            let last_at_time = a.snapshots.get(i + 1).is_none_or(|n| n.time_offset_ps != snap.time_offset_ps);
            if last_at_time {
                let k = w.at(a.trace_time_ps(i).unwrap()).unwrap();
                assert_eq!((w.heap_bytes[k], w.stack_bytes[k]), (snap.stats.heap_allocated_bytes, snap.stats.stack_reserved_bytes));
            }
        }
        // XProf's points: each is one of the events at its time; where it is the only one, the
        // counter shows its values there.
        let points = oracle["memoryProfilePerAllocator"][&t.memory_id]["memoryProfileSnapshots"].as_array().unwrap();
        for p in points {
            let time: i64 = p["timeOffsetPs"].as_str().unwrap().parse().unwrap();
            let stats = &p["aggregationStats"];
            let int = |f: &str| stats[f].as_str().map_or(0, |v| v.parse::<i64>().unwrap());
            let xprof = (int("heapAllocatedBytes"), int("stackReservedBytes"));
            let ours: Vec<(usize, (i64, i64))> = a
                .snapshots
                .iter()
                .enumerate()
                .filter(|(_, x)| x.time_offset_ps == time)
                .map(|(i, x)| (i, (x.stats.heap_allocated_bytes, x.stats.stack_reserved_bytes)))
                .collect();
            assert!(ours.iter().any(|o| o.1 == xprof), "{}: XProf's point at {time} is not one of the events there", t.memory_id);
            if let [(i, _)] = ours[..] {
                let k = w.at(a.trace_time_ps(i).unwrap()).unwrap();
                assert_eq!((w.heap_bytes[k], w.stack_bytes[k]), xprof);
                checked_oracle += 1;
            }
        }
        // 300 pixels: fewer steps, every event counted, each step's extremes bound its events.
        let q = CounterQuery { width_px: 300, ..full };
        let z = s.trace_counters(id, &q).unwrap();
        assert!(z.len() <= 301);
        assert_eq!(z.count.iter().map(|&c| c as u64).sum::<u64>(), t.event_count);
        let mut snaps = a.snapshots.iter();
        for k in 0..z.len() {
            for snap in snaps.by_ref().take(z.count[k] as usize) {
                let v = snap.stats.in_use_bytes();
                assert!(z.min_in_use_bytes[k] <= v && v <= z.max_in_use_bytes[k]);
            }
        }
        assert_eq!(z.max_in_use_bytes.iter().max(), Some(&t.max_in_use_bytes));
    }
    assert!(checked_oracle >= 5, "{checked_oracle} of XProf's points compared");
}

/// Each allocator's memory events of the host plane, in file order: (time in the trace, raw offset,
/// heap, stack).
fn host_memory_events(path: &Path) -> std::collections::BTreeMap<String, Vec<(i64, i64, i64, i64)>> {
    let file = common::open_at(path);
    let Profile::XSpace(space) = &file.profile else { panic!() };
    let host = space.planes.iter().position(|p| p.name() == "/host:CPU").unwrap();
    let mut out: std::collections::BTreeMap<String, Vec<_>> = Default::default();
    memory_events::for_each(space, None, |e| {
        if e.plane_index == host {
            out.entry(e.memory_id.to_string()).or_default().push((e.time_ps, e.offset_ps, e.heap_allocated_bytes, e.stack_reserved_bytes));
        }
    })
    .unwrap();
    out
}

/// On device traces whose host lines holding memory events start at different times (the MI300X
/// traces: no one offset maps the Memory Profile's times to the trace's), every counter step sits at
/// its events' own time in the trace (line start + offset) with the values after the last of them,
/// so each of XProf's Memory Profile points (raw offsets) shows on the track at its event's time.
#[test]
fn counter_steps_are_at_each_memory_events_own_time_on_device_traces() {
    let names = [
        "jax_mi300x_conv/mi300x_conv",
        "jax_mi300x_attention/mi300x_attention",
        "tf_v100_multi_worker/v100_worker",
        "jax_tpu_v6e_inference/tpu_v6e_inference",
    ];
    let mut several_line_starts = 0;
    for name in names {
        let Some(path) = common::device_fixture(&format!("{name}.xplane.pb")) else { continue };
        let oracle = common::json_at(&common::device_fixture(&format!("{name}.memory_profile.json")).unwrap());
        let mut s = Session::new();
        let id = open_at(&mut s, &path);
        let events = host_memory_events(&path);
        let mut starts: Vec<i64> = events.values().flatten().map(|e| e.0 - e.1).collect();
        starts.sort_unstable();
        starts.dedup();
        several_line_starts += usize::from(starts.len() > 1);
        let profile = s.cached_memory_profile(id).unwrap().clone();
        let tracks = s.trace_counter_tracks(id).unwrap();
        assert_eq!(tracks.tracks.iter().map(|t| t.memory_id.as_str()).collect::<Vec<_>>(), profile.memory_ids().collect::<Vec<_>>());
        assert_eq!(
            tracks.tracks.iter().map(|t| t.memory_id.as_str()).collect::<Vec<_>>(),
            events.keys().map(String::as_str).collect::<Vec<_>>()
        );
        let mut xprof_points = 0;
        for t in &tracks.tracks {
            let ev = &events[&t.memory_id];
            // By time in the trace, events at one time in file order.
            let mut by_time = ev.clone();
            by_time.sort_by_key(|e| e.0);
            assert_eq!((t.start_ps, t.end_ps), (by_time[0].0, by_time[by_time.len() - 1].0), "{name} {}", t.memory_id);
            assert_eq!(t.event_count, ev.len() as u64);
            assert_eq!(profile.allocator(&t.memory_id).unwrap().snapshots.len(), ev.len());
            let full = CounterQuery { memory_id: t.memory_id.clone(), start_ps: t.start_ps, end_ps: t.end_ps, width_px: u32::MAX };
            let w = s.trace_counters(id, &full).unwrap();
            let mut times: Vec<i64> = by_time.iter().map(|e| e.0).collect();
            times.dedup();
            assert_eq!(w.time_ps, times, "{name} {}: one step per distinct event time", t.memory_id);
            for (i, e) in by_time.iter().enumerate() {
                if by_time.get(i + 1).is_none_or(|n| n.0 != e.0) {
                    let k = w.at(e.0).unwrap();
                    assert_eq!((w.heap_bytes[k], w.stack_bytes[k]), (e.2, e.3), "{name} {} at {}", t.memory_id, e.0);
                }
            }
            // XProf's points carry the raw offset: each is an event of this allocator, and where that
            // event is alone at its time in the trace the track shows XProf's values there.
            let points = oracle["memoryProfilePerAllocator"][&t.memory_id]["memoryProfileSnapshots"].as_array().unwrap();
            for p in points {
                let offset: i64 = p["timeOffsetPs"].as_str().unwrap().parse().unwrap();
                let stats = &p["aggregationStats"];
                let int = |f: &str| stats[f].as_str().map_or(0, |v| v.parse::<i64>().unwrap());
                let xprof = (int("heapAllocatedBytes"), int("stackReservedBytes"));
                let at: Vec<_> = ev.iter().filter(|e| e.1 == offset && (e.2, e.3) == xprof).collect();
                assert!(!at.is_empty(), "{name} {}: XProf's point at offset {offset} is no event", t.memory_id);
                for e in at {
                    if by_time.iter().filter(|x| x.0 == e.0).count() == 1 {
                        let k = w.at(e.0).unwrap();
                        assert_eq!((w.time_ps[k], w.heap_bytes[k], w.stack_bytes[k]), (e.0, xprof.0, xprof.1));
                        xprof_points += 1;
                    }
                }
            }
        }
        assert!(xprof_points > 0, "{name}: no XProf point compared");
    }
    if common::device_fixture("jax_mi300x_conv/mi300x_conv.xplane.pb").is_some() {
        assert!(several_line_starts >= 1, "the MI300X conv trace's memory lines start at different times");
    }
}
