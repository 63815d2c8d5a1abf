//! The details card of the node under the pointer (or, when none is, the selected one): XProf's op
//! details — name, category, time, share, occurrences, FLOPS and bandwidth utilisation with their
//! colours, FLOP rate, bandwidths, the HLO expression, shape and layout, and the source line.

use super::colors::{bandwidth_color, flops_color};
use crate::engine::op_profile::OpProfileView;
use crate::ui::components::metric::{Count, Duration, Percent, Text};
use crate::ui::components::op_links::OpLinks;
use leptos::prelude::*;
use std::sync::Arc;

/// `v` with SI prefixes and `unit` (`12.34 TFLOP/s`), as XProf's `humanReadableText` with `si`.
fn si(v: f64, unit: &str) -> String {
    const PREFIXES: [&str; 7] = ["", "K", "M", "G", "T", "P", "E"];
    if v > 0.0 && v < 1.0 {
        return format!("{v:.2e} {unit}");
    }
    let i = if v <= 0.0 { 0 } else { ((v.log10() / 3.0).floor() as usize).min(PREFIXES.len() - 1) };
    format!("{:.2} {}{unit}", v / 1000f64.powi(i as i32), PREFIXES[i])
}

/// A utilisation as a bar in its colour, with the percentage.
fn util_bar(metric: &'static str, value: f64, color: String) -> impl IntoView {
    view! {
        <div class="opp-util">
            <div class="opp-util-track">
                <div class="opp-util-bar" style=format!("width:{:.2}%;background:{color}", value.min(1.0) * 100.0)></div>
            </div>
            <Percent metric value />
        </div>
    }
}

/// The card of node `node` of `view`, or a hint when there is none.
#[component]
pub fn Details(view: Arc<OpProfileView>, node: Signal<Option<u32>>) -> impl IntoView {
    move || {
        let Some(i) = node.get().map(|n| n as usize) else {
            return view! { <aside class="opp-card muted" data-testid="opp-card-empty">"Hover or select a row for its details."</aside> }
                .into_any();
        };
        let n = &view.nodes;
        let rows = |label: &'static str, body: AnyView| view! { <dt>{label}</dt><dd>{body}</dd> };
        let mut items: Vec<AnyView> = vec![
            rows("Time", view! { <Duration metric="card_time_us" value_us=n.raw_time_ps[i] as f64 / 1e6 /> }.into_any()).into_any(),
            rows("Share", view! { <Percent metric="card_time_fraction" value=n.time_fraction[i] /> }.into_any()).into_any(),
        ];
        if n.occurrences[i] > 0 {
            items.push(rows("Occurrences", view! { <Count metric="card_occurrences" value=n.occurrences[i] /> }.into_any()).into_any());
            items.push(
                rows("Average time", view! { <Duration metric="card_avg_time_us" value_us=n.avg_time_ps[i] / 1e6 /> }.into_any())
                    .into_any(),
            );
        }
        if let Some(u) = n.flops_utilization[i] {
            items.push(rows("FLOPS utilization", util_bar("card_flops_utilization", u, flops_color(Some(u))).into_any()).into_any());
        }
        for (k, label) in ["HBM bandwidth utilization", "On-chip read bandwidth utilization", "On-chip write bandwidth utilization"]
            .into_iter()
            .enumerate()
        {
            if let Some(u) = n.bandwidth_utilization[k][i] {
                let metric = ["card_hbm_utilization", "card_sram_read_utilization", "card_sram_write_utilization"][k];
                items.push(rows(label, util_bar(metric, u, bandwidth_color(Some(u))).into_any()).into_any());
            }
        }
        if let Some(r) = n.flop_rate[i].filter(|r| *r > 0.0) {
            items.push(
                rows("FLOP rate", view! { <Text metric="card_flop_rate" value=r.to_string() shown=si(r, "FLOP/s") /> }.into_any())
                    .into_any(),
            );
        }
        if let Some(r) = n.bf16_flop_rate[i].filter(|r| *r > 0.0 && view.device_type == "TPU") {
            items.push(
                rows(
                    "bf16 normalized FLOP rate",
                    view! { <Text metric="card_bf16_flop_rate" value=r.to_string() shown=si(r, "FLOP/s") /> }.into_any(),
                )
                .into_any(),
            );
        }
        for (k, label) in ["HBM bandwidth", "On-chip read bandwidth", "On-chip write bandwidth"].into_iter().enumerate() {
            if let Some(b) = n.bandwidth_bytes_per_s[k][i].filter(|b| *b > 0.0) {
                let metric = ["card_hbm_bytes_per_s", "card_sram_read_bytes_per_s", "card_sram_write_bytes_per_s"][k];
                items.push(rows(label, view! { <Text metric value=b.to_string() shown=si(b, "B/s") /> }.into_any()).into_any());
            }
        }
        let text_row = |label: &'static str, metric: &'static str, value: &str| {
            (!value.is_empty()).then(|| rows(label, view! { <code><Text metric value=value.to_string() /></code> }.into_any()))
        };
        items.extend(text_row("Shape and layout", "card_shape", &n.shape[i]).map(IntoAny::into_any));
        items.extend(text_row("Framework op", "card_provenance", &n.provenance[i]).map(IntoAny::into_any));
        items.extend(text_row("Source", "card_source", &n.source[i]).map(IntoAny::into_any));
        items.extend(text_row("HLO expression", "card_expression", &n.expression[i]).map(IntoAny::into_any));
        if n.is_op[i] {
            let op = crate::analysis::op_profile::instruction_name(&n.name[i]).to_string();
            let links = view! { <OpLinks module=n.memory_viewer_module[i].clone() op /> };
            items.push(rows("Show", links.into_any()).into_any());
        }
        let category = (!n.category[i].is_empty()).then(|| view! { <Text metric="card_category" value=n.category[i].clone() /> });
        let kind = if n.is_op[i] {
            "op"
        } else if i == 0 {
            "all ops"
        } else {
            "group"
        };
        view! {
            <aside class="opp-card" data-testid="opp-card" data-node=i>
                <header>
                    <i class="dot" style=format!("background:{}", flops_color(n.flops_utilization[i]))></i>
                    <strong><Text metric="card_name" value=n.name[i].clone() /></strong>
                    <div class="muted">{category.map(|c| view! { {c} " · " })}{kind}</div>
                </header>
                <dl>{items}</dl>
            </aside>
        }
        .into_any()
    }
}
