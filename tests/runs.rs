//! Runs of several hosts: the op tools of a two-host run equal XProf 2.24's output for the same two
//! files (`tests/fixtures/runs/<run>/`, made by `scripts/f_xprof_two_host_runs.py`), through the engine
//! and through the CLI's `RUN_DIR` argument; and `inspect` on a log folder gives every file its run and
//! host, lists TensorBoard's sidecars, and never lets one run's file replace another's.

mod common;

use serde_json::Value;
use std::path::Path;
use tidemark::analysis::framework_op_stats::xprof_json::to_xprof_json as framework_op_stats_json;
use tidemark::analysis::hlo_stats::xprof_json::to_xprof_json as hlo_stats_json;
use tidemark::analysis::input_pipeline::xprof_json::input_pipeline_json;
use tidemark::analysis::kernel_stats::xprof_json::to_xprof_json as kernel_stats_json;
use tidemark::analysis::op_profile::xprof_json::to_xprof_json as op_profile_json;
use tidemark::analysis::overview_page::xprof_json::overview_page_json;
use tidemark::analysis::roofline_model::xprof_json::to_xprof_json as roofline_json;
use tidemark::engine::Scope;
use tidemark::engine::Session;

/// The runs with XProf's output: name, and its hosts' traces in XProf's order.
const RUNS: &[(&str, [&str; 2])] = &[
    ("tf_two_hosts", ["tf/d1_tf_keras_bfc/d1_tf_keras_bfc.xplane.pb.gz", "tf/d2_tf_cnn/d2_tf_cnn.xplane.pb.gz"]),
    ("jax_two_hosts", ["jax/a1_docs_seed/a1_docs_seed.xplane.pb.gz", "jax/a2_mlp_train/a2_mlp_train.xplane.pb.gz"]),
];

/// The tools that combine hosts, as the CLI names them and as XProf does.
const TOOLS: &[(&str, &str)] = &[
    ("framework-op-stats", "framework_op_stats"),
    ("hlo-stats", "hlo_stats"),
    ("kernel-stats", "kernel_stats"),
    ("op-profile", "op_profile"),
    ("roofline-model", "roofline_model"),
    ("overview-page", "overview_page"),
    ("input-pipeline-analyzer", "input_pipeline_analyzer"),
];

fn open_run(hosts: &[&str]) -> (Session, Vec<u32>) {
    let mut session = Session::new();
    let ids = hosts
        .iter()
        .enumerate()
        .map(|(i, rel)| {
            let path = format!("run/worker-{i}.xplane.pb");
            session.open(&path, common::bytes(rel), &mut |_, _| {}).unwrap_or_else(|e| panic!("{e}")).id
        })
        .collect();
    (session, ids)
}

fn combined(session: &mut Session, ids: &[u32], tool: &str) -> Value {
    let r = match tool {
        "framework_op_stats" => session.framework_op_stats(&Scope::run(ids)).map(|s| framework_op_stats_json(&s)),
        "hlo_stats" => session.hlo_stats(&Scope::run(ids)).map(|s| hlo_stats_json(&s)),
        "kernel_stats" => session.kernel_stats(&Scope::run(ids)).map(|s| kernel_stats_json(&s)),
        "op_profile" => session.op_profile(&Scope::run(ids)).map(|s| op_profile_json(&s)),
        "roofline_model" => session.roofline_model(&Scope::run(ids)).map(|s| roofline_json(&s)),
        "overview_page" => session.overview_page(ids).map(overview_page_json),
        "input_pipeline_analyzer" => session.input_pipeline(ids).map(input_pipeline_json),
        other => panic!("no tool {other}"),
    };
    r.unwrap_or_else(|e| panic!("{tool}: {e}"))
}

/// Our JSON text, parsed (some converters give a string, some a value).
fn parsed(v: Value) -> Value {
    match v {
        Value::String(s) => serde_json::from_str(&s).unwrap_or(Value::String(s)),
        v => v,
    }
}

#[test]
fn combined_tools_equal_xprof() {
    for (run, hosts) in RUNS {
        let (mut session, ids) = open_run(hosts);
        for (_, tool) in TOOLS {
            let actual = parsed(combined(&mut session, &ids, tool));
            let expected = common::json(&format!("runs/{run}/{run}.{tool}.json"));
            if let Some(d) = common::json_diff(&actual, &expected) {
                panic!("{run} {tool}: {d}");
            }
        }
    }
}

#[test]
fn a_run_of_one_file_is_that_file() {
    let (mut session, ids) = open_run(&[RUNS[0].1[0]]);
    let alone = framework_op_stats_json(&session.framework_op_stats(&Scope::file(ids[0])).unwrap());
    assert_eq!(framework_op_stats_json(&session.framework_op_stats(&Scope::run(&ids)).unwrap()), alone);
    assert!(session.framework_op_stats(&Scope::run(&[])).is_err());
}

/// An empty folder of this test's own under cargo's scratch space.
fn scratch(name: &str) -> std::path::PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("runs").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Copies fixture `rel` (inflated) to `dir/name`.
fn place(rel: &str, dir: &Path, name: &str) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join(name), common::bytes(rel)).unwrap();
}

#[test]
fn cli_combines_a_run_folder() {
    let (run, hosts) = RUNS[0];
    let dir = scratch("run_dir");
    for (i, rel) in hosts.iter().enumerate() {
        place(rel, &dir, &format!("worker-{i}.xplane.pb"));
    }
    let run_dir = dir.to_str().unwrap();
    for (command, tool) in TOOLS {
        let (code, out, err) = common::tidemark(&[command, run_dir, "--json"]);
        assert_eq!(code, 0, "{command}: {err}");
        let printed: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{command}: {e}"));
        if let Some(d) = common::json_diff(&printed, &common::json(&format!("runs/{run}/{run}.{tool}.json"))) {
            panic!("{command} RUN_DIR: {d}");
        }
        let (code, text, err) = common::tidemark(&[command, run_dir]);
        assert_eq!(code, 0, "{command}: {err}");
        assert!(text.contains("2 hosts"), "{command} says it combined two hosts:\n{text}");
    }
}

#[test]
fn inspect_gives_each_file_its_run_and_host() {
    let logdir = scratch("logdir");
    let profile = logdir.join("plugins/profile");
    let (old, new) = (profile.join("2026_11_23_10_00_00"), profile.join("2026_11_24_09_30_00"));
    let d1 = "tf/d1_tf_keras_none/d1_tf_keras_none.xplane.pb.gz";
    // Two runs with the same host file name; the newer run has two hosts and a sidecar.
    place(d1, &old, "ml-host.xplane.pb");
    place(d1, &new, "ml-host.xplane.pb");
    place("jax/a1_docs_seed/a1_docs_seed.xplane.pb.gz", &new, "worker-1.xplane.pb");
    std::fs::write(new.join("ml-host.trace.json.gz"), b"not read").unwrap();
    std::fs::write(new.join("ml-host.input_pipeline.pb"), b"not read").unwrap();
    let (code, out, err) = common::tidemark(&["inspect", logdir.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "sidecars are no errors: {err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let files: Vec<(String, String, String)> = v["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["path"].as_str().unwrap().to_string(), f["run"].as_str().unwrap().to_string(), f["host"].as_str().unwrap().to_string()))
        .collect();
    let expected = [
        ("plugins/profile/2026_11_23_10_00_00/ml-host.xplane.pb", "2026_11_23_10_00_00", "ml-host"),
        ("plugins/profile/2026_11_24_09_30_00/ml-host.xplane.pb", "2026_11_24_09_30_00", "ml-host"),
        ("plugins/profile/2026_11_24_09_30_00/worker-1.xplane.pb", "2026_11_24_09_30_00", "worker-1"),
    ];
    let expected: Vec<(String, String, String)> = expected.iter().map(|(p, r, h)| (p.to_string(), r.to_string(), h.to_string())).collect();
    assert_eq!(files, expected);
    let sidecars: Vec<&str> = v["sidecars"].as_array().unwrap().iter().map(|s| s["path"].as_str().unwrap()).collect();
    assert_eq!(
        sidecars,
        ["plugins/profile/2026_11_24_09_30_00/ml-host.input_pipeline.pb", "plugins/profile/2026_11_24_09_30_00/ml-host.trace.json.gz"]
    );
    assert_eq!(v["errors"].as_array().map(Vec::len), Some(0));
}

/// The page's "all hosts" through the worker protocol: `FrameworkOpStats` of the run's scope answers
/// XProf's combined table, and the run's file ids travel in the request.
#[test]
fn all_hosts_through_the_protocol() {
    use tidemark::analysis::framework_op_stats::FrameworkOpTable;
    use tidemark::engine::protocol::{handle, request, Request, RequestBody, Response, ResponseBody, VERSION};
    let (run, hosts) = RUNS[0];
    let (mut session, ids) = open_run(&hosts);
    let body = RequestBody::from(request::FrameworkOpStats { scope: Scope { file_ids: ids, window: None }, include_idle: true });
    let json = serde_json::to_string(&Request { v: VERSION, seq: 3, body }).unwrap();
    assert!(json.contains(r#""type":"framework_op_stats","file_ids":[0,1]"#), "{json}");
    let reply = handle(&mut session, &json, None, &mut |_| {});
    let back: Response = serde_json::from_str(&serde_json::to_string(&reply).unwrap()).unwrap();
    let ResponseBody::FrameworkOpStats { view } = back.body else { panic!("{:?}", back.body) };
    let expected = &common::json(&format!("runs/{run}/{run}.framework_op_stats.json"))[0];
    let actual: &FrameworkOpTable = &view.table;
    let host_rows = expected["rows"].as_array().unwrap().iter().filter(|r| r["c"][1]["v"] == "Host").count();
    assert_eq!(actual.rows.iter().filter(|r| !r.on_device).count(), host_rows);
    let idle = expected["rows"].as_array().unwrap().iter().find(|r| r["c"][3]["v"] == "IDLE").unwrap()["c"][7]["v"].as_f64().unwrap();
    let ours = actual.rows.iter().find(|r| r.op_name == "IDLE").unwrap().total_self_time_us;
    assert!((ours - idle).abs() <= 1e-9 * idle, "{ours} vs {idle}");
}

/// The page's "all hosts" for every op tool the engine combines: each `Run*` request answers its
/// one-file reply with the run's hosts combined, as XProf's two-host output has them.
#[test]
fn every_op_tool_answers_all_hosts_through_the_protocol() {
    use tidemark::engine::op_profile::OpProfileGrouping;
    use tidemark::engine::protocol::{handle, request, Request, RequestBody, Response, ResponseBody, VERSION};
    let (run, hosts) = RUNS[0];
    let (mut session, ids) = open_run(&hosts);
    let ask = |session: &mut Session, body: RequestBody| -> ResponseBody {
        let json = serde_json::to_string(&Request { v: VERSION, seq: 1, body }).unwrap();
        let reply = handle(session, &json, None, &mut |_| {});
        let back: Response = serde_json::from_str(&serde_json::to_string(&reply).unwrap()).unwrap();
        back.body
    };
    let oracle = |tool: &str| common::json(&format!("runs/{run}/{run}.{tool}.json"));
    // The reply read back from JSON against the engine's own view (numbers to 1e-9, as JSON carries them).
    fn json<T: serde::Serialize>(v: &T) -> Value {
        serde_json::to_value(v).unwrap()
    }
    fn same<T: serde::Serialize>(reply: &T, engine: &T) {
        if let Some(d) = common::json_diff(&json(reply), &json(engine)) {
            panic!("{d}");
        }
    }
    let file_ids = ids.clone();

    let ResponseBody::OverviewPage { view } = ask(&mut session, RequestBody::from(request::OverviewPage { file_ids: file_ids.clone() }))
    else {
        panic!()
    };
    let xprof = &oracle("overview_page")[1];
    assert_eq!(view.steps.names.len(), xprof["rows"].as_array().unwrap().len());
    let average: f64 = xprof["p"]["steptime_ms_average"].as_str().unwrap().parse().unwrap();
    assert!((view.step_time_ms.as_ref().unwrap().average - average).abs() <= 0.05, "XProf writes the average with one decimal");
    same(&*view, &session.overview_page_view(&ids).unwrap());
    assert!(
        common::json_diff(&json(&*view), &json(&session.overview_page_view(&[ids[0]]).unwrap())).is_some(),
        "not the first host's alone"
    );

    let ResponseBody::InputPipeline { view } = ask(&mut session, RequestBody::from(request::InputPipeline { file_ids: file_ids.clone() }))
    else {
        panic!()
    };
    assert_eq!(view.steps.names.len(), oracle("input_pipeline_analyzer")[1]["rows"].as_array().unwrap().len());
    same(&*view, &session.input_pipeline_view(&ids).unwrap());

    let ResponseBody::HloStats { view } =
        ask(&mut session, RequestBody::from(request::HloStats { scope: Scope { file_ids: file_ids.clone(), window: None } }))
    else {
        panic!()
    };
    assert_eq!(view.columns.rank.len(), oracle("hlo_stats")["rows"].as_array().map_or(0, Vec::len));
    same(&*view, &session.hlo_stats_view(&Scope::run(&ids)).unwrap());

    let ResponseBody::KernelStats { view } =
        ask(&mut session, RequestBody::from(request::KernelStats { scope: Scope { file_ids: file_ids.clone(), window: None } }))
    else {
        panic!()
    };
    assert_eq!(view.columns.kernel_name.len(), oracle("kernel_stats")["rows"].as_array().map_or(0, Vec::len));
    same(&*view, &session.kernel_stats_view(&Scope::run(&ids)).unwrap());

    let body = RequestBody::from(request::RooflineModel {
        scope: Scope { file_ids: file_ids.clone(), window: None },
        include_infeed_outfeed: true,
    });
    let ResponseBody::RooflineModel { view } = ask(&mut session, body) else { panic!() };
    same(&*view, &session.roofline_model_view(&Scope::run(&ids), true).unwrap());

    let body = RequestBody::from(request::OpProfile {
        scope: Scope { file_ids, window: None },
        grouping: OpProfileGrouping::ByCategory,
        include_idle: true,
    });
    let ResponseBody::OpProfile { view } = ask(&mut session, body) else { panic!() };
    same(&*view, &session.op_profile_view(&Scope::run(&ids), OpProfileGrouping::ByCategory, true).unwrap());
    assert_eq!(view.device_type, oracle("op_profile")["deviceType"].as_str().unwrap_or_default());
}
