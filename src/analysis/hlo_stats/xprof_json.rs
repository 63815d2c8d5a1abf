//! HLO Op Stats as XProf's DataTable JSON.

use super::{HloStats, HloStatsRow};
use crate::analysis::data_table::{Cell, ColumnType as T, DataTable};
use crate::analysis::op_metrics::{ps_to_us, safe_divide, SourceInfo};

const COLUMNS: &[(&str, T, &str)] = &[
    ("rank", T::Number, "Rank"),
    ("program_id", T::String, "Program id"),
    ("category", T::String, "HLO op category"),
    ("hlo_op_name", T::String, "HLO op name"),
    ("hlo_op_expression", T::String, "HLO op text"),
    ("tf_op_name", T::String, "Framework op name"),
    ("occurrences", T::Number, "#Occurrences"),
    ("total_time", T::Number, "Total time (us)"),
    ("avg_time", T::Number, "Avg. time (us)"),
    ("total_self_time", T::Number, "Total self time (us)"),
    ("avg_self_time", T::Number, "Avg. self time (us)"),
    ("total_self_time_percent", T::Number, "Total self time (%)"),
    ("cumulative_total_self_time_percent", T::Number, "Cumulative total self time (%)"),
    ("dma_stall_percent", T::Number, "%time stalled by DMA"),
    ("model_flop_rate", T::Number, "Model GFLOP/s"),
    ("normalized_flop_rate", T::Number, "Normalized GFLOP/s"),
    ("measured_memory_bw", T::Number, "Measured memory BW (GiB/s)"),
    ("hbm_bw", T::Number, "HBM BW (GiB/s)"),
    ("cmem_read_bw", T::Number, "CMEM Read BW (GiB/s)"),
    ("cmem_write_bw", T::Number, "CMEM Write BW (GiB/s)"),
    ("operational_intensity", T::Number, "Operational intensity (FLOPS/Byte)"),
    ("bound_by", T::String, "Bound by"),
    ("hlo_rematerialization", T::String, "Rematerialization"),
    ("outside_compilation", T::String, "Outside Compilation"),
    ("autotuned", T::String, "Autotuned"),
    ("source_info", T::String, "Source Info"),
    ("core_type", T::String, "TPU core type"),
    ("parent_op_name", T::String, "Parent op name"),
    ("vdd_energy", T::Number, "VDD Energy (J)"),
];

fn yes_no(b: bool) -> Cell<'static> {
    Cell::Text(if b { "Yes" } else { "No" })
}

/// Text as HTML attribute-safe text.
fn escape_html(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;").replace('\'', "&#39;")
}

/// The source cell: `file:line` with the stack as its tooltip; empty without a source file.
pub fn source_info_html(info: Option<&SourceInfo>) -> String {
    match info.and_then(|s| Some((s, s.file_line()?))) {
        Some((s, file_line)) => {
            format!("<div class='source-info-cell' title='{}'>{}</div>", escape_html(&s.stack_frame), escape_html(&file_line))
        }
        None => String::new(),
    }
}

fn push_row(table: &mut DataTable, r: &HloStatsRow) {
    let m = &r.op;
    let (program_id, source) = (m.hlo_module_id.to_string(), source_info_html(m.source_info.as_ref()));
    let occurrences = m.occurrences as f64;
    let (total_us, self_us) = (ps_to_us(m.time_ps), ps_to_us(m.self_time_ps));
    let rf = &r.roofline;
    table.row(vec![
        Cell::Number(r.rank as f64),
        Cell::Text(&program_id),
        Cell::Text(&m.category),
        Cell::Text(r.hlo_op_name()),
        Cell::Text(r.expression()),
        Cell::Text(&m.provenance),
        Cell::Number(occurrences),
        Cell::Number(total_us),
        Cell::Number(safe_divide(total_us, occurrences)),
        Cell::Number(self_us),
        Cell::Number(safe_divide(self_us, occurrences)),
        Cell::Number(r.self_time_fraction * 100.0),
        Cell::Number(r.cumulative_self_time_fraction * 100.0),
        Cell::Number(safe_divide(m.dma_stall_ps as f64, m.time_ps as f64)),
        Cell::Number(rf.model_flop_rate),
        Cell::Number(rf.measured_flop_rate),
        Cell::Number(rf.measured_memory_bw),
        Cell::Number(rf.hbm_bw),
        Cell::Number(rf.cmem_read_bw),
        Cell::Number(rf.cmem_write_bw),
        Cell::Number(rf.operational_intensity),
        Cell::Text(rf.bound_by),
        yes_no(r.is_rematerialization()),
        yes_no(r.is_outside_compilation()),
        yes_no(m.autotuned),
        Cell::Text(&source),
        Cell::Text(r.core_type()),
        Cell::Text(""),
        Cell::Number(m.vdd_energy_j.unwrap_or(0.0)),
    ]);
}

/// XProf's JSON as a value ([`table`], for a caller that reads it).
pub fn to_xprof_json(stats: &HloStats) -> serde_json::Value {
    table(stats).into_json()
}

/// XProf's DataTable of the HLO ops (which prints itself).
pub fn table(stats: &HloStats) -> DataTable {
    let mut table = DataTable::with_columns(COLUMNS);
    for r in &stats.rows {
        push_row(&mut table, r);
    }
    table
}
