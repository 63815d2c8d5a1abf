//! The file list: every dropped file with its progress, kind, or the reason it failed.

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
            <div class="files-head">"Files"</div>
            <For each=move || state.files.get() key=|f| (f.key, format!("{:?}", std::mem::discriminant(&f.status))) let:f>
                {
                    let path = f.path.clone();
                    let sel_path = f.path.clone();
                    let key = f.key;
                    // The base name, or the path where another loaded file has the same base name.
                    let label = move || state.files.with(|fs| fs.iter().find(|x| x.key == key).map(|x| x.label(fs)).unwrap_or_default());
                    let selected = move || state.selected.get().as_deref() == Some(sel_path.as_str());
                    let status = move || state.files.with(|fs| fs.iter().find(|x| x.key == key).map(|x| x.status.clone()));
                    let badge = match &f.status {
                        FileStatus::Ready { overview, .. } => match overview.format {
                            crate::decode::Format::XSpace => "xplane",
                            crate::decode::Format::HloProto => "hlo",
                            crate::decode::Format::Pprof => "pprof",
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
