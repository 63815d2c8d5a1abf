//! XProf's "Chart Section" of the HLO Op Stats page: the self time pies (by category, by op, on
//! rematerialization, rematerialization by category, outside compilation), each grouped by the
//! engine ([`crate::engine::hlo_stats::HloCharts`]), and the per-op rate charts: XProf's measured
//! FLOP rate (its "model_flop_rate" column, GFLOP/s) and, beside it, the memory bandwidth (GiB/s),
//! one bar per op in the table's order (longest self time first).

use super::super::op_page::SelfTimePie;
use crate::engine::framework_op_stats::TypeSelfTime;
use crate::engine::hlo_stats::HloStatsView;
use crate::ui::charts::step_chart::{StepChart, StepChartKind, StepSeries};
use leptos::prelude::*;
use std::sync::Arc;

/// Bar colours: the rate charts read apart from each other and from the pies' first slices.
const FLOP_RATE_COLOUR: &str = "#59a14f";
const BANDWIDTH_COLOUR: &str = "#b07aa1";

/// What a Yes / No chart says where every op is in one group (XProf draws nothing there).
fn one_group(groups: &[TypeSelfTime], all_yes: &str, all_no: &str) -> String {
    match groups.first() {
        Some(g) if g.op_type == "Yes" => all_yes.to_string(),
        Some(_) => all_no.to_string(),
        None => "No op took self time.".to_string(),
    }
}

/// A Yes / No pie drawn only with both groups.
fn yes_no(groups: &[TypeSelfTime]) -> Vec<TypeSelfTime> {
    if groups.len() > 1 {
        groups.to_vec()
    } else {
        Vec::new()
    }
}

#[component]
pub fn HloCharts(v: Arc<HloStatsView>) -> impl IntoView {
    let c = &v.charts;
    let names = Arc::new(v.columns.hlo_op_name.clone());
    let rate = |label: &'static str, metric: &'static str, colour: &'static str, values: &[f64]| StepSeries {
        label,
        metric,
        colour,
        values: values.to_vec(),
    };
    let flops = vec![rate("Model GFLOP/s", "op_model_flop_rate", FLOP_RATE_COLOUR, &v.columns.model_flop_rate)];
    let bandwidth = vec![rate("Memory GiB/s", "op_memory_bw", BANDWIDTH_COLOUR, &v.columns.measured_memory_bw)];
    let any = |values: &[f64]| values.iter().any(|x| *x > 0.0);
    // The unit is in the title and the series' label: the axis's figures stay short enough for its margin.
    let rate_chart = |title: &'static str, series: Vec<StepSeries>, testid: &'static str, has: bool| {
        let body = if has {
            view! { <StepChart series names=names.clone() kind=StepChartKind::Stacked unit="" label=title testid height=200.0 /> }
                .into_any()
        } else {
            view! { <p class="muted" data-testid=testid>"No op has a figure for this."</p> }.into_any()
        };
        view! {
            <figure class="hlo-rate">
                <figcaption>{title}</figcaption>
                {body}
            </figure>
        }
    };
    let no_time = || "No op took self time.".to_string();
    // Title, testid, share metric, value metric, groups, what to say without a pie.
    let pies = [
        (
            "Time per HLO category",
            "hlo-pie-category",
            "category_self_time_fraction",
            Some("category_self_time_us"),
            c.by_category.clone(),
            no_time(),
        ),
        ("Time per HLO operation", "hlo-pie-op", "op_self_time_fraction", Some("op_self_time_us"), c.by_op.clone(), no_time()),
        (
            "Time spent on rematerialization",
            "hlo-pie-remat",
            "remat_self_time_fraction",
            None,
            yes_no(&c.rematerialization),
            one_group(&c.rematerialization, "Every op is a rematerialization.", "No op is a rematerialization."),
        ),
        (
            "Time spent on rematerialization per HLO category",
            "hlo-pie-remat-category",
            "remat_category_self_time_fraction",
            None,
            c.rematerialization_by_category.clone(),
            "No op is a rematerialization.".to_string(),
        ),
        (
            "Time spent on outside compilation",
            "hlo-pie-outside",
            "outside_self_time_fraction",
            None,
            yes_no(&c.outside_compilation),
            one_group(&c.outside_compilation, "Every op ran outside compilation.", "No op ran outside compilation."),
        ),
    ]
    .into_iter()
    .map(|(title, testid, metric, value_metric, groups, empty)| view! { <SelfTimePie title testid metric value_metric groups empty /> })
    .collect_view();
    view! {
        <details class="hlo-charts" open data-testid="hlo-charts">
            <summary>"Charts"</summary>
            <div class="fos-charts">{pies}</div>
            <div class="hlo-rates">
                {rate_chart("Measured GFLOP/s of each op (in decreasing self time)", flops, "hlo-flop-rate-chart", any(&v.columns.model_flop_rate))}
                {rate_chart("Memory bandwidth of each op, GiB/s (Tidemark's; XProf charts only the FLOP rate)", bandwidth, "hlo-bandwidth-chart", any(&v.columns.measured_memory_bw))}
            </div>
        </details>
    }
}
