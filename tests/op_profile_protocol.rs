//! The Op Profile page's request through the worker protocol, against XProf's own output: the flat
//! node columns rebuild XProf's tree (names, times, occurrences, bandwidth utilisations, order) on the
//! TPU v6e and V100 traces (read in place), the page's figures follow XProf's page formulas, the
//! CPU traces answer an empty tree and the AMD traces a refusal with its reason. The wire form is
//! pinned: the tree travels as columns, smaller than XProf's nested JSON.

mod common;

use common::ask;

use serde_json::Value;
use std::collections::BTreeSet;
use tidemark::engine::op_profile::{OpNodeColumns, OpProfileGrouping, OpProfileView};
use tidemark::engine::protocol::{request, RequestBody, ResponseBody};
use tidemark::engine::Scope;
use tidemark::engine::{EngineError, Session};

fn open(s: &mut Session, name: &str, bytes: Vec<u8>) -> u32 {
    match ask(s, RequestBody::Open { path: name.into() }, Some(bytes)) {
        ResponseBody::Opened { file_id, .. } => file_id,
        other => panic!("{other:?}"),
    }
}

fn page(s: &mut Session, file_id: u32, grouping: OpProfileGrouping, include_idle: bool) -> Result<OpProfileView, EngineError> {
    match ask(s, RequestBody::from(request::OpProfile { scope: Scope::file(file_id), grouping, include_idle }), None) {
        ResponseBody::OpProfile { view } => Ok(*view),
        ResponseBody::Failed { error } => Err(error),
        other => panic!("{other:?}"),
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1e-300)
}

/// Node `i` of `cols` and its subtree equal XProf's node `x`, a fusion's fused instructions included.
fn assert_subtree(cols: &OpNodeColumns, children: &[Vec<u32>], i: usize, x: &Value, root_time: f64) {
    let name = x["name"].as_str().unwrap();
    let m = &x["metrics"];
    assert_eq!(cols.name[i], name);
    let raw = m["rawTime"].as_f64().unwrap_or(0.0);
    assert_eq!(cols.raw_time_ps[i] as f64, raw, "{name}: time");
    assert_eq!(cols.occurrences[i] as f64, m["occurrences"].as_f64().unwrap_or(0.0), "{name}: occurrences");
    let fraction = if raw > 0.0 && root_time > 0.0 { raw / root_time } else { 0.0 };
    assert!(close(cols.time_fraction[i], fraction), "{name}: share");
    // XProf's flopsUtilization: uncappedFlops over the time fraction; NaN (None) without time.
    let uncapped = m["uncappedFlops"].as_f64().unwrap_or(0.0);
    match cols.flops_utilization[i] {
        Some(u) => assert!(close(u, uncapped / fraction), "{name}: FLOPS utilisation {u}"),
        None => assert_eq!(fraction, 0.0, "{name}"),
    }
    for (k, util) in cols.bandwidth_utilization.iter().enumerate() {
        let xprof = m["bandwidthUtils"][k].as_f64().unwrap_or(0.0);
        assert!(close(util[i].unwrap_or(0.0), xprof), "{name}: bandwidth {k}");
    }
    let xla = &x["xla"];
    assert_eq!(cols.is_op[i], xla.is_object(), "{name}: op or grouping node");
    assert_eq!(cols.expression[i], xla["expression"].as_str().unwrap_or(""), "{name}: expression");
    assert_eq!(cols.category[i], xla["category"].as_str().unwrap_or(""), "{name}: category");
    let xs: Vec<&Value> = x["children"].as_array().unwrap().iter().collect();
    assert_eq!(children[i].len(), xs.len(), "{name}: children");
    assert_eq!(cols.num_children[i] as f64, x["numChildren"].as_f64().unwrap_or(0.0), "{name}: numChildren");
    for (&c, xc) in children[i].iter().zip(xs) {
        assert_eq!(cols.parent[c as usize] as usize, i);
        assert_subtree(cols, children, c as usize, xc, root_time);
    }
}

fn assert_tree(view: &OpProfileView, oracle: &Value) {
    let cols = &view.nodes;
    let children = cols.children();
    let root_time = oracle["metrics"]["rawTime"].as_f64().unwrap_or(0.0);
    assert_subtree(cols, &children, 0, oracle, root_time);
    // Pre-order: every node comes after its parent, and the columns are one length.
    assert!(cols.parent.iter().enumerate().skip(1).all(|(i, &p)| (p as usize) < i));
    for len in [cols.parent.len(), cols.raw_time_ps.len(), cols.expression.len(), cols.bandwidth_bytes_per_s[2].len()] {
        assert_eq!(len, cols.len());
    }
}

#[test]
fn the_tpu_tree_is_xprofs_in_columns() {
    let f = "jax_tpu_v6e_inference/tpu_v6e_inference";
    let Some(trace) = common::device_fixture(&format!("{f}.xplane.pb")) else { return };
    let oracle = common::json_at(&trace.with_file_name("tpu_v6e_inference.op_profile.json"));
    let mut s = Session::new();
    let id = open(&mut s, "tpu.xplane.pb", std::fs::read(&trace).unwrap());
    let with_idle = page(&mut s, id, OpProfileGrouping::ByProgram, true).unwrap();
    assert_tree(&with_idle, &oracle["byProgram"]);
    let without = page(&mut s, id, OpProfileGrouping::ByProgram, false).unwrap();
    assert_tree(&without, &oracle["byProgramExcludeIdle"]);
    assert_eq!(with_idle.device_type, "TPU");
    assert!(!without.nodes.name.iter().any(|n| n == "IDLE") && with_idle.nodes.name.iter().any(|n| n == "IDLE"));
    // Every op node carries XProf's HLO expression on TPU.
    let ops = (0..without.nodes.len()).filter(|&i| without.nodes.is_op[i]);
    assert!(ops.clone().count() > 10);
    assert!(ops.clone().all(|i| without.nodes.expression[i].starts_with('%')), "expressions");
    // Joined with the HLO modules: each op that ran (not a fusion's fused instructions, which XProf
    // lists without a program) has its shape with layout, as its expression writes it.
    for i in ops.clone().filter(|&i| without.nodes.raw_time_ps[i] > 0) {
        let (shape, expression) = (&without.nodes.shape[i], &without.nodes.expression[i]);
        assert!(!shape.is_empty() && expression.contains(&format!(" = {shape} ")), "{}: {shape} in {expression}", without.nodes.name[i]);
    }
    // The wire form is the columns, and smaller than XProf's nested JSON of the same tree.
    let wire = serde_json::to_value(&without).unwrap();
    assert!(wire["nodes"]["parent"].is_array() && wire["nodes"]["raw_time_ps"].is_array());
    assert_eq!(wire["grouping"], "by_program");
    let ours = serde_json::to_string(&without).unwrap().len();
    let xprofs = serde_json::to_string(&oracle["byProgramExcludeIdle"]).unwrap().len();
    assert!(ours < xprofs, "{ours} bytes vs XProf's {xprofs}");

    // By category: categories under the root, their times adding up to the root's.
    let by_category = page(&mut s, id, OpProfileGrouping::ByCategory, false).unwrap();
    let children = by_category.nodes.children();
    assert_eq!(by_category.nodes.raw_time_ps[0], without.nodes.raw_time_ps[0]);
    let categories: Vec<&str> = children[0].iter().map(|&c| by_category.nodes.name[c as usize].as_str()).collect();
    assert!(categories.contains(&"copy-done") && categories.contains(&"loop fusion"), "{categories:?}");
    let sum: u64 = children[0].iter().map(|&c| by_category.nodes.raw_time_ps[c as usize]).sum();
    assert_eq!(sum, by_category.nodes.raw_time_ps[0]);
    assert!(children[0].windows(2).all(|w| by_category.nodes.raw_time_ps[w[0] as usize] >= by_category.nodes.raw_time_ps[w[1] as usize]));
}

#[test]
fn the_v100_tree_is_the_idle_node() {
    let f = "tf_v100_multi_worker/v100_worker";
    let Some(trace) = common::device_fixture(&format!("{f}.xplane.pb")) else { return };
    let oracle = common::json_at(&trace.with_file_name("v100_worker.op_profile.json"));
    let mut s = Session::new();
    let id = open(&mut s, "v100.xplane.pb", std::fs::read(&trace).unwrap());
    let with_idle = page(&mut s, id, OpProfileGrouping::ByProgram, true).unwrap();
    assert_tree(&with_idle, &oracle["byProgram"]);
    assert_eq!(with_idle.nodes.name, ["IDLE"]);
    let without = page(&mut s, id, OpProfileGrouping::ByProgram, false).unwrap();
    assert_tree(&without, &oracle["byProgramExcludeIdle"]);
    assert_eq!((without.nodes.len(), without.nodes.raw_time_ps[0]), (1, 0));
}

#[test]
fn cpu_traces_answer_an_empty_tree() {
    let mut s = Session::new();
    let id = open(&mut s, "a2.xplane.pb.gz", common::bytes("jax/a2_mlp_train/a2_mlp_train.xplane.pb.gz"));
    for grouping in [OpProfileGrouping::ByProgram, OpProfileGrouping::ByCategory] {
        let v = page(&mut s, id, grouping, true).unwrap();
        assert_eq!(v.device_type, "CPU_ONLY");
        assert_eq!((v.nodes.len(), v.nodes.raw_time_ps[0], v.nodes.flops_utilization[0]), (1, 0, None));
    }
}

/// The AMD traces' XLA kernels, costed by XLA's GPU cost model, answer a tree of ops.
#[test]
fn amd_traces_answer_a_tree_of_ops() {
    let f = "jax_mi300x_conv/mi300x_conv";
    let Some(trace) = common::device_fixture(&format!("{f}.xplane.pb")) else { return };
    let oracle = common::json_at(&trace.with_file_name("mi300x_conv.op_profile.json"));
    let mut s = Session::new();
    let id = open(&mut s, "mi300x.xplane.pb", std::fs::read(&trace).unwrap());
    let v = page(&mut s, id, OpProfileGrouping::ByProgram, false).unwrap();
    assert!(v.nodes.is_op.iter().any(|&op| op), "a tree with ops");
    assert_tree(&v, &oracle["byProgramExcludeIdle"]);
}

#[test]
fn the_request_wire_form_is_pinned() {
    let body =
        RequestBody::from(request::OpProfile { scope: Scope::file(2), grouping: OpProfileGrouping::ByCategory, include_idle: false });
    assert_eq!(
        serde_json::to_value(&body).unwrap(),
        serde_json::json!({"type": "op_profile", "file_ids": [2], "grouping": "by_category", "include_idle": false})
    );
}

/// The CLI's Op Profile text prints the page's figures: each op line's time share, FLOPS and HBM
/// utilisation are the engine view's (XProf's page formulas, FLOPS uncapped), not a second formula.
#[test]
fn cli_text_prints_the_views_figures() {
    let rel = "device/nvidia_h200_jax/n1_mlp_adam/n1_mlp_adam.xplane.pb.gz";
    let mut s = Session::new();
    let id = open(&mut s, "n1.xplane.pb.gz", common::bytes(rel));
    let view = page(&mut s, id, OpProfileGrouping::ByProgram, true).expect("a tree");
    let (code, out, err) = common::tidemark(&["op-profile", common::fixture(rel).to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let n = &view.nodes;
    let percent = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |v| format!("{:.2}", v * 100.0 + 0.0));
    let mut checked = 0;
    // Names drawn once in the tree (a name under two programs would be ambiguous in the text).
    let once = |i: usize| n.name[i].len() < 60 && n.name.iter().filter(|m| **m == n.name[i]).count() == 1;
    for i in (0..n.len()).filter(|&i| n.is_op[i] && n.raw_time_ps[i] > 0 && once(i)) {
        // The line of exactly this name (not of a longer one it begins, such as "… and its duplicate(s)").
        let of_name = |l: &&str| {
            l.trim_start().strip_prefix(n.name[i].as_str()).is_some_and(|rest| rest.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        };
        let Some(line) = out.lines().find(of_name) else { continue };
        let figures: Vec<&str> = line.split_whitespace().collect();
        let at = figures.iter().position(|f| *f == "µs").expect("a time");
        assert_eq!(figures[at + 1], format!("{:.3}", n.time_fraction[i] * 100.0), "{line}");
        assert_eq!(figures[at + 3], percent(n.flops_utilization[i]), "{line}");
        assert_eq!(figures[at + 5], percent(n.bandwidth_utilization[0][i]), "{line}");
        checked += 1;
    }
    assert!(checked >= 10, "{checked} op lines checked:\n{out}");
}

/// Every op row that offers "buffers" and "graph" (a module named) on an NVIDIA trace is an
/// instruction of that module, so its graph opens; the `DelayKernel` XLA launches in `jit_stage`
/// outside any instruction offers neither, as on HLO ops and the Roofline.
#[test]
fn every_graph_link_of_the_op_tables_opens_on_n2() {
    use tidemark::analysis::graph_viewer::GraphOptions;
    use tidemark::analysis::op_profile::instruction_name;
    let Some(trace) = common::device_fixture("nvidia_h200_jax/n2_cnn_bf16/n2_cnn_bf16.xplane.pb.gz") else { return };
    let mut s = Session::new();
    let id = open(&mut s, "n2_cnn_bf16.xplane.pb.gz", std::fs::read(&trace).unwrap());
    let tree = page(&mut s, id, OpProfileGrouping::ByProgram, true).unwrap();
    let hlo = s.hlo_stats_view(&Scope::file(id)).unwrap();
    let roofline = s.roofline_model_view(&Scope::file(id), true).unwrap();
    let n = &tree.nodes;
    let linked: BTreeSet<(String, String)> = (0..n.len())
        .filter_map(|i| Some((n.memory_viewer_module[i].clone()?, instruction_name(&n.name[i]).to_string())))
        .chain(
            (0..hlo.columns.hlo_op_name.len())
                .filter_map(|i| Some((hlo.columns.memory_viewer_module[i].clone()?, hlo.columns.hlo_op_name[i].clone()))),
        )
        .chain(
            (0..roofline.records.name.len())
                .filter_map(|i| Some((roofline.records.memory_viewer_module[i].clone()?, roofline.records.name[i].clone()))),
        )
        .collect();
    assert!(linked.len() > 50, "n2's ops link to their graphs: {}", linked.len());
    for (module, op) in &linked {
        s.graph_viewer_view(id, Some(module), &GraphOptions { node: Some(op.clone()), width: 1 })
            .unwrap_or_else(|e| panic!("{module} {op}: {e}"));
    }
    let delay = (0..n.len()).find(|&i| n.name[i].contains("DelayKernel")).expect("jit_stage's DelayKernel is in the tree");
    assert_eq!(n.memory_viewer_module[delay], None);
}
