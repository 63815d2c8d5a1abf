//! The tool navigation: the selected file's tools ([`Suite`]: XProf's, the PyTorch Profiler's, or a
//! CUDA memory snapshot's) under the question each answers (steps, ops, trace, memory, file), listed
//! down the side panel so a dozen tools stay one click away without a crowded tab bar. The first
//! nine carry their number key; `[` and `]` step through all of them.

use crate::engine::first_screen;
use crate::engine::tool::Suite;
use crate::ui::state::{AppState, Shown, Tool, ToolGroup};
use leptos::prelude::*;

/// The suite of the selected file, XProf's until it is open (the number keys read it too).
pub fn shown_suite(state: AppState) -> Suite {
    match state.shown() {
        Shown::Ready { details, .. } => Suite::of(details.format),
        _ => Suite::XProf,
    }
}

#[component]
pub fn ToolNav() -> impl IntoView {
    let state = expect_context::<AppState>();
    let suite = Memo::new(move |_| shown_suite(state));
    // A file of another kind selected while a tool of the last one's is shown: its own first screen,
    // rather than a tool that cannot read it.
    Effect::new(move |_| {
        let Shown::Ready { details, .. } = state.shown() else { return };
        let tool = state.tool.get_untracked();
        if !tool.in_suite(Suite::of(details.format)) {
            state.tool.set(first_screen::landing(&details, false));
        }
    });
    move || {
        let order = Tool::in_nav_order(suite.get());
        let key_of = {
            let order = order.clone();
            move |t: Tool| order.iter().position(|x| *x == t).filter(|i| *i < 9).map(|i| (i + 1).to_string())
        };
        view! {
            <nav class="tool-nav" role="tablist" aria-orientation="vertical" aria-label="Tools">
                {ToolGroup::ALL
                    .into_iter()
                    .filter(|g| order.iter().any(|t| t.group() == *g))
                    .map(|g| {
                        view! {
                            <div class="tool-group" data-group=g.title()>
                                <div class="tool-group-head">{g.title()}</div>
                                {order
                                    .iter()
                                    .copied()
                                    .filter(|t| t.group() == g)
                                    .map(|t| {
                                        let key = key_of(t);
                                        let title = match &key {
                                            Some(k) => format!("{} (key {k})", t.title()),
                                            None => t.title().to_string(),
                                        };
                                        view! {
                                            <button
                                                role="tab"
                                                class="tab"
                                                data-tool=t.slug()
                                                title=title
                                                aria-selected=move || (state.tool.get() == t).to_string()
                                                on:click=move |_| state.choose_tool(t)
                                            >
                                                <span class="tab-name">{t.title()}</span>
                                                <kbd class="tab-key">{key.unwrap_or_default()}</kbd>
                                            </button>
                                        }
                                    })
                                    .collect_view()}
                            </div>
                        }
                    })
                    .collect_view()}
            </nav>
        }
    }
}
