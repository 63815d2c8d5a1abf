//! The Input Pipeline tool (XProf's Input Pipeline Analyzer): is the program input-bound and by how
//! much, each step's time by category and its statistics, the share of each step spent waiting for
//! input, where the host's input time goes, and the input ops. Every number is the engine's
//! ([`crate::engine::input_pipeline`]); this view lays them out. Times are in ms, as XProf gives them.

mod host;
mod input_ops;
mod steps;

use crate::engine::input_pipeline::InputPipelineView;
use crate::engine::protocol::request;
use crate::engine::FileDetails;
use crate::ui::components::metric::Text;
use crate::ui::components::table::TableState;
use crate::ui::state::AppState;
use crate::ui::use_engine::{use_engine, Reply};
use leptos::prelude::*;
use std::sync::Arc;

#[component]
pub fn InputPipeline(file_id: u32, details: FileDetails) -> impl IntoView {
    let state = expect_context::<AppState>();
    let fetch = use_engine("Input pipeline", move || Some(request::InputPipeline { file_ids: state.op_file_ids(file_id) }));
    let state_attr = move || match fetch.reply.get() {
        Reply::Waiting => "loading",
        Reply::Ready(_) => "ready",
        Reply::Failed(_) | Reply::Rejected(_) => "failed",
    };
    // The input op table keeps its sort and filter while the page lives.
    let table_state = TableState::sorted("self", true);
    let csv_name =
        format!("{}.input_pipeline_ops.csv", details.name.trim_end_matches(".gz").trim_end_matches(".pb").trim_end_matches(".xplane"));
    view! {
        <article class="ipa" data-file=details.path.clone() data-testid="input-pipeline" data-state=state_attr>
            <div class="fos-controls">
                {move || fetch.elapsed_ms.get().map(|ms| view! { <span class="muted timing">{format!("answered in {ms:.0} ms")}</span> })}
            </div>
            {move || match fetch.reply.get() {
                Reply::Waiting => view! { <p class="muted loading">"Finding the steps…"</p> }.into_any(),
                Reply::Failed(error) => view! { <p class="fos-empty" data-testid="ipa-error">{error.detail()}</p> }.into_any(),
                Reply::Rejected(message) => view! { <p class="fos-empty" data-testid="ipa-error">{message}</p> }.into_any(),
                Reply::Ready(v) => view! { <Page v table_state=table_state.clone() csv_name=csv_name.clone() /> }.into_any(),
            }}
        </article>
    }
}

/// A figure in ms: `data-value` is the exact ms, shown with `digits` decimals.
pub(crate) fn ms(metric: &'static str, value: f64, digits: usize) -> impl IntoView {
    view! { <Text metric value=value.to_string() shown=format!("{value:.digits$} ms") /> }
}

/// The reply laid out: the verdict, the device side (steps), the host side (input time and ops).
#[component]
fn Page(v: Arc<InputPipelineView>, table_state: TableState, csv_name: String) -> impl IntoView {
    view! {
        <Verdict v=v.clone() />
        <steps::DeviceSide v=v.clone() />
        <host::HostSide v=v.clone() table_state csv_name />
    }
}

/// XProf's summary: the verdict in its words, its figures, what to read next, and its diagnostics.
#[component]
fn Verdict(v: Arc<InputPipelineView>) -> impl IntoView {
    let verdict = &v.verdict;
    let measured = verdict.classification != "unknown";
    view! {
        <section class="ipa-section ipa-verdict" data-testid="ipa-verdict" data-classification=verdict.classification.clone()>
            <h2>"Is the program input-bound?"</h2>
            <p class="ipa-statement"><Text metric="input_conclusion" value=verdict.statement.clone() /></p>
            {measured.then(|| view! {
                <p class="fos-summary">
                    <span>"Input " <Text metric="input_time_percent" value=verdict.input_percent.to_string() shown=format!("{:.1} %", verdict.input_percent) /> " of step time"</span>
                    <span>"All others " <Text metric="all_other_percent" value=verdict.all_other_percent.to_string() shown=format!("{:.1} %", verdict.all_other_percent) /></span>
                </p>
            })}
            {(!verdict.all_other_statement.is_empty()).then(|| view! { <p data-testid="ipa-all-other">{verdict.all_other_statement.clone()}</p> })}
            // XProf's advice may link to the tf.data guide; the text is the engine's own constant.
            <p class="muted" data-testid="ipa-next-step" inner_html=verdict.next_step.clone()></p>
            {v.device_steps_unsupported.then(|| view! {
                <p class="ipa-note" data-testid="ipa-device-note">
                    "XProf takes this trace's steps from its devices in a way Tidemark does not compute yet (a TPU trace with a step line: each TensorCore's steps), so no steps are shown."
                </p>
            })}
            {v.warnings.iter().map(|w| view! { <p class="ipa-warning" data-testid="ipa-warning">{"Warning: "}{w.clone()}</p> }).collect_view()}
        </section>
    }
}
