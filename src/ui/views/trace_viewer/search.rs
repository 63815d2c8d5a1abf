//! The bar's controls: search (match count, next/previous, each match centred and opened) and
//! "export visible range" (XProf's trace JSON of the window, written by the engine, downloaded).
//! Typed text matches within names; `="name"` (what an op row's "occurrences" link writes, so the box
//! shows why its count is the op's own) matches exactly one op, marked "exact" beside the count.

use super::clamp_window;
use crate::analysis::trace_viewer::op_args::Query;
use crate::engine::protocol::request;
use crate::ui::charts::viewport::Viewport;
use crate::ui::components::metric::Count;
use crate::ui::components::table::download_part;
use crate::ui::engine_client;
use crate::ui::state::AppState;
use crate::ui::use_engine::{read, use_engine, Reply};
use leptos::prelude::*;

#[component]
pub(super) fn Search(file_id: u32, full: (i64, i64), selected_event: RwSignal<Option<u32>>) -> impl IntoView {
    let state = expect_context::<AppState>();
    // A search set by a link (an op row's "show occurrences") starts the view, its first match framed.
    let preset = state.trace_search.get_untracked();
    let frame_first = RwSignal::new(preset.is_some());
    let needle = RwSignal::new(preset.unwrap_or_default());
    let current = RwSignal::new(None::<usize>);
    // The count only: the worker keeps the matches, and each is asked for as the user steps to it.
    let fetch = use_engine("Trace Viewer search", move || {
        let needle = needle.get();
        (!needle.is_empty()).then_some(request::TraceSearch { file_id, needle })
    });
    // Match `index` (of the search still shown): centred in the window (its width kept) and opened
    // in the details panel.
    let go = move |index: usize| {
        let needle_now = needle.get_untracked();
        let ask = request::TraceSearchMatch { file_id, needle: needle_now.clone(), index: index as u32 };
        engine_client::request(ask.into(), "Trace Viewer search match".into(), move |reply| {
            let Reply::Ready(Some((event, start))) = read::<request::TraceSearchMatch>(reply) else { return };
            if needle.try_get_untracked().as_ref() != Some(&needle_now) {
                return; // the search changed meanwhile
            }
            current.set(Some(index));
            let (a, b) = state.trace_window.get_untracked().unwrap_or(full);
            let half = (b - a) as f64 / 2.0;
            state.trace_window.set(clamp_window(full, Viewport::x_range(start as f64 - half, start as f64 + half)));
            selected_event.set(Some(event));
        });
    };
    let step = move |forward: bool| {
        let Reply::Ready(n) = fetch.reply.get_untracked() else { return };
        if n == 0 {
            return;
        }
        let i = match current.get_untracked() {
            None => 0,
            Some(i) if forward => (i + 1) % n,
            Some(i) => (i + n - 1) % n,
        };
        go(i);
    };
    Effect::new(move |_| {
        if matches!(fetch.reply.get(), Reply::Ready(_)) && frame_first.get_untracked() {
            frame_first.set(false);
            step(true);
        }
    });
    let exact = move || {
        needle.with(|n| match Query::parse(n) {
            Query::Exact(op) => Some(op),
            Query::Contains(_) => None,
        })
    };
    let status = move || match fetch.reply.get() {
        Reply::Ready(r) => view! {
            <span data-testid="search-status">
                {move || current.get().map(|i| format!("{} of ", i + 1))}
                <Count metric="search_match_count" value=r as u64 /> " matches"
                {move || exact().map(|op| view! { <ExactMark op /> })}
            </span>
        }
        .into_any(),
        Reply::Waiting if !needle.with(String::is_empty) => view! { <span class="muted">"searching…"</span> }.into_any(),
        Reply::Failed(e) => view! { <span class="banner error">{e.detail()}</span> }.into_any(),
        _ => ().into_any(),
    };
    view! {
        <span class="tv-search">
            <input
                type="search"
                data-testid="trace-search"
                placeholder="Search event names (=\"op\" for one op)"
                title="Text matches within event names and the ops they ran (ignoring case); =\"name\" matches exactly one op"
                prop:value=move || needle.get()
                on:change=move |ev| {
                    current.set(None);
                    let text = event_target_value(&ev).trim().to_string();
                    state.trace_search.set((!text.is_empty()).then(|| text.clone()));
                    needle.set(text);
                }
                on:keydown=move |ev: web_sys::KeyboardEvent| {
                    if ev.key() == "Enter" && !needle.with(String::is_empty) {
                        step(!ev.shift_key());
                    }
                }
            />
            {status}
            <button class="btn" data-testid="search-prev" title="Previous match (Shift+Enter)" on:click=move |_| step(false)>"◀"</button>
            <button class="btn" data-testid="search-next" title="Next match (Enter)" on:click=move |_| step(true)>"▶"</button>
        </span>
    }
}

/// Beside the count of an exact search: says that only `op`'s own events are counted, and how to
/// match within names instead.
#[component]
fn ExactMark(op: String) -> impl IntoView {
    let title = format!(
        "Only the events of {op}: named {op}, or running it (its tf_op or hlo_op, or a framework op's full name \
         {op}:type). Remove =\"…\" to match within names."
    );
    view! { <span class="tv-exact" data-testid="search-exact" title=title>"exact"</span> }
}

#[component]
pub(super) fn ExportButton(file_id: u32, window: Memo<(i64, i64)>) -> impl IntoView {
    let state = expect_context::<AppState>();
    let message = RwSignal::new(None::<String>);
    let on_click = move |_| {
        let (start_ps, end_ps) = window.get_untracked();
        let base = state.selected.get_untracked().unwrap_or_default();
        let base = base.rsplit('/').next().unwrap_or("trace").to_string();
        message.set(Some("exporting…".into()));
        wasm_bindgen_futures::spawn_local(async move {
            let result = engine_client::trace_export(file_id, start_ps, end_ps, base.clone()).await.and_then(|bytes| {
                let name = format!("{base}.{start_ps}-{end_ps}.trace.json");
                download_part(&name, &bytes.into(), "application/json").map_err(|e| format!("{e:?}")).map(|_| name)
            });
            message.try_set(Some(match result {
                Ok(name) => format!("saved {name}"),
                Err(e) => format!("export failed: {e}"),
            }));
        });
    };
    view! {
        <button class="btn" data-testid="trace-export" title="Chrome-trace JSON of the events in the window (opens in Perfetto)" on:click=on_click>
            "Export visible range"
        </button>
        <span class="muted" data-testid="trace-export-status">{move || message.get()}</span>
    }
}
