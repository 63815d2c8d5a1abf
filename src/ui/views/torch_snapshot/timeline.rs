//! The active-memory timeline, drawn as PyTorch's viewer draws it: each allocation a band stacked
//! on those live before it, over event indices or time. The engine answers a window of it cut into
//! columns of a few pixels with small allocations summed ([`crate::analysis::torch_snapshot::bands`]),
//! so panning and zooming a trace of 100k+ events asks for what the screen shows; the last answer
//! stays drawn until the next arrives. Hovering names the band's allocation (size, frames); a click
//! chooses its column's event for the allocator state below.

use super::*;
use crate::analysis::torch_snapshot::{Axis, Bands};
use crate::ui::charts::axis::{x_axis, y_axis, Style};
use crate::ui::charts::pan_zoom::{PanZoom, ZoomAxes};
use crate::ui::charts::plot::redraw;
use crate::ui::charts::viewport::{Frame, Margins, Viewport};
use crate::ui::charts::{observe_width, prepare, Palette};
use crate::ui::components::metric::Duration;

pub(super) const HEIGHT: f64 = 320.0;
/// Shared with the Trace memory panel, so both plots span the same pixels.
pub(super) const MARGINS: Margins = Margins { left: 76.0, right: 12.0, top: 10.0, bottom: 22.0 };
/// The narrowest time window (µs) the timeline and the Trace memory panel zoom to: the snapshot's
/// clock ticks in µs.
pub(super) const MIN_TIME_US: f64 = 1.0;
/// Pixels per column the engine is asked for.
const COLUMN_PX: f64 = 2.0;
/// Widths are asked in steps of this, so a window resized by a pixel is not asked again.
const WIDTH_STEP: f64 = 64.0;
/// A press that moved less than this (px) is a click.
const CLICK_SLOP_PX: f64 = 4.0;
/// How many shades of the accent the bands cycle through, so neighbours stay apart.
const SHADES: [f64; 4] = [0.85, 0.6, 0.72, 0.5];

/// The columns asked for a container `width` px wide.
fn columns_for(width: f64) -> usize {
    let w = (width / WIDTH_STEP).ceil() * WIDTH_STEP;
    ((w - MARGINS.left - MARGINS.right) / COLUMN_PX).max(1.0) as usize
}

/// The rows asked for: one per pixel of the plot's height.
fn rows() -> u32 {
    (HEIGHT - MARGINS.top - MARGINS.bottom) as u32
}

#[component]
pub(super) fn Timeline(
    file_id: u32,
    device: usize,
    r: Arc<DeviceReport>,
    chosen: Signal<Option<i64>>,
    choose: Callback<i64>,
    shared: SharedWindow,
) -> impl IntoView {
    let axis = shared.axis;
    let width = RwSignal::new(0.0f64);
    let wrap = NodeRef::<leptos::html::Div>::new();
    Effect::new(move |_| {
        if let Some(el) = wrap.get() {
            observe_width(&el, move |w| width.set(w));
        }
    });
    let asked_width = Memo::new(move |_| (width.get() / WIDTH_STEP).ceil() * WIDTH_STEP);
    let whole = use_engine("CUDA memory timeline", move || {
        let w = asked_width.get();
        (w > 0.0).then(|| request::TorchSnapshotTimeline {
            file_id,
            device,
            axis: axis.get(),
            window: None,
            columns: columns_for(w),
            rows: rows(),
        })
    });
    let axis_button = move |a: Axis, label: &'static str| {
        view! {
            <button class="seg" data-axis=format!("{a:?}").to_lowercase() aria-pressed=move || (axis.get() == a).to_string() on:click=move |_| axis.set(a)>{label}</button>
        }
    };
    let first_us = r.history.first_time_us.unwrap_or(0);
    let peak = r.peak_with_prior_event_index;
    view! {
        <section class="ts-timeline" data-testid="ts-timeline">
            <h2>"Active memory timeline"</h2>
            <div class="ts-controls">
                <span class="segmented" data-testid="ts-axis">{axis_button(Axis::Event, "By event")}{axis_button(Axis::Time, "By time")}</span>
                <span class="legend small">
                    <span class="sw ts-alloc"></span>"each allocation" <span class="sw ts-small"></span>"small ones, summed"
                    <span class="sw ts-prior"></span>"live before the trace" <span class="sw ts-reserved"></span>"reserved"
                </span>
            </div>
            <div class="mp-chart" node_ref=wrap style=format!("min-height:{HEIGHT}px")>
                {move || match whole.reply.get() {
                    Reply::Ready(b) => view! { <Chart file_id device full=b width chosen choose first_us peak shared /> }.into_any(),
                    Reply::Failed(e) => view! { <p class="error">{e.detail()}</p> }.into_any(),
                    Reply::Rejected(m) => view! { <p class="error">{m}</p> }.into_any(),
                    Reply::Waiting => view! { <p class="muted loading">"Stacking the allocations…"</p> }.into_any(),
                }}
            </div>
            <p class="hint muted">"Scroll or W/S to zoom, drag or A/D to pan, double-click or 0 for the whole trace · hover a band for its allocation · click to show the allocator's state at that event"</p>
        </section>
    }
}

/// The x extent of bands `b`'s whole trace: each event (or microsecond) a unit wide.
fn extent(b: &Bands) -> Viewport {
    Viewport::x_range(b.full_start as f64, (b.full_end + 1).max(b.full_start + 1) as f64)
}

/// The window (both ends included) a view shows.
fn window_of(v: Viewport) -> (i64, i64) {
    let a = v.x0.floor() as i64;
    (a, (v.x1.ceil() as i64 - 1).max(a))
}

/// What is under the pointer.
#[derive(Clone, Copy, PartialEq)]
enum Under {
    Band(usize),
    Small,
    Prior,
    Above,
}

#[component]
fn Chart(
    file_id: u32,
    device: usize,
    full: Arc<Bands>,
    width: RwSignal<f64>,
    chosen: Signal<Option<i64>>,
    choose: Callback<i64>,
    first_us: i64,
    peak: i64,
    shared: SharedWindow,
) -> impl IntoView {
    let canvas = NodeRef::<leptos::html::Canvas>::new();
    let full_view = extent(&full);
    let min_w = if full.axis == Axis::Event { 8.0 } else { MIN_TIME_US };
    // By time the view is the shared window (one the panel or the event axis left is kept); by
    // event the timeline's own, the panel following its events' times.
    let view = RwSignal::new(if full.axis == Axis::Time { shared.view_in(full_view, min_w) } else { full_view });
    if full.axis == Axis::Time {
        Effect::new(move |_| shared.show(view.get(), full_view));
        Effect::new(move |_| {
            let v = shared.view_in(full_view, min_w);
            if view.with_untracked(|w| (w.x0, w.x1) != (v.x0, v.x1)) {
                view.set(v);
            }
        });
    }
    let pz = PanZoom::new(canvas, view, full_view, MARGINS).min_size(min_w, 0.0).axes(ZoomAxes::X);
    let (axis, whole_window) = (full.axis, (full.start, full.end));
    let asked = use_engine("CUDA memory timeline window", move || {
        let w = window_of(view.get());
        (w != whole_window).then(|| request::TorchSnapshotTimeline {
            file_id,
            device,
            axis,
            window: Some(w),
            columns: columns_for(width.get_untracked()),
            rows: rows(),
        })
    });
    // What is drawn: the whole trace, or the last window answered (kept while the next is asked).
    let shown = RwSignal::new(full.clone());
    let whole = full.clone();
    Effect::new(move |_| {
        if window_of(view.get()) == whole_window {
            shown.set(whole.clone());
        } else if let Reply::Ready(b) = asked.reply.get() {
            shown.set(b);
        }
    });
    if axis == Axis::Event {
        // The panel shows the time from the shown window's first event to its last.
        Effect::new(move |_| {
            let w = shown.with(|b| ((b.start, b.end) != whole_window).then(|| (b.start_time_us as f64, (b.end_time_us + 1) as f64)));
            if shared.window.get_untracked() != w {
                shared.window.set(w);
            }
        });
    }
    let hover = RwSignal::new(None::<(usize, Under, f64, f64)>);
    let unit = expect_context::<AppState>().unit;
    let time_unit = expect_context::<AppState>().time_unit;
    redraw(canvas, move |c| {
        let b = shown.get();
        let (v, h, pick) = (view.get(), hover.get(), chosen.get());
        let w = f64::from(c.client_width());
        let Some(ctx) = prepare(c, w, HEIGHT) else { return false };
        let f = frame(&b, v, w);
        let p = Palette::read();
        let (u, tu) = (unit.get(), time_unit.get());
        y_axis(&ctx, &f, &p, Style { grid: true, binary: true, ..Style::default() }, |y, _| u.format(y as i64));
        match b.axis {
            Axis::Event => x_axis(&ctx, &f, &p, Style { integer: true, ..Style::default() }, |x, _| crate::units::count(x.max(0.0) as u64)),
            // Ticks at round offsets from the trace's first event, not at round absolute times.
            Axis::Time => {
                let shifted = f.with(Viewport { x0: f.v.x0 - first_us as f64, x1: f.v.x1 - first_us as f64, ..f.v });
                x_axis(&ctx, &shifted, &p, Style::default(), |x, _| tu.format(x))
            }
        }
        draw(&ctx, &f, &b, &p, h.map(|(_, u, _, _)| u), pick, peak);
        let _ = c.set_attribute("data-bands", &b.bands.len().to_string());
        let _ = c.set_attribute("data-columns", &b.columns.len().to_string());
        let _ = c.set_attribute("data-window", &format!("{}_{}", b.start, b.end));
        let _ = c.set_attribute("data-time-window", &format!("{}_{}", b.start_time_us, b.end_time_us));
        let _ = c.set_attribute("data-view", &format!("{}_{}", v.x0, v.x1));
        true
    });
    let on_move = move |ev: web_sys::MouseEvent| {
        let Some((f, px, py)) = pz.hover(&ev) else {
            hover.set(None);
            return;
        };
        let found = if f.in_plot(px, py) { shown.with_untracked(|b| under(b, &frame(b, f.v, f.w), px, py)) } else { None };
        hover.set(found.map(|(k, u)| (k, u, px, py)));
    };
    let on_up = move |ev: web_sys::MouseEvent| {
        let Some((sx, sy)) = pz.release() else { return };
        let (px, py) = (f64::from(ev.offset_x()), f64::from(ev.offset_y()));
        if (px - sx).abs() < CLICK_SLOP_PX && (py - sy).abs() < CLICK_SLOP_PX {
            let w = canvas.get_untracked().map_or(0.0, |c| f64::from(c.client_width()));
            let picked = shown.with_untracked(|b| {
                let f = frame(b, view.get_untracked(), w);
                f.in_plot(px, py).then(|| column_at(b, f.dx(px))).flatten().map(|k| b.columns[k].event_index)
            });
            if let Some(e) = picked {
                choose.run(e);
            }
        }
    };
    let tooltip = move || {
        let (k, u, px, py) = hover.get()?;
        let b = shown.get();
        let c = b.columns.get(k)?;
        let left = if px > width.get_untracked() - 360.0 { px - 350.0 } else { px + 14.0 };
        let key = c.event_index.to_string();
        let what = match u {
            Under::Band(i) => {
                let band = b.bands.get(i)?;
                let bk = band.alloc_event_index.to_string();
                view! {
                    <div class="tt-head">"Allocation " <Bytes metric="hover_band_bytes" value=band.size key=bk.clone() /></div>
                    <div class="tt-op"><Text metric="hover_band_frame" value=band.frame.clone() key=bk.clone() shown=if band.frame.is_empty() { "(no Python frame)".to_string() } else { band.frame.clone() } /></div>
                    <dl>
                        <dt>"Allocated"</dt><dd>"event " <Count metric="hover_band_alloc_event" value=band.alloc_event_index key=bk.clone() /></dd>
                        <dt>"Freed"</dt><dd>{match band.freed_at_event_index {
                            Some(e) => view! { "event " <Count metric="hover_band_freed_event" value=e key=bk.clone() /> }.into_any(),
                            None => view! { <Text metric="hover_band_freed_event" value="" key=bk.clone() shown="never (live at the dump)" /> }.into_any(),
                        }}</dd>
                    </dl>
                    {python_frames(&band.python_stack, bk, false)}
                    {match folded_count(&band.python_stack) {
                        0 => None,
                        n => Some(view! { <p class="small muted">{format!("{n} library frames folded inside the library call")}</p> }),
                    }}
                }
                .into_any()
            }
            Under::Small => view! {
                <div class="tt-head"><Count metric="hover_small_count" value=c.small_count key=key.clone() /> " small allocations, summed"</div>
                <dl><dt>"Together"</dt><dd><Bytes metric="hover_small_bytes" value=c.small_bytes key=key.clone() /></dd>
                <dt>"Each under"</dt><dd><Bytes metric="hover_min_band_bytes" value=b.min_band_bytes key=key.clone() /></dd></dl>
            }
            .into_any(),
            Under::Prior => view! {
                <div class="tt-head">"Live before the trace began"</div>
                <dl><dt>"Bytes"</dt><dd><Bytes metric="hover_prior_bytes" value=c.prior_bytes key=key.clone() /></dd></dl>
                <p class="small">"Allocated before recording started, or their events fell out of the ring buffer."</p>
            }
            .into_any(),
            Under::Above => ().into_any(),
        };
        Some(view! {
            <div class="mp-tooltip ts-tooltip" data-testid="ts-tooltip" style=format!("left:{left:.0}px;top:{:.0}px", (py + 14.0).min(HEIGHT - 60.0))>
                {what}
                <dl class="tt-col">
                    <dt>"At"</dt><dd>{if c.event_index < 0 { view! { <Text metric="hover_event_index" value="-1" key=key.clone() shown="before the first event" /> }.into_any() } else {
                        view! { "event " <Count metric="hover_event_index" value=c.event_index as u64 key=key.clone() /> }.into_any()
                    }}</dd>
                    <dt>"Active"</dt><dd><Bytes metric="hover_total_bytes" value=c.total_bytes key=key.clone() /></dd>
                    <dt>"Reserved"</dt><dd><Bytes metric="hover_reserved_bytes" value=c.reserved_bytes key=key.clone() /></dd>
                </dl>
            </div>
        })
    };
    let status = move || {
        let b = shown.get();
        let zoomed = window_of(view.get()) != whole_window;
        view! {
            <span class="muted small" data-testid="ts-window" data-zoomed=zoomed.to_string()>
                <Count metric="window_events" value=b.events_in_window /> " events · " <Count metric="window_bands" value=b.bands.len() as u64 />
                " bands drawn, allocations under " <Bytes metric="min_band_bytes" value=b.min_band_bytes /> " summed · highest "
                <Bytes metric="window_max_bytes" value=b.max_bytes />
                {(b.axis == Axis::Time).then(|| view! { " · " <Duration metric="window_span_us" value_us=(b.end - b.start) as f64 /> })}
            </span>
        }
    };
    view! {
        <div class="ts-chart-bar">
            {status}
            <span class="spacer"></span>
            <button class="btn" data-testid="ts-zoom-reset" disabled=move || window_of(view.get()) == whole_window on:click=move |_| view.set(full_view)>"Whole trace"</button>
        </div>
        <div class="chart-wrap">
            <canvas node_ref=canvas data-testid="ts-timeline-canvas" data-axis=format!("{axis:?}").to_lowercase()
                data-plot-left=MARGINS.left.to_string() data-plot-right=MARGINS.right.to_string() data-plot-top=MARGINS.top.to_string() data-plot-bottom=(HEIGHT - MARGINS.bottom).to_string()
                aria-label="Active memory timeline: scroll to zoom, drag to pan, click a point for the allocator's state then"
                style=format!("width:100%;height:{HEIGHT}px;cursor:crosshair")
                on:mousemove=on_move
                on:mousedown=move |ev: web_sys::MouseEvent| { pz.press(&ev); hover.set(None); }
                on:mouseup=on_up
                on:mouseleave=move |_| { pz.release(); hover.set(None); }
                {..pz.attributes()}
            ></canvas>
            {tooltip}
        </div>
    }
}

/// The frame of `b` shown at `v` on a canvas `w` px wide: y from 0 to above the highest stack and
/// the reserved bytes.
fn frame(b: &Bands, v: Viewport, w: f64) -> Frame {
    let top = b.columns.iter().map(|c| c.reserved_bytes.max(c.total_bytes)).max().unwrap_or(0).max(b.max_bytes).max(1);
    Frame { v: Viewport { y0: 0.0, y1: top as f64 * 1.04, ..v }, w, h: HEIGHT, m: MARGINS }
}

/// The column of `b` at axis position `x`.
fn column_at(b: &Bands, x: f64) -> Option<usize> {
    let k = b.columns.partition_point(|c| (c.to as f64) <= x);
    (k < b.columns.len() && b.columns[k].from as f64 <= x).then_some(k)
}

/// The column and what of it is at (`px`, `py`).
fn under(b: &Bands, f: &Frame, px: f64, py: f64) -> Option<(usize, Under)> {
    let k = column_at(b, f.dx(px))?;
    let c = &b.columns[k];
    let y = f.dy(py) as i64;
    let what = if y < c.prior_bytes {
        Under::Prior
    } else if y < c.prior_bytes.saturating_add(c.small_bytes) {
        Under::Small
    } else {
        let holds = |band: &crate::analysis::torch_snapshot::Band| {
            let bottom = *band.bottoms.get(k.checked_sub(band.first_column as usize)?)?;
            (bottom <= y && y < bottom.saturating_add(band.size)).then_some(())
        };
        b.bands.iter().position(|band| holds(band).is_some()).map_or(Under::Above, Under::Band)
    };
    Some((k, what))
}

/// Draws `b`: the prior and small bands, each allocation's band, the reserved bytes, the peak and
/// the chosen event; `hover` outlined.
fn draw(ctx: &web_sys::CanvasRenderingContext2d, f: &Frame, b: &Bands, p: &Palette, hover: Option<Under>, chosen: Option<i64>, peak: i64) {
    let (left, top, pw, ph) = (f.plot_left(), f.plot_top(), f.plot_w(), f.plot_h());
    ctx.save();
    ctx.begin_path();
    ctx.rect(left, top, pw, ph);
    ctx.clip();
    let x = |v: i64| f.sx(v as f64);
    // An area over the columns between `lo(c)` and `hi(c)` bytes: steps, equal neighbours merged.
    let area = |cols: &mut dyn Iterator<Item = (i64, i64, i64, i64)>| {
        let pts: Vec<(i64, i64, i64, i64)> = cols.collect();
        if pts.is_empty() {
            return;
        }
        ctx.begin_path();
        ctx.move_to(x(pts[0].0), f.sy(pts[0].3 as f64));
        for &(from, to, _, hi) in &pts {
            ctx.line_to(x(from), f.sy(hi as f64));
            ctx.line_to(x(to), f.sy(hi as f64));
        }
        for &(from, to, lo, _) in pts.iter().rev() {
            ctx.line_to(x(to), f.sy(lo as f64));
            ctx.line_to(x(from), f.sy(lo as f64));
        }
        ctx.close_path();
        ctx.fill();
    };
    let visible = |c: &crate::analysis::torch_snapshot::Column| (c.to as f64) > f.v.x0 && (c.from as f64) < f.v.x1;
    ctx.set_fill_style_str(&p.var("--ts-prior"));
    area(&mut b.columns.iter().filter(|c| visible(c)).map(|c| (c.from, c.to, 0, c.prior_bytes)));
    ctx.set_fill_style_str(&p.var("--ts-small"));
    area(&mut b.columns.iter().filter(|c| visible(c)).map(|c| (c.from, c.to, c.prior_bytes, c.prior_bytes.saturating_add(c.small_bytes))));
    ctx.set_fill_style_str(&p.accent);
    for (i, band) in b.bands.iter().enumerate() {
        let first = band.first_column as usize;
        let cols = &b.columns[first..(first + band.bottoms.len()).min(b.columns.len())];
        if cols.last().is_none_or(|c| (c.to as f64) <= f.v.x0) || cols.first().is_none_or(|c| (c.from as f64) >= f.v.x1) {
            continue;
        }
        ctx.set_global_alpha(SHADES[band.alloc_event_index as usize % SHADES.len()]);
        area(&mut cols.iter().zip(&band.bottoms).map(|(c, lo)| (c.from, c.to, *lo, lo.saturating_add(band.size))));
        if hover == Some(Under::Band(i)) {
            ctx.set_global_alpha(1.0);
            ctx.set_stroke_style_str(&p.fg);
            ctx.set_line_width(1.5);
            ctx.stroke();
        }
    }
    ctx.set_global_alpha(1.0);
    // Reserved bytes: a dashed step line.
    ctx.set_stroke_style_str(&p.fg_2);
    ctx.set_line_width(1.0);
    let _ = ctx.set_line_dash(&js_sys::Array::of2(&4.0.into(), &3.0.into()));
    ctx.begin_path();
    for (k, c) in b.columns.iter().enumerate() {
        let y = f.sy(c.reserved_bytes as f64);
        if k == 0 {
            ctx.move_to(x(c.from), y);
        }
        ctx.line_to(x(c.from), y);
        ctx.line_to(x(c.to), y);
    }
    ctx.stroke();
    let _ = ctx.set_line_dash(&js_sys::Array::new());
    // The peak, and the chosen event's column.
    if let Some(c) = b.columns.iter().find(|c| c.event_index == peak) {
        ctx.set_fill_style_str(&p.fg);
        ctx.begin_path();
        let _ = ctx.arc((x(c.from) + x(c.to)) / 2.0, f.sy(c.total_bytes as f64), 3.5, 0.0, std::f64::consts::TAU);
        ctx.fill();
    }
    let chosen_x = chosen.and_then(|e| match b.axis {
        Axis::Event => Some(f.sx(e as f64 + 0.5)),
        Axis::Time => b.columns.iter().find(|c| c.event_index == e).map(|c| (x(c.from) + x(c.to)) / 2.0),
    });
    if let Some(cx) = chosen_x {
        ctx.set_fill_style_str(&p.fg);
        ctx.fill_rect(cx.round() - 0.5, top, 1.5, ph);
    }
    ctx.restore();
    ctx.set_stroke_style_str(&p.border);
    ctx.stroke_rect(left + 0.5, top + 0.5, pw - 1.0, ph - 1.0);
}
