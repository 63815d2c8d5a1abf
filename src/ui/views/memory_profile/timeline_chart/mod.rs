//! The memory timeline: XProf's sampled points, zoomed into the full-resolution timeline through
//! the engine, with hover details and the selected breakdown row's lifetimes.
//!
//! One module per job: [`zoom`] keeps the zoomed range and asks the engine for its events,
//! [`drawing`] draws the chart, [`input`] turns the pointer, the wheel and the keys into a hover, a
//! pinned point or a zoom, and [`bar`] writes the chart's bar (status, links into the trace) and
//! [`tooltip`] the hovered event's details. This module holds what they share and lays them out.

mod bar;
mod drawing;
mod input;
mod tooltip;
mod zoom;

use super::*;
use crate::engine::memory_profile::TimelineWindow;
use crate::ui::charts::viewport::Frame;

/// What every job of the chart reads: the allocator, the range shown and its events, the pointer,
/// and what is selected. `Copy`, so every effect and handler takes its own.
#[derive(Clone, Copy)]
struct Chart {
    /// The allocator's view, with XProf's sampled timeline.
    a: StoredValue<Arc<AllocatorView>>,
    /// The whole profile's span, in ps, and the zoomed range (`None`: the whole profile).
    full: (i64, i64),
    zoom: RwSignal<Option<(i64, i64)>>,
    /// The engine's full-resolution events of the zoomed range.
    window: ReadSignal<Reply<Arc<TimelineWindow>>>,
    width: RwSignal<f64>,
    /// The event under the pointer, and the pointer's place on the canvas.
    hover: RwSignal<Option<usize>>,
    pointer: RwSignal<(f64, f64)>,
    /// The pixel columns a drag started and is at.
    drag: RwSignal<Option<(f64, f64)>>,
    /// A clicked point's time, and its time in the trace, which the bar links to.
    pinned_ps: RwSignal<Option<(i64, i64)>>,
    show_free: RwSignal<bool>,
    selected_row: RwSignal<Option<usize>>,
}

impl Chart {
    /// The range shown, in ps.
    fn range(&self) -> (i64, i64) {
        self.zoom.get().unwrap_or(self.full)
    }

    /// The canvas's frame at the range shown.
    fn frame(&self) -> Frame {
        let (a, b) = self.range();
        timeline::frame(self.width.get(), CHART_HEIGHT, a, b)
    }

    /// Calls `f` with the events on screen: the zoomed window once it arrived, else XProf's sampled
    /// timeline.
    fn with_events(&self, f: &mut dyn FnMut(&[TimelineEvent])) {
        match (self.zoom.get(), self.window.get()) {
            (Some(z), Reply::Ready(w)) if (w.start_ps, w.end_ps) == z => f(&w.events),
            _ => self.a.with_value(|a| f(&a.timeline)),
        }
    }
}

#[component]
pub(super) fn TimelineChart(file_id: u32, a: Arc<AllocatorView>, selected_row: RwSignal<Option<usize>>) -> impl IntoView {
    let state = expect_context::<AppState>();
    let full = (a.first_time_ps, a.last_time_ps.max(a.first_time_ps + MIN_SPAN_PS));
    let width = RwSignal::new(0.0f64);
    let zoom = zoom::follow_step(full);
    let window = zoom::events(file_id, a.memory_id.clone(), zoom, width);
    let c = Chart {
        a: StoredValue::new(a),
        full,
        zoom,
        window,
        width,
        hover: RwSignal::new(None),
        pointer: RwSignal::new((0.0, 0.0)),
        drag: RwSignal::new(None),
        pinned_ps: RwSignal::new(None),
        show_free: RwSignal::new(false),
        selected_row,
    };
    Effect::new(move |_| {
        zoom.track();
        c.hover.set(None);
    });
    let canvas_ref = NodeRef::<leptos::html::Canvas>::new();
    let wrap_ref = NodeRef::<leptos::html::Div>::new();

    // Follow the container's width, as every chart does.
    Effect::new(move |_| {
        if let Some(el) = wrap_ref.get() {
            observe_width(&el, move |w| width.set(w));
        }
    });
    drawing::draw(c, canvas_ref);

    view! {
        <section class="mp-timeline">
            <h2>"Memory timeline"</h2>
            {bar::bar(c)}
            <div class="mp-chart" node_ref=wrap_ref>
                <canvas
                    node_ref=canvas_ref
                    data-testid="timeline-canvas"
                    // The visible range and plot edges, so tests (and scripts) can aim at a time.
                    data-step=move || state.step.get().map(|p| p.group_id.to_string())
                    data-start-ps=move || c.range().0.to_string()
                    data-end-ps=move || c.range().1.to_string()
                    data-plot-left=move || c.frame().plot_left().to_string()
                    data-plot-right=move || c.frame().plot_right().to_string()
                    tabindex="0"
                    aria-label="Memory timeline. Drag or scroll to zoom, W/S zoom, A/D pan, double-click or 0 resets."
                    style=move || format!("width:{}px;height:{CHART_HEIGHT}px", width.get())
                    on:mousemove=move |e| input::pointer_move(c, &e)
                    on:mousedown=move |e| input::press(c, &e)
                    on:mouseup=move |_| input::release(c)
                    on:mouseleave=move |_| { c.hover.set(None); c.drag.set(None); }
                    on:wheel=move |e| input::wheel(c, &e)
                    on:dblclick=move |_| zoom.set(None)
                    on:keydown=move |e| input::key(c, &e)
                ></canvas>
                {tooltip::tooltip(c)}
            </div>
            <p class="hint muted">"Drag or scroll to zoom into the full-resolution timeline · W/S zoom, A/D pan · double-click or 0 resets · click a point to link it into the trace · click a row below to draw its lifetime"</p>
        </section>
    }
}
