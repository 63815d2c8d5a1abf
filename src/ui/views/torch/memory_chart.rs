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

/// The pixel column point `t` falls in; every point left of the plot in one column, and every point
/// right of it in another (their lines are clipped away, but for the one into the plot).
fn column(f: &Frame, t: f64) -> f64 {
    f.sx(t).floor().clamp(f.plot_left() - 1.0, f.plot_left() + f.plot_w() + 1.0)
}

/// The curve of `values` as a path: of the points in one pixel column only the first, the lowest, the
/// highest and the last, which draw the same pixels as all of them. A long trace's curve holds
/// hundreds of thousands of points, and each point drawn is a call out of wasm on the page's thread.
fn path(ctx: &Ctx, f: &Frame, c: &MemoryCurve, values: &[f64]) {
    ctx.begin_path();
    let n = c.time_ms.len().min(values.len());
    let mut started = false;
    let mut i = 0;
    while i < n {
        let col = column(f, c.time_ms[i]);
        let (mut last, mut low, mut high) = (i, i, i);
        while last + 1 < n && column(f, c.time_ms[last + 1]) == col {
            last += 1;
            if values[last] < values[low] {
                low = last;
            }
            if values[last] > values[high] {
                high = last;
            }
        }
        let mut keep = [i, low, high, last];
        keep.sort_unstable();
        for (k, &p) in keep.iter().enumerate() {
            if k > 0 && keep[k - 1] == p {
                continue;
            }
            let (x, y) = (f.sx(c.time_ms[p]), f.sy(values[p] * MB));
            if started {
                ctx.line_to(x, y);
            } else {
                ctx.move_to(x, y);
                started = true;
            }
        }
        i = last + 1;
    }
}

fn draw(ctx: &Ctx, f: &Frame, c: &MemoryCurve, hover: Option<usize>, unit: ByteUnit, p: &Palette) {
    y_axis(ctx, f, p, Style { grid: true, binary: true, ..Style::default() }, |v, _| unit.format(v.round() as i64));
    x_axis(ctx, f, p, Style::default(), |v, step| format!("{} ms", crate::ui::charts::axis::tick_figure(v, step)));
    ctx.save();
    ctx.begin_path();
    ctx.rect(f.plot_left(), f.plot_top(), f.plot_w(), f.plot_h());
    ctx.clip();
    // Allocated: the area under it, then its edge.
    path(ctx, f, c, &c.allocated_mb);
    if let (Some(&last), Some(&first)) = (c.time_ms.last(), c.time_ms.first()) {
        ctx.line_to(f.sx(last), f.sy(0.0));
        ctx.line_to(f.sx(first), f.sy(0.0));
        ctx.close_path();
    }
    ctx.set_global_alpha(0.18);
    ctx.set_fill_style_str(&p.accent);
    ctx.fill();
    ctx.set_global_alpha(1.0);
    path(ctx, f, c, &c.allocated_mb);
    ctx.set_stroke_style_str(&p.accent);
    ctx.set_line_width(1.5);
    ctx.stroke();
    path(ctx, f, c, &c.reserved_mb);
    ctx.set_stroke_style_str(&p.fg_2);
    ctx.set_line_width(1.0);
    ctx.stroke();
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
