//! Building an [`OpMetricsDb`] row by row: each (`hlo_module_id`, `name`) gets one row, created the first
//! time it is seen (XProf's `OpMetricsDbBuilder`), and whole dbs merge into it row by row (XProf's
//! `OpMetricsDbCombiner`: per-thread host dbs into the host db, per-core device dbs into the device db).

use super::{MemoryAccessed, OpMetrics, OpMetricsDb};
use std::collections::HashMap;

/// An [`OpMetricsDb`] under construction, with its rows indexed by key.
#[derive(Debug, Default)]
pub struct OpMetricsDbBuilder {
    db: OpMetricsDb,
    rows: HashMap<(u64, String), usize>,
}

impl OpMetricsDbBuilder {
    pub fn new() -> Self {
        Self::default()
    }

    /// The db's totals, to set while building.
    pub fn db_mut(&mut self) -> &mut OpMetricsDb {
        &mut self.db
    }

    pub fn db(&self) -> &OpMetricsDb {
        &self.db
    }

    /// The row of (`hlo_module_id`, `name`), appended empty (only its key set) if new.
    pub fn row(&mut self, hlo_module_id: u64, name: &str) -> &mut OpMetrics {
        let i = self.row_index(hlo_module_id, name);
        &mut self.db.metrics[i]
    }

    /// [`Self::row`]'s index in the db's rows (kept by [`Self::finish`]).
    pub fn row_index(&mut self, hlo_module_id: u64, name: &str) -> usize {
        let next = self.db.metrics.len();
        let i = *self.rows.entry((hlo_module_id, name.to_string())).or_insert(next);
        if i == next {
            self.db.metrics.push(OpMetrics { hlo_module_id, name: name.to_string(), ..OpMetrics::default() });
        }
        i
    }

    /// Adds `src`'s totals and rows (XProf's `OpMetricsDbCombiner::Combine`): each row's sums are added
    /// to the row of the same key, whose metadata (category, provenance, ...) is taken from `src` where
    /// still empty. `update_num_cores` adds the core counts too (per-core device dbs; not host threads).
    pub fn combine(&mut self, src: &OpMetricsDb, update_num_cores: bool) {
        let dst = &mut self.db;
        dst.total_host_infeed_enq_duration_ps = dst.total_host_infeed_enq_duration_ps.wrapping_add(src.total_host_infeed_enq_duration_ps);
        dst.total_host_infeed_enq_start_timestamp_ps_diff =
            dst.total_host_infeed_enq_start_timestamp_ps_diff.wrapping_add(src.total_host_infeed_enq_start_timestamp_ps_diff);
        dst.total_time_ps = dst.total_time_ps.wrapping_add(src.total_time_ps);
        dst.total_op_time_ps = dst.total_op_time_ps.wrapping_add(src.total_op_time_ps);
        dst.idle_time_ps = dst.idle_time_ps.wrapping_add(src.idle_time_ps);
        dst.busy_time_ps = dst.busy_time_ps.wrapping_add(src.busy_time_ps);
        dst.normalized_total_op_time_ps = dst.normalized_total_op_time_ps.wrapping_add(src.normalized_total_op_time_ps);
        dst.precision_stats.compute_16bit_ps = dst.precision_stats.compute_16bit_ps.wrapping_add(src.precision_stats.compute_16bit_ps);
        dst.precision_stats.compute_32bit_ps = dst.precision_stats.compute_32bit_ps.wrapping_add(src.precision_stats.compute_32bit_ps);
        for m in &src.metrics {
            let row = self.row(m.hlo_module_id, &m.name);
            copy_metadata(m, row);
            add_metrics(m, row, update_num_cores);
        }
    }

    pub fn finish(self) -> OpMetricsDb {
        self.db
    }
}

/// Fills `dst`'s descriptive fields that are still empty from `src` (XProf's `CopyOpMetricsMetadata`).
fn copy_metadata(src: &OpMetrics, dst: &mut OpMetrics) {
    fn fill(dst: &mut String, src: &str) {
        if dst.is_empty() {
            *dst = src.to_string();
        }
    }
    fill(&mut dst.long_name, &src.long_name);
    if dst.fingerprint == 0 {
        dst.fingerprint = src.fingerprint;
    }
    fill(&mut dst.category, &src.category);
    fill(&mut dst.provenance, &src.provenance);
    fill(&mut dst.deduplicated_name, &src.deduplicated_name);
    if dst.children.is_none() {
        dst.children.clone_from(&src.children);
    }
    if dst.source_info.is_none() {
        dst.source_info.clone_from(&src.source_info);
    }
    if dst.core_type == super::CoreType::Unknown {
        dst.core_type = src.core_type;
    }
}

/// Adds `src`'s sums to `dst` (XProf's `CombineOpMetrics`).
pub fn add_metrics(src: &OpMetrics, dst: &mut OpMetrics, update_num_cores: bool) {
    dst.min_time_ps = if dst.occurrences == 0 { src.min_time_ps } else { dst.min_time_ps.min(src.min_time_ps) };
    dst.is_eager |= src.is_eager;
    dst.occurrences = dst.occurrences.wrapping_add(src.occurrences);
    dst.memory_event_occurrences = dst.memory_event_occurrences.wrapping_add(src.memory_event_occurrences);
    dst.time_ps = dst.time_ps.wrapping_add(src.time_ps);
    dst.self_time_ps = dst.self_time_ps.wrapping_add(src.self_time_ps);
    dst.normalized_time_ps = dst.normalized_time_ps.wrapping_add(src.normalized_time_ps);
    dst.flops = dst.flops.wrapping_add(src.flops);
    dst.model_flops = dst.model_flops.wrapping_add(src.model_flops);
    dst.flops_v2 += src.flops_v2;
    dst.model_flops_v2 += src.model_flops_v2;
    dst.bytes_accessed = dst.bytes_accessed.wrapping_add(src.bytes_accessed);
    dst.autotuned |= src.autotuned;
    if update_num_cores {
        dst.num_cores = dst.num_cores.wrapping_add(src.num_cores);
    }
    add_memory_accessed(&src.memory_accessed_breakdown, &mut dst.memory_accessed_breakdown);
    dst.dma_stall_ps = dst.dma_stall_ps.wrapping_add(src.dma_stall_ps);
    if src.vdd_energy_j.is_some() || dst.vdd_energy_j.is_some() {
        dst.vdd_energy_j = Some(dst.vdd_energy_j.unwrap_or(0.0) + src.vdd_energy_j.unwrap_or(0.0));
    }
}

/// Adds each (memory space, operation) entry of `src` to `dst`'s, appending new ones in `src`'s order
/// (XProf's `CombineMemoryAccessedBreakdown`).
pub fn add_memory_accessed(src: &[MemoryAccessed], dst: &mut Vec<MemoryAccessed>) {
    for s in src {
        match dst.iter_mut().find(|d| d.memory_space == s.memory_space && d.operation_type == s.operation_type) {
            Some(d) => d.bytes_accessed = d.bytes_accessed.wrapping_add(s.bytes_accessed),
            None => dst.push(*s),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn combine_merges_rows_by_key_and_keeps_first_metadata() {
        let row = |id: u64, name: &str, category: &str, occurrences: u64, time_ps: u64| OpMetrics {
            hlo_module_id: id,
            name: name.into(),
            category: category.into(),
            occurrences,
            time_ps,
            self_time_ps: time_ps,
            min_time_ps: time_ps,
            ..OpMetrics::default()
        };
        let a = OpMetricsDb {
            metrics: vec![row(0, "x", "", 2, 10), row(0, "y", "Add", 1, 5)],
            total_time_ps: 20,
            total_op_time_ps: 15,
            ..Default::default()
        };
        let b = OpMetricsDb {
            metrics: vec![row(0, "x", "Mul", 1, 3), row(7, "x", "Dataset", 1, 4)],
            total_time_ps: 9,
            total_op_time_ps: 7,
            ..Default::default()
        };
        let mut builder = OpMetricsDbBuilder::new();
        builder.combine(&a, false);
        builder.combine(&b, false);
        let db = builder.finish();
        assert_eq!((db.total_time_ps, db.total_op_time_ps), (29, 22));
        let names: Vec<_> = db
            .metrics
            .iter()
            .map(|m| (m.hlo_module_id, m.name.as_str(), m.category.as_str(), m.occurrences, m.time_ps, m.min_time_ps))
            .collect();
        assert_eq!(names, vec![(0, "x", "Mul", 3, 13, 3), (0, "y", "Add", 1, 5, 5), (7, "x", "Dataset", 1, 4, 4)]);
    }
}
