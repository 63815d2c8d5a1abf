//! A trace cut short opens with what lies before the cut: every real trace fixture, cut at offsets
//! stepping by a prime (so inside varints, length prefixes, headers and events alike) and just around
//! the start of every line, keeps exactly the events that lie wholly before the cut, in wire order,
//! named as in the whole file or, where the cut plane's names lay after the cut, by metadata id. Bytes
//! that are not a trace are refused as before; the CLI warns and carries on.

mod common;

use std::ops::Range;
use tidemark::decode::wire::{Fields, Value};
use tidemark::decode::xplane::XSpace;
use tidemark::decode::{self, DecodeError, Profile};
use tidemark::engine::Session;

/// The inflated bytes of trace fixture `rel`.
fn raw(rel: &str) -> Vec<u8> {
    match common::open(rel).profile {
        Profile::XSpace(s) => s.bytes().to_vec(),
        _ => panic!("{rel} is not a trace"),
    }
}

fn index(bytes: &[u8]) -> Result<XSpace, DecodeError> {
    XSpace::index(bytes.to_vec(), &mut |_, _| {})
}

/// One event as the index gives it: where it lies (plane, line, byte range), its header, its name.
#[derive(Debug, Clone, PartialEq)]
struct Event {
    plane: usize,
    line: usize,
    bytes: Range<usize>,
    header: (i64, i64, i64),
    name: String,
}

/// Every event of `space`, in wire order.
fn events(space: &XSpace) -> Vec<Event> {
    let none: tidemark::decode::xplane::IdTable<bool> = tidemark::decode::xplane::IdTable::new(std::iter::empty());
    let mut out = Vec::new();
    for (p, plane) in space.planes.iter().enumerate() {
        for (l, line) in plane.lines.iter().enumerate() {
            let ranges: Vec<Range<usize>> = Fields::new(space.bytes(), line.range())
                .map(|f| f.expect("an indexed line reads"))
                .filter_map(|f| match (f.number, f.value) {
                    (4, Value::Len(r)) => Some(r),
                    _ => None,
                })
                .collect();
            assert_eq!(ranges.len(), line.event_count, "plane #{p} line #{l}: the count is of its events");
            let mut k = 0;
            space
                .for_each_raw_event(
                    line,
                    &none,
                    |_| true,
                    |_, e| {
                        let h = e.header;
                        let name = plane.event_name(h.metadata_id).to_string();
                        out.push(Event {
                            plane: p,
                            line: l,
                            bytes: ranges[k].clone(),
                            header: (h.metadata_id, h.offset_ps, h.duration_ps),
                            name,
                        });
                        k += 1;
                        Ok(())
                    },
                )
                .unwrap_or_else(|e| panic!("plane #{p} line #{l}: {e}"));
        }
    }
    out
}

/// Checks the index of `whole[..cut]` against the whole file's events `all`: the events wholly before
/// the cut, in order, at the same places, with the same headers and names (or their ids' names where
/// the names were lost, which the truncation then says); complete planes as they are whole.
fn check_cut(rel: &str, whole: &XSpace, all: &[Event], cut: usize) {
    let expected: Vec<&Event> = all.iter().filter(|e| e.bytes.end <= cut).collect();
    let space = match index(&whole.bytes()[..cut]) {
        Ok(s) => s,
        Err(e) => {
            // Refused only when nothing of the file lies before the cut.
            assert!(expected.is_empty(), "{rel} cut at {cut}: {e}, with {} events before the cut", expected.len());
            assert!(matches!(e, DecodeError::Truncated { .. }), "{rel} cut at {cut}: {e}");
            assert!(e.to_string().contains(&format!("truncated at byte {cut}")), "{rel} cut at {cut}: {e}");
            return;
        }
    };
    let Some(t) = space.truncation.as_ref() else {
        // A cut between two top-level fields leaves a well-formed XSpace: nothing says it was cut.
        let ends: Vec<usize> = Fields::new(whole.bytes(), 0..whole.bytes().len())
            .map(|f| f.unwrap())
            .map(|f| match f.value {
                Value::Len(r) => r.end,
                _ => f.at,
            })
            .collect();
        assert!(ends.contains(&cut), "{rel} cut at {cut}: not marked truncated");
        assert_eq!(events(&space).len(), expected.len(), "{rel} cut at {cut}");
        return;
    };
    assert_eq!(t.truncated_at, cut as u64, "{rel}");
    assert!(t.at_least_bytes > cut as u64 && t.at_least_bytes <= whole.bytes().len() as u64, "{rel} cut at {cut}: {t:?}");
    assert!(space.planes.len() <= whole.planes.len(), "{rel} cut at {cut}");
    for (i, (p, q)) in space.planes.iter().zip(&whole.planes).enumerate().take(space.planes.len().saturating_sub(1)) {
        assert!(p.meta == q.meta && p.lines.len() == q.lines.len(), "{rel} cut at {cut}: complete plane #{i} differs");
    }
    let got = events(&space);
    assert_eq!(got.len(), expected.len(), "{rel} cut at {cut}: {} events, not the {} before the cut", got.len(), expected.len());
    for (g, e) in got.iter().zip(expected) {
        assert_eq!((g.plane, g.line, &g.bytes, g.header), (e.plane, e.line, &e.bytes, e.header), "{rel} cut at {cut}");
        if g.name != e.name {
            assert_eq!(g.name, format!("#{}", g.header.0), "{rel} cut at {cut}: an event renamed");
            let plane = space.planes[g.plane].name();
            assert!(t.names_lost_in.iter().any(|n| n == plane), "{rel} cut at {cut}: names lost in {plane}, not said: {t:?}");
        }
    }
}

/// Offsets from 1 to `len` stepping by `step` (a prime), and a few bytes around each line's start (its
/// key and length prefix) and its first event.
fn cuts(whole: &XSpace, step: usize) -> Vec<usize> {
    let len = whole.bytes().len();
    let mut out: Vec<usize> = (1..len).step_by(step).collect();
    for line in whole.planes.iter().flat_map(|p| &p.lines) {
        let r = line.range();
        out.extend([r.start.saturating_sub(3), r.start.saturating_sub(1), r.start, r.start + 1, r.start + 5, r.end - 1, r.end]);
    }
    out.retain(|&c| c > 0 && c < len);
    out.sort_unstable();
    out.dedup();
    out
}

#[test]
fn a_cut_trace_keeps_every_event_before_the_cut() {
    // Dense on a small trace, sparser on the large ones (each cut indexes and reads the file again).
    for (rel, step) in [
        ("tf/d1_tf_keras_none/d1_tf_keras_none.xplane.pb.gz", 997),
        ("jax/a1_docs_seed/a1_docs_seed.xplane.pb.gz", 7_919),
        ("tf/d1_tf_keras_stats/d1_tf_keras_stats.xplane.pb.gz", 23_459),
        ("tf/d1_tf_keras_bfc/d1_tf_keras_bfc.xplane.pb.gz", 29_989),
        ("tf/d2_tf_cnn/d2_tf_cnn.xplane.pb.gz", 104_729),
        ("jax/a2_mlp_train/a2_mlp_train.xplane.pb.gz", 179_999),
    ] {
        let whole = index(&raw(rel)).unwrap();
        assert!(whole.truncation.is_none(), "{rel} whole is not truncated");
        let all = events(&whole);
        let cuts = cuts(&whole, step);
        for &cut in &cuts {
            check_cut(rel, &whole, &all, cut);
        }
        eprintln!("{rel}: {} events; {} cuts checked", all.len(), cuts.len());
    }
}

#[test]
fn a_cut_plane_names_its_events_by_id() {
    // The host plane of d1 is followed by its metadata: cut just before that metadata, its events
    // are all there and none of their names.
    let rel = "tf/d1_tf_keras_none/d1_tf_keras_none.xplane.pb.gz";
    let bytes = raw(rel);
    let whole = index(&bytes).unwrap();
    let (i, plane) = whole.planes.iter().enumerate().max_by_key(|(_, p)| p.event_count()).unwrap();
    let cut = plane.lines.last().unwrap().range().end;
    let space = index(&bytes[..cut]).unwrap();
    let t = space.truncation.clone().unwrap();
    assert_eq!(space.planes.len(), i + 1);
    assert_eq!(space.planes[i].event_count(), plane.event_count());
    assert_eq!(t.names_lost_in, vec![plane.name().to_string()]);
    let renamed = events(&space).iter().filter(|e| e.plane == i && e.name == format!("#{}", e.header.0)).count();
    assert_eq!(renamed, plane.event_count(), "every event of the cut plane is named by id");

    // Through the engine, the overview says so in one line, and the Trace Viewer shows the events.
    let mut s = Session::new();
    let id = s.open("cut.xplane.pb", bytes[..cut].to_vec(), &mut |_, _| {}).unwrap().id;
    let o = &s.get(id).unwrap().overview;
    assert_eq!(o.truncation.as_ref().map(|t| t.truncated_at), Some(cut as u64));
    let message = o.truncation_message().unwrap();
    let events_before: usize = space.planes.iter().map(|p| p.event_count()).sum();
    let count = tidemark::units::count;
    assert!(message.starts_with(&format!("Truncated at byte {} of at least ", count(cut as u64))), "{message}");
    assert!(message.contains(&format!("showing the {} events decoded before the cut", count(events_before as u64))), "{message}");
    assert!(message.contains(&format!("names lost in plane {}", plane.name())), "{message}");
    assert!(s.trace_outline(id).unwrap().event_count > 0);
}

#[test]
fn the_whole_file_and_files_that_are_not_traces_are_as_before() {
    let rel = "jax/a1_docs_seed/a1_docs_seed.xplane.pb.gz";
    let mut s = Session::new();
    let id = s.open("a1.xplane.pb.gz", common::bytes(rel), &mut |_, _| {}).unwrap().id;
    assert!(s.get(id).unwrap().overview.truncation.is_none());
    assert!(s.get(id).unwrap().overview.truncation_message().is_none());
    // The complete overview's wire form has no truncation field at all.
    assert!(serde_json::to_value(&s.get(id).unwrap().overview).unwrap().get("truncation").is_none());

    // Noise named as a trace, and a malformed field before the cut, are refused with their errors.
    let noise: Vec<u8> = (0..10_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8).collect();
    let e = decode::decode("noise.xplane.pb", noise, &mut |_, _| {}).err().expect("noise is refused");
    assert!(matches!(e, DecodeError::NotAProfile { .. } | DecodeError::Corrupt { .. } | DecodeError::Truncated { .. }), "{e}");
    let mut bad = raw(rel);
    let first_line = index(&bad).unwrap().planes.iter().find_map(|p| p.lines.first().map(|l| l.range())).unwrap();
    bad[first_line.start] = 0x07; // an invalid field key inside the first line
    let e = decode::decode("bad.xplane.pb", bad[..bad.len() / 2].to_vec(), &mut |_, _| {}).err().expect("corrupt is refused");
    assert!(matches!(e, DecodeError::Corrupt { .. }), "{e}");
}

#[test]
fn a_trace_without_events_opens_empty() {
    use prost::Message;
    let empty = tidemark::proto::xplane::XSpaceHeader { hostnames: vec!["h".into()], ..Default::default() }.encode_to_vec();
    let mut s = Session::new();
    let id = s.open("empty.xplane.pb", empty, &mut |_, _| {}).unwrap().id;
    assert!(s.get(id).unwrap().overview.truncation.is_none());
    assert_eq!(s.trace_outline(id).unwrap().event_count, 0);
}

#[test]
fn the_cli_warns_and_carries_on() {
    let rel = "tf/d1_tf_keras_none/d1_tf_keras_none.xplane.pb.gz";
    let bytes = raw(rel);
    let cut = bytes.len() * 2 / 3;
    let dir = std::env::temp_dir().join(format!("tidemark-truncated-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("cut.xplane.pb");
    std::fs::write(&path, &bytes[..cut]).unwrap();
    let (code, out, err) = common::tidemark(&["framework-op-stats", path.to_str().unwrap(), "--json"]);
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(code, 0, "{err}");
    let warnings: Vec<&str> = err.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(warnings.len(), 1, "{err}");
    assert!(warnings[0].contains(&format!("Truncated at byte {}", tidemark::units::count(cut as u64))), "{err}");
    // The JSON is the command's usual reply.
    let json: serde_json::Value = serde_json::from_str(&out).expect("JSON on stdout");
    assert!(json.is_object() || json.is_array(), "{out:.200}");
}
