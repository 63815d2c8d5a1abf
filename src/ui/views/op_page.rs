//! What the op table pages share around their tables: the page's `data-state` for the tests, the
//! CSV file name, and the sentence shown where the engine could not answer.

use crate::engine::FileOverview;
use crate::ui::use_engine::{Fetch, Reply};
use leptos::prelude::*;

/// `loading`, `ready` or `failed`, as the page's `data-state`.
pub fn state<T: Clone + Send + Sync + 'static>(fetch: Fetch<T>) -> impl Fn() -> &'static str + Copy + Send + Sync + 'static {
    move || match fetch.reply.get() {
        Reply::Waiting => "loading",
        Reply::Ready(_) => "ready",
        Reply::Failed(_) | Reply::Rejected(_) => "failed",
    }
}

/// `<trace>.<tool>.csv`, the trace's name without its `.xplane.pb(.gz)`.
pub fn csv_name(overview: &FileOverview, tool: &str) -> String {
    let base = overview.name.trim_end_matches(".gz").trim_end_matches(".pb").trim_end_matches(".xplane");
    format!("{base}.{tool}.csv")
}

/// The reply's data, or what the page shows instead: that it is on its way (`waiting`), or why the
/// engine could not answer, in words (`data-testid` `testid`).
pub fn answer<T>(reply: Reply<T>, waiting: &'static str, testid: &'static str) -> Result<T, AnyView> {
    Err(match reply {
        Reply::Ready(t) => return Ok(t),
        Reply::Waiting => view! { <p class="muted loading">{waiting}</p> }.into_any(),
        Reply::Failed(error) => view! { <p class="fos-empty" data-testid=testid>{error.detail()}</p> }.into_any(),
        Reply::Rejected(message) => view! { <p class="fos-empty" data-testid=testid>{message}</p> }.into_any(),
    })
}
