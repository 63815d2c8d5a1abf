//! Helpers shared by the profile, diff and series views: stacks, their keys and labels, and a table
//! with a stack panel under it.

use super::*;
pub(super) use crate::engine::file_details::base_name as basename;

/// `<module>:19 → func2:15 → func1:12`, root first, library frames marked.
pub(super) fn stack_view(frames: &[Frame]) -> impl IntoView {
    let frames = frames.to_vec();
    view! {
        <ol class="stack">
            {frames.into_iter().map(|f| view! {
                <li class:lib=f.library title=format!("{}:{}", f.file, f.line)>
                    <code>{f.function.clone()}</code>" "<span class="muted">{format!("{}:{}", basename(&f.file), f.line)}</span>
                </li>
            }).collect_view()}
        </ol>
    }
}

pub(super) fn stack_key(kind: &str, device: &str, site: &str) -> String {
    format!("{kind}|{device}|{site}")
}

/// `kind` or `kind · device`.
pub(super) fn kind_label(kind: &str, device: &str) -> String {
    if device.is_empty() {
        kind.to_string()
    } else {
        format!("{kind} · {device}")
    }
}

/// A table of stacks (`frames` of each row) with the whole stack of the row clicked below it: rows
/// keep one height, so the stack cannot unfold inside the table.
pub(super) fn with_stack_panel<R: Send + Sync + 'static>(spec: TableSpec<R>, rows: Vec<R>, frames: fn(&R) -> &[Frame]) -> impl IntoView {
    let rows = Arc::new(rows);
    let picked = RwSignal::new(None::<usize>);
    let of_row = rows.clone();
    view! {
        <Table spec=spec.pick(picked) rows />
        {move || match picked.get().and_then(|i| of_row.get(i)) {
            Some(r) => view! { <div class="stack-panel"><span class="muted small">"Stack, root first"</span>{stack_view(frames(r))}</div> }.into_any(),
            None => view! { <p class="muted small stack-panel">"Click a row for its whole stack."</p> }.into_any(),
        }}
    }
}
