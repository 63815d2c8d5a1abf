//! The memory timeline: XProf's sampled points, zoomed into the full-resolution timeline through
//! the engine, with hover details and the selected breakdown row's lifetimes.

use super::*;
use crate::ui::state::StepPick;
use crate::ui::views::trace_viewer::{show_in_trace, show_span_in_trace};

/// Zooming: the visible range `v` kept inside the profile and at least [`MIN_SPAN_PS`] wide, or
/// `None` for the whole profile.
pub(super) fn zoomed(full: (i64, i64), v: Viewport) -> Option<(i64, i64)> {
    let v = v.within(Viewport::x_range(full.0 as f64, full.1 as f64), MIN_SPAN_PS as f64, 0.0);
    let range = (v.x0.round() as i64, v.x1.round() as i64);
    (range != full).then_some(range)
}

#[component]
pub(super) fn TimelineChart(file_id: u32, a: Arc<AllocatorView>, selected_row: RwSignal<Option<usize>>) -> impl IntoView {
    let state = expect_context::<AppState>();
    let full = (a.first_time_ps, a.last_time_ps.max(a.first_time_ps + MIN_SPAN_PS));
    // The step selected in the Overview: the chart opens zoomed to its span, follows a new pick and
    // shows the whole profile again when it is cleared.
    let step_zoom = move |p: Option<StepPick>| p.and_then(|p| zoomed(full, Viewport::x_range(p.begin_ps as f64, p.end_ps as f64)));
    let zoom = RwSignal::new(step_zoom(state.step.get_untracked()));
    Effect::new(move |prev: Option<Option<StepPick>>| {
        let picked = state.step.get();
        if prev.is_some_and(|prev| prev != picked) {
            zoom.set(step_zoom(picked));
        }
        picked
    });
    let hover = RwSignal::new(None::<usize>);
    // A click (no drag) pins the hovered event's time, and its time in the trace, which the bar then
    // links to.
    let pinned_ps = RwSignal::new(None::<(i64, i64)>);
    let pointer = RwSignal::new((0.0f64, 0.0f64));
    let drag = RwSignal::new(None::<(f64, f64)>);
    let show_free = RwSignal::new(false);
    let width = RwSignal::new(0.0f64);
    let canvas_ref = NodeRef::<leptos::html::Canvas>::new();
    let wrap_ref = NodeRef::<leptos::html::Div>::new();

    let range = move || zoom.get().unwrap_or(full);
    // Zoomed: ask for the full-resolution events of the range (about two per pixel).
    let memory_id = a.memory_id.clone();
    let window = use_engine("Memory Profile zoom", move || {
        let (start_ps, end_ps) = zoom.get()?;
        let max_points = (width.get_untracked() * 2.0).max(500.0) as usize;
        Some(request::MemoryTimeline { file_id, memory_id: memory_id.clone(), start_ps, end_ps, max_points })
    })
    .reply;
    Effect::new(move |_| {
        zoom.track();
        hover.set(None);
    });
    // The events on screen: the zoomed window once it arrived, else XProf's sampled timeline.
    let sampled = StoredValue::new(a.clone());
    let with_events = move |f: &mut dyn FnMut(&[TimelineEvent])| match (zoom.get(), window.get()) {
        (Some(z), Reply::Ready(w)) if (w.start_ps, w.end_ps) == z => f(&w.events),
        _ => sampled.with_value(|a| f(&a.timeline)),
    };
    let frame = move || timeline::frame(width.get(), CHART_HEIGHT, range().0, range().1);

    // Follow the container's width, as every chart does.
    Effect::new(move |_| {
        if let Some(el) = wrap_ref.get() {
            observe_width(&el, move |w| width.set(w));
        }
    });

    // Draw whenever anything shown changes (theme included: colours come from CSS), in the next
    // animation frame: the first draw then is not part of the frame that lays out the new view (its
    // width arrives from the resize observer, during that frame's layout), and hovering draws once
    // per frame.
    let a3 = a.clone();
    let next_draw = std::rc::Rc::new(std::cell::RefCell::new(None));
    Effect::new(move |_| {
        let _theme = state.theme.get();
        let f = frame();
        let Some(canvas) = canvas_ref.get() else { return };
        if f.w <= 0.0 {
            return;
        }
        // What the frame draws with; the events are read then, so track them here.
        with_events(&mut |_| ());
        let shown = (canvas, f, state.unit.get(), selected_row.get(), hover.get(), drag.get(), show_free.get());
        let a3 = a3.clone();
        draw_next_frame(&next_draw, shown, move |(canvas, f, unit, selected, hover, drag, show_free)| {
            // The chart may have left the page (its signals disposed) since the frame was asked for.
            if zoom.try_get_untracked().is_none() || !canvas.is_connected() {
                return;
            }
            let Some(ctx) = prepare(&canvas, f.w, f.h) else { return };
            let lifetimes = selected.and_then(|i| a3.breakdown.get(i)).map(|r| r.lifetimes.as_slice()).unwrap_or(&[]);
            let palette = Palette::read();
            with_events(&mut |events| {
                let scene = Scene {
                    events,
                    peak_time_ps: a3.summary.peak_stats_time_ps,
                    peak_bytes: a3.summary.peak_stats.peak_bytes_in_use,
                    lifetimes,
                    hover,
                    drag,
                    show_free,
                    unit,
                };
                timeline::draw(&ctx, &f, &scene, &palette);
            });
        });
    });

    let on_move = move |e: web_sys::MouseEvent| {
        let (x, y) = (f64::from(e.offset_x()), f64::from(e.offset_y()));
        pointer.set((x, y));
        let f = frame();
        if let Some((x0, _)) = drag.get_untracked() {
            drag.set(Some((x0, x)));
        }
        let mut found = None;
        if f.in_plot(x, y) {
            with_events(&mut |events| found = timeline::event_at(events, timeline::time_at(&f, x)));
        }
        if hover.get_untracked() != found {
            hover.set(found);
        }
    };
    let on_down = move |e: web_sys::MouseEvent| {
        let (x, y) = (f64::from(e.offset_x()), f64::from(e.offset_y()));
        if e.button() == 0 && frame().in_plot(x, y) {
            drag.set(Some((x, x)));
        }
    };
    let on_up = move |_: web_sys::MouseEvent| {
        if let Some((x0, x1)) = drag.get_untracked() {
            drag.set(None);
            if (x1 - x0).abs() < 5.0 {
                let mut time = None;
                if let Some(i) = hover.get_untracked() {
                    with_events(&mut |events| time = events.get(i).map(|e| (e.point.time_offset_ps, e.point.trace_time_ps)));
                }
                pinned_ps.set(time);
            } else {
                let f = frame();
                let (t0, t1) = (timeline::time_at(&f, x0.min(x1)), timeline::time_at(&f, x0.max(x1)));
                zoom.set(zoomed(full, Viewport::x_range(t0 as f64, t1 as f64)));
            }
        }
    };
    let on_wheel = move |e: web_sys::WheelEvent| {
        let f = frame();
        let x = f64::from(e.offset_x());
        if e.delta_y() == 0.0 || !f.in_plot(x, f64::from(e.offset_y())) {
            return;
        }
        e.prevent_default();
        zoom.set(zoomed(full, f.wheel(x, f64::from(e.offset_y()), e.delta_y(), true, false)));
    };
    let on_key = move |e: web_sys::KeyboardEvent| {
        let Some(nav) = key_nav(&e.key()) else { return };
        e.prevent_default();
        let f = frame();
        zoom.set(zoomed(full, f.v.key(nav, Viewport::x_range(full.0 as f64, full.1 as f64), false)));
    };

    // Hover details, from the hovered event.
    let a4 = a.clone();
    let tooltip = move || {
        let i = hover.get()?;
        let mut event = None;
        with_events(&mut |events| event = events.get(i).cloned());
        let e = event?;
        let (x, y) = pointer.get();
        let left = if x + 300.0 > width.get() { x - 300.0 } else { x + 14.0 };
        let m = &e.activity;
        let st = e.point.stats;
        // What asked for the allocation, where the trace's allocations are named.
        let name = e.name.and_then(|k| a4.named.as_ref()?.labels.get(k as usize).cloned());
        let is_peak =
            e.point.time_offset_ps == a4.summary.peak_stats_time_ps && st.in_use_bytes() == a4.summary.peak_stats.peak_bytes_in_use;
        Some(view! {
            <div class="mp-tooltip" data-testid="timeline-tooltip" style=format!("left:{left:.0}px;top:{:.0}px", (y + 14.0).min(CHART_HEIGHT - 40.0))>
                <div class="tt-head">
                    <Text metric="hover_activity" value=format!("{:?}", m.activity).to_lowercase() shown=if m.activity == Activity::Allocation { "Allocation" } else { "Deallocation" }.to_string() />
                    " at " <Text metric="hover_time_ps" value=e.point.time_offset_ps.to_string() shown=ms(e.point.time_offset_ps) />
                    {is_peak.then_some(" · peak")}
                </div>
                <div class="tt-op"><Text metric="hover_op" value=m.tf_op_name.clone() shown=if m.tf_op_name.is_empty() { "(no op)".to_string() } else { m.tf_op_name.clone() } /></div>
                {name.map(|n| view! { <div class="tt-name" data-testid="hover-name">"Allocated by " <Text metric="hover_name" value=n /></div> })}
                <dl>
                    <dt>"Size"</dt><dd><Bytes metric="hover_allocation_bytes" value=m.allocation_bytes /> " (requested " <Bytes metric="hover_requested_bytes" value=m.requested_bytes /> ")"</dd>
                    <dt>"Shape"</dt><dd><Text metric="hover_shape" value=m.tensor_shape.clone() /> " " <Text metric="hover_dtype" value=m.data_type.clone() /></dd>
                    <dt>"Region"</dt><dd><Text metric="hover_region" value=m.region_type.clone() /></dd>
                    <dt>"Step"</dt><dd><Text metric="hover_step" value=m.step_id.to_string() /></dd>
                    <dt>"Heap"</dt><dd><Bytes metric="hover_heap_bytes" value=st.heap_allocated_bytes /> " + stack " <Bytes metric="hover_stack_bytes" value=st.stack_reserved_bytes /></dd>
                    <dt>"Free"</dt><dd><Bytes metric="hover_free_bytes" value=st.free_memory_bytes /> " · frag. " <Text metric="hover_fragmentation" value=st.fragmentation.to_string() shown=percent(st.fragmentation) /></dd>
                </dl>
            </div>
        })
    };

    let a5 = a.clone();
    let a_life = a.clone();
    let status = move || {
        let points = {
            let mut n = 0;
            with_events(&mut |events| n = events.len());
            n
        };
        match (zoom.get(), window.get()) {
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
                    "XProf's " <Count metric="timeline_points" value=points as u64 /> " sampled points of " {fmt_count(a5.snapshot_count as u64)} " events"
                </span>
            }.into_any(),
        }
    };

    view! {
        <section class="mp-timeline">
            <h2>"Memory timeline"</h2>
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
                    {move || selected_row.get().map(|_| view! { <span class="sw life"></span>"Selected row's lifetimes" })}
                </span>
                <span class="spacer"></span>
                {move || {
                    let (t, trace_ps) = pinned_ps.get()?;
                    Some(view! {
                        <a href="#" data-testid="point-trace-link" data-time-ps=t.to_string() data-trace-ps=trace_ps.to_string() title="The events at the clicked point, in the Trace Viewer"
                            on:click=move |ev| { ev.prevent_default(); show_in_trace(state, trace_ps); }>
                            {format!("{} in the trace →", ms(t))}
                        </a>
                    })
                }}
                {move || {
                    let life = selected_row.get().and_then(|i| a_life.breakdown.get(i)).and_then(|r| r.lifetimes.first().copied())?;
                    let (from, to) = (life.allocated_trace_ps, life.deallocated_trace_ps.unwrap_or(a_life.end_trace_time_ps));
                    Some(view! {
                        <a href="#" data-testid="lifetime-trace-link" data-trace-from-ps=from.to_string() data-trace-to-ps=to.to_string()
                            title="What ran while the selected row's (first) allocation was live, in the Trace Viewer"
                            on:click=move |ev| { ev.prevent_default(); show_span_in_trace(state, from, to); }>
                            "lifetime in the trace →"
                        </a>
                    })
                }}
                <span class="muted">{status}</span>
                <button class="btn" data-testid="zoom-reset" disabled=move || zoom.get().is_none() on:click=move |_| zoom.set(None)>"Reset zoom"</button>
            </div>
            <div class="mp-chart" node_ref=wrap_ref>
                <canvas
                    node_ref=canvas_ref
                    data-testid="timeline-canvas"
                    // The visible range and plot edges, so tests (and scripts) can aim at a time.
                    data-step=move || state.step.get().map(|p| p.group_id.to_string())
                    data-start-ps=move || range().0.to_string()
                    data-end-ps=move || range().1.to_string()
                    data-plot-left=move || frame().plot_left().to_string()
                    data-plot-right=move || frame().plot_right().to_string()
                    tabindex="0"
                    aria-label="Memory timeline. Drag or scroll to zoom, W/S zoom, A/D pan, double-click or 0 resets."
                    style=move || format!("width:{}px;height:{CHART_HEIGHT}px", width.get())
                    on:mousemove=on_move
                    on:mousedown=on_down
                    on:mouseup=on_up
                    on:mouseleave=move |_| { hover.set(None); drag.set(None); }
                    on:wheel=on_wheel
                    on:dblclick=move |_| zoom.set(None)
                    on:keydown=on_key
                ></canvas>
                {tooltip}
            </div>
            <p class="hint muted">"Drag or scroll to zoom into the full-resolution timeline · W/S zoom, A/D pan · double-click or 0 resets · click a point to link it into the trace · click a row below to draw its lifetime"</p>
        </section>
    }
}
