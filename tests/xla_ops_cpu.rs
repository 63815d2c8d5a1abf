//! Tidemark's "XLA ops on CPU" on the JAX CPU traces, checked against the events themselves: every
//! line of the host plane is decoded whole here (prost, not the engine's wire scan), its XLA op events
//! counted and timed independently, and the table must hold exactly those runs and times. Then the
//! worker protocol and the CLI give the same table.

mod common;

use prost::Message;
use std::collections::BTreeMap;
use tidemark::analysis::xla_ops_cpu::XlaOpsCpu;
use tidemark::decode::xplane::XSpace;
use tidemark::decode::Profile;
use tidemark::engine::protocol::{handle, request, Request, RequestBody, Response, ResponseBody, VERSION};
use tidemark::engine::Session;
use tidemark::proto::xplane as pb;

/// The JAX CPU traces, and a TensorFlow one whose `jit_compile` model ran XLA ops on CPU.
const FIXTURES: [&str; 3] =
    ["jax/a1_docs_seed/a1_docs_seed.xplane.pb.gz", "jax/a2_mlp_train/a2_mlp_train.xplane.pb.gz", "tf/d2_tf_cnn/d2_tf_cnn.xplane.pb.gz"];

/// Per (module, op): runs and Σ duration, from the decoded events; and Σ duration of the runs that no
/// other op run on their line contains (what all self times must add up to).
#[derive(Debug, Default)]
struct Counted {
    by_op: BTreeMap<(String, String), (u64, u64)>,
    outermost_ps: u64,
}

fn text<'a>(plane: &'a pb::XPlane, stats: &'a [pb::XStat], name: &str) -> Option<&'a str> {
    let id = plane.stat_metadata.iter().find(|(_, m)| m.name == name).map(|(id, _)| *id)?;
    stats.iter().find(|s| s.metadata_id == id).and_then(|s| match s.value.as_ref()? {
        pb::x_stat::Value::StrValue(v) => Some(v.as_str()),
        pb::x_stat::Value::RefValue(r) => plane.stat_metadata.get(&(*r as i64)).map(|m| m.name.as_str()),
        _ => None,
    })
}

fn count_events(space: &XSpace) -> Counted {
    let plane = space.plane_named("/host:CPU").expect("a host plane");
    let mut c = Counted::default();
    for line in &plane.lines {
        let line = pb::XLineEvents::decode(&space.bytes()[line.range()]).expect("the line decodes");
        let mut spans = Vec::new();
        for e in &line.events {
            let meta = plane.meta.event_metadata.get(&e.metadata_id);
            let stat = |name| text(&plane.meta, &e.stats, name).or_else(|| meta.and_then(|m| text(&plane.meta, &m.stats, name)));
            let Some(op) = stat("hlo_op") else { continue };
            let module = stat("hlo_module").unwrap_or("").to_string();
            let Some(pb::x_event::Data::OffsetPs(start)) = e.data else { panic!("an op event without offset") };
            let slot = c.by_op.entry((module, op.to_string())).or_default();
            slot.0 += 1;
            slot.1 += e.duration_ps as u64;
            spans.push((start, start + e.duration_ps));
        }
        for (i, &(s, e)) in spans.iter().enumerate() {
            let inside_another = spans.iter().enumerate().any(|(j, &(ps, pe))| j != i && ps <= s && s < pe && (ps, pe) != (s, e));
            if !inside_another {
                c.outermost_ps += (e - s) as u64;
            }
        }
    }
    c
}

fn space(rel: &str) -> XSpace {
    match common::open(rel).profile {
        Profile::XSpace(s) => s,
        _ => panic!("{rel} is a trace"),
    }
}

fn table(rel: &str) -> XlaOpsCpu {
    let mut s = Session::new();
    let id = s.open(rel, common::bytes(rel), &mut |_, _| {}).unwrap().id;
    XlaOpsCpu::clone(&s.xla_ops_cpu(id).unwrap())
}

#[test]
fn rows_hold_exactly_the_op_events_of_the_host_threads() {
    for rel in FIXTURES {
        let counted = count_events(&space(rel));
        let t = table(rel);
        assert!(!t.rows.is_empty(), "{rel}: the JAX CPU trace has XLA ops");
        let ours: BTreeMap<(String, String), (u64, u64)> =
            t.rows.iter().map(|r| ((r.module.clone(), r.op_name.clone()), (r.occurrences, r.total_time_ps))).collect();
        assert_eq!(ours.len(), t.rows.len(), "{rel}: one row per (module, op)");
        assert_eq!(ours, counted.by_op, "{rel}: runs and total time per (module, op)");
        assert_eq!(t.total_occurrences, counted.by_op.values().map(|v| v.0).sum::<u64>(), "{rel}");
        assert_eq!(t.total_self_time_ps, counted.outermost_ps, "{rel}: self times add up to the outermost runs");
        assert_eq!(t.rows.iter().map(|r| r.self_time_ps).sum::<u64>(), t.total_self_time_ps, "{rel}");
        let fractions: f64 = t.rows.iter().map(|r| r.self_time_fraction).sum();
        assert!((fractions - 1.0).abs() < 1e-9, "{rel}: shares sum to {fractions}");
        for r in &t.rows {
            assert!(r.self_time_ps <= r.total_time_ps, "{rel} {}", r.op_name);
            assert_eq!(r.avg_time_ps, r.total_time_ps as f64 / r.occurrences as f64, "{rel} {}", r.op_name);
            assert_eq!(r.avg_self_time_ps, r.self_time_ps as f64 / r.occurrences as f64, "{rel} {}", r.op_name);
        }
        eprintln!("{rel}: {} rows, {} runs", t.rows.len(), t.total_occurrences);
    }
}

#[test]
fn rows_are_ordered_by_self_time_then_module_then_op() {
    for rel in FIXTURES {
        let t = table(rel);
        for w in t.rows.windows(2) {
            let key =
                |r: &tidemark::analysis::xla_ops_cpu::XlaOpRow| (std::cmp::Reverse(r.self_time_ps), r.module.clone(), r.op_name.clone());
            assert!(key(&w[0]) < key(&w[1]), "{rel}: {} before {}", w[0].op_name, w[1].op_name);
        }
        assert_eq!(table(rel), t, "{rel}: the same file gives the same table");
    }
}

#[test]
fn every_op_is_joined_with_its_instruction_and_module() {
    for rel in FIXTURES {
        let t = table(rel);
        assert!(t.unresolved_modules.is_empty(), "{rel}: {:?}", t.unresolved_modules);
        for r in &t.rows {
            let id = r.program_id.unwrap_or_else(|| panic!("{rel} {}: no program id", r.op_name));
            assert_eq!(r.memory_viewer_module.as_deref(), Some(format!("{}({id})", r.module).as_str()), "{rel} {}", r.op_name);
            assert!(!r.opcode.is_empty(), "{rel} {}: no instruction", r.op_name);
            assert_ne!(r.category, "unknown", "{rel} {}", r.op_name);
            assert!(r.expression.starts_with(&format!("%{} = {} ", r.op_name, r.shape)), "{rel}: {}", r.expression);
            assert!(!r.shape.is_empty(), "{rel} {}", r.op_name);
        }
    }
    // Spot checks on a2: its dots are dots, its copies data formatting, its fusions by kind.
    let t = table(FIXTURES[1]);
    let row = |op: &str, module: &str| t.rows.iter().find(|r| r.op_name == op && r.module == module).unwrap();
    assert_eq!((row("dot.2", "jit_train_step").opcode.as_str(), row("dot.2", "jit_train_step").category.as_str()), ("dot", "dot"));
    assert_eq!(row("copy.104", "jit_batch").category, "data formatting");
    assert_eq!(row("multiply_add_fusion.13", "jit_train_step").category, "loop fusion");
    assert_eq!(row("ynn_fusion.6", "jit_train_step").framework_op, "jit(train_step)/jvp()/dot_general:");
    assert_eq!(row("ynn_fusion.6", "jit_train_step").category, "custom fusion");
    assert_eq!(row("ynn_fusion.6", "jit_train_step").shape, "f32[128,512]{1,0}");
    assert!(row("ynn_fusion.6", "jit_train_step").expression.ends_with("kind=kCustom, calls=%fused_computation.6"));
    assert!(row("dot.2", "jit_train_step").source.as_deref().is_some_and(|s| s.ends_with("a2_jax_mlp_train_trace.py:24")));
}

#[test]
fn the_page_and_the_cli_get_the_same_table() {
    let rel = FIXTURES[1];
    let expected = table(rel);
    let mut s = Session::new();
    let mut ask = |body, file| {
        let json = serde_json::to_string(&Request { v: VERSION, seq: 3, body }).unwrap();
        let reply = handle(&mut s, &json, file, &mut |_| {});
        serde_json::from_str::<Response>(&serde_json::to_string(&reply).unwrap()).unwrap().body
    };
    let ResponseBody::Opened { file_id, .. } = ask(RequestBody::Open { path: rel.into() }, Some(common::bytes(rel))) else { panic!() };
    match ask(RequestBody::from(request::XlaOpsCpu { file_id }), None) {
        ResponseBody::XlaOpsCpu { table } => {
            assert_eq!(table.rows.len(), expected.rows.len());
            assert_eq!(table.rows[0].op_name, expected.rows[0].op_name);
            assert_eq!(table.total_self_time_ps, expected.total_self_time_ps);
        }
        other => panic!("{other:?}"),
    }

    let path = common::fixture(rel);
    let (code, out, err) = common::tidemark(&["xla-ops-cpu", path.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["producer"], "Tidemark");
    assert_eq!(v["rows"].as_array().unwrap().len(), expected.rows.len());
    assert_eq!(v["rows"][0]["self_time_ps"], expected.rows[0].self_time_ps);
    let (code, out, _) = common::tidemark(&["xla-ops-cpu", path.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(out.contains("not in XProf") && out.contains(&expected.rows[0].op_name), "{out}");
}

#[test]
fn a_trace_without_xla_op_events_gives_an_empty_table() {
    let t = table("tf/d1_tf_keras_none/d1_tf_keras_none.xplane.pb.gz");
    assert!(t.rows.is_empty());
    assert_eq!(t.total_self_time_ps, 0);
    assert!(t.threads.is_empty());
}
