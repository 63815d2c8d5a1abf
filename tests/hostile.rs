//! Hostile and broken input: every fixture, truncated, bit-flipped, zeroed and doubled, goes through
//! decoding, the overview (via the worker protocol, as the page does) and every analysis entry point.
//! Each case must end in `Ok` with structurally sane output or in an error that names the file and
//! the problem: never a panic, never a runaway in time or memory.
//!
//! How the bounds are checked:
//! - panics: each case runs under `catch_unwind`, and the failure names the mutation;
//! - stack: each case runs on a thread with a 1 MiB stack, the wasm default, so recursion that would
//!   overflow in the page overflows here first (debug frames are larger than release ones);
//! - time: each case runs on its own thread and must finish within [`CASE_TIME_LIMIT`];
//! - memory: a counting global allocator tracks the peak bytes allocated by the case's thread, which
//!   must stay within [`MEMORY_FACTOR`] × the input size (plus [`MEMORY_SLACK`]).
//!
//! Mutations are drawn from a fixed-seed PRNG, so a failure reproduces; `TIDEMARK_SWEEP_VERBOSE=1`
//! prints every case before it runs (useful if one ever aborts the process).

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use tidemark::analysis::{device_memory, memory_profile, memory_viewer};
use tidemark::decode::hlo::embedded_modules;
use tidemark::decode::wire::{put_len_field, Fields, Value};
use tidemark::decode::xplane::names::HLO_PROTO;
use tidemark::decode::{gzip, pprof::PprofFile, Profile};
use tidemark::engine::protocol::{handle, Response, ResponseBody, VERSION};
use tidemark::engine::Session;

// ---------------------------------------------------------------------------------------------
// Per-thread allocation accounting.

struct Counting;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn track(delta: isize) {
    let _ = LIVE.try_with(|l| {
        let v = l.get() + delta;
        l.set(v);
        let _ = PEAK.try_with(|p| p.set(p.get().max(v)));
    });
}

// SAFETY: forwards to the system allocator; the bookkeeping touches only const-initialised
// thread-locals (no allocation, no destructor).
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc`, passed on unchanged.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            track(layout.size() as isize);
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc_zeroed`, passed on unchanged.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            track(layout.size() as isize);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from this allocator, which got it from `System`, with this `layout`.
        unsafe { System.dealloc(ptr, layout) };
        track(-(layout.size() as isize));
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as for `dealloc`; the caller's contract for `new_size` is passed on unchanged.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            track(new_size as isize - layout.size() as isize);
        }
        p
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

// ---------------------------------------------------------------------------------------------
// Limits.

/// A case slower than this is a hang (debug build, shared CPU: generous on purpose; the slowest real
/// case takes well under a second).
const CASE_TIME_LIMIT: Duration = Duration::from_secs(60);
/// Peak bytes a case may allocate per byte of its input (inflated size for gzip input). Indexing,
/// decoding metadata and analysis output stay well under this on every fixture.
const MEMORY_FACTOR: usize = 96;
const MEMORY_SLACK: usize = 384 << 20;
/// The wasm main-thread stack (Rust's wasm32 default) is 1 MiB.
const CASE_STACK_BYTES: usize = 1 << 20;

// ---------------------------------------------------------------------------------------------
// Deterministic PRNG (SplitMix64).

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

// ---------------------------------------------------------------------------------------------
// One case: the whole pipeline on one mutated input.

/// What a case produced, for the summary.
#[derive(Default)]
struct Tally {
    cases: usize,
    ok: usize,
    err: usize,
    slowest: (Duration, String),
    worst_memory_ratio: (f64, String),
}

/// Runs `bytes` named `name` through the protocol (decode + overview + JSON reply) and then every
/// analysis of the decoded file; `Err` says what was wrong (a panic or an insane output).
fn exercise(name: &str, bytes: Vec<u8>, base_pprof: Option<&PprofFile>) -> Result<bool, String> {
    let mut session = Session::new();
    let request = format!(r#"{{"v":{VERSION},"seq":1,"body":{{"type":"open","path":{}}}}}"#, serde_json::to_string(name).unwrap());
    let mut last_done = 0;
    let reply = handle(&mut session, &request, Some(bytes), &mut |r: Response| {
        if let ResponseBody::Progress { done, total } = r.body {
            assert!(done <= total && done >= last_done, "progress {done}/{total} after {last_done}");
            last_done = done;
        }
    });
    serde_json::to_string(&reply).map_err(|e| format!("reply does not serialize: {e}"))?;
    let file_id = match reply.body {
        ResponseBody::Opened { file_id, overview } => {
            if overview.name != name {
                return Err(format!("overview names {:?}", overview.name));
            }
            file_id
        }
        ResponseBody::Failed { error } => {
            if error.file() != Some(name) {
                return Err(format!("the error names file {:?}", error.file()));
            }
            check_message(&error.detail())?;
            if std::env::var_os("TIDEMARK_SWEEP_VERBOSE").is_some() {
                eprintln!("  -> {error}");
            }
            return Ok(false);
        }
        other => return Err(format!("unexpected reply {other:?}")),
    };
    if matches!(session.get(file_id).expect("opened file").file.profile, Profile::XSpace(_)) {
        match session.take_memory_profile(file_id) {
            Ok(p) => check_memory_profile(&p)?,
            Err(e) => check_message(&e.detail())?,
        }
    }
    let file = &session.get(file_id).expect("opened file").file;
    match &file.profile {
        Profile::XSpace(_) => check_memory_viewer(&file.profile)?,
        Profile::Hlo(_) => check_memory_viewer(&file.profile)?,
        Profile::Pprof(p) => check_device_memory(p, base_pprof)?,
        Profile::Kineto(_) => {
            let errors = [
                session.torch_overview(file_id).err(),
                session.torch_operators(file_id, Default::default()).err(),
                session.torch_kernels(file_id).err(),
                session.torch_memory(file_id).err(),
            ];
            for e in errors.into_iter().flatten() {
                check_message(&e.detail())?;
            }
        }
        Profile::TorchSnapshot(s) => {
            tidemark::analysis::torch_snapshot::analyze(s);
        }
    }
    Ok(true)
}

fn check_message(m: &str) -> Result<(), String> {
    if m.trim().is_empty() || m.len() > 4096 {
        return Err(format!("unhelpful error message ({} bytes): {:.200}", m.len(), m));
    }
    Ok(())
}

fn check_memory_profile(p: &memory_profile::MemoryProfile) -> Result<(), String> {
    memory_profile::xprof_json::to_string(p).map_err(|e| format!("memory profile JSON: {e}"))?;
    serde_json::to_string(p).map_err(|e| format!("memory profile: {e}"))?;
    for a in &p.allocators {
        let n = a.snapshots.len();
        if a.sampled_indices.len() > memory_profile::MAX_TIMELINE_POINTS
            || a.sampled_indices.windows(2).any(|w| w[0] >= w[1])
            || a.sampled_indices.iter().any(|&i| i >= n)
        {
            return Err(format!("{}: bad sampled indices", a.memory_id));
        }
        if (a.counts.allocations + a.counts.deallocations) as usize != n {
            return Err(format!("{}: counts do not add up to the events", a.memory_id));
        }
        for row in a.breakdown.iter().take(8) {
            if row.snapshot_indices.iter().any(|&i| i >= n) || row.special_index.is_some_and(|k| k >= a.special_allocations.len()) {
                return Err(format!("{}: breakdown row points outside", a.memory_id));
            }
            a.row_metadata(row).ok_or("breakdown row without metadata")?;
        }
        a.breakdown_lifetimes();
        let (first, last) = (a.snapshots.first().map_or(0, |s| s.time_offset_ps), a.snapshots.last().map_or(0, |s| s.time_offset_ps));
        if a.timeline_window(first, last, 100).len() > 100 || a.timeline_window(last, first, 10).len() > 10 {
            return Err("timeline window over budget".into());
        }
    }
    Ok(())
}

fn check_memory_viewer(profile: &Profile) -> Result<(), String> {
    let options = memory_viewer::Options::default();
    for m in memory_viewer::modules::module_inputs(profile) {
        let Ok(proto) = &m.proto else { continue };
        let first = match memory_viewer::analyze(proto, options) {
            Ok(v) => v,
            Err(e) => {
                check_message(&e.to_string())?;
                continue;
            }
        };
        for space in first.memory_spaces.clone() {
            let v = if space == options.memory_space {
                first.clone()
            } else {
                match memory_viewer::analyze(proto, memory_viewer::Options { memory_space: space, ..options }) {
                    Ok(v) => v,
                    Err(e) => {
                        check_message(&e.to_string())?;
                        continue;
                    }
                }
            };
            let events = v.heap_bytes.len();
            if v.unpadded_heap_bytes.len() != events || v.instruction_names.len() != events {
                return Err(format!("{}: timelines of different lengths", m.name));
            }
            if events > 0 && v.peak_position >= events {
                return Err(format!("{}: peak position {} of {events}", m.name, v.peak_position));
            }
            let mut order = v.peak_buffers_by_size.clone();
            order.sort_unstable();
            if order != (0..v.peak_buffers.len()).collect::<Vec<_>>() {
                return Err(format!("{}: by-size order is not a permutation", m.name));
            }
            if v.blocks.iter().any(|b| b.start_step < 0 || b.end_step < b.start_step.min(0)) {
                return Err(format!("{}: block outside the timeline", m.name));
            }
            memory_viewer::xprof_json::to_xprof_json(&v);
            serde_json::to_string(&v).map_err(|e| format!("memory viewer: {e}"))?;
        }
    }
    let listing = memory_viewer::modules::list_modules(profile, options);
    serde_json::to_string(&listing).map_err(|e| format!("module list: {e}"))?;
    Ok(())
}

fn check_device_memory(p: &PprofFile, base: Option<&PprofFile>) -> Result<(), String> {
    let mut all_options =
        vec![device_memory::Options::default(), device_memory::Options { fold_library_frames: true, kind: Some("buffer".into()) }];
    // A crafted profile at its reading budget takes seconds per read: the default options are enough.
    if base.is_none() {
        all_options.truncate(1);
    }
    for options in all_options {
        let r = device_memory::analyze(p, &options);
        serde_json::to_string(&r).map_err(|e| format!("device memory: {e}"))?;
        if r.total_bytes.unsigned_abs() < (i64::MAX / 4) as u64 && r.tree.total_bytes != r.total_bytes {
            return Err(format!("tree total {} is not the total {}", r.tree.total_bytes, r.total_bytes));
        }
        let base = base.unwrap_or(p);
        let d = device_memory::diff(base, p, &options);
        serde_json::to_string(&d).map_err(|e| format!("diff: {e}"))?;
        let s = device_memory::series(&[("memory1.prof", base), ("memory2.prof", p), ("memory3.prof", p)], &options);
        if s.snapshots.len() != 3 || s.suspect_count > s.stacks.len() {
            return Err("series summary is inconsistent".into());
        }
        serde_json::to_string(&s).map_err(|e| format!("series: {e}"))?;
    }
    Ok(())
}

/// Runs one case on its own small-stack thread, under `catch_unwind`, with time and memory limits.
fn run_case(
    tally: &mut Tally,
    label: String,
    name: &str,
    bytes: Vec<u8>,
    size_basis: usize,
    base: Option<&'static PprofFile>,
) -> Result<(), String> {
    if std::env::var_os("TIDEMARK_SWEEP_VERBOSE").is_some() {
        eprintln!("case {label}");
    }
    let (tx, rx) = mpsc::channel();
    let name = name.to_string();
    let started = Instant::now();
    std::thread::Builder::new()
        .stack_size(CASE_STACK_BYTES)
        .spawn(move || {
            LIVE.with(|l| l.set(0));
            PEAK.with(|p| p.set(0));
            let result = catch_unwind(AssertUnwindSafe(|| exercise(&name, bytes, base)));
            let peak = PEAK.with(Cell::get).max(0) as usize;
            let _ = tx.send((result, peak));
        })
        .expect("spawn");
    let (result, peak) = match rx.recv_timeout(CASE_TIME_LIMIT) {
        Ok(r) => r,
        Err(_) => return Err(format!("{label}: did not finish within {CASE_TIME_LIMIT:?} (a hang)")),
    };
    let elapsed = started.elapsed();
    let ok = match result {
        Ok(Ok(ok)) => ok,
        Ok(Err(insane)) => return Err(format!("{label}: {insane}")),
        Err(panic) => {
            let msg = panic.downcast_ref::<String>().cloned().or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()));
            return Err(format!("{label}: PANIC {}", msg.unwrap_or_default()));
        }
    };
    let budget = size_basis.saturating_mul(MEMORY_FACTOR) + MEMORY_SLACK;
    if peak > budget {
        return Err(format!("{label}: allocated {peak} bytes at peak for a {size_basis}-byte input (budget {budget})"));
    }
    tally.cases += 1;
    if ok {
        tally.ok += 1;
    } else {
        tally.err += 1;
    }
    if elapsed > tally.slowest.0 {
        tally.slowest = (elapsed, label.clone());
    }
    let ratio = peak as f64 / size_basis.max(1) as f64;
    if ratio > tally.worst_memory_ratio.0 {
        tally.worst_memory_ratio = (ratio, label);
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Mutations.

/// How hard to sweep one input.
#[derive(Clone, Copy)]
struct Plan {
    /// Evenly spread cut points, besides the fixed ones (start, headers, last byte).
    cuts: usize,
    flips: usize,
    zeroed: usize,
}

/// Truncations, bit flips, zeroed ranges and the file doubled, of `data`; `hot` ranges (e.g. an
/// embedded HloProto) get extra cuts, flips and zeroed ranges of their own.
fn mutations(data: &[u8], plan: Plan, hot: &[std::ops::Range<usize>], rng: &mut Rng) -> Vec<(String, Vec<u8>)> {
    let n = data.len();
    if n == 0 {
        return vec![("the empty file as is".to_string(), Vec::new())];
    }
    let mut out = Vec::new();
    let mut cuts: Vec<usize> = vec![0, 1, 2, 3, 5, 8, 13, 21, 40, 100, n.saturating_sub(1)];
    cuts.extend((1..=plan.cuts).map(|k| n * k / (plan.cuts + 1)));
    for r in hot {
        cuts.extend([r.start, r.start + 1, r.start + 7, r.start + r.len() / 3, r.start + r.len() * 2 / 3, r.end.saturating_sub(1)]);
    }
    cuts.sort_unstable();
    cuts.dedup();
    for c in cuts.into_iter().filter(|&c| c < n) {
        out.push((format!("truncated to {c} of {n} bytes"), data[..c].to_vec()));
    }
    let pick = |rng: &mut Rng, k: usize| -> usize {
        if !hot.is_empty() && k % 2 == 1 {
            let r = &hot[rng.below(hot.len())];
            r.start + rng.below(r.len())
        } else {
            rng.below(n)
        }
    };
    for k in 0..plan.flips {
        let at = pick(rng, k);
        let bit = rng.below(8);
        let mut m = data.to_vec();
        m[at] ^= 1 << bit;
        out.push((format!("bit {bit} of byte {at} flipped"), m));
    }
    for k in 0..plan.zeroed {
        let at = pick(rng, k);
        let len = 1 + rng.below(if k % 3 == 0 { 4096 } else { 64 });
        let end = (at + len).min(n);
        let mut m = data.to_vec();
        m[at..end].fill(0);
        out.push((format!("bytes {at}..{end} zeroed"), m));
    }
    out.push(("the file twice".to_string(), [data, data].concat()));
    out
}

/// Byte ranges of the serialized HloProtos an XSpace embeds (`Hlo Proto` stats of `/host:metadata`).
fn embedded_hlo_ranges(raw: &[u8]) -> Vec<std::ops::Range<usize>> {
    let Ok(tidemark::decode::DecodedFile { profile: Profile::XSpace(space), .. }) =
        tidemark::decode::decode("x.xplane.pb", raw.to_vec(), &mut |_, _| {})
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for m in embedded_modules(&space) {
        let b = m.proto_bytes;
        if b.len() < 64 {
            continue;
        }
        if let Some(at) = raw.windows(64).position(|w| w == &b[..64]) {
            if raw.get(at..at + b.len()) == Some(b) {
                out.push(at..at + b.len());
            }
        }
    }
    assert!(out.is_empty() || HLO_PROTO == "Hlo Proto");
    out
}

/// `data` with the length-delimited payload at `target` cut to `keep` bytes, and every enclosing
/// message's length prefix rewritten, so the outer file stays well-formed and only the nested
/// message is truncated (what a profiler that died while serializing one module would write).
fn shrink_nested(data: &[u8], range: std::ops::Range<usize>, target: &std::ops::Range<usize>, keep: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(range.len());
    for f in Fields::new(data, range) {
        let f = f.expect("the original is well-formed");
        match f.value {
            Value::Len(r) if r.start <= target.start && target.end <= r.end => {
                let payload =
                    if r == *target { data[r.start..r.start + keep].to_vec() } else { shrink_nested(data, r.clone(), target, keep) };
                // The tag is everything from the field start up to its length varint.
                let mut tag_end = f.at;
                while data[tag_end] & 0x80 != 0 {
                    tag_end += 1;
                }
                out.extend_from_slice(&data[f.at..=tag_end]);
                let mut len = payload.len() as u64;
                loop {
                    let b = (len & 0x7f) as u8;
                    len >>= 7;
                    if len == 0 {
                        out.push(b);
                        break;
                    }
                    out.push(b | 0x80);
                }
                out.extend_from_slice(&payload);
            }
            _ => {
                let end = match &f.value {
                    Value::Len(r) => r.end,
                    _ => next_field_start(data, f.at),
                };
                out.extend_from_slice(&data[f.at..end]);
            }
        }
    }
    out
}

/// Where the field starting at `at` ends (for scalar fields).
fn next_field_start(data: &[u8], at: usize) -> usize {
    let mut fields = Fields::new(data, at..data.len());
    fields.next();
    fields.next().map_or(data.len(), |f| f.map_or(data.len(), |f| f.at))
}

// ---------------------------------------------------------------------------------------------
// The sweeps.

fn leak<T>(v: T) -> &'static T {
    Box::leak(Box::new(v))
}

fn finish(what: &str, tally: &Tally, failures: &[String]) {
    eprintln!(
        "{what}: {} cases ({} ok, {} clear errors); slowest {:?} ({}); worst peak memory {:.1}× input ({})",
        tally.cases, tally.ok, tally.err, tally.slowest.0, tally.slowest.1, tally.worst_memory_ratio.0, tally.worst_memory_ratio.1
    );
    assert!(failures.is_empty(), "{} of the {what} cases failed:\n{}", failures.len(), failures.join("\n"));
}

fn sweep(tally: &mut Tally, failures: &mut Vec<String>, rel: &str, plan: Plan, seed: u64) {
    let stored = common::bytes(rel);
    let name = rel.rsplit('/').next().unwrap();
    let mut rng = Rng(seed);
    let is_gz = gzip::is_gzip(&stored);
    let raw = if is_gz { gzip::inflate(&stored).expect("fixture inflates") } else { stored.clone() };
    let base: Option<&'static PprofFile> = match tidemark::decode::decode(name, stored.clone(), &mut |_, _| {}) {
        Ok(tidemark::decode::DecodedFile { profile: Profile::Pprof(p), .. }) => Some(leak(p)),
        _ => None,
    };
    let plain_name = name.strip_suffix(".gz").unwrap_or(name);
    let hot = embedded_hlo_ranges(&raw);
    for (what, m) in mutations(&raw, plan, &hot, &mut rng) {
        if let Err(e) = run_case(tally, format!("{rel} (inflated): {what}"), plain_name, m, raw.len(), base) {
            failures.push(e);
        }
    }
    // The outer file stays well-formed; only an embedded HloProto is cut short.
    for (i, r) in hot.iter().enumerate().take(3) {
        for keep in [0, 1, r.len() / 2, r.len() - 1] {
            let m = shrink_nested(&raw, 0..raw.len(), r, keep);
            let label = format!("{rel}: embedded HloProto #{i} ({} bytes at {}) cut to {keep} bytes", r.len(), r.start);
            if let Err(e) = run_case(tally, label, plain_name, m, raw.len(), base) {
                failures.push(e);
            }
        }
    }
    if is_gz {
        let gz_plan = Plan { cuts: 4, flips: plan.flips / 3 + 1, zeroed: 2 };
        for (what, m) in mutations(&stored, gz_plan, &[], &mut rng) {
            if let Err(e) = run_case(tally, format!("{rel} (gzip): {what}"), name, m, raw.len() * 2, base) {
                failures.push(e);
            }
        }
    }
}

/// Every fixture whose name ends with one of `suffixes`, relative to `tests/fixtures`, sorted.
fn fixtures(suffixes: &[&str]) -> Vec<String> {
    fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).expect("fixtures dir").flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else {
                out.push(p);
            }
        }
    }
    let root = common::fixture("");
    let mut all = Vec::new();
    walk(&root, &mut all);
    let mut out: Vec<String> = all
        .iter()
        .filter_map(|p| p.strip_prefix(&root).ok()?.to_str().map(str::to_string))
        .filter(|rel| suffixes.iter().any(|s| rel.ends_with(s)))
        .collect();
    out.sort();
    out
}

/// Sweeps every fixture of a kind: `heavy` ones (by file name) with `heavy_plan`, the rest with `plan`.
fn sweep_all(what: &str, suffixes: &[&str], plan: Plan, heavy: &[&str], heavy_plan: Plan) {
    let (mut tally, mut failures) = (Tally::default(), Vec::new());
    let rels = fixtures(suffixes);
    assert!(!rels.is_empty(), "no {what} fixtures");
    for (k, rel) in rels.iter().enumerate() {
        let plan = if heavy.iter().any(|h| rel.contains(h)) { heavy_plan } else { plan };
        sweep(&mut tally, &mut failures, rel, plan, 1000 + k as u64);
    }
    finish(what, &tally, &failures);
}

#[test]
fn xspace_traces_survive_mutation() {
    // Full-pipeline cases cost ~0.1–0.6 s each on the large traces: those get fewer flips.
    sweep_all(
        "XSpace",
        &[".xplane.pb.gz"],
        Plan { cuts: 3, flips: 3, zeroed: 2 },
        &["d1_tf_keras_bfc", "a1_docs_seed"],
        Plan { cuts: 6, flips: 10, zeroed: 5 },
    );
}

#[test]
fn hlo_protos_survive_mutation() {
    sweep_all(
        "HloProto",
        &[".hlo.pb", ".hlo_proto.pb", ".hlo_proto.pb.gz"],
        Plan { cuts: 6, flips: 16, zeroed: 6 },
        &["module_0042.jit_mlp_train_step.cpu_after", "jit_train_step(14)", "a_inference_xla_eval"],
        Plan { cuts: 12, flips: 60, zeroed: 20 },
    );
}

#[test]
fn pprof_profiles_survive_mutation() {
    sweep_all(
        "pprof",
        &[".prof"],
        Plan { cuts: 8, flips: 30, zeroed: 8 },
        &["docs_seed_memory", "memory9"],
        Plan { cuts: 16, flips: 120, zeroed: 30 },
    );
}

// ---------------------------------------------------------------------------------------------
// Crafted inputs: well-formed files built to hit one bound each. Random mutation cannot find these
// (they need millions of consistent fields); each one failed before its bound existed.

use prost::Message;
use tidemark::proto::{hlo, pprof as pp, xplane as xp};

fn run_crafted(cases: Vec<(&str, &str, Vec<u8>)>) {
    let (mut tally, mut failures) = (Tally::default(), Vec::new());
    for (label, name, bytes) in cases {
        // `TIDEMARK_SWEEP_DUMP=DIR` writes the crafted files out (seeds for the fuzzers, CLI checks).
        if let Some(dir) = std::env::var_os("TIDEMARK_SWEEP_DUMP") {
            std::fs::write(std::path::Path::new(&dir).join(name), &bytes).expect("dump crafted input");
        }
        let n = bytes.len();
        if let Err(e) = run_case(&mut tally, label.to_string(), name, bytes, n, None) {
            failures.push(e);
        }
    }
    finish("crafted", &tally, &failures);
}

/// A pprof profile: string table, one function per name, one location per function (one line each).
fn pprof_profile(names: &[&str], samples: Vec<pp::Sample>) -> pp::Profile {
    let mut strings: Vec<String> = ["", "space", "bytes", "kind", "buffer", "/home/ml/leak.py"].map(String::from).to_vec();
    let first_name = strings.len() as i64;
    strings.extend(names.iter().map(|n| n.to_string()));
    pp::Profile {
        sample_type: vec![pp::ValueType { r#type: 1, unit: 2 }],
        sample: samples,
        function: (0..names.len() as u64)
            .map(|i| pp::Function { id: i + 1, name: first_name + i as i64, filename: 5, ..Default::default() })
            .collect(),
        location: (0..names.len() as u64)
            .map(|i| pp::Location { id: i + 1, line: vec![pp::Line { function_id: i + 1, line: 7, column: 0 }], ..Default::default() })
            .collect(),
        string_table: strings,
        ..Default::default()
    }
}

fn buffer_sample(location_id: Vec<u64>, bytes: i64) -> pp::Sample {
    pp::Sample { location_id, value: vec![bytes], label: vec![pp::Label { key: 3, str: 4, ..Default::default() }] }
}

/// Inputs the fuzz targets found, kept as regressions (each panicked before its fix).
#[test]
fn fuzz_findings_stay_fixed() {
    // `sniff` target: a length prefix of 2^64 − 1 overflowed the wire scanner's `pos + len` (a panic
    // with overflow checks; in the release page, an inverted range and a slice panic).
    let mut wire_overflow = vec![0x61, 0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x41];
    wire_overflow.extend([0xff; 108]);
    wire_overflow.extend([0x3b, 0x28]);
    wire_overflow.extend([0; 11]);
    wire_overflow.push(0x0a);
    wire_overflow.extend([0; 41]);
    let cases = ["x.bin", "trace.xplane.pb", "m.hlo.pb", "memory.prof"]
        .into_iter()
        .map(|name| ("fuzz finding: length prefix 2^64 − 1", name, wire_overflow.clone()))
        .chain(std::iter::once(("fuzz finding: length prefix 2^64 − 1, without its first byte", "x.bin", wire_overflow[1..].to_vec())))
        .collect();
    run_crafted(cases);
}

#[test]
fn crafted_pprof_profiles_stay_bounded() {
    // One sample a million frames deep: recursion over the stack tree (building, serializing,
    // dropping) would overflow any stack.
    let deep = pprof_profile(&["recurse"], vec![buffer_sample(vec![1; 1_000_000], 4096)]).encode_to_vec();
    // One 64 KiB function name, on a location of 2,000 lines, 1,000 times per sample in 300 samples:
    // 400 KB of file that spells out 4·10^13 bytes of frame names.
    let mut wide = pprof_profile(&[&"n".repeat(64 << 10)], Vec::new());
    wide.location[0].line = vec![pp::Line { function_id: 1, line: 1, column: 0 }; 2000];
    wide.sample = (0..300).map(|i| buffer_sample(vec![1; 1000 + i], 1)).collect();
    let wide = wide.encode_to_vec();
    // A profile whose stacks and labels are markup: stays text (the page shows it literally).
    let markup =
        pprof_profile(&["<script>alert(1)</script>", "<img src=x onerror=alert(2)>"], vec![buffer_sample(vec![1, 2], 64)]).encode_to_vec();
    run_crafted(vec![
        ("pprof: one stack of 1,000,000 frames", "deep.prof", deep),
        ("pprof: a 64 KiB name repeated 2·10^6 times per sample", "wide.prof", wide),
        ("pprof: markup in names", "markup.prof", markup),
    ]);
}

/// An HloProto of one instruction defining `buffers` logical buffers (ids 0.., sizes 1..), all in one
/// temporary allocation, with the given trace.
fn hlo_module(
    buffers: i64,
    events: Vec<hlo::heap_simulator_trace::Event>,
    shape: hlo::ShapeProto,
    metadata: Option<hlo::OpMetadata>,
    frames: Option<hlo::StackFrameIndexProto>,
) -> hlo::HloProto {
    let instruction = hlo::HloInstructionProto {
        name: "fusion.1".into(),
        opcode: "fusion".into(),
        shape: Some(shape),
        metadata,
        id: 1,
        ..Default::default()
    };
    hlo::HloProto {
        hlo_module: Some(hlo::HloModuleProto {
            name: "crafted".into(),
            entry_computation_name: "main".into(),
            computations: vec![hlo::HloComputationProto {
                name: "main".into(),
                instructions: vec![instruction],
                id: 1,
                ..Default::default()
            }],
            id: 1,
            stack_frame_index: frames,
            ..Default::default()
        }),
        buffer_assignment: Some(hlo::BufferAssignmentProto {
            logical_buffers: (0..buffers)
                .map(|id| hlo::LogicalBufferProto {
                    id,
                    size: id + 1,
                    defined_at: Some(hlo::logical_buffer_proto::Location { instruction_id: 1, ..Default::default() }),
                    color: 0,
                })
                .collect(),
            buffer_allocations: vec![hlo::BufferAllocationProto {
                index: 0,
                size: buffers * (buffers + 1) / 2,
                assigned: (0..buffers)
                    .map(|id| hlo::buffer_allocation_proto::Assigned { logical_buffer_id: id, size: id + 1, ..Default::default() })
                    .collect(),
                ..Default::default()
            }],
            heap_simulator_traces: vec![hlo::HeapSimulatorTrace { events, ..Default::default() }],
            ..Default::default()
        }),
    }
}

fn event(kind: i32, buffer_id: i64, share_with: i64) -> hlo::heap_simulator_trace::Event {
    hlo::heap_simulator_trace::Event {
        kind,
        buffer_id,
        share_with_canonical_id: share_with,
        instruction_name: "fusion.1".into(),
        ..Default::default()
    }
}

fn f32_array() -> hlo::ShapeProto {
    hlo::ShapeProto { element_type: 11, dimensions: vec![4], ..Default::default() }
}

#[test]
fn crafted_hlo_protos_stay_bounded() {
    const ALLOC: i32 = 0;
    const FREE: i32 = 1;
    const SHARE: i32 = 2;
    let n = 60_000;
    // A heap that grows at every event, then frees in allocation order: copying the live list at each
    // new peak, or scanning it at each free, is quadratic.
    let growing = (0..n).map(|i| event(ALLOC, i, 0)).chain((0..n).map(|i| event(FREE, i, 0))).collect();
    let growing = hlo_module(n, growing, f32_array(), None, None).encode_to_vec();
    // A chain of SHARE_WITH, each buffer sharing the previous one: walking it at every event is
    // quadratic (it stops at 1,024 links with a clear error).
    let chain: Vec<_> = std::iter::once(event(ALLOC, 0, 0)).chain((1..n).map(|i| event(SHARE, i, i - 1))).collect();
    let chain = hlo_module(n, chain, f32_array(), None, None).encode_to_vec();
    // One instruction with a 200,000-element tuple shape and a cyclic 50,000-frame stack of long file
    // names, defining 3,000 live buffers: every buffer repeats its instruction's text.
    let tuple = hlo::ShapeProto { element_type: 13, tuple_shapes: vec![f32_array(); 200_000], ..Default::default() };
    let frames = hlo::StackFrameIndexProto {
        file_names: vec!["/very/long/path/".repeat(20_000)],
        file_locations: vec![hlo::stack_frame_index_proto::FileLocation { file_name_id: 1, line: 3, column: 1, ..Default::default() }],
        stack_frames: (1..=50_000)
            .map(|i| hlo::stack_frame_index_proto::StackFrame { file_location_id: 1, parent_frame_id: i % 50_000 + 1 })
            .collect(),
        ..Default::default()
    };
    let metadata = hlo::OpMetadata { op_name: "<script>alert(1)</script>".into(), stack_frame_id: 1, ..Default::default() };
    let texts = hlo_module(3000, (0..3000).map(|i| event(ALLOC, i, 0)).collect(), tuple, Some(metadata), Some(frames)).encode_to_vec();
    // Tuple shapes nested past prost's recursion limit: a decode error, not a stack overflow.
    let mut nested = f32_array();
    for _ in 0..5000 {
        nested = hlo::ShapeProto { element_type: 13, tuple_shapes: vec![nested], ..Default::default() };
    }
    let nested = hlo_module(1, vec![event(ALLOC, 0, 0)], nested, None, None).encode_to_vec();
    run_crafted(vec![
        ("HloProto: 60,000 buffers, heap growing at every event", "growing.hlo.pb", growing),
        ("HloProto: a SHARE_WITH chain of 60,000 buffers", "chain.hlo.pb", chain),
        ("HloProto: huge tuple shape and cyclic stack shared by 3,000 buffers", "texts.hlo.pb", texts),
        ("HloProto: tuple shapes nested 5,000 deep", "nested.hlo.pb", nested),
    ]);
}

/// An XSpace of one `/host:CPU` plane with one line of `events`, hand-assembled (our XPlane and XLine
/// types leave their children out, so they are appended as raw fields).
fn xspace(meta: xp::XPlane, events: Vec<xp::XEvent>) -> Vec<u8> {
    let mut line = xp::XLine { id: 1, name: "TensorFlow Ops".into(), ..Default::default() }.encode_to_vec();
    line.extend(xp::XLineEvents { events }.encode_to_vec());
    let mut plane = meta.encode_to_vec();
    put_len_field(&mut plane, 3, &line);
    let mut space = Vec::new();
    put_len_field(&mut space, 1, &plane);
    space.extend(xp::XSpaceHeader { hostnames: vec!["<b>host</b>".into()], ..Default::default() }.encode_to_vec());
    space
}

fn stat(metadata_id: i64, value: xp::x_stat::Value) -> xp::XStat {
    xp::XStat { metadata_id, value: Some(value) }
}

fn host_plane(events: &[(i64, &str)], stats: &[(i64, &str)]) -> xp::XPlane {
    xp::XPlane {
        id: 1,
        name: "/host:CPU".into(),
        event_metadata: events.iter().map(|&(id, name)| (id, xp::XEventMetadata { id, name: name.into(), ..Default::default() })).collect(),
        stat_metadata: stats.iter().map(|&(id, name)| (id, xp::XStatMetadata { id, name: name.into(), ..Default::default() })).collect(),
        ..Default::default()
    }
}

#[test]
fn crafted_xspace_traces_stay_bounded() {
    use xp::x_event::Data;
    use xp::x_stat::Value as V;
    let meta = || {
        host_plane(
            &[(1, "MemoryAllocation"), (2, "ExecutorState::Process")],
            &[(1, "_r"), (2, "bytes_allocated"), (3, "tf_op"), (4, "allocator_name")],
        )
    };
    let allocation = |offset_ps: i64, extra: Vec<xp::XStat>| xp::XEvent {
        metadata_id: 1,
        data: Some(Data::OffsetPs(offset_ps)),
        stats: [vec![stat(2, V::Int64Value(1 << 20)), stat(4, V::StrValue("<i>bfc</i>".into()))], extra].concat(),
        ..Default::default()
    };
    // 40,000 nested events, each a step root of a different level (innermost highest): checking every
    // root's ancestors for one of its own level is quadratic without a budget.
    let n = 40_000i64;
    let mut events: Vec<xp::XEvent> = (0..n)
        .map(|k| xp::XEvent {
            metadata_id: 2,
            data: Some(Data::OffsetPs(k)),
            duration_ps: 2 * (n - k),
            stats: vec![stat(1, V::Int64Value(k + 1))],
        })
        .collect();
    events.push(allocation(n, Vec::new()));
    let roots = xspace(meta(), events);
    // 200 allocations whose op name is a compressed 8 MiB string (8 KiB each in the file).
    let bomb = {
        use std::io::Write;
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        e.write_all(&vec![b'x'; 8 << 20]).unwrap();
        e.finish().unwrap()
    };
    let bombs = xspace(meta(), (0..200).map(|k| allocation(k, vec![stat(3, V::CompressedStrValue(bomb.clone()))])).collect());
    run_crafted(vec![
        ("XSpace: 40,000 nested step roots of distinct levels", "roots.xplane.pb", roots),
        ("XSpace: 200 op names that each inflate to 8 MiB", "bombs.xplane.pb", bombs),
    ]);
}

/// `tidemark … --json | head`: the command ends when the reader closes the pipe, without a panic.
#[test]
fn a_closed_pipe_ends_the_cli_quietly() {
    use std::io::Read;
    use std::process::{Command, Stdio};
    let trace = common::fixture("tf/d2_tf_cnn/d2_tf_cnn.xplane.pb.gz");
    let mut child = Command::new(env!("CARGO_BIN_EXE_tidemark"))
        .args(["trace-viewer", trace.to_str().expect("utf-8 path"), "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run tidemark");
    let mut head = [0u8; 16];
    child.stdout.take().expect("stdout").read_exact(&mut head).expect("the first bytes");
    // The reader is gone (its end of the pipe dropped): the rest of the trace cannot be written.
    let out = child.wait_with_output().expect("tidemark ends");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(!out.status.success(), "a write to the closed pipe ends it");
}
