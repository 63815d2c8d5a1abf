//! PyTorch runs of several ranks, and two such runs compared. The one real trace (H200, ResNet, one
//! rank) is rewritten on the fly into the ranks and runs a test needs: `distributedInfo.rank` set, and
//! in the "current" run every call of the kernel with the most time made twice as long (a factor of
//! 2 keeps every sum exact). The expected figures are computed here from the raw JSON, the kernels'
//! sums in the plugin's order (events stably sorted by start), so they compare exactly.

mod common;

use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use tidemark::engine::run_comparison::{Presence, RunComparison};
use tidemark::engine::torch_run::TorchRun;

const TRACE: &str = "nvidia_h200_pytorch/p2_torch_resnet/tb/vm_2031.1795841222637258163.pt.trace.json.gz";
/// What the "current" run's slowed kernel takes, as a multiple of the original.
const FACTOR: f64 = 2.0;

fn raw() -> Option<(PathBuf, Value)> {
    let path = common::device_fixture(TRACE)?;
    let v = common::json_at(&path);
    Some((path, v))
}

fn kernels(v: &Value) -> impl Iterator<Item = &Value> {
    v["traceEvents"].as_array().expect("traceEvents").iter().filter(|e| e["cat"] == "kernel")
}

/// Per kernel name: calls and total µs, summed in start order as the plugin sums them.
fn kernel_sums(v: &Value) -> BTreeMap<String, (u64, f64)> {
    let mut by_name: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for e in kernels(v) {
        by_name
            .entry(e["name"].as_str().expect("name").to_string())
            .or_default()
            .push((e["ts"].as_f64().unwrap(), e["dur"].as_f64().unwrap()));
    }
    by_name
        .into_iter()
        .map(|(name, mut calls)| {
            calls.sort_by(|a, b| a.0.total_cmp(&b.0));
            (name, (calls.len() as u64, calls.iter().fold(0.0, |s, c| s + c.1)))
        })
        .collect()
}

/// The kernel name with the most time (ties by name).
fn slowest(sums: &BTreeMap<String, (u64, f64)>) -> String {
    sums.iter().max_by(|a, b| a.1 .1.total_cmp(&b.1 .1).then_with(|| b.0.cmp(a.0))).expect("kernels").0.clone()
}

/// The trace as rank `rank` wrote it, with `slowed`'s calls [`FACTOR`] times as long.
fn rewrite(v: &Value, rank: i64, slowed: Option<&str>) -> Value {
    let mut v = v.clone();
    v["distributedInfo"] = json!({"backend": "nccl", "rank": rank, "world_size": 2});
    if let Some(name) = slowed {
        for e in v["traceEvents"].as_array_mut().unwrap() {
            if e["cat"] == "kernel" && e["name"] == name {
                e["dur"] = json!(e["dur"].as_f64().unwrap() * FACTOR);
            }
        }
    }
    v
}

/// An empty folder of this test's own under cargo's scratch space.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("torch_runs").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Writes a run folder `<root>/<run>/worker<rank>.<span>.pt.trace.json`, one file per rank.
fn write_run(root: &Path, run: &str, ranks: &[Value]) -> PathBuf {
    let dir = root.join(run);
    std::fs::create_dir_all(&dir).unwrap();
    for (i, v) in ranks.iter().enumerate() {
        let rank = v["distributedInfo"]["rank"].as_i64().unwrap_or(i as i64);
        std::fs::write(dir.join(format!("worker{rank}.1795841222637258163.pt.trace.json")), serde_json::to_vec(v).unwrap()).unwrap();
    }
    dir
}

fn cli_json<T: serde::de::DeserializeOwned>(args: &[&str]) -> T {
    let (code, out, err) = common::tidemark(args);
    assert_eq!(code, 0, "{args:?}: {err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

#[test]
fn a_folder_of_ranks_is_a_run_per_rank_and_combined() {
    let Some((path, v)) = raw() else { return };
    let root = scratch("ranks");
    let dir = write_run(&root, "base", &[rewrite(&v, 1, None), rewrite(&v, 0, None)]);
    let run: TorchRun = cli_json(&["torch-overview", dir.to_str().unwrap(), "--json"]);
    let keys: Vec<(String, &str)> = run.ranks.iter().map(|r| (r.key(), r.worker.as_str())).collect();
    assert_eq!(keys, [("rank 0".to_string(), "worker0"), ("rank 1".to_string(), "worker1")]);

    // Each rank's step split is its Overview's (the plugin's figures, rounded as it shows them).
    let oracle = common::json_at(&path.parent().unwrap().parent().unwrap().join("oracle/overview.json"));
    let perf = &oracle["performance"][0];
    let child =
        |name: &str| perf["children"].as_array().unwrap().iter().find(|c| c["name"] == name).map_or(0, |c| c["value"].as_i64().unwrap());
    let rank0 = &run.ranks[0];
    assert_eq!(run.ranks[1].split, rank0.split, "the same trace as another rank splits the same");
    assert_eq!(rank0.split.step_us.round_ties_even() as i64, perf["value"].as_i64().unwrap());
    assert_eq!(rank0.split.computation_us.round_ties_even() as i64, child("Kernel"));
    assert!((rank0.split.memcpy_us - (child("Memcpy") + child("Memset")) as f64).abs() <= 1.0, "{:?}", rank0.split);
    assert_eq!(rank0.split.communication_us, 0.0, "one GPU: no NCCL");
    let s = rank0.split;
    assert_eq!(s.other_us, s.step_us - s.computation_us - s.communication_us - s.memcpy_us);
    assert_eq!(run.split, rank0.split, "two equal ranks average to either");
    assert_eq!(run.steps, rank0.steps);

    // Kernels summed over the ranks: each name's calls and time, twice the raw trace's.
    let sums = kernel_sums(&v);
    let got: BTreeMap<String, (u64, f64)> = run.kernels.iter().map(|k| (k.name.clone(), (k.calls, k.total_us))).collect();
    let want: BTreeMap<String, (u64, f64)> = sums.iter().map(|(n, &(c, t))| (n.clone(), (2 * c, t + t))).collect();
    assert_eq!(got, want);
    assert_eq!(run.kernels[0].name, slowest(&sums));
    assert_eq!(run.ranks[0].kernels.len(), sums.len());

    // Operators summed over the ranks: twice the plugin's calls, and its times (rounded) doubled.
    let table = common::json_at(&path.parent().unwrap().parent().unwrap().join("oracle/operation_table.json"));
    let rows = table["data"].as_array().unwrap();
    assert_eq!(run.operators.len(), rows.len());
    for row in rows {
        let name = row["name"].as_str().unwrap();
        let op = run.operators.iter().find(|o| o.name == name).unwrap_or_else(|| panic!("{name}"));
        assert_eq!(op.calls, 2 * row["calls"].as_u64().unwrap(), "{name}");
        for (ours, theirs) in [
            (op.host_self_us, "host_self_duration"),
            (op.device_self_us, "device_self_duration"),
            (op.host_total_us, "host_total_duration"),
        ] {
            assert_eq!((ours / 2.0).round_ties_even() as i64, row[theirs].as_i64().unwrap(), "{name} {theirs}");
        }
    }

    // The text names each rank and the combined line; the Memory view reads one trace only.
    let (code, text, err) = common::tidemark(&["torch-overview", dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(text.starts_with("2 ranks: rank 0 (worker0), rank 1 (worker1)\n"), "{text}");
    assert!(text.contains("  rank 1 | worker1 | ") && text.contains("  combined (mean of ranks) | "), "{text}");
    let (code, _, err) = common::tidemark(&["torch-memory", dir.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("the Memory view reads one trace"), "{err}");

    // The Ranks view's command: the same run, and all three tables at once; a single trace refused.
    let ranks: TorchRun = cli_json(&["torch-ranks", dir.to_str().unwrap(), "--json"]);
    assert_eq!(ranks, run);
    let (code, all, err) = common::tidemark(&["torch-ranks", dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let at = |what: &str| all.find(what).unwrap_or_else(|| panic!("{what} in {all}"));
    assert!(at("average step (us)") < at("operators summed over the ranks"));
    assert!(at("operators summed over the ranks") < at("kernels summed over the ranks"));
    assert!(all.starts_with("2 ranks: rank 0 (worker0), rank 1 (worker1)\n") && all.contains(&text[text.find('\n').unwrap()..]), "{all}");
    let (code, _, err) = common::tidemark(&["torch-ranks", path.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not a folder; the ranks are a run folder's traces"), "{err}");

    // Two traces of one rank are refused, naming both.
    let twice = write_run(&root, "twice", &[rewrite(&v, 0, None)]);
    std::fs::write(twice.join("other.1.pt.trace.json"), serde_json::to_vec(&rewrite(&v, 0, None)).unwrap()).unwrap();
    let (code, _, err) = common::tidemark(&["torch-kernels", twice.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(err.contains("other and worker0 are both rank 0"), "{err}");
}

#[test]
fn two_runs_compare_ops_kernels_steps_and_ranks() {
    let Some((_, v)) = raw() else { return };
    let sums = kernel_sums(&v);
    let slowed = slowest(&sums);
    let root = scratch("compare");
    let base = write_run(&root, "base", &[rewrite(&v, 0, None), rewrite(&v, 1, None)]);
    let cur = write_run(&root, "cur", &[rewrite(&v, 0, Some(&slowed)), rewrite(&v, 1, Some(&slowed))]);
    let (cur, base) = (cur.to_str().unwrap(), base.to_str().unwrap());
    let c: RunComparison = cli_json(&["run-comparison", cur, base, "--json"]);
    assert_eq!((c.current.run.as_str(), c.baseline.run.as_str()), ("cur", "base"));
    let hosts: Vec<(&str, Presence)> = c.hosts.iter().map(|h| (h.host.as_str(), h.presence)).collect();
    assert_eq!(hosts, [("rank 0", Presence::Both), ("rank 1", Presence::Both)]);

    // Kernels: the slowed one gains (FACTOR − 1) × its time on each of the two ranks; no other moves.
    let t = c.torch.as_ref().expect("PyTorch runs compare kernels");
    let (calls, total) = sums[&slowed];
    assert_eq!(t.kernels.len(), sums.len());
    let k = &t.kernels[0];
    assert_eq!((k.name.as_str(), k.presence, k.current_calls, k.baseline_calls), (slowed.as_str(), Presence::Both, 2 * calls, 2 * calls));
    assert_eq!((k.total_time_us.current, k.total_time_us.baseline), (2.0 * FACTOR * total, total + total));
    assert_eq!(k.total_time_us.delta, 2.0 * (FACTOR - 1.0) * total);
    assert!(t.kernels[1..].iter().all(|k| k.total_time_us.delta == 0.0 && k.presence == Presence::Both));

    // Ops: host time does not move; device self time moves by what the slowed kernel's calls
    // launched from inside an op add (the raw trace's: kernel → runtime call by correlation id →
    // an op on that thread around the call). The op tree times a kernel as end − start of epoch µs
    // (~5e12, an f64 ULP of 2^-10 µs), so each call may be off by a ULP either end.
    assert!(c.ops.iter().filter(|o| !o.on_device).all(|o| o.self_time_us.delta == 0.0 && o.presence == Presence::Both));
    assert_eq!(c.host_self_time_us.delta, 0.0);
    let (launched, launches) = launched_by_ops(&v, &slowed);
    let want = 2.0 * (FACTOR - 1.0) * launched;
    let ulps = 2.0 * 2.0 * 2.0 * launches as f64 * 2f64.powi(-10);
    assert!((c.device_self_time_us.delta - want).abs() <= ulps, "{} vs {want}", c.device_self_time_us.delta);
    let moved: f64 = c.ops.iter().filter(|o| o.on_device).map(|o| o.self_time_us.delta).sum();
    assert!((moved - want).abs() <= ulps, "{moved} vs {want}");
    assert!(c.ops[0].on_device && c.ops[0].self_time_us.delta > 0.0, "{:?}", c.ops[0]);
    assert!(c.ops.iter().any(|o| o.op_type == "aten"));

    // Step time and ranks: this run is CPU-bound (its GPU busy 43% of the step), so its steps keep
    // their time and what the kernel adds to computation comes out of the rest; the run's change is
    // its ranks'.
    let st = c.step_time.expect("both runs have steps");
    assert_eq!(st.average_ms.delta, 0.0);
    let ranks: Vec<(&str, Presence, Option<&str>, Option<&str>)> =
        t.ranks.iter().map(|r| (r.rank.as_str(), r.presence, r.current_worker.as_deref(), r.baseline_worker.as_deref())).collect();
    assert_eq!(
        ranks,
        [("rank 0", Presence::Both, Some("worker0"), Some("worker0")), ("rank 1", Presence::Both, Some("worker1"), Some("worker1"))]
    );
    assert_eq!(t.ranks[0].step_us, t.ranks[1].step_us);
    assert_eq!(st.average_ms.delta, t.ranks[0].step_us.current / 1000.0 - t.ranks[0].step_us.baseline / 1000.0);
    let r = &t.ranks[0];
    assert!(r.computation_us.delta > 0.0);
    assert!((r.computation_us.delta + r.other_us.delta).abs() < 1e-9 * r.step_us.current, "{r:?}");
    assert_eq!(t.ranks[0].communication_us.delta, 0.0);
    assert!(c.memory.is_empty() && c.notes.iter().any(|n| n.contains("memory is not compared")));

    // A run of rank 0 alone against both: rank 1 only in the baseline; files work as runs of one.
    let solo = write_run(&root, "solo", &[rewrite(&v, 0, None)]);
    let c: RunComparison = cli_json(&["run-comparison", solo.to_str().unwrap(), "--baseline", base, "--json"]);
    let ranks: Vec<(&str, Presence)> = c.torch.as_ref().unwrap().ranks.iter().map(|r| (r.rank.as_str(), r.presence)).collect();
    assert_eq!(ranks, [("rank 0", Presence::Both), ("rank 1", Presence::OnlyInBaseline)]);
    let file = solo.join("worker0.1795841222637258163.pt.trace.json");
    let c: RunComparison = cli_json(&["run-comparison", file.to_str().unwrap(), file.to_str().unwrap(), "--json"]);
    assert!(c.ops.iter().all(|o| o.self_time_us.delta == 0.0) && c.torch.unwrap().kernels.iter().all(|k| k.total_time_us.delta == 0.0));

    // The text: ranks and kernels sections.
    let (code, text, err) = common::tidemark(&["run-comparison", cur, "--baseline", base]);
    assert_eq!(code, 0, "{err}");
    assert!(text.starts_with("cur against baseline base\n"), "{text}");
    assert!(text.contains("\n  ranks: average step") && text.contains("\n  kernels by change in total time"), "{text}");
}

/// Σ duration and count of `name`'s calls launched by a runtime call that lies inside an op of its
/// thread.
fn launched_by_ops(v: &Value, name: &str) -> (f64, usize) {
    let events = v["traceEvents"].as_array().unwrap();
    let span = |e: &Value| (e["ts"].as_f64().unwrap(), e["ts"].as_f64().unwrap() + e["dur"].as_f64().unwrap_or(0.0));
    let runtimes: BTreeMap<i64, &Value> = events
        .iter()
        .filter(|e| e["cat"] == "cuda_runtime" || e["cat"] == "cuda_driver")
        .filter_map(|e| Some((e["args"]["correlation"].as_i64()?, e)))
        .collect();
    let ops: Vec<&Value> = events.iter().filter(|e| e["cat"] == "cpu_op").collect();
    kernels(v)
        .filter(|k| k["name"] == name)
        .filter(|k| {
            let Some(rt) = k["args"]["correlation"].as_i64().and_then(|c| runtimes.get(&c)) else { return false };
            let (s, e) = span(rt);
            ops.iter().any(|op| op["tid"] == rt["tid"] && op["pid"] == rt["pid"] && span(op).0 <= s && e <= span(op).1)
        })
        .fold((0.0, 0), |(s, n), k| (s + k["dur"].as_f64().unwrap(), n + 1))
}

#[test]
fn the_protocol_serves_a_run() {
    use tidemark::engine::protocol::{request, RequestBody, ResponseBody};
    let Some((_, v)) = raw() else { return };
    let mut s = tidemark::engine::Session::new();
    let mut ids = Vec::new();
    for rank in [0, 1] {
        let bytes = serde_json::to_vec(&rewrite(&v, rank, None)).unwrap();
        ids.push(s.open(&format!("run/worker{rank}.7.pt.trace.json.gz"), bytes, &mut |_, _| {}).expect("opens").id);
    }
    let body = RequestBody::from(request::TorchRun { file_ids: ids.clone() });
    assert_eq!(serde_json::to_string(&body).unwrap(), r#"{"type":"torch_run","file_ids":[0,1]}"#);
    let engine = s.torch_run(&ids).expect("a run");
    let ResponseBody::TorchRun { run } = common::ask(&mut s, body, None) else { panic!("a run") };
    assert_eq!(*run, engine);
    assert_eq!(s.overview(ids[1]).unwrap().run_host.host, "worker1");
    // A run of no files, and an XSpace file among Kineto ones, are clear errors.
    let ResponseBody::Failed { error } = common::ask(&mut s, RequestBody::from(request::TorchRun { file_ids: Vec::new() }), None) else {
        panic!("refused")
    };
    assert!(matches!(error, tidemark::engine::EngineError::EmptyRun), "{error:?}");
    let xspace = s.open("x/w.xplane.pb", common::bytes("tf/d2_tf_cnn/d2_tf_cnn.xplane.pb.gz"), &mut |_, _| {}).expect("opens").id;
    let e = s.torch_run(&[ids[0], xspace]).expect_err("refused");
    assert!(e.to_string().contains("one per rank"), "{e}");
    let e = s.run_comparison(&[ids[0]], &[xspace]).expect_err("refused");
    assert!(e.to_string().contains("a run of the same kind"), "{e}");
}
