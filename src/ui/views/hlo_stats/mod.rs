//! The HLO Op Stats tool: every HLO op the devices ran, with XProf's figures (times, shares, FLOP
//! rates, bandwidths, what bounds it, its HLO text and source) and XProf's charts of them. Every
//! number is the engine's ([`crate::engine::hlo_stats`]); this view lays them out.

mod charts;
mod table;

use super::op_page;
use crate::engine::hlo_stats::HloStatsView;
use crate::engine::protocol::request;
use crate::engine::FileDetails;
use crate::ui::components::metric::{Count, Duration, Percent, Text};
use crate::ui::components::step_window::{op_scope, StepWindowChip};
use crate::ui::components::table::TableState;
use crate::ui::state::AppState;
use crate::ui::use_engine::use_engine;
use leptos::prelude::*;
use std::sync::Arc;

#[component]
pub fn HloStats(file_id: u32, details: FileDetails) -> impl IntoView {
    let state = expect_context::<AppState>();
    let fetch = use_engine("HLO op stats", move || Some(request::HloStats { scope: op_scope(state, file_id) }));
    let csv_name = op_page::csv_name(&details, "hlo_stats");
    op_page::frame(
        "hlo-stats",
        &details,
        fetch,
        view! { <StepWindowChip /> }.into_any(),
        ("Reading the device ops…", "hlo-error"),
        move |v| view! { <Page v csv_name=csv_name.clone() /> }.into_any(),
    )
}

/// The reply laid out: the summary line, the charts and the table.
#[component]
fn Page(v: Arc<HloStatsView>, csv_name: String) -> impl IntoView {
    // A node's link from the Graph tool: its row found.
    let table_state = TableState::new();
    table_state.filter.set(expect_context::<AppState>().take_op_search());
    let n = v.columns.rank.len();
    if n == 0 {
        return view! {
            <div class="fos-empty" data-testid="hlo-empty">
                <p><strong>"No HLO ops ran on a device in this trace."</strong></p>
                <p class="muted">
                    "HLO op stats come from the device planes of a TPU or GPU trace whose kernels name their XLA op; "
                    "a CPU trace (XProf's table is empty there too) or a GPU trace of framework kernels has none."
                </p>
            </div>
        }
        .into_any();
    }
    let top = v.top_category.clone().map(|(category, share)| {
        view! {
            <span>
                "Most time in " <Text metric="top_category" value=category /> " ("
                <Percent metric="top_category_fraction" value=share /> " of op time)"
            </span>
        }
    });
    view! {
        <div class="fos-summary" data-testid="hlo-summary">
            <span><Count metric="hlo_ops" value=n as u64 /> " HLO ops"</span>
            <span><Duration metric="total_self_time_us" value_us=v.total_self_time_us /> " self time"</span>
            <span><Percent metric="op_time_fraction" value=v.op_time_fraction /> " of device time (the rest idle)"</span>
            {top}
        </div>
        {v.cost_note.clone().map(|n| view! { <p class="muted fos-note" data-testid="cost-note">{n}</p> })}
        <charts::HloCharts v=v.clone() />
        <table::HloTable v=v.clone() state=table_state csv_name />
    }
    .into_any()
}
