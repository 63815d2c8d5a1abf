//! The device op db seen as framework ops (XProf's `CreateTfMetricsDbFromDeviceOpMetricsDb`): each
//! HLO op's time goes to the framework op it came from (its provenance, `name:Type`), for the device
//! rows of framework op stats and the overview's top ops.

use crate::analysis::op_metrics::{parse_tf_op_fullname, OpMetrics, OpMetricsDb, OpMetricsDbBuilder, IDLE};

/// The framework-op db of `device`: one row per framework op (HLO ops without provenance keep their
/// own name, category `Unknown`); the idle row kept when `with_idle`. Occurrences are the most of any
/// HLO op of the framework op (each HLO op runs once per framework op run); times, FLOPs and bytes sum.
/// Total time is the device's, or its op time without idle.
pub fn tf_metrics_db(device: &OpMetricsDb, with_idle: bool) -> OpMetricsDb {
    let mut db = OpMetricsDbBuilder::new();
    for m in &device.metrics {
        let (name, type_) = if m.is_idle() {
            if !with_idle {
                continue;
            }
            (IDLE, IDLE)
        } else if m.provenance.is_empty() {
            (m.name.as_str(), "")
        } else {
            let op = parse_tf_op_fullname(&m.provenance);
            (op.name, op.type_)
        };
        add(db.row(0, name), if type_.is_empty() { "Unknown" } else { type_ }, m);
    }
    let mut db = db.finish();
    db.total_op_time_ps = device.total_op_time_ps;
    db.total_time_ps = if with_idle { device.total_time_ps } else { device.total_op_time_ps };
    db
}

/// Adds one HLO op's metrics to its framework op's row (XProf's `UpdateTfOpMetricsWithDeviceOpMetrics`).
fn add(row: &mut OpMetrics, category: &str, m: &OpMetrics) {
    if row.category.is_empty() {
        row.category = category.to_string();
    }
    row.is_eager = m.is_eager;
    row.occurrences = row.occurrences.max(m.occurrences);
    row.time_ps = row.time_ps.wrapping_add(m.time_ps);
    row.self_time_ps = row.self_time_ps.wrapping_add(m.self_time_ps);
    row.flops = row.flops.wrapping_add(m.flops);
    row.flops_v2 += m.flops_v2;
    row.model_flops = row.model_flops.wrapping_add(m.model_flops);
    row.model_flops_v2 += m.model_flops_v2;
    row.bytes_accessed = row.bytes_accessed.wrapping_add(m.bytes_accessed);
    row.core_type = m.core_type;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hlo_ops_fold_into_their_framework_ops() {
        let op = |name: &str, provenance: &str, occurrences, time_ps| OpMetrics {
            name: name.into(),
            provenance: provenance.into(),
            occurrences,
            time_ps,
            self_time_ps: time_ps,
            ..OpMetrics::default()
        };
        let mut device = OpMetricsDb {
            metrics: vec![
                op("fusion.1", "model/dense/MatMul:MatMul", 3, 30),
                op("copy.2", "model/dense/MatMul:MatMul", 5, 10),
                op("copy-start", "", 1, 7),
                op("f", "jit(f)/dot_general:", 2, 4),
            ],
            total_op_time_ps: 51,
            ..OpMetricsDb::default()
        };
        device.set_total_time_ps(100);
        device.add_idle_op();
        let with_idle = tf_metrics_db(&device, true);
        let rows: Vec<(&str, &str, u64, u64)> =
            with_idle.metrics.iter().map(|m| (m.name.as_str(), m.category.as_str(), m.occurrences, m.time_ps)).collect();
        assert_eq!(
            rows,
            [
                ("model/dense/MatMul", "MatMul", 5, 40),
                ("copy-start", "Unknown", 1, 7),
                ("jit(f)/dot_general", "dot_general", 2, 4),
                ("IDLE", "IDLE", 0, 49)
            ]
        );
        assert_eq!((with_idle.total_time_ps, with_idle.total_op_time_ps), (100, 51));
        let without = tf_metrics_db(&device, false);
        assert_eq!((without.metrics.len(), without.total_time_ps), (3, 51));
    }
}
