//! The Framework Op Stats tool (XProf's "TensorFlow Stats"): every framework op timed on the host
//! threads and on the devices, with XProf's figures, the self time by op type of each side as two
//! pie charts, and the `IDLE` rows in or out. Every number is the engine's
//! ([`crate::engine::framework_op_stats`]); this view lays them out.

mod table;

use super::op_page::SelfTimePie;
use crate::engine::framework_op_stats::{FrameworkOpStatsView, TypeSelfTime};
use crate::engine::protocol::request;
use crate::engine::FileDetails;
use crate::ui::components::metric::{Count, Duration, Text};
use crate::ui::components::step_window::{op_scope, StepWindowChip};
use crate::ui::components::table::TableState;
use crate::ui::components::time_unit::TimeUnitSelect;
use crate::ui::state::AppState;
use crate::ui::use_engine::{use_engine, Reply};
use leptos::prelude::*;
use std::sync::Arc;
use table::{OpTable, Side};

#[component]
pub fn FrameworkOpStats(file_id: u32, details: FileDetails) -> impl IntoView {
    let state = expect_context::<AppState>();
    // XProf's page starts with the IDLE rows in.
    let include_idle = RwSignal::new(true);
    let side = RwSignal::new(Side::Both);
    // Sort and filter outlive the table, which is built again when the IDLE toggle brings new rows.
    let table_state = TableState::new();
    let fetch = use_engine("Framework op stats", move || {
        Some(request::FrameworkOpStats { scope: op_scope(state, file_id), include_idle: include_idle.get() })
    });
    let state_attr = move || match fetch.reply.get() {
        Reply::Waiting => "loading",
        Reply::Ready(_) => "ready",
        Reply::Failed(_) | Reply::Rejected(_) => "failed",
    };
    let csv_name =
        format!("{}.framework_op_stats.csv", details.name.trim_end_matches(".gz").trim_end_matches(".pb").trim_end_matches(".xplane"));
    view! {
        <article class="fos" data-file=details.path.clone() data-testid="framework-op-stats" data-state=state_attr>
            <div class="fos-controls">
                <label class="field" title="XProf's two tables: with the IDLE rows (shares of all time) or without them (shares of op time)">
                    <input
                        type="checkbox"
                        data-testid="fos-idle"
                        prop:checked=move || include_idle.get()
                        on:change=move |ev| include_idle.set(event_target_checked(&ev))
                    />
                    " Include IDLE time"
                </label>
                <label class="field">
                    "Ops on "
                    <select
                        data-testid="fos-side"
                        on:change=move |ev| side.set(Side::parse(&event_target_value(&ev)))
                        prop:value=move || side.get().slug()
                    >
                        {Side::ALL.into_iter().map(|s| view! { <option value=s.slug()>{s.label()}</option> }).collect_view()}
                    </select>
                </label>
                <StepWindowChip />
                <TimeUnitSelect />
                {move || fetch.elapsed_ms.get().map(|ms| view! { <span class="muted timing">{format!("answered in {ms:.0} ms")}</span> })}
            </div>
            {move || match fetch.reply.get() {
                Reply::Waiting => view! { <p class="muted loading">"Replaying the host threads…"</p> }.into_any(),
                Reply::Failed(error) => view! { <p class="fos-empty" data-testid="fos-error">{error.detail()}</p> }.into_any(),
                Reply::Rejected(message) => view! { <p class="fos-empty" data-testid="fos-error">{message}</p> }.into_any(),
                Reply::Ready(v) => view! { <Page v side table_state=table_state.clone() csv_name=csv_name.clone() /> }.into_any(),
            }}
        </article>
    }
}

/// The reply laid out: the summary, the two charts and the table.
#[component]
fn Page(v: Arc<FrameworkOpStatsView>, side: RwSignal<Side>, table_state: TableState, csv_name: String) -> impl IntoView {
    if v.table.rows.is_empty() {
        return view! {
            <div class="fos-empty" data-testid="fos-empty">
                <p><strong>"No framework ops in this trace."</strong></p>
                <p class="muted">
                    "They come from the host threads' TensorFlow or JAX op events and from device kernels naming their op; "
                    "a trace of an XLA program on CPU (JAX) has neither, and an HLO module or pprof file is no trace."
                </p>
            </div>
        }
        .into_any();
    }
    let host_rows = v.table.rows.iter().filter(|r| !r.on_device).count() as u64;
    let device_rows = v.table.rows.len() as u64 - host_rows;
    let inflated = v.table.rows.iter().filter(|r| r.occurrences != r.true_occurrences).count() as u64;
    view! {
        <div class="fos-summary">
            <span>"Device " <Text metric="device_type" value=v.device_type.clone() /></span>
            <span>"Task " <Text metric="task_type" value=v.table.task_type.clone() /></span>
            <span><Count metric="host_ops" value=host_rows /> " host ops"</span>
            <span><Count metric="device_ops" value=device_rows /> " device ops"</span>
            <span>"Self time: host " <Duration metric="host_self_time_us" value_us=v.host_self_time_us /></span>
            <span>"device " <Duration metric="device_self_time_us" value_us=v.device_self_time_us /></span>
        </div>
        <div class="fos-charts">
            <TypeChart title="On device: self time by type" testid="fos-pie-device" metric="device_type_self_time_fraction" by_type=v.device_by_type.clone() />
            <TypeChart title="On host: self time by type" testid="fos-pie-host" metric="host_type_self_time_fraction" by_type=v.host_by_type.clone() />
        </div>
        {(inflated > 0).then(|| view! {
            <p class="muted fos-note" data-testid="fos-true-note">
                <span class="true-count">"ran N"</span>
                " beside an occurrence count: XProf counts every allocator event that names an op as one more occurrence of it; "
                "N is how often the op really ran (" <Count metric="inflated_rows" value=inflated /> " rows differ)."
            </p>
        })}
        <OpTable rows=Arc::new(v.table.rows.clone()) side state=table_state csv_name />
    }
    .into_any()
}

/// One side's pie chart, or a line saying the side has no ops.
#[component]
fn TypeChart(title: &'static str, testid: &'static str, metric: &'static str, by_type: Vec<TypeSelfTime>) -> impl IntoView {
    let empty = if by_type.is_empty() { "No ops on this side in this trace." } else { "The ops on this side took no self time." };
    view! { <SelfTimePie title testid metric groups=by_type empty=empty.to_string() value_metric=None /> }
}
