//! Decoding throughput on the larger fixtures: file bytes → indexed, overview computed, as the page's
//! worker does it. Prints MB/s (of the file as stored and of the inflated protobuf); run with
//! `cargo bench --bench decode`. Timings are reported, never asserted.

use std::path::Path;
use std::time::{Duration, Instant};
use tidemark::engine::Session;

const FILES: &[&str] = &[
    "jax/a2_mlp_train/a2_mlp_train.xplane.pb.gz",
    "tf/d2_tf_cnn/d2_tf_cnn.xplane.pb.gz",
    "tf/d1_tf_keras_bfc/d1_tf_keras_bfc.xplane.pb.gz",
    "jax/a1_docs_seed/a1_docs_seed.xplane.pb.gz",
    "jax/a2_mlp_train/jit_init_params(4).hlo_proto.pb.gz",
    "pprof/docs_seed_memory.prof",
];

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    // As the CLI does: repeated runs reuse the memory of the previous ones.
    tidemark::engine::retain_memory::retain_freed_memory();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    println!("{:<52} {:>10} {:>10} {:>10} {:>12} {:>12}", "file", "stored", "inflated", "median", "stored MB/s", "inflated MB/s");
    for rel in FILES {
        let bytes = std::fs::read(dir.join(rel)).expect("fixture");
        let inflated = if tidemark::decode::gzip::is_gzip(&bytes) {
            tidemark::decode::gzip::inflate(&bytes).expect("gzip").len()
        } else {
            bytes.len()
        };
        let runs = if bytes.len() > 1 << 20 { 7 } else { 31 };
        let times: Vec<Duration> = (0..runs)
            .map(|_| {
                let mut s = Session::new();
                let input = bytes.clone();
                let t = Instant::now();
                let f = s.open(rel, input, &mut |_, _| {}).expect("decodes");
                std::hint::black_box(&f.overview);
                t.elapsed()
            })
            .collect();
        let m = median(times);
        let mbps = |n: usize| n as f64 / 1e6 / m.as_secs_f64();
        println!(
            "{:<52} {:>10} {:>10} {:>8.1}ms {:>12.1} {:>12.1}",
            rel,
            bytes.len(),
            inflated,
            m.as_secs_f64() * 1e3,
            mbps(bytes.len()),
            mbps(inflated)
        );
    }
}
