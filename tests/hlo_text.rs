//! The HLO instruction text (XProf's "HLO expression") equals XProf's own on every instruction the
//! real device traces give it for: the TPU v6e trace's `XLA Ops` event metadata (XLA's text of each op,
//! from the TPU runtime), the fused instructions in XProf's Op Profile of that trace, and the
//! `hlo_op_expression` column of XProf's HLO Op Stats on the TPU and AMD traces. Read in place; each
//! fixture is skipped with a note when absent.

mod common;

use serde_json::Value;
use tidemark::analysis::xla_modules::{XlaInstruction, XlaModules};
use tidemark::decode::xplane::XSpace;
use tidemark::decode::Profile;

/// (program id, instruction name, XProf's text).
type Oracle = Vec<(u64, String, String)>;

fn space(path: &std::path::Path) -> XSpace {
    match common::open_at(path).profile {
        Profile::XSpace(s) => s,
        _ => panic!("{} is not an XSpace", path.display()),
    }
}

/// The TPU runtime's text of each op, and its `shape_with_layout` stat: an `XLA Ops` event's metadata
/// is named with the text (its display name is the op's, which for async copies is not the
/// instruction's: the instruction is named in the text, `%name = …`).
fn tpu_event_texts(space: &XSpace) -> (Oracle, Oracle) {
    let (mut texts, mut shapes) = (Vec::new(), Vec::new());
    for plane in space.planes.iter().filter(|p| p.name().starts_with("/device:TPU:")) {
        for meta in plane.meta.event_metadata.values().filter(|m| !m.display_name.is_empty()) {
            let Some(name) = meta.name.strip_prefix('%').and_then(|t| t.split_once(" = ")).map(|(n, _)| n.to_string()) else { continue };
            let stat =
                |wanted: &str| meta.stats.iter().find(|s| plane.stat_name(s.metadata_id) == wanted).and_then(|s| plane.stat_value(s));
            let Some(program_id) = stat("program_id").and_then(|v| v.as_u64()) else { continue };
            texts.push((program_id, name.clone(), meta.name.clone()));
            if let Some(shape) = stat("shape_with_layout").and_then(|v| v.as_str().map(str::to_string)) {
                shapes.push((program_id, name, shape));
            }
        }
    }
    (texts, shapes)
}

/// Every `hlo_op_expression` of XProf's HLO Op Stats.
fn hlo_stats_texts(oracle: &Value) -> Oracle {
    let cols: Vec<&str> = oracle["cols"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap()).collect();
    let col = |id: &str| cols.iter().position(|c| *c == id).unwrap();
    let (pid, name, expr) = (col("program_id"), col("hlo_op_name"), col("hlo_op_expression"));
    let cell = |row: &Value, i: usize| row["c"][i]["v"].clone();
    oracle["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let program_id = match cell(r, pid) {
                Value::String(s) => s.parse().unwrap(),
                v => v.as_u64().unwrap(),
            };
            (program_id, cell(r, name).as_str().unwrap().to_string(), cell(r, expr).as_str().unwrap().to_string())
        })
        .collect()
}

/// The fused instructions under each fusion of XProf's Op Profile (program id 0 there), with the
/// fusion's program id.
fn op_profile_fused_texts(node: &Value, out: &mut Oracle) {
    let fusion = node["xla"]["category"].as_str().is_some_and(|c| c.ends_with(" fusion"));
    let program_id = node["xla"]["programId"].as_str().and_then(|p| p.parse().ok()).unwrap_or(0);
    for c in node["children"].as_array().into_iter().flatten() {
        // A group of duplicate fusions has the fusions as children; a fusion, its fused instructions.
        if fusion && c["xla"]["programId"] == "0" {
            out.push((program_id, c["name"].as_str().unwrap().to_string(), c["xla"]["expression"].as_str().unwrap().to_string()));
        }
        op_profile_fused_texts(c, out);
    }
}

/// Compares every oracle text with ours (`field` of the instruction); returns (matched, differences).
fn compare(modules: &XlaModules, oracle: &Oracle, field: fn(&XlaInstruction) -> &str) -> (usize, Vec<String>) {
    let mut matched = 0;
    let mut differ = Vec::new();
    for (program_id, name, text) in oracle {
        match modules.instruction(*program_id, name) {
            Some(i) if field(i) == text => matched += 1,
            Some(i) => differ.push(format!("{program_id}/{name}:\n  ours:  {}\n  xprof: {text}", field(i))),
            None => differ.push(format!("{program_id}/{name}: no such instruction")),
        }
    }
    (matched, differ)
}

fn expression(i: &XlaInstruction) -> &str {
    &i.expression
}

#[test]
fn expressions_equal_xprof_on_the_tpu_trace() {
    let f = "jax_tpu_v6e_inference/tpu_v6e_inference";
    let Some(trace) = common::device_fixture(&format!("{f}.xplane.pb")) else { return };
    let space = space(&trace);
    let modules = XlaModules::from_space(&space);
    let (mut oracle, shapes) = tpu_event_texts(&space);
    let events = oracle.len();
    let hlo_stats = hlo_stats_texts(&common::json_at(&trace.with_file_name("tpu_v6e_inference.hlo_stats.json")));
    let rows = hlo_stats.iter().filter(|(_, name, _)| name != "IDLE").count();
    oracle.extend(hlo_stats.into_iter().filter(|(_, name, _)| name != "IDLE"));
    let profile = common::json_at(&trace.with_file_name("tpu_v6e_inference.op_profile.json"));
    let before = oracle.len();
    op_profile_fused_texts(&profile["byProgram"], &mut oracle);
    let fused = oracle.len() - before;
    assert!(events > 0 && fused > 0 && !shapes.is_empty(), "the oracle has texts: {events} events, {fused} fused");
    let (matched, differ) = compare(&modules, &oracle, expression);
    println!(
        "TPU v6e: {matched} of {} texts equal XProf's ({events} event texts, {rows} HLO Op Stats rows, {fused} fused instructions)",
        oracle.len()
    );
    assert!(differ.is_empty(), "{} differ:\n{}", differ.len(), differ.join("\n"));
    let (matched, differ) = compare(&modules, &shapes, |i| &i.shape);
    println!("TPU v6e: {matched} of {} shapes equal the trace's shape_with_layout", shapes.len());
    assert!(differ.is_empty(), "{} differ:\n{}", differ.len(), differ.join("\n"));
}

#[test]
fn expressions_equal_xprof_hlo_stats_on_the_amd_traces() {
    for f in ["jax_mi300x_conv/mi300x_conv", "jax_mi300x_attention/mi300x_attention", "jax_mi355x_te_attention/mi355x_te_attention"] {
        let Some(trace) = common::device_fixture(&format!("{f}.xplane.pb")) else { continue };
        let name = f.rsplit('/').next().unwrap();
        let oracle = hlo_stats_texts(&common::json_at(&trace.with_file_name(format!("{name}.hlo_stats.json"))));
        assert!(!oracle.is_empty(), "{f}: XProf's table has rows");
        let modules = XlaModules::from_space(&space(&trace));
        let (matched, differ) = compare(&modules, &oracle, expression);
        println!("{name}: {matched} of {} texts equal XProf's", oracle.len());
        assert!(differ.is_empty(), "{f}: {} differ:\n{}", differ.len(), differ.join("\n"));
    }
}
