//! The Trace Viewer tool: every event of a trace, processes (planes) and threads (lines) as XProf
//! names and orders them, drawn on one canvas from the engine's level-of-detail answer. The view asks
//! the engine for the outline once, then for spans whenever the window or width changes; an event's
//! details, the search matches and a range's summary are asked for on demand, and so are the flow
//! arrows and the memory counter tracks. Nothing is computed here but the mapping of times and rows
//! to pixels.

mod details;
mod flow_list;
mod layout;
mod overlays;
mod search;
mod summary;
mod tracks;

use crate::analysis::trace_viewer::store::TraceOutline;
use crate::engine::protocol::request;
use crate::ui::charts::axis::decimals;
use crate::ui::charts::viewport::Viewport;
use crate::ui::components::metric::{Count, Text};
use crate::ui::state::AppState;
use crate::ui::use_engine::{use_engine, Reply};
use crate::units::duration_us;
use leptos::prelude::*;
use std::sync::Arc;

/// The narrowest window the view zooms to, in ps.
const MIN_WINDOW_PS: f64 = 1_000.0;

/// A duration or time offset in ps, in words (`12.34 µs`).
fn ps_text(ps: i64) -> String {
    duration_us(ps as f64 / 1e6)
}

/// A time `t_ps` (from the trace's start) written precisely enough to tell apart times `step_ps`
/// apart: in the largest unit that keeps a step at least 0.1 of it (`3040.5 ms`, `12.250 µs`).
fn time_label(t_ps: f64, step_ps: f64) -> String {
    let (unit_ps, unit) =
        [(1e12, "s"), (1e9, "ms"), (1e6, "µs"), (1e3, "ns")].into_iter().find(|&(u, _)| step_ps >= u / 10.0).unwrap_or((1.0, "ps"));
    format!("{:.*} {unit}", decimals(step_ps / unit_ps), t_ps / unit_ps)
}

/// The trace's time span, at least [`MIN_WINDOW_PS`] wide.
fn full_span(o: &TraceOutline) -> (i64, i64) {
    (o.start_ps, o.end_ps.max(o.start_ps + MIN_WINDOW_PS as i64))
}

/// `v` kept inside the trace and at least [`MIN_WINDOW_PS`] wide, as a window to store: `None` for
/// the whole trace.
fn clamp_window(full: (i64, i64), v: Viewport) -> Option<(i64, i64)> {
    let v = v.within(Viewport::x_range(full.0 as f64, full.1 as f64), MIN_WINDOW_PS, 0.0);
    let w = (v.x0.round() as i64, v.x1.round() as i64);
    (w != full).then_some(w)
}

/// Half the width of the window a link to one moment opens (1 ms each side).
const LINK_HALF_WINDOW_PS: i64 = 1_000_000_000;

/// Opens the Trace Viewer of the selected file on the moment `time_ps` (centred in a 2 ms window,
/// clamped to the trace when it is drawn), for links from the other tools.
pub fn show_in_trace(state: AppState, time_ps: i64) {
    state.trace_window.set(Some((time_ps - LINK_HALF_WINDOW_PS, time_ps + LINK_HALF_WINDOW_PS)));
    state.trace_range.set(None);
    state.tool.set(crate::ui::state::Tool::TraceViewer);
}

/// Opens the Trace Viewer on the span `[from_ps, to_ps]` (an allocation's lifetime), selected as a
/// range (so its summary lists what ran meanwhile) and framed with a tenth of its width each side.
pub fn show_span_in_trace(state: AppState, from_ps: i64, to_ps: i64) {
    let margin = ((to_ps - from_ps) / 10).max(LINK_HALF_WINDOW_PS / 10);
    state.trace_window.set(Some((from_ps - margin, to_ps + margin)));
    state.trace_range.set((to_ps > from_ps).then_some((from_ps, to_ps)));
    state.tool.set(crate::ui::state::Tool::TraceViewer);
}

#[component]
pub fn TraceViewer(file_id: u32) -> impl IntoView {
    let outline = use_engine("Trace Viewer outline", move || Some(request::TraceOutline { file_id }));
    move || match outline.reply.get() {
        Reply::Waiting => view! { <p class="muted loading" data-testid="trace-loading">"Indexing the trace's events…"</p> }.into_any(),
        Reply::Failed(e) => view! { <p class="banner error" data-testid="trace-error">{e.detail()}</p> }.into_any(),
        Reply::Rejected(e) => view! { <p class="banner error" data-testid="trace-error">{e}</p> }.into_any(),
        Reply::Ready(o) if o.event_count == 0 => {
            view! { <p class="muted" data-testid="trace-empty">"This trace has no events to show."</p> }.into_any()
        }
        Reply::Ready(o) => view! { <TracePage file_id outline=o /> }.into_any(),
    }
}

/// The page once the outline is in: the bar (figures, search, export), the tracks, and the panels
/// of the selected event and range.
#[component]
fn TracePage(file_id: u32, outline: Arc<TraceOutline>) -> impl IntoView {
    let state = expect_context::<AppState>();
    let full = full_span(&outline);
    // A window from a link or the URL may lie partly outside the trace: drawn clamped to it.
    let window = Memo::new(move |_| {
        state.trace_window.get().and_then(|(a, b)| clamp_window(full, Viewport::x_range(a as f64, b as f64))).unwrap_or(full)
    });
    // In the URL hash, so a reload or a shared link opens the same event.
    let selected_event = state.trace_event;
    let show_flows = RwSignal::new(false);
    let thread_count: usize = outline.processes.iter().map(|p| p.threads.len()).sum();
    let window_text = move || {
        let (a, b) = window.get();
        let step = (b - a) as f64 / 100.0;
        format!("{} – {} (window {})", time_label((a - full.0) as f64, step), time_label((b - full.0) as f64, step), ps_text(b - a))
    };
    // The panels (the selected event, its flows, the range's summary) are built in a task of their
    // own just after this one, which builds the bar and the tracks: the outline's reply is then not
    // one long task.
    let panels = RwSignal::new(false);
    set_timeout(
        move || {
            panels.try_set(true);
        },
        std::time::Duration::ZERO,
    );
    let tracks_outline = outline.clone();
    view! {
        <section class="trace-viewer" data-testid="trace-viewer">
            <div class="tv-bar">
                <span data-testid="trace-figures">
                    <Count metric="trace_event_count" value=outline.event_count /> " events · "
                    <Count metric="trace_process_count" value=outline.processes.len() as u64 />
                    {if outline.processes.len() == 1 { " process · " } else { " processes · " }}
                    <Count metric="trace_thread_count" value=thread_count as u64 />
                    {if thread_count == 1 { " thread · " } else { " threads · " }}
                    <Text metric="trace_duration_ps" value=(full.1 - full.0).to_string() shown=ps_text(full.1 - full.0) />
                </span>
                <span class="muted" data-testid="trace-window">{window_text}</span>
                <span class="spacer"></span>
                <label class="field" title="Arrows between every linked event in the window (flows, producer → consumer contexts, kernel launches); the selected event's are always drawn">
                    <input type="checkbox" data-testid="show-flows" prop:checked=move || show_flows.get() on:change=move |ev| show_flows.set(event_target_checked(&ev)) />
                    "All flows"
                </label>
                <search::Search file_id full selected_event />
                <search::ExportButton file_id window />
            </div>
            <tracks::Tracks file_id outline=tracks_outline full window selected_event show_flows />
            <p class="hint muted">
                "W/S or wheel zoom · A/D or drag pan · Shift-drag selects a range · click an event for its details and flows · hover a memory track for its values · 0 resets · ▸ collapses a process"
            </p>
            {move || panels.get().then(|| view! {
                <div class="tv-panels">
                    <div>
                        <details::Details file_id selected_event origin_ps=full.0 />
                        <flow_list::FlowList file_id outline=outline.clone() full selected_event />
                    </div>
                    <summary::RangeSummary file_id origin_ps=full.0 />
                </div>
            })}
        </section>
    }
}
