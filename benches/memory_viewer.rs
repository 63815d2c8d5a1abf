//! Memory Viewer analysis time per module, natively: every HloProto fixture (the modules XProf's
//! `*.memory_viewer.*.json` were made from) and synthetic modules up to 100,000 buffers. Prints the
//! median of several runs per module; asserts nothing. `cargo bench --bench memory_viewer`.

#[path = "../tests/support/synthetic_hlo.rs"]
mod synthetic_hlo;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tidemark::analysis::memory_viewer::{analyze, Options};
use tidemark::decode::{decode, Profile};
use tidemark::proto::hlo::HloProto;

/// Runs `f` until `budget` is spent (at least 3, at most 50 times) and returns the median time.
fn median(budget: Duration, mut f: impl FnMut()) -> Duration {
    let mut times = Vec::new();
    let start = Instant::now();
    while times.len() < 3 || (times.len() < 50 && start.elapsed() < budget) {
        let t = Instant::now();
        f();
        times.push(t.elapsed());
    }
    times.sort();
    times[times.len() / 2]
}

fn fixture_modules() -> Vec<(String, HloProto)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut paths: Vec<PathBuf> = Vec::new();
    let mut dirs = vec![root];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for e in entries.flatten() {
            let p = e.path();
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if p.is_dir() {
                dirs.push(p);
            } else if name.contains("after_optimizations.hlo.pb") || name.contains(".hlo_proto.pb") {
                paths.push(p);
            }
        }
    }
    paths.sort();
    paths
        .into_iter()
        .filter_map(|p| {
            let bytes = std::fs::read(&p).ok()?;
            let name = p.file_name()?.to_string_lossy().into_owned();
            match decode(&name, bytes, &mut |_, _| {}).ok()?.profile {
                Profile::Hlo(h) => Some((name, h.proto)),
                _ => None,
            }
        })
        .collect()
}

fn report(name: &str, proto: &HloProto) {
    let Ok(v) = analyze(proto, Options::default()) else {
        println!("{name:<72} (no Memory Viewer)");
        return;
    };
    let t = median(Duration::from_millis(500), || {
        std::hint::black_box(analyze(std::hint::black_box(proto), Options::default()).ok());
    });
    println!("{name:<72} {:>10.3} ms  ({} events, {} blocks)", t.as_secs_f64() * 1e3, v.heap_bytes.len().saturating_sub(1), v.blocks.len());
}

fn main() {
    // As the CLI does: repeated runs reuse the memory of the previous ones.
    tidemark::engine::retain_memory::retain_freed_memory();
    println!("Memory Viewer analysis, median per module (HloProto already decoded):");
    for (name, proto) in fixture_modules() {
        report(&name, &proto);
    }
    for n in [1_000, 10_000, 100_000] {
        report(&format!("synthetic_{n} (tests/support/synthetic_hlo.rs)"), &synthetic_hlo::synthetic_module(n));
    }
}
