//! A TPU core's op db from its `XLA Ops` line (XProf's `ConvertTensorCoreDeviceTraceXPlaneToOpMetricsDb`).
//!
//! Each op event spans its device time (`device_offset_ps` / `device_duration_ps` where present);
//! events nest (a fusion's children inside it, a while loop's body inside the loop), and an op's
//! self time is its time minus the time of the events directly inside it. Occurrences of one
//! (program, symbol) merge; the root symbol (0) and events without ids are left out. The core's
//! total time spans its first to its last op (or step). Limited to a [`TimeWindow`], only the events
//! whose device time starts inside it are read.

use super::metadata::{op_key, set_op_metadata, OpKey};
use crate::analysis::op_metrics::window::starts_in;
use crate::analysis::op_metrics::{CoreType, OpMetrics, OpMetricsDb, TimeWindow};
use crate::decode::xplane::names::{SPARSE_CORE_STEPS_LINE, SPARSE_CORE_XLA_OPS_LINE, STEPS_LINE, TENSORFLOW_OPS_LINE, XLA_OPS_LINE};
use crate::decode::xplane::{Plane, StatValue, XSpace};
use crate::decode::DecodeError;
use std::collections::{BTreeMap, HashMap};

/// Lines whose events are ops.
const OP_LINES: &[&str] = &[XLA_OPS_LINE, TENSORFLOW_OPS_LINE, SPARSE_CORE_XLA_OPS_LINE];
/// Lines whose events are steps (they count towards the core's span).
pub const STEP_LINES: &[&str] = &[STEPS_LINE, SPARSE_CORE_STEPS_LINE];
const ROOT_SYMBOL_ID: u64 = 0;
const CUSTOM_CALL: &str = "custom-call";

/// The stats of an op event that the db reads.
const EVENT_STATS: &[&str] = &[
    "device_offset_ps",
    "device_duration_ps",
    "self_duration_ps",
    "min_duration_ps",
    "dma_stall_duration_ps",
    "time_scale_multiplier",
    "vdd_energy_j",
    "bytes_accessed",
    "model_flops",
    "flops",
];

/// One op event as read: its metadata, spans and stats.
#[derive(Debug, Clone, Default)]
struct OpEvent {
    metadata_id: i64,
    /// Device time span, ps.
    begin_ps: u64,
    end_ps: u64,
    /// The event's own duration (not the device's), ps.
    duration_ps: u64,
    self_duration_ps: Option<u64>,
    min_duration_ps: Option<u64>,
    dma_stall_ps: u64,
    time_scale_multiplier: Option<f64>,
    vdd_energy_j: Option<f64>,
    /// A custom call's own FLOPs and bytes, from the event.
    bytes_accessed: u64,
    model_flops: u64,
    flops: u64,
    children_ps: u64,
}

impl OpEvent {
    fn includes(&self, other: &OpEvent) -> bool {
        self.begin_ps <= other.begin_ps && other.end_ps <= self.end_ps
    }
}

pub fn core_op_metrics_db(space: &XSpace, plane: &Plane, window: Option<TimeWindow>) -> Result<OpMetricsDb, DecodeError> {
    let selection = plane.stat_selection(EVENT_STATS);
    let mut merged: BTreeMap<(u64, u64), OpMetrics> = BTreeMap::new();
    let mut templates = Templates::new();
    let (mut first_ps, mut last_ps) = (u64::MAX, 0u64);
    for line in &plane.lines {
        let is_op_line = OP_LINES.contains(&line.header.name.as_str());
        if !is_op_line && !STEP_LINES.contains(&line.header.name.as_str()) {
            continue;
        }
        let line_start_ps = (line.header.timestamp_ns as u64).wrapping_mul(1000);
        let mut stack: Vec<OpEvent> = Vec::new();
        space.for_each_raw_event(
            line,
            &selection,
            |_| true,
            |_, raw| {
                let mut e =
                    OpEvent { metadata_id: raw.header.metadata_id, duration_ps: raw.header.duration_ps as u64, ..OpEvent::default() };
                let (mut device_offset, mut device_duration) = (None, None);
                for s in raw.stats {
                    let Some(v) = plane.raw_stat_value(s)? else { continue };
                    let int = || v.as_i64().map(|i| i as u64);
                    let double = || match v {
                        StatValue::Double(d) => Some(d),
                        _ => None,
                    };
                    match plane.stat_name(s.metadata_id) {
                        "device_offset_ps" => device_offset = int(),
                        "device_duration_ps" => device_duration = int(),
                        "self_duration_ps" => e.self_duration_ps = int(),
                        "min_duration_ps" => e.min_duration_ps = int(),
                        "dma_stall_duration_ps" => e.dma_stall_ps = int().unwrap_or(0),
                        "time_scale_multiplier" => e.time_scale_multiplier = double(),
                        "vdd_energy_j" => e.vdd_energy_j = Some(e.vdd_energy_j.unwrap_or(0.0) + double().unwrap_or(0.0)),
                        "bytes_accessed" => e.bytes_accessed = int().unwrap_or(0),
                        "model_flops" => e.model_flops = int().unwrap_or(0),
                        "flops" => e.flops = int().unwrap_or(0),
                        _ => {}
                    }
                }
                (e.begin_ps, e.end_ps) = match (device_offset, device_duration) {
                    (Some(o), Some(d)) => (o, o.wrapping_add(d)),
                    _ => {
                        let b = line_start_ps.wrapping_add(raw.header.offset_ps as u64);
                        (b, b.wrapping_add(e.duration_ps))
                    }
                };
                if !starts_in(window, e.begin_ps as i64) {
                    return Ok(());
                }
                first_ps = first_ps.min(e.begin_ps);
                last_ps = last_ps.max(e.end_ps);
                if is_op_line {
                    while stack.last().is_some_and(|top| !top.includes(&e)) {
                        let done = stack.pop().expect("checked");
                        add_op(plane, &done, &mut templates, &mut merged);
                    }
                    if let Some(parent) = stack.last_mut() {
                        parent.children_ps = parent.children_ps.wrapping_add(e.end_ps.wrapping_sub(e.begin_ps));
                    }
                    stack.push(e);
                }
                Ok(())
            },
        )?;
        while let Some(done) = stack.pop() {
            add_op(plane, &done, &mut templates, &mut merged);
        }
    }
    let mut db = OpMetricsDb::default();
    for (_, mut m) in merged {
        scale_by_occurrences(&mut m);
        db.total_op_time_ps = db.total_op_time_ps.wrapping_add(m.self_time_ps);
        let normalized = m.self_time_ps as f64 * crate::analysis::op_metrics::safe_divide(m.normalized_time_ps as f64, m.time_ps as f64);
        db.normalized_total_op_time_ps = db.normalized_total_op_time_ps.wrapping_add(normalized as u64);
        db.metrics.push(m);
    }
    db.set_total_time_ps(last_ps.saturating_sub(if first_ps == u64::MAX { last_ps } else { first_ps }));
    db.add_idle_op();
    Ok(db)
}

/// Each event metadata's op row before any occurrence (its key and what [`set_op_metadata`] reads
/// from the metadata), or `None` for events that are not counted (no ids, the root symbol, unknown
/// metadata). Built once per metadata id: resolving the metadata's stats for every event was most of
/// the db's time on a TPU trace, whose thousands of events share a few hundred metadata.
type Templates = HashMap<i64, Option<((u64, u64), OpMetrics)>>;

/// The op row of event metadata `metadata_id` before any occurrence (see [`Templates`]).
fn template(plane: &Plane, metadata_id: i64) -> Option<((u64, u64), OpMetrics)> {
    let meta = plane.meta.event_metadata.get(&metadata_id)?;
    let OpKey { program_id: Some(program_id), symbol_id: Some(symbol_id) } = op_key(plane, meta) else { return None };
    if symbol_id == ROOT_SYMBOL_ID {
        return None;
    }
    let mut m = OpMetrics { num_cores: 1, core_type: CoreType::TensorCore, ..OpMetrics::default() };
    set_op_metadata(plane, meta, &mut m);
    Some(((program_id, symbol_id), m))
}

/// One occurrence's FLOPs and bytes: the metadata's, plus a custom call's own from its event.
struct Work {
    flops: u64,
    model_flops: u64,
    flops_v2: f64,
    model_flops_v2: f64,
    bytes_accessed: u64,
}

impl Work {
    fn of(template: &OpMetrics, e: &OpEvent) -> Self {
        let mut w = Work {
            flops: template.flops,
            model_flops: template.model_flops,
            flops_v2: template.flops_v2,
            model_flops_v2: template.model_flops_v2,
            bytes_accessed: template.bytes_accessed,
        };
        if template.category == CUSTOM_CALL {
            w.bytes_accessed = w.bytes_accessed.wrapping_add(e.bytes_accessed);
            w.model_flops = w.model_flops.wrapping_add(e.model_flops);
            w.model_flops_v2 += e.model_flops as f64;
            w.flops = w.flops.wrapping_add(e.flops);
            w.flops_v2 += e.flops as f64;
        }
        w
    }
}

/// Merges one finished op event into its (program, symbol) row (XProf's `FromXEvent` + `MergeOpMetrics`).
fn add_op(plane: &Plane, e: &OpEvent, templates: &mut Templates, merged: &mut BTreeMap<(u64, u64), OpMetrics>) {
    let Some((key, template)) = templates.entry(e.metadata_id).or_insert_with(|| template(plane, e.metadata_id)) else { return };
    let time_ps = e.end_ps.wrapping_sub(e.begin_ps);
    let min_time_ps = e.min_duration_ps.unwrap_or(e.duration_ps);
    let self_time_ps = time_ps.wrapping_sub(e.children_ps);
    let normalized_time_ps = (time_ps as f64 * e.time_scale_multiplier.unwrap_or(1.0)) as u64;
    let work = Work::of(template, e);
    let dst = merged.entry(*key).or_default();
    if dst.occurrences == 0 {
        *dst = OpMetrics {
            occurrences: 1,
            time_ps,
            min_time_ps,
            self_time_ps,
            normalized_time_ps,
            dma_stall_ps: e.dma_stall_ps,
            vdd_energy_j: e.vdd_energy_j,
            flops: work.flops,
            model_flops: work.model_flops,
            flops_v2: work.flops_v2,
            model_flops_v2: work.model_flops_v2,
            bytes_accessed: work.bytes_accessed,
            ..template.clone()
        };
        return;
    }
    dst.occurrences += 1;
    dst.time_ps = dst.time_ps.wrapping_add(time_ps);
    dst.min_time_ps = dst.min_time_ps.min(min_time_ps);
    dst.self_time_ps = dst.self_time_ps.wrapping_add(self_time_ps);
    dst.dma_stall_ps = dst.dma_stall_ps.wrapping_add(e.dma_stall_ps);
    dst.normalized_time_ps = dst.normalized_time_ps.wrapping_add(normalized_time_ps);
    dst.core_type = CoreType::TensorCore;
    if e.vdd_energy_j.is_some() || dst.vdd_energy_j.is_some() {
        dst.vdd_energy_j = Some(dst.vdd_energy_j.unwrap_or(0.0) + e.vdd_energy_j.unwrap_or(0.0));
    }
    if dst.category == CUSTOM_CALL {
        dst.flops = dst.flops.wrapping_add(work.flops);
        dst.model_flops = dst.model_flops.wrapping_add(work.model_flops);
        dst.flops_v2 += work.flops_v2;
        dst.model_flops_v2 += work.model_flops_v2;
        dst.bytes_accessed = dst.bytes_accessed.wrapping_add(work.bytes_accessed);
    }
}

/// The metadata's FLOPs and bytes are per occurrence; the db holds totals (XProf's
/// `AdjustFlopsAndBytesAccessed`). A custom call's were summed per event already.
fn scale_by_occurrences(m: &mut OpMetrics) {
    let n = m.occurrences;
    if m.category != CUSTOM_CALL {
        m.flops = m.flops.wrapping_mul(n);
        m.flops_v2 *= n as f64;
        if m.model_flops > 0 {
            m.model_flops = m.model_flops.wrapping_mul(n);
            m.model_flops_v2 *= n as f64;
        } else {
            m.model_flops = m.flops;
            m.model_flops_v2 = m.flops_v2;
        }
        m.bytes_accessed = m.bytes_accessed.wrapping_mul(n);
    }
    for a in &mut m.memory_accessed_breakdown {
        a.bytes_accessed = a.bytes_accessed.wrapping_mul(n);
    }
}
