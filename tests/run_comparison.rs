//! Two runs compared: a two-host run (`new/`: the `tf_two_hosts` run, whose combined framework op
//! stats equal XProf's) against a baseline run sharing one host name with it (`old/`). Every op figure
//! is the row of each run's own framework op stats and the change their difference; every peak is the
//! host's Memory Profile peak as XProf gives it; the order is stable; the CLI prints the same
//! comparison; the protocol carries it.

mod common;

use serde_json::Value;
use std::path::Path;
use tidemark::analysis::framework_op_stats::FrameworkOpRow;
use tidemark::engine::run_comparison::{Presence, RunComparison};
use tidemark::engine::Scope;
use tidemark::engine::Session;

/// The current run: XProf's host order of `tf_two_hosts`.
const CURRENT: [(&str, &str); 2] = [("worker-0", "tf/d1_tf_keras_bfc/d1_tf_keras_bfc"), ("worker-1", "tf/d2_tf_cnn/d2_tf_cnn")];
/// The baseline: `worker-0` is another trace under the same host name, `worker-2` a host only it has.
const BASELINE: [(&str, &str); 2] = [("worker-0", "tf/d2_tf_cnn/d2_tf_cnn"), ("worker-2", "tf/d1_tf_keras_stats/d1_tf_keras_stats")];

fn open_run(session: &mut Session, run: &str, hosts: &[(&str, &str)]) -> Vec<u32> {
    hosts
        .iter()
        .map(|(host, fixture)| {
            let path = format!("{run}/{host}.xplane.pb");
            session.open(&path, common::bytes(&format!("{fixture}.xplane.pb.gz")), &mut |_, _| {}).unwrap_or_else(|e| panic!("{e}")).id
        })
        .collect()
}

fn compared() -> (Session, Vec<u32>, Vec<u32>, RunComparison) {
    let mut session = Session::new();
    let current = open_run(&mut session, "new", &CURRENT);
    let baseline = open_run(&mut session, "old", &BASELINE);
    let c = session.run_comparison(&current, &baseline).unwrap_or_else(|e| panic!("{e}"));
    (session, current, baseline, c)
}

type Key = (bool, String, String);

fn by_key(rows: &[FrameworkOpRow]) -> std::collections::HashMap<Key, &FrameworkOpRow> {
    rows.iter().map(|r| ((r.on_device, r.op_type.clone(), r.op_name.clone()), r)).collect()
}

#[test]
fn op_changes_are_the_difference_of_each_runs_framework_op_stats() {
    let (mut session, current, baseline, c) = compared();
    let current_rows = session.framework_op_stats(&Scope::run(&current)).unwrap().with_idle.rows;
    let baseline_rows = session.framework_op_stats(&Scope::run(&baseline)).unwrap().with_idle.rows;
    let (cur, base) = (by_key(&current_rows), by_key(&baseline_rows));

    // The current run's table is XProf's "all hosts" table for the same two files.
    let oracle = common::json("runs/tf_two_hosts/tf_two_hosts.framework_op_stats.json");
    let oracle_rows = oracle[0]["rows"].as_array().unwrap();
    assert_eq!(oracle_rows.len(), current_rows.len());
    for r in oracle_rows {
        let cell = |i: usize| &r["c"][i]["v"];
        let key = (cell(1) == "Device", cell(2).as_str().unwrap().to_string(), cell(3).as_str().unwrap().to_string());
        let op = c.ops.iter().find(|o| (o.on_device, o.op_type.clone(), o.op_name.clone()) == key).unwrap_or_else(|| panic!("{key:?}"));
        let xprof_self = cell(7).as_f64().unwrap();
        assert!((op.self_time_us.current - xprof_self).abs() <= 1e-9 * xprof_self.abs().max(1.0), "{key:?}");
        assert_eq!(op.current_occurrences, cell(4).as_f64().unwrap() as u64, "{key:?}");
    }

    // Every row of either table once, each figure its table's, the change their difference.
    let mut keys: Vec<Key> = cur.keys().chain(base.keys()).cloned().collect();
    keys.sort();
    keys.dedup();
    assert_eq!(c.ops.len(), keys.len());
    let (mut only_current, mut only_baseline) = (0, 0);
    for o in &c.ops {
        let key = (o.on_device, o.op_type.clone(), o.op_name.clone());
        let (a, b) = (cur.get(&key), base.get(&key));
        let figure = |r: Option<&&FrameworkOpRow>, f: fn(&FrameworkOpRow) -> f64| r.map_or(0.0, |r| f(r));
        assert_eq!(o.self_time_us.current, figure(a, |r| r.total_self_time_us));
        assert_eq!(o.self_time_us.baseline, figure(b, |r| r.total_self_time_us));
        assert_eq!(o.self_time_us.delta, o.self_time_us.current - o.self_time_us.baseline);
        assert_eq!(o.total_time_us.current, figure(a, |r| r.total_time_us));
        assert_eq!(o.total_time_us.baseline, figure(b, |r| r.total_time_us));
        assert_eq!(o.total_time_us.delta, o.total_time_us.current - o.total_time_us.baseline);
        assert_eq!(o.current_occurrences, a.map_or(0, |r| r.occurrences));
        assert_eq!(o.baseline_occurrences, b.map_or(0, |r| r.occurrences));
        let ratio = (o.self_time_us.baseline != 0.0).then(|| o.self_time_us.current / o.self_time_us.baseline);
        assert_eq!(o.self_time_us.ratio, ratio);
        match o.presence {
            Presence::Both => assert!(a.is_some() && b.is_some()),
            Presence::OnlyInCurrent => {
                assert!(a.is_some() && b.is_none());
                only_current += 1;
            }
            Presence::OnlyInBaseline => {
                assert!(a.is_none() && b.is_some());
                only_baseline += 1;
            }
        }
    }
    assert!(only_current > 0 && only_baseline > 0, "the two runs ran different ops");

    // Largest change first, equal changes by name.
    for w in c.ops.windows(2) {
        let (a, b) = (w[0].self_time_us.delta.abs(), w[1].self_time_us.delta.abs());
        assert!(a > b || a == b && w[0].op_name <= w[1].op_name, "{} before {}", w[0].op_name, w[1].op_name);
    }

    // The summary: each side's op self time (IDLE left out) in both runs.
    let side = |rows: &[FrameworkOpRow], device: bool| {
        rows.iter().filter(|r| r.on_device == device && r.op_type != "IDLE").map(|r| r.total_self_time_us).sum::<f64>()
    };
    assert_eq!(c.host_self_time_us.current, side(&current_rows, false));
    assert_eq!(c.host_self_time_us.baseline, side(&baseline_rows, false));
    assert_eq!(c.device_self_time_us.current, side(&current_rows, true));
    assert!(c.host_self_time_us.current > 0.0);
}

#[test]
fn memory_peaks_are_each_hosts_memory_profile_peak() {
    let (_, _, _, c) = compared();
    // XProf's Memory Profile of each trace: its allocators' peaks in the profiling window.
    let xprof_peaks = |fixture: &str| -> Vec<(String, i64, i64)> {
        let m = common::json(&format!("{fixture}.memory_profile.json.gz"));
        let per = m["memoryProfilePerAllocator"].as_object().unwrap();
        let int = |v: &Value| v.as_str().unwrap().parse::<i64>().unwrap();
        per.iter()
            .map(|(id, a)| {
                let s = &a["profileSummary"];
                (id.clone(), int(&s["peakStats"]["peakBytesInUse"]), int(&s["peakBytesUsageLifetime"]))
            })
            .collect()
    };
    let mut expected = Vec::new();
    for (runs, is_current) in [(&CURRENT, true), (&BASELINE, false)] {
        for (host, fixture) in runs {
            for (id, peak, lifetime) in xprof_peaks(fixture) {
                expected.push((host.to_string(), id, is_current, peak, lifetime));
            }
        }
    }
    assert_eq!(c.memory.len(), 3, "{:?}", c.memory);
    for (host, id, is_current, peak, lifetime) in expected {
        let row = c.memory.iter().find(|m| m.host == host && m.memory_id == id).unwrap_or_else(|| panic!("{host} {id}"));
        let side = if is_current { row.current } else { row.baseline }.unwrap();
        assert_eq!((side.peak_bytes, side.lifetime_peak_bytes), (peak, lifetime), "{host} {id}");
    }
    // worker-0 is in both runs; worker-1 only in the current, worker-2 only in the baseline.
    let presence: Vec<(&str, Presence, Option<i64>)> = c.memory.iter().map(|m| (m.host.as_str(), m.presence, m.delta_peak_bytes)).collect();
    let w0 = &c.memory[0];
    let delta = w0.current.unwrap().peak_bytes - w0.baseline.unwrap().peak_bytes;
    assert_eq!(
        presence,
        [
            ("worker-0", Presence::Both, Some(delta)),
            ("worker-1", Presence::OnlyInCurrent, None),
            ("worker-2", Presence::OnlyInBaseline, None)
        ]
    );
    let hosts: Vec<(&str, Presence)> = c.hosts.iter().map(|h| (h.host.as_str(), h.presence)).collect();
    assert_eq!(hosts, [("worker-0", Presence::Both), ("worker-1", Presence::OnlyInCurrent), ("worker-2", Presence::OnlyInBaseline)]);
    assert_eq!((c.current.run.as_str(), c.baseline.run.as_str()), ("new", "old"));
}

#[test]
fn step_times_are_each_runs_overview_and_the_order_is_stable() {
    let (mut session, current, baseline, c) = compared();
    let steps = |session: &mut Session, ids: &[u32]| {
        let s = &session.overview_page(ids).unwrap().input.step_time_ms;
        (s.count, s.average)
    };
    let (cur, base) = (steps(&mut session, &current), steps(&mut session, &baseline));
    assert!(cur.0 > 0 && base.0 > 0, "both runs have steps");
    let st = c.step_time.expect("both runs have steps");
    assert_eq!((st.current_steps, st.average_ms.current), cur);
    assert_eq!((st.baseline_steps, st.average_ms.baseline), base);
    assert_eq!(st.average_ms.delta, cur.1 - base.1);
    // Asked again (cached analyses) and in a fresh session: the same comparison, the same order.
    assert!(session.run_comparison(&current, &baseline).unwrap() == c, "asked again, the same comparison");
    assert!(compared().3 == c, "in a fresh session, the same comparison");
    // Swapped, every change changes sign.
    let swapped = session.run_comparison(&baseline, &current).unwrap();
    assert_eq!(swapped.ops.len(), c.ops.len());
    for o in &swapped.ops {
        let same = c.ops.iter().find(|x| (x.on_device, &x.op_type, &x.op_name) == (o.on_device, &o.op_type, &o.op_name)).unwrap();
        assert_eq!(o.self_time_us.delta, -same.self_time_us.delta);
    }
    assert!(session.run_comparison(&[], &baseline).is_err(), "an empty run is an error");
}

/// An empty folder of this test's own under cargo's scratch space.
fn scratch(name: &str) -> std::path::PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("run_comparison").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn cli_prints_the_engines_comparison() {
    let root = scratch("cli");
    for (run, hosts) in [("new", &CURRENT), ("old", &BASELINE)] {
        let dir = root.join("logs").join(run);
        std::fs::create_dir_all(&dir).unwrap();
        for (host, fixture) in hosts {
            std::fs::write(dir.join(format!("{host}.xplane.pb")), common::bytes(&format!("{fixture}.xplane.pb.gz"))).unwrap();
        }
    }
    let (new, old) = (root.join("logs/new"), root.join("logs/old"));
    let (new, old) = (new.to_str().unwrap(), old.to_str().unwrap());
    let (code, out, err) = common::tidemark(&["run-comparison", new, "--baseline", old, "--json"]);
    assert_eq!(code, 0, "{err}");
    let printed: Value = serde_json::from_str(&out).unwrap();
    let expected = serde_json::to_value(compared().3).unwrap();
    if let Some(d) = common::json_diff(&printed, &expected) {
        panic!("run-comparison --json: {d}");
    }
    let (code, text, err) = common::tidemark(&["run-comparison", new, "--baseline", old]);
    assert_eq!(code, 0, "{err}");
    assert!(text.starts_with("new against baseline old"), "{text}");
    assert!(text.contains("worker-2") && text.contains("only in baseline"), "{text}");
    let (code, _, err) = common::tidemark(&["compare-runs", new]);
    assert_eq!(code, 2, "no baseline is a usage error: {err}");
    assert!(err.contains("--baseline"), "{err}");
}

#[test]
fn compare_runs_through_the_protocol() {
    use tidemark::engine::protocol::{handle, request, Request, RequestBody, Response, ResponseBody, VERSION};
    let (mut session, current, baseline, c) = compared();
    let body = RequestBody::from(request::RunComparison { current, baseline });
    let json = serde_json::to_string(&Request { v: VERSION, seq: 9, body }).unwrap();
    assert!(json.contains(r#""type":"run_comparison","current":[0,1],"baseline":[2,3]"#), "{json}");
    let reply = handle(&mut session, &json, None, &mut |_| {});
    let back: Response = serde_json::from_str(&serde_json::to_string(&reply).unwrap()).unwrap();
    let ResponseBody::RunComparison { comparison } = back.body else { panic!("{:?}", back.body) };
    // Through JSON and back: equal to the engine's, figure by figure.
    if let Some(d) = common::json_diff(&serde_json::to_value(&*comparison).unwrap(), &serde_json::to_value(&c).unwrap()) {
        panic!("RunComparison reply: {d}");
    }
    let bad = serde_json::to_string(&Request {
        v: VERSION,
        seq: 10,
        body: RequestBody::from(request::RunComparison { current: vec![0], baseline: vec![99] }),
    })
    .unwrap();
    let ResponseBody::Failed { error } = handle(&mut session, &bad, None, &mut |_| {}).body else { panic!("an unknown file is an error") };
    assert!(matches!(error, tidemark::engine::EngineError::UnknownFile { file_id: 99 }), "{error:?}");
}
