//! What the op table pages share around their tables: the page's frame (its controls with the time
//! unit, its `data-state` for the tests, the engine's answer time), the CSV file name, and the
//! sentence shown where the engine could not answer.

use crate::engine::FileOverview;
use crate::ui::components::time_unit::TimeUnitSelect;
use crate::ui::use_engine::{Fetch, Reply};
use leptos::prelude::*;

/// The page `testid` of `overview`'s file: `controls` and the time unit picker above what `page`
/// makes of the reply, or, until it is ready, `waiting` or why there is none (`error_testid`).
pub fn frame<T: Clone + Send + Sync + 'static>(
    testid: &'static str,
    overview: &FileOverview,
    fetch: Fetch<T>,
    controls: AnyView,
    (waiting, error_testid): (&'static str, &'static str),
    page: impl Fn(T) -> AnyView + Send + Sync + 'static,
) -> impl IntoView {
    view! {
        <article class="fos ops-page" data-file=overview.path.clone() data-testid=testid data-state=state(fetch)>
            <div class="fos-controls">
                {controls}
                <TimeUnitSelect />
                {move || fetch.elapsed_ms.get().map(|ms| view! { <span class="muted timing">{format!("answered in {ms:.0} ms")}</span> })}
            </div>
            {move || match answer(fetch.reply.get(), waiting, error_testid) {
                Ok(v) => page(v),
                Err(note) => note,
            }}
        </article>
    }
}

/// `loading`, `ready` or `failed`, as the page's `data-state`.
fn state<T: Clone + Send + Sync + 'static>(fetch: Fetch<T>) -> impl Fn() -> &'static str + Copy + Send + Sync + 'static {
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
fn answer<T>(reply: Reply<T>, waiting: &'static str, testid: &'static str) -> Result<T, AnyView> {
    Err(match reply {
        Reply::Ready(t) => return Ok(t),
        Reply::Waiting => view! { <p class="muted loading">{waiting}</p> }.into_any(),
        Reply::Failed(error) => view! { <p class="fos-empty" data-testid=testid>{error.detail()}</p> }.into_any(),
        Reply::Rejected(message) => view! { <p class="fos-empty" data-testid=testid>{message}</p> }.into_any(),
    })
}
