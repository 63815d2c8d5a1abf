//! Framework op stats as XProf's converter prints them: `[with_idle, without_idle]`, two DataTables
//! (XProf's `TfStatsToDataTableJson`).

use super::{FrameworkOpStats, FrameworkOpTable};
use crate::analysis::data_table::{Cell, ColumnType, DataTable};
use serde_json::Value;

/// (id, type, label) of the columns before the optional Tensor Core column.
const COLUMNS: [(&str, ColumnType, &str); 17] = [
    ("rank", ColumnType::Number, "Rank"),
    ("host_or_device", ColumnType::String, "Host/device"),
    ("type", ColumnType::String, "Operation Type"),
    ("operation", ColumnType::String, "Operation Name"),
    ("occurrences", ColumnType::Number, "#Occurrences"),
    ("total_time", ColumnType::Number, "Total time (us)"),
    ("avg_time", ColumnType::Number, "Avg. time (us)"),
    ("total_self_time", ColumnType::Number, "Total self-time (us)"),
    ("avg_self_time", ColumnType::Number, "Avg. self-time (us)"),
    ("device_total_self_time_percent", ColumnType::Number, "Total self-time on Device (%)"),
    ("device_cumulative_total_self_time_percent", ColumnType::Number, "Cumulative total-self time on Device (%)"),
    ("host_total_self_time_percent", ColumnType::Number, "Total self-time on Host (%)"),
    ("Host_cumulative_total_self_time_percent", ColumnType::Number, "Cumulative total-self time on Host (%)"),
    ("measured_flop_rate", ColumnType::Number, "Normalized FLOP Rate (FLOPs/s)"),
    ("model_flop_rate", ColumnType::Number, "Model FLOP Rate (GFLOP/s)"),
    ("measured_memory_bw", ColumnType::Number, "Measured Memory BW (GBytes/Sec)"),
    ("operational_intensity", ColumnType::Number, "Operational Intensity (FLOPs/Byte)"),
];

/// XProf's JSON for both tables, as a value ([`tables`], for a caller that reads it).
pub fn to_xprof_json(stats: &FrameworkOpStats) -> Value {
    serde_json::to_value(tables(stats)).unwrap_or(Value::Null)
}

/// XProf's two DataTables, `[with_idle, without_idle]` (which print themselves).
pub fn tables(stats: &FrameworkOpStats) -> [DataTable; 2] {
    [data_table(&stats.with_idle, &stats.device_type), data_table(&stats.without_idle, &stats.device_type)]
}

fn data_table(table: &FrameworkOpTable, device_type: &str) -> DataTable {
    // XProf adds the Tensor Core column on GPUs only.
    let gpu = device_type.contains("GPU");
    let mut t = DataTable::new();
    for (id, column_type, label) in COLUMNS {
        t.column(id, column_type, label);
    }
    if gpu {
        t.column("gpu_tensorcore_utilization", ColumnType::Number, "GPU TensorCore utilization");
    }
    t.column("bound_by", ColumnType::String, "Bound by");
    t.column("eager", ColumnType::String, "Execution mode");
    for r in &table.rows {
        let mut cells = vec![
            Cell::Number(f64::from(r.rank)),
            Cell::Text(if r.on_device { "Device" } else { "Host" }),
            Cell::Text(&r.op_type),
            Cell::Text(&r.op_name),
            Cell::Number(r.occurrences as f64),
            Cell::Number(r.total_time_us),
            Cell::Number(r.avg_time_us),
            Cell::Number(r.total_self_time_us),
            Cell::Number(r.avg_self_time_us),
            Cell::Number(r.device_self_time_fraction),
            Cell::Number(r.device_cumulative_self_time_fraction),
            Cell::Number(r.host_self_time_fraction),
            Cell::Number(r.host_cumulative_self_time_fraction),
            Cell::Number(r.measured_flop_rate),
            Cell::Number(r.model_flop_rate),
            Cell::Number(r.measured_memory_bw),
            Cell::Number(r.operational_intensity),
        ];
        if gpu {
            cells.push(Cell::Number(r.gpu_tensorcore_utilization));
        }
        cells.push(Cell::Text(&r.bound_by));
        cells.push(Cell::Text(if r.is_eager { "Eager" } else { "Function" }));
        t.row(cells);
    }
    t.property("task_type", &table.task_type);
    // XProf never sets the flags this would come from (CNN, MLP, RNN cells): always "Unknown".
    t.property("architecture_type", "Unknown");
    t
}
