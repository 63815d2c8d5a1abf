//! A GPU's op db from its stream lines (XProf's `ConvertDeviceTraceXPlaneToOpMetricsDb`).
//!
//! A kernel or memcpy launched by a framework op (a `tf_op` stat) counts as one occurrence of the op
//! `<tf op name>/<event name>`, category its type. A kernel of an XLA op (an `hlo_op` stat whose
//! instruction the trace's modules hold) would be an HLO op, whose FLOPs and bytes XProf takes from
//! XLA's GPU cost model, which Tidemark does not have: such a trace gives
//! [`DeviceOpsError::GpuNotSupported`]. The plane's total time spans its events' offsets (as XProf
//! takes them: within their lines, not absolute).

use super::DeviceOpsError;
use crate::analysis::device_planes::is_derived_line;
use crate::analysis::op_metrics::{parse_tf_op_fullname, OpMetricsDb, OpMetricsDbBuilder, SourceInfo};
use crate::analysis::xla_modules::XlaModules;
use crate::decode::xplane::{Plane, StatValue, XSpace};

const EVENT_STATS: &[&str] = &["tf_op", "hlo_op", "program_id", "is_eager"];

pub fn device_op_metrics_db(space: &XSpace, plane: &Plane, modules: &XlaModules) -> Result<OpMetricsDb, DeviceOpsError> {
    let selection = plane.stat_selection(EVENT_STATS);
    let mut db = OpMetricsDbBuilder::new();
    let (mut first_ps, mut last_ps) = (i64::MAX, 0i64);
    let mut xla_op_seen = false;
    for line in plane.lines.iter().filter(|l| !is_derived_line(l.header.id)) {
        space.for_each_raw_event(
            line,
            &selection,
            |_| true,
            |_, event| {
                let (offset_ps, duration_ps) = (event.header.offset_ps, event.header.duration_ps);
                first_ps = first_ps.min(offset_ps);
                last_ps = last_ps.max(offset_ps.wrapping_add(duration_ps));
                let (mut tf_op, mut hlo_op, mut program_id, mut is_eager) = (None, None, None, false);
                for s in event.stats {
                    let Some(v) = plane.raw_stat_value(s)? else { continue };
                    match plane.stat_name(s.metadata_id) {
                        "tf_op" => tf_op = v.as_str().map(str::to_string),
                        "hlo_op" => hlo_op = v.as_str().and_then(|h| h.rsplit("::").next()).map(str::to_string),
                        "program_id" => program_id = v.as_i64().map(|p| p as u64),
                        "is_eager" => is_eager = matches!(v, StatValue::Int(1) | StatValue::Uint(1)),
                        _ => {}
                    }
                }
                if let Some(hlo_op) = hlo_op.filter(|h| !h.is_empty()) {
                    xla_op_seen |= program_id.is_some_and(|p| modules.instruction(p, &hlo_op).is_some());
                    return Ok(());
                }
                let Some(fullname) = tf_op.filter(|t| !t.is_empty()) else { return Ok(()) };
                let op = parse_tf_op_fullname(&fullname);
                let name = format!("{}/{}", op.name, plane.event_name(event.header.metadata_id));
                let row = db.row(0, &name);
                if row.occurrences == 0 && row.category.is_empty() && row.provenance.is_empty() {
                    row.category = if op.type_.is_empty() { "unknown".into() } else { op.type_.to_string() };
                    row.provenance = fullname.clone();
                    row.is_eager |= is_eager;
                    row.source_info = Some(SourceInfo { line_number: -1, ..SourceInfo::default() });
                }
                let time_ps = duration_ps as u64;
                row.num_cores = 1;
                row.occurrences += 1;
                row.time_ps = row.time_ps.wrapping_add(time_ps);
                row.self_time_ps = row.self_time_ps.wrapping_add(time_ps);
                db.db_mut().total_op_time_ps = db.db().total_op_time_ps.wrapping_add(time_ps);
                Ok(())
            },
        )?;
    }
    if xla_op_seen {
        return Err(DeviceOpsError::GpuNotSupported);
    }
    let mut db = db.finish();
    db.set_total_time_ps(if last_ps != 0 { last_ps.wrapping_sub(first_ps) as u64 } else { 0 });
    db.add_idle_op();
    Ok(db)
}
