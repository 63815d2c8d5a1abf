//! The page's engine holds one host of a run at a time (`engine::residency`): a run of three gzipped
//! hosts opened as streams keeps one host's bytes, and every tool of the run ("All hosts" op tables,
//! Overview, Input Pipeline, Memory across hosts, Run comparison) answers exactly as a session holding
//! every host does (whose answers `tests/runs.rs`, `tests/memory_across_hosts.rs` and
//! `tests/run_comparison.rs` check against XProf), without reading a host again; a tool of one host
//! reads that host again, and only it.

mod common;

use std::cell::RefCell;
use tidemark::analysis::framework_op_stats::xprof_json::to_xprof_json;
use tidemark::decode::stream::Source;
use tidemark::engine::protocol::{self, request, Request, RequestBody, Response, ResponseBody, VERSION};
use tidemark::engine::residency::ResidencyReport;
use tidemark::engine::Scope;
use tidemark::engine::{EngineError, Session};

/// Two runs: three TensorFlow hosts, and the two JAX hosts XProf combined for `runs/jax_two_hosts`.
const TF: [&str; 3] = ["tf/d1_tf_keras_bfc/d1_tf_keras_bfc", "tf/d2_tf_cnn/d2_tf_cnn", "tf/d1_tf_keras_none/d1_tf_keras_none"];
const JAX: [&str; 2] = ["jax/a1_docs_seed/a1_docs_seed", "jax/a2_mlp_train/a2_mlp_train"];

/// Every host's path in the log folder and its gzipped bytes.
type Hosts = Vec<(String, Vec<u8>)>;

/// The hosts, the TensorFlow run first.
fn hosts() -> Hosts {
    let run = |name: &str, fixtures: &[&str]| -> Hosts {
        fixtures
            .iter()
            .enumerate()
            .map(|(i, f)| (format!("logs/plugins/profile/{name}/worker-{i}.xplane.pb.gz"), common::bytes(&format!("{f}.xplane.pb.gz"))))
            .collect()
    };
    let mut all = run("2026_11_24_09_30_00", &TF);
    all.extend(run("2026_11_23_10_00_00", &JAX));
    all
}

fn source<'a>(bytes: &'a [u8], reader: &'a mut &'a [u8]) -> Source<'a> {
    let last4 = bytes.len().checked_sub(4).map(|at| bytes[at..].try_into().unwrap());
    Source { size_bytes: bytes.len() as u64, last4, reader }
}

/// The hosts opened as the page opens them, into `session`; their file ids, in order.
fn open_all(session: &mut Session, hosts: &[(String, Vec<u8>)]) -> Vec<u32> {
    hosts
        .iter()
        .map(|(path, bytes)| {
            let mut reader = &bytes[..];
            session.open_stream(path, source(bytes, &mut reader), &mut |_, _| {}).unwrap_or_else(|e| panic!("{e}")).id
        })
        .collect()
}

fn residency_of(session: &mut Session) -> ResidencyReport {
    match ask(session, RequestBody::from(request::Residency {}), &mut |_, _| panic!("a report reads nothing again")).body {
        ResponseBody::Residency { report } => *report,
        other => panic!("not a residency report: {other:?}"),
    }
}

/// `body` answered as the page's worker answers it; `reread` reads a released file again.
fn ask(session: &mut Session, body: RequestBody, reread: &mut dyn FnMut(&mut Session, u32) -> Result<(), EngineError>) -> Response {
    let json = serde_json::to_string(&Request { v: VERSION, seq: 1, body }).unwrap();
    protocol::answer_rereading(session, &json, None, &mut |_| {}, reread).response
}

/// `body` answered by a session that holds every file.
fn ask_resident(session: &mut Session, body: RequestBody) -> Response {
    let json = serde_json::to_string(&Request { v: VERSION, seq: 1, body }).unwrap();
    protocol::handle(session, &json, None, &mut |_| {})
}

/// The requests of every tool of the run `ids` (and of run comparison against `baseline`).
fn run_requests(ids: &[u32], baseline: &[u32]) -> Vec<RequestBody> {
    let file_ids = ids.to_vec();
    vec![
        RequestBody::from(request::FrameworkOpStats { scope: Scope { file_ids: file_ids.clone(), window: None }, include_idle: true }),
        RequestBody::from(request::HloStats { scope: Scope { file_ids: file_ids.clone(), window: None } }),
        RequestBody::from(request::KernelStats { scope: Scope { file_ids: file_ids.clone(), window: None } }),
        RequestBody::from(request::RooflineModel {
            scope: Scope { file_ids: file_ids.clone(), window: None },
            include_infeed_outfeed: true,
        }),
        RequestBody::from(request::OpProfile {
            scope: Scope { file_ids: file_ids.clone(), window: None },
            grouping: Default::default(),
            include_idle: true,
        }),
        RequestBody::from(request::InputPipeline { file_ids: file_ids.clone() }),
        RequestBody::from(request::OverviewPage { file_ids: file_ids.clone() }),
        RequestBody::from(request::MemoryAcrossHosts { file_ids: file_ids.clone() }),
        RequestBody::from(request::RunComparison { current: file_ids, baseline: baseline.to_vec() }),
    ]
}

/// What the page's worker does for a released file: reads `hosts`' bytes of it again, as a stream;
/// each file id read is noted in `read_again`.
fn rereader<'a>(hosts: &'a Hosts, read_again: &'a RefCell<Vec<u32>>) -> impl FnMut(&mut Session, u32) -> Result<(), EngineError> + 'a {
    move |session: &mut Session, id: u32| {
        read_again.borrow_mut().push(id);
        let bytes = &hosts[id as usize].1;
        let mut reader = &bytes[..];
        session.reread_stream(id, source(bytes, &mut reader), &mut |_, _| {})
    }
}

/// The hosts, opened into a session holding one trace and into one holding every file; their ids.
fn sessions() -> (Hosts, Session, Vec<u32>, Session) {
    let hosts = hosts();
    let mut lazy = Session::holding_one_trace();
    let ids = open_all(&mut lazy, &hosts);
    let mut resident = Session::new();
    assert_eq!(open_all(&mut resident, &hosts), ids, "both sessions number the files alike");
    (hosts, lazy, ids, resident)
}

#[test]
fn one_host_held_and_every_run_tool_equal_to_all_hosts_held() {
    let (_, mut lazy, ids, mut resident) = sessions();
    let (tf, jax) = ids.split_at(TF.len());

    // Only the last host opened is held; its bytes are the inflated trace.
    let report = residency_of(&mut lazy);
    let last = *ids.last().unwrap();
    assert_eq!(report.resident.iter().map(|r| r.file_id).collect::<Vec<_>>(), [last]);
    assert_eq!(report.released, ids[..ids.len() - 1]);
    let inflated = common::bytes(&format!("{}.xplane.pb.gz", JAX[1]));
    let inflated = tidemark::decode::gzip::inflate(&inflated).unwrap().len() as u64;
    assert_eq!(report.resident[0].resident_bytes, inflated);
    println!("lazy_hosts: {} hosts opened, held: {:?}", ids.len(), report.resident);

    // Every tool of both runs, in both sessions: equal replies, and no host read again.
    let mut never = |_: &mut Session, id: u32| -> Result<(), EngineError> { panic!("file {id} was read again for a run tool") };
    for (run, baseline) in [(tf, jax), (jax, tf)] {
        for body in run_requests(run, baseline) {
            let what = format!("{body:?}").chars().take(40).collect::<String>();
            let got = ask(&mut lazy, body.clone(), &mut never);
            let want = ask_resident(&mut resident, body);
            assert!(!matches!(want.body, ResponseBody::Failed { .. }), "{what}: {want:?}");
            assert_eq!(serde_json::to_value(&got).unwrap(), serde_json::to_value(&want).unwrap(), "{what}");
        }
    }
    assert_eq!(residency_of(&mut lazy).resident.len(), 1);

    // The JAX run's combined framework op stats are XProf's for the same two files.
    // (a session method: it answers from what was kept, or fails with `NotResident`).
    let actual = to_xprof_json(&lazy.framework_op_stats(&Scope::run(jax)).unwrap_or_else(|e| panic!("{e}")));
    if let Some(d) = common::json_diff(&actual, &common::json("runs/jax_two_hosts/jax_two_hosts.framework_op_stats.json")) {
        panic!("jax_two_hosts framework op stats: {d}");
    }
}

#[test]
fn a_tool_of_one_released_host_reads_that_host_again() {
    let (hosts, mut lazy, ids, mut resident) = sessions();
    let read_again = RefCell::new(Vec::new());
    let mut reread = rereader(&hosts, &read_again);
    // Each host in turn, as the host selector switches: its Memory Profile and Trace Viewer outline
    // read it again (once), the host held before is released, and the answers are the held session's.
    for &id in &ids[..TF.len()] {
        read_again.borrow_mut().clear();
        for body in [
            RequestBody::from(request::MemoryProfile { file_id: id, memory_id: None }),
            RequestBody::from(request::TraceOutline { file_id: id }),
        ] {
            let got = ask(&mut lazy, body.clone(), &mut reread);
            let want = ask_resident(&mut resident, body);
            assert!(!matches!(want.body, ResponseBody::Failed { .. }), "{want:?}");
            assert_eq!(serde_json::to_value(&got).unwrap(), serde_json::to_value(&want).unwrap());
        }
        assert_eq!(*read_again.borrow(), [id], "host {id} read again once");
        let report = residency_of(&mut lazy);
        assert_eq!(report.resident.iter().map(|r| r.file_id).collect::<Vec<_>>(), [id]);
        assert_eq!(report.released.len(), ids.len() - 1);
    }
    // A single host's op table answers from what was kept: nothing read again.
    read_again.borrow_mut().clear();
    let body = RequestBody::from(request::FrameworkOpStats { scope: Scope::file(ids[1]), include_idle: true });
    let got = ask(&mut lazy, body.clone(), &mut reread);
    assert_eq!(serde_json::to_value(&got).unwrap(), serde_json::to_value(ask_resident(&mut resident, body)).unwrap());
    assert!(read_again.borrow().is_empty());

    // A closed file is forgotten whether held or not.
    assert!(lazy.close(ids[1]));
    assert!(matches!(lazy.file(ids[1]), Err(EngineError::UnknownFile { .. })));
    assert!(!residency_of(&mut lazy).released.contains(&ids[1]));
}

#[test]
fn all_hosts_over_a_step_read_each_released_host_once() {
    let (hosts, mut lazy, ids, mut resident) = sessions();
    let tf = &ids[..TF.len()];
    let read_again = RefCell::new(Vec::new());
    let mut reread = rereader(&hosts, &read_again);
    // The run's first step: the windowed pass needs every host's events, so each released host is
    // read back in turn, once, and the hosts done before answer from their kept window.
    let (_, _, window) = resident.run_step_windows(tf).unwrap_or_else(|e| panic!("{e}")).into_iter().next().expect("the run has steps");
    for body in [
        RequestBody::from(request::FrameworkOpStats { scope: Scope { file_ids: tf.to_vec(), window: Some(window) }, include_idle: true }),
        RequestBody::from(request::HloStats { scope: Scope { file_ids: tf.to_vec(), window: Some(window) } }),
    ] {
        let got = ask(&mut lazy, body.clone(), &mut reread);
        let want = ask_resident(&mut resident, body);
        assert!(!matches!(want.body, ResponseBody::Failed { .. }), "{want:?}");
        assert_eq!(serde_json::to_value(&got).unwrap(), serde_json::to_value(&want).unwrap());
    }
    let mut read = read_again.borrow().clone();
    read.sort_unstable();
    assert_eq!(read, tf, "every TensorFlow host (all released at the start) read back once, for both tables");
    assert_eq!(residency_of(&mut lazy).resident.len(), 1);
}

#[test]
fn a_session_holding_every_file_never_releases() {
    let hosts = hosts();
    let mut session = Session::new();
    let ids = open_all(&mut session, &hosts[..2]);
    let report = residency_of(&mut session);
    assert_eq!(report.resident.iter().map(|r| r.file_id).collect::<Vec<_>>(), ids);
    assert!(report.released.is_empty());
    assert_eq!(report.wasm_memory_bytes, None);
}
