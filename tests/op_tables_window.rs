//! The op tables limited to a step (Tidemark's own, beyond XProf): on d2_tf_cnn (TensorFlow CPU, 58
//! steps) and a2_mlp_train (JAX, 18 steps), every step's table counts the occurrences that start inside
//! the step, so the steps' tables add up, op by op, to the table of the window they cover together; the
//! page's request with a window, the CLI's `--step N`, and the window's cache. Kernel Stats and the
//! roofline over a step on the device traces: V100 (TensorFlow, kernels and a step), MI300X (JAX, HLO
//! ops under a roofline, no steps: cut anywhere).

mod common;

use common::ask_json;

use std::collections::BTreeMap;
use std::sync::Arc;
use tidemark::analysis::framework_op_stats::xprof_json;
use tidemark::analysis::kernel_stats::{self, KernelKey, KernelStats};
use tidemark::analysis::op_metrics::{OpMetricsDb, TimeWindow};
use tidemark::analysis::roofline_model::{self, RecordSpan, RooflineModel};
use tidemark::analysis::steps::NO_STEP_MARKER;
use tidemark::engine::op_metrics::FileOpMetrics;
use tidemark::engine::protocol::{request, RequestBody, ResponseBody};
use tidemark::engine::Scope;
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
    [m.host.as_ref(), Some(&m.device_framework_ops), m.device.as_ref().ok().map(|d| &d.db)]
}

/// The windows `cuts` (which cover the whole trace, none overlapping) give tables that add up, op by op,
/// to the whole trace's (occurrences and total time): each occurrence lies in exactly one window. Returns
/// the summed ops of the windows marked `true` (the steps: the whole-trace table restricted to the
/// events inside them), and the total occurrences of the whole trace.
fn windows_add_up(rel: &str, s: &mut Session, id: u32, cuts: &[(bool, TimeWindow)]) -> (Ops, u64) {
    let whole = s.op_metrics(&Scope::run(&[id])).unwrap();
    let mut marked = BTreeMap::new();
    let mut summed = [BTreeMap::new(), BTreeMap::new(), BTreeMap::new()];
    for (is_marked, window) in cuts {
        let part = s.op_metrics(&Scope::run(&[id]).within(Some(*window))).unwrap();
        for (k, db) in dbs(&part).into_iter().enumerate() {
            if let Some(db) = db {
                add(&mut summed[k], ops(db));
            }
        }
        if *is_marked {
            add(&mut marked, ops(part.host.as_ref().expect("a page session computes the host ops")));
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
        ops(s.op_metrics(&Scope::run(&[id])).unwrap().host.as_ref().expect("host ops")).values().map(|v| v.0).sum()
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
        let limited = s.op_metrics(&Scope::run(&[id]).within(Some(everything))).unwrap();
        let whole = s.op_metrics(&Scope::run(&[id])).unwrap();
        assert_eq!(limited.host, whole.host, "{rel}: host db, IDLE and totals included");
        let table = |s: &mut Session, w| xprof_json::to_xprof_json(&s.framework_op_stats(&Scope::run(&[id]).within(w)).unwrap());
        assert_eq!(table(&mut s, Some(everything)), table(&mut s, None), "{rel}");
    }
}

#[test]
fn a_window_is_computed_once_and_kept() {
    let (mut s, id) = open(D2);
    let (_, _, window) = s.run_step_windows(&[id]).unwrap()[3].clone();
    let first = s.op_metrics(&Scope::run(&[id]).within(Some(window))).unwrap();
    assert!(Arc::ptr_eq(&first, &s.op_metrics(&Scope::run(&[id]).within(Some(window))).unwrap()));
    assert!(Arc::ptr_eq(&s.op_metrics(&Scope::run(&[id])).unwrap(), &s.op_metrics(&Scope::run(&[id])).unwrap()));
    // One step of 58 holds a small part of the trace's op time.
    let whole = s.op_metrics(&Scope::run(&[id])).unwrap();
    assert!(first.host.as_ref().expect("host ops").total_op_time_ps < whole.host.as_ref().expect("host ops").total_op_time_ps / 10);
}

#[test]
fn the_page_asks_with_or_without_a_window() {
    let (mut s, id) = open(D2);
    let (_, _, w) = s.run_step_windows(&[id]).unwrap()[10].clone();
    let with = format!(
        r#"{{"type":"framework_op_stats","file_ids":[{id}],"include_idle":true,"window":{{"begin_ps":{},"end_ps":{}}}}}"#,
        w.begin_ps(),
        w.end_ps()
    );
    let ResponseBody::FrameworkOpStats { view } = ask_json(&mut s, &with, None) else { panic!() };
    let expected = s.framework_op_stats_view(&Scope::run(&[id]).within(Some(w)), true).unwrap();
    assert_eq!(view.table.rows.len(), expected.table.rows.len());
    let total = |rows: &[tidemark::analysis::framework_op_stats::FrameworkOpRow]| rows.iter().map(|r| r.total_self_time_us).sum::<f64>();
    assert!((total(&view.table.rows) - total(&expected.table.rows)).abs() < 1e-6);
    // A request from before windows (no field) is the whole trace's.
    let ResponseBody::FrameworkOpStats { view: whole } =
        ask_json(&mut s, &format!(r#"{{"type":"framework_op_stats","file_ids":[{id}],"include_idle":true}}"#), None)
    else {
        panic!()
    };
    assert!(total(&whole.table.rows) > 10.0 * total(&view.table.rows));
    // The wire form leaves an absent window out.
    let body = serde_json::to_string(&RequestBody::from(request::HloStats { scope: Scope::file(1) })).unwrap();
    assert_eq!(body, r#"{"type":"hlo_stats","file_ids":[1]}"#);
    let body = serde_json::to_string(&RequestBody::from(request::HloStats { scope: Scope::file(1).within(Some(w)) })).unwrap();
    assert_eq!(body, format!(r#"{{"type":"hlo_stats","file_ids":[1],"window":{{"begin_ps":{},"end_ps":{}}}}}"#, w.begin_ps(), w.end_ps()));
    // An empty window is refused in words.
    let inverted = format!(r#"{{"type":"hlo_stats","file_ids":[{id}],"window":{{"begin_ps":5,"end_ps":5}}}}"#);
    match ask_json(&mut s, &inverted, None) {
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
    let expected = xprof_json::to_xprof_json(&s.framework_op_stats(&Scope::run(&[id]).within(Some(w))).unwrap());
    assert_eq!(common::json_diff(&serde_json::from_str(&out).unwrap(), &expected), None);
    let (code, out, _) = common::tidemark(&["framework-op-stats", &path, "--step", "7"]);
    assert_eq!(code, 0);
    assert!(out.starts_with(&format!("step 7 ({name}): only the events starting in [{}, {}) ps", w.begin_ps(), w.end_ps())), "{out}");
    let (code, _, err) = common::tidemark(&["hlo-stats", &path, "--step", "999"]);
    assert_eq!(code, 1);
    assert!(err.contains("has no step 999; its steps are 1, 2,"), "{err}");
    let (code, _, err) = common::tidemark(&["hlo-stats", &path, "--step", "x"]);
    assert_eq!(code, 2, "{err}");
    // Every op table takes the option; a CPU trace's Kernel Stats over a step is XProf's empty table.
    let (code, out, err) = common::tidemark(&["kernel-stats", &path, "--step", "3", "--json"]);
    assert_eq!(code, 0, "{err}");
    let expected =
        tidemark::analysis::kernel_stats::xprof_json::to_xprof_json(&s.kernel_stats(&Scope::run(&[id]).within(Some(w))).unwrap());
    assert_eq!(common::json_diff(&serde_json::from_str(&out).unwrap(), &expected), None);
    assert!(s.kernel_stats(&Scope::run(&[id]).within(Some(w))).unwrap().reports.is_empty());
}

/// Op Profile over a window of the TPU v6e trace (JAX): one holding every event is the whole trace's
/// tree; the trace's first half holds part of its ops.
#[test]
fn op_profile_over_a_window() {
    let rel = "jax_tpu_v6e_inference/tpu_v6e_inference.xplane.pb";
    let Some(path) = common::device_fixture(rel) else { return };
    let mut s = Session::new();
    let id = s.open(rel, std::fs::read(&path).unwrap(), &mut |_, _| {}).unwrap_or_else(|e| panic!("{e}")).id;
    let json = |s: &mut Session, w| {
        tidemark::analysis::op_profile::xprof_json::to_xprof_json(&s.op_profile(&Scope::run(&[id]).within(w)).unwrap())
    };
    let whole = json(&mut s, None);
    assert_eq!(json(&mut s, Some(TimeWindow::new(i64::MIN, i64::MAX).unwrap())), whole);
    let outline = s.trace_outline(id).unwrap();
    let half = TimeWindow::new(i64::MIN, outline.start_ps + (outline.end_ps - outline.start_ps) / 2).unwrap();
    let ops_in_half: u64 = s
        .op_metrics(&Scope::run(&[id]).within(Some(half)))
        .unwrap()
        .device
        .as_ref()
        .unwrap()
        .db
        .metrics
        .iter()
        .map(|m| m.occurrences)
        .sum();
    let ops_in_all: u64 = s.op_metrics(&Scope::run(&[id])).unwrap().device.as_ref().unwrap().db.metrics.iter().map(|m| m.occurrences).sum();
    assert!(0 < ops_in_half && ops_in_half < ops_in_all, "{ops_in_half} of {ops_in_all}");
    assert_ne!(json(&mut s, Some(half)), whole);
}

const V100: &str = "tf_v100_multi_worker/v100_worker.xplane.pb";
const MI300X: &str = "jax_mi300x_attention/mi300x_attention.xplane.pb";

/// A device fixture opened in a session, or `None` (with a note) where it is absent.
fn open_device(rel: &str) -> Option<(Session, u32)> {
    let path = common::device_fixture(rel)?;
    let mut session = Session::new();
    let id = session.open(rel, std::fs::read(&path).unwrap(), &mut |_, _| {}).unwrap_or_else(|e| panic!("{e}")).id;
    Some((session, id))
}

/// (occurrences, total ns, min ns, max ns) of each Kernel Stats row, by its key.
type Kernels = BTreeMap<KernelKey, (u64, u64, u64, u64)>;

fn kernels(stats: &KernelStats) -> Kernels {
    assert!(stats.reports.len() < kernel_stats::MAX_KERNELS, "no row cut by XProf's limit, so rows can add up");
    stats.reports.iter().map(|r| (r.key.clone(), (r.occurrences, r.total_duration_ns, r.min_duration_ns, r.max_duration_ns))).collect()
}

/// Adds the rows of `part` into `sum`: counts and totals added, the least minimum and greatest maximum.
fn add_kernels(sum: &mut Kernels, part: Kernels) {
    for (k, (n, t, min, max)) in part {
        let e = sum.entry(k).or_insert((0, 0, u64::MAX, 0));
        *e = (e.0 + n, e.1 + t, e.2.min(min), e.3.max(max));
    }
}

/// Kernel Stats over the windows `cuts` (covering the trace, none overlapping) add up, row by row, to
/// the whole trace's table. Returns the summed rows of the windows marked `true`.
fn kernels_add_up(rel: &str, s: &mut Session, id: u32, cuts: &[(bool, TimeWindow)]) -> Kernels {
    let (mut summed, mut marked) = (Kernels::new(), Kernels::new());
    for (is_marked, window) in cuts {
        let part = kernels(&s.kernel_stats(&Scope::run(&[id]).within(Some(*window))).unwrap());
        if *is_marked {
            add_kernels(&mut marked, part.clone());
        }
        add_kernels(&mut summed, part);
    }
    let whole = kernels(&s.kernel_stats(&Scope::run(&[id])).unwrap());
    assert!(!whole.is_empty(), "{rel}: kernels to add up");
    let differ: Vec<_> =
        whole.iter().filter(|(k, v)| summed.get(*k) != Some(v)).map(|(k, v)| (&k.name, v, summed.get(k))).take(5).collect();
    assert!(differ.is_empty(), "{rel}: the windows' kernel rows differ from the whole trace's: {differ:?}");
    assert_eq!(summed.len(), whole.len(), "{rel}: the same kernel rows");
    marked
}

/// The Trace Viewer's count and time (ps) of each name on the GPU stream lines, events starting in
/// `window`: a second reading of the same kernels, through the trace store rather than the op passes.
fn stream_events(s: &mut Session, id: u32, window: TimeWindow) -> BTreeMap<String, (u64, i64)> {
    let outline = s.trace_outline(id).unwrap();
    let streams: Vec<u32> = outline
        .processes
        .iter()
        .filter(|p| p.name.contains("/device:GPU:"))
        .flat_map(|p| &p.threads)
        .filter(|t| t.name.starts_with("Stream #"))
        .map(|t| t.index)
        .collect();
    assert!(!streams.is_empty(), "GPU stream lines");
    let summary = s.trace_range_summary(id, window.begin_ps(), window.end_ps(), Some(&streams)).unwrap();
    summary.into_iter().map(|n| (n.name, (n.count, n.total_ps))).collect()
}

/// V100 (TensorFlow, 8 GPUs, one step): Kernel Stats of the step and of the time around it add up, row by
/// row, to the whole trace's table; the step's rows are the whole trace's kernels that start inside it, as
/// the Trace Viewer counts them on the stream lines; a window holding every kernel is the whole table.
#[test]
fn v100_kernel_stats_over_its_step() {
    let Some((mut s, id)) = open_device(V100) else { return };
    let steps = s.run_step_windows(&[id]).unwrap();
    assert_eq!(steps.len(), 1, "the V100 worker's one step (XProf's overview has step 0)");
    let step = steps[0].2;
    let in_step = kernels_add_up(V100, &mut s, id, &cut_at_steps(&steps));
    let whole = kernels(&s.kernel_stats(&Scope::run(&[id])).unwrap());
    let (step_n, whole_n) = (in_step.values().map(|v| v.0).sum::<u64>(), whole.values().map(|v| v.0).sum::<u64>());
    assert!(0 < step_n && step_n < whole_n, "{step_n} of {whole_n} kernels in the step");
    // Per kernel name, the step's rows hold what the trace store finds starting in the step on the
    // streams: every launch of a kernel (kernel events last whole ns here, so no time is truncated).
    let mut by_name: BTreeMap<String, (u64, i64)> = BTreeMap::new();
    for (k, (n, t, _, _)) in &in_step {
        let e = by_name.entry(k.name.clone()).or_default();
        e.0 += n;
        e.1 += *t as i64 * 1000;
    }
    let stream = stream_events(&mut s, id, step);
    let differ: Vec<_> = by_name.iter().filter(|(name, v)| stream.get(*name) != Some(v)).take(5).collect();
    assert!(differ.is_empty(), "the step's kernels differ from the trace store's events in it: {differ:?}");
    let everything = TimeWindow::new(i64::MIN, i64::MAX).unwrap();
    assert_eq!(*s.kernel_stats(&Scope::run(&[id]).within(Some(everything))).unwrap(), *s.kernel_stats(&Scope::run(&[id])).unwrap());
    // The step's table is XProf's shape (the CLI's JSON below) and is kept with the step's op metrics.
    let kept = s.op_metrics(&Scope::run(&[id]).within(Some(step))).unwrap();
    assert!(Arc::ptr_eq(&kept.kernel_stats, &s.kernel_stats(&Scope::run(&[id]).within(Some(step))).unwrap()));
}

/// The CLI's `kernel-stats --step 0` and `roofline-model --step 0` on V100 print the engine's tables over
/// the step: XProf's JSON shape, and the readable table after the step's line.
#[test]
fn v100_cli_kernel_stats_and_roofline_over_a_step() {
    let Some((mut s, id)) = open_device(V100) else { return };
    let path = common::device_fixture(V100).unwrap().display().to_string();
    let (_, name, w) = s.run_step_windows(&[id]).unwrap().remove(0);
    let (code, out, err) = common::tidemark(&["kernel-stats", &path, "--step", "0", "--json"]);
    assert_eq!(code, 0, "{err}");
    let expected = kernel_stats::xprof_json::to_xprof_json(&s.kernel_stats(&Scope::run(&[id]).within(Some(w))).unwrap());
    assert_eq!(common::json_diff(&serde_json::from_str(&out).unwrap(), &expected), None);
    assert_ne!(expected, kernel_stats::xprof_json::to_xprof_json(&s.kernel_stats(&Scope::run(&[id])).unwrap()));
    let (code, out, err) = common::tidemark(&["roofline-model", &path, "--step", "0", "--json"]);
    assert_eq!(code, 0, "{err}");
    let expected = roofline_model::xprof_json::to_xprof_json(&s.roofline_model(&Scope::run(&[id]).within(Some(w))).unwrap());
    assert_eq!(common::json_diff(&serde_json::from_str(&out).unwrap(), &expected), None);
    let (code, out, err) = common::tidemark(&["kernel-stats", &path, "--step", "0"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with(&format!("step 0 ({name}): only the events starting in [{}, {}) ps", w.begin_ps(), w.end_ps())), "{out}");
    let (code, _, err) = common::tidemark(&["roofline-model", &path, "--step", "5"]);
    assert_eq!(code, 1);
    assert!(err.contains("has no step 5; its steps are 0"), "{err}");
    let (_, help, _) = common::tidemark(&["--help"]);
    for command in ["kernel-stats", "roofline-model"] {
        let line = help.lines().position(|l| l.contains(&format!("tidemark {command} FILE|RUN_DIR [--step N] [--json]"))).unwrap();
        assert!(help.lines().nth(line + 2).unwrap().contains("XProf has no such option"), "{help}");
    }
}

/// (occurrences, total time µs) of each op record of a roofline model (with infeed/outfeed), by
/// (program id, name).
fn roofline_ops(model: &RooflineModel) -> BTreeMap<(u64, String), (u64, f64)> {
    let records = model.records.iter().filter(|r| r.span == RecordSpan::Total && r.include_infeed_outfeed && r.rank > 0);
    records.map(|r| ((r.hlo_module_id, r.name.clone()), (r.occurrences, r.total_time_us))).collect()
}

/// The per-step program records of a model (with infeed/outfeed), by step number.
fn step_records(model: &RooflineModel) -> Vec<i64> {
    let steps = model.records.iter().filter(|r| r.include_infeed_outfeed);
    steps.filter_map(|r| if let RecordSpan::Step(n) = r.span { Some(n) } else { None }).collect()
}

/// The roofline over windows that cut the trace: on MI300X (HLO ops, no steps) eight equal windows'
/// op records add up to the whole trace's; on V100 (one step, no HLO ops) the step's model has the
/// step's record and the windows around it none, as profiles of those windows would.
#[test]
fn roofline_windows_add_up_to_the_whole_trace() {
    if let Some((mut s, id)) = open_device(MI300X) {
        let outline = s.trace_outline(id).unwrap();
        let step = (outline.end_ps - outline.start_ps) / 8;
        let mut cuts: Vec<i64> = (1..8).map(|k| outline.start_ps + k * step).collect();
        cuts.insert(0, i64::MIN);
        cuts.push(i64::MAX);
        let mut summed: BTreeMap<(u64, String), (u64, f64)> = BTreeMap::new();
        for c in cuts.windows(2) {
            let model = s.roofline_model(&Scope::run(&[id]).within(Some(TimeWindow::new(c[0], c[1]).unwrap()))).unwrap();
            assert!(step_records(&model).is_empty() && model.warnings.iter().any(|w| w == NO_STEP_MARKER));
            for (op, (n, t)) in roofline_ops(&model) {
                let e = summed.entry(op).or_default();
                e.0 += n;
                e.1 += t;
            }
        }
        let whole = roofline_ops(&s.roofline_model(&Scope::run(&[id])).unwrap());
        assert!(whole.len() > 10, "{} op records", whole.len());
        assert_eq!(summed.keys().collect::<Vec<_>>(), whole.keys().collect::<Vec<_>>());
        for (op, (n, t)) in &whole {
            let (sn, st) = summed[op];
            assert!(sn == *n && (st - t).abs() <= 1e-9 * t.abs().max(1.0), "{op:?}: {sn} ops, {st} µs vs {n}, {t}");
        }
        // The peaks are the device's, whatever the window.
        let (w, all) = (
            s.roofline_model_view(&Scope::run(&[id]).within(Some(TimeWindow::new(i64::MIN, cuts[4]).unwrap())), true).unwrap(),
            s.roofline_model_view(&Scope::run(&[id]), true).unwrap(),
        );
        assert_eq!((w.peak_flop_rate, &w.roofs), (all.peak_flop_rate, &all.roofs));
        assert!(w.records.rank.len() < all.records.rank.len() || w.records.total_time_us[0] < all.records.total_time_us[0]);
    }
    if let Some((mut s, id)) = open_device(V100) {
        let steps = s.run_step_windows(&[id]).unwrap();
        assert_eq!(step_records(&s.roofline_model(&Scope::run(&[id])).unwrap()), vec![0]);
        let mut per_window = Vec::new();
        for (is_step, w) in cut_at_steps(&steps) {
            let model = s.roofline_model(&Scope::run(&[id]).within(Some(w))).unwrap();
            assert_eq!(step_records(&model), if is_step { vec![0] } else { vec![] }, "{w:?}");
            assert_eq!(model.warnings.iter().any(|w| w == NO_STEP_MARKER), !is_step);
            per_window.push(model);
        }
        // The step's program record spans the step's kernels: part of the whole trace's.
        let program = |m: &RooflineModel| m.records[0].total_time_us;
        let step_model = s.roofline_model(&Scope::run(&[id]).within(Some(steps[0].2))).unwrap();
        assert!(0.0 < program(&step_model) && program(&step_model) < program(&s.roofline_model(&Scope::run(&[id])).unwrap()));
    }
}

/// The page's Kernel Stats and Roofline requests carry the step's window; one without it (as before
/// windows) is the whole trace's, and the wire form leaves an absent window out.
#[test]
fn the_page_asks_kernel_stats_and_the_roofline_over_a_step() {
    let body =
        serde_json::to_string(&RequestBody::from(request::KernelStats { scope: Scope { file_ids: vec![1, 2], window: None } })).unwrap();
    assert_eq!(body, r#"{"type":"kernel_stats","file_ids":[1,2]}"#);
    let w = TimeWindow::new(5, 9).unwrap();
    let body = serde_json::to_string(&RequestBody::from(request::RooflineModel {
        scope: Scope::file(1).within(Some(w)),
        include_infeed_outfeed: true,
    }))
    .unwrap();
    assert_eq!(body, r#"{"type":"roofline_model","file_ids":[1],"window":{"begin_ps":5,"end_ps":9},"include_infeed_outfeed":true}"#);
    let Some((mut s, id)) = open_device(V100) else { return };
    let (_, _, w) = s.run_step_windows(&[id]).unwrap().remove(0);
    let window = format!(r#""window":{{"begin_ps":{},"end_ps":{}}}"#, w.begin_ps(), w.end_ps());
    let ResponseBody::KernelStats { view } = ask_json(&mut s, &format!(r#"{{"type":"kernel_stats","file_ids":[{id}],{window}}}"#), None)
    else {
        panic!()
    };
    assert_eq!(*view, s.kernel_stats_view(&Scope::run(&[id]).within(Some(w))).unwrap());
    let ResponseBody::KernelStats { view: whole } = ask_json(&mut s, &format!(r#"{{"type":"kernel_stats","file_ids":[{id}]}}"#), None)
    else {
        panic!()
    };
    assert!(view.total_duration_us < whole.total_duration_us);
    assert_eq!(*whole, s.kernel_stats_view(&Scope::file(id)).unwrap());
    let ResponseBody::KernelStats { view: run } =
        ask_json(&mut s, &format!(r#"{{"type":"kernel_stats","file_ids":[{id}],{window}}}"#), None)
    else {
        panic!()
    };
    assert_eq!(run, view);
    let ask_roofline = |s: &mut Session, body: String| match ask_json(s, &body, None) {
        ResponseBody::RooflineModel { view } => view,
        other => panic!("{other:?}"),
    };
    let step = ask_roofline(&mut s, format!(r#"{{"type":"roofline_model","file_ids":[{id}],"include_infeed_outfeed":true,{window}}}"#));
    assert_eq!(*step, s.roofline_model_view(&Scope::run(&[id]).within(Some(w)), true).unwrap());
    let run = ask_roofline(&mut s, format!(r#"{{"type":"roofline_model","file_ids":[{id}],"include_infeed_outfeed":true,{window}}}"#));
    assert_eq!(run, step);
    let whole = ask_roofline(&mut s, format!(r#"{{"type":"roofline_model","file_ids":[{id}],"include_infeed_outfeed":true}}"#));
    assert!(step.records.total_time_us[0] < whole.records.total_time_us[0]);
}
