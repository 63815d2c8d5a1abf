//! The Memory Viewer tool: for one compiled HLO module, how the heap evolves over program order, which
//! buffers are live at the peak and where they sit, and what to shrink when it runs out of memory.
//! Every figure is the engine's (`analysis::memory_viewer`, through the worker); this view only lays
//! them out, links the charts (hovering a buffer highlights it everywhere), and remembers the module
//! in the URL.

mod details;
mod module;
mod peak_buffers;
mod picker;
mod shrink;

use crate::engine::memory_viewer::ModuleEntry;
use crate::engine::memory_viewer_columns::{ViewerData, ViewerReply};
use crate::engine::protocol::request;
use crate::engine::EngineError;
use crate::ui::charts::block_timeline::TimelineData;
use crate::ui::state::AppState;
use crate::ui::use_engine::{use_engine, Reply};
use leptos::prelude::*;
use module::Module;
use picker::{MemorySpace, ModulePicker};
use std::sync::Arc;

/// Buffers named in the "what to shrink" panel.
const TOP_BUFFERS: usize = 5;

/// A module's columns and its block layout, ready to draw.
type Drawn = (Arc<ViewerData>, Arc<TimelineData>);

/// The engine's answer for the page: the module list, the module shown and its viewer (or why not).
#[derive(Clone)]
struct Page {
    modules: Arc<Vec<ModuleEntry>>,
    /// (file id, module name) shown; `None`: the file has no modules.
    shown: Option<(u32, String)>,
    viewer: Option<Result<Drawn, EngineError>>,
}

impl Page {
    fn of(p: &request::MemoryViewerPage) -> Page {
        let file_id = p.file_id;
        Page {
            modules: Arc::new(p.modules.clone()),
            shown: p.module.clone().map(|m| (file_id, m)),
            viewer: p.viewer.clone().map(|r| {
                r.and_then(|v| match v {
                    ViewerReply::Page(c) => {
                        let timeline = Arc::new(TimelineData::new(&c));
                        Ok((c, timeline))
                    }
                    ViewerReply::Engine(_) => Err(EngineError::UnknownFile { file_id }),
                })
            }),
        }
    }
}

#[component]
pub fn MemoryViewerView(file_id: u32) -> impl IntoView {
    let state = expect_context::<AppState>();
    // The files the module selector offers: every loaded file (a memo: progress ticks do not count).
    let ready = Memo::new(move |_| state.ready_files().into_iter().map(|(id, _)| id).collect::<Vec<u32>>());
    // One request: the modules of the loaded files and the module shown (the URL's, when the file has
    // it, else the file's largest), in the memory space of the URL.
    let fetch = use_engine("Memory Viewer", move || {
        Some(request::MemoryViewer { file_ids: ready.get(), file_id, module: state.module.get(), memory_space: state.memory_space.get() })
    });
    // A highlighted op belongs to one module: choosing another module drops it.
    Effect::new(move |prev: Option<Option<String>>| {
        let current = state.module.get();
        if prev.is_some_and(|p| p != current) {
            state.highlight_op.set(None);
        }
        current
    });
    let load_ms = fetch.elapsed_ms;
    // The reply as drawn: each module's block timeline is laid out once, when its reply arrives.
    let drawn = RwSignal::new(Reply::Waiting);
    Effect::new(move |_| drawn.set(fetch.reply.get().map(|p| Page::of(&p))));
    let page = move || drawn.get();

    let body = move || match page() {
        Reply::Waiting => view! { <p class="muted loading">"Reading the HLO modules of the loaded files…"</p> }.into_any(),
        Reply::Failed(e) => view! { <p class="banner error">{e.to_string()}</p> }.into_any(),
        Reply::Rejected(e) => view! { <p class="banner error">{e}</p> }.into_any(),
        Reply::Ready(p) => match (p.shown, p.viewer) {
            (Some(_), Some(Ok((viewer, timeline)))) => {
                let highlight = state.highlight_op.get();
                view! { <Module viewer timeline load_ms=load_ms.get_untracked().unwrap_or(0.0) highlight /> }.into_any()
            }
            (Some((_, module)), Some(Err(error))) => {
                let no_buffer_assignment = matches!(error, EngineError::NoBufferAssignment { .. });
                view! {
                    <section class="mv-unavailable" data-testid="mv-unavailable" data-no-buffer-assignment=no_buffer_assignment.to_string()>
                        <h2>{if no_buffer_assignment { format!("{module} has no buffer assignment") } else { format!("{module} cannot be shown") }}</h2>
                        <p>{error.detail()}</p>
                    </section>
                }
                .into_any()
            }
            _ => {
                let file = state.selected.get().unwrap_or_default();
                let hint = if p.modules.is_empty() {
                    "None of the loaded files has HLO modules. The Memory Viewer reads XLA HloProto dumps (*.hlo.pb, with buffer assignment: the after_optimizations one) and XProf traces (*.xplane.pb) of compiled programs."
                } else {
                    "Choose a module of another file above."
                };
                view! { <p class="empty" data-testid="mv-no-modules">{format!("{file} has no HLO modules. {hint}")}</p> }.into_any()
            }
        },
    };
    view! {
        <article class="memory-viewer" data-testid="memory-viewer">
            <header class="mv-head">
                {move || drawn.get().ready().map(|p| view! { <ModulePicker modules=p.modules.clone() current=p.shown.clone() /> })}
                {move || match drawn.get() {
                    Reply::Ready(Page { viewer: Some(Ok((viewer, _))), .. }) if viewer.memory_spaces.len() > 1 => Some(view! { <MemorySpace viewer /> }),
                    _ => None,
                }}
            </header>
            {body}
        </article>
    }
}
