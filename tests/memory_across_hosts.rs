//! Memory across hosts on a run of two TensorFlow hosts built from the project's fixtures: every
//! allocator of both hosts is a row whose peak, capacity and peak time are that host's own Memory
//! Profile's (tested against XProf in `memory_profile.rs`), the rows are ordered closest to capacity
//! first, the timelines share the run's time axis, and the CLI and the worker protocol answer the same.

mod common;

use serde_json::Value;
use tidemark::engine::memory_across_hosts::{HostAllocator, MemoryAcrossHosts};
use tidemark::engine::Session;

/// The run's hosts, in path order: two TensorFlow traces with BFC and CPU allocators.
const HOSTS: [(&str, &str); 2] = [
    ("worker-0.xplane.pb", "tf/d1_tf_keras_bfc/d1_tf_keras_bfc.xplane.pb.gz"),
    ("worker-1.xplane.pb", "tf/d2_tf_cnn/d2_tf_cnn.xplane.pb.gz"),
];

fn open_run() -> (Session, Vec<u32>) {
    let mut session = Session::new();
    let ids = HOSTS
        .iter()
        .map(|(path, rel)| session.open(path, common::bytes(rel), &mut |_, _| {}).unwrap_or_else(|e| panic!("{e}")).id)
        .collect();
    (session, ids)
}

fn overview() -> (Session, Vec<u32>, MemoryAcrossHosts) {
    let (mut session, ids) = open_run();
    let o = session.memory_across_hosts(&ids).unwrap_or_else(|e| panic!("{e}"));
    (session, ids, o)
}

/// Every allocator of every host of `o` is one row whose figures are its host's own Memory Profile's.
fn check_rows(session: &mut Session, hosts: &[(u32, &str)], o: &MemoryAcrossHosts) {
    let mut expected_rows = 0;
    for &(id, path) in hosts {
        let memory_ids = session.memory_profile_view(id, None).unwrap().memory_ids;
        assert!(!memory_ids.is_empty(), "{path} has allocators");
        expected_rows += memory_ids.len();
        for memory_id in memory_ids {
            let own = session.memory_profile_view(id, Some(&memory_id)).unwrap().allocator.unwrap();
            let row =
                o.allocators.iter().find(|a| a.file_id == id && a.memory_id == memory_id).unwrap_or_else(|| panic!("{path} {memory_id}"));
            assert_eq!(row.path, path);
            assert_eq!(row.host, path.trim_end_matches(".xplane.pb"));
            assert_eq!(row.peak_bytes, own.summary.peak_stats.peak_bytes_in_use, "{path} {memory_id}");
            assert_eq!(row.peak_offset_ps, own.summary.peak_stats_time_ps, "{path} {memory_id}");
            assert_eq!(row.peak_step_id, own.summary.peak_step_id);
            assert_eq!(row.event_count, own.snapshot_count);
            match row.capacity_bytes {
                Some(c) => {
                    assert_eq!(c, own.summary.memory_capacity_bytes);
                    assert_eq!(row.peak_fraction, Some(row.peak_bytes as f64 / c as f64));
                }
                None => assert_eq!(row.peak_fraction, None),
            }
            // The timeline keeps the peak's height (the max filter keeps every spike).
            let highest = row.timeline.iter().map(|p| p.1).max().unwrap_or(0);
            assert_eq!(highest, row.peak_bytes, "{path} {memory_id}");
            assert!(row.timeline.len() <= tidemark::engine::memory_across_hosts::TIMELINE_POINTS);
        }
    }
    assert_eq!(o.allocators.len(), expected_rows);
    assert!(o.without_memory.is_empty());
}

#[test]
fn every_allocator_with_its_own_memory_profile_peak() {
    let (mut session, ids, o) = overview();
    let hosts: Vec<(u32, &str)> = ids.iter().zip(HOSTS).map(|(&id, (path, _))| (id, path)).collect();
    check_rows(&mut session, &hosts, &o);
    // A BFC allocator reports its limit.
    assert!(o.allocators.iter().all(|a| a.capacity_bytes.is_some()));
}

/// A GPU worker (8 V100s, TensorFlow) beside a CPU host: each GPU's BFC allocator and the pinned host
/// allocator are rows with their capacities, the fullest first.
#[test]
fn gpu_allocators_of_a_multi_worker_run() {
    let Some(v100) = common::device_fixture("tf_v100_multi_worker/v100_worker.xplane.pb") else { return };
    let mut session = Session::new();
    let gpu = session.open("worker-0.xplane.pb", std::fs::read(v100).unwrap(), &mut |_, _| {}).unwrap().id;
    let cpu = session.open("worker-1.xplane.pb", common::bytes(HOSTS[1].1), &mut |_, _| {}).unwrap().id;
    let o = session.memory_across_hosts(&[gpu, cpu]).unwrap();
    check_rows(&mut session, &[(gpu, "worker-0.xplane.pb"), (cpu, "worker-1.xplane.pb")], &o);
    let gpus: Vec<&HostAllocator> = o.allocators.iter().filter(|a| a.memory_id.starts_with("GPU_")).collect();
    assert_eq!(gpus.len(), 3, "GPU_1, GPU_4 and GPU_6");
    assert!(gpus.iter().all(|a| a.capacity_bytes.is_some() && a.host == "worker-0"));
    assert!(o.allocators.windows(2).all(|w| w[0].peak_fraction >= w[1].peak_fraction || w[1].peak_fraction.is_none()));
}

#[test]
fn closest_to_capacity_first_then_largest_peak_ties_by_path() {
    let (_, _, o) = overview();
    let key =
        |a: &HostAllocator| (a.peak_fraction.is_none(), a.peak_fraction.map(|f| -f), -a.peak_bytes, a.path.clone(), a.memory_id.clone());
    for pair in o.allocators.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        let (ka, kb) = (key(a), key(b));
        let in_order = match (a.peak_fraction, b.peak_fraction) {
            (Some(x), Some(y)) => x > y || x == y && (&ka.3, &ka.4) <= (&kb.3, &kb.4),
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => a.peak_bytes > b.peak_bytes || a.peak_bytes == b.peak_bytes && (&ka.3, &ka.4) <= (&kb.3, &kb.4),
        };
        assert!(in_order, "{:?} before {:?}", ka, kb);
    }
}

#[test]
fn timelines_share_the_run_axis() {
    let (_, ids, o) = overview();
    // Each host's times are its own offsets shifted by one amount: its start after the run's origin.
    let mut shifts = Vec::new();
    for &id in &ids {
        let rows: Vec<&HostAllocator> = o.allocators.iter().filter(|a| a.file_id == id).collect();
        let shift = rows[0].peak_time_ps - rows[0].peak_offset_ps;
        assert!(shift >= 0 && shift % 1000 == 0, "a host starts at or after the origin, in whole ns: {shift}");
        assert!(rows.iter().all(|r| r.peak_time_ps - r.peak_offset_ps == shift));
        shifts.push(shift);
    }
    assert_eq!(shifts.iter().min(), Some(&0), "the origin is the earliest host's start");
    // Both sessions were recorded in 2025 or later: the origin is an epoch time, not a line offset.
    assert!(o.origin_ns > 1_735_689_600_000_000_000, "{}", o.origin_ns);
    for a in &o.allocators {
        assert!(a.timeline.windows(2).all(|w| w[0].0 <= w[1].0), "{} in time order", a.memory_id);
        assert!(a.timeline.iter().all(|p| (o.start_ps..=o.end_ps).contains(&p.0)));
        assert!((o.start_ps..=o.end_ps).contains(&a.peak_time_ps));
    }
}

#[test]
fn a_run_of_one_host_and_an_empty_run() {
    let (mut session, ids) = open_run();
    let alone = session.memory_across_hosts(&ids[..1]).unwrap();
    assert!(alone.allocators.iter().all(|a| a.file_id == ids[0]));
    assert_eq!(alone.allocators.iter().map(|a| a.peak_time_ps - a.peak_offset_ps).max(), Some(0));
    assert!(session.memory_across_hosts(&[]).is_err());
    assert!(session.memory_across_hosts(&[99]).is_err());
}

#[test]
fn cli_prints_the_engines_overview() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("memory_across_hosts");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (name, rel) in HOSTS {
        std::fs::write(dir.join(name), common::bytes(rel)).unwrap();
    }
    let (code, out, err) = common::tidemark(&["memory-across-hosts", dir.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "{err}");
    let printed: Value = serde_json::from_str(&out).unwrap();
    let (_, _, o) = overview();
    if let Some(d) = common::json_diff(&printed, &serde_json::to_value(&o).unwrap()) {
        panic!("CLI vs engine: {d}");
    }
    let (code, text, err) = common::tidemark(&["memory-across-hosts", dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let first = &o.allocators[0];
    let line = text.lines().find(|l| l.contains(&first.memory_id)).unwrap_or_else(|| panic!("{text}"));
    assert!(line.trim_start().starts_with(&first.host), "{text}");
    assert!(text.contains("2 host(s)"), "{text}");
}

#[test]
fn through_the_protocol() {
    use tidemark::engine::protocol::{handle, request, Request, RequestBody, Response, ResponseBody, VERSION};
    let (mut session, ids) = open_run();
    let body = RequestBody::from(request::MemoryAcrossHosts { file_ids: ids.clone() });
    let json = serde_json::to_string(&Request { v: VERSION, seq: 4, body }).unwrap();
    assert!(json.contains(r#""type":"memory_across_hosts","file_ids":[0,1]"#), "{json}");
    let reply = handle(&mut session, &json, None, &mut |_| {});
    let back: Response = serde_json::from_str(&serde_json::to_string(&reply).unwrap()).unwrap();
    let ResponseBody::MemoryAcrossHosts { view } = back.body else { panic!("{:?}", back.body) };
    assert_eq!(*view, session.memory_across_hosts(&ids).unwrap());
}
