//! The Trace memory panel: a Kineto trace of the same run, opened beside the snapshot, laid under
//! the active-memory timeline on its time axis and in its window ([`SharedWindow`]: same margins,
//! same view, so by time a moment sits at the same x in both). Only the open traces the snapshot's
//! run recorded are offered; the others are listed with why. The trace's `[memory]` curve (`Total Allocated` after each
//! CUDA allocation and free) is drawn on the snapshot's clock; hovering names a point and its
//! matching snapshot event, a click chooses that event for the allocator state below (and the URL).
//! The matching is the engine's ([`crate::analysis::torch_snapshot::trace_memory`]).

use super::timeline::{HEIGHT as TIMELINE_HEIGHT, MARGINS, MIN_TIME_US};
use super::*;
use crate::analysis::torch_snapshot::{TraceFit, TraceMemory, TracePoint};
use crate::decode::Format;
use crate::ui::charts::axis::{x_axis, y_axis, Style};
use crate::ui::charts::pan_zoom::{PanZoom, ZoomAxes};
use crate::ui::charts::plot::redraw;
use crate::ui::charts::viewport::{Frame, Viewport};
use crate::ui::charts::{prepare, Palette};
use crate::ui::components::metric::Duration;
use crate::ui::state::FileStatus;

/// Half the timeline's height: a curve, not a stack.
const HEIGHT: f64 = TIMELINE_HEIGHT / 2.0;
/// A press that moved less than this (px) is a click, as on the timeline.
const CLICK_SLOP_PX: f64 = 4.0;

/// The ready Kineto traces open in the page (path, engine id), in path order; the engine says which
/// of them the snapshot's run recorded ([`TraceFit`]).
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
    shared: SharedWindow,
) -> impl IntoView {
    let state = expect_context::<AppState>();
    let traces = Memo::new(move |_| kineto_traces(&state));
    // Which of them belong with the snapshot: the engine matches each one's memory events.
    let fits = use_engine("Trace fit", move || {
        let ids: Vec<u32> = traces.get().into_iter().map(|(_, id)| id).collect();
        (!ids.is_empty()).then_some(request::TorchSnapshotTraceFits { file_id, device, trace_file_ids: ids })
    });
    // The traces with their fits, once the engine has answered for exactly these.
    let judged = Memo::new(move |_| {
        let ts = traces.get();
        match fits.reply.get() {
            Reply::Ready(f) if f.len() == ts.len() => Some(ts.into_iter().zip(f.iter().cloned()).collect::<Vec<(_, TraceFit)>>()),
            _ => None,
        }
    });
    let offered = Memo::new(move |_| {
        judged.get().unwrap_or_default().into_iter().filter(|(_, f)| f.why_not(device).is_none()).map(|(t, _)| t).collect::<Vec<_>>()
    });
    let picked = RwSignal::new(None::<u32>);
    // The picked trace while it is offered, else the first offered.
    let trace = Memo::new(move |_| {
        let ts = offered.get();
        picked.get().filter(|p| ts.iter().any(|(_, t)| t == p)).or(ts.first().map(|(_, t)| *t))
    });
    let fetch =
        use_engine("Trace memory", move || trace.get().map(|t| request::TorchSnapshotTraceMemory { file_id, trace_file_id: t, device }));
    // The traces left out, each with why.
    let excluded = move || {
        judged
            .get()
            .unwrap_or_default()
            .into_iter()
            .filter_map(|((path, _), f)| f.why_not(device).map(|why| (path, why)))
            .collect::<Vec<_>>()
    };
    let excluded_list = move || {
        excluded()
            .into_iter()
            .map(|(path, why)| {
                let name = path.clone();
                view! { <li data-testid="ts-trace-excluded" data-trace=path><b>{name}</b>": "{why}</li> }
            })
            .collect_view()
    };
    view! {
        <section class="ts-trace-memory" data-testid="ts-trace-memory">
            <h2>"Trace memory"</h2>
            {move || {
                if traces.with(Vec::is_empty) {
                    return view! {
                        <p class="muted" data-testid="ts-trace-memory-none">
                            "Open a PyTorch profiler trace (*.pt.trace.json.gz) of the same run with the snapshot to lay its memory curve here, on the snapshot's clock."
                        </p>
                    }.into_any();
                }
                if let Reply::Failed(e) = fits.reply.get() {
                    return view! { <p class="error" data-testid="ts-trace-memory-error">{e.detail()}</p> }.into_any();
                }
                if judged.with(Option::is_none) {
                    return view! { <p class="muted loading">"Checking which open traces this snapshot's run recorded…"</p> }.into_any();
                }
                let ts = offered.get();
                if ts.is_empty() {
                    return view! {
                        <div data-testid="ts-trace-memory-unrelated">
                            <p>"None of the open PyTorch profiler traces was recorded by this snapshot's run, so none is laid here:"</p>
                            <ul class="small">{excluded_list}</ul>
                            <p class="muted">"Open the *.pt.trace.json.gz that the same process wrote while the snapshot was recording (torch.profiler with profile_memory=True): its CUDA memory events are the snapshot's own, at the same address and microsecond."</p>
                        </div>
                    }.into_any();
                }
                view! {
                    <div class="ts-controls" data-testid="ts-trace-picker">
                        <span class="muted" title="The open traces this snapshot's run recorded: some of their CUDA memory events are the snapshot's, at the same address and microsecond">"Kineto trace of this run"</span>
                        <span class="segmented">
                            {ts.into_iter().map(|(path, id)| view! {
                                <button class="seg" data-trace=path.clone() aria-pressed=move || (trace.get() == Some(id)).to_string()
                                    on:click=move |_| picked.set(Some(id))>{path.clone()}</button>
                            }).collect_view()}
                        </span>
                    </div>
                    <div class="mp-chart" style=format!("min-height:{HEIGHT}px")>
                        {move || match fetch.reply.get() {
                            Reply::Ready(m) => view! { <Curve m first_us chosen choose shared /> }.into_any(),
                            Reply::Failed(e) => view! { <p class="error" data-testid="ts-trace-memory-error">{e.detail()}</p> }.into_any(),
                            Reply::Rejected(m) => view! { <p class="error" data-testid="ts-trace-memory-error">{m}</p> }.into_any(),
                            Reply::Waiting => view! { <p class="muted loading">"Matching the trace's memory events to the snapshot's…"</p> }.into_any(),
                        }}
                    </div>
                    {move || (!excluded().is_empty()).then(|| view! {
                        <details class="small muted" data-testid="ts-trace-excluded-list">
                            <summary>"Other open traces, not this run's"</summary>
                            <ul>{excluded_list}</ul>
                        </details>
                    })}
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
fn Curve(m: Arc<TraceMemory>, first_us: i64, chosen: Signal<Option<i64>>, choose: Callback<i64>, shared: SharedWindow) -> impl IntoView {
    let canvas = NodeRef::<leptos::html::Canvas>::new();
    let full = Viewport::x_range(m.snapshot_start_us as f64, (m.snapshot_end_us + 1).max(m.snapshot_start_us + 1) as f64);
    // The view is the shared window: the timeline's moves it here, and a zoom here moves the
    // timeline (onto its time axis, the only one both can show).
    let view = RwSignal::new(shared.view_in(full, MIN_TIME_US));
    Effect::new(move |_| {
        let v = shared.view_in(full, MIN_TIME_US);
        if view.with_untracked(|w| (w.x0, w.x1) != (v.x0, v.x1)) {
            view.set(v);
        }
    });
    Effect::new(move |prev: Option<Viewport>| {
        let v = view.get();
        // Only a move made here (not one the window brought) sets the window.
        let brought = untrack(|| shared.view_in(full, MIN_TIME_US));
        if prev.is_some() && (brought.x0, brought.x1) != (v.x0, v.x1) {
            if shared.axis.get_untracked() != Axis::Time {
                shared.axis.set(Axis::Time);
            }
            shared.show(v, full);
        }
        v
    });
    let pz = PanZoom::new(canvas, view, full, MARGINS).min_size(MIN_TIME_US, 0.0).axes(ZoomAxes::X);
    let peak = m.peak().map(|p| p.total_allocated);
    let top = peak.unwrap_or(1).max(1) as f64 * 1.04;
    let frame = move |v: Viewport, w: f64| Frame { v: Viewport { y0: 0.0, y1: top, ..v }, w, h: HEIGHT, m: MARGINS };
    let hover = RwSignal::new(None::<(usize, f64, f64)>);
    let (unit, time_unit) = (expect_context::<AppState>().unit, expect_context::<AppState>().time_unit);
    let drawn = m.clone();
    redraw(canvas, move |c| {
        let (u, tu, h, pick, v) = (unit.get(), time_unit.get(), hover.get(), chosen.get(), view.get());
        let w = f64::from(c.client_width());
        let Some(ctx) = prepare(c, w, HEIGHT) else { return false };
        let f = frame(v, w);
        let p = Palette::read();
        y_axis(&ctx, &f, &p, Style { grid: true, binary: true, ..Style::default() }, |y, _| u.format(y as i64));
        // Ticks at round offsets from the snapshot's first event, as the timeline's by-time axis.
        let shifted = f.with(Viewport { x0: f.v.x0 - first_us as f64, x1: f.v.x1 - first_us as f64, ..f.v });
        x_axis(&ctx, &shifted, &p, Style::default(), |x, _| tu.format(x));
        draw(&ctx, &f, &drawn.points, &p, h.map(|(i, _, _)| i), pick);
        let _ = c.set_attribute("data-view", &format!("{}_{}", v.x0, v.x1));
        true
    });
    let on_move = {
        let m = m.clone();
        move |ev: web_sys::MouseEvent| {
            let Some((f, px, py)) = pz.hover(&ev) else {
                hover.set(None);
                return;
            };
            let f = frame(f.v, f.w);
            hover.set(f.in_plot(px, py).then(|| nearest(&m, f.dx(px), false)).flatten().map(|i| (i, px, py)));
        }
    };
    let on_up = {
        let m = m.clone();
        move |ev: web_sys::MouseEvent| {
            let Some((sx, sy)) = pz.release() else { return };
            let (px, py) = (f64::from(ev.offset_x()), f64::from(ev.offset_y()));
            if (px - sx).abs() >= CLICK_SLOP_PX || (py - sy).abs() >= CLICK_SLOP_PX {
                return;
            }
            let f = frame(view.get_untracked(), canvas.get_untracked().map_or(0.0, |c| f64::from(c.client_width())));
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
        let (first, last) = m.extent().unwrap_or((0.0, 0.0));
        view! {
            <span class="muted small" data-testid="ts-trace-status">
                <Count metric="trace_points" value=m.points.len() as u64 /> " CUDA memory events · " <Count metric="trace_matched" value=m.matched />
                " matched · from " <Duration metric="trace_start_offset_us" value_us=first - first_us as f64 />
                " for " <Duration metric="trace_memory_span_us" value_us=last - first />
                {peak.map(|b| view! { " · highest " <Bytes metric="trace_peak_bytes" value=b /> })}
            </span>
        }
    };
    // The window shown, whence it comes, and how many of the trace's events fall in it (none, when
    // the window lies outside the trace's span).
    let times: Vec<f64> = m.points.iter().map(|p| p.time_us).collect();
    let window = move || {
        let v = view.get();
        let (axis, whole) = (shared.axis.get(), shared.window.with(Option::is_none));
        let how = match (axis, whole) {
            (_, true) => "whole snapshot",
            (Axis::Time, false) => "the timeline's window",
            (Axis::Event, false) => "its events' times",
        };
        let inside = times.partition_point(|t| *t < v.x1) - times.partition_point(|t| *t < v.x0);
        view! {
            <span class="muted small" data-testid="ts-trace-window" data-axis=format!("{axis:?}").to_lowercase() data-whole=whole.to_string()
                title="The panel and the timeline show one time window: zoom or pan either. By event, the panel spans the window's first to last event's time (the event axis is not linear in time); a zoom here puts the timeline on its time axis.">
                <Duration metric="trace_window_start_us" value_us=v.x0 - first_us as f64 /> " – "
                <Duration metric="trace_window_end_us" value_us=v.x1 - first_us as f64 /> " (" {how} ") · "
                <Count metric="trace_window_points" value=inside as u64 /> " in view"
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
        <div class="ts-chart-bar">{status}<span class="spacer"></span>{window}</div>
        <div class="chart-wrap">
            <canvas data-testid="ts-trace-canvas" data-start-us=full.x0.to_string() data-end-us=full.x1.to_string() data-first-us=first_us.to_string()
                data-plot-left=MARGINS.left.to_string() data-plot-right=MARGINS.right.to_string() data-plot-top=MARGINS.top.to_string()
                data-plot-bottom=(HEIGHT - MARGINS.bottom).to_string()
                aria-label="The trace's allocated memory on the snapshot's clock: scroll to zoom, drag to pan, click a point for the allocator's state then"
                style=format!("width:100%;height:{HEIGHT}px;cursor:crosshair")
                on:mousemove=on_move
                on:mousedown=move |ev: web_sys::MouseEvent| { pz.press(&ev); hover.set(None); }
                on:mouseup=on_up
                on:mouseleave=move |_| { pz.release(); hover.set(None); }
                {..pz.attributes()}
            ></canvas>
            {tooltip}
        </div>
        {picked}
        <p class="hint muted">"The trace's Total Allocated after each CUDA allocation and free, in the timeline's window (by event: its first to last event's time) · scroll, W/S, drag or A/D zoom and pan both, 0 for the whole snapshot · hover a point for its snapshot event · click for the allocator's state at it"</p>
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
