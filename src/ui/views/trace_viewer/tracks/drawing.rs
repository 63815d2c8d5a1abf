//! The tracks' two canvases: the spans with the counter tracks and flow arrows over them, and the
//! time axis above. Whenever anything shown changes (the theme too: colours come from CSS), what a
//! canvas shows is read in an effect and drawn in the next animation frame: the task of a reply or a
//! key ends once it has read it, and whatever changes within one frame (spans, counters, flows) is
//! drawn once.

use super::navigation::Pointer;
use super::requests::Replies;
use super::TrackView;
use crate::analysis::trace_viewer::counters::{CounterTracks, CounterWindow};
use crate::analysis::trace_viewer::flows::FlowReply;
use crate::analysis::trace_viewer::lod::LodReply;
use crate::ui::charts::axis::{x_axis, Style};
use crate::ui::charts::trace::{self, Scene, TextWidths};
use crate::ui::charts::viewport::{Frame, Margins, Viewport};
use crate::ui::charts::{draw_next_frame, prepare, prepare_fit, Palette};
use crate::ui::state::AppState;
use crate::ui::views::trace_viewer::layout::Layout;
use crate::ui::views::trace_viewer::overlays::{self, CounterScene};
use crate::ui::views::trace_viewer::time_label;
use leptos::prelude::*;
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

/// Height of the time axis, in CSS px.
const AXIS_H: f64 = 26.0;

/// What the canvas shows of `spans` with `layout`, scrolled `scroll_top` down, with nothing selected
/// (the hit-testing finds spans in the same scene).
pub(super) fn scene<'a>(layout: &'a Layout, spans: &'a LodReply, names: &'a [String], scroll_top: f64) -> Scene<'a> {
    Scene { lanes: &layout.lanes, lane_of: &layout.lane_of, spans, names, scroll_top, selected_event: None, range_ps: None, drag_px: None }
}

/// How many spans and flow arrows the last frame drew (the canvas reports them to tests).
#[derive(Clone, Copy)]
pub(super) struct Drawn {
    pub spans: RwSignal<usize>,
    pub flows: RwSignal<usize>,
}

/// One frame of the tracks' canvas: everything it shows, as the view's signals had it.
struct TracksDrawing {
    canvas: web_sys::HtmlCanvasElement,
    frame: Frame,
    layout: Layout,
    spans: Arc<LodReply>,
    selected_event: Option<u32>,
    range_ps: Option<(i64, i64)>,
    drag_px: Option<(f64, f64)>,
    scroll_top: f64,
    tracks: Arc<CounterTracks>,
    windows: Arc<Vec<CounterWindow>>,
    hover_ps: Option<i64>,
    all_flows: Option<Arc<FlowReply>>,
    selected_flows: Option<Arc<FlowReply>>,
}

impl TracksDrawing {
    /// Draws the spans, the counter tracks and the flow arrows; returns how many spans and arrows
    /// were drawn (`None` while the canvas has no box).
    fn draw(&self, names: &[String], widths: &mut TextWidths) -> Option<(usize, usize)> {
        let (ctx, _, _) = prepare_fit(&self.canvas)?;
        let palette = Palette::read();
        let l = &self.layout;
        let scene = Scene {
            selected_event: self.selected_event,
            range_ps: self.range_ps,
            drag_px: self.drag_px,
            ..scene(l, &self.spans, names, self.scroll_top)
        };
        let spans = trace::draw(&ctx, &self.frame, &scene, &palette, widths);
        let counters = CounterScene { tracks: &self.tracks.tracks, windows: &self.windows, hover_ps: self.hover_ps };
        overlays::draw_counters(&ctx, &self.frame, l, self.scroll_top, &counters, &palette);
        let [all, selected] = [&self.all_flows, &self.selected_flows].map(|r| r.as_ref().map_or(&[][..], |r| r.arrows.as_slice()));
        let flows = overlays::draw_flows(&ctx, &self.frame, l, self.scroll_top, all, selected, &palette);
        Some((spans, flows))
    }
}

/// Draws the tracks' canvas whenever what it shows changes; returns what was drawn.
pub(super) fn draw_tracks(tv: TrackView, replies: Replies, pointer: Pointer, canvas_ref: NodeRef<leptos::html::Canvas>) -> Drawn {
    let state = expect_context::<AppState>();
    let drawn = Drawn { spans: RwSignal::new(0), flows: RwSignal::new(0) };
    let next = Rc::new(RefCell::new(None::<TracksDrawing>));
    let widths = Rc::new(RefCell::new(TextWidths::default()));
    Effect::new(move |_| {
        let _theme = state.theme.get();
        let f = tv.frame();
        let Some(canvas) = canvas_ref.get() else { return };
        if f.w <= 0.0 {
            return;
        }
        let drawing = TracksDrawing {
            canvas,
            frame: f,
            layout: tv.layout.get(),
            spans: replies.shown.get(),
            selected_event: tv.selected_event.get(),
            range_ps: state.trace_range.get(),
            drag_px: pointer.drag_px.get(),
            scroll_top: tv.scroll_top.get(),
            tracks: tv.counter_tracks.get(),
            windows: replies.counter_windows.get(),
            hover_ps: pointer.hover.get().map(|h| h.t_ps),
            all_flows: replies.window_flows(),
            selected_flows: replies.event_flows(),
        };
        let (names, widths) = (tv.outline.get_value(), widths.clone());
        draw_next_frame(&next, drawing, move |d| {
            if let Some((spans, flows)) = d.draw(&names.names, &mut widths.borrow_mut()) {
                drawn.spans.try_set(spans);
                drawn.flows.try_set(flows);
            }
        });
    });
    drawn
}

/// Draws the time axis whenever the window, the width or the theme changes, in time since the
/// trace's start (so ticks fall on round offsets).
pub(super) fn draw_axis(tv: TrackView, axis_ref: NodeRef<leptos::html::Canvas>) {
    let state = expect_context::<AppState>();
    let next = Rc::new(RefCell::new(None));
    Effect::new(move |_| {
        let _theme = state.theme.get();
        let f = tv.frame();
        let Some(canvas) = axis_ref.get() else { return };
        if f.w <= 0.0 {
            return;
        }
        draw_next_frame(&next, (canvas, f), move |(canvas, f)| {
            let Some(ctx) = prepare(&canvas, f.w, AXIS_H) else { return };
            let origin = tv.full.0 as f64;
            let axis = Frame {
                v: Viewport::x_range(f.v.x0 - origin, f.v.x1 - origin),
                h: AXIS_H,
                m: Margins { left: 0.0, right: 0.0, top: 0.0, bottom: AXIS_H - 6.0 },
                ..f
            };
            x_axis(&ctx, &axis, &Palette::read(), Style::default(), time_label);
        });
    });
}
