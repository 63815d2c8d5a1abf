//! The Roofline tool (XProf's Roofline Model): every HLO op's FLOP rate against its operational
//! intensity on log–log axes, under the device's roofs (peak compute, and each memory's peak
//! bandwidth up to its ridge point), with the ops in a table beside the chart. Every number is the
//! engine's ([`crate::engine::roofline_model`]); where the engine refuses a trace the page says why.

mod chart;
mod table;

use super::op_page;
use crate::engine::protocol::request;
use crate::engine::roofline_model::RooflineModelView;
use crate::engine::FileDetails;
use crate::ui::components::metric::{Count, Text};
use crate::ui::components::step_window::{op_scope, StepWindowChip};
use crate::ui::components::table::TableState;
use crate::ui::state::AppState;
use crate::ui::use_engine::use_engine;
use leptos::prelude::*;
use std::sync::Arc;

#[component]
pub fn RooflineModel(file_id: u32, details: FileDetails) -> impl IntoView {
    let state = expect_context::<AppState>();
    // XProf's page starts with the infeed and outfeed ops in.
    let include_infeed_outfeed = RwSignal::new(true);
    let table_state = TableState::new();
    // A node's link from the Graph tool: its row found.
    table_state.filter.set(state.take_op_search());
    let fetch = use_engine("Roofline model", move || {
        Some(request::RooflineModel { scope: op_scope(state, file_id), include_infeed_outfeed: include_infeed_outfeed.get() })
    });
    let csv_name = op_page::csv_name(&details, "roofline_model");
    let controls = view! {
        <StepWindowChip />
        <label class="field" title="XProf's two record sets: with the infeed and outfeed ops, or without them">
            <input
                type="checkbox"
                data-testid="roofline-infeed"
                prop:checked=move || include_infeed_outfeed.get()
                on:change=move |ev| include_infeed_outfeed.set(event_target_checked(&ev))
            />
            " Include infeed/outfeed"
        </label>
    };
    op_page::frame("roofline", &details, fetch, controls.into_any(), ("Reading the device ops…", "roofline-error"), move |v| {
        view! { <Page v table_state=table_state.clone() csv_name=csv_name.clone() /> }.into_any()
    })
}

/// The reply laid out: the device's roofs, the chart and the table.
#[component]
fn Page(v: Arc<RooflineModelView>, table_state: TableState, csv_name: String) -> impl IntoView {
    if v.records.rank.is_empty() {
        return view! {
            <div class="fos-empty" data-testid="roofline-empty">
                <p><strong>"No device ops to place under a roofline in this trace."</strong></p>
                <p class="muted">
                    "The roofline needs HLO ops timed on a TPU or GPU with their FLOPs and bytes; a CPU trace has none "
                    "(XProf's roofline is empty there too)."
                </p>
            </div>
        }
        .into_any();
    }
    let hovered = RwSignal::new(None::<usize>);
    let roofs = v
        .roofs
        .iter()
        .map(|r| {
            view! {
                <span class="roof" data-roof=r.name.clone()>
                    <i style=format!("background:{}", chart::bound_colour(&r.name))></i>
                    {r.name.clone()} " "
                    <Text metric="peak_bw" value=r.peak_bw_gib_per_s.to_string() key=r.peak_metric.clone() shown=format!("{:.1} GiB/s", r.peak_bw_gib_per_s) />
                    ", ridge at "
                    <Text metric="ridge_point" value=r.ridge_point.to_string() key=r.name.clone() shown=format!("{:.2} FLOP/byte", r.ridge_point) />
                </span>
            }
        })
        .collect_view();
    // XProf derives a GPU's peak from its vendor and architecture; a plane naming no vendor (older
    // TensorFlow traces) gets 0, which is no roof to draw.
    let peak_text = if v.peak_flop_rate > 0.0 {
        format!("{:.0} GFLOP/s", v.peak_flop_rate)
    } else {
        "unknown (the trace names no GPU vendor; XProf shows 0)".to_string()
    };
    view! {
        <div class="fos-summary" data-testid="roofline-summary">
            <span>"Device " <Text metric="device_type" value=v.device_type.clone() /></span>
            <span class="roof">
                <i style=format!("background:{}", chart::bound_colour("Compute"))></i>
                "Peak compute "
                <Text metric="peak_flop_rate" value=v.peak_flop_rate.to_string() shown=peak_text />
            </span>
            {roofs}
            <span><Count metric="records" value=v.records.rank.len() as u64 /> " records (the program and its ops)"</span>
        </div>
        {v.warnings.iter().map(|w| view! { <p class="muted fos-note" data-testid="roofline-warning">{w.clone()}</p> }).collect_view()}
        {v.cost_note.clone().map(|n| view! { <p class="muted fos-note" data-testid="cost-note">{n}</p> })}
        <div class="roofline-body">
            <chart::RooflineChart v=v.clone() hovered />
            <div class="roofline-table">
                <table::RooflineTable v hovered state=table_state csv_name />
            </div>
        </div>
    }
    .into_any()
}
