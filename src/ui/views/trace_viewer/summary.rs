//! The range selection's summary: the events starting in it, by name, with their count, total and
//! self time, in the page's one table.

use super::ps_text;
use crate::analysis::trace_viewer::summary::NameSummary;
use crate::engine::protocol::request;
use crate::ui::components::metric::{Count, Text};
use crate::ui::components::table::{Column, Table, TableSpec, TableState};
use crate::ui::state::AppState;
use crate::ui::use_engine::{use_engine, Reply};
use leptos::prelude::*;

fn time_column(id: &'static str, label: &'static str, metric: &'static str, of: fn(&NameSummary) -> i64) -> Column<NameSummary> {
    Column::new(id, label, move |r: &NameSummary, _| {
        view! { <Text metric key=r.name.clone() value=of(r).to_string() shown=ps_text(of(r)) /> }.into_any()
    })
    .right()
    .width("120px")
    .sort_key(of)
    .csv(metric, move |r| of(r).to_string())
}

#[component]
pub(super) fn RangeSummary(file_id: u32, origin_ps: i64) -> impl IntoView {
    let state = expect_context::<AppState>();
    let fetch = use_engine("Trace Viewer range summary", move || {
        let (from_ps, to_ps) = state.trace_range.get()?;
        Some(request::TraceRangeSummary { file_id, from_ps, to_ps, threads: None })
    });
    let table_state = TableState::sorted("total", true);
    let body = move || match (state.trace_range.get(), fetch.reply.get()) {
        (None, _) => view! { <p class="muted">"Shift-drag across the tracks to summarise a range."</p> }.into_any(),
        (Some(_), Reply::Waiting) => view! { <p class="muted loading">"Summarising…"</p> }.into_any(),
        (Some(_), Reply::Failed(e)) => view! { <p class="banner error">{e.detail()}</p> }.into_any(),
        (Some(_), Reply::Rejected(e)) => view! { <p class="banner error">{e}</p> }.into_any(),
        (Some((a, b)), Reply::Ready(rows)) => {
            let events: u64 = rows.iter().map(|r| r.count).sum();
            let columns = vec![
                Column::new("name", "Name", |r: &NameSummary, _| view! { <code title=r.name.clone()>{r.name.clone()}</code> }.into_any())
                    .sort_key(|r| r.name.clone())
                    .csv("name", |r| r.name.clone()),
                Column::new("count", "Count", |r: &NameSummary, _| {
                    view! { <Count metric="range_name_count" key=r.name.clone() value=r.count /> }.into_any()
                })
                .right()
                .width("90px")
                .sort_key(|r| r.count)
                .csv("count", |r| r.count.to_string()),
                time_column("total", "Total", "range_name_total_ps", |r| r.total_ps),
                time_column("self", "Self", "range_name_self_ps", |r| r.self_ps),
            ];
            let spec = TableSpec::new("tv-summary", columns)
                .testid("range-summary")
                .filter("Filter names", "range-filter", |r: &NameSummary| vec![r.name.as_str()])
                .csv("trace_range_summary.csv".to_string(), "range-csv");
            view! {
                <p data-testid="range-figures">
                    <Text metric="range_from_ps" value=(a - origin_ps).to_string() shown=ps_text(a - origin_ps) /> " – "
                    <Text metric="range_to_ps" value=(b - origin_ps).to_string() shown=ps_text(b - origin_ps) /> " · "
                    <Count metric="range_event_count" value=events /> " events starting in it, "
                    <Count metric="range_name_count_total" value=rows.len() as u64 /> " names "
                    <button class="btn" data-testid="range-clear" on:click=move |_| state.trace_range.set(None)>"Clear"</button>
                </p>
                <Table spec rows=rows state=table_state.clone() />
            }
            .into_any()
        }
    };
    view! {
        <section class="tv-panel" data-testid="trace-range">
            <h2>"Selected range"</h2>
            {body}
        </section>
    }
}
