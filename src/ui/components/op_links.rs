//! Links from an op row to the other tools, for every op table: "buffers" opens the Memory Viewer on
//! the op's module with the buffers the op defines highlighted; "occurrences" opens the Trace Viewer
//! with its search set to exactly that op (`="name"`: its events, not those of ops whose name
//! contains it; the first match framed, next / previous from there); "graph" opens the Graph tool on
//! the op's module centred on it.

use crate::analysis::trace_viewer::op_args::Query;
use crate::ui::state::{AppState, Tool};
use leptos::prelude::*;

/// Opens the Memory Viewer of the selected file on `module` (XProf's name, `jit_train_step(14)`) with
/// the buffers of instruction `op` highlighted (none when `op` is `None`).
pub fn show_buffers(state: AppState, module: String, op: Option<String>) {
    state.module.set(Some(module));
    state.memory_space.set(None);
    state.highlight_op.set(op);
    state.tool.set(Tool::MemoryViewer);
}

/// Opens the Graph tool of the selected file on `module`, centred on instruction `op`.
pub fn show_graph(state: AppState, module: String, op: String) {
    state.module.set(Some(module));
    state.graph_node.set(Some(op));
    state.tool.set(Tool::GraphViewer);
}

/// Opens the Trace Viewer of the selected file searching for exactly `op`, the whole trace in view.
pub fn show_occurrences(state: AppState, op: String) {
    state.trace_window.set(None);
    state.trace_range.set(None);
    state.trace_search.set(Some(Query::exact_text(&op)));
    state.tool.set(Tool::TraceViewer);
}

/// Opens `tool` (an op table or Op Profile) with its filter set to exactly `op`, from the Graph tool's
/// card: the tool's table takes the op when it is next drawn.
pub fn show_op_in(state: AppState, tool: Tool, op: String) {
    state.op_search.set(Some(op));
    state.tool.set(tool);
}

/// One link to another tool: a small button that acts without selecting the row it sits in.
#[component]
pub fn LinkButton(
    /// What the browser tests click: `op-show-graph`, `buffer-show-graph`, ...
    testid: &'static str,
    label: &'static str,
    /// Where the link goes, in words.
    #[prop(into)]
    title: String,
    go: impl Fn() + Send + Sync + 'static,
) -> impl IntoView {
    view! {
        <button
            class="op-link"
            data-testid=testid
            title=title
            on:click=move |ev| {
                ev.stop_propagation();
                go();
            }
        >
            {label}
        </button>
    }
}

/// The links of one op row. Without a module (a framework op, an op whose module is not in the
/// trace) there are no buffers or graph to show, and only "occurrences" is offered.
#[component]
pub fn OpLinks(
    /// The op's HLO module as the Memory Viewer names it (`jit_train_step(14)`), when known.
    module: Option<String>,
    /// The op's name: an HLO instruction (`fusion.3`) or a framework op (`dense/MatMul`).
    op: String,
) -> impl IntoView {
    let state = expect_context::<AppState>();
    let module_links = module.map(|module| {
        let (m, o) = (module.clone(), op.clone());
        let buffers = view! {
            <LinkButton
                testid="op-show-buffers"
                label="buffers"
                title=format!("Memory Viewer: {module}, the buffers {op} defines highlighted")
                go=move || show_buffers(state, m.clone(), Some(o.clone()))
            />
        };
        let (m, o) = (module.clone(), op.clone());
        let graph = view! {
            <LinkButton testid="op-show-graph" label="graph" title=format!("Graph: {module} around {op}") go=move || show_graph(state, m.clone(), o.clone()) />
        };
        (buffers, graph)
    });
    let title = format!("Trace Viewer: the events of {op}");
    view! {
        <span class="op-links">
            {module_links}
            <LinkButton testid="op-show-occurrences" label="occurrences" title go=move || show_occurrences(state, op.clone()) />
        </span>
    }
}
