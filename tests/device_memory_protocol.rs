//! The device memory requests of the worker protocol, as the page sends them: on the real JAX
//! fixtures, through `protocol::handle`, with replies parsed back the way the page parses them.

mod common;

use common::{ask, bytes, pprof};
use tidemark::analysis::device_memory::{self as dm, Options};
use tidemark::decode::Format;
use tidemark::engine::device_memory::{flatten, DeviceMemoryQuery, FlameNode};
use tidemark::engine::protocol::{request, RequestBody, ResponseBody};
use tidemark::engine::{EngineError, Session};

fn open(s: &mut Session, rel: &str) -> u32 {
    let path = rel.rsplit('/').next().unwrap().to_string();
    match ask(s, RequestBody::Open { path }, Some(bytes(rel))) {
        ResponseBody::Opened { file_id, .. } => file_id,
        other => panic!("{rel}: {other:?}"),
    }
}

fn folded() -> DeviceMemoryQuery {
    DeviceMemoryQuery::default()
}

fn node<'a>(flame: &'a [FlameNode], depth: u32, function: &str) -> &'a FlameNode {
    flame.iter().find(|n| n.depth == depth && n.function == function).unwrap_or_else(|| panic!("no {function} at depth {depth}"))
}

#[test]
fn profile_request_answers_the_engine_report_with_a_flat_tree() {
    let mut s = Session::new();
    let id = open(&mut s, "pprof/docs_seed_memory.prof");
    let ResponseBody::DeviceMemory { answer: request::DeviceMemoryAnswer::Profile(view) } = ask(
        &mut s,
        RequestBody::from(request::DeviceMemory { files: request::DeviceMemoryFiles::Profile { file_id: id }, query: folded() }),
        None,
    ) else {
        panic!("not a profile reply")
    };
    assert_eq!((view.file_id, view.name.as_str()), (id, "docs_seed_memory.prof"));
    assert_eq!(view.labels.kinds, ["buffer", "executable"]);
    assert_eq!(view.labels.devices, ["cpu:0"]);
    // Same numbers as the analysis itself; only the tree travels flat.
    let direct = dm::analyze(&pprof("pprof/docs_seed_memory.prof"), &Options { fold_library_frames: true, kind: None });
    assert_eq!(view.flame, flatten(&direct.tree));
    assert_eq!((view.report.functions.clone(), view.report.stacks.clone()), (direct.functions, direct.stacks));
    assert!(view.report.tree.children.is_empty());
    // func2 holds the two tiled arrays (two × 40,000,000 B).
    let func2 = view.report.functions.iter().find(|f| f.function == "func2").unwrap();
    assert_eq!((func2.cum_bytes, func2.flat_bytes), (80_000_000, 0));
    assert_eq!(node(&view.flame, 2, "func2").total_bytes, 80_000_000);
    assert_eq!(view.flame[0].total_bytes, 84_000_000);
    // Preorder: every node's depth is at most one below the previous node's.
    assert!(view.flame.windows(2).all(|w| w[1].depth <= w[0].depth + 1));
}

#[test]
fn filters_by_kind_and_device_and_unfolded_frames() {
    let mut s = Session::new();
    let id = open(&mut s, "pprof/docs_seed_memory.prof");
    let mut ask_profile = |query: DeviceMemoryQuery| match ask(
        &mut s,
        RequestBody::from(request::DeviceMemory { files: request::DeviceMemoryFiles::Profile { file_id: id }, query }),
        None,
    ) {
        ResponseBody::DeviceMemory { answer: request::DeviceMemoryAnswer::Profile(view) } => view,
        other => panic!("{other:?}"),
    };
    let executables = ask_profile(DeviceMemoryQuery { kind: Some("executable".into()), ..folded() });
    assert_eq!((executables.report.total_bytes, executables.report.total_count), (0, 6));
    // Executables have no device label: a device filter keeps the three buffers.
    let cpu = ask_profile(DeviceMemoryQuery { device: Some("cpu:0".into()), ..folded() });
    assert_eq!((cpu.report.total_bytes, cpu.report.total_count), (84_000_000, 3));
    // Filters leave the labels on offer unchanged.
    assert_eq!(cpu.labels, executables.labels);
    let none = ask_profile(DeviceMemoryQuery { device: Some("cuda:7".into()), ..folded() });
    assert_eq!((none.report.total_bytes, none.report.stacks.len(), none.flame.len()), (0, 0, 1));
    // All frames: the leaf of every buffer is JAX's dispatch code, deeper than the folded stacks.
    let all = ask_profile(DeviceMemoryQuery { fold_library_frames: false, ..folded() });
    let folded_depth = ask_profile(folded()).flame.iter().map(|n| n.depth).max();
    assert!(all.flame.iter().map(|n| n.depth).max() > folded_depth);
    assert_eq!(all.report.total_bytes, 84_000_000);
}

#[test]
fn diff_and_series_requests_find_the_leak() {
    let mut s = Session::new();
    let ids: Vec<u32> = (1..=9).map(|k| open(&mut s, &format!("pprof/docs_leak/memory{k}.prof"))).collect();
    let ResponseBody::DeviceMemory { answer: request::DeviceMemoryAnswer::Diff(view) } = ask(
        &mut s,
        RequestBody::from(request::DeviceMemory {
            files: request::DeviceMemoryFiles::Diff { base_file_id: ids[7], target_file_id: ids[8] },
            query: folded(),
        }),
        None,
    ) else {
        panic!("not a diff reply")
    };
    assert_eq!((view.base_name.as_str(), view.target_name.as_str()), ("memory8.prof", "memory9.prof"));
    let top = &view.report.stacks[0];
    // Step 9 appends a (9, 10000) float32 array: 360,000 B.
    assert_eq!((top.site.as_str(), top.delta_bytes, top.delta_count), ("normal ← anotherfunc ← b2_pprof_docs_leak.py:20", 360_000, 1));
    assert_eq!(view.flame[0].total_bytes, 360_000);
    assert_eq!(node(&view.flame, 2, "anotherfunc").total_bytes, 360_000);

    // The page sends the files in the order they were dropped; the series orders them by number.
    let mut shuffled = ids.clone();
    shuffled.reverse();
    let ResponseBody::DeviceMemory { answer: request::DeviceMemoryAnswer::Series(view) } = ask(
        &mut s,
        RequestBody::from(request::DeviceMemory {
            files: request::DeviceMemoryFiles::Series { file_ids: shuffled.clone() },
            query: folded(),
        }),
        None,
    ) else {
        panic!("not a series reply")
    };
    assert_eq!(view.file_ids, shuffled);
    assert!(view.report.ordered_by_number);
    let names: Vec<&str> = view.report.snapshots.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, (1..=9).map(|k| format!("memory{k}.prof")).collect::<Vec<_>>());
    assert_eq!(view.report.suspect_count, 1);
    let suspect = &view.report.stacks[0];
    assert!(suspect.suspect);
    assert_eq!(suspect.site, "normal ← anotherfunc ← b2_pprof_docs_leak.py:20");
    assert_eq!(suspect.growth.deltas_bytes, (2..=9).map(|k| 40_000 * k).collect::<Vec<i64>>());
    assert!(suspect.explanation.starts_with("grew in 8 of 8 steps"), "{}", suspect.explanation);
    // afunction's constant 4,000,000 B array is there, and not a suspect.
    let constant =
        view.report.stacks.iter().find(|s| s.site == "normal ← afunction ← b2_pprof_docs_leak.py:13" && s.kind == "buffer").unwrap();
    assert!(!constant.suspect);
    assert_eq!(constant.bytes, vec![4_000_000; 9]);
}

#[test]
fn requests_on_the_wrong_file_explain_themselves() {
    let mut s = Session::new();
    let hlo = open(&mut s, "hlo/module_0014.jit__normal.cpu_after_optimizations.hlo.pb");
    let prof = open(&mut s, "pprof/docs_seed_memory.prof");
    for body in [
        RequestBody::from(request::DeviceMemory { files: request::DeviceMemoryFiles::Profile { file_id: hlo }, query: folded() }),
        RequestBody::from(request::DeviceMemory {
            files: request::DeviceMemoryFiles::Diff { base_file_id: prof, target_file_id: hlo },
            query: folded(),
        }),
        RequestBody::from(request::DeviceMemory {
            files: request::DeviceMemoryFiles::Series { file_ids: vec![prof, hlo] },
            query: folded(),
        }),
    ] {
        match ask(&mut s, body, None) {
            ResponseBody::Failed { error: error @ EngineError::WrongFormat { found: Format::HloProto, .. } } => {
                assert_eq!(error.file(), Some("module_0014.jit__normal.cpu_after_optimizations.hlo.pb"));
                assert!(error.detail().contains("save_device_memory_profile"), "{error}");
            }
            other => panic!("{other:?}"),
        }
    }
    match ask(
        &mut s,
        RequestBody::from(request::DeviceMemory { files: request::DeviceMemoryFiles::Profile { file_id: 99 }, query: folded() }),
        None,
    ) {
        ResponseBody::Failed { error } => assert_eq!(error, EngineError::UnknownFile { file_id: 99 }),
        other => panic!("{other:?}"),
    }
}
