//! What the HLO Op Stats page draws: XProf's `hlo_stats` table as columns (one array per column,
//! rows by index, in XProf's order: longest self time first), the figures of its summary line, and
//! the self time its pie charts group ([`HloCharts`]).

use super::framework_op_stats::{self_time_by, TypeSelfTime};
use super::{EngineError, Scope, Session};
use crate::analysis::hlo_stats::{HloStats, SPARSE_CORE};
use crate::analysis::op_metrics::{ps_to_us, safe_divide, SourceInfo};
use crate::analysis::xla_modules::XlaModules;
use serde::{Deserialize, Serialize};

/// XProf's HLO Op Stats table, column by column: entry `i` of every vector is row `i`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HloStatsColumns {
    pub rank: Vec<u64>,
    pub program_id: Vec<u64>,
    pub category: Vec<String>,
    pub hlo_op_name: Vec<String>,
    /// The instruction's HLO text (XProf's "HLO op text"); its name where the trace has none.
    pub expression: Vec<String>,
    /// The framework op the instruction came from (XProf's "Framework op name").
    pub framework_op: Vec<String>,
    pub occurrences: Vec<u64>,
    /// The op's module as the Memory Viewer names it (`jit_f(14)`), where the trace holds that module
    /// and the op is one of its instructions.
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
pub struct HloStatsView {
    pub columns: HloStatsColumns,
    /// Σ self time of the ops, µs.
    pub total_self_time_us: f64,
    /// That sum as a fraction of the device's total time (the rest is idle).
    pub op_time_fraction: f64,
    /// The category with the most self time and its share of the ops' self time; `None` without ops.
    pub top_category: Option<(String, f64)>,
    pub charts: HloCharts,
    /// Why some ops show no FLOPs or bytes (Tidemark cannot compute XProf's cost of them); `None` when
    /// every op is costed.
    pub cost_note: Option<String>,
}

/// The self time XProf's HLO Op Stats pie charts show, each grouping the table's rows by one column
/// and summing their self time: largest group first, equal times by name, and, as XProf's charts draw
/// them (`sliceVisibilityThreshold` 0.01), the groups under 1 % of the chart's whole merged into one
/// [`OTHER`] slice at the end.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HloCharts {
    /// "Time per HLO category".
    pub by_category: Vec<TypeSelfTime>,
    /// "Time per HLO operation", by the op's HLO text (XProf groups by its "HLO op text" column).
    pub by_op: Vec<TypeSelfTime>,
    /// "Time spent on rematerialization": `Yes` / `No` (XProf draws nothing where all ops are one).
    pub rematerialization: Vec<TypeSelfTime>,
    /// "Time spent on rematerialization per HLO category": the rematerialized ops by category.
    pub rematerialization_by_category: Vec<TypeSelfTime>,
    /// "Time spent on outside compilation": `Yes` / `No` (XProf draws nothing where all ops are one).
    pub outside_compilation: Vec<TypeSelfTime>,
}

/// The slice XProf's pie charts merge their small groups into.
pub const OTHER: &str = "Other";
/// Groups under this share of a chart are merged into [`OTHER`].
const SLICE_VISIBILITY_THRESHOLD: f64 = 0.01;

impl HloCharts {
    /// The charts of the table `c`: its TensorCore rows (XProf's charts leave SparseCore ops out, as
    /// its page shows them in a table of their own).
    fn of(c: &HloStatsColumns) -> HloCharts {
        let yes_no = |flag: bool| if flag { "Yes" } else { "No" };
        HloCharts {
            by_category: chart(c, |i| Some(&c.category[i])),
            by_op: chart(c, |i| Some(&c.expression[i])),
            rematerialization: chart(c, |i| Some(yes_no(c.rematerialization[i]))),
            rematerialization_by_category: chart(c, |i| c.rematerialization[i].then_some(c.category[i].as_str())),
            outside_compilation: chart(c, |i| Some(yes_no(c.outside_compilation[i]))),
        }
    }
}

/// One pie of [`HloCharts`]: the self time of `c`'s TensorCore rows by `group` (rows without one are
/// left out), small groups merged.
fn chart<'c>(c: &'c HloStatsColumns, group: impl Fn(usize) -> Option<&'c str>) -> Vec<TypeSelfTime> {
    let rows = (0..c.total_self_time_us.len()).filter(|&i| c.core_type[i] != SPARSE_CORE);
    merge_small(self_time_by(rows.filter_map(|i| group(i).map(|g| (g, c.total_self_time_us[i])))))
}

/// `groups` (largest first) with those under [`SLICE_VISIBILITY_THRESHOLD`] of the whole merged into
/// one [`OTHER`] group at the end (none when no group is that small).
fn merge_small(mut groups: Vec<TypeSelfTime>) -> Vec<TypeSelfTime> {
    let total: f64 = groups.iter().map(|g| g.self_time_us).sum();
    if total <= 0.0 {
        return groups;
    }
    let small = groups.iter().position(|g| g.self_time_us / total < SLICE_VISIBILITY_THRESHOLD).unwrap_or(groups.len());
    let rest = groups.split_off(small);
    if !rest.is_empty() {
        let self_time_us: f64 = rest.iter().map(|g| g.self_time_us).sum();
        groups.push(TypeSelfTime { op_type: OTHER.to_string(), self_time_us, fraction: self_time_us / total });
    }
    groups
}

impl HloStatsView {
    /// The rows of `stats` as columns, with the summary; `modules` names each op's module.
    pub fn of(stats: &HloStats, modules: &XlaModules) -> HloStatsView {
        let mut c = HloStatsColumns::default();
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
            c.memory_viewer_module.push(modules.xprof_name_holding(m.hlo_module_id, r.hlo_op_name()).map(str::to_string));
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
        }
        let total_self_time_us: f64 = c.total_self_time_us.iter().sum();
        // Most self time first; equal times by name, so the answer does not depend on row order.
        let by_category = self_time_by(c.category.iter().map(String::as_str).zip(c.total_self_time_us.iter().copied()));
        let top_category = by_category.into_iter().next().map(|t| (t.op_type, t.fraction));
        HloStatsView {
            op_time_fraction: c.cumulative_self_time_fraction.last().copied().unwrap_or(0.0),
            charts: HloCharts::of(&c),
            columns: c,
            total_self_time_us,
            top_category,
            cost_note: stats.cost_note.clone(),
        }
    }
}

impl Session {
    /// The HLO Op Stats page of `scope`, its ops joined with the whole run's modules.
    pub fn hlo_stats_view(&mut self, scope: &Scope) -> Result<HloStatsView, EngineError> {
        let stats = self.hlo_stats(scope)?;
        Ok(HloStatsView::of(&stats, &self.op_metrics(&Scope::run(&scope.file_ids))?.modules))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(name: &str, self_time_us: f64) -> TypeSelfTime {
        TypeSelfTime { op_type: name.into(), self_time_us, fraction: self_time_us / 1000.0 }
    }

    #[test]
    fn groups_under_one_percent_become_other_at_the_end() {
        let merged = merge_small(vec![group("a", 900.0), group("b", 90.0), group("c", 9.0), group("d", 1.0)]);
        let names: Vec<&str> = merged.iter().map(|g| g.op_type.as_str()).collect();
        assert_eq!(names, ["a", "b", OTHER]);
        assert_eq!((merged[2].self_time_us, merged[2].fraction), (10.0, 0.01));
        // Nothing small: nothing merged; no time: nothing to share.
        assert_eq!(merge_small(vec![group("a", 500.0), group("b", 500.0)]).len(), 2);
        assert_eq!(merge_small(vec![group("a", 0.0)]), vec![group("a", 0.0)]);
    }
}
