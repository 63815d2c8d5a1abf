//! The Trace memory panel: a Kineto trace of the same run, opened beside the snapshot, laid under
//! the active-memory timeline on its time axis (the by-time mode's whole trace, same margins, so a
//! moment sits at the same x in both). The trace's `[memory]` curve (`Total Allocated` after each
//! CUDA allocation and free) is drawn on the snapshot's clock; hovering names a point and its
//! matching snapshot event, a click chooses that event for the allocator state below (and the URL).
//! The matching is the engine's ([`crate::analysis::torch_snapshot::trace_memory`]).

use super::timeline::{HEIGHT as TIMELINE_HEIGHT, MARGINS};
use super::*;
use crate::analysis::torch_snapshot::{TraceMemory, TracePoint};
use crate::decode::Format;
use crate::ui::charts::axis::{x_axis, y_axis, Style};
use crate::ui::charts::plot::redraw;
use crate::ui::charts::viewport::{Frame, Viewport};
use crate::ui::charts::{prepare, Palette};
use crate::ui::components::metric::Duration;
use crate::ui::state::FileStatus;

/// Half the timeline's height: a curve, not a stack.
const HEIGHT: f64 = TIMELINE_HEIGHT / 2.0;

/// The ready Kineto traces open in the page (path, engine id), in path order: which of them the
/// snapshot's run recorded is for the user to pick (the panel says when none of a trace matches).
fn kineto_traces(state: &AppState) -> Vec<(String, u32)> {
    let mut v: Vec<(String, u32)> = state.files.with(|fs| {
        fs.iter()
            .filter_map(|f| match &f.status {
                FileStatus::Ready { file_id, details } if details.format == Format::Kineto => Some((f.path.clone(), *file_id)),
                _ => None,
            })
            .collect()
    });
    v.sort();
    v
}

#[component]
pub(super) fn TraceMemoryPanel(
    file_id: u32,
    device: usize,
    first_us: i64,
    chosen: Signal<Option<i64>>,
    choose: Callback<i64>,
) -> impl IntoView {
    let state = expect_context::<AppState>();
    let traces = Memo::new(move |_| kineto_traces(&state));
    let picked = RwSignal::new(None::<u32>);
    // The picked trace while it is open, else the first.
    let trace = Memo::new(move |_| {
        let ts = traces.get();
        picked.get().filter(|p| ts.iter().any(|(_, t)| t == p)).or(ts.first().map(|(_, t)| *t))
    });
    let fetch =
        use_engine("Trace memory", move || trace.get().map(|t| request::TorchSnapshotTraceMemory { file_id, trace_file_id: t, device }));
    view! {
        <section class="ts-trace-memory" data-testid="ts-trace-memory">
            <h2>"Trace memory"</h2>
            {move || {
                let ts = traces.get();
                if ts.is_empty() {
                    return view! {
                        <p class="muted" data-testid="ts-trace-memory-none">
                            "Open a PyTorch profiler trace (*.pt.trace.json.gz) of the same run with the snapshot to lay its memory curve here, on the snapshot's clock."
                        </p>
                    }.into_any();
                }
                view! {
                    <div class="ts-controls" data-testid="ts-trace-picker">
                        <span class="muted">"Kineto trace"</span>
                        <span class="segmented">
                            {ts.into_iter().map(|(path, id)| view! {
                                <button class="seg" data-trace=path.clone() aria-pressed=move || (trace.get() == Some(id)).to_string()
                                    on:click=move |_| picked.set(Some(id))>{path.clone()}</button>
                            }).collect_view()}
                        </span>
                    </div>
                    <div class="mp-chart" style=format!("min-height:{HEIGHT}px")>
                        {move || match fetch.reply.get() {
                            Reply::Ready(m) => view! { <Curve m first_us chosen choose /> }.into_any(),
                            Reply::Failed(e) => view! { <p class="error" data-testid="ts-trace-memory-error">{e.detail()}</p> }.into_any(),
                            Reply::Rejected(m) => view! { <p class="error" data-testid="ts-trace-memory-error">{m}</p> }.into_any(),
                            Reply::Waiting => view! { <p class="muted loading">"Matching the trace's memory events to the snapshot's…"</p> }.into_any(),
                        }}
                    </div>
                }.into_any()
            }}
        </section>
    }
}

/// The point of `m` nearest time `t` (µs since the epoch), among those matched to a snapshot event
/// when `matched`.
fn nearest(m: &TraceMemory, t: f64, matched: bool) -> Option<usize> {
    let k = m.points.partition_point(|p| p.time_us < t);
    let fits = |i: &usize| !matched || m.points[*i].event_index.is_some();
    let after = (k..m.points.len()).find(fits);
    let before = (0..k).rev().find(fits);
    [before, after].into_iter().flatten().min_by(|&a, &b| (m.points[a].time_us - t).abs().total_cmp(&(m.points[b].time_us - t).abs()))
}

#[component]
fn Curve(m: Arc<TraceMemory>, first_us: i64, chosen: Signal<Option<i64>>, choose: Callback<i64>) -> impl IntoView {
    let canvas = NodeRef::<leptos::html::Canvas>::new();
    let full = Viewport::x_range(m.snapshot_start_us as f64, (m.snapshot_end_us + 1).max(m.snapshot_start_us + 1) as f64);
    let peak = m.points.iter().enumerate().max_by_key(|(i, p)| (p.total_allocated, std::cmp::Reverse(*i))).map(|(i, _)| i);
    let top = peak.map_or(1, |i| m.points[i].total_allocated.max(1)) as f64 * 1.04;
    let frame = move |w: f64| Frame { v: Viewport { y0: 0.0, y1: top, ..full }, w, h: HEIGHT, m: MARGINS };
    let hover = RwSignal::new(None::<(usize, f64, f64)>);
    let (unit, time_unit) = (expect_context::<AppState>().unit, expect_context::<AppState>().time_unit);
    let drawn = m.clone();
    redraw(canvas, move |c| {
        let (u, tu, h, pick) = (unit.get(), time_unit.get(), hover.get(), chosen.get());
        let w = f64::from(c.client_width());
        let Some(ctx) = prepare(c, w, HEIGHT) else { return false };
        let f = frame(w);
        let p = Palette::read();
        y_axis(&ctx, &f, &p, Style { grid: true, binary: true, ..Style::default() }, |y, _| u.format(y as i64));
        // Ticks at round offsets from the snapshot's first event, as the timeline's by-time axis.
        let shifted = f.with(Viewport { x0: f.v.x0 - first_us as f64, x1: f.v.x1 - first_us as f64, ..f.v });
        x_axis(&ctx, &shifted, &p, Style::default(), |x, _| tu.format(x));
        draw(&ctx, &f, &drawn.points, &p, h.map(|(i, _, _)| i), pick);
        true
    });
    let on_move = {
        let m = m.clone();
        move |ev: web_sys::MouseEvent| {
            let (px, py) = (f64::from(ev.offset_x()), f64::from(ev.offset_y()));
            let f = frame(canvas.get_untracked().map_or(0.0, |c| f64::from(c.client_width())));
            hover.set(f.in_plot(px, py).then(|| nearest(&m, f.dx(px), false)).flatten().map(|i| (i, px, py)));
        }
    };
    let on_click = {
        let m = m.clone();
        move |ev: web_sys::MouseEvent| {
            let (px, py) = (f64::from(ev.offset_x()), f64::from(ev.offset_y()));
            let f = frame(canvas.get_untracked().map_or(0.0, |c| f64::from(c.client_width())));
            if let Some(e) = f.in_plot(px, py).then(|| nearest(&m, f.dx(px), true)).flatten().and_then(|i| m.points[i].event_index) {
                choose.run(e);
            }
        }
    };
    let tooltip = {
        let m = m.clone();
        move || {
            let (i, px, py) = hover.get()?;
            let pt = m.points.get(i)?;
            let left = if px > 360.0 { px - 300.0 } else { px + 14.0 };
            Some(view! {
                <div class="mp-tooltip ts-tooltip" data-testid="ts-trace-tooltip" style=format!("left:{left:.0}px;top:{:.0}px", (py + 14.0).min(HEIGHT - 60.0))>
                    {point_figures(pt, first_us, HOVERED, i.to_string())}
                </div>
            })
        }
    };
    let status = {
        let m = m.clone();
        let (first, last) = (m.points.first().map_or(0.0, |p| p.time_us), m.points.last().map_or(0.0, |p| p.time_us));
        view! {
            <span class="muted small" data-testid="ts-trace-status">
                <Count metric="trace_points" value=m.points.len() as u64 /> " CUDA memory events, " <Count metric="trace_matched" value=m.matched />
                " matched to the snapshot's · from " <Duration metric="trace_start_offset_us" value_us=first - first_us as f64 />
                " for " <Duration metric="trace_memory_span_us" value_us=last - first />
                {peak.map(|i| view! { " · highest " <Bytes metric="trace_peak_bytes" value=m.points[i].total_allocated /> })}
            </span>
        }
    };
    // The chosen event's point, when the trace recorded it.
    let picked = move || {
        let e = chosen.get()?;
        let i = m.points.iter().position(|p| p.event_index == Some(e))?;
        Some(view! {
            <div class="ts-chart-bar small" data-testid="ts-trace-picked" data-event=e.to_string()>
                <span class="muted">"Picked"</span>{point_figures(&m.points[i], first_us, PICKED, e.to_string())}
            </div>
        })
    };
    view! {
        <div class="ts-chart-bar">{status}</div>
        <div class="chart-wrap">
            <canvas node_ref=canvas data-testid="ts-trace-canvas" data-start-us=full.x0.to_string() data-end-us=full.x1.to_string() data-first-us=first_us.to_string()
                data-plot-left=MARGINS.left.to_string() data-plot-right=MARGINS.right.to_string() data-plot-top=MARGINS.top.to_string()
                data-plot-bottom=(HEIGHT - MARGINS.bottom).to_string()
                aria-label="The trace's allocated memory on the snapshot's clock: click a point for the allocator's state then"
                style=format!("width:100%;height:{HEIGHT}px;cursor:crosshair")
                on:mousemove=on_move on:mouseleave=move |_| hover.set(None) on:click=on_click
            ></canvas>
            {tooltip}
        </div>
        {picked}
        <p class="hint muted">"The trace's Total Allocated after each CUDA allocation and free, on the timeline's time axis · hover a point for its snapshot event · click to show the allocator's state at it"</p>
    }
}

/// The metric names of a point's figures, hovered or picked.
struct Names {
    at: &'static str,
    bytes: &'static str,
    total: &'static str,
    event: &'static str,
}

const HOVERED: Names =
    Names { at: "hover_trace_offset_us", bytes: "hover_trace_bytes", total: "hover_trace_total_bytes", event: "hover_trace_event" };
const PICKED: Names =
    Names { at: "picked_trace_offset_us", bytes: "picked_trace_bytes", total: "picked_trace_total_bytes", event: "picked_trace_event" };

/// A point's figures: when (from the snapshot's first event), what, the total after and its event.
fn point_figures(pt: &TracePoint, first_us: i64, m: Names, key: String) -> impl IntoView {
    let (what, bytes) = if pt.bytes > 0 { ("Allocation", pt.bytes) } else { ("Free", -pt.bytes) };
    view! {
        <dl class="tt-col">
            <dt>"At"</dt><dd><Duration metric=m.at value_us=pt.time_us - first_us as f64 key=key.clone() /></dd>
            <dt>{what}</dt><dd><Bytes metric=m.bytes value=bytes key=key.clone() />{format!(" at {:#x}", pt.addr)}</dd>
            <dt>"Allocated"</dt><dd><Bytes metric=m.total value=pt.total_allocated key=key.clone() /></dd>
            <dt>"Snapshot"</dt><dd>{match pt.event_index {
                Some(e) => view! { "event " <Count metric=m.event value=e as u64 key=key.clone() /> }.into_any(),
                None => view! { <Text metric=m.event value="" key=key.clone() shown="no matching event" /> }.into_any(),
            }}</dd>
        </dl>
    }
}

/// The curve of `points` (a step line of `Total Allocated`), the hovered point and the chosen
/// event's point.
fn draw(ctx: &web_sys::CanvasRenderingContext2d, f: &Frame, points: &[TracePoint], p: &Palette, hover: Option<usize>, chosen: Option<i64>) {
    let (left, top, pw, ph) = (f.plot_left(), f.plot_top(), f.plot_w(), f.plot_h());
    ctx.save();
    ctx.begin_path();
    ctx.rect(left, top, pw, ph);
    ctx.clip();
    ctx.set_stroke_style_str(&p.accent);
    ctx.set_line_width(1.5);
    ctx.begin_path();
    for (k, pt) in points.iter().enumerate() {
        let (x, y) = (f.sx(pt.time_us), f.sy(pt.total_allocated as f64));
        if k == 0 {
            ctx.move_to(x, y);
        } else {
            ctx.line_to(x, f.sy(points[k - 1].total_allocated as f64));
            ctx.line_to(x, y);
        }
    }
    ctx.stroke();
    let dot = |pt: &TracePoint, r: f64| {
        ctx.begin_path();
        let _ = ctx.arc(f.sx(pt.time_us), f.sy(pt.total_allocated as f64), r, 0.0, std::f64::consts::TAU);
        ctx.fill();
    };
    ctx.set_fill_style_str(&p.fg);
    if let Some(pt) = chosen.and_then(|e| points.iter().find(|pt| pt.event_index == Some(e))) {
        ctx.fill_rect(f.sx(pt.time_us).round() - 0.5, top, 1.5, ph);
        dot(pt, 3.5);
    }
    if let Some(pt) = hover.and_then(|i| points.get(i)) {
        dot(pt, 3.0);
    }
    ctx.restore();
    ctx.set_stroke_style_str(&p.border);
    ctx.stroke_rect(left + 0.5, top + 0.5, pw - 1.0, ph - 1.0);
}
