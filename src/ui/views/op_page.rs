//! What the op table pages share around their tables: the page's frame (its controls with the time
//! unit, its `data-state` for the tests, the engine's answer time), the CSV file name, the sentence
//! shown where the engine could not answer, and the self-time pie charts.

use crate::engine::framework_op_stats::TypeSelfTime;
use crate::engine::FileDetails;
use crate::ui::charts::pie::{PieChart, PieSlice};
use crate::ui::components::time_unit::TimeUnitSelect;
use crate::ui::state::AppState;
use crate::ui::use_engine::{Fetch, Reply};
use leptos::prelude::*;
use std::sync::Arc;

/// The page `testid` of `overview`'s file: `controls` and the time unit picker above what `page`
/// makes of the reply, or, until it is ready, `waiting` or why there is none (`error_testid`).
pub fn frame<T: Clone + Send + Sync + 'static>(
    testid: &'static str,
    details: &FileDetails,
    fetch: Fetch<T>,
    controls: AnyView,
    (waiting, error_testid): (&'static str, &'static str),
    page: impl Fn(T) -> AnyView + Send + Sync + 'static,
) -> impl IntoView {
    view! {
        <article class="fos ops-page" data-file=details.path.clone() data-testid=testid data-state=state(fetch)>
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
pub fn csv_name(details: &FileDetails, tool: &str) -> String {
    let base = details.name.trim_end_matches(".gz").trim_end_matches(".pb").trim_end_matches(".xplane");
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

/// A pie of self time by group (`groups`, from the engine), each slice's share as metric `metric` and,
/// when `value_metric` is set, its time as that metric, both keyed by the group; or `empty` where
/// there is no time to share.
#[component]
pub fn SelfTimePie(
    title: &'static str,
    testid: &'static str,
    metric: &'static str,
    groups: Vec<TypeSelfTime>,
    empty: String,
    value_metric: Option<&'static str>,
) -> impl IntoView {
    let state = expect_context::<AppState>();
    if !groups.iter().any(|t| t.self_time_us > 0.0) {
        return view! {
            <figure class="pie pie-none" data-testid=testid>
                <figcaption>{title}</figcaption>
                <p class="muted">{empty}</p>
            </figure>
        }
        .into_any();
    }
    let slices: Vec<PieSlice> =
        groups.into_iter().map(|t| PieSlice { label: t.op_type, value: t.self_time_us, fraction: t.fraction }).collect();
    let value_text = Arc::new(move |us: f64| state.time_unit.get().format(us));
    view! { <PieChart title slices=Arc::new(slices) testid metric value_text value_metric /> }.into_any()
}
