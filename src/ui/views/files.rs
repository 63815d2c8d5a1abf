//! The file list: the run and host selectors above every dropped file with its progress, kind, or the
//! reason it failed.

use crate::decode::log_dir::run_host;
use crate::ui::state::{AppState, FileStatus};
use leptos::prelude::*;

fn pct(done: u64, total: u64) -> f64 {
    if total == 0 {
        100.0
    } else {
        (done as f64 * 100.0 / total as f64).clamp(0.0, 100.0)
    }
}

#[component]
pub fn FileList() -> impl IntoView {
    let state = expect_context::<AppState>();
    view! {
        <aside class="files" aria-label="Loaded files">
            <RunHostSelect />
            <BaselineSelect />
            <div class="files-head">"Files"</div>
            <For each=move || state.files.get() key=|f| (f.key, format!("{:?}", std::mem::discriminant(&f.status))) let:f>
                {
                    let path = f.path.clone();
                    let sel_path = f.path.clone();
                    let key = f.key;
                    // The base name, or the path where another loaded file has the same base name.
                    let label = move || state.files.with(|fs| fs.iter().find(|x| x.key == key).map(|x| x.label(fs)).unwrap_or_default());
                    // The selected file, or with "all hosts" every file of its run.
                    let selected = move || {
                        state.selected.with(|s| {
                            s.as_deref() == Some(sel_path.as_str())
                                || state.all_hosts.get() && s.as_deref().is_some_and(|s| run_host(s).run_dir == run_host(&sel_path).run_dir)
                        })
                    };
                    let status = move || state.files.with(|fs| fs.iter().find(|x| x.key == key).map(|x| x.status.clone()));
                    let badge = match &f.status {
                        FileStatus::Ready { details, .. } => match details.format {
                            crate::decode::Format::XSpace => "xplane",
                            crate::decode::Format::HloProto => "hlo",
                            crate::decode::Format::Pprof => "pprof",
                            crate::decode::Format::Kineto => "kineto",
                            crate::decode::Format::TorchSnapshot => "snapshot",
                        },
                        FileStatus::Failed { .. } => "error",
                        FileStatus::Loading { .. } => "…",
                    };
                    let state_attr = match &f.status {
                        FileStatus::Ready { .. } => "ready",
                        FileStatus::Failed { .. } => "failed",
                        FileStatus::Loading { .. } => "loading",
                    };
                    let click_path = path.clone();
                    view! {
                        <div
                            class="file-row"
                            class:selected=selected
                            data-file=path.clone()
                            data-state=state_attr
                            on:click=move |_| {
                                state.all_hosts.set(false);
                                state.selected.set(Some(click_path.clone()));
                            }
                        >
                            <span class="badge" data-kind=badge>{badge}</span>
                            <span class="file-name" title=path.clone()>{label}</span>
                            <button
                                class="close"
                                title="Remove this file"
                                on:click=move |ev| {
                                    ev.stop_propagation();
                                    state.files.update(|fs| fs.retain(|x| x.key != key));
                                }
                            >
                                "×"
                            </button>
                            {move || match status() {
                                Some(FileStatus::Loading { read, decoded, total }) => {
                                    let (label, p) = if read < total { ("reading", pct(read, total)) } else { ("decoding", pct(decoded, total)) };
                                    view! {
                                        <div class="progress" data-metric="progress" data-value=format!("{p:.0}")>
                                            <div class="bar" style=format!("width:{p:.1}%")></div>
                                            <span>{format!("{label} {p:.0}%")}</span>
                                        </div>
                                    }
                                        .into_any()
                                }
                                _ => ().into_any(),
                            }}
                        </div>
                    }
                }
            </For>
        </aside>
    }
}

/// Errors of failed files, as banners above the view: the page stays usable and other files keep working.
#[component]
pub fn ErrorBanners() -> impl IntoView {
    let state = expect_context::<AppState>();
    let failed = move || {
        state.files.with(|fs| {
            fs.iter()
                .filter_map(|f| match &f.status {
                    FileStatus::Failed { error } => Some((f.key, f.path.clone(), error.detail())),
                    _ => None,
                })
                .collect::<Vec<_>>()
        })
    };
    let alerts = move || state.alerts.get().into_iter().enumerate().collect::<Vec<_>>();
    view! {
        <For each=failed key=|(k, _, _)| *k let:e>
            <div class="banner error" role="alert" data-testid="file-error" data-file=e.1.clone()>
                <strong>{format!("{}: ", e.1)}</strong>
                <span class="message">{e.2.clone()}</span>
                <button class="close" title="Dismiss" on:click=move |_| state.files.update(|fs| fs.retain(|x| x.key != e.0))>"×"</button>
            </div>
        </For>
        <For each=alerts key=|(i, m)| (*i, m.clone()) let:a>
            <div class="banner warn" role="alert" data-testid="page-alert">
                <span class="message">{a.1.clone()}</span>
                <button class="close" title="Dismiss" on:click=move |_| state.alerts.update(|v| { if a.0 < v.len() { v.remove(a.0); } })>"×"</button>
            </div>
        </For>
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
        <div class="run-host">
        <label class="field" title="The runs of the opened folders, newest first (TensorBoard names each run by its start time)">
            "Run "
            <select data-testid="run-select" on:change=move |ev| choose_run(event_target_value(&ev)) prop:value=selected_run>
                {move || run_options(state.runs())}
            </select>
        </label>
        <label class="field" title="The run's hosts; all hosts combines them as XProf does, in the op tools (Overview, Input pipeline, Op Profile, Framework ops, HLO ops, Kernels, Roofline)">
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
        </div>
    }
}

/// One option per run (folder, name), named by its folder; files in no folder are "(opened files)".
fn run_options(runs: Vec<(String, String)>) -> impl IntoView {
    runs.into_iter()
        .map(|(dir, name)| {
            let label = if name.is_empty() { "(opened files)".to_string() } else { name };
            view! { <option value=dir>{label}</option> }
        })
        .collect_view()
}

/// The value of the baseline selector's "none" option.
const NO_BASELINE: &str = "*none*";

/// The baseline run selector (where more than one run is loaded): the runs other than the selected
/// one, none by default; the Run comparison compares the selected run with it.
#[component]
fn BaselineSelect() -> impl IntoView {
    let state = expect_context::<AppState>();
    let others = move || {
        let current = state.selected_run_dir();
        state.runs().into_iter().filter(|(dir, _)| *dir != current).collect::<Vec<_>>()
    };
    // A baseline equal to the selected run (after the run was switched) counts as none.
    let value = move || {
        let current = state.selected_run_dir();
        state.baseline_run.get().filter(|b| *b != current).unwrap_or_else(|| NO_BASELINE.to_string())
    };
    let choose = move |v: String| state.baseline_run.set((v != NO_BASELINE).then_some(v));
    view! {
        <Show when=move || !others().is_empty()>
            <div class="run-host">
            <label class="field" title="A run to compare the selected run with (the Run comparison tool): op times and memory peaks, with the changes">
                "Baseline "
                <select data-testid="baseline-select" on:change=move |ev| choose(event_target_value(&ev)) prop:value=value>
                    <option value=NO_BASELINE>"None"</option>
                    {move || run_options(others())}
                </select>
            </label>
            </div>
        </Show>
    }
}
