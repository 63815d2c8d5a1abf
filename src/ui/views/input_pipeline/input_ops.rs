//! The input op table over the page's one table component: XProf's columns (op, count, total and
//! self time in ms and their shares of all input ops' self time, category), sortable, filterable,
//! exported as CSV.

use crate::engine::input_pipeline::InputOpColumns;
use crate::ui::components::metric::{Count, Percent, Text};
use crate::ui::components::table::{Column, Table, TableSpec, TableState};
use leptos::prelude::*;
use std::sync::Arc;

/// One row, read back from the reply's columns.
#[derive(Debug, Clone, PartialEq)]
pub struct InputOpRow {
    pub name: String,
    pub occurrences: u64,
    pub time_ms: f64,
    pub time_fraction: f64,
    pub self_time_ms: f64,
    pub self_time_fraction: f64,
    pub category: String,
}

/// The rows of the reply's columns, in its order (self time, largest first).
pub fn rows(c: &InputOpColumns) -> Vec<InputOpRow> {
    (0..c.names.len())
        .map(|i| InputOpRow {
            name: c.names[i].clone(),
            occurrences: c.occurrences[i],
            time_ms: c.time_ms[i],
            time_fraction: c.time_fraction[i],
            self_time_ms: c.self_time_ms[i],
            self_time_fraction: c.self_time_fraction[i],
            category: c.categories[i].clone(),
        })
        .collect()
}

/// A figure column of `pick(row)`: `metric` (also the CSV header), shown by `cell`.
fn figure_column(
    id: &'static str,
    label: &'static str,
    metric: &'static str,
    pick: fn(&InputOpRow) -> f64,
    cell: fn(&'static str, f64, String) -> AnyView,
) -> Column<InputOpRow> {
    Column::new(id, label, move |r: &InputOpRow, _| cell(metric, pick(r), r.name.clone()))
        .right()
        .width("110px")
        .sort_by(move |a, b| pick(a).total_cmp(&pick(b)))
        .csv(metric, move |r| pick(r).to_string())
}

fn ms_cell(metric: &'static str, v: f64, key: String) -> AnyView {
    view! { <Text metric value=v.to_string() shown=format!("{v:.3} ms") key /> }.into_any()
}

fn share_cell(metric: &'static str, v: f64, key: String) -> AnyView {
    view! { <Percent metric value=v key /> }.into_any()
}

fn columns() -> Vec<Column<InputOpRow>> {
    vec![
        Column::new("op", "Input op", |r: &InputOpRow, _| view! { <code title=r.name.clone()>{r.name.clone()}</code> }.into_any())
            .class("op")
            .sort_key(|r| r.name.clone())
            .csv("op_name", |r| r.name.clone()),
        Column::new("count", "Count", |r: &InputOpRow, _| {
            view! { <Count metric="count" value=r.occurrences key=r.name.clone() /> }.into_any()
        })
        .right()
        .width("80px")
        .sort_key(|r| r.occurrences)
        .csv("count", |r| r.occurrences.to_string()),
        figure_column("time", "Total time", "time_ms", |r| r.time_ms, ms_cell),
        figure_column("time_share", "Total share", "time_fraction", |r| r.time_fraction, share_cell),
        figure_column("self", "Self time", "self_time_ms", |r| r.self_time_ms, ms_cell),
        figure_column("self_share", "Self share", "self_time_fraction", |r| r.self_time_fraction, share_cell),
        Column::new("category", "Category", |r: &InputOpRow, _| {
            view! { <Text metric="category" value=r.category.clone() key=r.name.clone() /> }.into_any()
        })
        .width("150px")
        .sort_key(|r| r.category.clone())
        .csv("category", |r| r.category.clone()),
    ]
}

/// The input ops `rows`; sort and filter in `state`.
#[component]
pub fn InputOpTable(rows: Arc<Vec<InputOpRow>>, state: TableState, csv_name: String) -> impl IntoView {
    let spec = TableSpec::new("ipa-ops", columns())
        .testid("ipa-ops")
        .filter("Filter by op or category", "ipa-filter", |r: &InputOpRow| vec![r.name.as_str(), r.category.as_str()])
        .counts("ipa-counts", "shown_ops", "total_ops")
        .csv(csv_name, "ipa-csv")
        .row_attrs(|r, _| vec![("data-op", r.name.clone())])
        .row_title(|r| format!("{} ({})", r.name, r.category));
    view! { <Table spec rows state /> }
}
