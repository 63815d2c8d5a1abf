//! What two PyTorch runs add to the comparison ([`crate::engine::run_comparison::torch`]): their
//! ranks side by side (the average step and its split, with the changes) and each kernel's total
//! time in both runs. Every figure is the engine's.

use super::table::{change_ratio, delta_bar, largest, presence, signed_time};
use crate::engine::run_comparison::torch::TorchComparison as T;
use crate::ui::components::table::columnar::{rows, Cols, Row};
use crate::ui::components::table::{Table, TableSpec, TableState};
use leptos::prelude::*;
use std::sync::Arc;

fn rank_key(t: &T, i: usize) -> String {
    t.ranks[i].rank.clone()
}

fn kernel_key(t: &T, i: usize) -> String {
    t.kernels[i].name.clone()
}

/// A rank's figure `$field` (a `Change` of `RankDelta`) in this run, and its change: two columns
/// whose ids and metrics are the field's name and `delta_` before it.
macro_rules! split_columns {
    ($k:expr, $field:ident, $label:literal) => {
        [
            $k.time(stringify!($field), $label, stringify!($field), |t, i| t.ranks[i].$field.current).width("86px"),
            signed_time($k, (concat!("delta_", stringify!($field)), "Δ", concat!("delta_", stringify!($field))), |t, i| {
                t.ranks[i].$field.delta
            })
            .width("84px"),
        ]
    };
}

/// A worker, or a dash for a rank the run does not have.
fn worker(w: &Option<String>) -> &str {
    w.as_deref().unwrap_or("–")
}

/// Each rank of either run: its worker in both (a dash where a run lacks the rank), its average step
/// and that step's split, with the change from the baseline; ten figures a row, so the text columns
/// stay narrow and which runs have the rank is the row's `data-presence`.
#[component]
pub fn RankTable(t: Arc<T>) -> impl IntoView {
    let k = Cols::<T> { key: rank_key };
    let mut columns = vec![
        k.text("rank", "Rank", "rank", |t, i| &t.ranks[i].rank).width("72px"),
        k.text("worker", "Worker", "worker", |t, i| worker(&t.ranks[i].current_worker)).width("80px"),
        k.text("base_worker", "Baseline", "baseline_worker", |t, i| worker(&t.ranks[i].baseline_worker)).width("80px"),
    ];
    for pair in [
        split_columns!(k, step_us, "Step"),
        split_columns!(k, computation_us, "Compute"),
        split_columns!(k, communication_us, "Comm."),
        split_columns!(k, memcpy_us, "Memcpy"),
        split_columns!(k, other_us, "Other"),
    ] {
        columns.extend(pair);
    }
    let spec = TableSpec::new("rc-ranks", columns).testid("rc-ranks").max_height(320.0).row_attrs(|r: &Row<T>, _| {
        let rank = &r.cols.ranks[r.i];
        vec![("data-rank", rank.rank.clone()), ("data-presence", presence(rank.presence).to_string())]
    });
    view! { <Table spec rows=rows(&t, t.ranks.len()) state=TableState::new() /> }
}

/// Each kernel name of either run: its total time (summed over the ranks) in both, largest change
/// first.
#[component]
pub fn KernelDeltaTable(t: Arc<T>, csv_name: String) -> impl IntoView {
    let k = Cols::<T> { key: kernel_key };
    let max = largest(t.kernels.iter().map(|k| k.total_time_us.delta));
    let columns = vec![
        k.text("kernel", "Kernel", "kernel", |t, i| &t.kernels[i].name).class("op").width("320px"),
        k.text("presence", "In", "presence", |t, i| presence(t.kernels[i].presence)).width("76px"),
        k.time("total", "Total time", "total_time_us", |t, i| t.kernels[i].total_time_us.current),
        k.time("base_total", "Baseline total", "baseline_total_time_us", |t, i| t.kernels[i].total_time_us.baseline).width("120px"),
        signed_time(k, ("delta_total", "Δ total", "delta_total_time_us"), |t, i| t.kernels[i].total_time_us.delta),
        change_ratio(k, "total_time_ratio", |t, i| t.kernels[i].total_time_us),
        delta_bar(max, |t, i| t.kernels[i].total_time_us.delta),
        k.count("calls", "Calls", "calls", |t, i| t.kernels[i].current_calls).width("84px"),
        k.count("base_calls", "Baseline calls", "baseline_calls", |t, i| t.kernels[i].baseline_calls).width("120px"),
    ];
    let spec = TableSpec::new("ops-table rc-kernels", columns)
        .testid("rc-kernels")
        .filter("Filter by kernel", "rc-kernel-filter", |r: &Row<T>| vec![r.cols.kernels[r.i].name.as_str()])
        .counts("rc-kernel-counts", "shown_kernels", "total_kernels")
        .csv(csv_name, "rc-kernel-csv")
        .row_attrs(|r: &Row<T>, _| {
            let kd = &r.cols.kernels[r.i];
            vec![("data-kernel", kd.name.clone()), ("data-presence", presence(kd.presence).to_string())]
        })
        .row_title(|r: &Row<T>| r.cols.kernels[r.i].name.clone());
    view! { <Table spec rows=rows(&t, t.kernels.len()) state=TableState::new() /> }
}
