//! The tracks: process headers and thread names (DOM, collapsible) beside one canvas that draws the
//! engine's spans for the window, with the time axis above. The canvas stays put while the tracks
//! scroll under it (it is sticky and draws from the scroll offset), so it is never taller than the
//! screen however many threads there are. Zoom and pan go through the shared viewport maths. Over
//! the spans go the flow arrows (the selected event's, and all of the window's when asked), and
//! under the host process its allocators' memory counter tracks ([`super::overlays`]).

use super::layout::{Layout, COUNTER_H, HEADER_H};
use super::overlays::{self, CounterScene};
use super::{clamp_window, ps_text, time_label};
use crate::analysis::trace_viewer::counters::{CounterQuery, CounterTracks, CounterWindow};
use crate::analysis::trace_viewer::flows::FlowReply;
use crate::analysis::trace_viewer::lod::{LodQuery, LodReply};
use crate::analysis::trace_viewer::store::TraceOutline;
use crate::engine::protocol::request;
use crate::engine::trace_viewer::{FlowQuery, MAX_FLOW_ARROWS};
use crate::ui::charts::axis::{x_axis, Style};
use crate::ui::charts::trace::{self, Scene, TextWidths};
use crate::ui::charts::viewport::{key_nav, Frame, KeyNav, Margins, Viewport};
use crate::ui::charts::{draw_next_frame, observe_width, prepare, prepare_fit, Palette};
use crate::ui::components::metric::{Bytes, Count, Text};
use crate::ui::state::AppState;
use crate::ui::use_engine::{use_engine, Reply};
use leptos::prelude::*;
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

/// Width of the names column, the tracks' visible height and the axis height, in CSS px.
const NAMES_W: f64 = 240.0;
const TRACKS_H: f64 = 560.0;
const AXIS_H: f64 = 26.0;
/// A press moves less than this (px) to count as a click.
const CLICK_SLOP_PX: f64 = 3.0;
/// Room the counter tooltip takes below the pointer: nearer the tracks' bottom it goes above.
const TOOLTIP_H: f64 = 80.0;
/// Pixels one ↑/↓ press scrolls the tracks.
const KEY_SCROLL_PX: f64 = 80.0;

/// A press on the canvas: where, whether it selects a range (Shift), and the window it started on.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Press {
    x: f64,
    y: f64,
    last_x: f64,
    range: bool,
    start: Viewport,
}

/// What the canvas shows of `spans` with `layout`, scrolled `scroll_top` down, with nothing selected.
fn scene<'a>(layout: &'a Layout, spans: &'a LodReply, names: &'a [String], scroll_top: f64) -> Scene<'a> {
    Scene { lanes: &layout.lanes, lane_of: &layout.lane_of, spans, names, scroll_top, selected_event: None, range_ps: None, drag_px: None }
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
    // The allocators' counter tracks (none for a trace without allocator events, or where the
    // Memory Profile cannot be computed: the tracks are then simply not drawn).
    let counter_tracks = use_engine("Trace Viewer counter tracks", move || Some(request::TraceCounterTracks { file_id }));
    let tracks_info = Memo::new(move |_| counter_tracks.reply.get().ready().cloned().unwrap_or_default());
    let o2 = outline.clone();
    let layout = Memo::new(move |_| {
        let n = tracks_info.with(|t| t.tracks.len());
        collapsed.with(|c| Layout::new(&o2, c, n))
    });
    let width = RwSignal::new(0.0f64);
    let scroll_top = RwSignal::new(0.0f64);
    let press = RwSignal::new(None::<Press>);
    let drag_px = RwSignal::new(None::<(f64, f64)>);
    let drawn = RwSignal::new(0usize);
    let canvas_ref = NodeRef::<leptos::html::Canvas>::new();
    let axis_ref = NodeRef::<leptos::html::Canvas>::new();
    let col_ref = NodeRef::<leptos::html::Div>::new();
    let scroll_ref = NodeRef::<leptos::html::Div>::new();

    // The spans of the window at the canvas's width, for the threads of expanded processes.
    let spans = use_engine("Trace Viewer spans", move || {
        let (start_ps, end_ps) = window.get();
        let width_px = width.get().round() as u32;
        if width_px == 0 {
            return None;
        }
        let threads = if collapsed.with(Vec::is_empty) { None } else { Some(layout.with(Layout::threads)) };
        Some(request::TraceSpans { file_id, query: LodQuery { start_ps, end_ps, width_px, threads } })
    });
    // The last answer stays on screen (mapped to the current window) until the next one comes.
    let shown = RwSignal::new(Arc::new(LodReply::default()));
    Effect::new(move |_| {
        if let Reply::Ready(r) = spans.reply.get() {
            shown.set(r);
        }
    });

    // Every counter track's steps over the window, one request for all.
    let counters = use_engine("Trace Viewer counters", move || {
        let (start_ps, end_ps) = window.get();
        let width_px = width.get().round() as u32;
        let queries: Vec<CounterQuery> = tracks_info
            .with(|t| t.tracks.iter().map(|c| CounterQuery { memory_id: c.memory_id.clone(), start_ps, end_ps, width_px }).collect());
        (width_px > 0 && !queries.is_empty()).then_some(request::TraceCounters { file_id, queries })
    });
    let counter_windows = RwSignal::new(Arc::new(Vec::<CounterWindow>::new()));
    Effect::new(move |_| {
        if let Reply::Ready(w) = counters.reply.get() {
            counter_windows.set(w);
        }
    });
    let hover = RwSignal::new(None::<(usize, i64, f64, f64)>);
    // The selected event's flows, and (when asked) all of the window's.
    let flow_query = |event: Option<u32>, (start_ps, end_ps): (i64, i64), threads: Option<Vec<u32>>| FlowQuery {
        start_ps,
        end_ps,
        threads,
        event,
        limit: MAX_FLOW_ARROWS as u32,
    };
    let selected_flows = use_engine("Trace Viewer event flows", move || {
        selected_event.get().map(|e| request::TraceFlows { file_id, query: flow_query(Some(e), (0, 0), None) })
    });
    let window_flows = use_engine("Trace Viewer flows", move || {
        if !show_flows.get() {
            return None;
        }
        let threads = if collapsed.with(Vec::is_empty) { None } else { Some(layout.with(Layout::threads)) };
        Some(request::TraceFlows { file_id, query: flow_query(None, window.get(), threads) })
    });
    let flows_drawn = RwSignal::new(0usize);

    let frame = move || {
        let (a, b) = window.get();
        Frame { v: Viewport::x_range(a as f64, b as f64), w: width.get(), h: TRACKS_H, m: Margins::NONE }
    };
    let set_window = move |v: Viewport| state.trace_window.set(clamp_window(full, v));

    Effect::new(move |_| {
        if let Some(el) = col_ref.get() {
            observe_width(&el, move |w| width.set(w.floor()));
        }
    });

    // Whenever anything shown changes (the theme too: colours come from CSS), what the canvases show
    // is read here and drawn in the next animation frame: the task of a reply or a key ends once it
    // has read it, and whatever changes within one frame (spans, counters, flows) is drawn once.
    let names = outline.clone();
    let next_tracks = Rc::new(RefCell::new(None::<TracksDrawing>));
    let widths = Rc::new(RefCell::new(TextWidths::default()));
    Effect::new(move |_| {
        let _theme = state.theme.get();
        let f = frame();
        let Some(canvas) = canvas_ref.get() else { return };
        if f.w <= 0.0 {
            return;
        }
        let drawing = TracksDrawing {
            canvas,
            frame: f,
            layout: layout.get(),
            spans: shown.get(),
            selected_event: selected_event.get(),
            range_ps: state.trace_range.get(),
            drag_px: drag_px.get(),
            scroll_top: scroll_top.get(),
            tracks: tracks_info.get(),
            windows: counter_windows.get(),
            hover_ps: hover.get().map(|(_, t, _, _)| t),
            all_flows: if show_flows.get() { window_flows.reply.get().ready().cloned() } else { None },
            selected_flows: selected_event.get().and(selected_flows.reply.get().ready().cloned()),
        };
        let (names, widths) = (names.clone(), widths.clone());
        draw_next_frame(&next_tracks, drawing, move |d| {
            if let Some((spans, flows)) = d.draw(&names.names, &mut widths.borrow_mut()) {
                drawn.try_set(spans);
                flows_drawn.try_set(flows);
            }
        });
    });
    // The time axis, in time since the trace's start (so ticks fall on round offsets).
    let next_axis = Rc::new(RefCell::new(None));
    Effect::new(move |_| {
        let _theme = state.theme.get();
        let f = frame();
        let Some(canvas) = axis_ref.get() else { return };
        if f.w <= 0.0 {
            return;
        }
        draw_next_frame(&next_axis, (canvas, f), move |(canvas, f)| {
            let Some(ctx) = prepare(&canvas, f.w, AXIS_H) else { return };
            let origin = full.0 as f64;
            let axis = Frame {
                v: Viewport::x_range(f.v.x0 - origin, f.v.x1 - origin),
                h: AXIS_H,
                m: Margins { left: 0.0, right: 0.0, top: 0.0, bottom: AXIS_H - 6.0 },
                ..f
            };
            x_axis(&ctx, &axis, &Palette::read(), Style::default(), time_label);
        });
    });

    let offset = |e: &web_sys::MouseEvent| (f64::from(e.offset_x()), f64::from(e.offset_y()));
    let on_down = move |e: web_sys::MouseEvent| {
        if e.button() != 0 {
            return;
        }
        let (x, y) = offset(&e);
        press.set(Some(Press { x, y, last_x: x, range: e.shift_key(), start: frame().v }));
    };
    let on_move = move |e: web_sys::MouseEvent| {
        let Some(p) = press.get_untracked() else {
            // Hovering a counter track: the step under the pointer.
            let (x, y) = offset(&e);
            let at = layout.with_untracked(|l| l.counter_at(y + scroll_top.get_untracked()));
            let now = at.map(|k| (k, frame().dx(x).round() as i64, x, y));
            if now != hover.get_untracked() {
                hover.set(now);
            }
            return;
        };
        let (x, _) = offset(&e);
        press.set(Some(Press { last_x: x, ..p }));
        if p.range {
            drag_px.set(Some((p.x, x)));
        } else if (x - p.x).abs() >= CLICK_SLOP_PX {
            set_window(frame().drag(p.start, x - p.x, 0.0));
        }
    };
    let o3 = outline.clone();
    let on_up = move |e: web_sys::MouseEvent| {
        let Some(p) = press.get_untracked() else { return };
        press.set(None);
        drag_px.set(None);
        let (x, y) = offset(&e);
        let f = frame();
        if (x - p.x).abs() < CLICK_SLOP_PX {
            let reply = shown.get_untracked();
            let hit = layout.with_untracked(|l| {
                trace::span_at(&f, &scene(l, &reply, &o3.names, scroll_top.get_untracked()), x, y).map(|(t, i)| reply.threads[t].event[i])
            });
            selected_event.set(hit);
        } else if p.range {
            let (a, b) = (f.dx(p.x.min(x)).round() as i64, f.dx(p.x.max(x)).round() as i64);
            state.trace_range.set((b > a).then_some((a, b)));
        }
    };
    let on_wheel = move |e: web_sys::WheelEvent| {
        let (x, y) = (f64::from(e.offset_x()), f64::from(e.offset_y()));
        let f = frame();
        e.prevent_default();
        if e.delta_x().abs() > e.delta_y().abs() {
            set_window(f.drag(f.v, -e.delta_x(), 0.0));
        } else if e.delta_y() != 0.0 {
            set_window(f.wheel(x, y, e.delta_y(), true, false));
        }
    };
    let on_key = move |e: web_sys::KeyboardEvent| {
        let Some(nav) = key_nav(&e.key()) else { return };
        e.prevent_default();
        let full_v = Viewport::x_range(full.0 as f64, full.1 as f64);
        match nav {
            KeyNav::PanY(share) => {
                if let Some(el) = scroll_ref.get_untracked() {
                    el.set_scroll_top(el.scroll_top() - (share.signum() * KEY_SCROLL_PX) as i32);
                }
            }
            KeyNav::Reset => {
                state.trace_window.set(None);
                state.trace_range.set(None);
            }
            nav => set_window(frame().v.key(nav, full_v, false)),
        }
    };

    let o4 = outline.clone();
    let labels = move || {
        let o = o4.clone();
        layout.with(|l| {
            let headers = l
                .headers
                .iter()
                .map(|&(pi, y)| {
                    let p = &o.processes[pi];
                    let pid = p.pid;
                    let folded = collapsed.with(|c| c.contains(&pid));
                    view! {
                        <button
                            class="tv-process"
                            data-testid="trace-process"
                            data-pid=pid.to_string()
                            data-collapsed=folded.to_string()
                            aria-expanded=(!folded).to_string()
                            title=p.name.clone()
                            style=format!("top:{y}px;height:{HEADER_H}px")
                            on:click=move |_| collapsed.update(|c| if let Some(i) = c.iter().position(|&x| x == pid) { c.remove(i); } else { c.push(pid); })
                        >
                            {if folded { "▸ " } else { "▾ " }}
                            {p.name.clone()}
                            <span class="muted">{format!(" ({} threads)", p.threads.len())}</span>
                        </button>
                    }
                })
                .collect_view();
            let threads = l
                .lanes
                .iter()
                .zip(&l.lane_thread)
                .map(|(lane, &(pi, ti))| {
                    let t = &o.processes[pi].threads[ti];
                    let name = if t.name.is_empty() { format!("thread {}", t.tid) } else { t.name.clone() };
                    let title = format!("{name} · tid {} · {} events", t.tid, t.event_count);
                    view! {
                        <div
                            class="tv-thread"
                            data-testid="trace-thread"
                            data-pid=o.processes[pi].pid.to_string()
                            data-tid=t.tid.to_string()
                            data-events=t.event_count.to_string()
                            data-name=t.name.clone()
                            title=title
                            style=format!("top:{}px;height:{}px", lane.y, lane.h)
                        >
                            {name}
                        </div>
                    }
                })
                .collect_view();
            let info = tracks_info.get();
            let counters = l
                .counters
                .iter()
                .filter_map(|&(k, y)| {
                    let t = info.tracks.get(k)?.clone();
                    let title = format!("{} memory: heap and stack over time ({} events)", t.memory_id, t.event_count);
                    Some(view! {
                        <div
                            class="tv-thread tv-counter"
                            data-testid="trace-counter"
                            data-memory-id=t.memory_id.clone()
                            title=title
                            style=format!("top:{y}px;height:{COUNTER_H}px")
                        >
                            <Text metric="counter_memory_id" value=t.memory_id.clone() />
                            <span class="muted small">
                                " ≤ " <Bytes metric="counter_max_in_use_bytes" key=t.memory_id.clone() value=t.max_in_use_bytes />
                                " · " <Count metric="counter_event_count" key=t.memory_id.clone() value=t.event_count />
                            </span>
                        </div>
                    })
                })
                .collect_view();
            (headers, threads, counters)
        })
    };
    // The hovered counter step: time, heap, stack (and the range of the events merged into it).
    let tooltip = move || {
        let (k, t_ps, x, y) = hover.get()?;
        let windows = counter_windows.get();
        let w = windows.get(k)?;
        let i = w.at(t_ps)?;
        let info = tracks_info.get();
        let track = info.tracks.get(k)?;
        let left = if x + 280.0 > width.get() { x - 280.0 } else { x + 14.0 };
        let merged = w.count[i] > 1;
        Some(view! {
            <div class="tv-tooltip" data-testid="counter-tooltip" style=format!("left:{:.0}px;top:{:.0}px", left + NAMES_W, if y > TRACKS_H - TOOLTIP_H { y - TOOLTIP_H } else { y + 12.0 } + scroll_top.get())>
                <div><Text metric="counter_hover_memory_id" value=track.memory_id.clone() /> " at "
                    <Text metric="counter_hover_time_ps" value=(w.time_ps[i] - full.0).to_string() shown=ps_text(w.time_ps[i] - full.0) /></div>
                <div>"Heap " <Bytes metric="counter_heap_bytes" value=w.heap_bytes[i] /> " · stack " <Bytes metric="counter_stack_bytes" value=w.stack_bytes[i] /></div>
                {merged.then(|| view! {
                    <div class="muted">
                        <Count metric="counter_merged_events" value=u64::from(w.count[i]) /> " events in this pixel, in use "
                        <Bytes metric="counter_min_in_use_bytes" value=w.min_in_use_bytes[i] /> " – " <Bytes metric="counter_max_in_use_bytes_here" value=w.max_in_use_bytes[i] />
                    </div>
                })}
            </div>
        })
    };

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
                <div class="tv-names" style=format!("width:{NAMES_W}px")>{labels}</div>
                <div class="tv-canvas-col" node_ref=col_ref>
                    <canvas
                        node_ref=canvas_ref
                        class="tv-canvas"
                        data-testid="trace-canvas"
                        data-spans=move || drawn.get().to_string()
                        data-visible-events=move || shown.with(|r| r.visible_events.to_string())
                        data-window-start-ps=move || window.get().0.to_string()
                        data-window-end-ps=move || window.get().1.to_string()
                        data-scroll-top=move || scroll_top.get().to_string()
                        data-loading=move || matches!(spans.reply.get(), Reply::Waiting).to_string()
                        data-flow-arrows=move || flows_drawn.get().to_string()
                        data-selected-flows=move || selected_event.get().and(selected_flows.reply.get().ready().map(|r| r.total)).unwrap_or(0).to_string()
                        data-window-flows=move || if show_flows.get() { window_flows.reply.get().ready().map_or(0, |r| r.total) } else { 0 }.to_string()
                        tabindex="0"
                        aria-label="Trace events. W/S zoom, A/D pan, drag to pan, Shift-drag to select a range, click an event for its details, 0 resets."
                        style=format!("height:{TRACKS_H}px")
                        on:mousedown=on_down
                        on:mousemove=on_move
                        on:mouseup=on_up
                        on:mouseleave=move |_| { press.set(None); drag_px.set(None); if hover.get_untracked().is_some() { hover.set(None); } }
                        on:wheel=on_wheel
                        on:keydown=on_key
                    ></canvas>
                </div>
                {tooltip}
            </div>
        </div>
    }
}
