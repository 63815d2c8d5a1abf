//! The Overview page's request through the worker protocol, against XProf's own output: on
//! `d2_tf_cnn` the steps the graph stacks, the summary's statistics, the run environment and the
//! recommendation are XProf's; the step spans share the Memory Profile's clock (a step's allocator
//! events lie in it or, for its input, in the step before); a trace without steps and a file that is
//! no trace say so.

mod common;

use common::ask;

use serde_json::Value;
use tidemark::analysis::input_pipeline::{one_digit, NO_STEP_TIME};
use tidemark::analysis::overview_page::Figure;
use tidemark::engine::overview_page::OverviewPageView;
use tidemark::engine::protocol::{request, RequestBody, ResponseBody};
use tidemark::engine::Session;

const D2: &str = "tf/d2_tf_cnn/d2_tf_cnn";

fn open(s: &mut Session, rel: &str) -> u32 {
    match ask(s, RequestBody::Open { path: rel.into() }, Some(common::bytes(rel))) {
        ResponseBody::Opened { file_id, .. } => file_id,
        other => panic!("{other:?}"),
    }
}

fn page(s: &mut Session, rel: &str) -> OverviewPageView {
    let file_id = open(s, rel);
    match ask(s, RequestBody::from(request::OverviewPage { file_ids: vec![file_id] }), None) {
        ResponseBody::OverviewPage { view } => *view,
        other => panic!("{other:?}"),
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

/// XProf's step table's column `id` of every row.
fn oracle_column<'a>(table: &'a Value, id: &str) -> Vec<&'a Value> {
    let i = table["cols"].as_array().unwrap().iter().position(|c| c["id"] == id).unwrap_or_else(|| panic!("no column {id}"));
    table["rows"].as_array().unwrap().iter().map(|r| &r["c"][i]["v"]).collect()
}

#[test]
fn d2_page_is_xprofs() {
    let mut s = Session::new();
    let v = page(&mut s, &format!("{D2}.xplane.pb.gz"));
    let oracle = common::json(&format!("{D2}.overview_page.json"));
    let steps = &oracle[1];

    // The steps and each stack of the graph, step by step.
    let names: Vec<&str> = oracle_column(steps, "stepnum").iter().map(|n| n.as_str().unwrap()).collect();
    assert_eq!(v.steps.names, names);
    let step_ms = oracle_column(steps, "stepTimeMs");
    for (i, want) in step_ms.iter().enumerate() {
        assert!(close(v.steps.step_time_ms[i], want.as_f64().unwrap()), "{}: {} vs {want}", names[i], v.steps.step_time_ms[i]);
        assert_eq!(v.steps.end_ps[i] - v.steps.begin_ps[i], (want.as_f64().unwrap() * 1e9).round() as i64, "{}: span", names[i]);
    }
    let ids: Vec<&str> = v.steps.categories.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["hostComputeTimeMs", "infeedTimeMs", "otherTimeMs"]);
    for c in &v.steps.categories {
        for (i, want) in oracle_column(steps, &c.id).iter().enumerate() {
            assert!(close(c.ms[i], want.as_f64().unwrap()), "{} {}: {} vs {want}", names[i], c.id, c.ms[i]);
        }
    }
    // XProf's device stacks are all 0 on this host-only trace: leaving them out loses nothing.
    for id in
        ["deviceComputeTimeMs", "deviceToDeviceTimeMs", "deviceCollectivesTimeMs", "kernelLaunchTimeMs", "outfeedTimeMs", "compileTimeMs"]
    {
        assert!(oracle_column(steps, id).iter().all(|x| x.as_f64() == Some(0.0)), "{id}");
    }

    // The summary as XProf writes it.
    let stats = v.step_time_ms.expect("steps");
    let p = &steps["p"];
    assert_eq!(one_digit(stats.average), p["steptime_ms_average"]);
    assert_eq!(one_digit(stats.standard_deviation.expect("many steps")), p["steptime_ms_standard_deviation"]);
    assert_eq!(one_digit(stats.minimum), p["steptime_ms_minimum"]);
    assert_eq!(one_digit(stats.maximum), p["steptime_ms_maximum"]);
    assert_eq!((v.steps.names.len(), v.steps_found), (58, 60));
    assert!(!v.device_steps_unsupported);
    // A CPU-only trace: no device figure, and no host idle time (XProf's TPU analysis); XProf writes 0.0%.
    assert_eq!(v.utilisation.host_idle_time_percent, Figure::NotReported);
    assert_eq!(v.utilisation.device_idle_time_percent, Figure::NoDevice);
    assert_eq!(v.utilisation.memory_bw_utilization_relative_to_hw_limit, Figure::NoDevice);
    assert_eq!(oracle[0]["p"]["host_idle_time_percent"], "0.0%");
    assert_eq!(format!("{:.1}%", v.host_tf_op_percent), oracle[0]["p"]["host_tf_op_percent"]);
    assert!(v.top_device_ops.is_empty() && oracle[0]["rows"].as_array().unwrap().is_empty());
    assert!(v.top_ops_missing.as_deref().is_some_and(|w| w.contains("no device")), "{:?}", v.top_ops_missing);

    // Run environment and recommendation.
    let env = &oracle[2]["p"];
    assert_eq!(v.host_count.to_string(), env["host_count"]);
    assert_eq!(v.device_type, env["device_type"]);
    assert_eq!(v.device_core_count.to_string(), env["device_core_count"]);
    assert_eq!(v.is_training.to_string(), env["is_training"]);
    let rec = &oracle[3];
    assert_eq!(v.bottleneck, rec["p"]["bottleneck"]);
    assert_eq!(v.statement, rec["p"]["statement"]);
    let links: Vec<String> = v.tips.iter().map(|t| t.xprof_link()).collect();
    let want: Vec<&str> = rec["rows"].as_array().unwrap().iter().map(|r| r["c"][1]["v"].as_str().unwrap()).collect();
    assert_eq!(links, want);
    assert_eq!(
        v.tips.iter().filter_map(|t| t.tool.as_deref()).collect::<Vec<_>>(),
        ["input_pipeline_analyzer", "trace_viewer", "framework_op_stats", "trace_viewer"]
    );
}

/// A step's span and the Memory Profile's times are on one clock: the allocator events the Memory
/// Profile puts in a step (its `stepId`, the step's group id) lie in that step, or in the one before
/// for its input.
#[test]
fn step_spans_hold_their_memory_events() {
    let mut s = Session::new();
    let rel = format!("{D2}.xplane.pb.gz");
    let file_id = open(&mut s, &rel);
    let v = match ask(&mut s, RequestBody::from(request::OverviewPage { file_ids: vec![file_id] }), None) {
        ResponseBody::OverviewPage { view } => *view,
        other => panic!("{other:?}"),
    };
    // Every event at full resolution: windows of the timeline, halved until none is reduced.
    let mut all = Vec::new();
    let mut windows = vec![(0i64, i64::MAX / 2)];
    while let Some((a, b)) = windows.pop() {
        let w = s.memory_timeline_window(file_id, "bfc_cpu_allocator_for_gpu", a, b, usize::MAX).expect("timeline");
        if w.events.len() == w.event_count {
            all.extend(w.events.into_iter().filter(|e| a <= e.point.time_offset_ps && e.point.time_offset_ps < b));
        } else {
            windows.extend([(a, a + (b - a) / 2), (a + (b - a) / 2, b)]);
        }
    }
    assert!(all.len() > 20_000, "{} events", all.len());
    let (mut steps, mut events, mut inside) = (0, 0, 0);
    for (i, &group) in v.steps.group_ids.iter().enumerate() {
        let times: Vec<i64> = all.iter().filter(|e| e.activity.step_id == group).map(|e| e.point.time_offset_ps).collect();
        let (begin, end) = (v.steps.begin_ps[i], v.steps.end_ps[i]);
        // tf.data prefetches: a step's input is allocated while the step before it runs, and grouped
        // with the step that consumes it. So a step's events lie between the previous step's start
        // and its own end, none after it.
        let earliest = if i == 0 { begin - (end - begin) } else { v.steps.begin_ps[i - 1] };
        let outside: Vec<&i64> = times.iter().filter(|&&t| t < earliest || t > end).collect();
        assert!(
            outside.is_empty(),
            "{}: {} of {} events outside {earliest}..{end}: {:?}",
            v.steps.names[i],
            outside.len(),
            times.len(),
            &outside[..outside.len().min(5)]
        );
        steps += usize::from(!times.is_empty());
        events += times.len();
        inside += times.iter().filter(|&&t| begin <= t).count();
    }
    println!("{steps} steps, {inside} of {events} memory events inside their step's span, the others in the step before");
    assert_eq!(steps, v.steps.names.len(), "every step has memory events");
    assert!(inside * 3 >= events, "{inside} of {events}");
}

#[test]
fn no_steps_and_no_trace_say_so() {
    let mut s = Session::new();
    let v = page(&mut s, "jax/a1_docs_seed/a1_docs_seed.xplane.pb.gz");
    assert!(v.steps.names.is_empty() && v.step_time_ms.is_none());
    assert_eq!((v.bottleneck.as_str(), v.statement.as_str()), ("unknown", NO_STEP_TIME));
    assert!(v.warnings.iter().any(|w| w.starts_with("No step marker observed")), "{:?}", v.warnings);

    let rel = "hlo/module_0008.jit_tiny.cpu_after_optimizations.hlo.pb";
    let file_id = open(&mut s, rel);
    match ask(&mut s, RequestBody::from(request::OverviewPage { file_ids: vec![file_id] }), None) {
        ResponseBody::Failed { error } => assert!(!error.detail().is_empty()),
        other => panic!("{other:?}"),
    }
}

/// A TPU trace (read in place when present): the top 10 device ops are XProf's, row by row, and so are
/// the figures of XProf's TPU analysis (idle times, duty cycle); it has no step line, so no steps.
#[test]
fn tpu_top_ops_are_xprofs() {
    let Some(path) = common::device_fixture("jax_tpu_v6e_inference/tpu_v6e_inference.xplane.pb") else { return };
    let oracle = common::json_at(&path.with_file_name("tpu_v6e_inference.overview_page.json"));
    let mut s = Session::new();
    let file_id = match ask(&mut s, RequestBody::Open { path: "tpu_v6e_inference.xplane.pb".into() }, Some(std::fs::read(&path).unwrap())) {
        ResponseBody::Opened { file_id, .. } => file_id,
        other => panic!("{other:?}"),
    };
    let v = match ask(&mut s, RequestBody::from(request::OverviewPage { file_ids: vec![file_id] }), None) {
        ResponseBody::OverviewPage { view } => *view,
        other => panic!("{other:?}"),
    };
    let rows = oracle[0]["rows"].as_array().unwrap();
    assert_eq!(v.top_device_ops.len(), rows.len());
    for (ours, want) in v.top_device_ops.iter().zip(rows) {
        assert_eq!(ours.name, want["c"][3]["v"]);
        assert_eq!(ours.category, want["c"][2]["v"]);
        assert!(close(ours.self_time_fraction, want["c"][0]["v"].as_f64().unwrap()), "{}", ours.name);
        assert!(close(ours.cumulative_time_fraction, want["c"][1]["v"].as_f64().unwrap()), "{}", ours.name);
    }
    assert_eq!(v.top_ops_missing, None);
    assert_eq!(
        (v.device_type.as_str(), v.device_core_count.to_string()),
        (oracle[2]["p"]["device_type"].as_str().unwrap(), oracle[2]["p"]["device_core_count"].as_str().unwrap().to_string())
    );
    // XProf's TPU analysis: device idle time and duty cycle (13.4%, 86.5% here), host idle time.
    for (figure, key) in [
        (v.utilisation.device_duty_cycle_percent, "device_duty_cycle_percent"),
        (v.utilisation.device_idle_time_percent, "device_idle_time_percent"),
        (v.utilisation.host_idle_time_percent, "host_idle_time_percent"),
    ] {
        let Figure::Percent(p) = figure else { panic!("{key}: {figure:?}") };
        assert_eq!(format!("{p:.1}%"), oracle[0]["p"][key].as_str().unwrap(), "{key}");
    }
    assert_eq!(v.utilisation.flop_rate_utilization_relative_to_roofline, Figure::NotReported);
    // A TPU trace without a step line has no steps, in XProf as here.
    assert!(!v.device_steps_unsupported && v.steps.names.is_empty());
    assert_eq!(oracle[1]["rows"].as_array().unwrap().len(), 0, "XProf measures no step on this inference trace either");
}
