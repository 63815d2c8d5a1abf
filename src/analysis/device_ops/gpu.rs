//! A GPU's op db from its stream lines (XProf's `ConvertDeviceTraceXPlaneToOpMetricsDb`).
//!
//! A kernel or memcpy launched by a framework op (a `tf_op` stat) counts as one occurrence of the op
//! `<tf op name>/<event name>`, category its type. A kernel of an XLA op (an `hlo_op` stat whose
//! instruction the trace's modules hold) would be an HLO op, whose FLOPs and bytes XProf takes from
//! XLA's GPU cost model, which Tidemark does not have: such a trace gives
//! [`DeviceOpsError::GpuNotSupported`]. The plane's total time spans its events' offsets (as XProf
//! takes them: within their lines, not absolute).

use super::DeviceOpsError;
use crate::analysis::gpu_events;
use crate::analysis::op_metrics::{parse_tf_op_fullname, OpMetricsDb, OpMetricsDbBuilder, SourceInfo};
use crate::analysis::xla_modules::XlaModules;
use crate::decode::xplane::{Plane, XSpace};

pub fn device_op_metrics_db(space: &XSpace, plane: &Plane, modules: &XlaModules) -> Result<OpMetricsDb, DeviceOpsError> {
    let mut db = OpMetricsDbBuilder::new();
    let (mut first_ps, mut last_ps) = (i64::MAX, 0i64);
    let mut xla_op_seen = false;
    gpu_events::for_each_event(space, plane, |event, stats| {
        let (offset_ps, duration_ps) = (event.header.offset_ps, event.header.duration_ps);
        first_ps = first_ps.min(offset_ps);
        last_ps = last_ps.max(offset_ps.wrapping_add(duration_ps));
        if !stats.hlo_op.is_empty() {
            xla_op_seen |= stats.program_id.is_some_and(|p| modules.instruction(p, &stats.hlo_op).is_some());
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
        let time_ps = duration_ps as u64;
        row.num_cores = 1;
        row.occurrences += 1;
        row.time_ps = row.time_ps.wrapping_add(time_ps);
        row.self_time_ps = row.self_time_ps.wrapping_add(time_ps);
        db.db_mut().total_op_time_ps = db.db().total_op_time_ps.wrapping_add(time_ps);
    })?;
    if xla_op_seen {
        return Err(DeviceOpsError::GpuNotSupported);
    }
    let mut db = db.finish();
    db.set_total_time_ps(if last_ps != 0 { last_ps.wrapping_sub(first_ps) as u64 } else { 0 });
    db.add_idle_op();
    Ok(db)
}
