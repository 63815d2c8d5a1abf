//! The foundation on the real fixtures: every file decodes, is recognised by content, and its overview
//! states facts taken from XProf's own outputs and XLA's own text dumps.

mod common;

use common::{bytes, fixture, json, open};
use tidemark::decode::{self, DecodeError, DecodedFile, Format, Profile};
use tidemark::engine::file_details::{details, FileDetails};

/// The overview, checked to be the same whether the host plane's allocator events are counted by the
/// overview's own scan or taken from the Memory Profile (as `Session::open` does).
fn ov(rel: &str) -> FileDetails {
    let file = open(rel);
    let scanned = details(&file, None).unwrap_or_else(|e| panic!("{rel}: {e}"));
    if let decode::Profile::XSpace(space) = &file.profile {
        let profile = tidemark::analysis::memory_profile::analyze(space).unwrap();
        assert_eq!(details(&file, Some(&profile)).unwrap(), scanned, "{rel}: counted from the Memory Profile");
    }
    scanned
}

const MIB: f64 = 1024.0 * 1024.0;

/// Each embedded module's summary agrees with XProf's memory_viewer output for it.
fn check_modules_against_xprof(dir: &str, stem: &str, expected: &[&str]) {
    let o = ov(&format!("{dir}/{stem}.xplane.pb.gz"));
    let names: Vec<&str> = o.hlo_modules.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, expected, "{stem}: modules in program-id order");
    for m in &o.hlo_modules {
        let rel = format!("{dir}/{stem}.memory_viewer.{}.json", m.name);
        let rel = if fixture(&rel).exists() { rel } else { format!("{rel}.gz") };
        let mv = json(&rel);
        assert!(m.has_buffer_assignment, "{}", m.name);
        assert_eq!(mv["moduleName"].as_str().unwrap(), m.module_name);
        let total = mv["totalBufferAllocationMib"].as_f64().unwrap_or(0.0) * MIB;
        assert_eq!(m.total_allocation_bytes as f64, total.round(), "{}: total allocation", m.name);
        let pid: u64 = m.name.rsplit_once('(').unwrap().1.trim_end_matches(')').parse().unwrap();
        assert_eq!(m.program_id, Some(pid), "{}", m.name);
    }
}

#[test]
fn jax_a2_trace() {
    let o = ov("jax/a2_mlp_train/a2_mlp_train.xplane.pb.gz");
    assert_eq!(o.format, Format::XSpace);
    assert!(o.gzipped);
    assert_eq!(o.hosts, vec!["ml-host"]);
    let planes: Vec<&str> = o.planes.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(planes, ["/host:metadata", "/host:CPU", "Task Environment"]);
    let cpu = &o.planes[1];
    assert_eq!(cpu.line_count, 7);
    assert_eq!(cpu.event_count, cpu.lines.iter().map(|l| l.event_count).sum::<usize>());
    // The Python tracer line is most of a JAX trace.
    let python = cpu.lines.iter().find(|l| l.name == "python").expect("python line");
    assert!(python.event_count * 2 > cpu.event_count, "{python:?}");
    // JAX on CPU emits no allocator events: XProf's memory profile is empty too.
    assert!(o.allocators.is_empty());
    assert_eq!(json("jax/a2_mlp_train/a2_mlp_train.memory_profile.json")["memoryIds"], serde_json::json!([]));
    check_modules_against_xprof(
        "jax/a2_mlp_train",
        "a2_mlp_train",
        &[
            "jit_stage(0)",
            "jit__threefry_seed(2)",
            "jit_init_params(4)",
            "jit_init_fn(6)",
            "jit_convert_element_type(8)",
            "jit__threefry_fold_in(10)",
            "jit_batch(12)",
            "jit_train_step(14)",
            "jit_eval_step(16)",
        ],
    );
}

#[test]
fn jax_a1_trace() {
    check_modules_against_xprof(
        "jax/a1_docs_seed",
        "a1_docs_seed",
        &["jit_stage(0)", "jit__threefry_seed(2)", "jit__normal(4)", "jit_tile(6)", "jit_multiply(8)", "jit_add(10)"],
    );
}

#[test]
fn tf_traces_count_memory_events_per_allocator() {
    for (stem, allocs, deallocs) in [("d1_tf_keras_bfc", 10_246, 10_159), ("d1_tf_keras_stats", 0, 0), ("d2_tf_cnn", 13_248, 13_021)] {
        let dir = if stem.starts_with("d1") { format!("tf/{stem}") } else { "tf/d2_tf_cnn".into() };
        let o = ov(&format!("{dir}/{stem}.xplane.pb.gz"));
        let xprof = json(&format!("{dir}/{stem}.memory_profile.json.gz"));
        let ids: Vec<&str> = o.allocators.iter().map(|a| a.memory_id.as_str()).collect();
        let xprof_ids: Vec<&str> = xprof["memoryIds"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
        assert_eq!(ids, xprof_ids, "{stem}: memory IDs equal XProf's");
        let a = &o.allocators[0];
        if allocs > 0 {
            assert_eq!((a.allocations, a.deallocations), (allocs, deallocs), "{stem}");
        } else {
            assert!(a.allocations > 0 && a.allocations >= a.deallocations, "{stem}: {a:?}");
        }
        // XProf's "lifetime peak" is the *last* event's peak_bytes_in_use and its peak is the largest
        // heap+stack seen; the overview shows the largest peak the allocator ever reported, so it is
        // at least both.
        let summary = &xprof["memoryProfilePerAllocator"][ids[0]]["profileSummary"];
        let num = |v: &serde_json::Value| v.as_str().unwrap_or("0").parse::<i64>().unwrap();
        assert!(a.max_peak_bytes_in_use >= num(&summary["peakBytesUsageLifetime"]), "{stem}");
        assert!(a.max_peak_bytes_in_use >= num(&summary["peakStats"]["peakBytesInUse"]), "{stem}");
        if stem == "d2_tf_cnn" {
            assert_eq!(a.max_peak_bytes_in_use, 116_393_728);
        }
    }
    let none = ov("tf/d1_tf_keras_none/d1_tf_keras_none.xplane.pb.gz");
    assert!(none.allocators.is_empty());
    assert!(none.hlo_modules.is_empty());
}

#[test]
fn tf_d2_module_has_program_id_zero() {
    let o = ov("tf/d2_tf_cnn/d2_tf_cnn.xplane.pb.gz");
    assert_eq!(o.hlo_modules.len(), 1);
    assert!(o.hlo_modules[0].name.ends_with(".9(0)"), "{}", o.hlo_modules[0].name);
}

/// Allocations and logical buffers as XLA's own `*-buffer-assignment.txt` lists them.
fn xla_text_counts(txt: &str) -> (usize, usize) {
    let allocations = txt.lines().filter(|l| l.starts_with("allocation ")).count();
    let values = txt.lines().filter(|l| l.trim_start().starts_with("value: <")).count();
    (allocations, values)
}

#[test]
fn hlo_dumps_match_xla_text_dumps() {
    for (stem, name, buffers) in [
        ("module_0008.jit_tiny", "jit_tiny", 6),
        ("module_0014.jit__normal", "jit__normal", 61),
        ("module_0042.jit_mlp_train_step", "jit_mlp_train_step", 82),
    ] {
        let o = ov(&format!("hlo/{stem}.cpu_after_optimizations.hlo.pb"));
        assert_eq!(o.format, Format::HloProto);
        let m = &o.hlo_modules[0];
        assert_eq!(m.name, name);
        assert!(m.has_buffer_assignment);
        let txt = String::from_utf8(bytes(&format!("hlo/{stem}.cpu_after_optimizations-buffer-assignment.txt"))).unwrap();
        let (allocations, values) = xla_text_counts(&txt);
        assert_eq!(m.allocation_count, allocations, "{name}: allocations");
        assert_eq!(values, buffers, "{name}: README's buffer count");
        let mv = json(&format!("hlo/{stem}.cpu_after_optimizations.memory_viewer.json"));
        assert_eq!(m.total_allocation_bytes as f64, (mv["totalBufferAllocationMib"].as_f64().unwrap() * MIB).round());

        let before = ov(&format!("hlo/{stem}.before_optimizations.hlo.pb"));
        assert!(!before.hlo_modules[0].has_buffer_assignment);
        assert!(before.notes.iter().any(|n| n.contains("no buffer assignment")), "{:?}", before.notes);
    }
}

#[test]
fn standalone_hlo_protos_from_xprof_decode() {
    for rel in ["jax/a1_docs_seed/jit__normal(4).hlo_proto.pb", "jax/a2_mlp_train/jit_init_params(4).hlo_proto.pb.gz"] {
        let o = ov(rel);
        assert_eq!(o.format, Format::HloProto, "{rel}");
        assert!(o.hlo_modules[0].has_buffer_assignment, "{rel}");
    }
}

#[test]
fn pprof_profiles() {
    let o = ov("pprof/docs_seed_memory.prof");
    assert_eq!(o.format, Format::Pprof);
    assert!(o.gzipped);
    let p = o.pprof.unwrap();
    assert_eq!(p.sample_types, ["allocations/count", "space/bytes"]);
    assert_eq!(p.sample_count, 9);
    assert_eq!(p.samples_by_kind.get("buffer"), Some(&3));
    assert_eq!(p.samples_by_kind.get("executable"), Some(&6));
    // b1_pprof_docs_seed.py keeps x (1000×1000 f32) and two 1000×10000 f32 tiles live.
    assert_eq!(p.live_bytes, 4_000_000 + 2 * 40_000_000);
    for k in 1..=9 {
        let o = ov(&format!("pprof/docs_leak/memory{k}.prof"));
        assert!(o.pprof.unwrap().live_bytes > 4_000_000);
    }
}

#[test]
fn format_is_sniffed_from_content_not_name() {
    for rel in [
        "jax/a1_docs_seed/a1_docs_seed.xplane.pb.gz",
        "hlo/module_0008.jit_tiny.cpu_after_optimizations.hlo.pb",
        "pprof/docs_seed_memory.prof",
    ] {
        let named = ov(rel);
        let renamed = details(&decode::decode("unknown", bytes(rel), &mut |_, _| {}).unwrap(), None).unwrap();
        assert_eq!(renamed.format, named.format, "{rel}");
        assert_eq!(renamed.planes, named.planes);
        assert_eq!(renamed.hlo_modules, named.hlo_modules);
        assert_eq!(renamed.pprof, named.pprof);
    }
    // Gzipped or not, the same trace.
    let raw = tidemark::decode::gzip::inflate(&bytes("jax/a1_docs_seed/a1_docs_seed.xplane.pb.gz")).unwrap();
    let plain = details(&decode::decode("a1.xplane.pb", raw, &mut |_, _| {}).unwrap(), None).unwrap();
    assert_eq!(plain.planes, ov("jax/a1_docs_seed/a1_docs_seed.xplane.pb.gz").planes);
}

fn err(name: &str, data: Vec<u8>) -> DecodeError {
    match decode::decode(name, data, &mut |_, _| {}) {
        Ok(_) => panic!("{name} decoded"),
        Err(e) => e,
    }
}

#[test]
fn bad_input_gets_clear_messages() {
    assert_eq!(err("empty.xplane.pb", Vec::new()), DecodeError::Empty);
    let png = err("plot.xplane.pb", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec());
    assert!(png.to_string().starts_with("this is not a profile: it is a PNG image"), "{png}");
    let json_out = err("x.json", bytes("tf/d2_tf_cnn/d2_tf_cnn.memory_viewer.a_inference_xla_eval_1243__XlaMustCompile_true_config_proto_13561319589895757934_executor_type_11160318154034397263_.9(0).json"));
    assert!(json_out.to_string().contains("JSON"), "{json_out}");
    let noise: Vec<u8> = (0..10_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8).collect();
    assert!(matches!(err("noise.bin", noise), DecodeError::NotAProfile { .. } | DecodeError::Corrupt { .. }));
}

#[test]
fn truncated_files_say_where_they_end() {
    let raw = tidemark::decode::gzip::inflate(&bytes("jax/a1_docs_seed/a1_docs_seed.xplane.pb.gz")).unwrap();
    // A trace cut short opens with what lies before the cut (tests/truncated.rs), and says where it ends;
    // one with nothing before the cut is refused, saying where it ends.
    let cut = raw.len() * 2 / 3;
    let Ok(DecodedFile { profile: Profile::XSpace(space), .. }) = decode::decode("a1.xplane.pb", raw[..cut].to_vec(), &mut |_, _| {})
    else {
        panic!("a cut trace opens");
    };
    assert_eq!(space.truncation.map(|t| t.truncated_at), Some(cut as u64));
    let cut = 3;
    let e = err("a1.xplane.pb", raw[..cut].to_vec());
    assert!(matches!(e, DecodeError::Truncated { format: Format::XSpace, .. }), "{e:?}");
    assert!(e.to_string().contains(&format!("file is truncated at byte {cut} of an XSpace trace")), "{e}");

    let gz = bytes("pprof/docs_seed_memory.prof");
    let e = err("docs_seed_memory.prof", gz[..gz.len() - 20].to_vec());
    assert!(e.to_string().contains("gzip stream is truncated"), "{e}");

    let hlo = bytes("hlo/module_0042.jit_mlp_train_step.cpu_after_optimizations.hlo.pb");
    let e = err("m.hlo.pb", hlo[..hlo.len() / 2].to_vec());
    assert!(matches!(e, DecodeError::Truncated { format: Format::HloProto, .. }), "{e:?}");
}

#[test]
fn engine_session_names_the_file_in_errors() {
    let mut s = tidemark::engine::Session::new();
    let e = s.open("broken.xplane.pb", b"not a profile at all".to_vec(), &mut |_, _| {}).err().expect("error");
    assert_eq!(e.file(), Some("broken.xplane.pb"));
    assert!(e.to_string().starts_with("broken.xplane.pb: this is not a profile"), "{e}");
    let ok = s.open("a.prof", bytes("pprof/docs_seed_memory.prof"), &mut |_, _| {}).map(|f| f.id).unwrap();
    assert!(s.get(ok).is_some());
}

#[test]
fn protocol_round_trip() {
    use tidemark::engine::protocol::{handle, Response, ResponseBody, VERSION};
    let mut s = tidemark::engine::Session::new();
    let mut progress = Vec::new();
    let req = format!(r#"{{"v":{VERSION},"seq":7,"body":{{"type":"open","path":"a1.xplane.pb.gz"}}}}"#);
    let r = handle(&mut s, &req, Some(bytes("jax/a1_docs_seed/a1_docs_seed.xplane.pb.gz")), &mut |r: Response| progress.push(r));
    assert_eq!(r.seq, 7);
    assert!(matches!(r.body, ResponseBody::Opened { .. }), "{r:?}");
    assert!(!progress.is_empty() && progress.iter().all(|p| p.seq == 7));
    let old = handle(&mut s, r#"{"v":0,"seq":8,"body":{"type":"close","file_id":0}}"#, None, &mut |_| {});
    assert!(matches!(old.body, ResponseBody::Rejected { .. }));
    // Replies parse back on the page side.
    let json = serde_json::to_string(&r).unwrap();
    let back: Response = serde_json::from_str(&json).unwrap();
    assert_eq!(back, r);
}

#[test]
fn slim_copies_keep_what_the_memory_tools_read() {
    use tidemark::engine::slim;
    // A JAX trace: the Python tracer and host threads go, the nine HLO modules stay exactly.
    let full = open("jax/a2_mlp_train/a2_mlp_train.xplane.pb.gz");
    let tidemark::decode::Profile::XSpace(space) = &full.profile else { panic!("xspace") };
    let small = slim::xspace(space).expect("something to drop");
    assert!(small.len() * 4 < space.bytes().len(), "{} vs {}", small.len(), space.bytes().len());
    let slim_ov = details(&decode::decode("slim.xplane.pb", small, &mut |_, _| {}).unwrap(), None).unwrap();
    let full_ov = details(&full, None).unwrap();
    assert_eq!(slim_ov.hlo_modules, full_ov.hlo_modules);
    assert!(slim_ov.planes.iter().all(|p| p.event_count == 0));
    assert!(slim_ov.notes.iter().any(|n| n.contains("slim copy")), "{:?}", slim_ov.notes);
    // A TF trace with allocator events keeps its host plane whole: the memory profile is unchanged.
    let tf = open("tf/d1_tf_keras_bfc/d1_tf_keras_bfc.xplane.pb.gz");
    let tidemark::decode::Profile::XSpace(space) = &tf.profile else { panic!("xspace") };
    if let Some(small) = slim::xspace(space) {
        let ov = details(&decode::decode("slim.xplane.pb", small, &mut |_, _| {}).unwrap(), None).unwrap();
        assert_eq!(ov.allocators, details(&tf, None).unwrap().allocators);
    }
}

/// Every event of every line of `space`, as the raw reader gives it (fast path or general scanner),
/// equals prost's decoding of the line: header fields, and each stat's id and resolved value.
fn raw_events_equal_prost(space: &tidemark::decode::xplane::XSpace) -> usize {
    use prost::Message;
    use tidemark::decode::xplane::IdTable;
    use tidemark::proto::xplane::{x_event::Data, XLineEvents};
    let mut total = 0;
    for plane in &space.planes {
        let all = IdTable::new(plane.meta.stat_metadata.keys().map(|&id| (id, true)));
        for line in &plane.lines {
            let decoded = XLineEvents::decode(&space.bytes()[line.range()]).unwrap().events;
            let mut seen = 0;
            let mut noted = Vec::new();
            space
                .for_each_raw_event(
                    line,
                    &all,
                    |_| true,
                    |i, ev| {
                        noted.push(ev.at(i));
                        let want = &decoded[i];
                        assert_eq!(ev.header.metadata_id, want.metadata_id, "event {i}");
                        let offset = match want.data {
                            Some(Data::OffsetPs(o)) => o,
                            _ => 0,
                        };
                        assert_eq!((ev.header.offset_ps, ev.header.duration_ps), (offset, want.duration_ps), "event {i}");
                        let stats: Vec<_> = want.stats.iter().filter(|s| plane.meta.stat_metadata.contains_key(&s.metadata_id)).collect();
                        assert_eq!(ev.stats.len(), stats.len(), "event {i}");
                        for (a, b) in ev.stats.iter().zip(stats) {
                            assert_eq!(a.metadata_id, b.metadata_id);
                            assert_eq!(plane.raw_stat_value(a).unwrap(), plane.stat_value(b), "event {i}");
                        }
                        seen += 1;
                        Ok(())
                    },
                )
                .unwrap();
            assert_eq!(seen, decoded.len());
            total += seen;
            // Read again where the walk noted them, the events are the same ones, in the same places.
            let mut again = noted.iter();
            space
                .for_each_event_at(line, &noted, |i, ev| {
                    let at = again.next().expect("one visit per noted event");
                    assert_eq!(format!("{:?}", ev.at(i)), format!("{at:?}"), "event {i}");
                    assert!(ev.stats.is_empty());
                    Ok(())
                })
                .unwrap();
            assert!(again.next().is_none());
        }
    }
    total
}

#[test]
fn raw_event_reader_equals_prost_on_every_trace() {
    for rel in [
        "tf/d1_tf_keras_bfc/d1_tf_keras_bfc.xplane.pb.gz",
        "tf/d1_tf_keras_stats/d1_tf_keras_stats.xplane.pb.gz",
        "tf/d2_tf_cnn/d2_tf_cnn.xplane.pb.gz",
        "jax/a1_docs_seed/a1_docs_seed.xplane.pb.gz",
    ] {
        let decode::Profile::XSpace(space) = open(rel).profile else { panic!("{rel} is an XSpace") };
        assert!(raw_events_equal_prost(&space) > 10_000, "{rel}");
    }
}

/// Layouts no profiler writes but protobuf allows (fields in another order, repeated, unknown ones,
/// a message split in two): the raw reader leaves its fast path for them and still equals prost.
#[test]
fn raw_event_reader_equals_prost_on_unusual_layouts() {
    use prost::Message;
    use tidemark::proto::xplane as pb;
    let len_field = |field: u32, payload: &[u8]| {
        let mut out = Vec::new();
        tidemark::decode::wire::put_len_field(&mut out, field, payload);
        out
    };
    let stat = |id: i64, v: pb::x_stat::Value| pb::XStat { metadata_id: id, value: Some(v) };
    let int_stat = stat(1, pb::x_stat::Value::Int64Value(-5));
    let str_stat = stat(2, pb::x_stat::Value::StrValue("conv2d/Conv2D".into()));
    let canonical = pb::XEvent {
        metadata_id: 7,
        data: Some(pb::x_event::Data::OffsetPs(1 << 40)),
        duration_ps: 300,
        stats: vec![int_stat.clone(), str_stat.clone(), stat(3, pb::x_stat::Value::DoubleValue(0.25))],
    }
    .encode_to_vec();
    let only = |e: pb::XEvent| e.encode_to_vec();
    let stats_only = |stats: Vec<pb::XStat>| only(pb::XEvent { stats, ..Default::default() });
    let events: Vec<Vec<u8>> = vec![
        canonical.clone(),
        // The metadata id after the stats.
        [stats_only(vec![int_stat.clone()]), only(pb::XEvent { metadata_id: 9, ..Default::default() })].concat(),
        // An unknown field, and the id given twice.
        [vec![0x48, 0x01], canonical.clone(), vec![0x08, 0x0b]].concat(),
        // num_occurrences instead of an offset.
        only(pb::XEvent { metadata_id: 7, data: Some(pb::x_event::Data::NumOccurrences(4)), ..Default::default() }),
        // A stat with its value before its id, one with two values, one with neither, one with an unknown field.
        [
            len_field(4, &[stat(0, pb::x_stat::Value::Uint64Value(77)).encode_to_vec(), vec![0x08, 0x01]].concat()),
            len_field(4, &[int_stat.encode_to_vec(), vec![0x18, 0x05]].concat()),
            len_field(4, &[]),
            len_field(4, &[str_stat.encode_to_vec(), vec![0x50, 0x01]].concat()),
            len_field(4, &stat(2, pb::x_stat::Value::RefValue(3)).encode_to_vec()),
        ]
        .concat(),
        // An empty event.
        Vec::new(),
    ];
    let mut line = pb::XLine { id: 1, name: "thread".into(), timestamp_ns: 5, ..Default::default() }.encode_to_vec();
    for (i, e) in events.iter().enumerate() {
        line.extend(len_field(4, e));
        if i == 2 {
            // An unknown field between events.
            line.extend([0x60, 0x02]);
        }
    }
    let stat_metadata = (1..=3).map(|id| (id, pb::XStatMetadata { id, name: format!("s{id}"), ..Default::default() })).collect();
    let plane =
        [pb::XPlane { id: 1, name: "/host:CPU".into(), stat_metadata, ..Default::default() }.encode_to_vec(), len_field(3, &line)].concat();
    let space = tidemark::decode::xplane::XSpace::index(len_field(1, &plane), &mut |_, _| {}).unwrap();
    assert_eq!(raw_events_equal_prost(&space), events.len());
}
