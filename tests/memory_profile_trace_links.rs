//! The Memory Profile's links into the Trace Viewer land on the exact trace time of the event they
//! name: the peak's event, each of XProf's sampled points (what a hovered or clicked point links to),
//! and each breakdown row's allocations and deallocations. The event is found independently, among the
//! host plane's memory events (by allocator, offset, activity, address, size, heap and stack), and
//! its time in the trace must be the link's to the picosecond; that time is a step of the allocator's
//! counter track in the Trace Viewer (which shows the memory events as those steps: XProf keeps them
//! out of its event list, and so does the event store), with the event's heap and stack where the
//! step is that event alone. On the MI300X
//! traces the host lines start at different times, so one offset for the whole profile would miss
//! (the test counts the links it would have missed).

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use tidemark::analysis::memory_events::{self, Activity};
use tidemark::analysis::memory_profile::AllocatorProfile;
use tidemark::analysis::trace_viewer::counters::CounterQuery;
use tidemark::decode::xplane::names::HOST_PLANE;
use tidemark::decode::Profile;
use tidemark::engine::Session;

/// What picks one memory event out of an allocator's: (offset, whether a deallocation, address,
/// allocation bytes, heap, stack).
type Key = (i64, bool, u64, i64, i64, i64);

/// Per allocator, the trace times of the host plane's memory events by their [`Key`].
fn events_by_key(path: &Path) -> BTreeMap<String, BTreeMap<Key, BTreeSet<i64>>> {
    let file = common::open_at(path);
    let Profile::XSpace(space) = &file.profile else { panic!("{} is no XSpace", path.display()) };
    let host = space.planes.iter().position(|p| p.name() == HOST_PLANE).expect("a host plane");
    let mut out: BTreeMap<String, BTreeMap<Key, BTreeSet<i64>>> = BTreeMap::new();
    memory_events::for_each(space, None, |e| {
        if e.plane_index == host {
            let key = (
                e.offset_ps,
                e.activity == Activity::Deallocation,
                e.address,
                e.allocation_bytes,
                e.heap_allocated_bytes,
                e.stack_reserved_bytes,
            );
            out.entry(e.memory_id.to_string()).or_default().entry(key).or_default().insert(e.time_ps);
        }
    })
    .unwrap();
    out
}

fn key_of(a: &AllocatorProfile, i: usize) -> Key {
    let s = a.snapshots.get(i).unwrap();
    (
        s.time_offset_ps,
        s.activity.activity == Activity::Deallocation,
        s.activity.address,
        s.activity.allocation_bytes,
        s.stats.heap_allocated_bytes,
        s.stats.stack_reserved_bytes,
    )
}

/// Links checked, those whose event is the only one of its key, and those one offset for the whole
/// profile (the first line's start) would have put elsewhere.
#[derive(Default, Debug)]
struct Tally {
    links: usize,
    unique: usize,
    single_offset_wrong: usize,
}

/// Checks every link of every allocator of the trace at `path`.
fn check_links(path: &Path) -> Tally {
    let name = path.display().to_string();
    let events = events_by_key(path);
    let mut s = Session::new();
    let id = s.open(&name, std::fs::read(path).unwrap(), &mut |_, _| {}).unwrap().id;
    let profile = s.cached_memory_profile(id).unwrap().clone();
    assert_eq!(profile.memory_ids().collect::<Vec<_>>(), events.keys().map(String::as_str).collect::<Vec<_>>(), "{name}");
    // The one offset a single clock would use: the first host line with memory events' start.
    let first_line_start = {
        let file = common::open_at(path);
        let Profile::XSpace(space) = &file.profile else { panic!() };
        let mut first = None;
        memory_events::for_each(space, None, |e| {
            first.get_or_insert(e.time_ps - e.offset_ps);
        })
        .unwrap();
        first.unwrap()
    };
    let mut tally = Tally::default();
    for a in &profile.allocators {
        let view = s.memory_profile_view(id, Some(&a.memory_id)).unwrap().allocator.unwrap();
        let keyed = &events[&a.memory_id];
        let track = s.trace_counter_tracks(id).unwrap().tracks.into_iter().find(|t| t.memory_id == a.memory_id).unwrap();
        let q = CounterQuery { memory_id: a.memory_id.clone(), start_ps: track.start_ps, end_ps: track.end_ps, width_px: u32::MAX };
        let steps = s.trace_counters(id, &q).unwrap();
        let mut check = |what: &str, key: Key, link_ps: i64| {
            let times = keyed.get(&key).unwrap_or_else(|| panic!("{name} {}: the {what} is no memory event: {key:?}", a.memory_id));
            assert!(times.contains(&link_ps), "{name} {}: the {what} links to {link_ps}, its event is at {times:?}", a.memory_id);
            let k = steps.at(link_ps).unwrap();
            assert_eq!(steps.time_ps[k], link_ps, "{name} {}: the {what}'s time is a counter step", a.memory_id);
            if steps.count[k] == 1 {
                assert_eq!((steps.heap_bytes[k], steps.stack_bytes[k]), (key.4, key.5), "{name} {}: the {what}'s step", a.memory_id);
            }
            tally.links += 1;
            tally.unique += usize::from(times.len() == 1);
            tally.single_offset_wrong += usize::from(first_line_start + key.0 != link_ps);
        };

        // The peak: the summary's event (its offset, heap and stack), at the link's time.
        if let Some(peak_ps) = view.peak_trace_time_ps {
            let sm = &view.summary;
            let at_peak: Vec<usize> = (0..a.snapshots.len())
                .filter(|&i| {
                    let x = a.snapshots.get(i).unwrap();
                    x.time_offset_ps == sm.peak_stats_time_ps
                        && (x.stats.heap_allocated_bytes, x.stats.stack_reserved_bytes)
                            == (sm.peak_stats.heap_allocated_bytes, sm.peak_stats.stack_reserved_bytes)
                })
                .collect();
            assert!(!at_peak.is_empty(), "{name} {}: no event is the peak", a.memory_id);
            let i = *at_peak.iter().find(|&&i| keyed[&key_of(a, i)].contains(&peak_ps)).unwrap_or(&at_peak[0]);
            check("peak", key_of(a, i), peak_ps);
        }
        // Every sampled point (what hovering and clicking the timeline link to).
        assert_eq!(view.timeline.len(), a.sampled_indices.len());
        for e in &view.timeline {
            let i = e.point.snapshot_index;
            assert_eq!(e.point.trace_time_ps, a.trace_time_ps(i).unwrap());
            check("sampled point", key_of(a, i), e.point.trace_time_ps);
        }
        // Each breakdown row's lifetimes: allocation and, where seen, deallocation.
        for row in &view.breakdown {
            for l in &row.lifetimes {
                check("allocation", key_of(a, l.allocation_index), l.allocated_trace_ps);
                if let (Some(d), Some(t)) = (l.deallocation_index, l.deallocated_trace_ps) {
                    check("deallocation", key_of(a, d), t);
                }
                assert_eq!(l.deallocation_index.is_some(), l.deallocated_trace_ps.is_some());
            }
        }
        // A zoomed window's points carry their events' times too.
        let w = s.memory_timeline_window(id, &a.memory_id, view.first_time_ps, view.last_time_ps, 64).unwrap();
        for e in &w.events {
            check("zoomed point", key_of(a, e.point.snapshot_index), e.point.trace_time_ps);
        }
        let latest = keyed.values().flatten().max().copied().unwrap();
        assert_eq!(view.end_trace_time_ps, latest, "{name} {}: the last event in the trace", a.memory_id);
    }
    // Almost every link names an event alone of its kind, so the equality above is the event's own.
    assert!(tally.unique * 10 >= tally.links * 9, "{name}: {tally:?}");
    eprintln!("{name}: {tally:?}");
    tally
}

#[test]
fn cpu_trace_links_land_on_their_events() {
    let tally = check_links(&common::fixture("tf/d1_tf_keras_bfc/d1_tf_keras_bfc.xplane.pb.gz"));
    assert!(tally.links > 1000, "{tally:?}");
    // Its host lines start together: one offset would have done.
    assert_eq!(tally.single_offset_wrong, 0);
}

#[test]
fn mi300x_links_land_on_their_events_though_the_lines_start_apart() {
    for name in ["jax_mi300x_conv/mi300x_conv", "jax_mi300x_attention/mi300x_attention"] {
        let Some(path) = common::device_fixture(&format!("{name}.xplane.pb")) else { continue };
        let tally = check_links(&path);
        assert!(tally.links > 100, "{name}: {tally:?}");
        assert!(tally.single_offset_wrong > 0, "{name}: the lines start apart, so one offset misses some links: {tally:?}");
    }
}
