//! The Memory view's curve: a device's allocated memory (filled, the accent) and reserved memory
//! (a line) over time since the profiler started, as the plugin draws them (steps: memory holds
//! until the next event). The wheel, a drag and the chart keys zoom and pan the time axis (the
//! shared [`PanZoom`]); hovering names the time and both figures there.

use super::memory::DeviceOf;
use crate::engine::torch_page::MemoryCurve;
use crate::ui::charts::axis::{x_axis, y_axis, Style};
use crate::ui::charts::pan_zoom::{PanZoom, ZoomAxes};
use crate::ui::charts::plot::redraw;
use crate::ui::charts::viewport::{Frame, Margins, Viewport};
use crate::ui::charts::{frame_of, prepare_fit, Palette};
use crate::ui::components::metric::{BytesIn, Duration};
use crate::ui::state::AppState;
use crate::units::ByteUnit;
use leptos::prelude::*;
use std::sync::Arc;
use web_sys::CanvasRenderingContext2d as Ctx;

/// Bytes in the plugin's MB.
pub const MB: f64 = 1_048_576.0;
const MARGINS: Margins = Margins { left: 76.0, right: 14.0, top: 10.0, bottom: 24.0 };
/// The least time span the chart zooms to, ms.
const MIN_SPAN_MS: f64 = 0.01;

/// The whole curve: its time span, and from 0 to a little above the highest reserved memory (bytes).
fn full_view(c: &MemoryCurve) -> Viewport {
    let (t0, t1) = (c.time_ms.first().copied().unwrap_or(0.0), c.time_ms.last().copied().unwrap_or(1.0));
    let top = c.reserved_mb.iter().chain(&c.allocated_mb).fold(0.0f64, |m, v| m.max(*v)) * MB;
    Viewport { x0: t0, x1: t1.max(t0 + MIN_SPAN_MS), y0: 0.0, y1: (top * 1.08).max(1.0) }
}

/// The point shown at time `t` (ms): the last at or before it, or the first.
fn point_at(c: &MemoryCurve, t: f64) -> Option<usize> {
    (!c.time_ms.is_empty()).then(|| c.time_ms.partition_point(|&x| x <= t).saturating_sub(1))
}

/// One pixel column of the plot: its left edge and the lowest and highest value the curve takes in it.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Span {
    x: f64,
    low: f64,
    high: f64,
}

/// The step curve of `values` (bytes; memory holds its value until the next event) per pixel column of
/// the plot: the value held into the column and every value set in it. Columns start where the curve
/// does and end with its last point.
///
/// Why columns and not a path through the points: a long trace's curve swings between its low and
/// high many times in one pixel column, and a path that does so crosses each pixel row once a column.
/// Chromium rasterises canvas paths on the page's thread when it commits the frame: such a path took
/// 99 ms to fill and 45 ms to stroke on a 1 GB trace. A column's range is one rectangle, and the
/// rectangles draw the same pixels.
fn spans(f: &Frame, c: &MemoryCurve, values: &[f64]) -> Vec<Span> {
    let t = &c.time_ms[..c.time_ms.len().min(values.len())];
    // The last point at or before the window's start holds into it.
    let mut i = t.partition_point(|&x| x <= f.v.x0).saturating_sub(1);
    let mut held: Option<f64> = None;
    let (left, right) = (f.plot_left().floor() as i64, (f.plot_left() + f.plot_w()).ceil() as i64);
    let mut out = Vec::with_capacity((right - left).max(0) as usize);
    for col in left..right {
        let next = (col + 1) as f64;
        let (mut low, mut high) = (held.unwrap_or(f64::INFINITY), held.unwrap_or(f64::NEG_INFINITY));
        while i < t.len() && f.sx(t[i]) < next {
            let v = values[i] * MB;
            (low, high, held) = (low.min(v), high.max(v), Some(v));
            i += 1;
        }
        if low <= high {
            out.push(Span { x: col as f64, low, high });
        }
        if i == t.len() {
            break;
        }
    }
    out
}

/// `spans` as the curve's line, `width` px thick: each column from its lowest to its highest value,
/// a run of columns at one value as one rectangle (a held value draws as one call, not one a column).
fn stroke_spans(ctx: &Ctx, f: &Frame, spans: &[Span], width: f64) {
    for run in spans.chunk_by(|a, b| a.low == b.low && a.high == b.high) {
        let (top, bottom) = (f.sy(run[0].high), f.sy(run[0].low));
        ctx.fill_rect(run[0].x, top - width / 2.0, run.len() as f64, bottom - top + width);
    }
}

/// The area under `spans` down to `base` (px), as one path along each column's highest value.
fn fill_under(ctx: &Ctx, f: &Frame, spans: &[Span], base: f64) {
    let (Some(first), Some(last)) = (spans.first(), spans.last()) else { return };
    ctx.begin_path();
    ctx.move_to(first.x, base);
    for s in spans {
        let top = f.sy(s.high);
        ctx.line_to(s.x, top);
        ctx.line_to(s.x + 1.0, top);
    }
    ctx.line_to(last.x + 1.0, base);
    ctx.close_path();
    ctx.fill();
}

fn draw(ctx: &Ctx, f: &Frame, c: &MemoryCurve, hover: Option<usize>, unit: ByteUnit, p: &Palette) {
    y_axis(ctx, f, p, Style { grid: true, binary: true, ..Style::default() }, |v, _| unit.format(v.round() as i64));
    x_axis(ctx, f, p, Style::default(), |v, step| format!("{} ms", crate::ui::charts::axis::tick_figure(v, step)));
    ctx.save();
    ctx.begin_path();
    ctx.rect(f.plot_left(), f.plot_top(), f.plot_w(), f.plot_h());
    ctx.clip();
    // Allocated: the area under it, then its edge; reserved: its edge.
    let allocated = spans(f, c, &c.allocated_mb);
    ctx.set_global_alpha(0.18);
    ctx.set_fill_style_str(&p.accent);
    fill_under(ctx, f, &allocated, f.sy(0.0));
    ctx.set_global_alpha(1.0);
    stroke_spans(ctx, f, &allocated, 1.5);
    ctx.set_fill_style_str(&p.fg_2);
    stroke_spans(ctx, f, &spans(f, c, &c.reserved_mb), 1.0);
    if let Some(i) = hover {
        let x = f.sx(c.time_ms[i]).round() + 0.5;
        ctx.set_fill_style_str(&p.fg);
        ctx.fill_rect(x, f.plot_top(), 1.0, f.plot_h());
        for (v, colour) in [(c.allocated_mb[i], &p.accent), (c.reserved_mb[i], &p.fg_2)] {
            ctx.begin_path();
            let _ = ctx.arc(x, f.sy(v * MB), 3.5, 0.0, std::f64::consts::TAU);
            ctx.set_fill_style_str(colour);
            ctx.fill();
        }
    }
    ctx.restore();
}

/// A device's curve, read in place in the reply.
#[derive(Clone)]
struct Curve(Arc<DeviceOf>);

impl std::ops::Deref for Curve {
    type Target = MemoryCurve;

    fn deref(&self) -> &MemoryCurve {
        &self.0.curve
    }
}

/// The curve of one device (`device` names it in the figures' keys).
#[component]
pub fn MemoryChart(d: Arc<DeviceOf>, device: String) -> impl IntoView {
    let curve = Curve(d);
    let state = expect_context::<AppState>();
    let canvas = NodeRef::<leptos::html::Canvas>::new();
    let full = full_view(&curve);
    let view = RwSignal::new(full);
    let pz = PanZoom::new(canvas, view, full, MARGINS).axes(ZoomAxes::X).min_size(MIN_SPAN_MS, 0.0);
    // The point under the pointer and where the pointer is (for the card).
    let hover = RwSignal::new(None::<(usize, f64, f64)>);
    {
        let curve = curve.clone();
        redraw(canvas, move |c| {
            let Some((ctx, _, _)) = prepare_fit(c) else { return false };
            let shown = view.get();
            draw(&ctx, &frame_of(c, shown, MARGINS), &curve, hover.get().map(|h| h.0), state.unit.get(), &Palette::read());
            let _ = c.set_attribute("data-view", &format!("{},{}", shown.x0, shown.x1));
            true
        });
    }
    let on_move = {
        let curve = curve.clone();
        move |ev: web_sys::MouseEvent| {
            let found =
                pz.hover(&ev).filter(|(f, px, py)| f.in_plot(*px, *py)).and_then(|(f, px, _)| Some((point_at(&curve, f.dx(px))?, px, f.w)));
            hover.set(found);
        }
    };
    let card = {
        let curve = curve.clone();
        move || {
            let (i, px, w) = hover.get()?;
            let side = if px > w / 2.0 { format!("right:{:.0}px", w - px + 12.0) } else { format!("left:{:.0}px", px + 12.0) };
            let key = device.clone();
            Some(view! {
                <div class="chart-tip torch-memory-tip" style=side data-testid="torch-memory-tip">
                    <div>"At " <Duration metric="hover_time_us" value_us=curve.time_ms[i] * 1000.0 key=key.clone() /></div>
                    <div><span class="swatch allocated"></span>"Allocated " <BytesIn metric="hover_allocated_mb" value=curve.allocated_mb[i] unit_bytes=MB key=key.clone() /></div>
                    <div><span class="swatch reserved"></span>"Reserved " <BytesIn metric="hover_reserved_mb" value=curve.reserved_mb[i] unit_bytes=MB key=key /></div>
                </div>
            })
        }
    };
    view! {
        <figure class="torch-memory-chart">
            <div class="legend">
                <span class="legend-item"><span class="swatch allocated"></span>"Allocated"</span>
                <span class="legend-item"><span class="swatch reserved"></span>"Reserved"</span>
                <span class="muted hint">"Wheel or W/S zoom, drag or A/D pan, double-click or 0 resets"</span>
            </div>
            <div class="series-chart">
                <canvas
                    class="chart"
                    data-testid="torch-memory-chart"
                    data-points=curve.time_ms.len().to_string()
                    aria-label="Allocated and reserved memory over time"
                    on:mousemove=on_move
                    on:mousedown=move |ev: web_sys::MouseEvent| {
                        pz.press(&ev);
                        hover.set(None);
                    }
                    on:mouseup=move |_| {
                        pz.release();
                    }
                    on:mouseleave=move |_| {
                        pz.release();
                        hover.set(None);
                    }
                    {..pz.attributes()}
                ></canvas>
                {card}
            </div>
        </figure>
    }
}
