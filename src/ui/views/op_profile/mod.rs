//! The Op Profile tool (XProf's "HLO Op Profile"): where the device's time went, as a tree by program
//! or by category, idle time in or out, each row's share drawn as a bar, FLOPS and memory bandwidth
//! utilisation coloured as XProf colours them, XProf's "top 90%" and ops-limit controls, a search,
//! and the details card of the row under the pointer. Every number is the engine's
//! ([`crate::engine::op_profile`]); this view lays them out.

mod colors;
mod details;
mod rows;
mod tree;

use crate::engine::op_profile::{OpProfileGrouping, OpProfileView};
use crate::engine::protocol::request;
use crate::engine::FileDetails;
use crate::ui::components::metric::{Duration, Percent, Text};
use crate::ui::components::step_window::{op_scope, StepWindowChip};
use crate::ui::components::time_unit::TimeUnitSelect;
use crate::ui::state::AppState;
use crate::ui::use_engine::{use_engine, Reply};
use colors::{bandwidth_color, flops_color};
use leptos::prelude::*;
use rows::{Options, Shape};
use std::sync::Arc;
use tree::{Tree, TreeState};

/// XProf's ops limit: 10 to 100 children per node, in steps of 10.
const LIMITS: (usize, usize, usize) = (10, 100, 10);

/// The user's choices that do not change the engine's answer.
#[derive(Clone, Copy)]
struct Display {
    limit: RwSignal<usize>,
    top90: RwSignal<bool>,
    search: RwSignal<String>,
}

#[component]
pub fn OpProfile(file_id: u32, details: FileDetails) -> impl IntoView {
    let state = expect_context::<AppState>();
    // XProf's page opens by program, idle excluded, ten ops per node.
    let grouping = RwSignal::new(OpProfileGrouping::ByProgram);
    let include_idle = RwSignal::new(false);
    let display = Display { limit: RwSignal::new(LIMITS.0), top90: RwSignal::new(false), search: RwSignal::new(state.take_op_search()) };
    let fetch = use_engine("Op profile", move || {
        Some(request::OpProfile { scope: op_scope(state, file_id), grouping: grouping.get(), include_idle: include_idle.get() })
    });
    let state_attr = move || match fetch.reply.get() {
        Reply::Waiting => "loading",
        Reply::Ready(_) => "ready",
        Reply::Failed(_) | Reply::Rejected(_) => "failed",
    };
    let on_limit = move |ev| {
        let v: f64 = event_target_value(&ev).parse().unwrap_or(LIMITS.0 as f64);
        let rounded = ((v / LIMITS.2 as f64).round() as usize * LIMITS.2).clamp(LIMITS.0, LIMITS.1);
        display.limit.set(rounded);
    };
    view! {
        <article class="opp" data-file=details.path.clone() data-testid="op-profile" data-state=state_attr>
            <div class="opp-controls">
                <label class="field">
                    "Group by "
                    <select
                        data-testid="opp-group"
                        prop:value=move || if grouping.get() == OpProfileGrouping::ByCategory { "category" } else { "program" }
                        on:change=move |ev| grouping.set(if event_target_value(&ev) == "category" { OpProfileGrouping::ByCategory } else { OpProfileGrouping::ByProgram })
                    >
                        <option value="program">"Program"</option>
                        <option value="category">"Category"</option>
                    </select>
                </label>
                <label class="field" title="IDLE is the time the device ran no op">
                    <input type="checkbox" data-testid="opp-idle" prop:checked=move || include_idle.get() on:change=move |ev| include_idle.set(event_target_checked(&ev)) />
                    " Include idle"
                </label>
                <label class="field" title="Under each node, only the ops that make up its first 90 % of time">
                    <input type="checkbox" data-testid="opp-top90" prop:checked=move || display.top90.get() on:change=move |ev| display.top90.set(event_target_checked(&ev)) />
                    " Top 90%"
                </label>
                <label class="field" title="Ops shown per node, 10 to 100 (XProf's ops limit)">
                    "Ops limit "
                    <input type="number" class="opp-limit" data-testid="opp-limit" min=LIMITS.0 max=LIMITS.1 step=LIMITS.2 prop:value=move || display.limit.get().to_string() on:change=on_limit />
                </label>
                <input
                    type="search"
                    class="filter"
                    placeholder="Search ops"
                    data-testid="opp-search"
                    prop:value=move || display.search.get()
                    on:input=move |ev| display.search.set(event_target_value(&ev))
                />
                <StepWindowChip />
                <TimeUnitSelect />
                {move || fetch.elapsed_ms.get().map(|ms| view! { <span class="muted timing">{format!("answered in {ms:.0} ms")}</span> })}
            </div>
            {move || match fetch.reply.get() {
                Reply::Waiting => view! { <p class="muted loading">"Building the op tree…"</p> }.into_any(),
                Reply::Failed(error) => view! { <p class="fos-empty" data-testid="opp-message">{error.detail()}</p> }.into_any(),
                Reply::Rejected(message) => view! { <p class="fos-empty" data-testid="opp-message">{message}</p> }.into_any(),
                Reply::Ready(v) => view! { <Page v display /> }.into_any(),
            }}
        </article>
    }
}

/// Why a tree has no rows, in words.
fn empty_message(v: &OpProfileView) -> (&'static str, &'static str) {
    if v.device_type == "CPU_ONLY" {
        (
            "No device ops in this trace: it was recorded on CPU only.",
            "Op Profile shows the ops that ran on a TPU (its XLA Ops lines) or a GPU (its kernels); a CPU-only trace has neither.",
        )
    } else if v.include_idle {
        ("No ops ran on the device in this trace.", "The device's planes record no op.")
    } else {
        ("No ops ran on the device in this trace: its time was all idle.", "Tick \"Include idle\" to see the idle time.")
    }
}

/// The reply laid out: the summary, the tree and the card.
#[component]
fn Page(v: Arc<OpProfileView>, display: Display) -> impl IntoView {
    let children = Arc::new(v.nodes.children());
    // A tree that is one op (a trace with only idle time) shows its root as the row.
    let show_root = v.nodes.is_op.first().copied().unwrap_or(false);
    if v.nodes.len() <= 1 && !show_root {
        let (what, why) = empty_message(&v);
        return view! {
            <div class="fos-empty" data-testid="opp-message">
                <p><strong>{what}</strong></p>
                <p class="muted">{why}</p>
            </div>
        }
        .into_any();
    }
    let state = TreeState {
        expanded: RwSignal::new(rows::initial_expanded(&Shape {
            raw_time_ps: &v.nodes.raw_time_ps,
            num_children: &v.nodes.num_children,
            children: &children,
        })),
        selected: RwSignal::new(None),
        hovered: RwSignal::new(None),
    };
    let matches = {
        let v = v.clone();
        Memo::new(move |_| {
            let needle = display.search.get().trim().to_lowercase();
            (!needle.is_empty()).then(|| tree::matches(&v, &needle))
        })
    };
    // Leaving a search keeps the selected node on screen.
    Effect::new({
        let v = v.clone();
        move |was_searching: Option<bool>| {
            let searching = matches.with(Option::is_some);
            if was_searching == Some(true) && !searching {
                if let Some(s) = state.selected.get_untracked() {
                    state.expanded.update(|e| tree::reveal(&v, s, e));
                }
            }
            searching
        }
    });
    let lines = {
        let (v, children) = (v.clone(), children.clone());
        Memo::new(move |_| {
            let shape = Shape { raw_time_ps: &v.nodes.raw_time_ps, num_children: &v.nodes.num_children, children: &children };
            let expanded = state.expanded.get();
            matches.with(|m| {
                rows::lines(
                    &shape,
                    &Options {
                        limit: display.limit.get(),
                        top90: display.top90.get(),
                        expanded: &expanded,
                        matches: m.as_deref(),
                        show_root,
                    },
                )
            })
        })
    };
    let card_node = Signal::derive(move || state.hovered.get().or_else(|| state.selected.get()));
    let root_flops = v.nodes.flops_utilization[0];
    let bandwidth = ["HBM", "on-chip read", "on-chip write"]
        .into_iter()
        .enumerate()
        .map(|(k, label)| {
            let u = v.nodes.bandwidth_utilization[k][0];
            let metric = ["root_hbm_utilization", "root_sram_read_utilization", "root_sram_write_utilization"][k];
            view! {
                <span>
                    {label} " "
                    <b style=format!("color:{}", bandwidth_color(u))>
                        {match u {
                            Some(u) => view! { <Percent metric value=u /> }.into_any(),
                            None => view! { <span data-metric=metric data-value="">"-"</span> }.into_any(),
                        }}
                    </b>
                </span>
            }
        })
        .collect_view();
    let no_match = move || {
        (matches.with(Option::is_some) && lines.with(Vec::is_empty))
            .then(|| view! { <p class="muted" data-testid="opp-no-match">"No op matches the search."</p> })
    };
    view! {
        <div class="opp-summary">
            <span>
                "Overall " <Text metric="device_type" value=v.device_type.clone() /> " FLOPS utilization "
                <b style=format!("color:{}", flops_color(root_flops))>
                    {match root_flops {
                        Some(u) => view! { <Percent metric="root_flops_utilization" value=u /> }.into_any(),
                        None => view! { <span data-metric="root_flops_utilization" data-value="">"-"</span> }.into_any(),
                    }}
                </b>
            </span>
            <span>"Memory bandwidth utilization: " {bandwidth}</span>
            <span>"Time " <Duration metric="root_time_us" value_us=v.nodes.raw_time_ps[0] as f64 / 1e6 /></span>
        </div>
        {v.cost_note.clone().map(|n| view! { <p class="muted fos-note" data-testid="cost-note">{n}</p> })}
        <div class="opp-body">
            <div>
                <Tree view=v.clone() lines state />
                {no_match}
            </div>
            <details::Details view=v.clone() node=card_node />
        </div>
    }
    .into_any()
}
