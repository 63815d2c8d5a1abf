//! The framework op table over the page's one table component: XProf's columns, times in the page's
//! time unit, each row's share of its side, and the true occurrence count where XProf's is inflated.

use crate::analysis::framework_op_stats::FrameworkOpRow;
use crate::ui::components::metric::{Count, Duration, Percent, Text};
use crate::ui::components::op_links::OpLinks;
use crate::ui::components::table::{Column, Table, TableSpec, TableState};
use leptos::prelude::*;
use std::sync::Arc;

/// Which rows the table shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Both,
    Host,
    Device,
}

impl Side {
    pub const ALL: [Side; 3] = [Side::Both, Side::Host, Side::Device];

    pub fn slug(self) -> &'static str {
        match self {
            Side::Both => "both",
            Side::Host => "host",
            Side::Device => "device",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Side::Both => "host and device",
            Side::Host => "host",
            Side::Device => "device",
        }
    }

    pub fn parse(s: &str) -> Side {
        Side::ALL.into_iter().find(|x| x.slug() == s).unwrap_or(Side::Both)
    }

    fn admits(self, on_device: bool) -> bool {
        match self {
            Side::Both => true,
            Side::Host => !on_device,
            Side::Device => on_device,
        }
    }
}

fn side_name(r: &FrameworkOpRow) -> &'static str {
    if r.on_device {
        "Device"
    } else {
        "Host"
    }
}

/// The row's self time as a fraction of its side, and the running sum down its side.
fn share(r: &FrameworkOpRow) -> (f64, f64) {
    if r.on_device {
        (r.device_self_time_fraction, r.device_cumulative_self_time_fraction)
    } else {
        (r.host_self_time_fraction, r.host_cumulative_self_time_fraction)
    }
}

/// A time column: `metric` (µs, also the CSV header) of each row, in the page's time unit.
fn time_column(id: &'static str, label: &'static str, metric: &'static str, pick: fn(&FrameworkOpRow) -> f64) -> Column<FrameworkOpRow> {
    Column::new(id, label, move |r: &FrameworkOpRow, _| view! { <Duration metric value_us=pick(r) key=r.op_name.clone() /> }.into_any())
        .right()
        .width("92px")
        .sort_by(by_f64(pick))
        .csv(metric, move |r| pick(r).to_string())
}

fn by_f64(pick: fn(&FrameworkOpRow) -> f64) -> impl Fn(&FrameworkOpRow, &FrameworkOpRow) -> std::cmp::Ordering + Send + Sync {
    move |a, b| pick(a).total_cmp(&pick(b))
}

fn columns() -> Vec<Column<FrameworkOpRow>> {
    vec![
        Column::new("rank", "#", |r: &FrameworkOpRow, _| view! { <Count metric="rank" value=u64::from(r.rank) key=r.op_name.clone() /> }.into_any())
            .right()
            .width("44px")
            .sort_key(|r| r.rank)
            .csv("rank", |r| r.rank.to_string()),
        Column::new("side", "Side", |r: &FrameworkOpRow, _| side_name(r).into_any())
            .width("60px")
            .sort_key(|r| r.on_device)
            .csv("host_or_device", |r| side_name(r).to_string()),
        Column::new("type", "Type", |r: &FrameworkOpRow, _| view! { <Text metric="op_type" value=r.op_type.clone() key=r.op_name.clone() /> }.into_any())
            .width("120px")
            .sort_key(|r| r.op_type.clone())
            .csv("type", |r| r.op_type.clone()),
        Column::new("op", "Operation", |r: &FrameworkOpRow, _| view! { <code title=r.op_name.clone()>{r.op_name.clone()}</code> }.into_any())
            .class("op")
            .sort_key(|r| r.op_name.clone())
            .csv("operation", |r| r.op_name.clone()),
        Column::new("occurrences", "Occurrences", |r: &FrameworkOpRow, _| {
            let key = r.op_name.clone();
            let inflated = r.occurrences != r.true_occurrences;
            let title = format!("XProf counts {} allocator events naming this op as occurrences; it ran {} times", r.occurrences - r.true_occurrences, r.true_occurrences);
            view! {
                <Count metric="occurrences" value=r.occurrences key=key.clone() />
                {inflated.then(|| view! { <span class="true-count" title=title>" ran " <Count metric="true_occurrences" value=r.true_occurrences key /></span> })}
            }
            .into_any()
        })
        .right()
        .width("120px")
        .sort_key(|r| r.occurrences)
        .csv("occurrences", |r| r.occurrences.to_string()),
        time_column("total", "Total time", "total_time_us", |r| r.total_time_us),
        time_column("avg", "Avg. time", "avg_time_us", |r| r.avg_time_us),
        time_column("self", "Self time", "total_self_time_us", |r| r.total_self_time_us),
        time_column("avg_self", "Avg. self", "avg_self_time_us", |r| r.avg_self_time_us),
        Column::new("share", "Self share", |r: &FrameworkOpRow, _| {
            view! { <Percent metric="self_time_fraction" value=share(r).0 key=r.op_name.clone() /> }.into_any()
        })
        .right()
        .width("104px")
        .sort_by(by_f64(|r| share(r).0))
        .csv("self_time_fraction", |r| share(r).0.to_string()),
        Column::new("cumulative", "Cum. share", |r: &FrameworkOpRow, _| {
            view! { <Percent metric="cumulative_self_time_fraction" value=share(r).1 key=r.op_name.clone() /> }.into_any()
        })
        .right()
        .width("104px")
        .sort_by(by_f64(|r| share(r).1))
        .csv("cumulative_self_time_fraction", |r| share(r).1.to_string()),
        Column::new("links", "Show", |r: &FrameworkOpRow, _| view! { <OpLinks module=None op=r.op_name.clone() /> }.into_any()).width("96px"),
    ]
}

/// The table of `rows`, showing the side `side` picks; sort and filter in `state`.
#[component]
pub fn OpTable(rows: Arc<Vec<FrameworkOpRow>>, side: RwSignal<Side>, state: TableState, csv_name: String) -> impl IntoView {
    let spec = TableSpec::new("fos-table", columns())
        .testid("fos-table")
        .filter("Filter by op or type", "fos-filter", |r: &FrameworkOpRow| vec![r.op_name.as_str(), r.op_type.as_str()])
        .keep(move |r| side.get().admits(r.on_device))
        .counts("fos-counts", "shown_ops", "total_ops")
        .csv(csv_name, "fos-csv")
        .row_attrs(|r, _| vec![("data-op", r.op_name.clone()), ("data-side", side_name(r).to_lowercase())])
        .row_title(|r| format!("{} ({})", r.op_name, r.op_type));
    view! { <Table spec rows state /> }
}
