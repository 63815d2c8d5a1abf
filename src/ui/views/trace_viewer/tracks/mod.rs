//! The tracks: process headers and thread names (DOM, collapsible) beside one canvas that draws the
//! engine's spans for the window, with the time axis above. The canvas stays put while the tracks
//! scroll under it (it is sticky and draws from the scroll offset), so it is never taller than the
//! screen however many threads there are. Over the spans go the flow arrows (the selected event's,
//! and all of the window's when asked), and under the host process its allocators' memory counter
//! tracks ([`super::overlays`]).
//!
//! One module per job, so each can be read (and changed) alone: [`requests`] asks the engine for
//! what is drawn, [`drawing`] draws the canvases, [`hit`] finds what lies under the pointer,
//! [`navigation`] turns presses, the wheel and the keys into a window (through the shared
//! [`crate::ui::charts::pan_zoom`]) or a selection, and [`labels`] writes the names column and the
//! counter tooltip. This module holds what they share and lays them out.

mod drawing;
mod hit;
mod labels;
mod navigation;
mod requests;

use super::layout::Layout;
use crate::analysis::trace_viewer::counters::CounterTracks;
use crate::analysis::trace_viewer::store::TraceOutline;
use crate::ui::charts::observe_width;
use crate::ui::charts::viewport::{Frame, Margins, Viewport};
use crate::ui::state::AppState;
use crate::ui::use_engine::Reply;
use leptos::prelude::*;
use navigation::{Navigation, Pointer};
use std::sync::Arc;

/// Width of the names column and the tracks' visible height, in CSS px.
const NAMES_W: f64 = 240.0;
const TRACKS_H: f64 = 560.0;

/// What every job of the tracks reads: the trace, the window shown, the canvas's width and scroll,
/// and the rows. `Copy`, so every effect and handler takes its own.
#[derive(Clone, Copy)]
struct TrackView {
    outline: StoredValue<Arc<TraceOutline>>,
    /// The whole trace's span and the window shown, in ps.
    full: (i64, i64),
    window: Memo<(i64, i64)>,
    /// The canvas's width and how far the tracks are scrolled down, in CSS px.
    width: RwSignal<f64>,
    scroll_top: RwSignal<f64>,
    /// The pids of the collapsed processes, and the rows that leaves.
    collapsed: RwSignal<Vec<u32>>,
    layout: Memo<Layout>,
    /// The allocators' counter tracks, which the layout places under the host process.
    counter_tracks: Memo<Arc<CounterTracks>>,
    selected_event: RwSignal<Option<u32>>,
    /// Draw every flow of the window, not only the selected event's.
    show_flows: RwSignal<bool>,
}

impl TrackView {
    /// The canvas's frame: the window across its width, its whole height, no axes.
    fn frame(&self) -> Frame {
        let (a, b) = self.window.get();
        Frame { v: Viewport::x_range(a as f64, b as f64), w: self.width.get(), h: TRACKS_H, m: Margins::NONE }
    }

    /// The threads the engine is asked about: `None` (all) while no process is collapsed.
    fn shown_threads(&self) -> Option<Vec<u32>> {
        if self.collapsed.with(Vec::is_empty) {
            None
        } else {
            Some(self.layout.with(Layout::threads))
        }
    }
}

#[component]
pub(super) fn Tracks(
    file_id: u32,
    outline: Arc<TraceOutline>,
    /// The whole trace's span and the window shown, in ps.
    full: (i64, i64),
    window: Memo<(i64, i64)>,
    selected_event: RwSignal<Option<u32>>,
    /// Draw every flow of the window, not only the selected event's.
    show_flows: RwSignal<bool>,
) -> impl IntoView {
    let state = expect_context::<AppState>();
    let collapsed = RwSignal::new(Vec::<u32>::new());
    let counter_tracks = requests::counter_tracks(file_id);
    let o = outline.clone();
    let layout = Memo::new(move |_| {
        let pids: Vec<u32> = counter_tracks.with(|t| t.tracks.iter().map(|t| t.pid).collect());
        collapsed.with(|c| Layout::new(&o, c, &pids))
    });
    let tv = TrackView {
        outline: StoredValue::new(outline),
        full,
        window,
        width: RwSignal::new(0.0),
        scroll_top: RwSignal::new(0.0),
        collapsed,
        layout,
        counter_tracks,
        selected_event,
        show_flows,
    };
    let replies = requests::ask(file_id, tv);
    let pointer = Pointer::new();
    let canvas_ref = NodeRef::<leptos::html::Canvas>::new();
    let axis_ref = NodeRef::<leptos::html::Canvas>::new();
    let col_ref = NodeRef::<leptos::html::Div>::new();
    let scroll_ref = NodeRef::<leptos::html::Div>::new();
    let nav = Navigation { tv, replies, pointer, scroll_ref, state };

    Effect::new(move |_| {
        if let Some(el) = col_ref.get() {
            observe_width(&el, move |w| tv.width.set(w.floor()));
        }
    });
    let drawn = drawing::draw_tracks(tv, replies, pointer, canvas_ref);
    drawing::draw_axis(tv, axis_ref);

    let (width, scroll_top) = (tv.width, tv.scroll_top);
    view! {
        <div class="tv-axis-row">
            <div style=format!("width:{NAMES_W}px;flex:none")></div>
            // As wide as the tracks' canvas (the tracks' scroll bar takes the rest), so ticks line up.
            <canvas node_ref=axis_ref class="tv-axis" data-testid="trace-axis" style=move || format!("width:{}px", width.get())></canvas>
        </div>
        <div
            class="tv-tracks"
            node_ref=scroll_ref
            style=format!("height:{TRACKS_H}px")
            on:scroll=move |_| {
                if let Some(el) = scroll_ref.get_untracked() {
                    scroll_top.set(f64::from(el.scroll_top()));
                }
            }
        >
            <div class="tv-inner" style=move || format!("height:{}px", layout.with(|l| l.height).max(TRACKS_H))>
                <div class="tv-names" style=format!("width:{NAMES_W}px")>{labels::names(tv)}</div>
                <div class="tv-canvas-col" node_ref=col_ref>
                    <canvas
                        node_ref=canvas_ref
                        class="tv-canvas"
                        data-testid="trace-canvas"
                        data-spans=move || drawn.spans.get().to_string()
                        data-visible-events=move || replies.shown.with(|r| r.visible_events.to_string())
                        data-window-start-ps=move || window.get().0.to_string()
                        data-window-end-ps=move || window.get().1.to_string()
                        data-scroll-top=move || scroll_top.get().to_string()
                        data-loading=move || matches!(replies.spans.get(), Reply::Waiting).to_string()
                        data-flow-arrows=move || drawn.flows.get().to_string()
                        data-selected-flows=move || replies.event_flows().map_or(0, |r| r.total).to_string()
                        data-window-flows=move || replies.window_flows().map_or(0, |r| r.total).to_string()
                        tabindex="0"
                        aria-label="Trace events. W/S zoom, A/D pan, drag to pan, Shift-drag to select a range, click an event for its details, 0 resets."
                        style=format!("height:{TRACKS_H}px")
                        on:mousedown=move |e| nav.press(&e)
                        on:mousemove=move |e| nav.pointer_move(&e)
                        on:mouseup=move |e| nav.release(&e)
                        on:mouseleave=move |_| pointer.leave()
                        on:wheel=move |e| nav.wheel(&e)
                        on:keydown=move |e| nav.key(&e)
                    ></canvas>
                </div>
                {labels::counter_tooltip(tv, replies, pointer)}
            </div>
        </div>
    }
}
