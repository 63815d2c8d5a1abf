//! Warm-up: the engine run once, when the web worker starts, on a small made-up trace.
//!
//! Why: V8 first runs WebAssembly in its baseline tier and recompiles a function with its optimising
//! tier only after that function has run for a while; only later calls get the fast code. Reading a
//! trace's host plane and grouping its steps are a few long calls, so on the first file of a page most
//! of the work ran in the slow tier: in the browser benchmark (`bench/browser_memory_profile.mjs`) a
//! 3 MB trace took four times longer the first time than the second. Running the same paths once on a
//! made-up trace while the page is idle moves that cost off the user's first file.
//!
//! The trace has what the Memory Profile reads: a `/host:CPU` plane with step roots, executor events
//! joined to them by producer/consumer contexts, ops nested in the executors, and allocator events with
//! every stat, for two memory IDs.

use super::Session;
use crate::analysis::{memory_events, step_groups};
use crate::decode::wire::put_len_field;
use crate::proto::xplane as pb;
use prost::Message;

/// Steps and ops per step of the made-up trace: about 13,000 events, 1 MB, enough for V8 to optimise
/// the hot functions and small enough to take a fraction of a second in the baseline tier.
const STEPS: i64 = 32;
const OPS_PER_STEP: i64 = 100;

const EVENTS: [&str; 5] = ["train_step", "ExecutorState::Process", "MatMul", "MemoryAllocation", "MemoryDeallocation"];

/// The stats the Memory Profile reads (the step grouping's, then the allocator's), named by their
/// metadata ids 1, 2, ...
fn stat_names() -> impl Iterator<Item = &'static str> {
    step_groups::STATS.into_iter().chain(memory_events::STATS)
}

/// Stat metadata id of `name` (see [`stat_names`]).
fn stat_id(name: &str) -> i64 {
    stat_names().position(|s| s == name).expect("a known stat") as i64 + 1
}

/// Event metadata id of `name` (1-based position in [`EVENTS`]).
fn event_id(name: &str) -> i64 {
    EVENTS.iter().position(|s| *s == name).expect("a known event") as i64 + 1
}

fn int(name: &str, v: i64) -> pb::XStat {
    pb::XStat { metadata_id: stat_id(name), value: Some(pb::x_stat::Value::Int64Value(v)) }
}

fn text(name: &str, v: &str) -> pb::XStat {
    pb::XStat { metadata_id: stat_id(name), value: Some(pb::x_stat::Value::StrValue(v.into())) }
}

fn event(name: &str, begin_ps: i64, duration_ps: i64, stats: Vec<pb::XStat>) -> pb::XEvent {
    pb::XEvent { metadata_id: event_id(name), data: Some(pb::x_event::Data::OffsetPs(begin_ps)), duration_ps, stats }
}

/// The made-up trace, as XSpace bytes.
pub fn trace() -> Vec<u8> {
    const STEP_PS: i64 = 1_000_000;
    const OP_PS: i64 = STEP_PS / (OPS_PER_STEP + 2);
    let mut steps = Vec::new();
    let mut executor = Vec::new();
    let mut heap = [0i64; 2];
    for step in 0..STEPS {
        let t0 = step * STEP_PS;
        steps.push(event("train_step", t0, STEP_PS - 10, vec![int("_r", 1), int("_pt", 1), int("_p", step)]));
        executor.push(event("ExecutorState::Process", t0 + 5, STEP_PS - 20, vec![int("_ct", 1), int("_c", step)]));
        for op in 0..OPS_PER_STEP {
            let begin = t0 + 10 + op * OP_PS;
            let allocator = (op % 2) as usize;
            let size = 256 << (op % 12);
            let address = 0x7f00_0000_0000 + op * 0x10_0000 + step;
            let memory = |activity: &str, at: i64, heap: i64| {
                event(
                    activity,
                    at,
                    0,
                    vec![
                        text("allocator_name", ["bfc_cpu_allocator_for_gpu", "GPU_0_bfc"][allocator]),
                        int("bytes_reserved", 0),
                        int("bytes_allocated", heap),
                        int("bytes_available", (1 << 30) - heap),
                        pb::XStat { metadata_id: stat_id("fragmentation"), value: Some(pb::x_stat::Value::DoubleValue(0.25)) },
                        int("peak_bytes_in_use", heap.max(1 << 20)),
                        int("requested_bytes", size - 8),
                        int("allocation_bytes", size),
                        int("addr", address),
                        text("tf_op", &format!("model/layer_{}/MatMul", op % 16)),
                        text("region_type", "output"),
                        text("shape", &format!("[{},128]", op % 16 + 1)),
                    ],
                )
            };
            executor.push(event("MatMul", begin, OP_PS - 10, Vec::new()));
            heap[allocator] += size;
            executor.push(memory("MemoryAllocation", begin + 1, heap[allocator]));
            // Most ops free their output within the op; every seventh one keeps it (a slow leak).
            if op % 7 != 0 {
                heap[allocator] -= size;
                executor.push(memory("MemoryDeallocation", begin + OP_PS / 2, heap[allocator]));
            }
        }
    }
    let metadata = |names: &mut dyn Iterator<Item = &str>| -> Vec<(i64, String)> {
        names.enumerate().map(|(i, n)| (i as i64 + 1, n.to_string())).collect()
    };
    let plane = pb::XPlane {
        id: 1,
        name: crate::decode::xplane::names::HOST_PLANE.into(),
        event_metadata: metadata(&mut EVENTS.into_iter())
            .into_iter()
            .map(|(id, name)| (id, pb::XEventMetadata { id, name, ..Default::default() }))
            .collect(),
        stat_metadata: metadata(&mut stat_names())
            .into_iter()
            .map(|(id, name)| (id, pb::XStatMetadata { id, name, ..Default::default() }))
            .collect(),
        stats: Vec::new(),
    };
    let mut plane_bytes = plane.encode_to_vec();
    for (id, (name, events)) in [("steps", steps), ("executor", executor)].into_iter().enumerate() {
        let mut line = pb::XLine { id: id as i64, name: name.into(), ..Default::default() }.encode_to_vec();
        line.extend(pb::XLineEvents { events }.encode_to_vec());
        put_len_field(&mut plane_bytes, 3, &line);
    }
    let mut space = Vec::new();
    put_len_field(&mut space, 1, &plane_bytes);
    space
}

/// Opens the made-up trace in a session of its own and asks for what the page asks for on a first
/// file; the results are dropped.
pub fn run() {
    let mut session = Session::new();
    let Ok(id) = session.open("warm-up.xplane.pb", trace(), &mut |_, _| {}).map(|f| f.id) else { return };
    if let Ok(view) = session.memory_profile_view(id, None) {
        for memory_id in &view.memory_ids {
            let _ = session.memory_profile_view(id, Some(memory_id));
            let _ = session.memory_timeline_window(id, memory_id, 0, STEPS * 1_000_000 / 2, 2000);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The made-up trace exercises what it is meant to: both memory IDs, grouped steps, a breakdown.
    #[test]
    fn the_trace_has_what_the_memory_profile_reads() {
        let mut session = Session::new();
        let id = session.open("warm-up.xplane.pb", trace(), &mut |_, _| {}).unwrap().id;
        let profile = session.take_memory_profile(id).unwrap();
        assert_eq!(profile.memory_ids().collect::<Vec<_>>(), ["GPU_0_bfc", "bfc_cpu_allocator_for_gpu"]);
        for a in &profile.allocators {
            let ops = (0..OPS_PER_STEP).filter(|op| a.memory_id == ["bfc_cpu_allocator_for_gpu", "GPU_0_bfc"][(op % 2) as usize]);
            let kept = ops.clone().filter(|op| op % 7 == 0).count() as u64;
            let allocations = ops.count() as u64 * STEPS as u64;
            assert_eq!((a.counts.allocations, a.counts.deallocations), (allocations, allocations - kept * STEPS as u64));
            let steps: std::collections::BTreeSet<i64> = a.snapshots.iter().map(|s| s.activity.step_id).collect();
            assert_eq!(steps.len() as i64, STEPS, "{}: one group per step", a.memory_id);
            assert!(!a.breakdown.is_empty());
        }
        run();
    }
}
