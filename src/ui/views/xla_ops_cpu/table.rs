//! The XLA op table over the page's one table component: each (module, HLO op) with its runs, times
//! in the page's time unit, share of self time, category, and links to its buffers and occurrences.

use crate::analysis::xla_ops_cpu::XlaOpRow;
use crate::ui::components::metric::{Count, Duration, Percent, Text};
use crate::ui::components::op_links::OpLinks;
use crate::ui::components::table::{Column, Table, TableSpec, TableState};
use leptos::prelude::*;
use std::sync::Arc;

/// A row's key in `data-key`: module and op.
fn key(r: &XlaOpRow) -> String {
    format!("{}/{}", r.module, r.op_name)
}

/// A time column: `metric` (µs, also the CSV header) of each row, in the page's time unit.
fn time_column(id: &'static str, label: &'static str, metric: &'static str, pick: fn(&XlaOpRow) -> f64) -> Column<XlaOpRow> {
    Column::new(id, label, move |r: &XlaOpRow, _| view! { <Duration metric value_us=pick(r) / 1e6 key=key(r) /> }.into_any())
        .right()
        .width("84px")
        .sort_by(move |a, b| pick(a).total_cmp(&pick(b)))
        .csv(metric, move |r| (pick(r) / 1e6).to_string())
}

fn columns() -> Vec<Column<XlaOpRow>> {
    vec![
        Column::new("module", "Module", |r: &XlaOpRow, _| {
            let shown = r.memory_viewer_module.clone().unwrap_or_else(|| r.module.clone());
            view! { <Text metric="module" value=r.module.clone() shown=shown key=key(r) /> }.into_any()
        })
        .width("130px")
        .sort_key(|r| r.module.clone())
        .csv("module", |r| r.module.clone()),
        Column::new("op", "HLO op", |r: &XlaOpRow, _| {
            // The instruction's text and source line: too long for a column of their own.
            let title = [r.expression.as_str(), r.source.as_deref().unwrap_or("")]
                .iter()
                .filter(|t| !t.is_empty())
                .copied()
                .collect::<Vec<_>>()
                .join("\n");
            view! { <code title=title>{r.op_name.clone()}</code> }.into_any()
        })
        .class("op")
        .sort_key(|r| r.op_name.clone())
        .csv("hlo_op", |r| r.op_name.clone()),
        Column::new("category", "Category", |r: &XlaOpRow, _| {
            view! { <Text metric="category" value=r.category.clone() key=key(r) /> }.into_any()
        })
        .width("100px")
        .sort_key(|r| r.category.clone())
        .csv("category", |r| r.category.clone()),
        Column::new("occurrences", "Runs", |r: &XlaOpRow, _| {
            view! { <Count metric="occurrences" value=r.occurrences key=key(r) /> }.into_any()
        })
        .right()
        .width("56px")
        .sort_key(|r| r.occurrences)
        .csv("occurrences", |r| r.occurrences.to_string()),
        time_column("total", "Total time", "total_time_us", |r| r.total_time_ps as f64),
        time_column("avg", "Avg. time", "avg_time_us", |r| r.avg_time_ps),
        time_column("self", "Self time", "self_time_us", |r| r.self_time_ps as f64),
        Column::new("share", "Self share", |r: &XlaOpRow, _| {
            view! { <Percent metric="self_time_fraction" value=r.self_time_fraction key=key(r) /> }.into_any()
        })
        .right()
        .width("76px")
        .sort_by(|a, b| a.self_time_fraction.total_cmp(&b.self_time_fraction))
        .csv("self_time_fraction", |r| r.self_time_fraction.to_string()),
        Column::new("shape", "Shape", |r: &XlaOpRow, _| view! { <Text metric="shape" value=r.shape.clone() key=key(r) /> }.into_any())
            .width("110px")
            .sort_key(|r| r.shape.clone())
            .csv("shape", |r| r.shape.clone()),
        Column::new("framework", "Framework op", |r: &XlaOpRow, _| {
            view! { <span class="muted" title=r.framework_op.clone()>{r.framework_op.clone()}</span> }.into_any()
        })
        .class("op")
        .sort_key(|r| r.framework_op.clone())
        .csv("framework_op", |r| r.framework_op.clone()),
        Column::new("links", "Show", |r: &XlaOpRow, _| {
            view! { <OpLinks module=r.memory_viewer_module.clone() op=r.op_name.clone() /> }.into_any()
        })
        .width("172px"),
    ]
}

/// The table of `rows`; sort and filter in `state`.
#[component]
pub fn OpTable(rows: Arc<Vec<XlaOpRow>>, state: TableState, csv_name: String) -> impl IntoView {
    let spec = TableSpec::new("xoc-table", columns())
        .testid("xoc-table")
        .filter("Filter by op, module, category, framework op or text", "xoc-filter", |r: &XlaOpRow| {
            vec![r.op_name.as_str(), r.module.as_str(), r.category.as_str(), r.framework_op.as_str(), r.expression.as_str()]
        })
        .counts("xoc-counts", "shown_ops", "total_ops")
        .csv(csv_name, "xoc-csv")
        .row_attrs(|r, _| vec![("data-op", r.op_name.clone()), ("data-module", r.module.clone())]);
    view! { <Table spec rows state /> }
}
