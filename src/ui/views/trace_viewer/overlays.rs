//! What the tracks' canvas draws over and beside the spans: the flow arrows between linked events
//! (the selected event's in the accent colour, the others faint) and the memory counter tracks (each
//! allocator's heap and stack, or allocated and reserved bytes, as a step area, with each merged
//! step's range as a bar). Positions come
//! from the one [`Layout`] and the shared [`Frame`]; the values are the engine's.

use super::layout::{Layout, COUNTER_H};
use crate::analysis::trace_viewer::counters::{CounterKind, CounterTrack, CounterWindow};
use crate::analysis::trace_viewer::flows::Arrow;
use crate::ui::charts::trace::{LANE_PAD, SPAN_H};
use crate::ui::charts::viewport::Frame;
use crate::ui::charts::Palette;
use web_sys::CanvasRenderingContext2d as Ctx;

/// Length and half-width of an arrow head, in CSS px.
const HEAD_PX: f64 = 7.0;
const HEAD_HALF_PX: f64 = 3.5;
/// Room above and below a counter's area in its track, in CSS px.
const COUNTER_PAD: f64 = 4.0;

/// The canvas point of one end of an arrow: the middle of its event's row, at its time; `None` when
/// the event's thread is not shown (its process collapsed).
fn end_point(f: &Frame, layout: &Layout, scroll_top: f64, thread: u32, depth: u16, t_ps: i64) -> Option<(f64, f64)> {
    let lane = layout.lanes.get(layout.lane_of.get(thread as usize).copied().flatten()?)?;
    Some((f.sx(t_ps as f64), lane.y + LANE_PAD + f64::from(depth) * SPAN_H + SPAN_H / 2.0 - scroll_top))
}

/// Draws `arrows` (faint) and `selected` (highlighted) and returns how many were drawn.
pub fn draw_flows(ctx: &Ctx, f: &Frame, layout: &Layout, scroll_top: f64, arrows: &[Arrow], selected: &[Arrow], p: &Palette) -> usize {
    let mut drawn = 0;
    for (list, colour, width, alpha) in [(arrows, p.fg_2.as_str(), 1.0, 0.55), (selected, p.accent.as_str(), 2.0, 1.0)] {
        ctx.set_global_alpha(alpha);
        ctx.set_stroke_style_str(colour);
        ctx.set_fill_style_str(colour);
        ctx.set_line_width(width);
        for a in list {
            let from = end_point(f, layout, scroll_top, a.from_thread, a.from_depth, a.from_ps);
            let to = end_point(f, layout, scroll_top, a.to_thread, a.to_depth, a.to_ps);
            let (Some((x0, y0)), Some((x1, y1))) = (from, to) else { continue };
            // Far off screen on one side: nothing of it shows.
            if (x0 < 0.0 && x1 < 0.0) || (x0 > f.w && x1 > f.w) || (y0 < 0.0 && y1 < 0.0) || (y0 > f.h && y1 > f.h) {
                continue;
            }
            arrow(ctx, (x0, y0), (x1, y1));
            drawn += 1;
        }
    }
    ctx.set_global_alpha(1.0);
    drawn
}

/// A line from `a` to `b` with a head at `b`.
fn arrow(ctx: &Ctx, a: (f64, f64), b: (f64, f64)) {
    ctx.begin_path();
    ctx.move_to(a.0, a.1);
    ctx.line_to(b.0, b.1);
    ctx.stroke();
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let len = dx.hypot(dy);
    if len < 1.0 {
        return;
    }
    let (ux, uy) = (dx / len, dy / len);
    let (bx, by) = (b.0 - ux * HEAD_PX, b.1 - uy * HEAD_PX);
    ctx.begin_path();
    ctx.move_to(b.0, b.1);
    ctx.line_to(bx - uy * HEAD_HALF_PX, by + ux * HEAD_HALF_PX);
    ctx.line_to(bx + uy * HEAD_HALF_PX, by - ux * HEAD_HALF_PX);
    ctx.close_path();
    ctx.fill();
}

/// What the counter tracks show: each track's steps over the window (by track index), and the time
/// hovered.
pub struct CounterScene<'a> {
    pub tracks: &'a [CounterTrack],
    pub windows: &'a [CounterWindow],
    pub hover_ps: Option<i64>,
}

/// Draws each counter track of `layout`, scaled to its track's most bytes in use.
pub fn draw_counters(ctx: &Ctx, f: &Frame, layout: &Layout, scroll_top: f64, s: &CounterScene, p: &Palette) {
    let (windows, hover_ps) = (s.windows, s.hover_ps);
    for &(k, top) in &layout.counters {
        let y_top = top - scroll_top;
        if y_top + COUNTER_H < 0.0 || y_top > f.h {
            continue;
        }
        ctx.set_fill_style_str(&p.border);
        ctx.fill_rect(0.0, (y_top + COUNTER_H).round() - 0.5, f.w, 1.0);
        let Some(w) = windows.get(k) else { continue };
        let Some(track) = s.tracks.get(k) else { continue };
        let kind = track.kind;
        let scale = (COUNTER_H - 2.0 * COUNTER_PAD) / track.max_in_use_bytes.max(1) as f64;
        let base = y_top + COUNTER_H - COUNTER_PAD;
        // Kept inside the track, whatever the values.
        let y = |bytes: i64| (base - bytes.max(0) as f64 * scale).max(y_top);
        for i in 0..w.len() {
            let x0 = f.sx(w.time_ps[i] as f64).max(0.0);
            let x1 = w.time_ps.get(i + 1).map_or(f.w, |&t| f.sx(t as f64)).min(f.w);
            if x1 < 0.0 || x0 > f.w {
                continue;
            }
            let width = (x1 - x0).max(1.0);
            let (heap, stack) = (w.heap_bytes[i], w.stack_bytes[i]);
            // The accent part's bottom and top: the heap on the stack, as the Memory Profile stacks
            // them; a caching allocator's allocated bytes within its reserved ones.
            let (under, accent_top) = match kind {
                CounterKind::HeapStack => (y(stack), y(stack + heap)),
                CounterKind::AllocatedReserved => (base, y(heap)),
            };
            ctx.set_global_alpha(0.45);
            ctx.set_fill_style_str(&p.fg_2);
            ctx.fill_rect(x0, y(stack), width, base - y(stack));
            ctx.set_fill_style_str(&p.accent);
            ctx.fill_rect(x0, accent_top, width, under - accent_top);
            ctx.set_global_alpha(1.0);
            ctx.fill_rect(x0, accent_top - 1.0, width, 1.5);
            if w.count[i] > 1 {
                // The range the merged events went through.
                ctx.fill_rect(x0, y(w.max_in_use_bytes[i]), 1.0, y(w.min_in_use_bytes[i]) - y(w.max_in_use_bytes[i]) + 1.0);
            }
        }
        if let Some(t) = hover_ps {
            ctx.set_fill_style_str(&p.fg);
            ctx.fill_rect(f.sx(t as f64).round() - 0.5, y_top, 1.0, COUNTER_H);
        }
    }
}
