//! The selected event's links, listed: for each, which way it goes, the kind of link, and the event
//! at its other end (name, thread, start), which a click selects and centres.

use super::{clamp_window, ps_text};
use crate::analysis::trace_viewer::flows::LinkKind;
use crate::analysis::trace_viewer::store::TraceOutline;
use crate::engine::protocol::request;
use crate::engine::trace_viewer::{FlowQuery, MAX_FLOW_ARROWS};
use crate::ui::charts::viewport::Viewport;
use crate::ui::components::metric::{Count, Text};
use crate::ui::state::AppState;
use crate::ui::use_engine::{use_engine, Reply};
use leptos::prelude::*;
use std::sync::Arc;

/// The kind of a link in words; `names` are the outline's (a Chrome flow's category is one).
fn kind_text(kind: LinkKind, names: &[String]) -> String {
    match kind {
        LinkKind::Flow { id, .. } => format!("flow {id}"),
        LinkKind::Context { context_type, id } => format!("context {context_type}:{id}"),
        LinkKind::Launch { correlation_id } => format!("launch {correlation_id}"),
        LinkKind::Chrome { category, id } => format!("{} {id}", names.get(category as usize).map_or("flow", String::as_str)),
    }
}

#[component]
pub(super) fn FlowList(file_id: u32, outline: Arc<TraceOutline>, full: (i64, i64), selected_event: RwSignal<Option<u32>>) -> impl IntoView {
    let state = expect_context::<AppState>();
    let fetch = use_engine("Trace Viewer event flows", move || {
        let event = selected_event.get()?;
        let query = FlowQuery { start_ps: 0, end_ps: 0, threads: None, event: Some(event), limit: MAX_FLOW_ARROWS as u32 };
        Some(request::TraceFlows { file_id, query })
    });
    let thread_names: Vec<String> = {
        let mut names = Vec::new();
        for t in outline.processes.iter().flat_map(|p| &p.threads) {
            let i = t.index as usize;
            if names.len() <= i {
                names.resize(i + 1, String::new());
            }
            names[i] = if t.name.is_empty() { format!("thread {}", t.tid) } else { t.name.clone() };
        }
        names
    };
    // Event `event` selected, its start centred in a window as wide as the current one.
    let go = move |event: u32, start_ps: i64| {
        let (a, b) = state.trace_window.get_untracked().unwrap_or(full);
        let half = (b - a) as f64 / 2.0;
        state.trace_window.set(clamp_window(full, Viewport::x_range(start_ps as f64 - half, start_ps as f64 + half)));
        selected_event.set(Some(event));
    };
    let body = move || match (selected_event.get(), fetch.reply.get()) {
        (None, _) | (Some(_), Reply::Waiting) => None,
        (Some(_), Reply::Failed(e)) => Some(view! { <p class="banner error">{e.detail()}</p> }.into_any()),
        (Some(_), Reply::Rejected(e)) => Some(view! { <p class="banner error">{e}</p> }.into_any()),
        (Some(_), Reply::Ready(r)) if r.total == 0 => None,
        (Some(event), Reply::Ready(r)) => {
            let rows = r
                .arrows
                .iter()
                .map(|a| {
                    let outgoing = a.link.from == event;
                    let (other, thread, name, start) = if outgoing {
                        (a.link.to, a.to_thread, a.to_name, a.to_ps)
                    } else {
                        (a.link.from, a.from_thread, a.from_name, a.from_ps)
                    };
                    let name = outline.names.get(name as usize).cloned().unwrap_or_default();
                    let thread = thread_names.get(thread as usize).cloned().unwrap_or_default();
                    view! {
                        <li data-testid="flow-link" data-event=other.to_string()>
                            {if outgoing { "→ " } else { "← " }}
                            <span class="muted">{kind_text(a.link.kind, &outline.names)}" · "</span>
                            <a href="#" title="Select this event" on:click=move |ev| { ev.prevent_default(); go(other, start); }>{name}</a>
                            <span class="muted">{format!(" · {thread} · at {}", ps_text(start - full.0))}</span>
                        </li>
                    }
                })
                .collect_view();
            Some(
                view! {
                    <h3>"Flows " <span class="muted">"(" <Count metric="event_flow_count" value=r.total /> ")"</span></h3>
                    <ul class="tv-flows" data-testid="event-flows">{rows}</ul>
                    {(r.total as usize > r.arrows.len()).then(|| view! { <p class="muted"><Text metric="event_flows_listed" value=r.arrows.len().to_string() />" listed"</p> })}
                }
                .into_any(),
            )
        }
    };
    view! { <div data-testid="trace-flows">{body}</div> }
}
