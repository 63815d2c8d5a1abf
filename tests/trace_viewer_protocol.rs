//! The page's Trace Viewer requests through the worker protocol, on real fixtures: what the worker
//! answers (after the JSON round trip the page sees) is the engine's answer, in the wire form pinned
//! here, and the spans' and the export's bytes travel beside the reply (the spans packed as columns).

mod common;

use serde_json::Value;
use tidemark::analysis::trace_viewer::lod::{LodQuery, LodReply};
use tidemark::engine::protocol::{answer, Answered, Response, ResponseBody, VERSION};
use tidemark::engine::{EngineError, Session};

/// The reply, the bytes that travel beside it, and the reply as the JSON the page parses.
fn ask(s: &mut Session, seq: u64, body: &str, bytes: Option<Vec<u8>>) -> (ResponseBody, Option<Vec<u8>>, Value) {
    let request = format!(r#"{{"v":{VERSION},"seq":{seq},"body":{body}}}"#);
    let Answered { response, beside } = answer(s, &request, bytes, &mut |_| {});
    assert_eq!(response.seq, seq);
    let wire = serde_json::to_value(&response).expect("encodes");
    let read: Response = serde_json::from_value(wire.clone()).expect("the page can read the reply");
    (read.body, beside, wire)
}

fn open(s: &mut Session, rel: &str) -> u32 {
    match ask(s, 1, r#"{"type":"open","path":"trace.xplane.pb"}"#, Some(common::bytes(rel))).0 {
        ResponseBody::Opened { file_id, .. } => file_id,
        other => panic!("{rel}: {other:?}"),
    }
}

const D1: &str = "tf/d1_tf_keras_bfc/d1_tf_keras_bfc.xplane.pb.gz";

#[test]
fn outline_spans_details_search_summary_and_export_answer_as_the_engine_does() {
    let mut s = Session::new();
    let id = open(&mut s, D1);
    let outline = match ask(&mut s, 2, &format!(r#"{{"type":"trace","of":"outline","file_id":{id}}}"#), None).0 {
        ResponseBody::TraceOutline { outline } => *outline,
        other => panic!("{other:?}"),
    };
    assert_eq!(outline, s.trace_outline(id).unwrap());
    assert!(outline.event_count > 0 && !outline.processes.is_empty());

    // The whole trace at 1000 px: every event counted once, the spans packed beside a reply that
    // only names the query.
    let (start, end) = (outline.start_ps, outline.end_ps);
    let body = format!(
        r#"{{"type":"trace","of":"spans","file_id":{id},"query":{{"start_ps":{start},"end_ps":{end},"width_px":1000,"threads":null}}}}"#
    );
    let (reply, beside, wire) = ask(&mut s, 3, &body, None);
    let query = LodQuery { start_ps: start, end_ps: end, width_px: 1000, threads: None };
    assert_eq!(reply, ResponseBody::TraceSpans { file_id: id, query: query.clone() });
    assert_eq!(wire["body"].as_object().unwrap().len(), 3, "no spans in the JSON: {}", wire["body"]);
    let spans = LodReply::from_bytes(&beside.expect("the spans beside the reply")).expect("they read back");
    assert_eq!(spans, s.trace_spans(id, &query).unwrap());
    assert_eq!(spans.visible_events, outline.event_count);
    let counted: u64 = spans.threads.iter().flat_map(|t| &t.count).map(|&c| u64::from(c)).sum();
    assert_eq!(counted, outline.event_count);
    // Fewer spans than events: sub-pixel runs were merged.
    let drawn: usize = spans.threads.iter().map(|t| t.len()).sum();
    assert!(drawn < outline.event_count as usize, "{drawn} spans for {} events", outline.event_count);

    // One thread only, when the page folds the others away.
    let thread = outline.processes[0].threads.iter().find(|t| t.event_count > 0).expect("a thread with events");
    let body = format!(
        r#"{{"type":"trace","of":"spans","file_id":{id},"query":{{"start_ps":{start},"end_ps":{end},"width_px":500,"threads":[{}]}}}}"#,
        thread.index
    );
    let (reply, beside, _) = ask(&mut s, 4, &body, None);
    assert!(matches!(reply, ResponseBody::TraceSpans { .. }), "{reply:?}");
    let one = LodReply::from_bytes(&beside.expect("the spans beside the reply")).expect("they read back");
    assert_eq!(one.threads.len(), 1);
    assert_eq!(one.visible_events, u64::from(thread.event_count));

    // Details of a drawn span's event.
    let event = spans.threads.iter().find(|t| !t.is_empty()).unwrap().event[0];
    match ask(&mut s, 5, &format!(r#"{{"type":"trace","of":"event_details","file_id":{id},"event":{event}}}"#), None).0 {
        ResponseBody::TraceEventDetails { details: Some(d) } => {
            assert_eq!(Some(*d.clone()), s.trace_event_details(id, event).unwrap());
            assert_eq!(d.event, event);
            assert!(d.self_time_ps <= d.duration_ps);
        }
        other => panic!("{other:?}"),
    }
    match ask(&mut s, 6, &format!(r#"{{"type":"trace","of":"event_details","file_id":{id},"event":4294967295}}"#), None).0 {
        ResponseBody::TraceEventDetails { details: None } => {}
        other => panic!("{other:?}"),
    }

    // Search: the count, then any match asked for by its index (the engine keeps the matches).
    let needle = outline.names[0].to_uppercase();
    let found = s.trace_search(id, &needle).unwrap();
    assert!(found.count > 0);
    match ask(&mut s, 7, &format!(r#"{{"type":"trace","of":"search","file_id":{id},"needle":{needle:?}}}"#), None).0 {
        ResponseBody::TraceSearch { count } => assert_eq!(count, found.count),
        other => panic!("{other:?}"),
    }
    for index in [0, found.count / 2, found.count - 1, found.count] {
        let body = format!(r#"{{"type":"trace","of":"search_match","file_id":{id},"needle":{needle:?},"index":{index}}}"#);
        let expected = found.event.get(index).map(|&e| (e, found.start_ps[index]));
        match ask(&mut s, 70, &body, None).0 {
            ResponseBody::TraceSearchMatch { index: i, found } => assert_eq!((i as usize, found), (index, expected)),
            other => panic!("{other:?}"),
        }
    }
    // Another needle's match is searched for, not taken from the last search.
    let other = outline.names[outline.names.len() - 1].clone();
    let body = format!(r#"{{"type":"trace","of":"search_match","file_id":{id},"needle":{other:?},"index":0}}"#);
    let first = s.trace_search(id, &other).unwrap();
    match ask(&mut s, 71, &body, None).0 {
        ResponseBody::TraceSearchMatch { found, .. } => assert_eq!(found, first.event.first().map(|&e| (e, first.start_ps[0]))),
        other => panic!("{other:?}"),
    }
    let body = format!(r#"{{"type":"trace","of":"range_summary","file_id":{id},"from_ps":{start},"to_ps":{},"threads":null}}"#, end + 1);
    match ask(&mut s, 8, &body, None).0 {
        ResponseBody::TraceRangeSummary { rows } => assert_eq!(rows.iter().map(|r| r.count).sum::<u64>(), outline.event_count),
        other => panic!("{other:?}"),
    }

    // Export of a window: the JSON comes beside the reply, the events that overlap it.
    let (from, to) = (start + (end - start) / 3, start + (end - start) / 2);
    let (reply, beside, _) =
        ask(&mut s, 9, &format!(r#"{{"type":"trace","of":"export","file_id":{id},"start_ps":{from},"end_ps":{to}}}"#), None);
    assert_eq!(reply, ResponseBody::TraceExport { file_id: id, start_ps: from, end_ps: to });
    let bytes = beside.expect("the JSON travels beside the reply");
    let mut expected = Vec::new();
    let written = s.trace_export_json(id, Some((from, to)), &mut expected).unwrap();
    assert_eq!(bytes, expected);
    let json: Value = serde_json::from_slice(&bytes).unwrap();
    // XProf's JSON ends its events with an empty object, which has no phase.
    let events = json["traceEvents"].as_array().unwrap().iter().filter(|e| e.get("ph").is_some_and(|p| p != "M")).count();
    assert_eq!(events, written);
    assert!(written > 0);
}

#[test]
fn trace_requests_on_a_file_without_a_trace_or_unknown_fail_with_the_engine_error() {
    let mut s = Session::new();
    match ask(&mut s, 1, r#"{"type":"trace","of":"outline","file_id":77}"#, None).0 {
        ResponseBody::Failed { error: EngineError::UnknownFile { .. } } => {}
        other => panic!("{other:?}"),
    }
    let (reply, beside, _) = ask(&mut s, 2, r#"{"type":"trace","of":"export","file_id":77,"start_ps":0,"end_ps":1}"#, None);
    assert!(matches!(reply, ResponseBody::Failed { .. }), "{reply:?}");
    assert!(beside.is_none());
}

/// The outline names processes and threads as XProf's trace_viewer JSON does (its `process_name` and
/// `thread_name` metadata), on a device trace with XProf's output beside it.
#[test]
fn outline_names_are_xprofs() {
    let Some(pb) = common::device_fixture("jax_mi300x_attention/mi300x_attention.xplane.pb") else { return };
    let oracle = common::json_at(&common::device_fixture("jax_mi300x_attention/mi300x_attention.trace_viewer.json.gz").unwrap());
    let mut s = Session::new();
    let id = match ask(&mut s, 1, r#"{"type":"open","path":"mi300x.xplane.pb"}"#, Some(std::fs::read(pb).unwrap())).0 {
        ResponseBody::Opened { file_id, .. } => file_id,
        other => panic!("{other:?}"),
    };
    let outline = match ask(&mut s, 2, &format!(r#"{{"type":"trace","of":"outline","file_id":{id}}}"#), None).0 {
        ResponseBody::TraceOutline { outline } => *outline,
        other => panic!("{other:?}"),
    };
    let meta = |name: &str| -> Vec<(u64, u64, String)> {
        oracle["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["ph"] == "M" && e["name"] == name)
            .map(|e| (e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap_or(0), e["args"]["name"].as_str().unwrap().to_string()))
            .collect()
    };
    let processes = meta("process_name");
    for p in &outline.processes {
        assert!(processes.contains(&(u64::from(p.pid), 0, p.name.clone())), "process {} {} not in XProf's", p.pid, p.name);
    }
    let threads = meta("thread_name");
    let ours: Vec<_> = outline
        .processes
        .iter()
        .flat_map(|p| p.threads.iter().map(move |t| (u64::from(p.pid), u64::from(t.tid), t.name.clone())))
        .collect();
    // Every thread we show has XProf's name in its process; its tid too, except on the GPU stream lines
    // XProf renumbers (docs/trace-viewer.md, "Where we differ").
    for (pid, tid, name) in &ours {
        assert!(threads.iter().any(|(p, _, n)| p == pid && n == name), "thread {pid}/{tid} {name:?} is not XProf's");
    }
    let same_tid = ours.iter().filter(|t| threads.contains(t)).count();
    eprintln!("{same_tid} of {} threads with XProf's tid", ours.len());
    assert!(same_tid > 0);
}
