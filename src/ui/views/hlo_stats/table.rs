//! The HLO op table over the page's one table component: XProf's columns, read from the reply's
//! column arrays by row index.

use crate::engine::hlo_stats::HloStatsView as C;
use crate::ui::components::metric::Text;
use crate::ui::components::op_links::OpLinks;
use crate::ui::components::table::columnar::{rows, Cols, Row};
use crate::ui::components::table::{Column, Table, TableSpec, TableState};
use leptos::prelude::*;
use std::sync::Arc;

/// Rows are named by program and instruction (an instruction name is unique within its program).
fn key(c: &C, i: usize) -> String {
    format!("{}/{}", c.columns.program_id[i], c.columns.hlo_op_name[i])
}

fn columns() -> Vec<Column<Row<C>>> {
    let k = Cols::<C> { key };
    vec![
        k.count("rank", "#", "rank", |c, i| c.columns.rank[i]).width("44px"),
        Column::new("program", "Program id", |r: &Row<C>, _| {
            let id = r.cols.columns.program_id[r.i].to_string();
            view! { <Text metric="program_id" value=id key=key(&r.cols, r.i) /> }.into_any()
        })
        .width("184px")
        .sort_key(|r| r.cols.columns.program_id[r.i])
        .csv("program_id", |r| r.cols.columns.program_id[r.i].to_string()),
        k.text("category", "Category", "category", |c, i| &c.columns.category[i]).width("110px"),
        k.text("name", "HLO op name", "hlo_op_name", |c, i| &c.columns.hlo_op_name[i]).width("150px"),
        k.text("expression", "HLO op text", "hlo_op_expression", |c, i| &c.columns.expression[i]).width("260px").class("op"),
        k.text("framework_op", "Framework op", "tf_op_name", |c, i| &c.columns.framework_op[i]).width("160px"),
        k.count("occurrences", "Occurrences", "occurrences", |c, i| c.columns.occurrences[i]).width("112px"),
        k.time("total", "Total time", "total_time_us", |c, i| c.columns.total_time_us[i]),
        k.time("avg", "Avg. time", "avg_time_us", |c, i| c.columns.avg_time_us[i]),
        k.time("self", "Self time", "total_self_time_us", |c, i| c.columns.total_self_time_us[i]),
        k.time("avg_self", "Avg. self", "avg_self_time_us", |c, i| c.columns.avg_self_time_us[i]),
        k.percent("share", "Self share", "self_time_fraction", |c, i| c.columns.self_time_fraction[i]),
        k.percent("cumulative", "Cum. share", "cumulative_self_time_fraction", |c, i| c.columns.cumulative_self_time_fraction[i]),
        k.percent("dma", "DMA stall", "dma_stall_fraction", |c, i| c.columns.dma_stall_fraction[i]),
        k.number("model_flops", "Model GFLOP/s", "model_flop_rate", 2, |c, i| c.columns.model_flop_rate[i]).width("122px"),
        k.number("flops", "Norm. GFLOP/s", "normalized_flop_rate", 2, |c, i| c.columns.normalized_flop_rate[i]).width("122px"),
        k.number("memory_bw", "Mem. GiB/s", "measured_memory_bw", 2, |c, i| c.columns.measured_memory_bw[i]),
        k.number("hbm_bw", "HBM GiB/s", "hbm_bw", 2, |c, i| c.columns.hbm_bw[i]),
        k.number("cmem_read", "CMEM rd GiB/s", "cmem_read_bw", 2, |c, i| c.columns.cmem_read_bw[i]).width("122px"),
        k.number("cmem_write", "CMEM wr GiB/s", "cmem_write_bw", 2, |c, i| c.columns.cmem_write_bw[i]).width("122px"),
        k.number("intensity", "FLOP/byte", "operational_intensity", 3, |c, i| c.columns.operational_intensity[i]),
        k.text("bound_by", "Bound by", "bound_by", |c, i| &c.columns.bound_by[i]).width("92px"),
        k.flag("remat", "Remat.", "hlo_rematerialization", |c, i| c.columns.rematerialization[i]),
        k.flag("outside", "Outside comp.", "outside_compilation", |c, i| c.columns.outside_compilation[i]).width("124px"),
        k.flag("autotuned", "Autotuned", "autotuned", |c, i| c.columns.autotuned[i]).width("92px"),
        k.text("source", "Source", "source_info", |c, i| &c.columns.source[i]).width("160px"),
        k.text("core", "Core type", "core_type", |c, i| &c.columns.core_type[i]).width("88px"),
        Column::new("links", "Show", |r: &Row<C>, _| {
            let c = &r.cols.columns;
            view! { <OpLinks module=c.memory_viewer_module[r.i].clone() op=c.hlo_op_name[r.i].clone() /> }.into_any()
        })
        .width("124px"),
    ]
}

/// The table of `v`'s rows; sort and filter in `state`.
#[component]
pub fn HloTable(v: Arc<C>, state: TableState, csv_name: String) -> impl IntoView {
    let n = v.columns.rank.len();
    let k = Cols::<C> { key };
    let spec = TableSpec::new("ops-table hlo-table", columns())
        .testid("hlo-table")
        .filter("Filter by op, category or text", "hlo-filter", |r: &Row<C>| {
            let c = &r.cols.columns;
            vec![c.hlo_op_name[r.i].as_str(), c.category[r.i].as_str(), c.expression[r.i].as_str(), c.framework_op[r.i].as_str()]
        })
        .filter_always()
        .counts("hlo-counts", "shown_ops", "total_ops")
        .csv(csv_name, "hlo-csv")
        .row_attrs(move |r, _| vec![("data-op", k.row_key(r))])
        .row_title(|r| r.cols.columns.expression[r.i].clone());
    view! { <Table spec rows=rows(&v, n) state /> }
}
