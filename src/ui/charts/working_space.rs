//! The working-space chart: heap and unpadded heap before each heap-simulator event (program order),
//! the peak as a vertical line, the hovered buffer's lifetime as a band; hovering names the HLO
//! instruction at that point. Its x axis follows the block timeline's viewport.

use super::axis::{bytes_label, x_axis, y_axis, Style};
use super::plot::{redraw, MARGINS};
use super::viewport::{Frame, Viewport};
use super::{font, prepare_fit, Palette};
use crate::engine::memory_viewer_columns::ViewerData;
use crate::ui::components::metric::{Bytes, Count, Text};
use leptos::prelude::*;
use std::sync::Arc;
use web_sys::CanvasRenderingContext2d;

/// Draws `values` as a step line over the visible steps; with more steps than pixels, each pixel
/// column gets one vertical stroke from its minimum to its maximum.
fn series(ctx: &CanvasRenderingContext2d, values: &[i64], f: Frame) {
    let (v, plot_w) = (f.v, f.plot_w());
    let first = (v.x0.floor().max(0.0)) as usize;
    let last = (v.x1.ceil() as usize).min(values.len().saturating_sub(1));
    if values.is_empty() || first > last {
        return;
    }
    ctx.begin_path();
    if (last - first) as f64 > plot_w * 2.0 {
        let mut col = -1i64;
        let (mut lo, mut hi) = (0i64, 0i64);
        for (i, &y) in values.iter().enumerate().take(last + 1).skip(first) {
            let c = f.sx(i as f64) as i64;
            if c != col {
                if col >= 0 {
                    ctx.move_to(col as f64 + 0.5, f.sy(lo as f64));
                    ctx.line_to(col as f64 + 0.5, f.sy(hi as f64) - 0.5);
                }
                col = c;
                lo = y;
                hi = y;
            }
            lo = lo.min(y);
            hi = hi.max(y);
        }
        ctx.move_to(col as f64 + 0.5, f.sy(lo as f64));
        ctx.line_to(col as f64 + 0.5, f.sy(hi as f64) - 0.5);
    } else {
        ctx.move_to(f.sx(first as f64), f.sy(values[first] as f64));
        for i in first + 1..=last {
            ctx.line_to(f.sx(i as f64), f.sy(values[i - 1] as f64));
            ctx.line_to(f.sx(i as f64), f.sy(values[i] as f64));
        }
    }
    ctx.stroke();
}

/// Draws the chart over program steps `v.x0..v.x1` (`v`'s y range is the block timeline's and unused).
fn draw(
    canvas: &web_sys::HtmlCanvasElement,
    viewer: &ViewerData,
    v: Viewport,
    span: Option<(i64, i64)>,
    cursor: Option<usize>,
) -> Option<()> {
    let (ctx, w, h) = prepare_fit(canvas)?;
    let p = Palette::read();
    let y_top = (viewer.peak_heap_bytes() as f64 * 1.08).max(1.0);
    let f = Frame { v: Viewport { y0: 0.0, y1: y_top, ..v }, w, h, m: MARGINS };
    let (plot_w, plot_h) = (f.plot_w(), f.plot_h());
    y_axis(&ctx, &f, &p, Style { grid: true, binary: true, ..Style::default() }, |b, _| bytes_label(b));
    x_axis(&ctx, &f, &p, Style { grid: true, integer: true, ..Style::default() }, |t, _| crate::units::count(t as u64));
    let (left, top) = (f.plot_left(), f.plot_top());
    ctx.save();
    ctx.begin_path();
    ctx.rect(left, top, plot_w, plot_h);
    ctx.clip();
    if let Some((s, l)) = span {
        ctx.set_fill_style_str(&p.accent);
        ctx.set_global_alpha(0.16);
        let (a, b) = (f.sx(s as f64), f.sx(l.max(s + 1) as f64));
        ctx.fill_rect(a, top, (b - a).max(2.0), plot_h);
        ctx.set_global_alpha(1.0);
    }
    ctx.set_line_width(1.0);
    ctx.set_stroke_style_str(&p.fg_2);
    let _ = ctx.set_line_dash(&js_sys::Array::of2(&4.into(), &3.into()));
    series(&ctx, &viewer.unpadded_heap_bytes, f);
    let _ = ctx.set_line_dash(&js_sys::Array::new());
    ctx.set_line_width(1.5);
    ctx.set_stroke_style_str(&p.accent);
    series(&ctx, &viewer.heap_bytes, f);
    let peak_x = f.sx(viewer.peak_position as f64).round() + 0.5;
    let peak = p.var("--peak");
    ctx.set_stroke_style_str(&peak);
    ctx.set_line_width(1.0);
    ctx.begin_path();
    ctx.move_to(peak_x, top);
    ctx.line_to(peak_x, top + plot_h);
    ctx.stroke();
    ctx.set_fill_style_str(&peak);
    ctx.set_font(&format!("600 {}", font(11)));
    ctx.set_text_baseline("top");
    let label = format!("peak {}", crate::units::bytes(viewer.peak_heap_bytes()));
    let right_room = peak_x + 4.0 + 110.0 < left + plot_w;
    ctx.set_text_align(if right_room { "left" } else { "right" });
    let _ = ctx.fill_text(&label, if right_room { peak_x + 4.0 } else { peak_x - 4.0 }, top + 2.0);
    if let Some(i) = cursor {
        let x = f.sx(i as f64).round() + 0.5;
        ctx.set_stroke_style_str(&p.fg);
        ctx.begin_path();
        ctx.move_to(x, top);
        ctx.line_to(x, top + plot_h);
        ctx.stroke();
        if let Some(&y) = viewer.heap_bytes.get(i) {
            ctx.set_fill_style_str(&p.accent);
            ctx.begin_path();
            let _ = ctx.arc(x, f.sy(y as f64), 3.0, 0.0, std::f64::consts::TAU);
            ctx.fill();
        }
    }
    ctx.restore();
    ctx.set_stroke_style_str(&p.border);
    ctx.set_line_width(1.0);
    ctx.stroke_rect(left + 0.5, top + 0.5, plot_w - 1.0, plot_h - 1.0);
    Some(())
}

#[component]
pub fn WorkingSpace(
    viewer: Arc<ViewerData>,
    /// The block timeline's viewport; only its x range is used.
    view: RwSignal<Viewport>,
    hovered: RwSignal<Option<i64>>,
    pinned: RwSignal<Option<i64>>,
) -> impl IntoView {
    let canvas = NodeRef::<leptos::html::Canvas>::new();
    let cursor = RwSignal::new(None::<(usize, f64)>);
    let v2 = viewer.clone();
    redraw(canvas, move |c| {
        let span = hovered.get().or(pinned.get()).and_then(|id| v2.span(id));
        let at = cursor.get().map(|(i, _)| i);
        draw(c, &v2, view.get(), span, at).is_some()
    });
    let n = viewer.heap_bytes.len();
    let on_move = move |ev: web_sys::MouseEvent| {
        let Some(c) = canvas.get_untracked() else { return };
        let f = super::frame_of(&c, view.get_untracked(), MARGINS);
        let px = f64::from(ev.offset_x());
        let x = f.dx(px);
        let inside = px >= f.plot_left() && px <= f.plot_right() && n > 0;
        let i = x.round().clamp(0.0, n.saturating_sub(1) as f64) as usize;
        cursor.set(inside.then_some((i, px)));
    };
    let tip_viewer = viewer.clone();
    let tip = move || {
        let (i, px) = cursor.get()?;
        let v = &tip_viewer;
        let name = v.instruction_names.get(i).cloned().unwrap_or_default();
        let w = canvas.get_untracked().map_or(0.0, |c| f64::from(c.client_width()));
        let left = if px > w - 300.0 { px - 290.0 } else { px + 12.0 };
        let peak = i == v.peak_position;
        Some(view! {
            <div class="hover-card" data-testid="ws-tooltip" style=format!("left:{left:.0}px;top:8px")>
                <div class="hc-title">
                    {if name.is_empty() { view! { <span class="muted">"end of program"</span> }.into_any() } else { view! { <code><Text metric="ws_instruction" value=name /></code> }.into_any() }}
                </div>
                <table>
                    <tr><td>"Step"</td><td><Count metric="ws_step" value=i as u64 /> {peak.then_some(" (peak)")}</td></tr>
                    <tr><td>"Heap"</td><td><Bytes metric="ws_heap_bytes" value=v.heap_bytes.get(i).copied().unwrap_or(0) /></td></tr>
                    <tr><td>"Unpadded"</td><td><Bytes metric="ws_unpadded_heap_bytes" value=v.unpadded_heap_bytes.get(i).copied().unwrap_or(0) /></td></tr>
                </table>
            </div>
        })
    };
    view! {
        <div class="chart-wrap ws-wrap">
            <canvas
                class="chart working-space"
                data-testid="working-space"
                aria-label="Heap size over program order"
                node_ref=canvas
                on:mousemove=on_move
                on:mouseleave=move |_| cursor.set(None)
            ></canvas>
            {tip}
        </div>
    }
}
