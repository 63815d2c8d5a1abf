//! The top bar: identity, open buttons and display preferences (the tools, the run and host selectors
//! and the files are down the side panel: [`super::tool_nav`], [`crate::ui::views::files`]).

use crate::ui::state::{AppState, Theme};
use crate::ui::views::export::ExportDialog;
use crate::ui::{drop, engine_client};
use crate::units::ByteUnit;
use leptos::prelude::*;

#[component]
pub fn Toolbar() -> impl IntoView {
    let state = expect_context::<AppState>();
    let file_input = NodeRef::<leptos::html::Input>::new();
    let folder_input = NodeRef::<leptos::html::Input>::new();
    let export_open = RwSignal::new(false);
    let in_bundle = engine_client::bundle().is_some();
    // No typed attribute exists for directory picking; set it once the input exists.
    Effect::new(move |_| {
        if let Some(i) = folder_input.get() {
            let _ = i.set_attribute("webkitdirectory", "");
        }
    });
    view! {
        <header class="toolbar">
            <div class="brand" title="Tidemark: what is using accelerator memory, when, and why">
                <span class="logo" aria-hidden="true">"≋"</span>
                "Tidemark"
            </div>
            <div class="spacer"></div>
            <button class="btn" title="Open profile files" on:click=move |_| { if let Some(i) = file_input.get() { i.click(); } }>"Open…"</button>
            <button class="btn" title="Open every profile in a folder (e.g. a run with one xplane per host)" on:click=move |_| { if let Some(i) = folder_input.get() { i.click(); } }>"Folder…"</button>
            <Show when=move || !in_bundle>
                <button class="btn" data-testid="open-demo" title="Open the bundled demo profiles" on:click=move |_| { state.demo.set(true); drop::open_demo(state); }>"Demo"</button>
            </Show>
            <Show when=move || !state.files.with(Vec::is_empty)>
                <button class="btn" data-testid="export-open" title="One .html file with the app and these profiles, to open offline" on:click=move |_| export_open.set(true)>"Export HTML…"</button>
            </Show>
            <ExportDialog open=export_open />
            <label class="field" title="Unit for byte figures">
                "Units "
                <select
                    data-testid="unit-select"
                    on:change=move |ev| state.unit.set(ByteUnit::parse(&event_target_value(&ev)).unwrap_or_default())
                    prop:value=move || state.unit.get().label()
                >
                    {ByteUnit::ALL.into_iter().map(|u| view! { <option value=u.label()>{u.label()}</option> }).collect_view()}
                </select>
            </label>
            <button
                class="btn icon"
                data-testid="theme-toggle"
                title="Light / dark theme"
                on:click=move |_| state.theme.update(|t| *t = if *t == Theme::Light { Theme::Dark } else { Theme::Light })
            >
                {move || if state.theme.get() == Theme::Light { "☾" } else { "☀" }}
            </button>
            <input
                type="file"
                multiple=true
                hidden=true
                data-testid="file-input"
                node_ref=file_input
                on:change=move |_| {
                    if let Some(list) = file_input.get().and_then(|i| i.files()) {
                        drop::open_list(state, &list, false);
                    }
                    if let Some(i) = file_input.get() { i.set_value(""); }
                }
            />
            <input
                type="file"
                multiple=true
                hidden=true
                data-testid="folder-input"
                node_ref=folder_input
                on:change=move |_| {
                    if let Some(list) = folder_input.get().and_then(|i| i.files()) {
                        drop::open_list(state, &list, true);
                    }
                    if let Some(i) = folder_input.get() { i.set_value(""); }
                }
            />
        </header>
    }
}
