//! The Roofline Model as XProf's JSON: `[records table, diagnostics table]`; the records table's `p`
//! carries the device's peaks and ridge points as text.

use super::{RooflineModel, RooflineRecord};
use crate::analysis::data_table::{warnings_table, Cell, ColumnType as T, DataTable};
use crate::analysis::hlo_stats::xprof_json::source_info_html;
use crate::analysis::number_text::six_digits;

const COLUMNS: &[(&str, T, &str)] = &[
    ("step", T::String, "Step"),
    ("rank", T::Number, "Rank"),
    ("category", T::String, "Category"),
    ("operation", T::String, "Operation"),
    ("occurrences", T::Number, "# Occurrences"),
    ("total_time", T::Number, "Total Time (us)"),
    ("avg_time", T::Number, "Avg. time (us)"),
    ("total_self_time", T::Number, "Total self time (us)"),
    ("avg_self_time", T::Number, "Avg. self time (us)"),
    ("total_self_time_percent", T::Number, "Total self time (%)"),
    ("cumulative_total_self_time_percent", T::Number, "Cumulative total self time (%)"),
    ("dma_stall_percent", T::Number, "%time stalled by DMA"),
    ("measured_flop_rate", T::Number, "Normalized FLOP Rate (GFLOP/s)"),
    ("model_flop_rate", T::Number, "Model FLOP Rate (GFLOP/s)"),
    ("measured_memory_bw", T::Number, "Memory BW (GiB/s)"),
    ("hbm_bw", T::Number, "HBM BW (GiB/s)"),
    ("cmem_read_bw", T::Number, "CMEM Read BW (GiB/s)"),
    ("cmem_write_bw", T::Number, "CMEM Write BW (GiB/s)"),
    ("vmem_read_bw", T::Number, "VMEM Read BW (GiB/s)"),
    ("vmem_write_bw", T::Number, "VMEM Write BW (GiB/s)"),
    ("operational_intensity", T::Number, "Operational Intensity (FLOP/Byte)"),
    ("hbm_operational_intensity", T::Number, "HBM Operational Intensity (FLOP/Byte)"),
    ("cmem_read_operational_intensity", T::Number, "CMEM Read Operational Intensity (FLOP/Byte)"),
    ("cmem_write_operational_intensity", T::Number, "CMEM Write Operational Intensity (FLOP/Byte)"),
    ("vmem_read_operational_intensity", T::Number, "VMEM Read Operational Intensity (FLOP/Byte)"),
    ("vmem_write_operational_intensity", T::Number, "VMEM Write Operational Intensity (FLOP/Byte)"),
    ("bottleneck_operational_intensity", T::Number, "Bottleneck Operational Intensity (FLOP/Byte)"),
    ("bound_by", T::String, "Bound by"),
    ("total_time_per_core", T::Number, "Total Time per core (us)"),
    ("total_time_in_percentage", T::Number, "Total Time (%)"),
    ("optimal_flop_rate", T::Number, "Optimal FLOP Rate (GFLOP/s)"),
    ("roofline_efficiency", T::Number, "Roofline efficiency (%)"),
    ("compute_efficiency", T::Number, "FLOP Rate / Peak (%)"),
    ("max_mem_bw_utilization", T::Number, "Max memory BW utilization (among supported memories) (%)"),
    ("include_infeed_outfeed", T::Boolean, "Include Infeed/Outfeed"),
    ("hlo_module_id", T::String, "Program ID"),
    ("source_info", T::String, "Source Info"),
];

fn push_row(table: &mut DataTable, r: &RooflineRecord) {
    let n = Cell::Number;
    let f = &r.rates;
    let (module_id, source) = (r.hlo_module_id.to_string(), source_info_html(r.source_info.as_ref()));
    let span = r.span.label();
    table.row(vec![
        Cell::Text(&span),
        n(r.rank as f64),
        Cell::Text(&r.category),
        Cell::Text(&r.name),
        n(r.occurrences as f64),
        n(r.total_time_us),
        n(r.avg_time_us),
        n(r.total_self_time_us),
        n(r.avg_self_time_us),
        n(r.self_time_fraction),
        n(r.cumulative_self_time_fraction),
        n(r.dma_stall_fraction),
        n(f.measured_flop_rate),
        n(f.model_flop_rate),
        n(f.measured_memory_bw),
        n(f.hbm_bw),
        n(f.cmem_read_bw),
        n(f.cmem_write_bw),
        n(f.vmem_read_bw),
        n(f.vmem_write_bw),
        n(f.operational_intensity),
        n(f.hbm_operational_intensity),
        n(f.cmem_read_operational_intensity),
        n(f.cmem_write_operational_intensity),
        n(f.vmem_read_operational_intensity),
        n(f.vmem_write_operational_intensity),
        n(f.bottleneck_operational_intensity),
        Cell::Text(f.bound_by),
        n(r.total_time_per_core_us),
        n(r.total_time_fraction),
        n(r.optimal_flop_rate),
        n(r.roofline_efficiency),
        n(r.compute_efficiency),
        n(r.max_mem_bw_utilization),
        Cell::Boolean(r.include_infeed_outfeed),
        Cell::Text(&module_id),
        Cell::Text(&source),
    ]);
}

/// Columns XProf's GPU table leaves out (no DMA stalls, CMEM or VMEM reads on a GPU).
const NOT_ON_GPU: &[&str] = &[
    "dma_stall_percent",
    "cmem_read_bw",
    "cmem_write_bw",
    "vmem_read_bw",
    "cmem_read_operational_intensity",
    "cmem_write_operational_intensity",
    "vmem_read_operational_intensity",
];

/// XProf's GPU table: the TPU table's columns but [`NOT_ON_GPU`], VMEM write standing for shared
/// memory / L1; only the HBM and shared-memory peaks in its properties.
fn gpu_json(model: &RooflineModel) -> serde_json::Value {
    let keep: Vec<bool> = COLUMNS.iter().map(|(id, _, _)| !NOT_ON_GPU.contains(id)).collect();
    let columns: Vec<(&str, T, &str)> = COLUMNS
        .iter()
        .filter(|(id, _, _)| !NOT_ON_GPU.contains(id))
        .map(|&(id, t, label)| match id {
            "vmem_write_bw" => (id, t, "SHM/L1 BW (GiB/s)"),
            "vmem_write_operational_intensity" => (id, t, "SHM/L1 Operational Intensity (FLOP/Byte)"),
            _ => (id, t, label),
        })
        .collect();
    let mut full = DataTable::with_columns(COLUMNS);
    for r in &model.records {
        push_row(&mut full, r);
    }
    let mut table = DataTable::with_columns(&columns);
    let full = full.into_json();
    for row in full["rows"].as_array().into_iter().flatten() {
        let cells = row["c"].as_array().into_iter().flatten().zip(&keep).filter(|(_, k)| **k).map(|(c, _)| c.clone());
        table.raw_row(cells.collect());
    }
    let ridge = |bw_gib: f64| six_digits(model.ridge_point(bw_gib));
    table.property("device_type", &model.device_type);
    table.property("peak_flop_rate", six_digits(model.peak_flop_rate));
    table.property("peak_hbm_bw", six_digits(model.peak_hbm_bw));
    table.property("peak_vmem_write_bw", six_digits(model.peak_vmem_write_bw));
    table.property("hbm_ridge_point", ridge(model.peak_hbm_bw));
    table.property("vmem_write_ridge_point", ridge(model.peak_vmem_write_bw));
    serde_json::Value::Array(vec![table.into_json(), warnings_table(&model.warnings).into_json()])
}

pub fn to_xprof_json(model: &RooflineModel) -> serde_json::Value {
    if model.device_type.contains("GPU") {
        return gpu_json(model);
    }
    let mut table = DataTable::with_columns(COLUMNS);
    for r in &model.records {
        push_row(&mut table, r);
    }
    let ridge = |bw_gib: f64| six_digits(model.ridge_point(bw_gib));
    let flag = |b: bool| if b { "1" } else { "0" };
    table.property("device_type", &model.device_type);
    table.property("megacore", flag(model.megacore));
    table.property("has_cmem", flag(model.has_cmem));
    table.property("has_merged_vmem", flag(model.has_merged_vmem));
    table.property("peak_flop_rate", six_digits(model.peak_flop_rate));
    table.property("peak_hbm_bw", six_digits(model.peak_hbm_bw));
    table.property("peak_cmem_read_bw", six_digits(model.peak_cmem_read_bw));
    table.property("peak_cmem_write_bw", six_digits(model.peak_cmem_write_bw));
    table.property("peak_vmem_read_bw", six_digits(model.peak_vmem_read_bw));
    table.property("peak_vmem_write_bw", six_digits(model.peak_vmem_write_bw));
    table.property("hbm_ridge_point", ridge(model.peak_hbm_bw));
    table.property("cmem_read_ridge_point", ridge(model.peak_cmem_read_bw));
    table.property("cmem_write_ridge_point", ridge(model.peak_cmem_write_bw));
    table.property("vmem_read_ridge_point", ridge(model.peak_vmem_read_bw));
    table.property("vmem_write_ridge_point", ridge(model.peak_vmem_write_bw));
    table.property("time_scale_multiplier", six_digits(model.time_scale_multiplier));
    serde_json::Value::Array(vec![table.into_json(), warnings_table(&model.warnings).into_json()])
}

#[cfg(test)]
mod tests {
    use super::six_digits;

    #[test]
    fn doubles_print_as_absl_does() {
        assert_eq!(six_digits(918000.0), "918000");
        assert_eq!(six_digits(1_525.499_904), "1525.5");
        assert_eq!(six_digits(560.441_906), "560.442");
        assert_eq!(six_digits(0.0), "0");
        assert_eq!(six_digits(1.0), "1");
        assert_eq!(six_digits(1234567.0), "1.23457e+06");
        assert_eq!(six_digits(0.000_012_5), "1.25e-05");
        assert_eq!(six_digits(0.000_125), "0.000125");
    }
}
