//! What the Framework Op Stats page draws: one of XProf's two tables (with or without the `IDLE`
//! rows) and, per side, the self time grouped by op type (XProf's two pie charts).

use super::{EngineError, Scope, Session};
use crate::analysis::framework_op_stats::{FrameworkOpRow, FrameworkOpTable};
use crate::fast_hash::FastMap;
use serde::{Deserialize, Serialize};

/// The page's reply.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FrameworkOpStatsView {
    /// XProf's table with the `IDLE` rows (shares of total time) or without them (shares of op time).
    pub table: FrameworkOpTable,
    pub include_idle: bool,
    /// The run environment's device type (`CPU`, `GPU`, `TPU v6 lite`).
    pub device_type: String,
    /// Self time of the device rows by op type, largest first.
    pub device_by_type: Vec<TypeSelfTime>,
    /// Self time of the host rows by op type, largest first.
    pub host_by_type: Vec<TypeSelfTime>,
    /// Σ self time of the table's device rows and of its host rows (`IDLE` included when the table has
    /// it), µs: the page's totals.
    pub device_self_time_us: f64,
    pub host_self_time_us: f64,
}

/// One slice of a self-time pie chart: the self time of one group of rows (an op type here; an HLO
/// category or op on the HLO Op Stats page).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TypeSelfTime {
    /// The group's name.
    pub op_type: String,
    pub self_time_us: f64,
    /// Of the self time of all the chart's rows.
    pub fraction: f64,
}

impl Session {
    /// The Framework Op Stats page of `scope` (a run's hosts combined as XProf combines them: the page's
    /// "all hosts"), with the `IDLE` rows when `include_idle`.
    pub fn framework_op_stats_view(&mut self, scope: &Scope, include_idle: bool) -> Result<FrameworkOpStatsView, EngineError> {
        let stats = self.framework_op_stats(scope)?;
        let table = if include_idle { stats.with_idle } else { stats.without_idle };
        let self_time_us = |on_device: bool| table.rows.iter().filter(|r| r.on_device == on_device).map(|r| r.total_self_time_us).sum();
        Ok(FrameworkOpStatsView {
            device_by_type: self_time_by_type(table.rows.iter().filter(|r| r.on_device)),
            host_by_type: self_time_by_type(table.rows.iter().filter(|r| !r.on_device)),
            device_self_time_us: self_time_us(true),
            host_self_time_us: self_time_us(false),
            table,
            include_idle,
            device_type: stats.device_type,
        })
    }
}

/// Sums `rows`' self time per op type ([`self_time_by`]).
fn self_time_by_type<'a>(rows: impl Iterator<Item = &'a FrameworkOpRow>) -> Vec<TypeSelfTime> {
    self_time_by(rows.map(|r| (r.op_type.as_str(), r.total_self_time_us)))
}

/// Sums the self times (µs) of `(group, self time)` items per group, as XProf's pie charts group a
/// table's rows: largest first, equal times by group name (so the order does not depend on the rows'
/// order).
pub fn self_time_by<'a>(items: impl Iterator<Item = (&'a str, f64)>) -> Vec<TypeSelfTime> {
    let mut index: FastMap<&str, usize> = FastMap::default();
    let mut by_type: Vec<TypeSelfTime> = Vec::new();
    for (group, self_us) in items {
        let i = *index.entry(group).or_insert_with(|| {
            by_type.push(TypeSelfTime { op_type: group.to_string(), self_time_us: 0.0, fraction: 0.0 });
            by_type.len() - 1
        });
        by_type[i].self_time_us += self_us;
    }
    let total: f64 = by_type.iter().map(|t| t.self_time_us).sum();
    for t in &mut by_type {
        t.fraction = if total > 0.0 { t.self_time_us / total } else { 0.0 };
    }
    by_type.sort_by(|a, b| b.self_time_us.total_cmp(&a.self_time_us).then_with(|| a.op_type.cmp(&b.op_type)));
    by_type
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(op_type: &str, self_us: f64) -> FrameworkOpRow {
        FrameworkOpRow { op_type: op_type.into(), total_self_time_us: self_us, ..FrameworkOpRow::default() }
    }

    #[test]
    fn groups_by_type_largest_first_ties_by_name() {
        let rows = [row("MatMul", 2.0), row("Add", 1.0), row("MatMul", 3.0), row("Conv", 1.0)];
        let got = self_time_by_type(rows.iter());
        let names: Vec<&str> = got.iter().map(|t| t.op_type.as_str()).collect();
        assert_eq!(names, ["MatMul", "Add", "Conv"]);
        assert_eq!(got[0].self_time_us, 5.0);
        assert!((got[0].fraction - 5.0 / 7.0).abs() < 1e-12);
        assert!(self_time_by_type([].iter()).is_empty());
    }
}
