//! The comparison's two tables over the page's one table component, read from the reply by row
//! index: the ops with both runs' times and the changes (a bar per change, red slower, green
//! faster), and the allocators' peaks.

use crate::engine::run_comparison::{Change, MemoryPeak, OpDelta, Presence, RunComparison as C};
use crate::ui::components::metric::{sign, Bytes, SignedBytes, SignedDuration, SignedRatio, Text};
use crate::ui::components::table::columnar::{rows, Cols, Row};
use crate::ui::components::table::{Column, Table, TableSpec, TableState};
use leptos::prelude::*;
use std::sync::Arc;

fn side(o: &OpDelta) -> &'static str {
    if o.on_device {
        "Device"
    } else {
        "Host"
    }
}

pub(super) fn presence(p: Presence) -> &'static str {
    match p {
        Presence::Both => "both",
        Presence::OnlyInCurrent => "this run",
        Presence::OnlyInBaseline => "baseline",
    }
}

/// An op is named by its side, type and name (what the two runs are matched by).
fn op_key(c: &C, i: usize) -> String {
    let o = &c.ops[i];
    format!("{}/{}/{}", side(o).to_lowercase(), o.op_type, o.op_name)
}

/// A change in µs, signed and coloured, in the page's time unit.
pub(super) fn signed_time<T: Send + Sync + 'static>(
    k: Cols<T>,
    (id, label, metric): (&'static str, &'static str, &'static str),
    get: fn(&T, usize) -> f64,
) -> Column<Row<T>> {
    Column::new(id, label, move |r: &Row<T>, _| view! { <SignedDuration metric value_us=get(&r.cols, r.i) key=k.row_key(r) /> }.into_any())
        .right()
        .width("104px")
        .sort_by(move |a, b| get(&a.cols, a.i).total_cmp(&get(&b.cols, b.i)))
        .csv(metric, move |r| get(&r.cols, r.i).to_string())
}

/// A change in percent of the baseline (`new` where the baseline is 0).
pub(super) fn change_ratio<T: Send + Sync + 'static>(k: Cols<T>, metric: &'static str, get: fn(&T, usize) -> Change) -> Column<Row<T>> {
    Column::new("ratio", "Δ %", move |r: &Row<T>, _| {
        let t = get(&r.cols, r.i);
        view! { <SignedRatio metric ratio=t.ratio now=t.current key=k.row_key(r) /> }.into_any()
    })
    .right()
    .width("84px")
    .sort_by(move |a, b| {
        let ratio = |r: &Row<T>| get(&r.cols, r.i).ratio.unwrap_or(f64::INFINITY);
        ratio(a).total_cmp(&ratio(b))
    })
    .csv(metric, move |r| get(&r.cols, r.i).ratio.map_or(String::new(), |x| x.to_string()))
}

/// A bar as long as the row's change is against the largest (`max`, > 0): red slower, green faster.
pub(super) fn delta_bar<T: Send + Sync + 'static>(max: f64, get: fn(&T, usize) -> f64) -> Column<Row<T>> {
    Column::new("bar", "", move |r: &Row<T>, _| {
        let d = get(&r.cols, r.i);
        let pct = d.abs() * 100.0 / max;
        view! { <div class="delta-bar" data-sign=sign(d) style=format!("width:{pct:.1}%")></div> }.into_any()
    })
    .class("bar-col")
    .width("120px")
}

/// The largest |change| of `changes`, or 1 where none moved (a bar's full length).
pub(super) fn largest(changes: impl Iterator<Item = f64>) -> f64 {
    let max = changes.map(f64::abs).fold(0.0, f64::max);
    if max > 0.0 {
        max
    } else {
        1.0
    }
}

fn op_columns(max_delta_us: f64) -> Vec<Column<Row<C>>> {
    let k = Cols::<C> { key: op_key };
    vec![
        k.text("side", "Side", "host_or_device", |c, i| side(&c.ops[i])).width("64px"),
        k.text("type", "Type", "type", |c, i| &c.ops[i].op_type).width("120px"),
        k.text("op", "Operation", "operation", |c, i| &c.ops[i].op_name).class("op").width("240px"),
        k.text("presence", "In", "presence", |c, i| presence(c.ops[i].presence)).width("76px"),
        k.time("self", "Self time", "self_time_us", |c, i| c.ops[i].self_time_us.current),
        k.time("base_self", "Baseline self", "baseline_self_time_us", |c, i| c.ops[i].self_time_us.baseline).width("112px"),
        signed_time(k, ("delta_self", "Δ self", "delta_self_time_us"), |c, i| c.ops[i].self_time_us.delta),
        change_ratio(k, "self_time_ratio", |c, i| c.ops[i].self_time_us),
        delta_bar(max_delta_us, |c, i| c.ops[i].self_time_us.delta),
        k.time("total", "Total time", "total_time_us", |c, i| c.ops[i].total_time_us.current),
        k.time("base_total", "Baseline total", "baseline_total_time_us", |c, i| c.ops[i].total_time_us.baseline).width("112px"),
        signed_time(k, ("delta_total", "Δ total", "delta_total_time_us"), |c, i| c.ops[i].total_time_us.delta),
        k.count("occurrences", "Occurrences", "occurrences", |c, i| c.ops[i].current_occurrences).width("104px"),
        k.count("base_occurrences", "Baseline occ.", "baseline_occurrences", |c, i| c.ops[i].baseline_occurrences).width("112px"),
    ]
}

/// The ops of `c`, largest change first; sort and filter in `state`.
#[component]
pub fn OpDeltaTable(c: Arc<C>, state: TableState, csv_name: String) -> impl IntoView {
    let max_delta_us = largest(c.ops.iter().map(|o| o.self_time_us.delta));
    let spec = TableSpec::new("ops-table rc-table", op_columns(max_delta_us))
        .testid("rc-table")
        .filter("Filter by op or type", "rc-filter", |r: &Row<C>| {
            let o = &r.cols.ops[r.i];
            vec![o.op_name.as_str(), o.op_type.as_str()]
        })
        .filter_always()
        .counts("rc-counts", "shown_ops", "total_ops")
        .csv(csv_name, "rc-csv")
        .row_attrs(|r, _| {
            let o = &r.cols.ops[r.i];
            vec![("data-op", o.op_name.clone()), ("data-side", side(o).to_lowercase()), ("data-presence", presence(o.presence).to_string())]
        })
        .row_title(|r| {
            let o = &r.cols.ops[r.i];
            format!("{} ({})", o.op_name, o.op_type)
        });
    view! { <Table spec rows=rows(&c, c.ops.len()) state /> }
}

/// An allocator is named by its host and memory ID.
fn memory_key(c: &C, i: usize) -> String {
    format!("{}/{}", c.memory[i].host, c.memory[i].memory_id)
}

/// A peak of one run, or a dash where the run has no such allocator.
fn peak_column(id: &'static str, label: &'static str, metric: &'static str, get: fn(&C, usize) -> Option<MemoryPeak>) -> Column<Row<C>> {
    Column::new(id, label, move |r: &Row<C>, _| match get(&r.cols, r.i) {
        Some(p) => view! { <Bytes metric value=p.peak_bytes key=memory_key(&r.cols, r.i) /> }.into_any(),
        None => view! { <span class="muted">"–"</span> }.into_any(),
    })
    .right()
    .width("110px")
    .sort_key(move |r| get(&r.cols, r.i).map(|p| p.peak_bytes))
    .csv(metric, move |r| get(&r.cols, r.i).map_or(String::new(), |p| p.peak_bytes.to_string()))
}

/// The allocators of both runs by host and memory ID, with the change of their peaks.
#[component]
pub fn MemoryTable(c: Arc<C>) -> impl IntoView {
    let max = c.memory.iter().filter_map(|m| m.delta_peak_bytes).map(i64::unsigned_abs).max().unwrap_or(0).max(1);
    let k = Cols::<C> { key: memory_key };
    let columns = vec![
        k.text("host", "Host", "host", |c, i| &c.memory[i].host).width("160px"),
        k.text("memory_id", "Memory ID", "memory_id", |c, i| &c.memory[i].memory_id),
        k.text("presence", "In", "presence", |c, i| presence(c.memory[i].presence)).width("76px"),
        peak_column("peak", "Peak", "peak_bytes", |c, i| c.memory[i].current),
        peak_column("base_peak", "Baseline peak", "baseline_peak_bytes", |c, i| c.memory[i].baseline).width("120px"),
        Column::new("delta", "Δ peak", |r: &Row<C>, _| match r.cols.memory[r.i].delta_peak_bytes {
            Some(d) => view! { <SignedBytes metric="delta_peak_bytes" value=d key=memory_key(&r.cols, r.i) /> }.into_any(),
            None => view! { <Text metric="delta_peak_bytes" value="" key=memory_key(&r.cols, r.i) shown="–" /> }.into_any(),
        })
        .right()
        .width("110px")
        .sort_key(|r| r.cols.memory[r.i].delta_peak_bytes)
        .csv("delta_peak_bytes", |r| r.cols.memory[r.i].delta_peak_bytes.map_or(String::new(), |d| d.to_string())),
        Column::new("bar", "", move |r: &Row<C>, _| {
            let d = r.cols.memory[r.i].delta_peak_bytes.unwrap_or(0);
            let pct = d.unsigned_abs() as f64 * 100.0 / max as f64;
            view! { <div class="delta-bar" data-sign=sign(d as f64) style=format!("width:{pct:.1}%")></div> }.into_any()
        })
        .class("bar-col")
        .width("120px"),
    ];
    let spec = TableSpec::new("rc-memory", columns).testid("rc-memory").max_height(320.0).row_attrs(|r, _| {
        let m = &r.cols.memory[r.i];
        vec![("data-host", m.host.clone()), ("data-memory-id", m.memory_id.clone()), ("data-presence", presence(m.presence).to_string())]
    });
    view! { <Table spec rows=rows(&c, c.memory.len()) state=TableState::new() /> }
}
