//! The tracks: process headers and thread names (DOM, collapsible) beside one canvas that draws the
//! engine's spans for the window, with the time axis above. The canvas stays put while the tracks
//! scroll under it (it is sticky and draws from the scroll offset), so it is never taller than the
//! screen however many threads there are. Zoom and pan go through the shared viewport maths.

use super::layout::{Layout, HEADER_H};
use super::{clamp_window, time_label};
use crate::analysis::trace_viewer::lod::{LodQuery, LodReply};
use crate::analysis::trace_viewer::store::TraceOutline;
use crate::engine::protocol::{RequestBody, ResponseBody};
use crate::ui::charts::axis::{x_axis, Style};
use crate::ui::charts::trace::{self, Scene};
use crate::ui::charts::viewport::{key_nav, Frame, KeyNav, Margins, Viewport};
use crate::ui::charts::{observe_width, prepare, prepare_fit, Palette};
use crate::ui::state::AppState;
use crate::ui::use_engine::{use_engine, Reply};
use leptos::prelude::*;
use std::sync::Arc;

/// Width of the names column, the tracks' visible height and the axis height, in CSS px.
const NAMES_W: f64 = 240.0;
const TRACKS_H: f64 = 560.0;
const AXIS_H: f64 = 26.0;
/// A press moves less than this (px) to count as a click.
const CLICK_SLOP_PX: f64 = 3.0;
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

#[component]
pub(super) fn Tracks(
    file_id: u32,
    outline: Arc<TraceOutline>,
    /// The whole trace's span and the window shown, in ps.
    full: (i64, i64),
    window: Memo<(i64, i64)>,
    selected_event: RwSignal<Option<u32>>,
) -> impl IntoView {
    let state = expect_context::<AppState>();
    let collapsed = RwSignal::new(Vec::<u32>::new());
    let o2 = outline.clone();
    let layout = Memo::new(move |_| collapsed.with(|c| Layout::new(&o2, c)));
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
    let spans = use_engine(
        "Trace Viewer spans",
        move || {
            let (start_ps, end_ps) = window.get();
            let width_px = width.get().round() as u32;
            if width_px == 0 {
                return None;
            }
            let threads = if collapsed.with(Vec::is_empty) { None } else { Some(layout.with(Layout::threads)) };
            Some(RequestBody::TraceSpans { file_id, query: LodQuery { start_ps, end_ps, width_px, threads } })
        },
        |body| match body {
            ResponseBody::TraceSpans { spans } => Some(Arc::<LodReply>::from(spans)),
            _ => None,
        },
    );
    // The last answer stays on screen (mapped to the current window) until the next one comes.
    let shown = RwSignal::new(Arc::new(LodReply::default()));
    Effect::new(move |_| {
        if let Reply::Ready(r) = spans.reply.get() {
            shown.set(r);
        }
    });

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

    // Draw the tracks whenever anything shown changes (the theme too: colours come from CSS).
    let names = outline.clone();
    Effect::new(move |_| {
        let _theme = state.theme.get();
        let f = frame();
        let Some(canvas) = canvas_ref.get() else { return };
        if f.w <= 0.0 {
            return;
        }
        let Some((ctx, _, _)) = prepare_fit(&canvas) else { return };
        let palette = Palette::read();
        let reply = shown.get();
        let n = layout.with(|l| {
            let scene = Scene {
                selected_event: selected_event.get(),
                range_ps: state.trace_range.get(),
                drag_px: drag_px.get(),
                ..scene(l, &reply, &names.names, scroll_top.get())
            };
            trace::draw(&ctx, &f, &scene, &palette)
        });
        drawn.set(n);
    });
    // The time axis, in time since the trace's start (so ticks fall on round offsets).
    Effect::new(move |_| {
        let _theme = state.theme.get();
        let f = frame();
        let Some(canvas) = axis_ref.get() else { return };
        if f.w <= 0.0 {
            return;
        }
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

    let offset = |e: &web_sys::MouseEvent| (f64::from(e.offset_x()), f64::from(e.offset_y()));
    let on_down = move |e: web_sys::MouseEvent| {
        if e.button() != 0 {
            return;
        }
        let (x, y) = offset(&e);
        press.set(Some(Press { x, y, last_x: x, range: e.shift_key(), start: frame().v }));
    };
    let on_move = move |e: web_sys::MouseEvent| {
        let Some(p) = press.get_untracked() else { return };
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
            (headers, threads)
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
                        tabindex="0"
                        aria-label="Trace events. W/S zoom, A/D pan, drag to pan, Shift-drag to select a range, click an event for its details, 0 resets."
                        style=format!("height:{TRACKS_H}px")
                        on:mousedown=on_down
                        on:mousemove=on_move
                        on:mouseup=on_up
                        on:mouseleave=move |_| { press.set(None); drag_px.set(None); }
                        on:wheel=on_wheel
                        on:keydown=on_key
                    ></canvas>
                </div>
            </div>
        </div>
    }
}
