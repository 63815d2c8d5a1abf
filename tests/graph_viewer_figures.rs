//! The Graph tool's centre card and figures (issue 29): a fusion at the centre, drawn as its cluster,
//! still has its instruction read out for the card; each drawn instruction's time is its row of the
//! op tables (XProf's HLO Op Stats on TPU, checked against XProf 2.24's `hlo_stats`; the XLA ops
//! table on CPU), and its bytes are the logical buffers it defines (checked against XProf's Memory
//! Viewer peak buffers).

mod common;

use std::collections::BTreeSet;
use tidemark::analysis::graph_viewer::{GraphOptions, NodeKind};
use tidemark::engine::graph_viewer::{GraphView, TimeSource};
use tidemark::engine::{Scope, Session};

const A2: &str = "jax/a2_mlp_train/a2_mlp_train.xplane.pb.gz";
const TPU: &str = "jax_tpu_v6e_inference/tpu_v6e_inference.xplane.pb";

fn session_with(path: &std::path::Path) -> (Session, u32) {
    let mut s = Session::new();
    let bytes = std::fs::read(path).expect("fixture");
    let name = path.file_name().and_then(|n| n.to_str()).expect("name").to_string();
    let id = s.open(&name, bytes, &mut |_, _| {}).unwrap_or_else(|e| panic!("{e}")).id;
    (s, id)
}

fn view(s: &mut Session, id: u32, module: &str, node: Option<&str>, width: u32) -> GraphView {
    s.graph_viewer_view(id, Some(module), &GraphOptions { node: node.map(str::to_string), width }).unwrap_or_else(|e| panic!("{e}"))
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1e-300)
}

/// The instructions a view draws: nodes and the fusions drawn as clusters.
fn drawn(v: &GraphView) -> BTreeSet<String> {
    v.graph
        .nodes
        .iter()
        .filter(|n| n.kind != NodeKind::Root)
        .map(|n| n.name.clone())
        .chain(v.graph.clusters.iter().filter(|c| c.fused).map(|c| c.caller.clone()))
        .collect()
}

#[test]
fn a_fusion_at_the_centre_is_its_highlighted_cluster_and_still_has_a_card() {
    let (mut s, id) = session_with(&common::fixture(A2));
    let v = view(&mut s, id, "jit_train_step(14)", Some("ynn_fusion.5"), 1);
    // Drawn as its fused computation: no node is the centre, one cluster is.
    assert!(v.graph.nodes.iter().all(|n| !n.highlight));
    let highlighted: Vec<_> = v.graph.clusters.iter().filter(|c| c.highlight).collect();
    assert_eq!(highlighted.len(), 1);
    assert_eq!(highlighted[0].caller, "ynn_fusion.5");
    let center = v.graph.center_node.as_ref().expect("the centre's card");
    assert_eq!((center.name.as_str(), center.opcode.as_str()), ("ynn_fusion.5", "fusion"));
    // The card's HLO text and shape are what the XLA ops table says of the op.
    let ops = s.xla_ops_cpu(id).expect("xla ops");
    let row = ops
        .rows
        .iter()
        .find(|r| r.op_name == "ynn_fusion.5" && r.memory_viewer_module.as_deref() == Some("jit_train_step(14)"))
        .expect("row");
    assert_eq!(center.expression, row.expression);
    assert_eq!(center.shape, row.shape);

    // An instruction drawn as a node: the card is that node.
    let v = view(&mut s, id, "jit_train_step(14)", Some("dot_general.3"), 2);
    let node = v.graph.nodes.iter().find(|n| n.highlight).expect("a highlighted node");
    assert_eq!(v.graph.center_node.as_ref(), Some(node));
    // A computation drawn whole has no centre instruction.
    let v = view(&mut s, id, "jit_train_step(14)", Some(&v.graph.computation), 1);
    assert!(v.graph.center_is_computation && v.graph.center_node.is_none());
}

#[test]
fn cpu_times_are_the_xla_ops_rows_and_bytes_the_memory_viewers_buffers() {
    let (mut s, id) = session_with(&common::fixture(A2));
    let oracle = common::json("jax/a2_mlp_train/a2_mlp_train.memory_viewer.jit_train_step(14).json");
    let entry = oracle["entryComputationName"].as_str().expect("entry");
    let v = view(&mut s, id, "jit_train_step(14)", Some(entry), 1);
    assert_eq!(v.figures.time_source, Some(TimeSource::XlaOpsCpu));
    assert!(v.figures.has_buffers);
    let names = drawn(&v);
    let ops = s.xla_ops_cpu(id).expect("xla ops");
    let rows: Vec<_> =
        ops.rows.iter().filter(|r| r.memory_viewer_module.as_deref() == Some("jit_train_step(14)") && names.contains(&r.op_name)).collect();
    assert!(rows.len() > 10, "{} rows", rows.len());
    for r in &rows {
        let f = &v.figures.by_name[&r.op_name];
        assert!(close(f.self_time_us.expect("time"), r.self_time_ps as f64 / 1e6), "{}", r.op_name);
        assert_eq!((f.self_time_fraction, f.occurrences, f.flop_rate), (Some(r.self_time_fraction), Some(r.occurrences), None));
    }
    assert_eq!(v.figures.by_name.values().filter(|f| f.self_time_us.is_some()).count(), rows.len());
    // XProf's peak buffers of the entry computation's instructions, each among the buffers we give.
    let mut checked = 0;
    for b in oracle["maxHeap"].as_array().expect("maxHeap") {
        // The small buffers XProf folds into one entry name no instruction.
        let Some(name) = b["instructionName"].as_str().filter(|n| names.contains(*n)) else { continue };
        let bytes = b["logicalBufferSizeMib"].as_f64().expect("size") * 1_048_576.0;
        let ours = &v.figures.by_name[name].buffers;
        assert!(ours.iter().any(|&(_, size)| close(size as f64, bytes)), "{name}: {bytes} not in {ours:?}");
        checked += 1;
    }
    assert!(checked > 5, "{checked} buffers checked");
}

#[test]
fn tpu_times_are_xprofs_hlo_stats_rows() {
    let Some(path) = common::device_fixture(TPU) else { return };
    let oracle = common::json_at(&path.with_file_name("tpu_v6e_inference.hlo_stats.json"));
    let (mut s, id) = session_with(&path);
    let module = "jit_f(12190760917235803885)";
    let v = view(&mut s, id, module, None, 1_000);
    assert_eq!(v.figures.time_source, Some(TimeSource::HloStats));
    let names = drawn(&v);
    let mut checked = 0;
    for row in oracle["rows"].as_array().expect("rows") {
        let c: Vec<&serde_json::Value> = row["c"].as_array().expect("cells").iter().map(|c| &c["v"]).collect();
        let name = c[3].as_str().expect("name");
        if c[1].as_str() != Some("12190760917235803885") || !names.contains(name) {
            continue;
        }
        let f = &v.figures.by_name[name];
        assert!(close(f.self_time_us.expect("time"), c[9].as_f64().expect("self time")), "{name}");
        assert!(close(f.self_time_fraction.expect("fraction") * 100.0, c[11].as_f64().expect("percent")), "{name}");
        assert_eq!(f.occurrences, c[6].as_f64().map(|n| n as u64), "{name}");
        assert!(close(f.flop_rate.expect("flop rate"), c[14].as_f64().expect("flop rate")), "{name}");
        checked += 1;
    }
    assert!(checked >= 6, "{checked} rows checked");
    assert_eq!(v.figures.by_name.values().filter(|f| f.self_time_us.is_some()).count(), checked);

    // The fusion at the centre: its card's HLO text is XProf's.
    let v = view(&mut s, id, module, Some("broadcast_add_fusion.1"), 1);
    assert!(v.graph.clusters.iter().any(|c| c.highlight && c.caller == "broadcast_add_fusion.1"));
    let text = oracle["rows"].as_array().expect("rows").iter().find_map(|r| {
        let c = r["c"].as_array()?;
        (c[3]["v"] == "broadcast_add_fusion.1").then(|| c[4]["v"].as_str().map(str::to_string))?
    });
    assert_eq!(v.graph.center_node.map(|n| n.expression), text);
    assert!(v.figures.by_name["broadcast_add_fusion.1"].self_time_us.is_some());

    // The Roofline's rows name their module as the Graph tool does: its "graph" link has a target.
    let roofline = s.roofline_model_view(&Scope::file(id), true).expect("roofline");
    let r = &roofline.records;
    let i = r.name.iter().position(|n| n == "broadcast_add_fusion.1").expect("the op's record");
    assert_eq!(r.memory_viewer_module[i].as_deref(), Some(module));
    assert_eq!(r.memory_viewer_module.len(), r.name.len());
}

/// An HLO dump has no trace: no times, and the page says so rather than colouring by nothing.
#[test]
fn a_dump_has_buffers_but_no_times() {
    let path = common::fixture("jax/a2_mlp_train/jit_train_step(14).hlo_proto.pb");
    let (mut s, id) = session_with(&path);
    let v = s.graph_viewer_view(id, None, &GraphOptions::default()).expect("graph");
    assert_eq!(v.figures.time_source, None);
    assert!(v.figures.has_buffers);
    assert!(v.figures.by_name.values().all(|f| f.self_time_us.is_none()));
    assert!(v.figures.by_name.values().any(|f| f.bytes() > 0));
}
