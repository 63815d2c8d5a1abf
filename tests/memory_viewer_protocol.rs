//! The Memory Viewer through the page/worker protocol: the module list over every open file, one
//! module's analysis (equal to the engine's, and read back intact on the page side), and the plain
//! answer for a module without buffer assignment.

use std::path::Path;
use tidemark::analysis::memory_viewer::{analyze, Options};
use tidemark::decode::{decode, Profile};
use tidemark::engine::protocol::{handle, Request, RequestBody, Response, ResponseBody, VERSION};
use tidemark::engine::{EngineError, Session};

fn bytes(rel: &str) -> Vec<u8> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(rel);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Sends `body` as the page does (JSON both ways) and returns the reply as the page reads it.
fn ask(session: &mut Session, seq: u64, body: RequestBody, file: Option<Vec<u8>>) -> ResponseBody {
    let json = serde_json::to_string(&Request { v: VERSION, seq, body }).unwrap();
    let reply = handle(session, &json, file, &mut |_| {});
    assert_eq!(reply.seq, seq);
    let back: Response = serde_json::from_str(&serde_json::to_string(&reply).unwrap()).unwrap();
    assert_eq!(back, reply, "the reply must read back unchanged on the page side");
    back.body
}

fn open(session: &mut Session, seq: u64, name: &str, rel: &str) -> u32 {
    match ask(session, seq, RequestBody::Open { path: name.into() }, Some(bytes(rel))) {
        ResponseBody::Opened { file_id, .. } => file_id,
        other => panic!("{name}: {other:?}"),
    }
}

#[test]
fn modules_of_every_file_largest_first_and_one_module_analysis() {
    let mut s = Session::new();
    let a2 = open(&mut s, 1, "a2_mlp_train.xplane.pb.gz", "jax/a2_mlp_train/a2_mlp_train.xplane.pb.gz");
    let before =
        open(&mut s, 2, "module_0008.jit_tiny.before_optimizations.hlo.pb", "hlo/module_0008.jit_tiny.before_optimizations.hlo.pb");
    let after = open(&mut s, 3, "module_0042.after.hlo.pb", "hlo/module_0042.jit_mlp_train_step.cpu_after_optimizations.hlo.pb");

    let ResponseBody::MemoryViewerModules { modules } =
        ask(&mut s, 4, RequestBody::MemoryViewerModules { file_ids: vec![a2, before, after] }, None)
    else {
        panic!("expected the module list")
    };
    // a2's nine modules, plus one module per HloProto dump.
    assert_eq!(modules.len(), 11, "{modules:#?}");
    assert_eq!(modules.iter().filter(|m| m.file_id == a2).count(), 9);
    assert!(modules.iter().any(|m| m.file_id == after && m.peak_heap_bytes.is_some()));
    // Sorted by peak, largest first; the module without buffer assignment last, saying why.
    let peaks: Vec<i64> = modules.iter().filter_map(|m| m.peak_heap_bytes).collect();
    assert!(peaks.windows(2).all(|w| w[0] >= w[1]), "{peaks:?}");
    let last = modules.last().unwrap();
    assert_eq!(last.file_id, before);
    assert_eq!(last.peak_heap_bytes, None);
    let problem = last.problem.as_ref().expect("a reason");
    assert!(matches!(problem, EngineError::NoBufferAssignment { .. }) && problem.detail().contains("after_optimizations"), "{problem:?}");

    // One module: the same analysis the engine computes from the module's own HloProto.
    let body = RequestBody::MemoryViewer { file_id: a2, module: "jit_train_step(14)".into(), memory_space: None };
    let ResponseBody::MemoryViewer { viewer, module, file_id } = ask(&mut s, 5, body, None) else { panic!("expected a viewer") };
    assert_eq!((file_id, module.as_str()), (a2, "jit_train_step(14)"));
    let Profile::Hlo(direct) =
        decode("jit_train_step(14).hlo_proto.pb", bytes("jax/a2_mlp_train/jit_train_step(14).hlo_proto.pb"), &mut |_, _| {})
            .unwrap()
            .profile
    else {
        panic!("an HloProto")
    };
    assert_eq!(*viewer, analyze(&direct.proto, Options::default()).unwrap());
    let listed = modules.iter().find(|m| m.file_id == a2 && m.name == "jit_train_step(14)").unwrap();
    assert_eq!(listed.peak_heap_bytes, Some(viewer.peak_heap_bytes));
    assert_eq!(listed.memory_spaces, viewer.memory_spaces);

    // Asking again answers from the cache, identically.
    let body = RequestBody::MemoryViewer { file_id: a2, module: "jit_train_step(14)".into(), memory_space: Some(0) };
    let ResponseBody::MemoryViewer { viewer: again, .. } = ask(&mut s, 6, body, None) else { panic!("expected a viewer") };
    assert_eq!(again, viewer);

    // No buffer assignment, an unknown module, a memory space the module lacks, a closed file: plain answers.
    let body = RequestBody::MemoryViewer { file_id: before, module: last.name.clone(), memory_space: None };
    let ResponseBody::Failed { error } = ask(&mut s, 7, body, None) else { panic!("expected a problem") };
    assert!(matches!(error, EngineError::NoBufferAssignment { .. }), "{error:?}");
    let body = RequestBody::MemoryViewer { file_id: a2, module: "no_such_module".into(), memory_space: None };
    let ResponseBody::Failed { error: EngineError::UnknownModule { module, known, .. } } = ask(&mut s, 8, body, None) else {
        panic!("expected an unknown module")
    };
    assert!(module == "no_such_module" && known.iter().any(|k| k == "jit_train_step(14)"), "{known:?}");
    let body = RequestBody::MemoryViewer { file_id: a2, module: "jit_train_step(14)".into(), memory_space: Some(7) };
    let ResponseBody::Failed { error: EngineError::NoSuchMemorySpace { memory_space, present, .. } } = ask(&mut s, 9, body, None) else {
        panic!("expected a missing memory space")
    };
    assert_eq!((memory_space, present), (7, viewer.memory_spaces.clone()));
    ask(&mut s, 10, RequestBody::Close { file_id: a2 }, None);
    let body = RequestBody::MemoryViewer { file_id: a2, module: "jit_train_step(14)".into(), memory_space: None };
    assert_eq!(ask(&mut s, 11, body, None), ResponseBody::Failed { error: EngineError::UnknownFile { file_id: a2 } });
    let ResponseBody::MemoryViewerModules { modules } =
        ask(&mut s, 12, RequestBody::MemoryViewerModules { file_ids: vec![a2, before, after] }, None)
    else {
        panic!("expected the module list")
    };
    assert_eq!(modules.len(), 2);
}
