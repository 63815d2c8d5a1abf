//! The op tables limited to a step (Tidemark's own, beyond XProf): on d2_tf_cnn (TensorFlow CPU, 58
//! steps) and a2_mlp_train (JAX, 18 steps), every step's table counts the occurrences that start inside
//! the step, so the steps' tables add up, op by op, to the table of the window they cover together; the
//! page's request with a window, the CLI's `--step N`, and the window's cache.

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;
use tidemark::analysis::framework_op_stats::xprof_json;
use tidemark::analysis::op_metrics::{OpMetricsDb, TimeWindow};
use tidemark::engine::op_metrics::FileOpMetrics;
use tidemark::engine::protocol::{handle, RequestBody, Response, ResponseBody, VERSION};
use tidemark::engine::Session;

const D2: &str = "tf/d2_tf_cnn/d2_tf_cnn.xplane.pb.gz";
const A2: &str = "jax/a2_mlp_train/a2_mlp_train.xplane.pb.gz";

fn open(rel: &str) -> (Session, u32) {
    let mut session = Session::new();
    let id = session.open(rel, common::bytes(rel), &mut |_, _| {}).unwrap_or_else(|e| panic!("{e}")).id;
    (session, id)
}

/// (occurrences, total time ps) of each op by (module id, name).
type Ops = BTreeMap<(u64, String), (u64, u64)>;

/// The [`Ops`] of a db, `IDLE` left out.
fn ops(db: &OpMetricsDb) -> Ops {
    db.metrics.iter().filter(|m| !m.is_idle()).map(|m| ((m.hlo_module_id, m.name.clone()), (m.occurrences, m.time_ps))).collect()
}

/// Adds `part` into `sum`, op by op.
fn add(sum: &mut Ops, part: Ops) {
    for (k, (n, t)) in part {
        let e = sum.entry(k).or_default();
        e.0 += n;
        e.1 += t;
    }
}

/// The windows that cut the whole trace at the steps' ends: the time before the first step, each step,
/// each gap between two steps, the time after the last step; `true` marks a step.
fn cut_at_steps(steps: &[(i64, String, TimeWindow)]) -> Vec<(bool, TimeWindow)> {
    let mut cuts = Vec::new();
    let mut at = i64::MIN;
    for (_, _, w) in steps {
        assert!(w.begin_ps() >= at, "steps in order, not overlapping");
        cuts.extend(TimeWindow::new(at, w.begin_ps()).ok().map(|gap| (false, gap)));
        cuts.push((true, *w));
        at = w.end_ps();
    }
    cuts.push((false, TimeWindow::new(at, i64::MAX).unwrap()));
    cuts
}

/// Which of [`dbs`] is the device's framework ops.
const DEVICE_FRAMEWORK_OPS: usize = 1;

/// Each op table's dbs: the host's framework ops, the device's framework ops and its HLO ops (where
/// Tidemark reads the device side).
fn dbs(m: &FileOpMetrics) -> [Option<&OpMetricsDb>; 3] {
    [Some(&m.host), Some(&m.device_framework_ops), m.device.as_ref().ok().map(|d| &d.db)]
}

/// The windows `cuts` (which cover the whole trace, none overlapping) give tables that add up, op by op,
/// to the whole trace's (occurrences and total time): each occurrence lies in exactly one window. Returns
/// the summed ops of the windows marked `true` (the steps: the whole-trace table restricted to the
/// events inside them), and the total occurrences of the whole trace.
fn windows_add_up(rel: &str, s: &mut Session, id: u32, cuts: &[(bool, TimeWindow)]) -> (Ops, u64) {
    let whole = s.run_op_metrics(&[id]).unwrap();
    let mut marked = BTreeMap::new();
    let mut summed = [BTreeMap::new(), BTreeMap::new(), BTreeMap::new()];
    for (is_marked, window) in cuts {
        let part = s.run_op_metrics_in(&[id], Some(*window)).unwrap();
        for (k, db) in dbs(&part).into_iter().enumerate() {
            if let Some(db) = db {
                add(&mut summed[k], ops(db));
            }
        }
        if *is_marked {
            add(&mut marked, ops(&part.host));
        }
    }
    let mut occurrences = 0;
    for (k, db) in dbs(&whole).into_iter().enumerate() {
        let Some(db) = db else { continue };
        let whole_ops = ops(db);
        // A device framework op occurs as often as its most frequent HLO op (XProf's rule), in each
        // window: the windows' counts add up to at least the whole trace's; its time adds up exactly.
        let adds_up = |whole: &(u64, u64), sum: &(u64, u64)| match k {
            DEVICE_FRAMEWORK_OPS => whole.1 == sum.1 && whole.0 <= sum.0,
            _ => whole == sum,
        };
        let differ: Vec<_> = whole_ops
            .iter()
            .filter(|(op, v)| !summed[k].get(*op).is_some_and(|sum| adds_up(v, sum)))
            .map(|(op, v)| (op, v, summed[k].get(op)))
            .take(5)
            .collect();
        assert!(differ.is_empty(), "{rel} db {k}: the windows' sums differ from the whole trace's: {differ:?}");
        assert_eq!(summed[k].len(), whole_ops.len(), "{rel} db {k}: the same ops");
        occurrences += whole_ops.values().map(|v| v.0).sum::<u64>();
    }
    (marked, occurrences)
}

/// Cut at the steps ([`cut_at_steps`]), the windows add up to the whole trace ([`windows_add_up`]).
/// Returns the number of steps and the occurrences inside them.
fn steps_add_up(rel: &str) -> (usize, u64) {
    let (mut s, id) = open(rel);
    let steps = s.run_step_windows(&[id]).unwrap();
    let (in_steps, _) = windows_add_up(rel, &mut s, id, &cut_at_steps(&steps));
    (steps.len(), in_steps.values().map(|v| v.0).sum())
}

#[test]
fn d2_tf_cnn_steps_add_up_to_the_whole_trace() {
    let (steps, in_steps) = steps_add_up(D2);
    assert_eq!(steps, 58);
    let whole: u64 = {
        let (mut s, id) = open(D2);
        ops(&s.run_op_metrics(&[id]).unwrap().host).values().map(|v| v.0).sum()
    };
    // Most occurrences lie in the 58 steps; the rest in the two XProf leaves out and outside steps.
    assert!(in_steps > whole / 2 && in_steps < whole, "{in_steps} of {whole}");
}

#[test]
fn a2_mlp_train_steps_have_no_framework_ops_as_the_whole_trace() {
    // A JAX trace on CPU: XProf's framework op table is IDLE alone, and so is every step's.
    let (steps, in_steps) = steps_add_up(A2);
    assert_eq!((steps, in_steps), (18, 0));
}

/// A JAX trace on a GPU (MI300X) and on a TPU (v6e), cut into eight windows of equal length over the
/// trace's span (they have no steps of their own): the device's framework ops and HLO ops add up too.
#[test]
fn device_traces_cut_anywhere_add_up() {
    for rel in ["jax_mi300x_attention/mi300x_attention.xplane.pb", "jax_tpu_v6e_inference/tpu_v6e_inference.xplane.pb"] {
        let Some(path) = common::device_fixture(rel) else { continue };
        let mut s = Session::new();
        let id = s.open(rel, std::fs::read(&path).unwrap(), &mut |_, _| {}).unwrap_or_else(|e| panic!("{e}")).id;
        let outline = s.trace_outline(id).unwrap();
        let step = (outline.end_ps - outline.start_ps) / 8;
        let mut cuts: Vec<i64> = (1..8).map(|k| outline.start_ps + k * step).collect();
        cuts.insert(0, i64::MIN);
        cuts.push(i64::MAX);
        let windows: Vec<(bool, TimeWindow)> = cuts.windows(2).map(|c| (true, TimeWindow::new(c[0], c[1]).unwrap())).collect();
        let (_, occurrences) = windows_add_up(rel, &mut s, id, &windows);
        assert!(occurrences > 0, "{rel}: ops to add up");
    }
}

#[test]
fn a_window_holding_every_event_gives_the_whole_trace_table() {
    for rel in [D2, A2] {
        let (mut s, id) = open(rel);
        let everything = TimeWindow::new(i64::MIN, i64::MAX).unwrap();
        let limited = s.run_op_metrics_in(&[id], Some(everything)).unwrap();
        let whole = s.run_op_metrics(&[id]).unwrap();
        assert_eq!(limited.host, whole.host, "{rel}: host db, IDLE and totals included");
        let table = |s: &mut Session, w| xprof_json::to_xprof_json(&s.run_framework_op_stats_in(&[id], w).unwrap());
        assert_eq!(table(&mut s, Some(everything)), table(&mut s, None), "{rel}");
    }
}

#[test]
fn a_window_is_computed_once_and_kept() {
    let (mut s, id) = open(D2);
    let (_, _, window) = s.run_step_windows(&[id]).unwrap()[3].clone();
    let first = s.run_op_metrics_in(&[id], Some(window)).unwrap();
    assert!(Arc::ptr_eq(&first, &s.run_op_metrics_in(&[id], Some(window)).unwrap()));
    assert!(Arc::ptr_eq(&s.run_op_metrics(&[id]).unwrap(), &s.run_op_metrics_in(&[id], None).unwrap()));
    // One step of 58 holds a small part of the trace's op time.
    assert!(first.host.total_op_time_ps < s.run_op_metrics(&[id]).unwrap().host.total_op_time_ps / 10);
}

/// Sends `body` as the page does (JSON both ways) and returns the reply's body.
fn ask(s: &mut Session, body: &str) -> ResponseBody {
    let json = format!(r#"{{"v":{VERSION},"seq":3,"body":{body}}}"#);
    let reply = handle(s, &json, None, &mut |_| {});
    let back: Response = serde_json::from_str(&serde_json::to_string(&reply).unwrap()).unwrap();
    back.body
}

#[test]
fn the_page_asks_with_or_without_a_window() {
    let (mut s, id) = open(D2);
    let (_, _, w) = s.run_step_windows(&[id]).unwrap()[10].clone();
    let with = format!(
        r#"{{"type":"framework_op_stats","file_id":{id},"include_idle":true,"window":{{"begin_ps":{},"end_ps":{}}}}}"#,
        w.begin_ps(),
        w.end_ps()
    );
    let ResponseBody::FrameworkOpStats { view } = ask(&mut s, &with) else { panic!() };
    let expected = s.run_framework_op_stats_view_in(&[id], true, Some(w)).unwrap();
    assert_eq!(view.table.rows.len(), expected.table.rows.len());
    let total = |rows: &[tidemark::analysis::framework_op_stats::FrameworkOpRow]| rows.iter().map(|r| r.total_self_time_us).sum::<f64>();
    assert!((total(&view.table.rows) - total(&expected.table.rows)).abs() < 1e-6);
    // A request from before windows (no field) is the whole trace's.
    let ResponseBody::FrameworkOpStats { view: whole } =
        ask(&mut s, &format!(r#"{{"type":"framework_op_stats","file_id":{id},"include_idle":true}}"#))
    else {
        panic!()
    };
    assert!(total(&whole.table.rows) > 10.0 * total(&view.table.rows));
    // The wire form leaves an absent window out.
    let body = serde_json::to_string(&RequestBody::HloOpStats { file_id: 1, window: None }).unwrap();
    assert_eq!(body, r#"{"type":"hlo_op_stats","file_id":1}"#);
    let body = serde_json::to_string(&RequestBody::HloOpStats { file_id: 1, window: Some(w) }).unwrap();
    assert_eq!(body, format!(r#"{{"type":"hlo_op_stats","file_id":1,"window":{{"begin_ps":{},"end_ps":{}}}}}"#, w.begin_ps(), w.end_ps()));
    // An empty window is refused in words.
    let inverted = format!(r#"{{"type":"hlo_op_stats","file_id":{id},"window":{{"begin_ps":5,"end_ps":5}}}}"#);
    match ask(&mut s, &inverted) {
        ResponseBody::Rejected { message } => assert!(message.contains("empty time window"), "{message}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn cli_step_gives_xprofs_json_over_the_step() {
    let (mut s, id) = open(D2);
    let (_, name, w) = s.run_step_windows(&[id]).unwrap().into_iter().find(|(g, _, _)| *g == 7).unwrap();
    let path = common::fixture(D2).display().to_string();
    let (code, out, err) = common::tidemark(&["framework-op-stats", &path, "--step", "7", "--json"]);
    assert_eq!(code, 0, "{err}");
    let expected = xprof_json::to_xprof_json(&s.run_framework_op_stats_in(&[id], Some(w)).unwrap());
    assert_eq!(common::json_diff(&serde_json::from_str(&out).unwrap(), &expected), None);
    let (code, out, _) = common::tidemark(&["framework-op-stats", &path, "--step", "7"]);
    assert_eq!(code, 0);
    assert!(out.starts_with(&format!("step 7 ({name}): only the events starting in [{}, {}) ps", w.begin_ps(), w.end_ps())), "{out}");
    let (code, _, err) = common::tidemark(&["hlo-stats", &path, "--step", "999"]);
    assert_eq!(code, 1);
    assert!(err.contains("has no step 999; its steps are 1, 2,"), "{err}");
    let (code, _, err) = common::tidemark(&["hlo-stats", &path, "--step", "x"]);
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = common::tidemark(&["kernel-stats", &path, "--step", "3"]);
    assert_eq!(code, 2, "kernel-stats takes no --step: {err}");
}

/// Op Profile over a window of the TPU v6e trace (JAX): one holding every event is the whole trace's
/// tree; the trace's first half holds part of its ops.
#[test]
fn op_profile_over_a_window() {
    let rel = "jax_tpu_v6e_inference/tpu_v6e_inference.xplane.pb";
    let Some(path) = common::device_fixture(rel) else { return };
    let mut s = Session::new();
    let id = s.open(rel, std::fs::read(&path).unwrap(), &mut |_, _| {}).unwrap_or_else(|e| panic!("{e}")).id;
    let json = |s: &mut Session, w| tidemark::analysis::op_profile::json::to_xprof_json(&s.run_op_profile_in(&[id], w).unwrap());
    let whole = json(&mut s, None);
    assert_eq!(json(&mut s, Some(TimeWindow::new(i64::MIN, i64::MAX).unwrap())), whole);
    let outline = s.trace_outline(id).unwrap();
    let half = TimeWindow::new(i64::MIN, outline.start_ps + (outline.end_ps - outline.start_ps) / 2).unwrap();
    let ops_in_half: u64 =
        s.run_op_metrics_in(&[id], Some(half)).unwrap().device.as_ref().unwrap().db.metrics.iter().map(|m| m.occurrences).sum();
    let ops_in_all: u64 = s.run_op_metrics(&[id]).unwrap().device.as_ref().unwrap().db.metrics.iter().map(|m| m.occurrences).sum();
    assert!(0 < ops_in_half && ops_in_half < ops_in_all, "{ops_in_half} of {ops_in_all}");
    assert_ne!(json(&mut s, Some(half)), whole);
}
