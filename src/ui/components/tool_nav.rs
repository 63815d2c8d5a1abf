//! The tool navigation: every tool under the question it answers (steps, ops, trace, memory, file),
//! listed down the side panel so a dozen tools stay one click away without a crowded tab bar. The
//! first nine carry their number key; `[` and `]` step through all of them.

use crate::ui::state::{AppState, Tool, ToolGroup};
use leptos::prelude::*;

#[component]
pub fn ToolNav() -> impl IntoView {
    let state = expect_context::<AppState>();
    let order = Tool::in_nav_order();
    let keys = order.clone();
    let key_of = move |t: Tool| keys.iter().position(|x| *x == t).filter(|i| *i < 9).map(|i| (i + 1).to_string());
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
