//! The page's Memory Profile requests through the worker protocol, on real fixtures, against XProf's
//! own output: what the worker answers is what the page draws.

mod common;

use common::{ask_json, bytes as fixture};
use serde_json::Value;
use tidemark::engine::memory_profile::{MemoryProfileView, TimelineWindow};
use tidemark::engine::protocol::ResponseBody;
use tidemark::engine::{EngineError, Session};

fn open(s: &mut Session, rel: &str) -> u32 {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    match ask_json(s, &format!(r#"{{"type":"open","path":"{name}"}}"#), Some(fixture(rel))) {
        ResponseBody::Opened { file_id, .. } => file_id,
        other => panic!("{rel}: {other:?}"),
    }
}

fn profile(s: &mut Session, file_id: u32, memory_id: Option<&str>) -> MemoryProfileView {
    let id = memory_id.map_or("null".to_string(), |m| format!("\"{m}\""));
    match ask_json(s, &format!(r#"{{"type":"memory_profile","file_id":{file_id},"memory_id":{id}}}"#), None) {
        ResponseBody::MemoryProfile { view } => *view,
        other => panic!("{other:?}"),
    }
}

fn window(s: &mut Session, file_id: u32, memory_id: &str, start: i64, end: i64, max: usize) -> TimelineWindow {
    let body = format!(
        r#"{{"type":"memory_timeline","file_id":{file_id},"memory_id":"{memory_id}","start_ps":{start},"end_ps":{end},"max_points":{max}}}"#
    );
    match ask_json(s, &body, None) {
        ResponseBody::MemoryTimeline { window } => *window,
        other => panic!("{other:?}"),
    }
}

fn as_i64(v: &Value) -> i64 {
    v.as_str().and_then(|s| s.parse().ok()).or_else(|| v.as_i64()).expect("int64")
}

#[test]
fn d2_tf_cnn_profile_equals_xprof_and_zooms_to_full_resolution() {
    let mut s = Session::new();
    let id = open(&mut s, "tf/d2_tf_cnn/d2_tf_cnn.xplane.pb.gz");
    let view = profile(&mut s, id, None);
    let oracle = common::json("tf/d2_tf_cnn/d2_tf_cnn.memory_profile.json.gz");
    let ids: Vec<String> = oracle["memoryIds"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect();
    assert_eq!(view.memory_ids, ids);
    let a = view.allocator.expect("an allocator");
    let x = &oracle["memoryProfilePerAllocator"][&a.memory_id];
    let sum = &x["profileSummary"];
    assert_eq!(a.summary.peak_stats.heap_allocated_bytes, as_i64(&sum["peakStats"]["heapAllocatedBytes"]));
    assert_eq!(a.summary.peak_stats.heap_allocated_bytes, 116_393_728);
    assert_eq!(a.summary.peak_stats_time_ps, as_i64(&sum["peakStatsTimePs"]));
    assert_eq!(a.summary.memory_capacity_bytes, as_i64(&sum["memoryCapacity"]));
    assert_eq!((a.counts.allocations, a.counts.deallocations), (13_248, 13_021));
    assert!(!a.zero_bytes);

    // The sampled timeline is XProf's, point for point, with each point's event for hover.
    let sampled = x["sampledTimelineSnapshots"].as_array().unwrap();
    assert_eq!(a.timeline.len(), sampled.len());
    for (ours, theirs) in a.timeline.iter().zip(sampled) {
        assert_eq!(ours.point.time_offset_ps, as_i64(&theirs["timeOffsetPs"]));
        assert_eq!(ours.point.stats.heap_allocated_bytes, as_i64(&theirs["aggregationStats"]["heapAllocatedBytes"]));
        assert_eq!(ours.activity.allocation_bytes, as_i64(&theirs["activityMetadata"]["allocationBytes"]));
    }
    // Breakdown: XProf's rows and occurrences, with lifetimes for every non-special allocation.
    let active = x["activeAllocations"].as_array().unwrap();
    assert_eq!(a.breakdown.len(), active.len());
    for (row, theirs) in a.breakdown.iter().zip(active) {
        assert_eq!(row.occurrences, as_i64(&theirs["numOccurrences"]) as u64);
        let special = as_i64(&theirs["specialIndex"]) >= 0;
        assert_eq!(row.lifetimes.len() as u64, if special { 0 } else { row.occurrences }, "{}", row.metadata.tf_op_name);
        for l in &row.lifetimes {
            assert!(l.allocated_at_ps <= a.summary.peak_stats_time_ps);
            assert!(l.deallocated_at_ps.is_none_or(|d| d >= l.allocated_at_ps));
        }
    }
    let top = &a.breakdown[0].metadata;
    assert_eq!(top.tf_op_name, "gradient_tape/sequential_1/conv2d_1_2/convolution/Conv2DBackpropFilter");

    // Zoom: the whole range reduced to 1000 points is the sampled timeline; a narrow window around the
    // peak comes at full resolution and contains the peak event.
    let all = window(&mut s, id, &a.memory_id, a.first_time_ps, a.last_time_ps, 1000);
    assert_eq!(all.event_count, a.snapshot_count);
    assert_eq!(all.events, a.timeline);
    let peak = a.summary.peak_stats_time_ps;
    let near = window(&mut s, id, &a.memory_id, peak - 2_000_000_000, peak + 2_000_000_000, 4000);
    assert!(near.event_count > 0 && near.event_count <= 4000, "{}", near.event_count);
    assert_eq!(near.events.len(), near.event_count, "a narrow window is at full resolution");
    assert!(near.events.iter().all(|e| (near.start_ps..=near.end_ps).contains(&e.point.time_offset_ps)));
    assert!(near.events.iter().any(|e| e.point.stats.in_use_bytes() == a.summary.peak_stats.peak_bytes_in_use));
    // An absurd point budget is capped, not honoured.
    let capped = window(&mut s, id, &a.memory_id, i64::MIN, i64::MAX, usize::MAX);
    assert!(capped.events.len() <= tidemark::engine::memory_profile::MAX_WINDOW_POINTS);

    // Asking again (another memory ID request) reuses the kept analysis and gives the same answer.
    assert_eq!(profile(&mut s, id, Some(&a.memory_id)).allocator.as_ref(), Some(&a));
}

#[test]
fn files_without_memory_events_or_bytes_say_so() {
    let mut s = Session::new();
    let none = open(&mut s, "tf/d1_tf_keras_none/d1_tf_keras_none.xplane.pb.gz");
    let v = profile(&mut s, none, None);
    assert!(v.memory_ids.is_empty() && v.allocator.is_none());
    let jax = open(&mut s, "jax/a1_docs_seed/a1_docs_seed.xplane.pb.gz");
    assert!(profile(&mut s, jax, None).allocator.is_none());
    let stats = open(&mut s, "tf/d1_tf_keras_stats/d1_tf_keras_stats.xplane.pb.gz");
    let a = profile(&mut s, stats, None).allocator.expect("the CPU allocator");
    assert!(a.zero_bytes);
    assert_eq!(a.counts.allocations, 10_236);
    let bfc = open(&mut s, "tf/d1_tf_keras_bfc/d1_tf_keras_bfc.xplane.pb.gz");
    assert!(!profile(&mut s, bfc, None).allocator.expect("bfc").zero_bytes);
}

#[test]
fn bad_requests_fail_with_a_message() {
    let mut s = Session::new();
    let id = open(&mut s, "tf/d1_tf_keras_bfc/d1_tf_keras_bfc.xplane.pb.gz");
    let unknown_id = ask_json(&mut s, &format!(r#"{{"type":"memory_profile","file_id":{id},"memory_id":"gpu_9"}}"#), None);
    assert!(
        matches!(&unknown_id, ResponseBody::Failed { error: EngineError::UnknownMemoryId { memory_id, known, .. } }
            if memory_id == "gpu_9" && known.iter().any(|k| k == "bfc_cpu_allocator_for_gpu")),
        "{unknown_id:?}"
    );
    let prof = open(&mut s, "pprof/docs_seed_memory.prof");
    let wrong_format = ask_json(&mut s, &format!(r#"{{"type":"memory_profile","file_id":{prof},"memory_id":null}}"#), None);
    assert!(
        matches!(&wrong_format, ResponseBody::Failed { error: error @ EngineError::WrongFormat { .. } } if error.detail().contains("XProf trace")),
        "{wrong_format:?}"
    );
    // Closing the file forgets its kept profile.
    assert!(matches!(ask_json(&mut s, &format!(r#"{{"type":"close","file_id":{id}}}"#), None), ResponseBody::Closed { .. }));
    let gone = ask_json(&mut s, &format!(r#"{{"type":"memory_profile","file_id":{id},"memory_id":null}}"#), None);
    assert_eq!(gone, ResponseBody::Failed { error: EngineError::UnknownFile { file_id: id } });
}
