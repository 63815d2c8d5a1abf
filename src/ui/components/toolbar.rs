//! The top bar: identity, tool tabs, run and host selectors, open buttons and display preferences.

use crate::decode::log_dir::run_host;
use crate::ui::state::{AppState, FileStatus, Theme, Tool};
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
            <nav class="tabs" role="tablist">
                {Tool::ALL
                    .into_iter()
                    .map(|t| {
                        view! {
                            <button
                                role="tab"
                                class="tab"
                                data-tool=t.slug()
                                aria-selected=move || (state.tool.get() == t).to_string()
                                on:click=move |_| state.tool.set(t)
                            >
                                {t.title()}
                            </button>
                        }
                    })
                    .collect_view()}
            </nav>
            <div class="spacer"></div>
            <Show when=move || !state.files.with(Vec::is_empty)>
                <RunHostSelect />
            </Show>
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

/// The value of the host selector's "all hosts" option.
const ALL_HOSTS: &str = "*all-hosts*";

/// The run selector (the loaded files' runs, newest first, named by their folder) and the host
/// selector (the selected run's files by host, and "all hosts" where the run has several, for the
/// tools that combine them). Every loaded file is reachable: files in no folder form one run.
#[component]
fn RunHostSelect() -> impl IntoView {
    let state = expect_context::<AppState>();
    let selected_run = move || state.selected.with(|p| p.as_deref().map(|p| run_host(p).run_dir)).unwrap_or_default();
    let choose_run = move |run_dir: String| {
        if let Some((path, _)) = state.run_files(&run_dir).into_iter().next() {
            state.all_hosts.set(false);
            state.selected.set(Some(path));
        }
    };
    let choose_host = move |value: String| {
        if value == ALL_HOSTS {
            state.all_hosts.set(true);
        } else {
            state.all_hosts.set(false);
            state.selected.set(Some(value));
        }
    };
    let hosts = move || {
        let files = state.run_files(&selected_run());
        state.files.with(|fs| {
            files
                .into_iter()
                .map(|(path, host)| {
                    let failed = fs.iter().any(|f| f.path == path && matches!(f.status, FileStatus::Failed { .. }));
                    let label = if host.is_empty() { path.clone() } else { host };
                    (path, if failed { format!("{label} (failed)") } else { label })
                })
                .collect::<Vec<_>>()
        })
    };
    view! {
        <label class="field" title="The runs of the opened folders, newest first (TensorBoard names each run by its start time)">
            "Run "
            <select data-testid="run-select" on:change=move |ev| choose_run(event_target_value(&ev)) prop:value=selected_run>
                {move || {
                    state
                        .runs()
                        .into_iter()
                        .map(|(dir, name)| {
                            let label = if name.is_empty() { "(opened files)".to_string() } else { name };
                            view! { <option value=dir>{label}</option> }
                        })
                        .collect_view()
                }}
            </select>
        </label>
        <label class="field" title="The run's hosts; all hosts combines them as XProf does, in the tools that combine hosts (Framework ops)">
            "Host "
            <select
                data-testid="file-select"
                on:change=move |ev| choose_host(event_target_value(&ev))
                prop:value=move || if state.all_hosts.get() { ALL_HOSTS.to_string() } else { state.selected.get().unwrap_or_default() }
            >
                {move || {
                    let hosts = hosts();
                    let all = (hosts.len() > 1).then(|| view! { <option value=ALL_HOSTS>"All hosts"</option> });
                    (hosts.into_iter().map(|(path, label)| view! { <option value=path>{label}</option> }).collect_view(), all)
                }}
            </select>
        </label>
    }
}
