//! Kernel Stats as XProf's DataTable JSON.

use super::KernelStats;
use crate::analysis::data_table::{Cell, ColumnType as T, DataTable};

const COLUMNS: &[(&str, T, &str)] = &[
    ("rank", T::Number, "Rank"),
    ("kernel_name", T::String, "Kernel Name"),
    ("registers_per_thread", T::Number, "Registers per thread"),
    ("shmem_bytes", T::Number, "Shared Mem bytes"),
    ("block_dim", T::String, "Block dim"),
    ("grid_dim", T::String, "Grid dim"),
    ("occupancy_pct", T::Number, "Theoretical Occupancy %"),
    ("is_op_tensor_core_eligible", T::Boolean, "Op is TensorCore eligible"),
    ("is_kernel_using_tensor_core", T::Boolean, "Kernel uses TensorCore"),
    ("op_name", T::String, "Op Name"),
    ("occurrences", T::Number, "Occurrences"),
    ("total_duration_us", T::Number, "Total Duration (μs)"),
    ("avg_duration_us", T::Number, "Avg Duration (μs)"),
    ("min_duration_us", T::Number, "Min Duration (μs)"),
    ("max_duration_us", T::Number, "Max Duration (μs)"),
];

fn dims(d: [u32; 3]) -> String {
    format!("{},{},{}", d[0], d[1], d[2])
}

fn us(ns: u64) -> Cell<'static> {
    Cell::Number(super::ns_to_us(ns))
}

/// XProf's JSON as a value ([`table`], for a caller that reads it).
pub fn to_xprof_json(stats: &KernelStats) -> serde_json::Value {
    table(stats).into_json()
}

/// XProf's DataTable of the kernels (which prints itself).
pub fn table(stats: &KernelStats) -> DataTable {
    let mut table = DataTable::with_columns(COLUMNS);
    for (i, r) in stats.reports.iter().enumerate() {
        let k = &r.key;
        let (block, grid) = (dims(k.block_dim), dims(k.grid_dim));
        table.row(vec![
            Cell::Number((i + 1) as f64),
            Cell::Text(&k.name),
            Cell::Number(f64::from(k.registers_per_thread)),
            Cell::Number(r.shmem_bytes() as f64),
            Cell::Text(&block),
            Cell::Text(&grid),
            Cell::Number(r.occupancy_pct),
            Cell::Boolean(k.is_op_tensor_core_eligible),
            Cell::Boolean(k.is_kernel_using_tensor_core),
            Cell::Text(&k.op_name),
            Cell::Number(r.occurrences as f64),
            us(r.total_duration_ns),
            us(r.avg_duration_ns()),
            us(r.min_duration_ns),
            us(r.max_duration_ns),
        ]);
    }
    table
}
