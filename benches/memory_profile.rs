//! Memory Profile benchmark: end to end from file bytes (decode, analysis, XProf's JSON — what XProf's
//! converter produces — and the page's view), per XSpace fixture and for a larger real trace,
//! `bench/traces/d2_tf_cnn_250.xplane.pb.gz` (the `d2_tf_cnn` fixture script run for 250 steps instead
//! of 60; `bench/make_trace.sh` makes longer ones). No criterion: medians over repeated runs with
//! `std::time`, printed one line per file, so the numbers can sit next to XProf's converter time
//! (`bench/xprof_compare.sh`). Timings are reported, never asserted.
//!
//! `cargo bench --bench memory_profile` (env `TIDEMARK_BENCH_RUNS`, default 5; env
//! `TIDEMARK_BENCH_MIN_MS` adds runs until they add up to that many milliseconds). The larger trace is
//! inflated to `target/bench/` and read from there, from disk as the CLI reads files, so that XProf can
//! be timed on the very same file. With file arguments (`cargo bench --bench memory_profile --
//! FILE...`) only those files are timed, from disk, each also printed as a `median_ms<TAB>FILE<TAB>MS`
//! line for scripts.

use flate2::read::GzDecoder;
use std::io::Read;
use std::path::Path;
use std::time::{Duration, Instant};
use tidemark::analysis::memory_profile::xprof_json;
use tidemark::decode::Input;
use tidemark::engine::read_input::read_input;
use tidemark::engine::Session;

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

/// One end-to-end run, from `load`ing the bytes (a copy of them in memory, or the file read from disk
/// as the CLI reads it): its phases and the events analysed.
fn run_once(name: &str, load: &dyn Fn() -> Input) -> (Phases, usize) {
    let mut p = Phases::default();
    let t = Instant::now();
    let mut s = Session::new();
    let id = s.open(name, load(), &mut |_, _| {}).expect("opens").id;
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

/// Times `runs` runs, and more until they add up to `min_span` (so that a short burst of load from
/// a neighbour on a shared machine weighs no more in the median than in XProf's longer runs), and
/// prints the median run (by total) with its phases; returns its total in ms.
fn bench(label: &str, name: &str, size: usize, load: &dyn Fn() -> Input, runs: usize, min_span: Duration) -> f64 {
    let mut all = Vec::with_capacity(runs);
    let mut events = 0;
    let mut span = Duration::ZERO;
    while all.len() < runs || (span < min_span && all.len() < MAX_RUNS) {
        let (p, n) = run_once(name, load);
        span += p.total();
        all.push(p);
        events = n;
    }
    all.sort_by_key(Phases::total);
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let m = all[all.len() / 2];
    println!(
        "{label:<48} {:>10} B {events:>8} events  median {:>8.1} ms (open {:.1}, analysis {:.1}, json {:.1}, view {:.1})  min {:>8.1} ms  ({} runs)",
        size,
        ms(m.total()),
        ms(m.open),
        ms(m.analysis),
        ms(m.json),
        ms(m.view),
        ms(all[0].total()),
        all.len(),
    );
    ms(m.total())
}

/// The most runs `TIDEMARK_BENCH_MIN_MS` adds.
const MAX_RUNS: usize = 10_000;

fn gunzip(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    GzDecoder::new(bytes).read_to_end(&mut out).expect("gunzip");
    out
}

fn main() {
    // As the CLI does: repeated runs reuse the memory of the previous ones.
    tidemark::engine::retain_memory::retain_freed_memory();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let runs = env_usize("TIDEMARK_BENCH_RUNS", 5);
    let min_span = Duration::from_millis(std::env::var("TIDEMARK_BENCH_MIN_MS").ok().and_then(|v| v.parse().ok()).unwrap_or(0));
    // Cargo passes `--bench` to a harness-less bench; everything else is a file to time.
    let files: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    if !files.is_empty() {
        for f in files {
            // From the file on disk, as XProf's converter is timed (bench/xprof_time.py).
            let path = Path::new(&f);
            let size = std::fs::metadata(path).map_or(0, |m| m.len() as usize);
            let name = path.file_name().map_or(f.clone(), |n| n.to_string_lossy().into_owned());
            let load = || read_input(path).unwrap_or_else(|e| panic!("{f}: {e}"));
            let median = bench(&name, &name, size, &load, runs, min_span);
            println!("median_ms\t{f}\t{median:.3}");
        }
        return;
    }
    println!("Memory Profile, end to end from file bytes (decode + analysis + XProf JSON + page view)");
    for rel in FIXTURES {
        let bytes = std::fs::read(root.join("tests/fixtures").join(rel)).expect("fixture");
        let name = rel.rsplit('/').next().unwrap_or(rel);
        bench(name, name, bytes.len(), &|| bytes.clone().into(), runs, min_span);
    }
    let trace = root.join("bench/traces/d2_tf_cnn_250.xplane.pb.gz");
    let name = "d2_tf_cnn_250.xplane.pb";
    let path = root.join("target/bench").join(name);
    if !path.exists() {
        let plain = gunzip(&std::fs::read(&trace).expect("bench/traces/d2_tf_cnn_250.xplane.pb.gz"));
        let _ = std::fs::create_dir_all(root.join("target/bench"));
        std::fs::write(&path, plain).expect("writes target/bench/d2_tf_cnn_250.xplane.pb");
    }
    let size = std::fs::metadata(&path).map_or(0, |m| m.len() as usize);
    let load = || read_input(&path).expect("reads the larger trace");
    bench(&format!("{name} (from disk)"), name, size, &load, runs.min(3), min_span);
}
