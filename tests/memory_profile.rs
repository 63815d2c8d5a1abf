//! Memory Profile against XProf's own outputs (the oracle) for every XSpace fixture, compared as
//! [`common::memory_profile::compare`] says (XProf's random order of equal breakdown rows aside).

mod common;

use common::fixture;
use common::memory_profile::{compare, ours};
use serde_json::Value;
use std::collections::HashMap;
use tidemark::analysis::memory_events::Activity;
use tidemark::analysis::memory_profile::{self, xprof_json, MemoryProfile, Scan};
use tidemark::decode::Profile;

const FIXTURES: [&str; 6] =
    ["tf/d1_tf_keras_bfc", "tf/d1_tf_keras_stats", "tf/d1_tf_keras_none", "tf/d2_tf_cnn", "jax/a1_docs_seed", "jax/a2_mlp_train"];

fn base(name: &str) -> &str {
    name.rsplit('/').next().unwrap_or(name)
}

/// The Memory Profile of fixture `name`, checked to be the same whether the host plane is read in
/// one pass or by two threads.
fn analyze(name: &str) -> MemoryProfile {
    let file = common::open_at(&fixture(name).join(format!("{}.xplane.pb.gz", base(name))));
    let Profile::XSpace(space) = &file.profile else { panic!("{name} is not an XSpace") };
    let once = memory_profile::analyze_with(space, Scan::Once).expect("analyzes");
    assert_eq!(memory_profile::analyze_with(space, Scan::Parallel).expect("analyzes"), once, "{name}: read by two threads");
    once
}

fn oracle(name: &str) -> Value {
    common::json_at(&common::plain_or_gz(fixture(name).join(format!("{}.memory_profile.json", base(name)))))
}

#[test]
fn every_fixture_matches_xprof() {
    for name in FIXTURES {
        let profile = analyze(name);
        compare(name, &oracle(name), &ours(&profile));
    }
}

#[test]
fn empty_profiles_are_exactly_xprofs() {
    for name in ["tf/d1_tf_keras_none", "jax/a1_docs_seed", "jax/a2_mlp_train"] {
        let mut v = ours(&analyze(name));
        let tidemark = v.as_object_mut().and_then(|o| o.remove("tidemark")).expect("tidemark key");
        assert_eq!(tidemark, serde_json::json!({ "allocators": {} }), "{name}");
        assert_eq!(v, oracle(name), "{name}");
    }
}

#[test]
fn output_is_deterministic() {
    for name in ["tf/d1_tf_keras_bfc", "tf/d2_tf_cnn", "tf/d1_tf_keras_stats"] {
        let a = xprof_json::to_string(&analyze(name)).expect("serializes");
        let b = xprof_json::to_string(&analyze(name)).expect("serializes");
        assert_eq!(a, b, "{name}");
    }
}

#[test]
fn exact_counts_on_d2() {
    let p = analyze("tf/d2_tf_cnn");
    let a = p.allocator("bfc_cpu_allocator_for_gpu").expect("allocator");
    assert_eq!((a.counts.allocations, a.counts.deallocations), (13_248, 13_021));
    assert_eq!(a.counts.sampled_allocations + a.counts.sampled_deallocations, 1000);
    assert!(a.counts.sampled_allocations < a.counts.allocations);
    // Live at the end = allocations − matched deallocations; never more bytes than ever allocated.
    let live: u64 = a.leaks.live_at_end.iter().map(|g| g.allocations).sum();
    assert_eq!(live, 13_248 - (13_021 - a.leaks.unmatched_deallocations));
    assert!(a.leaks.live_at_end_bytes <= a.leaks.allocated_bytes);
}

#[test]
fn ui_queries_are_consistent() {
    let p = analyze("tf/d2_tf_cnn");
    let a = &p.allocators[0];
    let n = a.snapshots.len();
    assert!(a.snapshots.times().windows(2).all(|w| w[0] <= w[1]));
    // The whole range at 1000 points is the sampled timeline.
    let all = a.timeline_window(i64::MIN, i64::MAX, memory_profile::MAX_TIMELINE_POINTS);
    assert_eq!(all, a.sampled_timeline());
    // A narrow window at full resolution returns every snapshot in it.
    let (t0, t1) = (a.snapshots.times()[n / 2], a.snapshots.times()[n / 2 + 50]);
    let w = a.timeline_window(t0, t1, usize::MAX);
    assert!(w.len() >= 51 && w.iter().all(|p| (t0..=t1).contains(&p.time_offset_ps)));
    assert!(a.timeline_window(t1, t0, 10).is_empty());
    // Every allocation row has metadata and lifetimes that start at its allocation; those that end
    // before the peak are exactly the ones XProf wrongly lists as live (freed by another step's event).
    let mut freed = 0;
    for (row, lifetimes) in a.breakdown.iter().zip(a.breakdown_lifetimes()) {
        let meta = a.row_metadata(row).expect("row metadata");
        assert_eq!(lifetimes.len(), row.snapshot_indices.len(), "{}", meta.tf_op_name);
        let early = lifetimes.iter().filter(|l| l.deallocated_at_ps.is_some_and(|d| d < a.summary.peak_stats_time_ps)).count();
        assert_eq!(early as u64, row.freed_before_peak, "{}", meta.tf_op_name);
        assert!(lifetimes.iter().all(|l| l.deallocated_at_ps.is_none_or(|d| d >= l.allocated_at_ps)));
        assert!(lifetimes.iter().all(|l| a.lifetime(l.allocation_index).as_ref() == Some(l)), "{}", meta.tf_op_name);
        freed += early;
    }
    assert!(freed > 0, "d2_tf_cnn shows XProf's cross-step breakdown error");
    let d1 = analyze("tf/d1_tf_keras_bfc");
    assert!(d1.allocators[0].breakdown.iter().all(|r| r.freed_before_peak == 0));
    assert!(a.lifetime(usize::MAX).is_none());
}

/// Where each allocation ends, recorded once by the walk that matches deallocations, equals a direct
/// search for the next event at its address (a deallocation ends it; another allocation leaves the end
/// unknown), and the rows' counts freed before the peak follow from it.
#[test]
fn lifetimes_end_at_the_next_event_at_their_address() {
    for name in ["tf/d1_tf_keras_bfc", "tf/d2_tf_cnn"] {
        for a in &analyze(name).allocators {
            let is = |i: usize, kind: Activity| a.snapshots.activity(i) == kind;
            // Walking backwards, the next event at each address.
            let mut next_at: HashMap<u64, usize> = HashMap::new();
            let mut ends = vec![None; a.snapshots.len()];
            for (i, s) in a.snapshots.iter().enumerate().rev() {
                ends[i] = next_at.get(&s.activity.address).copied().filter(|&k| is(k, Activity::Deallocation));
                next_at.insert(s.activity.address, i);
            }
            for (i, end) in ends.iter().enumerate() {
                let expected = is(i, Activity::Allocation).then_some(*end);
                assert_eq!(a.lifetime(i).map(|l| l.deallocation_index), expected, "{name}: snapshot {i}");
            }
            for row in &a.breakdown {
                let peak_ps = a.summary.peak_stats_time_ps;
                let freed = row.snapshot_indices.iter().filter(|&&i| ends[i].is_some_and(|k| a.snapshots.times()[k] < peak_ps));
                assert_eq!(freed.count() as u64, row.freed_before_peak, "{name}");
            }
        }
    }
}

#[test]
fn cli_prints_summary_and_json() {
    let bin = env!("CARGO_BIN_EXE_tidemark");
    let file = fixture("tf/d1_tf_keras_bfc").join("d1_tf_keras_bfc.xplane.pb.gz");
    let out = std::process::Command::new(bin).args(["memory-profile"]).arg(&file).output().expect("runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("bfc_cpu_allocator_for_gpu") && text.contains("17,900,032"), "{text}");

    let out = std::process::Command::new(bin)
        .args(["memory-profile", "--json", "--memory-id", "bfc_cpu_allocator_for_gpu"])
        .arg(&file)
        .output()
        .expect("runs");
    assert!(out.status.success());
    let mut v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert!(v.as_object_mut().and_then(|o| o.remove("tidemark")).is_some());
    compare("cli", &oracle("tf/d1_tf_keras_bfc"), &v);

    let out = std::process::Command::new(bin).args(["memory-profile", "--memory-id", "nope"]).arg(&file).output().expect("runs");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nope"));

    let not_a_profile = fixture("tf/d1_tf_keras_bfc").join("d1_tf_keras_bfc.memory_viewer.NO_MODULE.json");
    let out = std::process::Command::new(bin).args(["memory-profile"]).arg(&not_a_profile).output().expect("runs");
    assert_eq!(out.status.code(), Some(1));
    assert!(!out.stderr.is_empty());
}

/// A session that leaves the Memory Profile until asked (the command line's other commands) opens
/// every fixture to the same overview, allocator counts included, and gives the same profile when
/// asked as one that computed it at open.
#[test]
fn deferring_the_profile_changes_nothing_but_when() {
    use tidemark::engine::Session;
    for name in FIXTURES {
        let bytes = common::bytes(&format!("{name}/{}.xplane.pb.gz", base(name)));
        let (mut eager, mut deferring) = (Session::new(), Session::deferring_memory_profiles());
        let (a, a_id) = eager.open(name, bytes.clone(), &mut |_, _| {}).map(|f| (f.overview.clone(), f.id)).expect("opens");
        let (b, b_id) = deferring.open(name, bytes, &mut |_, _| {}).map(|f| (f.overview.clone(), f.id)).expect("opens");
        assert_eq!(a, b, "{name}: overview");
        assert!(!a.allocators.is_empty() || !name.starts_with("tf/d1_tf_keras_bfc"), "{name}: the check covers allocators");
        let profile = |s: &mut Session, id| s.take_memory_profile(id).expect("a profile");
        assert_eq!(profile(&mut eager, a_id), profile(&mut deferring, b_id), "{name}: profile");
    }
}
