//! The chart's bar: the legend (with the free-memory switch), the links into the Trace Viewer (the
//! pinned point, the selected row's first lifetime), what is drawn (XProf's sampled points, or the
//! zoomed range's events and whether at full resolution) and the zoom's reset.

use super::super::*;
use super::Chart;
use crate::ui::views::trace_viewer::{show_in_trace, show_span_in_trace};

/// The bar above `c`'s canvas.
pub(super) fn bar(c: Chart) -> impl IntoView {
    let state = expect_context::<AppState>();
    let (selected_row, show_free, zoom) = (c.selected_row, c.show_free, c.zoom);
    view! {
        <div class="mp-chart-bar">
            <span class="legend">
                <span class="sw heap"></span>"Heap"
                <span class="sw stack"></span>"Stack"
                <label title="Free memory of the allocator; often far larger than what is in use, so it is off by default">
                    <input type="checkbox" data-testid="show-free" prop:checked=move || show_free.get() on:change=move |ev| show_free.set(event_target_checked(&ev)) />
                    <span class="sw free"></span>"Free"
                </label>
                <span class="sw frag"></span>"Fragmentation (right axis)"
                <span class="sw peak"></span>"Peak"
                {move || selected_row.get().map(|i| {
                    // A named trace's lifetime says what asked for the allocation (its name), not only "(no op)".
                    let name = c.a.get_value().breakdown.get(i).and_then(|r| r.name.clone()).filter(|n| !n.is_empty());
                    view! {
                        <span class="mp-life">
                            <span class="sw life"></span>"Selected row's lifetimes"
                            {name.map(|n| {
                                let title = n.clone();
                                view! { ": " <span class="mp-life-name" title=title data-testid="lifetime-name"><Text metric="lifetime_name" value=n /></span> }
                            })}
                        </span>
                    }
                })}
            </span>
            <span class="spacer"></span>
            {move || {
                let (t, trace_ps) = c.pinned_ps.get()?;
                Some(view! {
                    <a href="#" data-testid="point-trace-link" data-time-ps=t.to_string() data-trace-ps=trace_ps.to_string() title="The events at the clicked point, in the Trace Viewer"
                        on:click=move |ev| { ev.prevent_default(); show_in_trace(state, trace_ps); }>
                        {format!("{} in the trace →", ms(t))}
                    </a>
                })
            }}
            {move || {
                let a = c.a.get_value();
                let life = selected_row.get().and_then(|i| a.breakdown.get(i)).and_then(|r| r.lifetimes.first().copied())?;
                let (from, to) = (life.allocated_trace_ps, life.deallocated_trace_ps.unwrap_or(a.end_trace_time_ps));
                Some(view! {
                    <a href="#" data-testid="lifetime-trace-link" data-trace-from-ps=from.to_string() data-trace-to-ps=to.to_string()
                        title="What ran while the selected row's (first) allocation was live, in the Trace Viewer"
                        on:click=move |ev| { ev.prevent_default(); show_span_in_trace(state, from, to); }>
                        "lifetime in the trace →"
                    </a>
                })
            }}
            <span class="muted">{move || status(c)}</span>
            <button class="btn" data-testid="zoom-reset" disabled=move || zoom.get().is_none() on:click=move |_| zoom.set(None)>"Reset zoom"</button>
        </div>
    }
}

/// What the chart draws: XProf's sampled points, or the zoomed range's events (loading, at full
/// resolution, or thinned by the max filter).
fn status(c: Chart) -> impl IntoView {
    let points = {
        let mut n = 0;
        c.with_events(&mut |events| n = events.len());
        n
    };
    match (c.zoom.get(), c.window.get()) {
        (Some(z), Reply::Ready(w)) if (w.start_ps, w.end_ps) == z => {
            let full_res = w.events.len() == w.event_count;
            view! {
                <span data-testid="timeline-status" data-zoomed="true" data-full-resolution=full_res.to_string()>
                    {format!("{:.1}–{:.1} ms · ", z.0 as f64 / 1e9, z.1 as f64 / 1e9)} <Count metric="timeline_window_events" value=w.event_count as u64 /> " events"
                    {if full_res { ", full resolution".to_string() } else { format!(", {} points drawn (max filter)", fmt_count(points as u64)) }}
                </span>
            }.into_any()
        }
        (Some(z), _) => view! { <span data-testid="timeline-status" data-zoomed="loading">{format!("{:.1}–{:.1} ms · loading full resolution…", z.0 as f64 / 1e9, z.1 as f64 / 1e9)}</span> }.into_any(),
        (None, _) => view! {
            <span data-testid="timeline-status" data-zoomed="false">
                "XProf's " <Count metric="timeline_points" value=points as u64 /> " sampled points of " {fmt_count(c.a.with_value(|a| a.snapshot_count) as u64)} " events"
            </span>
        }.into_any(),
    }
}
