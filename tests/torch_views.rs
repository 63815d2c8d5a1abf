//! The PyTorch Profiler's views of a Kineto trace against the TensorBoard plugin's own JSON
//! (torch-tb-profiler 0.4.3 with its three faults on current traces corrected: `oracle/manifest.json`
//! beside the fixture), through the CLI's `--json`; and bad input refused with a clear message.

mod common;

use std::path::PathBuf;
use tidemark::decode::kineto::KinetoError;
use tidemark::engine::torch::{torch_view, TorchView, TorchViewError};

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
    let ops = torch_view(cpu_only, TorchView::Operators).expect("ops");
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
    let served = [
        (s.torch_overview(id).expect("overview"), TorchView::Overview),
        (s.torch_operators(id).expect("operators"), TorchView::Operators),
        (s.torch_kernels(id).expect("kernels"), TorchView::Kernels),
        (s.torch_memory(id).expect("memory"), TorchView::Memory),
    ];
    for (value, view) in served {
        assert_eq!(value, torch_view(&bytes, view).expect("view"), "{view:?}");
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
    use tidemark::engine::protocol::{handle, request, RequestBody, Response, ResponseBody, VERSION};
    let Some(path) = trace() else { return };
    let bytes = std::fs::read(&path).expect("read");
    let mut s = tidemark::engine::Session::new();
    let file_id = s.open(TRACE, bytes.clone(), &mut |_, _| {}).expect("opens").id;
    let requests = [
        (RequestBody::from(request::TorchOverview { file_id }), TorchView::Overview),
        (RequestBody::from(request::TorchOperators { file_id }), TorchView::Operators),
        (RequestBody::from(request::TorchKernels { file_id }), TorchView::Kernels),
        (RequestBody::from(request::TorchMemory { file_id }), TorchView::Memory),
    ];
    for (body, view) in requests {
        let req = serde_json::json!({"v": VERSION, "seq": 1, "body": body}).to_string();
        let r = handle(&mut s, &req, None, &mut |_: Response| {});
        match r.body {
            ResponseBody::TorchView { payloads } => assert_eq!(*payloads, torch_view(&bytes, view).expect("view"), "{view:?}"),
            other => panic!("{view:?}: {other:?}"),
        }
    }
}
