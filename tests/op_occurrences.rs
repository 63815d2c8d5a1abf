//! "Show occurrences" of a TensorFlow framework op: TensorFlow shows its host events by op type
//! (`_FusedConv2D`), so a search by the op's name (`sequential_1/conv2d_1_2/Relu`) finds them only
//! through their full name (`long_name`: `sequential_1/conv2d_1_2/Relu:_FusedConv2D`), which the trace
//! search matches as well as names (and the `tf_op` / `hlo_op` stats).

mod common;

use tidemark::analysis::trace_viewer::summary;
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
    let by_name = summary::search(session.trace_store(id).unwrap(), op);
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
    let stats = session.framework_op_stats(id).unwrap();
    let ours = stats.with_idle.rows.iter().find(|r| !r.on_device && r.op_name == op).expect("Tidemark's row");
    assert_eq!(exact as u64, ours.true_occurrences, "{expected_arg}");
    assert!(ours.true_occurrences > 0 && ours.true_occurrences < ours.occurrences);
    // The op's kernels are among them, named by its type.
    assert!(found.event.iter().any(|&e| session.trace_store(id).unwrap().name_of(e) == op_type));
    // A search by name still finds events by name (and more: those of ops whose name contains it).
    let by_type = session.trace_search(id, op_type).unwrap();
    assert!(by_type.count >= summary::search(session.trace_store(id).unwrap(), op_type).count);
}
