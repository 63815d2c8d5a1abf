//! The PyTorch Profiler's views of a Kineto trace against the TensorBoard plugin's own JSON
//! (torch-tb-profiler 0.4.3 with its three faults on current traces corrected: `oracle/manifest.json`
//! beside the fixture), through the CLI's `--json`; and bad input refused with a clear message.

mod common;

use std::path::PathBuf;
use tidemark::analysis::torch::operators::OpGrouping;
use tidemark::decode::kineto::KinetoError;
use tidemark::engine::torch::{torch_view, TorchView, TorchViewError};
use tidemark::engine::torch_page::{KernelsPage, MemoryPage, OperatorsPage, OverviewPage};

const DIR: &str = "nvidia_h200_pytorch/p2_torch_resnet";
const TRACE: &str = "tb/vm_2031.1795841222637258163.pt.trace.json.gz";

fn trace() -> Option<PathBuf> {
    common::device_fixture(&format!("{DIR}/{TRACE}"))
}

/// Each subcommand and the oracle files its `--json` holds.
const VIEWS: [(&str, &[&str]); 4] = [
    ("torch-overview", &["overview"]),
    ("torch-operators", &["operation", "operation_table"]),
    ("torch-kernels", &["kernel", "kernel_table", "kernel_op_table", "kernel_tc_pie"]),
    ("torch-memory", &["memory", "memory_curve", "memory_events"]),
];

#[test]
fn every_view_equals_the_plugin() {
    let Some(trace) = trace() else { return };
    let oracle = trace.parent().and_then(|tb| tb.parent()).expect("the run folder").join("oracle");
    let mut failures = Vec::new();
    for (command, files) in VIEWS {
        let (code, out, err) = common::tidemark(&[command, trace.to_str().expect("utf-8 path"), "--json"]);
        assert_eq!(code, 0, "{command}: {err}");
        let ours: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{command}: {e}"));
        let keys: Vec<&str> = ours.as_object().expect("one object").keys().map(String::as_str).collect();
        let mut want = files.to_vec();
        want.sort();
        assert_eq!(keys, want, "{command}: payloads");
        for file in files {
            let theirs = common::json_at(&oracle.join(format!("{file}.json")));
            if let Some(d) = common::json_diff(&ours[*file], &theirs) {
                failures.push(format!("{command} {file}: {d}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The Operator view grouped by operator and input shape (`group_by=OperationAndInputShape`) against
/// the plugin's, kept in the repository beside this project's recording (see its README): every
/// figure to 1e-6 relative, every name and shape as the plugin writes it.
#[test]
fn operators_by_input_shape_equal_the_plugin() {
    let Some(trace) = trace() else { return };
    let oracle = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/device").join(DIR);
    let (code, out, err) =
        common::tidemark(&["torch-operators", trace.to_str().expect("utf-8 path"), "--group-by", "input-shape", "--json"]);
    assert_eq!(code, 0, "{err}");
    let ours: serde_json::Value = serde_json::from_str(&out).expect("json");
    for (payload, file) in [("operation", "operation_input_shape"), ("operation_table", "operation_table_input_shape")] {
        let theirs = common::json_at(&oracle.join(format!("{file}.json")));
        let d = common::json_diff(&ours[payload], &theirs);
        assert!(d.is_none(), "{payload}: {}", d.unwrap_or_default());
    }
    // The page's figures of the engine's reply: the same rows, shapes included.
    let theirs = common::json_at(&oracle.join("operation_table_input_shape.json"));
    let mut s = tidemark::engine::Session::new();
    let id = s.open(TRACE, std::fs::read(&trace).expect("read"), &mut |_, _| {}).expect("opens").id;
    let page = s.torch_operators(id, OpGrouping::InputShape).expect("operators");
    assert_eq!(page.grouping, OpGrouping::InputShape);
    let rows = theirs["data"].as_array().expect("rows");
    assert_eq!(page.ops.name.len(), rows.len());
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(
            (page.ops.name[i].as_str(), page.ops.input_shape[i].as_str()),
            (r["name"].as_str().unwrap(), r["input_shape"].as_str().unwrap())
        );
        let close = |a: f64, b: &serde_json::Value| (a - b.as_f64().unwrap()).abs() <= 1e-6 * a.abs().max(1.0);
        assert!(close(page.ops.device_self_us[i], &r["device_self_duration"]), "row {i}");
        assert!(close(page.ops.host_total_us[i], &r["host_total_duration"]), "row {i}");
        assert!(close(page.ops.tc_self_pct[i], &r["tc_self_ratio"]), "row {i}");
        assert_eq!(page.ops.calls[i], r["calls"].as_u64().unwrap(), "row {i}");
    }
    // By name, the same ops' calls: the groups split each name's calls.
    let by_name = s.torch_operators(id, OpGrouping::Name).expect("by name");
    assert!(by_name.ops.input_shape.is_empty());
    assert_eq!(by_name.ops.calls.iter().sum::<u64>(), page.ops.calls.iter().sum::<u64>());
    let (code, _, err) = common::tidemark(&["torch-operators", trace.to_str().expect("utf-8 path"), "--group-by", "shape"]);
    assert_eq!(code, 2);
    assert!(err.contains("expected name or input-shape"), "{err}");
}

#[test]
fn text_output_names_the_figures() {
    let Some(trace) = trace() else { return };
    let (code, out, err) = common::tidemark(&["torch-overview", trace.to_str().expect("utf-8 path")]);
    assert_eq!(code, 0, "{err}");
    let overview = common::json_at(&trace.parent().and_then(|tb| tb.parent()).expect("run").join("oracle/overview.json"));
    let avg = &overview["performance"][0]["value"];
    assert!(out.contains(&format!("Average Step Time: {avg} us")), "{out}");
    assert!(out.contains("GPU Utilization 42.72 %"), "{out}");
}

fn refused(bytes: &[u8]) -> TorchViewError {
    torch_view(bytes, TorchView::Overview).expect_err("refused")
}

#[test]
fn bad_input_gets_a_clear_message() {
    assert!(matches!(refused(b""), TorchViewError::Decode(KinetoError::Empty)));
    let e = refused(b"{}");
    assert!(matches!(e, TorchViewError::Decode(KinetoError::NotKineto { .. })), "{e}");
    // XProf's trace viewer JSON: traceEvents, but none of Kineto's keys.
    let xprof = br#"{"displayTimeUnit":"ns","metadata":{"highres-ticks":true},"traceEvents":[{"ph":"X","pid":1,"tid":1,"ts":1,"dur":2,"name":"op"}]}"#;
    let e = refused(xprof);
    assert!(e.to_string().contains("another profiler"), "{e}");
    let e = refused(b"\x89PNG\r\n\x1a\n");
    assert!(matches!(e, TorchViewError::Decode(KinetoError::NotKineto { .. })), "{e}");
    let Some(trace) = trace() else { return };
    let gz = std::fs::read(trace).expect("read");
    // A gzip stream cut short.
    let e = refused(&gz[..gz.len() / 2]);
    assert!(matches!(e, TorchViewError::Decode(KinetoError::Gzip { .. })), "{e}");
    assert!(e.to_string().contains("truncated"), "{e}");
    // Its JSON cut short, in the middle of traceEvents.
    let json = tidemark::decode::gzip::inflate(&gz).expect("inflate");
    let e = refused(&json[..json.len() / 2]);
    assert!(matches!(e, TorchViewError::Decode(KinetoError::Truncated { .. })), "{e}");
}

#[test]
fn a_trace_without_kernels_or_memory_says_so() {
    let cpu_only = br#"{"schemaVersion":1,"traceEvents":[
        {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","ts":10,"dur":100,"pid":1,"tid":1,"args":{"External id":1}},
        {"ph":"X","cat":"cpu_op","name":"aten::add","ts":20,"dur":30,"pid":1,"tid":1,"args":{"External id":2}}]}"#;
    let e = torch_view(cpu_only, TorchView::Kernels).expect_err("no kernels");
    assert!(e.to_string().contains("no GPU kernels"), "{e}");
    let e = torch_view(cpu_only, TorchView::Memory).expect_err("no memory");
    assert!(e.to_string().contains("profile_memory=True"), "{e}");
    let ops = torch_view(cpu_only, TorchView::Operators(OpGrouping::Name)).expect("ops");
    assert_eq!(ops["operation_table"]["data"][0]["name"], "aten::add");
    assert_eq!(ops["operation_table"]["data"][0]["host_self_duration"], 30);
    let ov = torch_view(cpu_only, TorchView::Overview).expect("overview");
    assert_eq!(ov["overview"]["environments"][1]["value"], "CPU");
    assert_eq!(ov["overview"]["performance"][0]["value"], 100);
}

#[test]
fn the_session_opens_a_kineto_trace_and_serves_each_view() {
    let Some(path) = trace() else { return };
    let bytes = std::fs::read(&path).expect("read");
    let mut s = tidemark::engine::Session::new();
    let f = s.open(TRACE, bytes.clone(), &mut |_, _| {}).expect("opens");
    assert_eq!(f.overview.format, tidemark::decode::Format::Kineto);
    // It opens on the PyTorch Profiler's Overview, not on an empty XProf one; its details still name
    // the views' commands.
    let landing = tidemark::engine::first_screen::landing(&f.overview, false);
    assert_eq!(landing, tidemark::engine::tool::Tool::TorchOverview);
    assert!(f.overview.notes.iter().any(|n| n.contains("tidemark torch-overview")), "{:?}", f.overview.notes);
    let id = f.id;
    // Each view's figures are what the page would read of the CLI's payloads; asked twice (the
    // session keeps the trace's analysis), the same.
    let payloads = |view| torch_view(&bytes, view).expect("view");
    for _ in 0..2 {
        assert_eq!(s.torch_overview(id).expect("overview"), OverviewPage::from_payloads(&payloads(TorchView::Overview)).expect("read"));
        let ops = TorchView::Operators(OpGrouping::Name);
        assert_eq!(
            s.torch_operators(id, OpGrouping::Name).expect("operators"),
            OperatorsPage::from_payloads(&payloads(ops)).expect("read")
        );
        assert_eq!(s.torch_kernels(id).expect("kernels"), KernelsPage::from_payloads(&payloads(TorchView::Kernels)).expect("read"));
        assert_eq!(s.torch_memory(id).expect("memory"), MemoryPage::from_payloads(&payloads(TorchView::Memory)).expect("read"));
    }
    // Another kind of file: the view says what it needs.
    let prof = s.open("a.prof", common::bytes("pprof/docs_seed_memory.prof"), &mut |_, _| {}).map(|f| f.id).expect("pprof");
    let e = s.torch_kernels(prof).expect_err("not a Kineto trace");
    assert!(e.to_string().contains("PyTorch profiler trace"), "{e}");
}

#[test]
fn inspect_describes_a_kineto_trace() {
    let Some(path) = trace() else { return };
    let (code, out, err) = common::tidemark(&["inspect", path.to_str().expect("utf-8 path")]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("a PyTorch profiler trace (Kineto JSON)"), "{out}");
    assert!(out.contains("1137 kernels, 1740 [memory] events"), "{out}");
    assert!(out.contains("  opens on: Overview\n"), "{out}");
}

#[test]
fn the_protocol_serves_each_view() {
    use tidemark::engine::protocol::request::{self, Ask};
    use tidemark::engine::protocol::{answer, RequestBody, Response, ResponseBody, VERSION};
    let Some(path) = trace() else { return };
    let bytes = std::fs::read(&path).expect("read");
    let mut s = tidemark::engine::Session::new();
    let file_id = s.open(TRACE, bytes.clone(), &mut |_, _| {}).expect("opens").id;
    // A reply as the page reads it: its JSON read back, and the bytes beside it.
    let mut ask = |body: RequestBody| {
        let req = serde_json::json!({"v": VERSION, "seq": 1, "body": body}).to_string();
        let a = answer(&mut s, &req, None, &mut |_: Response| {});
        let r: Response = serde_json::from_str(&serde_json::to_string(&a.response).expect("json")).expect("reads back");
        (r.body, a.beside)
    };
    let payloads = |view| torch_view(&bytes, view).expect("view");
    let (body, beside) = ask(request::TorchOverview { file_id }.into());
    let page = request::TorchOverview::reply(body, beside.as_deref()).expect("overview");
    assert_eq!(*page, OverviewPage::from_payloads(&payloads(TorchView::Overview)).unwrap());
    for group_by in [OpGrouping::Name, OpGrouping::InputShape] {
        let (body, beside) = ask(request::TorchOperators { file_id, group_by }.into());
        let page = request::TorchOperators::reply(body, beside.as_deref()).expect("operators");
        assert_eq!(*page, OperatorsPage::from_payloads(&payloads(TorchView::Operators(group_by))).unwrap());
    }
    let (body, beside) = ask(request::TorchKernels { file_id }.into());
    let page = request::TorchKernels::reply(body, beside.as_deref()).expect("kernels");
    assert_eq!(*page, KernelsPage::from_payloads(&payloads(TorchView::Kernels)).unwrap());
    // The Memory view's curves and events come beside its reply, packed; without them it is no reply.
    let (body, beside) = ask(request::TorchMemory { file_id }.into());
    let ResponseBody::TorchMemory { page: bare } = &body else { panic!("{body:?}") };
    assert!(bare.devices.iter().all(|d| d.curve.time_ms.is_empty() && d.events.op.is_empty()));
    assert!(request::TorchMemory::reply(body.clone(), None).is_none());
    let beside = beside.expect("packed curves and events");
    assert!(request::TorchMemory::reply(body.clone(), Some(&beside[..beside.len() - 1])).is_none());
    let page = request::TorchMemory::reply(body, Some(&beside)).expect("memory");
    assert_eq!(*page, MemoryPage::from_payloads(&payloads(TorchView::Memory)).unwrap());
    // An older page's request without `group_by` groups by name.
    let (body, _) = ask(serde_json::from_value(serde_json::json!({"type": "torch_operators", "file_id": file_id})).expect("request"));
    assert!(matches!(body, ResponseBody::TorchOperators { page } if page.grouping == OpGrouping::Name));
}
