//! What the HLO Op Stats page draws: XProf's `hlo_stats` table as columns (one array per column,
//! rows by index, in XProf's order: longest self time first), and the figures of its summary line.

use super::{EngineError, Session};
use crate::analysis::hlo_stats::HloStats;
use crate::analysis::op_metrics::{ps_to_us, safe_divide, SourceInfo, TimeWindow};
use crate::analysis::xla_modules::XlaModules;
use serde::{Deserialize, Serialize};

/// XProf's HLO Op Stats table, column by column: entry `i` of every vector is row `i`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HloOpStatsColumns {
    pub rank: Vec<u64>,
    pub program_id: Vec<u64>,
    pub category: Vec<String>,
    pub hlo_op_name: Vec<String>,
    /// The instruction's HLO text (XProf's "HLO op text"); its name where the trace has none.
    pub expression: Vec<String>,
    /// The framework op the instruction came from (XProf's "Framework op name").
    pub framework_op: Vec<String>,
    pub occurrences: Vec<u64>,
    /// The op's module as the Memory Viewer names it (`jit_f(14)`), where the trace holds that module.
    pub memory_viewer_module: Vec<Option<String>>,
    pub total_time_us: Vec<f64>,
    pub avg_time_us: Vec<f64>,
    pub total_self_time_us: Vec<f64>,
    pub avg_self_time_us: Vec<f64>,
    /// Of the device's total time (idle included), and the running sum down the table.
    pub self_time_fraction: Vec<f64>,
    pub cumulative_self_time_fraction: Vec<f64>,
    /// Of the op's time, stalled waiting for DMA.
    pub dma_stall_fraction: Vec<f64>,
    /// GFLOP/s.
    pub model_flop_rate: Vec<f64>,
    pub normalized_flop_rate: Vec<f64>,
    /// GiB/s.
    pub measured_memory_bw: Vec<f64>,
    pub hbm_bw: Vec<f64>,
    pub cmem_read_bw: Vec<f64>,
    pub cmem_write_bw: Vec<f64>,
    /// FLOP per byte.
    pub operational_intensity: Vec<f64>,
    pub bound_by: Vec<String>,
    pub rematerialization: Vec<bool>,
    pub outside_compilation: Vec<bool>,
    pub autotuned: Vec<bool>,
    /// `file:line` of the op's source, empty when the trace has none.
    pub source: Vec<String>,
    /// `TensorCore`, `SparseCore` or empty.
    pub core_type: Vec<String>,
}

/// The page's reply: the table and its summary.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HloOpStatsView {
    pub columns: HloOpStatsColumns,
    /// Σ self time of the ops, µs.
    pub total_self_time_us: f64,
    /// That sum as a fraction of the device's total time (the rest is idle).
    pub op_time_fraction: f64,
    /// The category with the most self time and its share of the ops' self time; `None` without ops.
    pub top_category: Option<(String, f64)>,
}

impl HloOpStatsView {
    /// The rows of `stats` as columns, with the summary; `modules` names each op's module.
    pub fn of(stats: &HloStats, modules: &XlaModules) -> HloOpStatsView {
        let mut c = HloOpStatsColumns::default();
        let mut by_category: Vec<(String, f64)> = Vec::new();
        for r in &stats.rows {
            let m = &r.op;
            let (total_us, self_us, n) = (ps_to_us(m.time_ps), ps_to_us(m.self_time_ps), m.occurrences as f64);
            c.rank.push(r.rank);
            c.program_id.push(m.hlo_module_id);
            c.category.push(m.category.clone());
            c.hlo_op_name.push(r.hlo_op_name().to_string());
            c.expression.push(r.expression().to_string());
            c.framework_op.push(m.provenance.clone());
            c.occurrences.push(m.occurrences);
            c.memory_viewer_module.push(modules.xprof_name(m.hlo_module_id).map(str::to_string));
            c.total_time_us.push(total_us);
            c.avg_time_us.push(safe_divide(total_us, n));
            c.total_self_time_us.push(self_us);
            c.avg_self_time_us.push(safe_divide(self_us, n));
            c.self_time_fraction.push(r.self_time_fraction);
            c.cumulative_self_time_fraction.push(r.cumulative_self_time_fraction);
            c.dma_stall_fraction.push(safe_divide(m.dma_stall_ps as f64, m.time_ps as f64));
            c.model_flop_rate.push(r.roofline.model_flop_rate);
            c.normalized_flop_rate.push(r.roofline.measured_flop_rate);
            c.measured_memory_bw.push(r.roofline.measured_memory_bw);
            c.hbm_bw.push(r.roofline.hbm_bw);
            c.cmem_read_bw.push(r.roofline.cmem_read_bw);
            c.cmem_write_bw.push(r.roofline.cmem_write_bw);
            c.operational_intensity.push(r.roofline.operational_intensity);
            c.bound_by.push(r.roofline.bound_by.to_string());
            c.rematerialization.push(r.is_rematerialization());
            c.outside_compilation.push(r.is_outside_compilation());
            c.autotuned.push(m.autotuned);
            c.source.push(m.source_info.as_ref().and_then(SourceInfo::file_line).unwrap_or_default());
            c.core_type.push(r.core_type().to_string());
            match by_category.iter_mut().find(|(k, _)| *k == m.category) {
                Some((_, us)) => *us += self_us,
                None => by_category.push((m.category.clone(), self_us)),
            }
        }
        let total_self_time_us: f64 = c.total_self_time_us.iter().sum();
        // Most self time first; equal times by name, so the answer does not depend on row order.
        by_category.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        let top_category = by_category.into_iter().next().map(|(k, us)| (k, safe_divide(us, total_self_time_us)));
        HloOpStatsView {
            op_time_fraction: c.cumulative_self_time_fraction.last().copied().unwrap_or(0.0),
            columns: c,
            total_self_time_us,
            top_category,
        }
    }
}

impl Session {
    /// The HLO Op Stats page of `file_id`.
    pub fn hlo_op_stats_view(&mut self, file_id: u32) -> Result<HloOpStatsView, EngineError> {
        self.run_hlo_op_stats_view(&[file_id])
    }

    /// The HLO Op Stats page of the run `file_ids`, its hosts combined.
    pub fn run_hlo_op_stats_view(&mut self, file_ids: &[u32]) -> Result<HloOpStatsView, EngineError> {
        self.run_hlo_op_stats_view_in(file_ids, None)
    }

    /// The HLO Op Stats page of the run `file_ids` over the ops that start inside `window`.
    pub fn run_hlo_op_stats_view_in(&mut self, file_ids: &[u32], window: Option<TimeWindow>) -> Result<HloOpStatsView, EngineError> {
        let stats = self.run_hlo_stats_in(file_ids, window)?;
        Ok(HloOpStatsView::of(&stats, &self.run_op_metrics(file_ids)?.modules))
    }
}
