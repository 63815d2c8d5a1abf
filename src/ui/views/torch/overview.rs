//! The PyTorch Profiler's Overview: the average step time and its breakdown by category, each
//! step's breakdown as stacked bars and as a table, the GPU summary (utilisation, SM efficiency,
//! achieved occupancy, Tensor Cores) and the plugin's recommendations.

use super::torch_page;
use crate::engine::protocol::request;
use crate::engine::torch_page::{OverviewPage, StepCategory};
use crate::engine::FileDetails;
use crate::ui::charts::step_chart::{StepChart, StepChartKind, StepSeries};
use crate::ui::components::metric::{Count, Duration, Percent, Text};
use crate::ui::components::table::columnar::{rows, Row};
use crate::ui::components::table::{Column, Table, TableSpec, TableState};
use leptos::prelude::*;
use std::sync::Arc;

#[component]
pub fn TorchOverview(file_id: u32, details: FileDetails) -> impl IntoView {
    torch_page(
        ("torch-overview", "PyTorch Overview", "Reading the steps…"),
        &details,
        move || request::TorchOverview { file_id },
        |v| view! { <Page v /> }.into_any(),
    )
}

/// A category's colour: the same hue as XProf's step-time graph gives the matching category (device
/// compute, host compute, launch, input), so a user of both reads the bars alike.
fn colour(c: StepCategory) -> &'static str {
    match c {
        StepCategory::Kernel => "#59a14f",
        StepCategory::Memcpy => "#b07aa1",
        StepCategory::Memset => "#ff9da7",
        StepCategory::Communication => "#9c755f",
        StepCategory::Runtime => "#edc948",
        StepCategory::DataLoader => "#f28e2b",
        StepCategory::CpuExec => "#4e79a7",
        StepCategory::Other => "#8c8c8c",
    }
}

/// Each category's metric in the chart's figures (ms per step).
fn chart_metric(c: StepCategory) -> &'static str {
    match c {
        StepCategory::Kernel => "chart_kernel_ms",
        StepCategory::Memcpy => "chart_memcpy_ms",
        StepCategory::Memset => "chart_memset_ms",
        StepCategory::Communication => "chart_communication_ms",
        StepCategory::Runtime => "chart_runtime_ms",
        StepCategory::DataLoader => "chart_dataloader_ms",
        StepCategory::CpuExec => "chart_cpu_exec_ms",
        StepCategory::Other => "chart_other_ms",
    }
}

#[component]
fn Page(v: Arc<OverviewPage>) -> impl IntoView {
    let series: Vec<StepSeries> = v
        .categories
        .iter()
        .enumerate()
        .map(|(i, &c)| StepSeries {
            label: c.label(),
            metric: chart_metric(c),
            colour: colour(c),
            values: v.steps.iter().map(|s| s.times_us[i] / 1000.0).collect(),
        })
        .collect();
    let names = Arc::new(v.steps.iter().map(|s| s.name.clone()).collect::<Vec<_>>());
    view! {
        <div class="torch-columns">
            <section>
                <h2>"Step time breakdown"</h2>
                <Summary v=v.clone() />
            </section>
            <section>
                <h2>"GPU summary"</h2>
                <Gpus v=v.clone() />
            </section>
        </div>
        <section>
            <h2>"Step time by step"</h2>
            <StepChart series names kind=StepChartKind::Stacked unit="ms" label="Each step's time by category, stacked" testid="torch-step-chart" height=240.0 />
            <StepTable v=v.clone() />
        </section>
        <section>
            <h2>"Recommendations"</h2>
            <Recommendations v />
        </section>
    }
}

/// The average step and each category's share of it, with the run's environment.
#[component]
fn Summary(v: Arc<OverviewPage>) -> impl IntoView {
    let rows = v
        .average
        .iter()
        .map(|a| {
            let key = a.category.id();
            view! {
                <tr data-category=key>
                    <td><span class="sw" style=format!("background:{}", colour(a.category))></span>{a.category.label()}</td>
                    <td class="r"><Duration metric="average_time_us" value_us=a.time_us key=key /></td>
                    <td class="r"><Text metric="average_percent" value=a.percent.to_string() key=key shown=format!("{:.2} %", a.percent) /></td>
                    <td class="bar-col"><span class="bar" style=format!("width:{:.2}%;background:{}", a.percent.clamp(0.0, 100.0), colour(a.category))></span></td>
                </tr>
            }
        })
        .collect_view();
    let env = v
        .environment
        .iter()
        .map(|(k, val)| view! { <span>{k.clone()} ": " <Text metric="environment" value=val.clone() key=k.clone() /></span> })
        .collect_view();
    view! {
        <div class="fos-summary" data-testid="torch-summary">
            <span>"Average step " <Duration metric="average_step_time_us" value_us=v.average_step_us /></span>
            <span><Count metric="step_count" value=v.steps.len() as u64 /> " steps"</span>
            {env}
        </div>
        <table class="grid torch-breakdown" data-testid="torch-breakdown">
            <thead><tr><th>"Category"</th><th class="r">"Time"</th><th class="r">"Share"</th><th></th></tr></thead>
            <tbody>{rows}</tbody>
        </table>
    }
}

/// Each GPU's figures as the plugin lists them.
#[component]
fn Gpus(v: Arc<OverviewPage>) -> impl IntoView {
    if v.gpus.is_empty() {
        return view! { <p class="muted" data-testid="torch-no-gpu">"No GPU kernel ran in this trace: a CPU-only run."</p> }.into_any();
    }
    v.gpus
        .iter()
        .map(|g| {
            let figures = g
                .figures
                .iter()
                .map(|f| {
                    let figure = match f.percent {
                        Some(p) => view! { <Percent metric=f.metric() value=p / 100.0 key=g.gpu.clone() /> }.into_any(),
                        None => view! { <Text metric=f.metric() value=f.text.clone() key=g.gpu.clone() /> }.into_any(),
                    };
                    view! { <tr><td>{f.title.clone()}</td><td>{figure}</td></tr> }
                })
                .collect_view();
            view! {
                <table class="kv torch-gpu" data-gpu=g.gpu.clone()>
                    <caption>{format!("GPU {}", g.gpu)}</caption>
                    <tbody>{figures}</tbody>
                </table>
            }
        })
        .collect_view()
        .into_any()
}

/// The steps' table: each category's time and the step's total.
#[component]
fn StepTable(v: Arc<OverviewPage>) -> impl IntoView {
    let key = |p: &OverviewPage, i: usize| p.steps[i].name.clone();
    let mut columns: Vec<Column<Row<OverviewPage>>> = vec![Column::new("step", "Step", move |r: &Row<OverviewPage>, _| {
        view! { <Text metric="step" value=key(&r.cols, r.i) key=key(&r.cols, r.i) /> }.into_any()
    })
    .width("64px")
    .sort_key(|r| r.i)
    .csv("step", move |r| key(&r.cols, r.i))];
    for (ci, &c) in v.categories.iter().enumerate() {
        let time = move |r: &Row<OverviewPage>| r.cols.steps[r.i].times_us[ci];
        columns.push(
            Column::new(c.id(), c.label(), move |r: &Row<OverviewPage>, _| {
                let k = format!("{}|{}", key(&r.cols, r.i), c.id());
                view! { <Duration metric="step_time_us" value_us=time(r) key=k /> }.into_any()
            })
            .right()
            .sort_by(move |a, b| time(a).total_cmp(&time(b)))
            .csv(c.id(), move |r| time(r).to_string()),
        );
    }
    let total = |r: &Row<OverviewPage>| r.cols.steps[r.i].total_us;
    columns.push(
        Column::new("total", "Total", move |r: &Row<OverviewPage>, _| {
            view! { <Duration metric="step_total_us" value_us=total(r) key=key(&r.cols, r.i) /> }.into_any()
        })
        .right()
        .sort_by(move |a, b| total(a).total_cmp(&total(b)))
        .csv("total_us", move |r| total(r).to_string()),
    );
    let spec = TableSpec::new("ops-table compact torch-steps", columns).testid("torch-step-table").max_height(320.0);
    view! { <Table spec rows=rows(&v, v.steps.len()) state=TableState::new() /> }
}

/// The plugin's recommendations (its HTML: text with links to PyTorch's documentation).
#[component]
fn Recommendations(v: Arc<OverviewPage>) -> impl IntoView {
    let n = v.recommendations.len() as u64;
    view! {
        <div class="ovp-recommendation" data-testid="torch-recommendations">
            <p class="muted"><Count metric="recommendation_count" value=n /> {if n == 1 { " recommendation" } else { " recommendations" }}</p>
            {(n > 0).then(|| view! { <ul>{v.recommendations.iter().map(|r| view! { <li inner_html=r.clone()></li> }).collect_view()}</ul> })}
        </div>
    }
}
