//! The page (wasm only). It only draws: every number comes from the engine, through the worker, which
//! runs the engine's own wasm module ([`crate::worker`]).

pub mod charts;
pub mod components;
pub mod drop;
pub mod engine_client;
pub mod state;
pub mod use_engine;
pub mod views;

use leptos::prelude::*;
use state::{AppState, HashView, Shown, Theme, Tool};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// Mounts [`App`]: the page's wasm entry point (src/main.rs).
pub fn start() {
    std::panic::set_hook(Box::new(on_page_panic));
    // The page is built in tasks of its own, each well under 50 ms: the one that runs this also
    // finished compiling and started the wasm; the page's first localStorage read opens the storage
    // (2–10 ms), so it gets a task before the mount; and the main area is drawn a task after the
    // shell (see `App`).
    set_timeout(
        || {
            let theme = stored_theme();
            set_timeout(move || leptos::mount::mount_to_body(move || view! { <App theme /> }), std::time::Duration::ZERO);
        },
        std::time::Duration::ZERO,
    );
}

/// A panic in the page's own code leaves the app unusable (the wasm instance traps after the hook),
/// so the hook says so in a banner built with plain DOM calls, outside the reactive tree, and as text
/// only. Engine failures do not come here: they happen in the worker and are reported per file.
fn on_page_panic(info: &std::panic::PanicHookInfo) {
    console_error_panic_hook::hook(info);
    let what = crate::worker::panic_message(info);
    let Some(doc) = web_sys::window().and_then(|w| w.document()) else { return };
    let (Ok(banner), Some(body)) = (doc.create_element("div"), doc.body()) else { return };
    banner.set_class_name("banner error fatal");
    let _ = banner.set_attribute("role", "alert");
    let _ = banner.set_attribute("data-testid", "page-panic");
    banner.set_text_content(Some(&format!(
        "Tidemark hit an internal error and stopped ({what}). Reload the page to continue; your files never left this machine. Please report this bug."
    )));
    let _ = body.prepend_with_node_1(&banner);
}

fn stored_theme() -> Theme {
    let stored = web_sys::window().and_then(|w| w.local_storage().ok().flatten()).and_then(|s| s.get_item("tidemark.theme").ok().flatten());
    match stored.as_deref() {
        Some("dark") => Theme::Dark,
        Some("light") => Theme::Light,
        _ => {
            let dark =
                web_sys::window().and_then(|w| w.match_media("(prefers-color-scheme: dark)").ok().flatten()).is_some_and(|m| m.matches());
            if dark {
                Theme::Dark
            } else {
                Theme::Light
            }
        }
    }
}

fn current_hash() -> String {
    web_sys::window().and_then(|w| w.location().hash().ok()).unwrap_or_default()
}

/// Applies a view from the URL hash to the state.
fn apply_hash(state: AppState, view: HashView) {
    if let Some(t) = view.tool {
        state.choose_tool(t);
    }
    if let Some(f) = view.file {
        if state.selected.get_untracked().as_deref() != Some(f.as_str()) {
            state.hash_selection.set_value(Some(f.clone()));
        }
        state.selected.set(Some(f));
    }
    state.module.set(view.module);
    state.memory_space.set(view.memory_space);
    state.memory_id.set(view.memory_id);
    state.breakdown_row.set(view.row);
    state.trace_window.set(view.trace_window);
    state.trace_range.set(view.trace_range);
    state.step.set(view.step);
    state.highlight_op.set(view.highlight_op);
    state.trace_search.set(view.trace_search);
    state.all_hosts.set(view.all_hosts);
    state.trace_event.set(view.trace_event);
    state.baseline_run.set(view.baseline_run);
    state.step_ops.set(view.step_ops);
    state.graph_node.set(view.graph_node);
    state.graph_width.set(view.graph_width.unwrap_or(crate::analysis::graph_viewer::DEFAULT_WIDTH));
    state.graph_shade.set(view.graph_shade.unwrap_or_default());
    state.snapshot_device.set(view.snapshot_device.unwrap_or(0));
    state.snapshot_event.set(view.snapshot_event);
    state.torch_ops_by_shape.set(view.torch_ops_by_shape);
    if view.demo && !state.demo.get_untracked() {
        state.demo.set(true);
        drop::open_demo(state);
    }
}

#[component]
pub fn App(
    /// The theme stored or preferred, read before the mount.
    theme: Theme,
) -> impl IntoView {
    let state = AppState::new();
    state.theme.set(theme);
    provide_context(state);
    engine_client::init(state);
    let view = HashView::parse(&current_hash());
    match engine_client::bundle() {
        // An offline bundle opens its own profiles; the saved view is in the hash, or, where the page
        // cannot write its URL (a notebook's about:srcdoc frame), in the bundle itself.
        Some(boot) => {
            drop::open_embedded(state, &boot);
            let saved = || js_sys::Reflect::get(&boot, &"hash".into()).ok().and_then(|h| h.as_string()).unwrap_or_default();
            let view = if current_hash().is_empty() { HashView::parse(&saved()) } else { view };
            apply_hash(state, HashView { demo: false, ..view });
        }
        None => apply_hash(state, view),
    }

    // The hash follows the view (replaceState: no history entry per click). A landing page opened
    // without a hash keeps none, so start-up pays no replaceState.
    let has_view = Memo::new(move |_| !state.files.with(Vec::is_empty) || state.demo.get());
    Effect::new(move |_| {
        if !has_view.get() && current_hash().is_empty() {
            return;
        }
        let hash = HashView {
            tool: Some(state.tool.get()),
            file: state.selected.get(),
            demo: state.demo.get(),
            module: state.module.get(),
            memory_space: state.memory_space.get(),
            memory_id: state.memory_id.get(),
            row: state.breakdown_row.get(),
            trace_window: state.trace_window.get(),
            trace_range: state.trace_range.get(),
            step: state.step.get(),
            highlight_op: state.highlight_op.get(),
            trace_search: state.trace_search.get(),
            all_hosts: state.all_hosts.get(),
            trace_event: state.trace_event.get(),
            baseline_run: state.baseline_run.get(),
            step_ops: state.step_ops.get(),
            graph_node: state.graph_node.get(),
            graph_width: Some(state.graph_width.get()).filter(|&w| w != crate::analysis::graph_viewer::DEFAULT_WIDTH),
            graph_shade: Some(state.graph_shade.get()).filter(|&s| s != crate::ui::state::GraphShade::Category),
            snapshot_device: Some(state.snapshot_device.get()).filter(|&d| d != 0),
            snapshot_event: state.snapshot_event.get(),
            torch_ops_by_shape: state.torch_ops_by_shape.get(),
        }
        .to_hash();
        if hash != current_hash() {
            if let Some(h) = web_sys::window().and_then(|w| w.history().ok()) {
                let _ = h.replace_state_with_url(&JsValue::NULL, "", Some(&hash));
            }
        }
    });
    // A memory ID, breakdown row or trace window belongs to one file: forget them when another file
    // is selected, unless a URL hash selected it together with its own.
    Effect::new(move |prev: Option<Option<String>>| {
        let current = state.selected.get();
        let from_hash = state.hash_selection.try_update_value(Option::take).flatten();
        if prev.is_some_and(|p| p != current) && from_hash != current {
            state.memory_id.set(None);
            state.breakdown_row.set(None);
            state.trace_window.set(None);
            state.trace_range.set(None);
            state.step.set(None);
            state.highlight_op.set(None);
            state.trace_search.set(None);
            state.trace_event.set(None);
            state.graph_node.set(None);
            state.snapshot_device.set(0);
            state.snapshot_event.set(None);
        }
        current
    });
    // ... and the view follows a hash the user pasted or navigated to.
    let on_hash = Closure::<dyn FnMut()>::new(move || apply_hash(state, HashView::parse(&current_hash())));
    if let Some(w) = web_sys::window() {
        w.set_onhashchange(Some(on_hash.as_ref().unchecked_ref()));
    }
    on_hash.forget();

    // The theme is stored when the user changes it, not on the first run (it was just read).
    Effect::new(move |prev_run: Option<()>| {
        let theme = if state.theme.get() == Theme::Dark { "dark" } else { "light" };
        if let Some(doc) = web_sys::window().and_then(|w| w.document()).and_then(|d| d.document_element()) {
            let _ = doc.set_attribute("data-theme", theme);
        }
        if prev_run.is_some() {
            if let Some(s) = web_sys::window().and_then(|w| w.local_storage().ok().flatten()) {
                let _ = s.set_item("tidemark.theme", theme);
            }
        }
    });

    // Keyboard: 1–9 open the tools in navigation order, `[`/`]` the previous/next one, Escape clears
    // the selected step (when not typing in a field).
    let on_key = Closure::<dyn FnMut(web_sys::KeyboardEvent)>::new(move |ev: web_sys::KeyboardEvent| {
        let typing = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .is_some_and(|e| matches!(e.tag_name().as_str(), "INPUT" | "SELECT" | "TEXTAREA"));
        if typing || ev.ctrl_key() || ev.meta_key() || ev.alt_key() {
            return;
        }
        let key = ev.key();
        match key.as_str() {
            "Escape" if state.step.get_untracked().is_some() => state.step.set(None),
            "[" => state.choose_tool(state.tool.get_untracked().step(-1, untrack(|| components::tool_nav::shown_suite(state)))),
            "]" => state.choose_tool(state.tool.get_untracked().step(1, untrack(|| components::tool_nav::shown_suite(state)))),
            _ => {
                let nav = || Tool::in_nav_order(untrack(|| components::tool_nav::shown_suite(state)));
                if let Some(t) = key.parse::<usize>().ok().and_then(|n| n.checked_sub(1)).and_then(|i| nav().get(i).copied()) {
                    state.choose_tool(t);
                }
            }
        }
    });
    if let Some(w) = web_sys::window() {
        let _ = w.add_event_listener_with_callback("keydown", on_key.as_ref().unchecked_ref());
    }
    on_key.forget();

    // What the main area shows, as a memo: the tool view is built again only when the tool or the
    // selected file's state changes, not on every progress tick of a file loading beside it.
    let shown = Memo::new(move |_| state.shown());
    // The main area is drawn in the task after the shell's, so that neither blocks the page for long.
    let main_ready = RwSignal::new(false);
    set_timeout(move || main_ready.set(true), std::time::Duration::ZERO);
    let dragging = RwSignal::new(0i32);
    let on_drag_enter = move |ev: web_sys::DragEvent| {
        ev.prevent_default();
        dragging.update(|d| *d += 1);
    };
    let on_drop = move |ev: web_sys::DragEvent| {
        ev.prevent_default();
        dragging.set(0);
        drop::open_drop(state, &ev);
    };
    view! {
        <div
            class="app"
            class:dragging={move || dragging.get() > 0}
            on:dragenter=on_drag_enter
            on:dragleave=move |_| dragging.update(|d| *d = (*d - 1).max(0))
            on:dragover=|ev| ev.prevent_default()
            on:drop=on_drop
        >
            <components::toolbar::Toolbar />
            <div class="body">
                <Show when=move || !state.files.with(Vec::is_empty)>
                    <div class="side">
                        <components::tool_nav::ToolNav />
                        <views::files::FileList />
                    </div>
                </Show>
                <main class="main">
                    <views::files::ErrorBanners />
                    {move || components::truncated_banner::truncated_banner(&shown.get())}
                    {move || components::empty_reason::empty_reason(state.tool.get(), &shown.get(), state.all_hosts_ids().is_some())}
                    {move || main_ready.get().then(|| main_view(state.tool.get(), shown.get()))}
                </main>
            </div>
            <div class="drop-overlay" aria-hidden="true"><div>"Drop to open — files stay on this machine"</div></div>
        </div>
    }
}

fn main_view(tool: Tool, shown: Shown) -> AnyView {
    match shown {
        Shown::Nothing => view! { <views::landing::Landing /> }.into_any(),
        Shown::Ready { file_id, details } => match tool {
            Tool::FileDetails => view! { <views::file_details::FileDetails details=(*details).clone() /> }.into_any(),
            Tool::TorchSnapshot => view! { <views::torch_snapshot::TorchSnapshot file_id details=(*details).clone() /> }.into_any(),
            Tool::OverviewPage => view! { <views::overview_page::OverviewPage file_id details=(*details).clone() /> }.into_any(),
            Tool::DeviceMemory => view! { <views::device_memory::DeviceMemory details=(*details).clone() /> }.into_any(),
            Tool::MemoryProfile => view! { <views::memory_profile::MemoryProfile file_id details=(*details).clone() /> }.into_any(),
            Tool::MemoryViewer => view! { <views::memory_viewer::MemoryViewerView file_id /> }.into_any(),
            Tool::TraceViewer => view! { <views::trace_viewer::TraceViewer file_id /> }.into_any(),
            Tool::FrameworkOpStats => {
                view! { <views::framework_op_stats::FrameworkOpStats file_id details=(*details).clone() /> }.into_any()
            }
            Tool::HloStats => view! { <views::hlo_stats::HloStats file_id details=(*details).clone() /> }.into_any(),
            Tool::KernelStats => view! { <views::kernel_stats::KernelStats file_id details=(*details).clone() /> }.into_any(),
            Tool::RooflineModel => view! { <views::roofline_model::RooflineModel file_id details=(*details).clone() /> }.into_any(),
            Tool::OpProfile => view! { <views::op_profile::OpProfile file_id details=(*details).clone() /> }.into_any(),
            Tool::InputPipeline => view! { <views::input_pipeline::InputPipeline file_id details=(*details).clone() /> }.into_any(),
            Tool::XlaOpsCpu => view! { <views::xla_ops_cpu::XlaOpsCpu file_id details=(*details).clone() /> }.into_any(),
            Tool::MemoryAcrossHosts => {
                view! { <views::memory_across_hosts::MemoryAcrossHostsView file_id details=(*details).clone() /> }.into_any()
            }
            Tool::RunComparison => view! { <views::run_comparison::RunComparison details=(*details).clone() /> }.into_any(),
            Tool::GraphViewer => view! { <views::graph_viewer::GraphViewerView file_id /> }.into_any(),
            Tool::TorchOverview => view! { <views::torch::overview::TorchOverview file_id details=(*details).clone() /> }.into_any(),
            Tool::TorchOperators => view! { <views::torch::operators::TorchOperators file_id details=(*details).clone() /> }.into_any(),
            Tool::TorchKernels => view! { <views::torch::kernels::TorchKernels file_id details=(*details).clone() /> }.into_any(),
            Tool::TorchMemory => view! { <views::torch::memory::TorchMemory file_id details=(*details).clone() /> }.into_any(),
            Tool::TorchRanks => view! { <views::torch_ranks::TorchRanks details=(*details).clone() /> }.into_any(),
        },
        Shown::Loading { path } => view! { <p class="muted loading">"Loading " {path} "…"</p> }.into_any(),
        Shown::Failed => {
            view! { <p class="muted">"This file could not be opened; see the message above. Other files are unaffected."</p> }.into_any()
        }
        Shown::Missing { path } => {
            let hint = path.map(|p| format!("{p} is not loaded in this page. Drop it again to restore this view."));
            view! { <p class="muted" data-testid="missing-file">{hint.unwrap_or_else(|| "Select a file on the left.".into())}</p> }
                .into_any()
        }
    }
}
