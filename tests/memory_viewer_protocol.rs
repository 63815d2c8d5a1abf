//! The Memory Viewer through the page/worker protocol: the module list over every open file, one
//! module's analysis (equal to the engine's, and read back intact on the page side), and the plain
//! answer for a module without buffer assignment.

mod common;

use common::{ask, bytes};
use std::sync::Arc;
use tidemark::analysis::memory_viewer::{analyze, Options};
use tidemark::decode::{decode, Profile};
use tidemark::engine::memory_viewer_columns::ViewerReply;
use tidemark::engine::protocol::{request, RequestBody, ResponseBody};
use tidemark::engine::{EngineError, Session};

fn open(session: &mut Session, name: &str, rel: &str) -> u32 {
    match ask(session, RequestBody::Open { path: name.into() }, Some(bytes(rel))) {
        ResponseBody::Opened { file_id, .. } => file_id,
        other => panic!("{name}: {other:?}"),
    }
}

/// The Memory Viewer page `body` answers.
fn viewer_page(s: &mut Session, body: RequestBody) -> request::MemoryViewerPage {
    match ask(s, body, None) {
        ResponseBody::MemoryViewer { page } => *page,
        other => panic!("expected a Memory Viewer page: {other:?}"),
    }
}

#[test]
fn modules_of_every_file_largest_first_and_one_module_analysis() {
    let mut s = Session::new();
    let a2 = open(&mut s, "a2_mlp_train.xplane.pb.gz", "jax/a2_mlp_train/a2_mlp_train.xplane.pb.gz");
    let before = open(&mut s, "module_0008.jit_tiny.before_optimizations.hlo.pb", "hlo/module_0008.jit_tiny.before_optimizations.hlo.pb");
    let after = open(&mut s, "module_0042.after.hlo.pb", "hlo/module_0042.jit_mlp_train_step.cpu_after_optimizations.hlo.pb");

    let files = vec![a2, before, after];
    let page = |file_id: u32, module: Option<&str>, memory_space: Option<i64>| {
        RequestBody::from(request::MemoryViewer { file_ids: files.clone(), file_id, module: module.map(str::to_string), memory_space })
    };
    let request::MemoryViewerPage { modules, module: largest, .. } = viewer_page(&mut s, page(a2, None, None));
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

    // Without a module: the file's largest.
    assert_eq!(largest.as_deref(), modules.iter().find(|m| m.file_id == a2).map(|m| m.name.as_str()));

    // One module: the same analysis the engine computes from the module's own HloProto, in columns.
    let request::MemoryViewerPage { viewer, module, file_id, .. } = viewer_page(&mut s, page(a2, Some("jit_train_step(14)"), None));
    assert_eq!((file_id, module.as_deref()), (a2, Some("jit_train_step(14)")));
    let viewer = viewer.expect("a module").expect("a viewer");
    let Profile::Hlo(direct) =
        decode("jit_train_step(14).hlo_proto.pb", bytes("jax/a2_mlp_train/jit_train_step(14).hlo_proto.pb"), &mut |_, _| {})
            .unwrap()
            .profile
    else {
        panic!("an HloProto")
    };
    let direct = analyze(&direct.proto, Options::default()).unwrap();
    assert_eq!(viewer, ViewerReply::Engine(Arc::new(direct.clone())));
    let ViewerReply::Page(columns) = &viewer else { panic!("the page reads columns") };
    assert_eq!(columns.block_count(), direct.blocks.len());
    let listed = modules.iter().find(|m| m.file_id == a2 && m.name == "jit_train_step(14)").unwrap();
    assert_eq!(listed.peak_heap_bytes, Some(columns.peak_heap_bytes()));
    assert_eq!(listed.memory_spaces, *columns.memory_spaces);

    // Asking again answers from the cache, identically.
    let request::MemoryViewerPage { viewer: again, .. } = viewer_page(&mut s, page(a2, Some("jit_train_step(14)"), Some(0)));
    assert_eq!(again.expect("a module").expect("a viewer"), viewer);

    // No buffer assignment, a module the file lacks (its largest instead), a memory space the module
    // lacks, a closed file: plain answers.
    let request::MemoryViewerPage { viewer, .. } = viewer_page(&mut s, page(before, Some(&last.name), None));
    let error = viewer.expect("a module").expect_err("no viewer");
    assert!(matches!(error, EngineError::NoBufferAssignment { .. }), "{error:?}");
    let request::MemoryViewerPage { module, .. } = viewer_page(&mut s, page(a2, Some("no_such_module"), None));
    assert_eq!(module, largest);
    let request::MemoryViewerPage { viewer, .. } = viewer_page(&mut s, page(a2, Some("jit_train_step(14)"), Some(7)));
    let Some(Err(EngineError::NoSuchMemorySpace { memory_space, present, .. })) = viewer else { panic!("expected a missing memory space") };
    assert_eq!((memory_space, present), (7, columns.memory_spaces.to_vec()));
    ask(&mut s, RequestBody::Close { file_id: a2 }, None);
    assert_eq!(ask(&mut s, page(a2, None, None), None), ResponseBody::Failed { error: EngineError::UnknownFile { file_id: a2 } });
    let request::MemoryViewerPage { modules, .. } = viewer_page(&mut s, page(after, None, None));
    assert_eq!(modules.len(), 2);
}
