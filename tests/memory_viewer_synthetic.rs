//! The Memory Viewer on a synthetic module with 100,000 buffers (see `support/synthetic_hlo.rs`):
//! heap, peak, blocks and figures against what the generator built, read back through the decoder as a
//! dropped file would be. Also writes the module to `target/tmp/` for the browser benchmark
//! (`tests/browser/memory_viewer.test.mjs` pans its block timeline).

#[path = "support/synthetic_hlo.rs"]
mod synthetic_hlo;

use prost::Message;
use tidemark::analysis::memory_viewer::{analyze, Options};
use tidemark::decode::{decode, Profile};
use tidemark::proto::hlo::heap_simulator_trace::event::Kind;

const BUFFERS: usize = 100_000;

#[test]
fn hundred_thousand_buffers() {
    let proto = synthetic_module_checked();
    let bytes = proto.encode_to_vec();
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("memory_viewer_synthetic_{BUFFERS}.hlo.pb"));
    std::fs::write(&path, &bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));

    let Profile::Hlo(file) = decode(&path.display().to_string(), bytes, &mut |_, _| {}).unwrap().profile else {
        panic!("the synthetic module must read back as an HloProto")
    };
    let v = analyze(&file.proto, Options::default()).unwrap();

    // The generator's own bookkeeping, replayed independently of the analysis.
    let ba = proto.buffer_assignment.as_ref().unwrap();
    let size_of = |id: i64| ba.logical_buffers.iter().find(|b| b.id == id).map(|b| b.size).unwrap();
    let sizes: std::collections::HashMap<i64, i64> = ba.logical_buffers.iter().map(|b| (b.id, b.size)).collect();
    let indefinite: i64 = (0..3).map(size_of).sum();
    let (mut heap, mut peak) = (0i64, 0i64);
    for e in &ba.heap_simulator_traces[0].events {
        heap += if e.kind == Kind::Alloc as i32 { sizes[&e.buffer_id] } else { -sizes[&e.buffer_id] };
        peak = peak.max(heap);
    }
    let events = ba.heap_simulator_traces[0].events.len();
    assert_eq!(events, 2 * BUFFERS);
    assert_eq!(v.heap_bytes.len(), events + 1);
    assert_eq!(v.peak_heap_bytes, peak + indefinite);
    assert_eq!(*v.heap_bytes.iter().max().unwrap(), v.peak_heap_bytes);
    assert_eq!(v.figures.entry_parameters_bytes, size_of(0) + size_of(1));
    assert_eq!(v.figures.maybe_live_out_bytes, size_of(2));
    let temporary = ba.buffer_allocations.last().unwrap().size;
    assert_eq!(v.figures.total_allocation_bytes, temporary + indefinite);
    // One band plus one block per temporary buffer, none overlapping another live at the same time.
    assert_eq!(v.blocks.len(), BUFFERS + 1);
    let mut blocks: Vec<_> = v.blocks.iter().filter(|b| b.logical_buffer_id.is_some()).collect();
    assert!(blocks.iter().all(|b| b.end_step > b.start_step && b.offset_bytes + b.size_bytes <= temporary));
    blocks.sort_by_key(|b| b.start_step);
    for (i, a) in blocks.iter().enumerate().take(2000) {
        for b in blocks[i + 1..].iter().take_while(|b| b.start_step < a.end_step) {
            let disjoint = b.offset_bytes >= a.offset_bytes + a.size_bytes || a.offset_bytes >= b.offset_bytes + b.size_bytes;
            assert!(disjoint, "{} and {} overlap", a.name, b.name);
        }
    }
    assert_eq!(v.peak_by_group.iter().map(|g| g.bytes).sum::<i64>(), v.peak_heap_bytes);
}

fn synthetic_module_checked() -> tidemark::proto::hlo::HloProto {
    let a = synthetic_hlo::synthetic_module(BUFFERS);
    assert_eq!(a, synthetic_hlo::synthetic_module(BUFFERS), "the generator must be deterministic");
    a
}
