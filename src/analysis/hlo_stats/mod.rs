//! HLO Op Stats: one row per HLO op of the device op db, longest self time first (XProf's
//! `hlo_stats` tool, `ConvertOpStatsToHloStats`). Ops that never ran (the IDLE row) are left out;
//! the shares are of the device's total time, idle included.

pub mod xprof_json;

use crate::analysis::device_ops::DeviceOps;
use crate::analysis::op_metrics::{ps_to_us, roofline, safe_divide, CoreType, OpMetrics, RooflineMetrics};

/// One row.
#[derive(Debug, Clone, PartialEq)]
pub struct HloStatsRow {
    pub rank: u64,
    pub op: OpMetrics,
    /// Self time as a fraction of the device's total time, and the running sum of those fractions.
    pub self_time_fraction: f64,
    pub cumulative_self_time_fraction: f64,
    pub roofline: RooflineMetrics,
}

impl HloStatsRow {
    /// The HLO text: the op's expression, or its name when the trace has none.
    pub fn expression(&self) -> &str {
        if self.op.long_name.is_empty() {
            &self.op.name
        } else {
            &self.op.long_name
        }
    }

    /// The instruction's name as the expression starts with it (`%name = …`).
    pub fn hlo_op_name(&self) -> &str {
        let head = self.expression().split(" = ").next().unwrap_or("");
        head.strip_prefix('%').unwrap_or(head)
    }

    /// Rematerialized: `.remat` in the instruction's name, or a framework op under `rematted_computation`.
    pub fn is_rematerialization(&self) -> bool {
        let head = self.op.long_name.split('=').next().unwrap_or("");
        head.contains(".remat") || self.op.provenance.contains("/rematted_computation/")
    }

    /// An op of TensorFlow's outside compilation (a send/receive to the host).
    pub fn is_outside_compilation(&self) -> bool {
        let p = &self.op.provenance;
        p.ends_with(":XlaSendToHost")
            || p.ends_with(":XlaRecvFromHost")
            || (self.op.long_name.contains("send-done") && self.op.long_name.contains("is_host_transfer=true"))
    }

    pub fn core_type(&self) -> &'static str {
        match self.op.core_type {
            CoreType::TensorCore => "TensorCore",
            CoreType::SparseCore => SPARSE_CORE,
            CoreType::Unknown => "",
        }
    }
}

/// The core type (XProf's `core_type` column) of the ops XProf's page shows in a table of their own.
pub const SPARSE_CORE: &str = "SparseCore";

/// HLO Op Stats of a device op db.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HloStats {
    pub rows: Vec<HloStatsRow>,
    /// Why some ops show no FLOPs or bytes: Tidemark cannot compute XProf's cost of them (see
    /// [`crate::analysis::device_ops::DeviceOps::cost_note`]); `None` when every op is costed.
    pub cost_note: Option<String>,
}

/// The rows of `ops`: sorted by self time (longest first), then name; XProf breaks remaining ties by
/// its sort, Tidemark by the db's order (cores in file order, ops by program then symbol id).
pub fn analyze(ops: &DeviceOps) -> HloStats {
    let total_us = ps_to_us(ops.db.total_time_ps);
    let mut rows = Vec::new();
    let mut cumulative = 0.0;
    for m in ops.db.sorted_by_self_time(None).into_iter().filter(|m| m.occurrences > 0) {
        let self_time_fraction = safe_divide(ps_to_us(m.self_time_ps), total_us);
        cumulative += self_time_fraction;
        rows.push(HloStatsRow {
            rank: rows.len() as u64 + 1,
            op: m.clone(),
            self_time_fraction,
            cumulative_self_time_fraction: cumulative,
            roofline: roofline::roofline_metrics(m, &ops.perf_env, ops.hardware, false),
        });
    }
    HloStats { rows, cost_note: ops.cost_note() }
}
