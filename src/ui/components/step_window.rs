//! The op tables' "this step only" (Tidemark's own, beyond XProf): with a step selected in the
//! Overview, an op table (Framework op stats, HLO op stats, Op Profile, Kernel stats, Roofline) offers
//! to limit itself to the events that start inside the step's span; once limited it shows the chip
//! "Step N · 12.3 ms window ✕", whose ✕ restores the whole trace. The choice is kept in the URL hash
//! (`ops=step`) and holds for every op table that reads [`op_scope`].

use crate::analysis::op_metrics::TimeWindow;
use crate::engine::Scope;
use crate::ui::state::AppState;
use leptos::prelude::*;

/// The window the op tables are limited to: the selected step's span when "this step only" is on.
/// Reads the signals, so a request built with it follows them.
fn op_window(state: AppState) -> Option<TimeWindow> {
    let step = state.step.get().filter(|_| state.step_ops.get())?;
    TimeWindow::new(step.begin_ps, step.end_ps).ok()
}

/// What the op tools of file `file_id` read ([`AppState::op_file_ids`]), over the selected step's
/// window when the tables are limited to it ([`op_window`]).
pub fn op_scope(state: AppState, file_id: u32) -> Scope {
    Scope { file_ids: state.op_file_ids(file_id), window: op_window(state) }
}

/// Nothing without a selected step; else the button that limits the tables to it, or the chip that
/// says they are.
#[component]
pub fn StepWindowChip() -> impl IntoView {
    let state = expect_context::<AppState>();
    move || {
        let step = state.step.get()?;
        let window = TimeWindow::new(step.begin_ps, step.end_ps).ok()?;
        let duration = format!("{:.1} ms", window.duration_ms());
        Some(if state.step_ops.get() {
            view! {
                <span
                    class="step-chip"
                    data-testid="step-chip"
                    data-step=step.group_id.to_string()
                    data-begin-ps=step.begin_ps.to_string()
                    data-end-ps=step.end_ps.to_string()
                    title="Only the ops that start inside this step (Tidemark's own; XProf's tables cover the whole trace)"
                >
                    {format!("Step {} · {duration} window", step.group_id)}
                    <button
                        class="step-chip-clear"
                        data-testid="step-chip-clear"
                        title="Show the whole trace"
                        aria-label="Show the whole trace"
                        on:click=move |_| state.step_ops.set(false)
                    >
                        "✕"
                    </button>
                </span>
            }
            .into_any()
        } else {
            view! {
                <button
                    class="btn"
                    data-testid="step-only"
                    title=format!("Limit the table to the ops that start inside step {} ({duration})", step.group_id)
                    on:click=move |_| state.step_ops.set(true)
                >
                    {format!("Step {} only", step.group_id)}
                </button>
            }
            .into_any()
        })
    }
}
