//! The overview's lower sections: the device's top ops, the run environment, and XProf's
//! recommendation with links to the tools it names.

use crate::analysis::overview_page::Tip;
use crate::engine::overview_page::OverviewPageView;
use crate::ui::components::metric::{Count, Text};
use crate::ui::state::{AppState, Tool};
use leptos::prelude::*;
use std::sync::Arc;

/// The Tidemark tool for an XProf tool name a tip names, where Tidemark has it.
fn tool_named(xprof: &str) -> Option<Tool> {
    match xprof {
        "trace_viewer" => Some(Tool::TraceViewer),
        "framework_op_stats" => Some(Tool::FrameworkOpStats),
        "input_pipeline_analyzer" => Some(Tool::InputPipeline),
        "op_profile" => Some(Tool::OpProfile),
        "hlo_stats" => Some(Tool::HloStats),
        "kernel_stats" => Some(Tool::KernelStats),
        "roofline_model" => Some(Tool::RooflineModel),
        "memory_profile" => Some(Tool::MemoryProfile),
        _ => None,
    }
}

/// XProf's statements carry a link now and then (`<a href=…>the tf.data API</a>`): shown as text.
fn without_tags(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out
}

#[component]
pub(super) fn TopOps(v: Arc<OverviewPageView>) -> impl IntoView {
    let state = expect_context::<AppState>();
    if v.top_device_ops.is_empty() {
        let why = v.top_ops_missing.clone().unwrap_or_else(|| "the device ran no framework op".into());
        return view! {
            <div class="ovp-empty" data-testid="no-top-ops">
                <p>"No device ops to rank: " {why} "."</p>
                <p class="muted">
                    "The host's ops are in "
                    <a href="#" on:click=move |ev| { ev.prevent_default(); state.tool.set(Tool::FrameworkOpStats); }>"Framework ops"</a> "."
                </p>
            </div>
        }
        .into_any();
    }
    let rows = v
        .top_device_ops
        .iter()
        .map(|o| {
            view! {
                <tr data-op=o.name.clone()>
                    <td class="r"><Text metric="top_op_self_time_fraction" value=o.self_time_fraction.to_string() key=o.name.clone() shown=format!("{:.1} %", o.self_time_fraction * 100.0) /></td>
                    <td class="r"><Text metric="top_op_cumulative_time_fraction" value=o.cumulative_time_fraction.to_string() key=o.name.clone() shown=format!("{:.1} %", o.cumulative_time_fraction * 100.0) /></td>
                    <td>{o.category.clone()}</td>
                    <td class="clip" title=o.name.clone()><code>{o.name.clone()}</code></td>
                    <td class="r"><Text metric="top_op_flop_rate" value=o.flop_rate_gflops.to_string() key=o.name.clone() shown=format!("{:.2}", o.flop_rate_gflops) /></td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <table class="grid ovp-top-ops" data-testid="top-ops">
            <thead><tr>
                <th class="r">"Time"</th><th class="r">"Cumulative"</th><th>"Category"</th><th>"Operation"</th><th class="r">"GFLOP/s"</th>
            </tr></thead>
            <tbody>{rows}</tbody>
        </table>
    }
    .into_any()
}

#[component]
pub(super) fn RunEnvironment(v: Arc<OverviewPageView>) -> impl IntoView {
    view! {
        <table class="kv ovp-env" data-testid="run-environment">
            <tr><td>"Hosts"</td><td><Count metric="host_count" value=u64::from(v.host_count) /></td></tr>
            <tr><td>"Tasks"</td><td><Count metric="task_count" value=u64::from(v.task_count) /></td></tr>
            <tr><td>"Device type"</td><td><Text metric="device_type" value=v.device_type.clone() /></td></tr>
            <tr><td>"Device cores"</td><td><Count metric="device_core_count" value=v.device_core_count as u64 /></td></tr>
            <tr><td>"Training"</td><td><Text metric="is_training" value=v.is_training.to_string() shown=if v.is_training { "yes" } else { "no" } /></td></tr>
        </table>
    }
}

#[component]
pub(super) fn Recommendation(v: Arc<OverviewPageView>) -> impl IntoView {
    // XProf's tips, by heading, in its order.
    let mut groups: Vec<(String, Vec<Tip>)> = Vec::new();
    for t in &v.tips {
        match groups.iter_mut().find(|(d, _)| *d == t.description) {
            Some((_, tips)) => tips.push(t.clone()),
            None => groups.push((t.description.clone(), vec![t.clone()])),
        }
    }
    let statements = [v.statement.clone(), v.all_other_statement.clone(), without_tags(&v.summary_next_step)];
    view! {
        <div class="ovp-recommendation" data-testid="recommendation" data-bottleneck=v.bottleneck.clone()>
            {statements.into_iter().filter(|s| !s.is_empty()).map(|s| view! { <p data-testid="statement">{s}</p> }).collect_view()}
            {groups.into_iter().map(|(heading, tips)| view! {
                <h3>{heading}</h3>
                <ul>{tips.into_iter().map(|t| view! { <li><TipLink tip=t /></li> }).collect_view()}</ul>
            }).collect_view()}
        </div>
    }
}

/// A tip: the tool it names as a link that opens it (or its XProf name where Tidemark has no such
/// tool), a document as an external link, else its text.
#[component]
fn TipLink(tip: Tip) -> impl IntoView {
    let state = expect_context::<AppState>();
    match (tip.tool.as_deref(), tip.url.clone()) {
        (Some(name), _) => {
            let tool = tool_named(name);
            let label = tool.map_or_else(|| name.to_string(), |t| t.title().to_string());
            let link = match tool {
                Some(t) => view! {
                    <a href="#" data-testid="tip-tool" data-tool=t.slug() on:click=move |ev| { ev.prevent_default(); state.tool.set(t); }>{label}</a>
                }
                .into_any(),
                None => view! { <code title="Not in Tidemark yet">{label}</code> }.into_any(),
            };
            view! { {link} " (" {tip.text} ")" }.into_any()
        }
        (None, Some(url)) => view! { <a href=url target="_blank" rel="noopener noreferrer">{tip.text}</a> }.into_any(),
        (None, None) => view! { <span>{tip.text}</span> }.into_any(),
    }
}
