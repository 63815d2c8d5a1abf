//! The "XLA ops (CPU)" tool: Tidemark's own table, not an XProf tool. On a CPU trace XProf's op tools
//! are empty, but the host threads that run XLA programs time every HLO op; the engine
//! ([`crate::analysis::xla_ops_cpu`]) gives one row per (module, HLO op), and this view lays it out
//! with links to each op's buffers and occurrences.

mod table;

use crate::analysis::xla_ops_cpu::XlaOpsCpu as Table;
use crate::engine::protocol::request;
use crate::engine::FileDetails;
use crate::ui::components::metric::{Count, Duration};
use crate::ui::components::table::TableState;
use crate::ui::components::time_unit::TimeUnitSelect;
use crate::ui::state::AppState;
use crate::ui::use_engine::{use_engine, Reply};
use leptos::prelude::*;
use std::sync::Arc;
use table::OpTable;

#[component]
pub fn XlaOpsCpu(file_id: u32, details: FileDetails) -> impl IntoView {
    let fetch = use_engine("XLA ops on CPU", move || Some(request::XlaOpsCpu { file_id }));
    let state_attr = move || match fetch.reply.get() {
        Reply::Waiting => "loading",
        Reply::Ready(_) => "ready",
        Reply::Failed(_) | Reply::Rejected(_) => "failed",
    };
    let csv_name = format!("{}.xla_ops_cpu.csv", details.name.trim_end_matches(".gz").trim_end_matches(".pb").trim_end_matches(".xplane"));
    let table_state = TableState::sorted("self", true);
    // A node's link from the Graph tool: its row found.
    table_state.filter.set(expect_context::<AppState>().take_op_search());
    view! {
        <article class="xoc" data-file=details.path.clone() data-testid="xla-ops-cpu" data-state=state_attr>
            <div class="xoc-controls">
                <span class="own-tool" data-testid="xoc-own" title="XProf has no such tool: its op tools are empty on CPU traces">
                    "Tidemark's own view — not in XProf"
                </span>
                <TimeUnitSelect />
                {move || fetch.elapsed_ms.get().map(|ms| view! { <span class="muted timing">{format!("answered in {ms:.0} ms")}</span> })}
            </div>
            {move || match fetch.reply.get() {
                Reply::Waiting => view! { <p class="muted loading">"Reading the host threads' XLA ops…"</p> }.into_any(),
                Reply::Failed(error) => view! { <p class="xoc-empty" data-testid="xoc-error">{error.detail()}</p> }.into_any(),
                Reply::Rejected(message) => view! { <p class="xoc-empty" data-testid="xoc-error">{message}</p> }.into_any(),
                Reply::Ready(t) => view! { <Page t table_state=table_state.clone() csv_name=csv_name.clone() /> }.into_any(),
            }}
        </article>
    }
}

/// The reply laid out: the summary line and the table.
#[component]
fn Page(t: Arc<Table>, table_state: TableState, csv_name: String) -> impl IntoView {
    if t.rows.is_empty() {
        return view! {
            <div class="xoc-empty" data-testid="xoc-empty">
                <p><strong>"No XLA ops ran on this trace's host threads."</strong></p>
                <p class="muted">
                    "They come from JAX (or TensorFlow jit_compile) programs run by XLA on CPU, whose runtime threads "
                    "(tf_XLAExecute, tf_XLAEigen) time each HLO op. A GPU or TPU trace has its ops in XProf's op tools instead."
                </p>
            </div>
        }
        .into_any();
    }
    let unresolved = t.unresolved_modules.join(", ");
    view! {
        <div class="xoc-summary">
            <span><Count metric="xla_op_rows" value=t.rows.len() as u64 /> " ops"</span>
            <span><Count metric="xla_op_runs" value=t.total_occurrences /> " runs"</span>
            <span><Duration metric="xla_op_self_time_us" value_us=t.total_self_time_ps as f64 / 1e6 /> " self time"</span>
            <span><Count metric="xla_op_threads" value=t.threads.len() as u64 /> " threads"</span>
        </div>
        {(!unresolved.is_empty()).then(|| view! {
            <p class="muted" data-testid="xoc-unresolved">
                "Not in the trace's HLO modules, so shown without opcode and category: " {unresolved}
            </p>
        })}
        <OpTable rows=Arc::new(t.rows.clone()) state=table_state csv_name />
    }
    .into_any()
}
