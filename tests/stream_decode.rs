//! The page's read path: a file read as a stream in slices (`decode::stream`) decodes to the same index
//! as its whole bytes (`decode::decode`), on every trace fixture (the device traces read in place), at
//! slice sizes from 1 byte (every varint and field header split) to 1 MiB, plain and gzipped.

mod common;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use tidemark::decode::stream::{decode_stream, Source};
use tidemark::decode::xplane::XSpace;
use tidemark::decode::{DecodeError, DecodedFile, Profile};

/// Gives `bytes` at most `slice` bytes per read, as the worker reads a file.
struct Slices<'a> {
    bytes: &'a [u8],
    at: usize,
    slice: usize,
}

impl Read for Slices<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(self.slice).min(self.bytes.len() - self.at);
        buf[..n].copy_from_slice(&self.bytes[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

fn last4(bytes: &[u8]) -> Option<[u8; 4]> {
    bytes.len().checked_sub(4).map(|at| bytes[at..].try_into().expect("4 bytes"))
}

fn streamed(name: &str, bytes: &[u8], slice: usize) -> Result<DecodedFile, DecodeError> {
    let mut reader = Slices { bytes, at: 0, slice };
    decode_stream(name, Source { size_bytes: bytes.len() as u64, last4: last4(bytes), reader: &mut reader }, &mut |_, _| {})
}

fn space(f: &DecodedFile) -> &XSpace {
    match &f.profile {
        Profile::XSpace(s) => s,
        _ => panic!("{} is not an XSpace", f.name),
    }
}

/// Where two indexes differ, if they do: every field of the space, plane and line, and the bytes.
fn difference(a: &XSpace, b: &XSpace) -> Option<String> {
    if a.bytes() != b.bytes() {
        return Some("bytes differ".into());
    }
    if (&a.hostnames, &a.errors, &a.warnings) != (&b.hostnames, &b.errors, &b.warnings) {
        return Some("space header differs".into());
    }
    if a.truncation != b.truncation {
        return Some(format!("truncation {:?}, not {:?}", a.truncation, b.truncation));
    }
    if a.planes.len() != b.planes.len() {
        return Some(format!("{} planes, not {}", a.planes.len(), b.planes.len()));
    }
    for (i, (p, q)) in a.planes.iter().zip(&b.planes).enumerate() {
        if p.meta != q.meta {
            return Some(format!("plane #{i}: metadata differs"));
        }
        if p.lines.len() != q.lines.len() {
            return Some(format!("plane #{i}: {} lines, not {}", p.lines.len(), q.lines.len()));
        }
        for (j, (l, m)) in p.lines.iter().zip(&q.lines).enumerate() {
            if (&l.header, l.range(), l.event_count) != (&m.header, m.range(), m.event_count) {
                return Some(format!("plane #{i} line #{j} differs"));
            }
        }
    }
    None
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// Every trace fixture: the CPU ones in the repository and the device ones beside it.
fn traces() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.to_string_lossy().ends_with(".xplane.pb") || p.to_string_lossy().ends_with(".xplane.pb.gz") {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(&common::fixture(""), &mut out);
    if let Some(device) = common::device_fixture("") {
        walk(&device, &mut out);
    }
    out.sort();
    out
}

/// Slice sizes for a file of `len` bytes: every size on small files (1 byte reads take long in a debug
/// build), the larger ones on all.
fn slice_sizes(len: usize) -> Vec<usize> {
    let small: &[usize] = if len <= 1 << 20 {
        &[1, 2, 3, 7]
    } else if len <= 8 << 20 {
        &[13]
    } else {
        &[]
    };
    small.iter().copied().chain([4093, 65_537, 1 << 20]).collect()
}

#[test]
fn the_streamed_index_equals_the_whole_buffer_index_on_every_trace() {
    let traces = traces();
    assert!(traces.len() >= 8, "found only {} traces", traces.len());
    for path in traces {
        let name = path.display().to_string();
        let stored = std::fs::read(&path).unwrap();
        let whole = tidemark::decode::decode(&name, stored.clone(), &mut |_, _| {}).unwrap_or_else(|e| panic!("{name}: {e}"));
        let raw = space(&whole).bytes().to_vec();
        // The file as stored, and its other form: gzipped where stored plain, plain where stored gzipped.
        let other = if whole.gzipped { raw.clone() } else { gzip(&raw) };
        for bytes in [&stored, &other] {
            let sizes = slice_sizes(raw.len());
            for &slice in &sizes {
                let s = streamed(&name, bytes, slice).unwrap_or_else(|e| panic!("{name} in slices of {slice}: {e}"));
                if let Some(d) = difference(space(&s), space(&whole)) {
                    panic!("{name} ({} bytes) in slices of {slice}: {d}", bytes.len());
                }
                assert_eq!(s.gzipped, tidemark::decode::gzip::is_gzip(bytes));
                assert_eq!(s.size_bytes, bytes.len() as u64);
            }
            let form = if tidemark::decode::gzip::is_gzip(bytes) { "gzipped" } else { "plain" };
            eprintln!("{name}: {} bytes {form}: equal at slice sizes {sizes:?}", bytes.len());
        }
    }
}

#[test]
fn other_formats_stream_as_they_decode_whole() {
    for rel in [
        "hlo/module_0014.jit__normal.cpu_after_optimizations.hlo.pb",
        "pprof/docs_seed_memory.prof",
        "jax/a2_mlp_train/jit_batch(12).hlo_proto.pb.gz",
    ] {
        let bytes = common::bytes(rel);
        let whole = common::open(rel);
        let s = streamed(rel, &bytes, 3).unwrap_or_else(|e| panic!("{rel}: {e}"));
        assert_eq!(s.profile.format(), whole.profile.format(), "{rel}");
        assert!(!s.source_bytes().is_empty(), "{rel}");
    }
}

#[test]
fn a_cut_file_streams_as_it_decodes_whole() {
    let raw = space(&common::open("tf/d1_tf_keras_none/d1_tf_keras_none.xplane.pb.gz")).bytes().to_vec();
    let first_line = space(&common::open("tf/d1_tf_keras_none/d1_tf_keras_none.xplane.pb.gz")).planes[0].lines[0].range();
    // Cut inside the first plane's header, its first line's key and length, a third of the way (in
    // the middle of a plane) and at the last byte (its metadata): what lies before the cut is indexed
    // the same however the bytes arrive; a cut with nothing before it fails the same.
    for cut in [1, 3, first_line.start - 1, first_line.start + 2, raw.len() / 3, raw.len() - 1] {
        let whole = tidemark::decode::decode("cut.xplane.pb", raw[..cut].to_vec(), &mut |_, _| {});
        for slice in [1, 7, 65_537] {
            let s = streamed("cut.xplane.pb", &raw[..cut], slice);
            match (&s, &whole) {
                (Ok(s), Ok(w)) => {
                    assert!(space(w).truncation.is_some(), "cut at {cut}: not marked truncated");
                    if let Some(d) = difference(space(s), space(w)) {
                        panic!("cut at {cut}, slices of {slice}: {d}");
                    }
                }
                (Err(s), Err(w)) => assert_eq!(s, w, "cut at {cut}, slices of {slice}"),
                _ => panic!("cut at {cut}, slices of {slice}: streamed {:?}, whole {:?}", s.as_ref().err(), whole.as_ref().err()),
            }
        }
    }
    // A gzip stream cut short opens with what was inflated before the cut, as its whole bytes do
    // (tests/truncated.rs cuts every fixture's gzip).
    let gz = common::bytes("tf/d1_tf_keras_none/d1_tf_keras_none.xplane.pb.gz");
    let s = streamed("cut.xplane.pb.gz", &gz[..gz.len() / 2], 4093).expect("a cut gzip stream opens");
    let w = tidemark::decode::decode("cut.xplane.pb.gz", gz[..gz.len() / 2].to_vec(), &mut |_, _| {}).unwrap();
    assert!(s.gzip_cut.is_some() && s.gzip_cut == w.gzip_cut && space(&s).truncation.is_some());
    assert_eq!(difference(space(&s), space(&w)), None);
}

#[test]
fn a_gzip_trailer_stating_an_implausible_size_is_not_trusted() {
    // A trailer stating more than the file could inflate to (here, a file cut short, whose last bytes
    // are any compressed bytes, or a crafted one) neither refuses the file nor sizes its buffer.
    let rel = "tf/d1_tf_keras_none/d1_tf_keras_none.xplane.pb.gz";
    let mut gz = common::bytes(rel);
    let n = gz.len();
    gz[n - 4..].copy_from_slice(&u32::MAX.to_le_bytes());
    let mut reader = Slices { bytes: &gz, at: 0, slice: 1 << 20 };
    let stated = Some(u32::MAX.to_le_bytes());
    let e = decode_stream(rel, Source { size_bytes: n as u64, last4: stated, reader: &mut reader }, &mut |_, _| {}).err();
    // The stream itself is read to its (now corrupt) trailer, which the inflater checks.
    assert!(e.is_some_and(|e| !e.to_string().contains("inflates")), "refused from its trailer");
    let whole = common::bytes(rel);
    let s = decode_stream(rel, Source { size_bytes: whole.len() as u64, last4: stated, reader: &mut &whole[..] }, &mut |_, _| {}).unwrap();
    assert!(difference(space(&s), space(&common::open(rel))).is_none());
}

#[test]
fn a_reader_that_fails_says_the_file_could_not_be_read() {
    /// Gives `data`, then fails.
    struct Failing(Vec<u8>);
    impl Read for Failing {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.0.is_empty() || buf.is_empty() {
                return Err(std::io::Error::other("the file was moved"));
            }
            buf[0] = self.0.remove(0);
            Ok(1)
        }
    }
    for (data, what) in [(vec![0x0a, 0x05, 0x12], "plain"), (vec![0x1f, 0x8b, 0x08], "gzipped"), (vec![], "at once")] {
        let mut reader = Failing(data);
        let e = decode_stream("x.xplane.pb", Source { size_bytes: 100, last4: None, reader: &mut reader }, &mut |_, _| {})
            .err()
            .expect("fails");
        assert_eq!(e, DecodeError::Unreadable { detail: "the file was moved".into() }, "{what}");
    }
}
