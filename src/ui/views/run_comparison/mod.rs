//! The Run comparison tool: the selected run (all its hosts) against the baseline run picked in the
//! file panel — each framework op's self and total time in both with the change, each host
//! allocator's peak, and the step time — as `pprof --diff_base` compares two device memory profiles.
//! Two PyTorch runs add their ranks side by side and each kernel's time (`torch`). Every number is
//! the engine's ([`crate::engine::run_comparison`]); this view lays them out.

mod table;
mod torch;

use super::op_page;
use crate::engine::protocol::request;
use crate::engine::run_comparison::{Change, Presence, RunComparison as Comparison, RunInfo};
use crate::engine::FileDetails;
use crate::ui::components::metric::{Count, Duration, SignedDuration, SignedRatio, Text};
use crate::ui::components::table::TableState;
use crate::ui::state::AppState;
use crate::ui::use_engine::use_engine;
use leptos::prelude::*;
use std::sync::Arc;

#[component]
pub fn RunComparison(details: FileDetails) -> impl IntoView {
    let state = expect_context::<AppState>();
    // A baseline equal to the selected run (after the run was switched) counts as none.
    let baseline = Memo::new(move |_| {
        let current = state.selected_run_dir();
        state.baseline_run.get().filter(|b| *b != current)
    });
    move || match baseline.get() {
        None => view! {
            <article class="fos ops-page" data-file=details.path.clone() data-testid="run-comparison" data-state="no-baseline">
                <div class="fos-empty" data-testid="rc-no-baseline">
                    <p><strong>"Pick a baseline run to compare this run with."</strong></p>
                    <p class="muted">
                        "Open a TensorBoard log folder with several runs (one folder per profiling session), then choose the "
                        "baseline in the file panel's Baseline selector: every framework op's time and every allocator's "
                        "peak in both runs, with the changes."
                    </p>
                </div>
            </article>
        }
        .into_any(),
        Some(run_dir) => view! { <Compared details=details.clone() baseline=run_dir /> }.into_any(),
    }
}

/// The selected run against the run in folder `baseline`.
#[component]
fn Compared(details: FileDetails, baseline: String) -> impl IntoView {
    let state = expect_context::<AppState>();
    let fetch = use_engine("Run comparison", move || {
        let (current, baseline) = (state.selected_run_ids(), state.run_ids(&baseline));
        (!current.is_empty() && !baseline.is_empty()).then_some(request::RunComparison { current, baseline })
    });
    let csv_name = op_page::csv_name(&details, "run_comparison");
    let kernels_csv_name = op_page::csv_name(&details, "run_comparison_kernels");
    let table_state = TableState::new();
    op_page::frame("run-comparison", &details, fetch, ().into_any(), ("Comparing the two runs…", "rc-error"), move |c| {
        view! { <Page c csv_name=csv_name.clone() kernels_csv_name=kernels_csv_name.clone() table_state=table_state.clone() /> }.into_any()
    })
}

fn run_label(r: &RunInfo) -> String {
    if r.run.is_empty() {
        "(opened files)".to_string()
    } else {
        r.run.clone()
    }
}

/// The reply laid out: which runs, the summary cards, the op table, the memory peaks, the notes.
#[component]
fn Page(c: Arc<Comparison>, csv_name: String, kernels_csv_name: String, table_state: TableState) -> impl IntoView {
    let unmatched: Vec<(String, &'static str)> = c
        .hosts
        .iter()
        .filter_map(|h| match h.presence {
            Presence::Both => None,
            Presence::OnlyInCurrent => Some((h.host.clone(), "only in this run")),
            Presence::OnlyInBaseline => Some((h.host.clone(), "only in the baseline")),
        })
        .collect();
    let device = (c.device_self_time_us.current != 0.0 || c.device_self_time_us.baseline != 0.0)
        .then(|| view! { <ChangeCard label="Device op self time" metrics=DEVICE_METRICS change=c.device_self_time_us /> });
    let step = c.step_time.map(|s| {
        let us = |ms: f64| ms * 1e3;
        let a = s.average_ms;
        let change = Change { current: us(a.current), baseline: us(a.baseline), delta: us(a.delta), ratio: a.ratio };
        view! {
            <ChangeCard label="Step time (average)" metrics=STEP_METRICS change />
            <div class="card">
                <div class="label">"Steps"</div>
                <div class="value"><Count metric="current_steps" value=s.current_steps as u64 /></div>
                <div class="sub">"baseline " <Count metric="baseline_steps" value=s.baseline_steps as u64 /></div>
            </div>
        }
    });
    // A PyTorch run's hosts are its ranks; its allocators are the PyTorch Memory view's (a note says so).
    let hosts = if c.torch.is_some() { " ranks)" } else { " hosts)" };
    let torch = c.torch.clone().map(|t| {
        let t = Arc::new(t);
        view! {
            <section>
                <h2>"Ranks: the average step and its time in computation, communication (NCCL), memcpy and other"</h2>
                <torch::RankTable t=t.clone() />
            </section>
            <section>
                <h2>"Kernels by change in total time " <span class="legend"><i class="grow"></i>"slower " <i class="shrink"></i>"faster"</span></h2>
                <torch::KernelDeltaTable t csv_name=kernels_csv_name />
            </section>
        }
    });
    let memory = c.torch.is_none().then(|| {
        view! {
            <section>
                <h2>"Memory peak by host and allocator"</h2>
                {if c.memory.is_empty() {
                    view! { <p class="muted" data-testid="rc-memory-empty">"Neither run has allocator events (a trace records them when memory profiling is on)."</p> }.into_any()
                } else {
                    view! { <table::MemoryTable c=c.clone() /> }.into_any()
                }}
            </section>
        }
    });
    view! {
        <p class="fos-summary" data-testid="rc-runs">
            <span>"Run " <Text metric="current_run" value=run_label(&c.current) /> " (" <Count metric="current_hosts" value=c.current.hosts.len() as u64 /> {hosts}</span>
            <span>"against baseline " <Text metric="baseline_run" value=run_label(&c.baseline) /> " (" <Count metric="baseline_hosts" value=c.baseline.hosts.len() as u64 /> {hosts}</span>
            {unmatched.into_iter().map(|(host, why)| view! { <span class="muted"><Text metric="unmatched_host" value=host.clone() key=host /> " " {why}</span> }).collect_view()}
        </p>
        <header class="summary-cards" data-testid="rc-summary">
            <ChangeCard label="Host op self time" metrics=HOST_METRICS change=c.host_self_time_us />
            {device}
            {step}
        </header>
        <section>
            <h2>"Ops by change in self time " <span class="legend"><i class="grow"></i>"slower " <i class="shrink"></i>"faster"</span></h2>
            <table::OpDeltaTable c=c.clone() state=table_state csv_name />
        </section>
        {torch}
        {memory}
        {(!c.notes.is_empty()).then(|| view! { <ul class="notes" data-testid="rc-notes">{c.notes.iter().map(|n| view! { <li>{n.clone()}</li> }).collect_view()}</ul> })}
    }
}

/// The metrics of a [`ChangeCard`]'s figures: this run's, the baseline's, the change, the ratio.
type CardMetrics = (&'static str, &'static str, &'static str, &'static str);

const HOST_METRICS: CardMetrics =
    ("current_host_self_time_us", "baseline_host_self_time_us", "delta_host_self_time_us", "host_self_time_ratio");
const DEVICE_METRICS: CardMetrics =
    ("current_device_self_time_us", "baseline_device_self_time_us", "delta_device_self_time_us", "device_self_time_ratio");
const STEP_METRICS: CardMetrics = ("current_step_time_us", "baseline_step_time_us", "delta_step_time_us", "step_time_ratio");

/// A figure of both runs: this run's value, the baseline's, the change and the change in percent.
#[component]
fn ChangeCard(label: &'static str, metrics: CardMetrics, change: Change) -> impl IntoView {
    let (current, baseline, delta, ratio) = metrics;
    view! {
        <div class="card">
            <div class="label">{label}</div>
            <div class="value"><Duration metric=current value_us=change.current /></div>
            <div class="sub">"baseline " <Duration metric=baseline value_us=change.baseline /></div>
            <div class="sub"><SignedDuration metric=delta value_us=change.delta /> " (" <SignedRatio metric=ratio ratio=change.ratio now=change.current /> ")"</div>
        </div>
    }
}
