//! The Graph Viewer against XProf 2.24.2's own `graph_viewer` (type `graph`, format `dot`) output,
//! made by `scripts/graph_viewer_oracle.py` into `tests/fixtures/graph_viewer/`: for every case (a
//! CPU trace, a TPU trace, two H200 traces and an H200 `--xla_dump_hlo_as_proto` dump; several nodes
//! and widths, entry roots, one whole computation) our DOT holds the same nodes, edges (with their
//! operand numbers and kinds) and cluster membership. Both DOTs are read by
//! the same parser; XLA's node ids are pointers, so a node is known by the instruction name its edges'
//! tooltips give it (or its label). Also: bad input, bounds, the layout and the module overview.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use tidemark::analysis::graph_viewer::dot::to_dot;
use tidemark::analysis::graph_viewer::layout::layout;
use tidemark::analysis::graph_viewer::{graph, overview, EdgeKind, Graph, GraphOptions, GraphViewerError, NodeKind, MAX_NODES};
use tidemark::analysis::memory_viewer::modules;
use tidemark::proto::hlo::{HloComputationProto, HloInstructionProto, HloModuleProto, ShapeProto};

/// A DOT graph reduced to what the comparison reads.
#[derive(Debug, Default, PartialEq)]
struct Parsed {
    nodes: BTreeSet<String>,
    /// (from, to, kind, operand number) with multiplicity.
    edges: BTreeMap<(String, String, String, String), usize>,
    /// Each node's innermost cluster.
    membership: BTreeMap<String, String>,
    /// Each cluster's enclosing cluster ("" at the top).
    clusters: BTreeMap<String, String>,
}

fn between<'s>(s: &'s str, start: &str, end: &str) -> Option<&'s str> {
    let i = s.find(start)? + start.len();
    let j = s[i..].find(end)? + i;
    Some(&s[i..j])
}

fn cluster_key(label: &str) -> String {
    let caller = between(label, "<b>", "</b>").unwrap_or("");
    if label.starts_with("Fused expression") {
        format!("fused {caller}")
    } else {
        let computation = label.split("<br/>").nth(1).unwrap_or("");
        format!("sub {caller} {computation}")
    }
}

fn parse(dot: &str) -> Parsed {
    let mut stack: Vec<String> = Vec::new();
    let mut lines = dot.lines().peekable();
    // id -> (label title, cluster)
    let mut node_ids: Vec<(String, String, String)> = Vec::new();
    let mut raw_edges: Vec<(String, String, String, String, String)> = Vec::new();
    let mut clusters = BTreeMap::new();
    while let Some(line) = lines.next() {
        if line.starts_with("subgraph cluster_") {
            let mut label = "";
            while let Some(l) = lines.peek() {
                if let Some(rest) = l.strip_prefix("label = <") {
                    label = rest.strip_suffix(">;").unwrap_or(rest);
                    lines.next();
                    break;
                }
                lines.next();
            }
            let key = cluster_key(label);
            clusters.insert(key.clone(), stack.last().cloned().unwrap_or_default());
            stack.push(key);
        } else if line.starts_with("}  // cluster_") {
            stack.pop();
        } else if let Some((id, rest)) = line.split_once(" [label=<") {
            // A node statement; its tooltip may run over several lines.
            let mut statement = rest.to_string();
            while !statement.trim_end().ends_with("];") {
                match lines.next() {
                    Some(l) => {
                        statement.push('\n');
                        statement.push_str(l);
                    }
                    None => break,
                }
            }
            let title = between(&statement, "<b>", "</b>").unwrap_or(statement.split(">, shape=").next().unwrap_or(""));
            node_ids.push((id.to_string(), title.to_string(), stack.last().cloned().unwrap_or_default()));
        } else if let Some((ends, attrs)) = line.split_once(" [") {
            let Some((a, b)) = ends.split_once(" -> ") else { continue };
            let tooltip = between(attrs, "tooltip=\"", "\"").unwrap_or("");
            let kind = if tooltip == " " {
                "root"
            } else if attrs.contains("ltail=") {
                "subcomputation"
            } else if attrs.contains("label=\"ctrl\"") {
                "control"
            } else {
                "operand"
            };
            let operand = between(attrs, "headlabel=\"", "\"").unwrap_or("").to_string();
            raw_edges.push((a.to_string(), b.to_string(), kind.to_string(), operand, tooltip.to_string()));
        }
    }
    // Names from the edges' tooltips (a subcomputation edge's source is named by its computation).
    let mut name_of: BTreeMap<String, String> = BTreeMap::new();
    for (a, b, kind, _, tooltip) in &raw_edges {
        if let Some((from, to)) = tooltip.split_once(" -> ") {
            if kind != "subcomputation" {
                name_of.insert(a.clone(), from.to_string());
            }
            name_of.insert(b.clone(), to.to_string());
        }
    }
    let mut parsed = Parsed { clusters, ..Default::default() };
    for (id, title, cluster) in &node_ids {
        let name = match name_of.get(id) {
            Some(n) => n.clone(),
            None if title.starts_with("Parameter ") => format!("{title} of {cluster}"),
            None => title.clone(),
        };
        name_of.insert(id.clone(), name.clone());
        parsed.membership.insert(name.clone(), cluster.clone());
        parsed.nodes.insert(name);
    }
    for (a, b, kind, operand, _) in raw_edges {
        let name = |id: &str| name_of.get(id).cloned().unwrap_or_else(|| format!("?{id}"));
        *parsed.edges.entry((name(&a), name(&b), kind, operand)).or_default() += 1;
    }
    parsed
}

fn oracle_dir() -> PathBuf {
    common::fixture("graph_viewer")
}

/// The module `module` of the file at `input` (a path as the oracle's index gives it, relative to
/// the checkout), or `None` when it is a device fixture absent here.
fn module_of(input: &str, module: &str) -> Option<HloModuleProto> {
    let path = match input.strip_prefix("../shared/fixtures/device/") {
        Some(rel) => common::device_fixture(rel)?,
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(input),
    };
    let profile = common::open_at(&path).profile;
    let inputs = modules::module_inputs(&profile);
    let m = modules::select(&inputs, module).unwrap_or_else(|e| panic!("{input}: {e}"));
    let proto = m.proto.as_ref().unwrap_or_else(|e| panic!("{input}: {e}"));
    proto.hlo_module.clone()
}

fn cases() -> Vec<(String, serde_json::Value)> {
    let index = common::json_at(&oracle_dir().join("index.json"));
    index.as_object().expect("index.json is an object").iter().map(|(k, v)| (k.clone(), v.clone())).collect()
}

fn describe(a: &Parsed, b: &Parsed) -> String {
    let only = |x: &BTreeSet<String>, y: &BTreeSet<String>| x.difference(y).cloned().collect::<Vec<_>>();
    let edges = |x: &Parsed, y: &Parsed| {
        x.edges.iter().filter(|(k, n)| y.edges.get(*k) != Some(n)).map(|(k, n)| format!("{k:?}x{n}")).collect::<Vec<_>>()
    };
    let membership = |x: &Parsed, y: &Parsed| {
        x.membership.iter().filter(|(k, v)| y.membership.get(*k) != Some(v)).map(|(k, v)| format!("{k} in {v:?}")).collect::<Vec<_>>()
    };
    format!(
        "nodes only ours {:?}\nnodes only XProf {:?}\nedges only/differing ours {:?}\nedges only/differing XProf {:?}\nmembership ours {:?}\nmembership XProf {:?}\nclusters ours {:?}\nclusters XProf {:?}",
        only(&a.nodes, &b.nodes),
        only(&b.nodes, &a.nodes),
        edges(a, b),
        edges(b, a),
        membership(a, b),
        membership(b, a),
        a.clusters,
        b.clusters
    )
}

#[test]
fn dot_equals_xprof_on_every_oracle_case() {
    let mut compared = BTreeSet::new();
    let mut defaults = 0;
    for (case, spec) in cases() {
        let input = spec["input"].as_str().expect("input");
        let Some(module) = module_of(input, spec["module"].as_str().expect("module")) else { continue };
        let options = GraphOptions {
            node: Some(spec["node"].as_str().expect("node").to_string()),
            width: spec["width"].as_u64().expect("width") as u32,
        };
        let g = graph(&module, &options).unwrap_or_else(|e| panic!("{case}: {e}"));
        assert!(g.notes.is_empty(), "{case}: {:?}", g.notes);
        let ours = parse(&to_dot(&g));
        let theirs = parse(&std::fs::read_to_string(oracle_dir().join(format!("{case}.dot"))).expect("oracle dot"));
        assert!(!theirs.nodes.is_empty(), "{case}: the oracle parsed to nothing");
        assert!(ours == theirs, "{case} differs from XProf:\n{}", describe(&ours, &theirs));
        // XProf needs a node; the cases naming the entry computation's root are also our default.
        let default = graph(&module, &GraphOptions { node: None, width: options.width }).unwrap_or_else(|e| panic!("{case}: {e}"));
        if default.center == g.center {
            assert!(parse(&to_dot(&default)) == theirs, "{case}: the graph without a node is not XProf's around the entry root");
            defaults += 1;
        }
        compared.insert(case.split('_').next().unwrap_or_default().to_string());
    }
    // CPU and the H200 trace kept in the repository (n1) are always here; TPU and the other NVIDIA
    // files when ../shared is.
    assert!(compared.contains("cpu") && compared.contains("nvidia"), "oracle platforms compared: {compared:?}");
    assert!(defaults >= 1, "no oracle case is centred on an entry root");
}

#[test]
fn cli_prints_xprofs_dot() {
    let file = common::fixture("jax/a2_mlp_train/a2_mlp_train.xplane.pb.gz");
    let (code, out, err) = common::tidemark(&[
        "graph-viewer",
        file.to_str().expect("utf-8 path"),
        "--module",
        "jit_train_step(14)",
        "--node",
        "ynn_fusion.5",
        "--width",
        "3",
    ]);
    assert_eq!(code, 0, "{err}");
    let theirs = parse(&std::fs::read_to_string(oracle_dir().join("cpu_ynn_fusion_5_w3.dot")).expect("oracle"));
    let ours = parse(&out);
    assert!(ours == theirs, "{}", describe(&ours, &theirs));

    let (code, out, err) =
        common::tidemark(&["graph-viewer", file.to_str().unwrap(), "--module", "jit_train_step(14)", "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let json: serde_json::Value = serde_json::from_str(&out).expect("json");
    // Without --node: the entry computation's root.
    assert_eq!(json["center"], "tuple.5");
    assert!(json["nodes"].as_array().is_some_and(|n| n.iter().any(|n| n["name"] == "tuple.5" && n["highlight"] == true)));

    let (code, _, err) = common::tidemark(&["graph-viewer", file.to_str().unwrap(), "--module", "jit_train_step(14)", "--node", "nope.1"]);
    assert_eq!(code, 1);
    assert!(err.contains("no instruction or computation named `nope.1`"), "{err}");
    let (code, _, err) = common::tidemark(&["graph-viewer", file.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("choose one with --module") && err.contains("jit_train_step(14)"), "{err}");
}

fn shape(dims: &[i64]) -> ShapeProto {
    ShapeProto { element_type: 11, dimensions: dims.to_vec(), ..Default::default() }
}

fn instr(id: i64, name: &str, opcode: &str, operands: &[i64]) -> HloInstructionProto {
    HloInstructionProto {
        id,
        name: name.into(),
        opcode: opcode.into(),
        shape: Some(shape(&[4])),
        operand_ids: operands.to_vec(),
        ..Default::default()
    }
}

fn module(computations: Vec<HloComputationProto>) -> HloModuleProto {
    let entry = computations.last().map_or(0, |c| c.id);
    HloModuleProto { name: "m".into(), entry_computation_id: entry, computations, ..Default::default() }
}

/// A chain p -> a1 -> a2 -> ... of `n` adds in one computation.
fn chain(n: usize) -> HloModuleProto {
    let mut instructions = vec![HloInstructionProto { parameter_number: 0, ..instr(1, "p", "parameter", &[]) }];
    for k in 0..n as i64 {
        instructions.push(instr(k + 2, &format!("add.{k}"), "add", &[k + 1, k + 1]));
    }
    let root = instructions.last().map_or(0, |i| i.id);
    module(vec![HloComputationProto { name: "main".into(), id: 1, root_id: root, instructions }])
}

#[test]
fn bad_input_gets_a_clear_error() {
    let m = chain(3);
    let e = graph(&m, &GraphOptions { node: Some("missing".into()), width: 1 }).unwrap_err();
    assert_eq!(e, GraphViewerError::UnknownNode { module: "m".into(), node: "missing".into() });
    let empty = module(Vec::new());
    assert!(matches!(graph(&empty, &GraphOptions::default()), Err(GraphViewerError::NoComputations { .. })));
    // A computation whose root is missing: no default centre.
    let mut rootless = chain(2);
    rootless.computations[0].root_id = 99;
    assert!(matches!(graph(&rootless, &GraphOptions::default()), Err(GraphViewerError::NoRoot { .. })));
}

#[test]
fn neighbourhood_counts_hops_both_ways() {
    let m = chain(10);
    let g = graph(&m, &GraphOptions { node: Some("add.5".into()), width: 2 }).expect("graph");
    let names: BTreeSet<&str> = g.nodes.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(names, ["add.3", "add.4", "add.5", "add.6", "add.7"].into_iter().collect());
    // add.4 -> add.5 twice (both operands), numbered.
    let into_center: Vec<_> = g.edges.iter().filter(|e| g.nodes[e.to].name == "add.5").map(|e| e.operand).collect();
    assert_eq!(into_center, vec![Some(0), Some(1)]);
    assert!(g.nodes.iter().find(|n| n.name == "add.3").is_some_and(|n| n.deemphasized));
    assert!(g.nodes.iter().find(|n| n.name == "add.5").is_some_and(|n| n.highlight));
}

/// A module with one of each kind of cluster: the entry computation `main` reads parameters `a` and
/// `b` into `fusion.1` (fused computation `fused`: `a.f` + `b.f`), runs a while loop on it (body
/// `body`, condition `cond`) and reduces the loop's result with the trivial reducer `sum`.
fn clustered() -> HloModuleProto {
    let scalar = || Some(shape(&[]));
    let param = |id: i64, name: &str, n: i64| HloInstructionProto { parameter_number: n, ..instr(id, name, "parameter", &[]) };
    let fused = HloComputationProto {
        name: "fused".into(),
        id: 2,
        root_id: 23,
        instructions: vec![param(21, "a.f", 0), param(22, "b.f", 1), instr(23, "add.f", "add", &[21, 22])],
    };
    let body = HloComputationProto {
        name: "body".into(),
        id: 3,
        root_id: 32,
        instructions: vec![param(31, "x.b", 0), instr(32, "multiply.b", "multiply", &[31, 31])],
    };
    let cond = HloComputationProto {
        name: "cond".into(),
        id: 4,
        root_id: 42,
        instructions: vec![
            param(41, "x.c", 0),
            HloInstructionProto { shape: scalar(), comparison_direction: "LT".into(), ..instr(42, "compare.c", "compare", &[41, 41]) },
        ],
    };
    let sum = HloComputationProto {
        name: "sum".into(),
        id: 5,
        root_id: 53,
        instructions: vec![
            HloInstructionProto { shape: scalar(), ..param(51, "x.s", 0) },
            HloInstructionProto { shape: scalar(), ..param(52, "y.s", 1) },
            HloInstructionProto { shape: scalar(), ..instr(53, "add.s", "add", &[51, 52]) },
        ],
    };
    let main = HloComputationProto {
        name: "main".into(),
        id: 1,
        root_id: 15,
        instructions: vec![
            param(11, "a", 0),
            param(12, "b", 1),
            HloInstructionProto {
                fusion_kind: "kLoop".into(),
                called_computation_ids: vec![2],
                ..instr(13, "fusion.1", "fusion", &[11, 12])
            },
            HloInstructionProto { called_computation_ids: vec![4, 3], ..instr(14, "while.1", "while", &[13]) },
            HloInstructionProto { shape: scalar(), called_computation_ids: vec![5], ..instr(15, "reduce.1", "reduce", &[14, 12]) },
        ],
    };
    HloModuleProto { name: "m".into(), entry_computation_id: 1, computations: vec![fused, body, cond, sum, main], ..Default::default() }
}

#[test]
fn fusions_are_clusters_and_called_computations_are_reachable() {
    let m = clustered();
    let names = |g: &Graph| g.nodes.iter().filter(|n| n.kind != NodeKind::Root).map(|n| n.name.clone()).collect::<BTreeSet<_>>();
    fn cluster_of<'g>(g: &'g Graph, name: &str) -> Option<&'g tidemark::analysis::graph_viewer::Cluster> {
        g.nodes.iter().find(|n| n.name == name).and_then(|n| n.cluster).map(|c| &g.clusters[c])
    }

    // A fusion whose operands are all shown is expanded: its fused computation a cluster, its fused
    // instructions nodes in it, no node for the fusion itself, its operands' edges into its fused
    // parameters.
    let g = graph(&m, &GraphOptions { node: Some("fusion.1".into()), width: 1 }).expect("graph");
    assert!(!names(&g).contains("fusion.1"), "{:?}", names(&g));
    let fused = g.clusters.iter().position(|c| c.fused).expect("a fused cluster");
    assert_eq!((g.clusters[fused].computation.as_str(), g.clusters[fused].caller.as_str()), ("fused", "fusion.1"));
    assert!(g.clusters[fused].highlight, "the centre's cluster is highlighted");
    for n in ["a.f", "b.f", "add.f"] {
        assert_eq!(cluster_of(&g, n).map(|c| c.computation.as_str()), Some("fused"), "{n}");
    }
    let edge = |g: &Graph, a: &str, b: &str| g.edges.iter().any(|e| g.nodes[e.from].name == a && g.nodes[e.to].name == b);
    assert!(edge(&g, "a", "a.f") && edge(&g, "b", "b.f") && edge(&g, "add.f", "while.1"));
    assert_eq!(g.center_node.as_ref().map(|n| n.name.as_str()), Some("fusion.1"));

    // One of its operands left out (two hops from `a`): the fusion is one node, not expanded.
    let g = graph(&m, &GraphOptions { node: Some("a".into()), width: 1 }).expect("graph");
    assert!(names(&g).contains("fusion.1") && g.clusters.iter().all(|c| !c.fused), "{:?}", g.clusters);
    // ... and re-centred on it, it is.
    let g = graph(&m, &GraphOptions { node: Some("fusion.1".into()), width: 1 }).expect("graph");
    assert!(g.clusters.iter().any(|c| c.fused && c.caller == "fusion.1"));

    // A while loop's body and condition are clusters drawn whole, each root with a subcomputation
    // edge to the loop; the trivial reducer is named in its caller's node, not drawn.
    let g = graph(&m, &GraphOptions { node: Some("while.1".into()), width: 1 }).expect("graph");
    for (computation, root) in [("body", "multiply.b"), ("cond", "compare.c")] {
        let c = g.clusters.iter().position(|c| c.computation == computation).unwrap_or_else(|| panic!("no {computation} cluster"));
        assert!(!g.clusters[c].fused && g.clusters[c].caller == "while.1");
        assert!(
            g.edges.iter().any(|e| e.kind == EdgeKind::Subcomputation
                && e.cluster == Some(c)
                && g.nodes[e.from].name == root
                && g.nodes[e.to].name == "while.1"),
            "no edge from {root} to while.1"
        );
    }
    assert!(!g.clusters.iter().any(|c| c.computation == "sum"));
    let reduce = g.nodes.iter().find(|n| n.name == "reduce.1").expect("reduce");
    assert!(reduce.details.iter().any(|d| d == "Subcomputation: add"), "{:?}", reduce.details);
    // A called computation is reachable by name: drawn whole.
    let g = graph(&m, &GraphOptions { node: Some("body".into()), width: 1 }).expect("graph");
    assert!(g.center_is_computation && names(&g) == ["x.b", "multiply.b"].into_iter().map(String::from).collect());
    for w in [0, 1, 2, 3] {
        for node in ["a", "fusion.1", "while.1", "reduce.1", "add.f", "multiply.b"] {
            check_layout(&graph(&m, &GraphOptions { node: Some(node.into()), width: w }).expect("graph"));
        }
    }
}

#[test]
fn cycles_in_malformed_input_end() {
    // Operands in a cycle, and a computation that calls itself.
    let mut a = instr(1, "a", "add", &[2, 2]);
    a.called_computation_ids = vec![1];
    let b = instr(2, "b", "add", &[1, 1]);
    let m = module(vec![HloComputationProto { name: "main".into(), id: 1, root_id: 1, instructions: vec![a, b] }]);
    let g = graph(&m, &GraphOptions { node: Some("a".into()), width: 1000 });
    match g {
        Ok(g) => {
            assert!(g.nodes.len() <= 3);
            let l = layout(&g);
            assert_eq!(l.edges.len(), g.edges.len());
        }
        Err(e) => assert!(matches!(e, GraphViewerError::Cycle { .. }), "{e}"),
    }
}

#[test]
fn a_huge_neighbourhood_is_cut_with_a_note() {
    // A root with 50,000 operands: its neighbourhood of width 1 holds them all.
    let mut instructions: Vec<HloInstructionProto> =
        (0..50_000).map(|k| HloInstructionProto { parameter_number: k, ..instr(k + 1, &format!("p.{k}"), "parameter", &[]) }).collect();
    instructions.push(instr(60_000, "tuple", "tuple", &(1..=50_000).collect::<Vec<_>>()));
    let m = module(vec![HloComputationProto { name: "main".into(), id: 1, root_id: 60_000, instructions }]);
    let g: Graph = graph(&m, &GraphOptions::default()).expect("graph");
    // The first operands, then the centre (drawn past the cut) with its ROOT tag and an edge from each
    // operand drawn.
    assert_eq!(g.nodes.len(), MAX_NODES + 2);
    let centre = g.nodes.iter().position(|n| n.name == "tuple").expect("the centre is drawn");
    assert!(g.nodes[centre].highlight);
    assert_eq!(g.edges.iter().filter(|e| e.to == centre).count(), MAX_NODES);
    assert!(g.notes.iter().any(|n| n.contains("only the first")), "{:?}", g.notes);
    let l = layout(&g);
    assert_eq!(l.nodes.len(), g.nodes.len());
}

/// No two nodes of a layout overlap, every edge is a polyline from its source's box to its target's.
fn check_layout(g: &Graph) {
    let l = layout(g);
    assert_eq!(l.nodes.len(), g.nodes.len());
    assert_eq!(l.edges.len(), g.edges.len());
    let mut by_row: BTreeMap<i64, Vec<usize>> = BTreeMap::new();
    for (i, r) in l.nodes.iter().enumerate() {
        by_row.entry(r.y.round() as i64).or_default().push(i);
    }
    for (i, a) in l.nodes.iter().enumerate() {
        for b in l.nodes.iter().skip(i + 1) {
            assert!(!a.overlaps(b), "{a:?} overlaps {b:?}");
        }
    }
    // Every node inside each cluster that holds it, and outside every other.
    for (n, (node, r)) in g.nodes.iter().zip(&l.nodes).enumerate() {
        let mut holding = BTreeSet::new();
        let mut c = node.cluster;
        while let Some(k) = c {
            holding.insert(k);
            c = g.clusters[k].parent;
        }
        for (k, b) in l.clusters.iter().enumerate() {
            if holding.contains(&k) {
                assert!(
                    r.x >= b.x && r.y >= b.y && r.x + r.w <= b.x + b.w && r.y + r.h <= b.y + b.h,
                    "node {n} {r:?} outside its cluster {k} {b:?}"
                );
            } else {
                assert!(!r.overlaps(b), "node {} {r:?} inside cluster {} ({}) {b:?} it is not in", node.name, k, g.clusters[k].computation);
            }
        }
    }
    // Clusters apart unless one holds the other.
    let holds = |outer: usize, mut inner: usize| loop {
        match g.clusters[inner].parent {
            Some(p) if p == outer => return true,
            Some(p) => inner = p,
            None => return false,
        }
    };
    for (i, a) in l.clusters.iter().enumerate() {
        for (j, b) in l.clusters.iter().enumerate().skip(i + 1) {
            if a.w > 0.0 && b.w > 0.0 && !holds(i, j) && !holds(j, i) {
                assert!(!a.overlaps(b), "clusters {} and {} overlap: {a:?} {b:?}", g.clusters[i].computation, g.clusters[j].computation);
            }
        }
    }
    for (e, points) in g.edges.iter().zip(&l.edges) {
        assert!(points.len() >= 2, "edge {e:?} has no line");
        let (from, to) = (l.nodes[e.from], l.nodes[e.to]);
        let (first, last) = (points[0], points[points.len() - 1]);
        let on = |r: tidemark::analysis::graph_viewer::layout::Rect, p: (f64, f64)| {
            p.0 >= r.x - 1e-6 && p.0 <= r.x + r.w + 1e-6 && p.1 >= r.y - 1e-6 && p.1 <= r.y + r.h + 1e-6
        };
        assert!(on(from, first) && on(to, last), "edge {e:?}: {points:?} does not join {from:?} to {to:?}");
    }
}

#[test]
fn layouts_of_the_oracle_cases_have_no_overlaps_and_every_edge() {
    for (case, spec) in cases() {
        let input = spec["input"].as_str().expect("input");
        let Some(module) = module_of(input, spec["module"].as_str().expect("module")) else { continue };
        let options = GraphOptions { node: spec["node"].as_str().map(str::to_string), width: spec["width"].as_u64().unwrap_or(1) as u32 };
        let g = graph(&module, &options).unwrap_or_else(|e| panic!("{case}: {e}"));
        check_layout(&g);
    }
    check_layout(&graph(&chain(30), &GraphOptions { node: Some("add.10".into()), width: 5 }).expect("graph"));
    // Whole entry computations, every fusion and loop body a cluster (nested ones in the loops).
    for (input, name) in [
        ("tests/fixtures/jax/a2_mlp_train/a2_mlp_train.xplane.pb.gz", "jit_train_step(14)"),
        ("tests/fixtures/jax/a2_mlp_train/a2_mlp_train.xplane.pb.gz", "jit_init_params(4)"),
        ("../shared/fixtures/device/nvidia_h200_jax/n1_mlp_adam/n1_mlp_adam.xplane.pb.gz", "jit_train_step(5314)"),
        ("../shared/fixtures/device/nvidia_h200_jax/n3_lm_scan/n3_lm_scan.xplane.pb.gz", "jit_train_step(437688)"),
    ] {
        let Some(m) = module_of(input, name) else { continue };
        let entry = overview(&m).expect("overview").computation;
        let g = graph(&m, &GraphOptions { node: Some(entry), width: 1 }).expect("whole entry computation");
        assert!(g.clusters.iter().any(|c| c.fused), "{name}: no fusion drawn as its cluster");
        check_layout(&g);
    }
}

/// A ladder of `n` adds in one computation `main`, each reading the one before and one 7 back: a
/// whole computation of `n` + 1 instructions whose long edges bend through 6 layers.
fn ladder(n: usize) -> HloModuleProto {
    let mut instructions = vec![HloInstructionProto { parameter_number: 0, ..instr(1, "p", "parameter", &[]) }];
    for k in 0..n as i64 {
        let back = (k + 1 - 7).max(1);
        instructions.push(instr(k + 2, &format!("add.{k}"), "add", &[k + 1, back]));
    }
    let root = instructions.last().map_or(0, |i| i.id);
    HloModuleProto {
        name: format!("ladder_{n}"),
        ..module(vec![HloComputationProto { name: "main".into(), id: 1, root_id: root, instructions }])
    }
}

/// The mean wall time of `f` over `runs` runs, ms.
fn mean_ms(runs: u32, mut f: impl FnMut()) -> f64 {
    let started = std::time::Instant::now();
    for _ in 0..runs {
        f();
    }
    started.elapsed().as_secs_f64() * 1000.0 / f64::from(runs)
}

/// Layout time against node count (bench/RESULTS.md), natively:
/// `cargo test --release --test graph_viewer bench_layout -- --ignored --nocapture`. Whole ladders of
/// 100, 1,000 and 6,500 instructions, then the overview of the largest fixture module. Writes the
/// ladders as HloProtos under `target/graph-bench/` for the page's half (`bench/graph_layout.mjs`).
#[test]
#[ignore]
fn bench_layout() {
    use prost::Message;
    let out = PathBuf::from(std::env::var("CARGO_TARGET_DIR").unwrap_or_else(|_| format!("{}/target", env!("CARGO_MANIFEST_DIR"))))
        .join("graph-bench");
    std::fs::create_dir_all(&out).expect("graph-bench folder");
    println!("case\tnodes\tedges\tgraph_ms\tlayout_ms");
    for n in [100usize, 1_000, 6_500] {
        let m = ladder(n);
        let file = out.join(format!("ladder_{n}.hlo.pb"));
        let proto = tidemark::proto::hlo::HloProto { hlo_module: Some(m.clone()), ..Default::default() };
        std::fs::write(&file, proto.encode_to_vec()).expect("write the ladder");
        let options = GraphOptions { node: Some("main".into()), width: 1 };
        let g = graph(&m, &options).expect("graph");
        let graph_ms = mean_ms(5, || drop(std::hint::black_box(graph(&m, &options))));
        let layout_ms = mean_ms(5, || drop(std::hint::black_box(layout(&g))));
        println!("ladder_{n} (whole)\t{}\t{}\t{graph_ms:.1}\t{layout_ms:.1}", g.nodes.len(), g.edges.len());
    }
    // The largest module among the fixtures (tests/fixtures and ../shared/fixtures/device).
    for (input, name) in [
        ("tests/fixtures/jax/a2_mlp_train/a2_mlp_train.xplane.pb.gz", "jit_init_params(4)"),
        ("../shared/fixtures/device/nvidia_h200_jax/n3_lm_scan/n3_lm_scan.xplane.pb.gz", "jit_train_step(437688)"),
    ] {
        let Some(m) = module_of(input, name) else { continue };
        let o = overview(&m).expect("overview");
        let graph_ms = mean_ms(5, || drop(std::hint::black_box(overview(&m))));
        let layout_ms = mean_ms(5, || drop(std::hint::black_box(layout(&o))));
        println!("{name} (overview)\t{}\t{}\t{graph_ms:.1}\t{layout_ms:.1}", o.nodes.len(), o.edges.len());
        let g = graph(&m, &GraphOptions { node: Some(o.computation.clone()), width: 1 }).expect("whole entry computation");
        let layout_ms = mean_ms(5, || drop(std::hint::black_box(layout(&g))));
        println!("{name} (entry, fusions expanded)\t{}\t{}\t-\t{layout_ms:.1}", g.nodes.len(), g.edges.len());
    }
}

/// The overview of a module: the entry computation and what it calls, every fusion one node (no
/// fused cluster, no fused instruction drawn), every other instruction of those computations drawn
/// or folded as a whole computation folds it, laid out without overlaps; each neighbourhood's nodes
/// are found in it by name, through their fusion when they are fused.
#[test]
fn the_overview_draws_each_fusion_as_one_node() {
    for (input, name) in [
        ("tests/fixtures/jax/a2_mlp_train/a2_mlp_train.xplane.pb.gz", "jit_train_step(14)"),
        ("tests/fixtures/jax/a2_mlp_train/a2_mlp_train.xplane.pb.gz", "jit_init_params(4)"),
        ("../shared/fixtures/device/nvidia_h200_jax/n2_cnn_bf16/n2_cnn_bf16.xplane.pb.gz", "jit_train_step(5312)"),
    ] {
        let Some(m) = module_of(input, name) else { continue };
        let o = overview(&m).expect("overview");
        let whole = graph(&m, &GraphOptions { node: Some(o.computation.clone()), width: 1 }).expect("whole entry");
        assert!(o.center_is_computation && o.center == whole.center, "{name}");
        assert!(o.clusters.iter().all(|c| !c.fused), "{name}: a fused cluster in the overview");
        let fused: BTreeSet<&str> = m
            .computations
            .iter()
            .filter(|c| {
                m.computations
                    .iter()
                    .flat_map(|k| &k.instructions)
                    .any(|i| i.opcode == "fusion" && i.called_computation_ids.contains(&c.id))
            })
            .flat_map(|c| c.instructions.iter().map(|i| i.name.as_str()))
            .collect();
        let names: BTreeSet<&str> = o.nodes.iter().filter(|n| n.kind != NodeKind::Root).map(|n| n.name.as_str()).collect();
        assert!(names.is_disjoint(&fused), "{name}: fused instructions drawn");
        // The whole entry computation expands its fusions: what it draws outside them (and outside
        // what they call), and each fusion it expands, the overview draws as nodes.
        let in_fusion = |mut c: Option<usize>| {
            while let Some(k) = c {
                if whole.clusters[k].fused {
                    return true;
                }
                c = whole.clusters[k].parent;
            }
            false
        };
        let expanded: BTreeSet<&str> =
            whole.clusters.iter().filter(|c| c.fused && !in_fusion(c.parent)).map(|c| c.caller.as_str()).collect();
        let unfused: BTreeSet<&str> =
            whole.nodes.iter().filter(|n| n.kind != NodeKind::Root && !in_fusion(n.cluster)).map(|n| n.name.as_str()).collect();
        assert!(
            expanded.is_subset(&names) && unfused.is_subset(&names),
            "{name}: {:?}",
            expanded.union(&unfused).filter(|n| !names.contains(*n)).collect::<Vec<_>>()
        );
        assert!(o.nodes.len() < whole.nodes.len() || expanded.is_empty(), "{name}: the overview is no smaller");
        check_layout(&o);
    }
    let e = overview(&HloModuleProto { name: "empty".into(), ..Default::default() }).unwrap_err();
    assert_eq!(e, GraphViewerError::NoComputations { module: "empty".into() });
}

/// The page's overview request through the worker's protocol, its wire form pinned: the module's
/// overview laid out, with the figures of its instructions.
#[test]
fn the_pages_overview_request_answers_the_overview_laid_out() {
    use tidemark::engine::protocol::ResponseBody;
    let mut s = tidemark::engine::Session::new();
    let rel = "jax/a2_mlp_train/a2_mlp_train.xplane.pb.gz";
    let file_id = match common::ask_json(&mut s, r#"{"type":"open","path":"a2.xplane.pb.gz"}"#, Some(common::bytes(rel))) {
        ResponseBody::Opened { file_id, .. } => file_id,
        other => panic!("{other:?}"),
    };
    let body = format!(r#"{{"type":"graph_overview","file_id":{file_id},"module":"jit_train_step(14)"}}"#);
    let ResponseBody::GraphOverview { overview: o } = common::ask_json(&mut s, &body, None) else { panic!("not an overview") };
    assert_eq!(o.module, "jit_train_step(14)");
    let m = module_of(&format!("tests/fixtures/{rel}"), "jit_train_step(14)").expect("module");
    assert_eq!(o.graph, overview(&m).expect("overview"));
    assert_eq!(o.layout.nodes.len(), o.graph.nodes.len());
    assert!(o.figures.by_name.values().any(|f| f.self_time_us.is_some()), "no times for the overview's nodes");
    let body = format!(r#"{{"type":"graph_overview","file_id":{file_id},"module":"not_here(1)"}}"#);
    let ResponseBody::Failed { error } = common::ask_json(&mut s, &body, None) else { panic!("an unknown module answered") };
    assert!(error.to_string().contains("not_here(1)"), "{error}");
}

/// The page's request through the worker's protocol (JSON both ways): the graph the CLI prints, laid
/// out; a module the file does not have falls back to its largest, centred on the entry root.
#[test]
fn the_pages_request_answers_the_graph_laid_out() {
    use tidemark::engine::protocol::{handle, request, Request, RequestBody, Response, ResponseBody, VERSION};
    let mut s = tidemark::engine::Session::new();
    let ask = |s: &mut tidemark::engine::Session, body: RequestBody, file: Option<Vec<u8>>| {
        let json = serde_json::to_string(&Request { v: VERSION, seq: 1, body }).expect("request");
        let reply = handle(s, &json, file, &mut |_| {});
        let back: Response = serde_json::from_str(&serde_json::to_string(&reply).expect("reply")).expect("the page reads it");
        back.body
    };
    let rel = "jax/a2_mlp_train/a2_mlp_train.xplane.pb.gz";
    let file_id = match ask(&mut s, RequestBody::Open { path: "a2.xplane.pb.gz".into() }, Some(common::bytes(rel))) {
        ResponseBody::Opened { file_id, .. } => file_id,
        other => panic!("{other:?}"),
    };
    let body = RequestBody::from(request::GraphViewer {
        file_id,
        module: Some("jit_train_step(14)".into()),
        node: Some("ynn_fusion.5".into()),
        width: 3,
    });
    let ResponseBody::GraphViewer { view } = ask(&mut s, body, None) else { panic!("not a graph") };
    assert_eq!(view.module, "jit_train_step(14)");
    assert!(view.modules.iter().any(|m| m.name == "jit_train_step(14)" && m.instructions > 100));
    let theirs = parse(&std::fs::read_to_string(oracle_dir().join("cpu_ynn_fusion_5_w3.dot")).expect("oracle"));
    let ours = parse(&to_dot(&view.graph));
    assert!(ours == theirs, "{}", describe(&ours, &theirs));
    assert_eq!(view.layout.nodes.len(), view.graph.nodes.len());

    let body = RequestBody::from(request::GraphViewer {
        file_id,
        module: Some("not_here(1)".into()),
        node: Some("ynn_fusion.5".into()),
        width: 1,
    });
    let ResponseBody::GraphViewer { view } = ask(&mut s, body, None) else { panic!("not a graph") };
    let largest = view.modules.iter().max_by_key(|m| m.instructions).expect("modules");
    assert_eq!(view.module, largest.name);
    assert!(view.graph.nodes.iter().any(|n| n.highlight));
}
