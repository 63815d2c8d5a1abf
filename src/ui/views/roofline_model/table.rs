//! The roofline's records over the page's one table component, beside the chart: hovering a row
//! rings its point, hovering a point marks its row.

use crate::engine::roofline_model::RooflineModelView as C;
use crate::ui::components::op_links::OpLinks;
use crate::ui::components::table::columnar::{rows, Cols, Row};
use crate::ui::components::table::{Column, Table, TableSpec, TableState};
use leptos::prelude::*;
use std::sync::Arc;

/// Rows are named by operation (`Program` for the whole program).
fn key(c: &C, i: usize) -> String {
    c.records.name[i].clone()
}

fn columns() -> Vec<Column<Row<C>>> {
    let k = Cols::<C> { key };
    vec![
        k.count("rank", "#", "rank", |c, i| c.records.rank[i]).width("44px"),
        k.text("category", "Category", "category", |c, i| &c.records.category[i]).width("110px"),
        k.text("operation", "Operation", "operation", |c, i| &c.records.name[i]).class("op").width("180px"),
        k.count("occurrences", "Occurrences", "occurrences", |c, i| c.records.occurrences[i]).width("112px"),
        k.time("total", "Total time", "total_time_us", |c, i| c.records.total_time_us[i]),
        k.time("self", "Self time", "total_self_time_us", |c, i| c.records.total_self_time_us[i]),
        k.percent("share", "Self share", "self_time_fraction", |c, i| c.records.self_time_fraction[i]),
        k.number("flops", "GFLOP/s", "measured_flop_rate", 2, |c, i| c.records.measured_flop_rate[i]),
        k.number("model_flops", "Model GFLOP/s", "model_flop_rate", 2, |c, i| c.records.model_flop_rate[i]).width("122px"),
        k.number("hbm_bw", "HBM GiB/s", "hbm_bw", 2, |c, i| c.records.hbm_bw[i]),
        k.number("intensity", "FLOP/byte", "operational_intensity", 3, |c, i| c.records.operational_intensity[i]),
        k.number("bottleneck", "Bottleneck FLOP/byte", "bottleneck_operational_intensity", 3, |c, i| {
            c.records.bottleneck_operational_intensity[i]
        })
        .width("172px"),
        k.text("bound_by", "Bound by", "bound_by", |c, i| &c.records.bound_by[i]).width("92px"),
        k.percent("efficiency", "Roofline eff.", "roofline_efficiency", |c, i| c.records.roofline_efficiency[i]).width("108px"),
        // An op's events (the program row, rank 0, is no op of the trace).
        Column::new("links", "Show", |r: &Row<C>, _| {
            let c = &r.cols.records;
            (c.rank[r.i] > 0).then(|| view! { <OpLinks module=c.memory_viewer_module[r.i].clone() op=c.name[r.i].clone() /> }).into_any()
        })
        .width("96px"),
    ]
}

/// The table of `v`'s records; `hovered` is the record under the pointer, here or on the chart.
#[component]
pub fn RooflineTable(v: Arc<C>, hovered: RwSignal<Option<usize>>, state: TableState, csv_name: String) -> impl IntoView {
    let n = v.records.rank.len();
    let spec = TableSpec::new("ops-table roofline-table", columns())
        .testid("roofline-table")
        .filter("Filter by op or category", "roofline-filter", |r: &Row<C>| {
            vec![r.cols.records.name[r.i].as_str(), r.cols.records.category[r.i].as_str()]
        })
        .filter_always()
        .counts("roofline-counts", "shown_records", "total_records")
        .csv(csv_name, "roofline-csv")
        .row_attrs(|r, _| vec![("data-op", key(&r.cols, r.i))])
        .selected(move |i| hovered.get() == Some(i))
        .on_hover(move |i| hovered.set(i))
        .max_height(480.0);
    view! { <Table spec rows=rows(&v, n) state /> }
}
