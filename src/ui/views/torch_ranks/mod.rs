//! A PyTorch run's ranks, as the plugin's distributed view shows them: every rank's average step
//! split into computation, communication, memory copies and the rest, side by side with the ranks'
//! mean, so a straggler or a rank waiting on the others stands out; then the operators and kernels
//! of the ranks combined, or of one rank. The run is the selected file's folder, its Kineto traces
//! one per rank; every figure is the engine's ([`crate::engine::torch_run`]).

use crate::analysis::torch::ranks::{KernelFigures, OpFigures, StepSplit, TorchRun};
use crate::decode::log_dir::run_host;
use crate::decode::Format;
use crate::engine::protocol::request;
use crate::engine::FileDetails;
use crate::ui::components::metric::Count;
use crate::ui::components::table::columnar::{rows, Cols, Row};
use crate::ui::components::table::{Column, Table, TableSpec, TableState};
use crate::ui::state::{AppState, FileStatus};
use crate::ui::use_engine::use_engine;
use crate::ui::views::op_page;
use leptos::prelude::*;
use std::sync::Arc;

/// The engine ids of the selected run's ready Kineto traces (its ranks), in path order: the run's
/// other files (a snapshot beside the traces) are not ranks.
fn rank_ids(state: &AppState) -> Vec<u32> {
    let run_dir = state.selected_run_dir();
    let mut ranks: Vec<(String, u32)> = state.files.with(|fs| {
        fs.iter()
            .filter_map(|f| match &f.status {
                FileStatus::Ready { file_id, details } if details.format == Format::Kineto && run_host(&f.path).run_dir == run_dir => {
                    Some((f.path.clone(), *file_id))
                }
                _ => None,
            })
            .collect()
    });
    ranks.sort();
    ranks.into_iter().map(|(_, id)| id).collect()
}

#[component]
pub fn TorchRanks(details: FileDetails) -> impl IntoView {
    let state = expect_context::<AppState>();
    let fetch = use_engine("PyTorch ranks", move || {
        let file_ids = rank_ids(&state);
        (!file_ids.is_empty()).then_some(request::TorchRun { file_ids })
    });
    op_page::frame("torch-ranks", &details, fetch, ().into_any(), ("Reading the run's ranks…", "tr-error"), move |run| {
        view! { <Page run /> }.into_any()
    })
}

/// One row of the step table: a rank, or the ranks' mean.
struct SplitRow {
    key: String,
    worker: String,
    steps: usize,
    split: StepSplit,
}

/// The step split's parts: the metric (the engine's field), the legend's name and the CSS class
/// that colours it as the Overview colours the same category.
const PARTS: [(&str, &str, &str); 4] = [
    ("computation_us", "Computation", "computation"),
    ("communication_us", "Communication", "communication"),
    ("memcpy_us", "Memcpy", "memcpy"),
    ("other_us", "Other", "other"),
];

fn part(s: &StepSplit, metric: &str) -> f64 {
    match metric {
        "computation_us" => s.computation_us,
        "communication_us" => s.communication_us,
        "memcpy_us" => s.memcpy_us,
        _ => s.other_us,
    }
}

#[component]
fn Page(run: Arc<TorchRun>) -> impl IntoView {
    let mut splits: Vec<SplitRow> =
        run.ranks.iter().map(|r| SplitRow { key: r.key(), worker: r.worker.clone(), steps: r.steps, split: r.split }).collect();
    splits.push(SplitRow { key: "combined".into(), worker: "mean of the ranks".into(), steps: run.steps, split: run.split });
    let slowest = splits.iter().map(|r| r.split.step_us).fold(0.0, f64::max);
    // Which operators and kernels are shown: the ranks combined (`None`) or one rank's.
    let pick = RwSignal::new(None::<usize>);
    let keys: Vec<String> = run.ranks.iter().map(|r| r.key()).collect();
    let of_run = run.clone();
    let operators = Memo::new(move |_| {
        Arc::new(match pick.get() {
            Some(i) => of_run.ranks[i].operators.clone(),
            None => of_run.operators.clone(),
        })
    });
    let of_run = run.clone();
    let kernels = Memo::new(move |_| {
        Arc::new(match pick.get() {
            Some(i) => of_run.ranks[i].kernels.clone(),
            None => of_run.kernels.clone(),
        })
    });
    let workers = run.ranks.iter().map(|r| format!("{} ({})", r.key(), r.worker)).collect::<Vec<_>>().join(", ");
    view! {
        <p class="fos-summary" data-testid="tr-summary">
            <Count metric="rank_count" value=run.ranks.len() as u64 />
            {if run.ranks.len() == 1 { " rank: " } else { " ranks: " }}
            <span class="muted">{workers}</span>
            " · " <Count metric="steps" value=run.steps as u64 /> " steps each rank has"
        </p>
        {(run.ranks.len() == 1).then(|| view! {
            <p class="hint muted" data-testid="tr-one-rank">"This run has one rank: open a run folder with one trace per worker to compare ranks."</p>
        })}
        <section data-testid="tr-steps">
            <h2>"Average step by rank"</h2>
            <p class="hint muted">"Each rank's average step split as the distributed view splits it; bars to one scale, the slowest rank's step the full width."</p>
            <div class="tr-legend">
                {PARTS.iter().map(|(_, name, class)| view! { <span><span class=format!("sw tr-{class}")></span>{*name}</span> }).collect_view()}
            </div>
            {split_table(Arc::new(splits), slowest)}
        </section>
        <div class="ts-controls tr-pick" data-testid="tr-pick">
            <span class="muted">"Operators and kernels of"</span>
            <span class="segmented">
                <button class="seg" data-rank="combined" aria-pressed=move || pick.get().is_none().to_string() on:click=move |_| pick.set(None)>
                    "All ranks"
                </button>
                {keys.into_iter().enumerate().map(|(i, k)| {
                    let label = k.clone();
                    view! {
                        <button class="seg" data-rank=k aria-pressed=move || (pick.get() == Some(i)).to_string() on:click=move |_| pick.set(Some(i))>
                            {label}
                        </button>
                    }
                }).collect_view()}
            </span>
        </div>
        <section data-testid="tr-operators">
            <h2>{move || if pick.get().is_none() { "Operators, summed over the ranks" } else { "Operators of the rank" }}</h2>
            {move || operator_table(operators.get())}
        </section>
        <section data-testid="tr-kernels">
            <h2>{move || if pick.get().is_none() { "Kernels, summed over the ranks" } else { "Kernels of the rank" }}</h2>
            {move || kernel_table(kernels.get())}
        </section>
    }
}

/// The ranks and their mean: steps, the average step and its parts, and the parts as a bar.
fn split_table(splits: Arc<Vec<SplitRow>>, slowest: f64) -> impl IntoView {
    let k = Cols::<Vec<SplitRow>> { key: |t, i| t[i].key.clone() };
    let mut columns = vec![
        k.text("rank", "Rank", "rank", |t, i| &t[i].key).width("86px"),
        k.text("worker", "Worker", "worker", |t, i| &t[i].worker).width("140px"),
        k.count("steps", "Steps", "rank_steps", |t, i| t[i].steps as u64).width("64px"),
        k.time("step", "Step", "step_us", |t, i| t[i].split.step_us),
        k.time("computation", "Computation", "computation_us", |t, i| t[i].split.computation_us).width("104px"),
        k.time("communication", "Communication", "communication_us", |t, i| t[i].split.communication_us).width("118px"),
        k.time("memcpy", "Memcpy", "memcpy_us", |t, i| t[i].split.memcpy_us),
        k.time("other", "Other", "other_us", |t, i| t[i].split.other_us),
    ];
    columns.push(Column::new("bar", "Split", move |r: &Row<Vec<SplitRow>>, _| split_bar(&r.cols[r.i], slowest).into_any()));
    let spec = TableSpec::new("ops-table tr-steps", columns)
        .testid("tr-step-table")
        .row_attrs(|r: &Row<Vec<SplitRow>>, _| vec![("data-rank", r.cols[r.i].key.clone())])
        .row_class(|r: &Row<Vec<SplitRow>>| if r.cols[r.i].key == "combined" { "total" } else { "" });
    let n = splits.len();
    view! { <Table spec rows=rows(&splits, n) state=TableState::new() /> }
}

/// A rank's step as one bar, its parts in the Overview's colours, `slowest` the full width; each
/// part's time on hover.
fn split_bar(r: &SplitRow, slowest: f64) -> impl IntoView {
    let scale = if slowest > 0.0 { 100.0 / slowest } else { 0.0 };
    view! {
        <span class="tr-bar" data-rank=r.key.clone()>
            {PARTS.iter().map(|(metric, name, class)| {
                let v = part(&r.split, metric).max(0.0);
                view! {
                    <span class=format!("tr-seg tr-{class}") style=format!("width:{:.3}%", v * scale) title=format!("{name}: {v:.1} µs")></span>
                }
            }).collect_view()}
        </span>
    }
}

fn operator_table(ops: Arc<Vec<OpFigures>>) -> impl IntoView {
    let k = Cols::<Vec<OpFigures>> { key: |t, i| t[i].name.clone() };
    let columns = vec![
        k.text("name", "Operator", "operator", |t, i| &t[i].name).class("op").width("320px"),
        k.count("calls", "Calls", "calls", |t, i| t[i].calls).width("84px"),
        k.time("device_self", "Device self", "device_self_us", |t, i| t[i].device_self_us).width("108px"),
        k.time("device_total", "Device total", "device_total_us", |t, i| t[i].device_total_us).width("108px"),
        k.time("host_self", "Host self", "host_self_us", |t, i| t[i].host_self_us).width("108px"),
        k.time("host_total", "Host total", "host_total_us", |t, i| t[i].host_total_us).width("108px"),
    ];
    let spec = TableSpec::new("ops-table", columns)
        .testid("tr-operator-table")
        .filter("Filter by operator", "tr-operator-filter", |r: &Row<Vec<OpFigures>>| vec![r.cols[r.i].name.as_str()])
        .counts("tr-operator-counts", "shown_operators", "total_operators")
        .csv("torch_ranks_operators.csv".into(), "tr-operator-csv")
        .row_title(|r: &Row<Vec<OpFigures>>| r.cols[r.i].name.clone());
    let n = ops.len();
    view! { <Table spec rows=rows(&ops, n) state=TableState::new() /> }
}

fn kernel_table(kernels: Arc<Vec<KernelFigures>>) -> impl IntoView {
    if kernels.is_empty() {
        return view! { <p class="muted" data-testid="tr-no-kernels">"No kernel ran: the traces hold no GPU activity."</p> }.into_any();
    }
    let k = Cols::<Vec<KernelFigures>> { key: |t, i| t[i].name.clone() };
    let columns = vec![
        k.text("name", "Kernel", "kernel", |t, i| &t[i].name).class("op").width("420px"),
        k.count("calls", "Calls", "kernel_calls", |t, i| t[i].calls).width("84px"),
        k.time("total", "Total time", "kernel_total_us", |t, i| t[i].total_us).width("108px"),
    ];
    let spec = TableSpec::new("ops-table", columns)
        .testid("tr-kernel-table")
        .filter("Filter by kernel", "tr-kernel-filter", |r: &Row<Vec<KernelFigures>>| vec![r.cols[r.i].name.as_str()])
        .counts("tr-kernel-counts", "shown_kernels", "total_kernels")
        .csv("torch_ranks_kernels.csv".into(), "tr-kernel-csv")
        .row_title(|r: &Row<Vec<KernelFigures>>| r.cols[r.i].name.clone());
    let n = kernels.len();
    view! { <Table spec rows=rows(&kernels, n) state=TableState::new() /> }.into_any()
}
