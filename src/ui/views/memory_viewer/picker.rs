//! The module selector (every module of every loaded file, searchable) and the memory-space select.

use crate::engine::memory_viewer::ModuleEntry;
use crate::engine::memory_viewer_columns::ViewerData;
use crate::engine::EngineError;
use crate::ui::components::metric::Bytes;
use crate::ui::state::AppState;
use leptos::prelude::*;
use std::sync::Arc;

/// The searchable module selector: every module of every loaded file, largest peak first.
#[component]
pub(super) fn ModulePicker(modules: Arc<Vec<ModuleEntry>>, current: Option<(u32, String)>) -> impl IntoView {
    let state = expect_context::<AppState>();
    let open = RwSignal::new(false);
    let query = RwSignal::new(String::new());
    let input = NodeRef::<leptos::html::Input>::new();
    let chosen = current.as_ref().and_then(|(f, n)| modules.iter().find(|m| m.file_id == *f && m.name == *n)).cloned();
    let several_files = modules.iter().any(|m| m.file_id != modules[0].file_id);
    let pick = move |m: &ModuleEntry| {
        state.selected.set(Some(m.file.clone()));
        state.module.set(Some(m.name.clone()));
        state.memory_space.set(None);
        open.set(false);
        query.set(String::new());
    };
    let list = modules.clone();
    let matches = move || {
        let q = query.get().to_lowercase();
        list.iter()
            .filter(|m| q.is_empty() || m.name.to_lowercase().contains(&q) || m.file.to_lowercase().contains(&q))
            .cloned()
            .collect::<Vec<_>>()
    };
    let first_match = matches.clone();
    Effect::new(move |_| {
        if open.get() {
            if let Some(i) = input.get() {
                let _ = i.focus();
            }
        }
    });
    let total = modules.len();
    view! {
        <div class="module-picker">
            <span class="field-label">"Module"</span>
            <button class="btn picker-button" data-testid="module-select" title="Choose a module (every module of every loaded file, largest peak first)" on:click=move |_| open.update(|o| *o = !*o)>
                {match chosen.clone() {
                    Some(m) => view! {
                        <code data-metric="module" data-value=m.name.clone()>{m.name.clone()}</code>
                        {several_files.then(|| view! { <span class="muted">{format!(" · {}", m.file)}</span> })}
                        {m.peak_heap_bytes.map(|p| view! { <span class="muted">" · peak "</span><Bytes metric="module_peak_heap_bytes" value=p /> })}
                    }.into_any(),
                    None => view! { <span class="muted">"Choose a module"</span> }.into_any(),
                }}
                <span class="caret">"▾"</span>
            </button>
            <span class="muted count-note">{format!("{total} module{}", if total == 1 { "" } else { "s" })}</span>
            <Show when=move || open.get()>
                <div class="picker-panel" data-testid="module-panel">
                    <input
                        type="search"
                        placeholder="Search modules and files"
                        data-testid="module-search"
                        node_ref=input
                        prop:value=move || query.get()
                        on:input=move |ev| query.set(event_target_value(&ev))
                        on:keydown={
                            let first_match = first_match.clone();
                            move |ev: web_sys::KeyboardEvent| match ev.key().as_str() {
                                "Escape" => open.set(false),
                                "Enter" => {
                                    if let Some(m) = first_match().first() {
                                        pick(m);
                                    }
                                }
                                _ => {}
                            }
                        }
                    />
                    <div class="picker-list">
                        {
                            let matches = matches.clone();
                            move || {
                                let found = matches();
                                if found.is_empty() {
                                    return view! { <div class="muted picker-empty">"No module matches."</div> }.into_any();
                                }
                                found
                                    .into_iter()
                                    .map(|m| {
                                        let key = format!("{}#{}", m.file_id, m.name);
                                        let row = m.clone();
                                        view! {
                                            <div class="picker-row" data-module=m.name.clone() data-file=m.file.clone() on:click=move |_| pick(&row)>
                                                <code class="pr-name">{m.name.clone()}</code>
                                                <span class="pr-file muted">{m.file.clone()}</span>
                                                <span class="pr-peak">
                                                    {match (m.peak_heap_bytes, &m.problem) {
                                                        (Some(p), _) => view! { <Bytes metric="listed_peak_heap_bytes" value=p key=key /> }.into_any(),
                                                        (None, Some(EngineError::NoBufferAssignment { .. })) => view! { <span class="muted">"no buffer assignment"</span> }.into_any(),
                                                        _ => view! { <span class="muted">"unavailable"</span> }.into_any(),
                                                    }}
                                                </span>
                                            </div>
                                        }
                                    })
                                    .collect_view()
                                    .into_any()
                            }
                        }
                    </div>
                </div>
            </Show>
        </div>
    }
}

#[component]
pub(super) fn MemorySpace(viewer: Arc<ViewerData>) -> impl IntoView {
    let state = expect_context::<AppState>();
    let current = viewer.memory_space;
    view! {
        <label class="field">
            "Memory space "
            <select data-testid="memory-space" on:change=move |ev| state.memory_space.set(event_target_value(&ev).parse().ok()) prop:value=current.to_string()>
                {viewer.memory_spaces.iter().map(|s| view! { <option value=s.to_string()>{if *s == 0 { "0 (device)".to_string() } else { s.to_string() }}</option> }).collect_view()}
            </select>
        </label>
    }
}
