//! A trace cut short opens with what lies before the cut: every real trace fixture, cut at offsets
//! stepping by a prime (so inside varints, length prefixes, headers and events alike) and just around
//! the start of every line, keeps exactly the events that lie wholly before the cut, in wire order,
//! named as in the whole file or, where the cut plane's names lay after the cut, by metadata id. Bytes
//! that are not a trace are refused as before; the CLI warns and carries on.
//!
//! A gzipped trace cut short (its compressed bytes cut anywhere: in the gzip header, mid-block, in the
//! trailer) opens with what was inflated before the cut, indexed exactly as the plain trace cut at the
//! inflated offset reached, whether it is decoded whole or streamed as the page reads it.

mod common;

use std::io::Read;
use std::ops::Range;
use tidemark::decode::gzip::GzipCut;
use tidemark::decode::stream::{decode_stream, Source};
use tidemark::decode::wire::{Fields, Value};
use tidemark::decode::xplane::XSpace;
use tidemark::decode::{self, DecodeError, DecodedFile, Profile};
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

/// Runs a command on `bytes` written as file `name`: it must exit 0 with its usual JSON on stdout and
/// one warning on stderr, which is returned.
fn cli_warning(name: &str, bytes: &[u8]) -> String {
    let dir = std::env::temp_dir().join(format!("tidemark-truncated-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    let (code, out, err) = common::tidemark(&["framework-op-stats", path.to_str().unwrap(), "--json"]);
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(code, 0, "{err}");
    let warnings: Vec<&str> = err.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(warnings.len(), 1, "{err}");
    // The JSON is the command's usual reply.
    let json: serde_json::Value = serde_json::from_str(&out).expect("JSON on stdout");
    assert!(json.is_object() || json.is_array(), "{out:.200}");
    warnings[0].to_string()
}

#[test]
fn the_cli_warns_and_carries_on() {
    let bytes = raw("tf/d1_tf_keras_none/d1_tf_keras_none.xplane.pb.gz");
    let cut = bytes.len() * 2 / 3;
    let warning = cli_warning("cut.xplane.pb", &bytes[..cut]);
    assert!(warning.contains(&format!("Truncated at byte {}", tidemark::units::count(cut as u64))), "{warning}");
}

/// Gives `bytes` at most 64 KiB per read, as the page's worker reads a file.
struct Slices<'a>(&'a [u8]);

impl Read for Slices<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(64 << 10).min(self.0.len());
        buf[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}

/// `bytes` decoded as the page's worker reads them: streamed, with the last four bytes (a gzip
/// trailer's stated size, or any bytes of a file cut short) read first.
fn streamed(name: &str, bytes: &[u8]) -> Result<DecodedFile, DecodeError> {
    let last4 = bytes.len().checked_sub(4).map(|at| bytes[at..].try_into().unwrap());
    decode_stream(name, Source { size_bytes: bytes.len() as u64, last4, reader: &mut Slices(bytes) }, &mut |_, _| {})
}

fn space_of(file: &DecodedFile) -> &XSpace {
    match &file.profile {
        Profile::XSpace(s) => s,
        _ => panic!("{} is not a trace", file.name),
    }
}

/// Checks `gz[..cut]`, decoded whole and streamed: both paths agree; the bytes inflated are the
/// start of the trace (`raw`), and index to what the plain trace cut at their end indexes to, with
/// the gzip's cut said; or, where that plain cut is refused (nothing before it), the file is refused
/// saying the gzip stream was cut. Returns how many bytes were inflated.
fn check_gzip_cut(rel: &str, gz: &[u8], raw: &[u8], all: &[Event], cut: usize) -> usize {
    let name = "cut.xplane.pb.gz";
    let whole = decode::decode(name, gz[..cut].to_vec(), &mut |_, _| {});
    let stream = streamed(name, &gz[..cut]);
    let (whole, stream) = match (whole, stream) {
        (Ok(w), Ok(s)) => (w, s),
        (Err(w), Err(s)) => {
            assert_eq!(w, s, "{rel} gzip cut at {cut}: the paths fail differently");
            if cut < 2 {
                return 0; // Not even the gzip magic: not a gzip file at all.
            }
            let message = w.to_string();
            assert!(
                message.contains(&format!("the gzip stream is truncated: the file ends at byte {cut}")),
                "{rel} gzip cut at {cut}: {message}"
            );
            let inflated: usize = message.split("after ").nth(1).and_then(|m| m.split(' ').next()).and_then(|n| n.parse().ok()).unwrap();
            // Refused only where nothing was inflated, or nothing lies before the plain trace's cut there.
            assert!(
                inflated == 0 || index(&raw[..inflated]).is_err(),
                "{rel} gzip cut at {cut}: refused, but {inflated} inflated bytes index"
            );
            return inflated;
        }
        (w, s) => panic!("{rel} gzip cut at {cut}: whole {:?}, streamed {:?}", w.err(), s.err()),
    };
    let (w, s) = (space_of(&whole), space_of(&stream));
    let inflated = w.bytes().len();
    assert_eq!(whole.gzip_cut, Some(GzipCut { compressed_len: cut as u64, inflated_bytes: inflated as u64 }), "{rel} gzip cut at {cut}");
    assert_eq!(stream.gzip_cut, whole.gzip_cut, "{rel} gzip cut at {cut}");
    assert_eq!(w.bytes(), &raw[..inflated], "{rel} gzip cut at {cut}: not the start of the trace");
    assert_eq!(s.bytes(), w.bytes(), "{rel} gzip cut at {cut}: the paths inflate differently");
    let plain = index(&raw[..inflated])
        .unwrap_or_else(|e| panic!("{rel} gzip cut at {cut}: opened, but the plain cut at {inflated} is refused: {e}"));
    let kept = events(w);
    assert_eq!(kept, events(&plain), "{rel} gzip cut at {cut}: not the plain cut at {inflated}'s events");
    assert_eq!(events(s), kept, "{rel} gzip cut at {cut}: the paths keep different events");
    assert_eq!((&w.truncation, &s.truncation), (&plain.truncation, &plain.truncation), "{rel} gzip cut at {cut}");
    assert_eq!(
        kept.len(),
        all.iter().filter(|e| e.bytes.end <= inflated).count(),
        "{rel} gzip cut at {cut}: not every event before the cut"
    );
    inflated
}

#[test]
fn a_cut_gzip_keeps_every_event_inflated_before_the_cut() {
    // Every byte of the gzip header (10 bytes and the file's name), evenly spread cuts (mid-block),
    // and every byte of the 8-byte trailer; fewer spread cuts on the large files.
    for (rel, spread) in [
        ("tf/d1_tf_keras_none/d1_tf_keras_none.xplane.pb.gz", 60),
        ("jax/a1_docs_seed/a1_docs_seed.xplane.pb.gz", 30),
        ("tf/d1_tf_keras_stats/d1_tf_keras_stats.xplane.pb.gz", 20),
        ("tf/d1_tf_keras_bfc/d1_tf_keras_bfc.xplane.pb.gz", 20),
        ("tf/d2_tf_cnn/d2_tf_cnn.xplane.pb.gz", 10),
        ("jax/a2_mlp_train/a2_mlp_train.xplane.pb.gz", 6),
    ] {
        let gz = common::bytes(rel);
        let raw = raw(rel);
        let all = events(&index(&raw).unwrap());
        let n = gz.len();
        let mut cuts: Vec<usize> = (1..48).chain((1..=spread).map(|k| n * k / (spread + 1))).chain(n - 9..n).collect();
        cuts.sort_unstable();
        cuts.dedup();
        let (mut before, mut refused) = (0, 0);
        for &cut in &cuts {
            let inflated = check_gzip_cut(rel, &gz, &raw, &all, cut);
            assert!(inflated >= before, "{rel} gzip cut at {cut}: {inflated} bytes inflated, fewer than a shorter cut's {before}");
            before = inflated;
            // Past the header (the file's name ends before byte 48), every cut opens.
            refused += usize::from(inflated == 0 || index(&raw[..inflated]).is_err());
            assert!(cut < 48 || inflated > 0 && index(&raw[..inflated]).is_ok(), "{rel} gzip cut at {cut}: refused");
            if cut >= n - 8 {
                assert_eq!(inflated, raw.len(), "{rel} gzip cut at {cut}, in the trailer: the trace inflates whole");
            }
        }
        eprintln!("{rel}: {} gzip cuts checked, {refused} refused (nothing before the cut)", cuts.len());
    }
}

#[test]
fn a_cut_gzip_says_where_both_cuts_are() {
    let rel = "tf/d1_tf_keras_none/d1_tf_keras_none.xplane.pb.gz";
    let gz = common::bytes(rel);
    let count = tidemark::units::count;
    let mut s = Session::new();

    // Cut mid-stream: the compressed file's length and the inflated offset of the trace's cut.
    let cut = gz.len() * 2 / 3;
    let id = s.open("cut.xplane.pb.gz", gz[..cut].to_vec(), &mut |_, _| {}).unwrap().id;
    let o = s.get(id).unwrap().overview.clone();
    let g = o.gzip_cut.expect("the gzip cut is said");
    let t = o.truncation.clone().expect("the trace is cut");
    assert_eq!((g.compressed_len, g.inflated_bytes), (cut as u64, t.truncated_at));
    let message = o.truncation_message().unwrap();
    let start = format!(
        "Truncated: the gzip file is cut short at byte {}, which inflates to byte {} of a trace of at least",
        count(cut as u64),
        count(t.truncated_at)
    );
    assert!(message.starts_with(&start), "{message}");
    assert!(message.contains("showing the ") && message.contains("could not be checked against its CRC"), "{message}");
    assert!(serde_json::to_value(&o).unwrap()["gzip_cut"]["compressed_len"] == cut as u64);

    // Cut in the trailer: the whole trace, unchecked.
    let id = s.open("trailer.xplane.pb.gz", gz[..gz.len() - 3].to_vec(), &mut |_, _| {}).unwrap().id;
    let o = s.get(id).unwrap().overview.clone();
    assert!(o.truncation.is_none());
    let message = o.truncation_message().expect("a cut trailer is said");
    assert!(
        message.starts_with(&format!(
            "Truncated: the gzip file is cut short at byte {}, past the end of the trace",
            count(gz.len() as u64 - 3)
        )),
        "{message}"
    );
    assert!(message.contains("could not be checked against its CRC"), "{message}");

    // Cut in the header: refused, saying so.
    let e = s.open("head.xplane.pb.gz", gz[..12].to_vec(), &mut |_, _| {}).err().expect("a cut header is refused");
    assert!(
        e.to_string().contains("the gzip stream is truncated: the file ends at byte 12")
            && e.to_string().contains("nothing of its content lies before the cut"),
        "{e}"
    );

    // A corrupt (not cut) gzip is refused as before.
    let mut bad = gz.clone();
    let n = bad.len();
    bad[n - 6] ^= 0x10; // the CRC
    let e = decode::decode("bad.xplane.pb.gz", bad, &mut |_, _| {}).err().expect("a corrupt gzip is refused");
    assert!(e.to_string().contains("the gzip stream is corrupt"), "{e}");

    // A pprof profile (gzipped) cut short is refused: it has no partial reading.
    let prof = common::bytes("pprof/docs_seed_memory.prof");
    // Cut mid-stream, what was inflated does not decode; cut in the trailer, it does, and is refused
    // all the same.
    for (cut, why) in
        [(prof.len() / 2, "what lies before the cut cannot be read"), (prof.len() - 3, "a pprof profile cut short cannot be read in part")]
    {
        for e in [decode::decode("m.prof", prof[..cut].to_vec(), &mut |_, _| {}).err(), streamed("m.prof", &prof[..cut]).err()] {
            let e = e.expect("a cut pprof is refused").to_string();
            assert!(e.contains(&format!("the gzip stream is truncated: the file ends at byte {cut}")) && e.contains(why), "{e}");
        }
    }
}

#[test]
fn the_cli_warns_of_a_cut_gzip_and_carries_on() {
    let gz = common::bytes("tf/d1_tf_keras_none/d1_tf_keras_none.xplane.pb.gz");
    let cut = gz.len() / 2;
    let warning = cli_warning("cut.xplane.pb.gz", &gz[..cut]);
    let inflated = decode::decode("cut.xplane.pb.gz", gz[..cut].to_vec(), &mut |_, _| {}).unwrap().gzip_cut.unwrap().inflated_bytes;
    let count = tidemark::units::count;
    let both = format!("the gzip file is cut short at byte {}, which inflates to byte {}", count(cut as u64), count(inflated));
    assert!(warning.contains(&both), "{warning}");
}
