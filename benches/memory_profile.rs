//! Memory Profile benchmark: end to end from file bytes (decode, analysis, XProf's JSON — what XProf's
//! converter produces — and the page's view), per XSpace fixture and for a larger trace made from
//! `d2_tf_cnn` by repeating its host events in time. No criterion: medians over repeated runs with
//! `std::time`, printed one line per file, so the numbers can sit next to XProf's converter time
//! (`bench/xprof_compare.sh`). Timings are reported, never asserted.
//!
//! `cargo bench --bench memory_profile` (env `TIDEMARK_BENCH_COPIES`, default 10: copies of the host
//! events in the larger trace; `TIDEMARK_BENCH_RUNS`, default 5). The larger trace is written to
//! `target/bench/` so XProf can be timed on the very same bytes. With file arguments
//! (`cargo bench --bench memory_profile -- FILE...`) only those files are timed, each also printed as a
//! `median_ms<TAB>FILE<TAB>MS` line for scripts.

use flate2::read::GzDecoder;
use prost::Message;
use std::io::Read;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tidemark::analysis::memory_profile::xprof_json;
use tidemark::decode::wire::{put_varint, Field, Fields, Value};
use tidemark::engine::Session;
use tidemark::proto::xplane::{x_event, XLineEvents};

const FIXTURES: [&str; 6] = [
    "tf/d1_tf_keras_bfc/d1_tf_keras_bfc.xplane.pb.gz",
    "tf/d1_tf_keras_stats/d1_tf_keras_stats.xplane.pb.gz",
    "tf/d1_tf_keras_none/d1_tf_keras_none.xplane.pb.gz",
    "tf/d2_tf_cnn/d2_tf_cnn.xplane.pb.gz",
    "jax/a1_docs_seed/a1_docs_seed.xplane.pb.gz",
    "jax/a2_mlp_train/a2_mlp_train.xplane.pb.gz",
];

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).filter(|&n| n > 0).unwrap_or(default)
}

/// Phases of one end-to-end run: open (decode + overview), analysis, XProf JSON, the page's view.
#[derive(Default, Clone, Copy)]
struct Phases {
    open: Duration,
    analysis: Duration,
    json: Duration,
    view: Duration,
}

impl Phases {
    fn total(&self) -> Duration {
        self.open + self.analysis + self.json + self.view
    }
}

/// One end-to-end run: its phases and the events analysed.
fn run_once(name: &str, bytes: &[u8]) -> (Phases, usize) {
    let mut p = Phases::default();
    let t = Instant::now();
    let mut s = Session::new();
    let id = s.open(name, bytes.to_vec(), &mut |_, _| {}).expect("opens").id;
    p.open = t.elapsed();
    let t = Instant::now();
    let profile = s.cached_memory_profile(id).expect("analyses");
    p.analysis = t.elapsed();
    let events = profile.allocators.iter().map(|a| a.snapshots.len()).sum();
    let t = Instant::now();
    let json = xprof_json::to_string(profile).expect("serializes");
    p.json = t.elapsed();
    let t = Instant::now();
    let view = s.memory_profile_view(id, None).expect("view");
    p.view = t.elapsed();
    std::hint::black_box((json.len(), view.memory_ids.len()));
    (p, events)
}

/// Times `runs` runs and prints the median run (by total) with its phases; returns its total in ms.
fn bench(label: &str, name: &str, bytes: &[u8], runs: usize) -> f64 {
    let mut all = Vec::with_capacity(runs);
    let mut events = 0;
    for _ in 0..runs {
        let (p, n) = run_once(name, bytes);
        all.push(p);
        events = n;
    }
    all.sort_by_key(Phases::total);
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let m = all[all.len() / 2];
    println!(
        "{label:<48} {:>10} B {events:>8} events  median {:>8.1} ms (open {:.1}, analysis {:.1}, json {:.1}, view {:.1})  min {:>8.1} ms  ({runs} runs)",
        bytes.len(),
        ms(m.total()),
        ms(m.open),
        ms(m.analysis),
        ms(m.json),
        ms(m.view),
        ms(all[0].total()),
    );
    ms(m.total())
}

fn gunzip(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    GzDecoder::new(bytes).read_to_end(&mut out).expect("gunzip");
    out
}

/// Copies the message in `buf[range]`, replacing the payload of length-delimited fields for which
/// `edit` returns one. Other fields are copied byte for byte.
fn rewrite(buf: &[u8], range: Range<usize>, edit: &mut dyn FnMut(&Field, &[u8]) -> Option<Vec<u8>>) -> Vec<u8> {
    let fields: Vec<Field> = Fields::new(buf, range.clone()).collect::<Result<_, _>>().expect("well-formed");
    let mut out = Vec::with_capacity(range.len());
    for (i, f) in fields.iter().enumerate() {
        let end = fields.get(i + 1).map_or(range.end, |n| n.at);
        let replaced = match &f.value {
            Value::Len(r) => edit(f, &buf[r.clone()]),
            _ => None,
        };
        match replaced {
            Some(payload) => {
                put_varint(&mut out, u64::from(f.number) << 3 | 2);
                put_varint(&mut out, payload.len() as u64);
                out.extend_from_slice(&payload);
            }
            None => out.extend_from_slice(&buf[f.at..end]),
        }
    }
    out
}

/// `space` with every line of its first `/host:CPU` plane followed by `copies - 1` copies of its
/// events, each shifted past the previous copy: a profile `copies` times as long, with the same
/// allocation pattern (XProf's memory profile reads event offsets, so the shift is on `offset_ps`).
fn repeat_host_events(space: &[u8], copies: usize) -> Vec<u8> {
    let mut host_done = false;
    rewrite(space, 0..space.len(), &mut |f, plane| {
        if f.number != 1 || host_done {
            return None;
        }
        let name = Fields::new(plane, 0..plane.len()).filter_map(Result::ok).find_map(|g| match (g.number, g.value) {
            (2, Value::Len(r)) => std::str::from_utf8(&plane[r]).ok().map(str::to_string),
            _ => None,
        })?;
        if name != "/host:CPU" {
            return None;
        }
        host_done = true;
        let lines: Vec<XLineEvents> = tidemark::decode::wire::len_fields(plane, 0..plane.len(), 3)
            .expect("lines")
            .into_iter()
            .map(|r| XLineEvents::decode(&plane[r]).expect("line events"))
            .collect();
        let offset = |e: &tidemark::proto::xplane::XEvent| match e.data {
            Some(x_event::Data::OffsetPs(o)) => o,
            _ => 0,
        };
        let span = lines.iter().flat_map(|l| &l.events).map(|e| offset(e) + e.duration_ps).max().unwrap_or(0) + 1_000_000_000;
        Some(rewrite(plane, 0..plane.len(), &mut |g, line| {
            if g.number != 3 {
                return None;
            }
            let events = XLineEvents::decode(line).expect("line events").events;
            let mut extra = Vec::with_capacity(events.len() * (copies - 1));
            for k in 1..copies as i64 {
                extra.extend(events.iter().map(|e| {
                    let mut e = e.clone();
                    e.data = Some(x_event::Data::OffsetPs(offset(&e) + k * span));
                    e
                }));
            }
            let mut out = line.to_vec();
            out.extend(XLineEvents { events: extra }.encode_to_vec());
            Some(out)
        }))
    })
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let runs = env_usize("TIDEMARK_BENCH_RUNS", 5);
    // Cargo passes `--bench` to a harness-less bench; everything else is a file to time.
    let files: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    if !files.is_empty() {
        for f in files {
            let bytes = std::fs::read(&f).unwrap_or_else(|e| panic!("{f}: {e}"));
            let name = Path::new(&f).file_name().map_or(f.clone(), |n| n.to_string_lossy().into_owned());
            let median = bench(&name, &name, &bytes, runs);
            println!("median_ms\t{f}\t{median:.3}");
        }
        return;
    }
    println!("Memory Profile, end to end from file bytes (decode + analysis + XProf JSON + page view)");
    for rel in FIXTURES {
        let bytes = std::fs::read(root.join("tests/fixtures").join(rel)).expect("fixture");
        let name = rel.rsplit('/').next().unwrap_or(rel);
        bench(name, name, &bytes, runs);
    }
    let copies = env_usize("TIDEMARK_BENCH_COPIES", 10);
    let d2 = gunzip(&std::fs::read(root.join("tests/fixtures/tf/d2_tf_cnn/d2_tf_cnn.xplane.pb.gz")).expect("fixture"));
    let big = repeat_host_events(&d2, copies);
    let out: PathBuf = root.join("target/bench");
    let _ = std::fs::create_dir_all(&out);
    let name = format!("d2_tf_cnn_x{copies}.xplane.pb");
    if let Err(e) = std::fs::write(out.join(&name), &big) {
        eprintln!("cannot write target/bench/{name}: {e}");
    }
    bench(&format!("{name} (generated, uncompressed)"), &name, &big, runs.min(3));
}
