//! The line over a tool that has nothing to show for the file: why, in one sentence, and what to do.
//! The reason is the engine's ([`first_screen::empty_reason`]), read from the file's overview, the
//! same sentence the command line prints first in the tool's text output.

use crate::engine::first_screen;
use crate::ui::state::{Shown, Tool};
use leptos::prelude::*;

/// The reason `tool` is empty for the shown file (none for a run's hosts combined, whose tools
/// answer for several files); its kind in `data-value` of `data-metric="empty_reason"`.
pub fn empty_reason(tool: Tool, shown: &Shown, combined: bool) -> Option<impl IntoView> {
    let Shown::Ready { details, .. } = shown else { return None };
    let tool = Some(tool).filter(|_| !combined)?;
    let reason = first_screen::empty_reason(tool, details)?;
    Some(view! {
        <p class="empty-reason" role="note" data-testid="empty-reason" data-metric="empty_reason" data-value=reason.kind()>
            {reason.sentence()}
        </p>
    })
}
