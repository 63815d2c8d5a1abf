//! "Show occurrences" of an op: TensorFlow shows its host events by op type (`_FusedConv2D`), so a
//! search by the op's name (`sequential_1/conv2d_1_2/Relu`) finds them only through their full name
//! (`long_name`: `sequential_1/conv2d_1_2/Relu:_FusedConv2D`), which the trace search matches as well
//! as names (and the `tf_op` / `hlo_op` stats). Typed text matches within them (`Relu` also finds
//! `ReluGrad`); the op links' exact query (`="name"`) finds the op's own events, as many as the op
//! tables count where their count is true: TensorFlow ops on d2, XLA ops on the JAX CPU traces, HLO
//! ops on the TPU v6e trace.

mod common;

use std::collections::BTreeMap;
use tidemark::analysis::trace_viewer::op_args::Query;
use tidemark::analysis::trace_viewer::summary;
use tidemark::engine::Scope;
use tidemark::engine::Session;

#[test]
fn a_tf_op_is_found_by_its_tf_op_stat() {
    let f = "tf/d2_tf_cnn/d2_tf_cnn";
    let mut session = Session::new();
    let id = session.open(f, common::bytes(&format!("{f}.xplane.pb.gz")), &mut |_, _| {}).unwrap().id;
    // An op from XProf's framework op stats of this trace: its type and name.
    let stats = common::json(&format!("{f}.framework_op_stats.json.gz"));
    let row = stats[0]["rows"].as_array().unwrap().iter().find(|r| r["c"][3]["v"] == "sequential_1/conv2d_1_2/Relu").expect("the op's row");
    let op_type = row["c"][2]["v"].as_str().unwrap();
    assert_eq!(op_type, "_FusedConv2D");

    let op = "sequential_1/conv2d_1_2/Relu";
    let store = session.trace_store(id).unwrap();
    let by_name = summary::search(store, |e| store.name_of(e).contains(op));
    assert_eq!(by_name.count, 0, "no event is named by the op's name");
    let found = session.trace_search(id, op).unwrap();
    assert!(found.count > 0, "the op's events are found");
    assert_eq!(found.event.len(), found.count);
    assert!(found.start_ps.windows(2).all(|w| w[0] <= w[1]), "by start time");
    // Every match names the op (a search matches within names: `…/Relu` also finds `…/ReluGrad`).
    let expected_arg = format!("{op}:{op_type}");
    let mut exact = 0;
    for &e in &found.event {
        let d = session.trace_event_details(id, e).unwrap().expect("details");
        let full = d.args.iter().find(|(k, _)| k == "long_name" || k == "tf_op").map(|(_, v)| v.clone()).unwrap_or_default();
        assert!(full.contains(op), "event {e} ({}) names {op}: {:?}", d.name, d.args);
        exact += usize::from(full == expected_arg);
    }
    // The op's own events are its runs: Tidemark's count of them (XProf's table counts the allocator
    // events that name the op too: 120 here).
    let stats = session.framework_op_stats(&Scope::file(id)).unwrap();
    let ours = stats.with_idle.rows.iter().find(|r| !r.on_device && r.op_name == op).expect("Tidemark's row");
    assert_eq!(exact as u64, ours.true_occurrences, "{expected_arg}");
    assert!(ours.true_occurrences > 0 && ours.true_occurrences < ours.occurrences);
    // The op's kernels are among them, named by its type.
    assert!(found.event.iter().any(|&e| session.trace_store(id).unwrap().name_of(e) == op_type));
    // A search by name still finds events by name (and more: those of ops whose name contains it).
    let by_type = session.trace_search(id, op_type).unwrap();
    let store = session.trace_store(id).unwrap();
    assert!(by_type.count >= summary::search(store, |e| store.name_of(e).contains(op_type)).count);
}

fn open(f: &str) -> (Session, u32) {
    let mut session = Session::new();
    let id = session.open(f, common::bytes(f), &mut |_, _| {}).unwrap().id;
    (session, id)
}

fn exact_count(session: &mut Session, id: u32, op: &str) -> u64 {
    session.trace_search(id, &Query::exact_text(op)).unwrap().count as u64
}

#[test]
fn an_exact_search_counts_a_tf_op_as_often_as_it_ran() {
    let (mut session, id) = open("tf/d2_tf_cnn/d2_tf_cnn.xplane.pb.gz");
    let stats = session.framework_op_stats(&Scope::file(id)).unwrap();
    let display_names: std::collections::HashSet<String> = session.trace_store(id).unwrap().names().iter().cloned().collect();
    let (mut checked, mut inflated) = (0, 0);
    for r in stats.with_idle.rows.iter().filter(|r| !r.on_device && r.op_type != "IDLE") {
        let found = exact_count(&mut session, id, &r.op_name);
        if display_names.contains(&r.op_name) {
            // An op named like an op type (`AddN`): every event shown by that type is named so too.
            assert!(found >= r.true_occurrences, "{}: {found} < {}", r.op_name, r.true_occurrences);
            continue;
        }
        assert_eq!(found, r.true_occurrences, "{} ({}): XProf counts {}", r.op_name, r.op_type, r.occurrences);
        checked += 1;
        inflated += usize::from(r.occurrences != r.true_occurrences);
    }
    assert!(checked > 250, "{checked} ops checked");
    assert!(inflated > 0, "ops XProf's count inflates are among them");
    // `sgd/Mul_1` is not `sgd/Mul_12`: typed, the text finds both; exact, only its own 60 runs.
    let row = |op: &str| stats.with_idle.rows.iter().find(|r| !r.on_device && r.op_name == op).unwrap().true_occurrences;
    let (mul_1, mul_12) = (row("sgd/Mul_1"), row("sgd/Mul_12"));
    assert_eq!(exact_count(&mut session, id, "sgd/Mul_1"), mul_1);
    let typed = session.trace_search(id, "sgd/Mul_1").unwrap().count as u64;
    assert!(typed >= mul_1 + mul_12, "typed text matches within names: {typed}");
}

#[test]
fn an_exact_search_counts_an_xla_op_on_cpu_as_often_as_it_ran() {
    for f in ["jax/a1_docs_seed/a1_docs_seed.xplane.pb.gz", "jax/a2_mlp_train/a2_mlp_train.xplane.pb.gz"] {
        let (mut session, id) = open(f);
        let table = session.xla_ops_cpu(id).unwrap();
        // An instruction name repeats across modules (`fusion` in several): the search names the op only.
        let mut runs: BTreeMap<String, u64> = BTreeMap::new();
        for r in &table.rows {
            *runs.entry(r.op_name.clone()).or_default() += r.occurrences;
        }
        assert!(runs.len() > 10, "{f}: {} ops", runs.len());
        for (op, n) in &runs {
            assert_eq!(exact_count(&mut session, id, op), *n, "{f}: {op}");
        }
    }
}

#[test]
fn an_exact_search_counts_an_hlo_op_on_tpu_as_xprof_does() {
    let Some(path) = common::device_fixture("jax_tpu_v6e_inference/tpu_v6e_inference.xplane.pb") else { return };
    let mut session = Session::new();
    let id = session.open("tpu_v6e_inference.xplane.pb", std::fs::read(path).unwrap(), &mut |_, _| {}).unwrap().id;
    let oracle = common::json_at(&common::device_fixture("jax_tpu_v6e_inference/tpu_v6e_inference.hlo_stats.json").unwrap());
    let col = |id: &str| oracle["cols"].as_array().unwrap().iter().position(|c| c["id"] == id).unwrap();
    let (name, occurrences) = (col("hlo_op_name"), col("occurrences"));
    let mut by_name: BTreeMap<String, u64> = BTreeMap::new();
    for r in oracle["rows"].as_array().unwrap() {
        *by_name.entry(r["c"][name]["v"].as_str().unwrap().to_string()).or_default() += r["c"][occurrences]["v"].as_f64().unwrap() as u64;
    }
    assert!(by_name.len() > 10);
    for (op, n) in &by_name {
        assert_eq!(exact_count(&mut session, id, op), *n, "{op}");
    }
    // `copy-done` is not `copy-done.4`.
    assert!(session.trace_search(id, "copy-done").unwrap().count as u64 > by_name["copy-done"]);
}
