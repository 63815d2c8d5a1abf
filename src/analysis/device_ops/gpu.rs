//! A GPU's op db from its stream lines (XProf's `ConvertDeviceTraceXPlaneToOpMetricsDb`).
//!
//! A kernel of an XLA op (an `hlo_op` stat naming an instruction of the trace's module `program_id`)
//! counts as one occurrence of that HLO op, with the FLOPs and bytes XLA's GPU cost analysis gives the
//! instruction ([`crate::analysis::gpu_cost`]; where it gives none, those the event carries; where
//! Tidemark cannot compute XProf's, none either, and the op is listed as [`UncostedOp`]). A
//! kernel or memcpy launched by a framework op (a `tf_op` stat) counts as one occurrence of the op
//! `<tf op name>/<event name>`, category its type. The plane's total time spans its events' offsets
//! (as XProf takes them: within their lines, not absolute). Limited to a [`TimeWindow`], only the
//! events whose absolute start (line start plus offset) lies inside it are read.

use super::UncostedOp;
use crate::analysis::device_planes::is_derived_line;
use crate::analysis::gpu_cost::CostError;
use crate::analysis::gpu_events::{self, GpuEventStats};
use crate::analysis::op_metrics::builder::add_memory_accessed;
use crate::analysis::op_metrics::window::starts_in;
use crate::analysis::op_metrics::{
    memory_space, parse_tf_op_fullname, MemoryAccessed, MemoryOperation, OpMetrics, OpMetricsDb, OpMetricsDbBuilder, SourceInfo, TimeWindow,
};
use crate::analysis::xla_modules::{XlaInstruction, XlaModules};
use crate::decode::xplane::{Plane, XSpace};

pub fn device_op_metrics_db(
    space: &XSpace,
    plane: &Plane,
    modules: &XlaModules,
    window: Option<TimeWindow>,
    uncosted: &mut Vec<UncostedOp>,
) -> Result<OpMetricsDb, crate::decode::DecodeError> {
    let mut db = OpMetricsDbBuilder::new();
    let (mut first_ps, mut last_ps) = (i64::MAX, 0i64);
    for line in plane.lines.iter().filter(|l| !is_derived_line(l.header.id)) {
        let line_start_ps = line.header.timestamp_ns.saturating_mul(1000);
        gpu_events::for_each_line_event(space, plane, line, |event, stats| {
            let (offset_ps, duration_ps) = (event.header.offset_ps, event.header.duration_ps);
            if !starts_in(window, line_start_ps.saturating_add(offset_ps)) {
                return;
            }
            first_ps = first_ps.min(offset_ps);
            last_ps = last_ps.max(offset_ps.wrapping_add(duration_ps));
            let time_ps = duration_ps as u64;
            if !stats.hlo_op.is_empty() {
                let Some(program_id) = stats.program_id else { return };
                let Some(instruction) = modules.instruction(program_id, &stats.hlo_op) else { return };
                if let Err(reason) = enter_hlo_op(&mut db, program_id, &stats, instruction, time_ps) {
                    uncosted.push(UncostedOp { program_id, instruction: stats.hlo_op.clone(), reason });
                }
                return;
            }
            if stats.tf_op.is_empty() {
                return;
            }
            let op = parse_tf_op_fullname(&stats.tf_op);
            let name = format!("{}/{}", op.name, plane.event_name(event.header.metadata_id));
            let row = db.row(0, &name);
            if row.occurrences == 0 && row.category.is_empty() && row.provenance.is_empty() {
                row.category = if op.type_.is_empty() { "unknown".into() } else { op.type_.to_string() };
                row.provenance = stats.tf_op.clone();
                row.is_eager |= stats.is_eager;
                row.source_info = Some(SourceInfo { line_number: -1, ..SourceInfo::default() });
            }
            count(row, time_ps);
            db.db_mut().total_op_time_ps = db.db().total_op_time_ps.wrapping_add(time_ps);
        })?;
    }
    let mut db = db.finish();
    db.set_total_time_ps(if last_ps != 0 { last_ps.wrapping_sub(first_ps) as u64 } else { 0 });
    db.add_idle_op();
    Ok(db)
}

/// One occurrence of one time and no children.
fn count(row: &mut OpMetrics, time_ps: u64) {
    row.num_cores = 1;
    row.occurrences += 1;
    row.time_ps = row.time_ps.wrapping_add(time_ps);
    row.self_time_ps = row.self_time_ps.wrapping_add(time_ps);
}

/// One kernel of HLO op `stats.hlo_op` (XProf's `DeviceOpMetricsDbBuilder::EnterOp` for one
/// occurrence): the instruction's description on the row's first occurrence, then its time, FLOPs and
/// bytes added. An instruction whose cost Tidemark cannot compute is entered as one without a cost
/// (the event's own figures), and the reason given back.
fn enter_hlo_op(
    db: &mut OpMetricsDbBuilder,
    program_id: u64,
    stats: &GpuEventStats,
    instruction: &XlaInstruction,
    time_ps: u64,
) -> Result<(), CostError> {
    let row = db.row(program_id, &stats.hlo_op);
    if row.occurrences == 0 && row.category.is_empty() && row.provenance.is_empty() {
        row.category = instruction.category.clone();
        // An instruction without framework-op metadata has no provenance (XProf's GPU rows show "").
        row.provenance = if instruction.tf_op_name == ":" { String::new() } else { instruction.tf_op_name.clone() };
        row.is_eager |= stats.is_eager;
        row.long_name = instruction.expression.clone();
        row.deduplicated_name = instruction.deduplicated_name.clone();
        row.source_info = Some(match &instruction.source_info {
            // XProf's op metrics end every frame of the stack with a newline.
            Some(s) => SourceInfo {
                file_name: s.file_name.clone(),
                line_number: s.line_number,
                stack_frame: if s.stack_frame.is_empty() { String::new() } else { format!("{}\n", s.stack_frame) },
            },
            None => SourceInfo { line_number: -1, ..SourceInfo::default() },
        });
    }
    count(row, time_ps);
    let cost = instruction.gpu_cost.clone().unwrap_or_default().unwrap_or_default();
    let positive = |v: i64, fallback: u64| if v > 0 { v as u64 } else { fallback };
    let flops = positive(cost.device_flops, stats.flops);
    let model_flops = positive(cost.model_flops, stats.flops);
    row.flops = row.flops.wrapping_add(flops);
    row.flops_v2 += flops as f64;
    if model_flops == 0 {
        row.model_flops = row.flops;
        row.model_flops_v2 = row.flops_v2;
    } else {
        row.model_flops = row.model_flops.wrapping_add(model_flops);
        row.model_flops_v2 += model_flops as f64;
    }
    row.bytes_accessed = row.bytes_accessed.wrapping_add(positive(cost.bytes_accessed, stats.bytes_accessed));
    let breakdown: Vec<MemoryAccessed> = [(MemoryOperation::Read, cost.hbm_read_bytes), (MemoryOperation::Write, cost.hbm_write_bytes)]
        .into_iter()
        .filter(|&(_, bytes)| bytes > 0)
        .map(|(operation_type, bytes)| MemoryAccessed { operation_type, memory_space: memory_space::HBM, bytes_accessed: bytes as u64 })
        .collect();
    add_memory_accessed(&breakdown, &mut row.memory_accessed_breakdown);
    db.db_mut().total_op_time_ps = db.db().total_op_time_ps.wrapping_add(time_ps);
    instruction.gpu_cost.clone().map(|_| ())
}
