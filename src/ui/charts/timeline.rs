//! The memory timeline: heap and stack stacked as step areas (memory holds its value until the next
//! event), free memory as a dashed line, fragmentation on a second axis, the peak marked, and the
//! lifetimes of a selected breakdown row as bars. Canvas 2D in CSS pixels on a context from
//! [`super::prepare`], which handles devicePixelRatio.

use super::axis::{decimals, nice, x_axis, y_axis, Style};
use super::viewport::{Frame, Margins, Viewport};
use super::{font, Palette};
use crate::analysis::memory_profile::Lifetime;
use crate::engine::memory_profile::TimelineEvent;
use crate::units::ByteUnit;
use wasm_bindgen::JsValue;
use web_sys::CanvasRenderingContext2d as Ctx;

/// Room for the axes around the plot, in CSS pixels.
const MARGINS: Margins = Margins { left: 76.0, right: 48.0, top: 18.0, bottom: 28.0 };
/// Bands for at most this many lifetimes are shaded across the plot; more would be a wash.
const MAX_SHADED_LIFETIMES: usize = 12;
/// Lanes the lifetime bars are spread over, so overlapping ones stay visible.
const LIFETIME_LANES: usize = 6;

/// The chart's frame: a canvas `width` × `height` CSS px showing times `start_ps..end_ps`.
pub fn frame(width: f64, height: f64, start_ps: i64, end_ps: i64) -> Frame {
    let end_ps = end_ps.max(start_ps.saturating_add(1));
    Frame { v: Viewport::x_range(start_ps as f64, end_ps as f64), w: width, h: height, m: MARGINS }
}

/// The time under pixel column `x`, clamped to the visible range.
pub fn time_at(f: &Frame, x: f64) -> i64 {
    f.dx(x).clamp(f.v.x0, f.v.x1) as i64
}

/// Everything one frame shows.
pub struct Scene<'a> {
    pub events: &'a [TimelineEvent],
    pub peak_time_ps: i64,
    pub peak_bytes: i64,
    pub lifetimes: &'a [Lifetime],
    pub hover: Option<usize>,
    /// A drag selection in progress, as two x positions.
    pub drag: Option<(f64, f64)>,
    pub show_free: bool,
    pub unit: ByteUnit,
}

/// The event drawn at time `t_ps`: the last one at or before it (memory holds until the next event),
/// or the first one when `t_ps` is before all of them.
pub fn event_at(events: &[TimelineEvent], t_ps: i64) -> Option<usize> {
    if events.is_empty() {
        return None;
    }
    Some(events.partition_point(|e| e.point.time_offset_ps <= t_ps).saturating_sub(1))
}

/// The byte axis: its top, tick step and labels, in `unit` (or the largest unit that keeps the top ≥ 1
/// for `Auto`, as the page's figures do).
fn byte_axis(max_bytes: f64, unit: ByteUnit) -> (f64, f64, &'static str, f64) {
    let unit = match unit {
        ByteUnit::Auto => {
            [ByteUnit::GiB, ByteUnit::MiB, ByteUnit::KiB].into_iter().find(|u| max_bytes >= u.divisor()).unwrap_or(ByteUnit::B)
        }
        u => u,
    };
    let div = unit.divisor();
    let step = nice(max_bytes / div / 5.0, false);
    let top = ((max_bytes / div / step).ceil().max(1.0)) * step;
    (top * div, step * div, unit.label(), div)
}

fn stroke(ctx: &Ctx, color: &str, width: f64) {
    ctx.set_stroke_style_str(color);
    ctx.set_line_width(width);
    ctx.stroke();
}

fn set_dash(ctx: &Ctx, dash: &[f64]) {
    let a = js_sys::Array::new();
    for d in dash {
        a.push(&JsValue::from_f64(*d));
    }
    let _ = ctx.set_line_dash(&a);
}

/// The axes of one drawing: the frame with y in bytes from 0 to `top`, which `y` maps to pixel rows
/// (a little above `top` at most, so a spike does not leave the plot), and the fragmentation axis's
/// colour, which its curve shares.
struct Axes {
    bytes: Frame,
    top: f64,
    frag_colour: String,
}

impl Axes {
    fn y(&self, v: f64) -> f64 {
        self.bytes.sy(v.clamp(0.0, self.top * 1.05))
    }
}

/// Draws the scene on a cleared context in CSS pixels: the axes, then (clipped to the plot) the
/// selected row's lifetimes and the memory curves, then the peak, the hover and the drag on top.
pub fn draw(ctx: &Ctx, frame: &Frame, scene: &Scene, palette: &Palette) {
    ctx.set_font(&font(11));
    let (l, r, t, b) = (frame.plot_left(), frame.plot_right(), frame.plot_top(), frame.plot_bottom());

    // Visible events, plus one on each side so the steps reach the plot's edges.
    let ev = scene.events;
    let first = ev.partition_point(|e| (e.point.time_offset_ps as f64) < frame.v.x0).saturating_sub(1);
    let last = ev.partition_point(|e| e.point.time_offset_ps as f64 <= frame.v.x1).saturating_add(1).min(ev.len());
    let visible = &ev[first.min(last)..last];

    let mut max = visible.iter().map(|e| e.point.stats.in_use_bytes()).max().unwrap_or(0) as f64;
    if scene.show_free {
        max = max.max(visible.iter().map(|e| e.point.stats.free_memory_bytes).max().unwrap_or(0) as f64);
    }
    let scale = draw_axes(ctx, frame, max.max(1.0), scene.unit, palette);

    ctx.save();
    ctx.begin_path();
    ctx.rect(l, t - 2.0, r - l, b - t + 2.0);
    ctx.clip();
    if scene.lifetimes.len() <= MAX_SHADED_LIFETIMES {
        shade_lifetimes(ctx, frame, scene.lifetimes, palette);
    }
    if !visible.is_empty() {
        // The last step runs to the plot's edge unless the data ends in the window.
        let right_edge = if last == ev.len() { frame.sx(visible[visible.len() - 1].point.time_offset_ps as f64) } else { r };
        draw_curves(ctx, frame, visible, right_edge, &scale, scene.show_free, palette);
    }
    draw_lifetime_bars(ctx, frame, scene.lifetimes, palette);
    ctx.restore();

    if (frame.v.x0..=frame.v.x1).contains(&(scene.peak_time_ps as f64)) {
        draw_peak(ctx, frame, scene, &scale, palette);
    }
    if let Some(e) = scene.hover.and_then(|i| ev.get(i)) {
        draw_hover(ctx, frame, e, &scale, palette);
    }
    if let Some((x0, x1)) = scene.drag {
        let (a, z) = (x0.min(x1).max(l), x0.max(x1).min(r));
        ctx.set_fill_style_str(&palette.accent);
        ctx.set_global_alpha(0.15);
        ctx.fill_rect(a, t, z - a, b - t);
        ctx.set_global_alpha(1.0);
    }

    // Plot frame.
    ctx.begin_path();
    ctx.move_to(l + 0.5, t);
    ctx.line_to(l + 0.5, b + 0.5);
    ctx.line_to(r, b + 0.5);
    stroke(ctx, &palette.fg_2, 1.0);
}

/// Grid and byte axis up to `max` bytes in `unit`; fragmentation (0–100 %) on the right; time in ms
/// below. Returns the byte scale the curves are drawn at.
fn draw_axes(ctx: &Ctx, frame: &Frame, max: f64, unit: ByteUnit, palette: &Palette) -> Axes {
    let frag_colour = palette.var("--chart-frag");
    let (top, step, unit_label, div) = byte_axis(max, unit);
    let bytes = frame.with(Viewport { y0: 0.0, y1: top, ..frame.v });
    let dec = decimals(step / div);
    y_axis(ctx, &bytes, palette, Style { grid: true, step: Some(step), ..Style::default() }, |v, _| {
        format!("{:.dec$} {unit_label}", v / div)
    });
    let percent = frame.with(Viewport { y0: 0.0, y1: 100.0, ..frame.v });
    let frag_axis = Style { right: true, colour: Some(&frag_colour), step: Some(25.0), ..Style::default() };
    y_axis(ctx, &percent, palette, frag_axis, |v, _| format!("{v:.0}%"));
    // Ticks are picoseconds (powers of ten apart, so round in ms too), labelled in ms.
    x_axis(ctx, frame, palette, Style::default(), |ps, step| format!("{:.dec$}", ps / 1e9, dec = decimals(step / 1e9)));
    ctx.set_fill_style_str(&palette.fg_2);
    ctx.set_text_align("right");
    ctx.set_text_baseline("top");
    let _ = ctx.fill_text("ms", frame.w - 4.0, frame.plot_bottom() + 6.0);
    Axes { bytes, top, frag_colour }
}

/// Where lifetime `lt` ends on screen: an open end (never freed in the window) runs off the right
/// edge.
fn lifetime_end_x(frame: &Frame, lt: &Lifetime) -> f64 {
    lt.deallocated_at_ps.map_or(frame.plot_right() + 10.0, |d| frame.sx(d as f64))
}

/// A selected row's lifetimes (when few) as shaded spans over the plot's height.
fn shade_lifetimes(ctx: &Ctx, frame: &Frame, lifetimes: &[Lifetime], palette: &Palette) {
    let (t, b) = (frame.plot_top(), frame.plot_bottom());
    for lt in lifetimes {
        let x0 = frame.sx(lt.allocated_at_ps as f64);
        ctx.set_fill_style_str(&palette.accent);
        ctx.set_global_alpha(0.12);
        ctx.fill_rect(x0, t, (lifetime_end_x(frame, lt) - x0).max(2.0), b - t);
        ctx.set_global_alpha(1.0);
    }
}

/// The memory curves of the `visible` events as steps (memory holds its value until the next
/// event) up to `right_edge`: heap from the baseline, stack as the band between heap and heap +
/// stack, free memory dashed when asked, fragmentation on its own 0–1 scale.
fn draw_curves(ctx: &Ctx, frame: &Frame, visible: &[TimelineEvent], right_edge: f64, scale: &Axes, show_free: bool, palette: &Palette) {
    let b = frame.plot_bottom();
    let y_of = |v: f64| scale.y(v);
    let xs: Vec<f64> = visible.iter().map(|e| frame.sx(e.point.time_offset_ps as f64)).collect();
    let heap: Vec<f64> = visible.iter().map(|e| e.point.stats.heap_allocated_bytes as f64).collect();
    let total: Vec<f64> = visible.iter().map(|e| e.point.stats.in_use_bytes() as f64).collect();
    let free: Vec<f64> = visible.iter().map(|e| e.point.stats.free_memory_bytes as f64).collect();
    let frag: Vec<f64> = visible.iter().map(|e| e.point.stats.fragmentation.clamp(0.0, 1.0)).collect();
    // A step line's vertices: memory holds its value until the next event.
    let steps = |vals: &[f64], to_y: &dyn Fn(f64) -> f64| -> Vec<(f64, f64)> {
        let mut pts = Vec::with_capacity(vals.len() * 2 + 1);
        pts.push((xs[0], to_y(vals[0])));
        for i in 1..xs.len() {
            pts.push((xs[i], to_y(vals[i - 1])));
            pts.push((xs[i], to_y(vals[i])));
        }
        pts.push((right_edge, to_y(vals[vals.len() - 1])));
        pts
    };
    let trace = |pts: &[(f64, f64)]| {
        for &(x, y) in pts {
            ctx.line_to(x, y);
        }
    };
    let step_path = |vals: &[f64], to_y: &dyn Fn(f64) -> f64| {
        ctx.move_to(xs[0], to_y(vals[0]));
        trace(&steps(vals, to_y));
    };
    let heap_pts = steps(&heap, &y_of);
    // Heap from the baseline, stack as the band between heap and heap + stack.
    ctx.begin_path();
    ctx.move_to(xs[0], b);
    trace(&heap_pts);
    ctx.line_to(right_edge, b);
    ctx.close_path();
    ctx.set_fill_style_str(&palette.accent);
    ctx.set_global_alpha(0.30);
    ctx.fill();
    ctx.begin_path();
    trace(&steps(&total, &y_of));
    trace(&heap_pts.iter().rev().copied().collect::<Vec<_>>());
    ctx.close_path();
    ctx.set_fill_style_str(&palette.fg_2);
    ctx.set_global_alpha(0.45);
    ctx.fill();
    ctx.set_global_alpha(1.0);
    ctx.begin_path();
    step_path(&heap, &y_of);
    stroke(ctx, &palette.accent, 1.25);
    if show_free {
        ctx.begin_path();
        step_path(&free, &y_of);
        set_dash(ctx, &[4.0, 3.0]);
        stroke(ctx, &palette.fg, 1.0);
        set_dash(ctx, &[]);
    }
    ctx.begin_path();
    let fraction = frame.with(Viewport { y0: 0.0, y1: 1.0, ..frame.v });
    step_path(&frag, &|f| fraction.sy(f));
    ctx.set_global_alpha(0.7);
    stroke(ctx, &scale.frag_colour, 1.0);
    ctx.set_global_alpha(1.0);
}

/// Lifetime bars in lanes along the top of the plot, where the curves rarely reach, each with a
/// tick at its allocation (and, when few, a rule down to the baseline).
fn draw_lifetime_bars(ctx: &Ctx, frame: &Frame, lifetimes: &[Lifetime], palette: &Palette) {
    let (t, b) = (frame.plot_top(), frame.plot_bottom());
    for (i, lt) in lifetimes.iter().enumerate() {
        let x0 = frame.sx(lt.allocated_at_ps as f64);
        let y = t + 4.0 + (i % LIFETIME_LANES) as f64 * 5.0;
        ctx.set_fill_style_str(&palette.accent);
        ctx.fill_rect(x0, y - 1.5, (lifetime_end_x(frame, lt) - x0).max(3.0), 3.0);
        ctx.fill_rect(x0 - 0.5, y - 3.0, 1.5, 6.0);
        if lifetimes.len() <= MAX_SHADED_LIFETIMES {
            ctx.set_global_alpha(0.6);
            ctx.fill_rect(x0 - 0.5, y, 1.0, b - y);
            ctx.set_global_alpha(1.0);
        }
    }
}

/// The peak: a dashed rule, a dot and its height.
fn draw_peak(ctx: &Ctx, frame: &Frame, scene: &Scene, scale: &Axes, palette: &Palette) {
    let (r, t, b) = (frame.plot_right(), frame.plot_top(), frame.plot_bottom());
    let x = frame.sx(scene.peak_time_ps as f64).round() + 0.5;
    let y = scale.y(scene.peak_bytes as f64);
    ctx.begin_path();
    ctx.move_to(x, t);
    ctx.line_to(x, b);
    set_dash(ctx, &[3.0, 3.0]);
    stroke(ctx, &palette.fg, 1.0);
    set_dash(ctx, &[]);
    ctx.begin_path();
    let _ = ctx.arc(x, y, 3.5, 0.0, std::f64::consts::TAU);
    ctx.set_fill_style_str(&palette.fg);
    ctx.fill();
    let label = format!("peak {}", scene.unit.format(scene.peak_bytes));
    ctx.set_text_baseline("bottom");
    let w = ctx.measure_text(&label).map(|m| m.width()).unwrap_or(0.0);
    let left_side = x + w + 8.0 > r;
    ctx.set_text_align(if left_side { "right" } else { "left" });
    let _ = ctx.fill_text(&label, if left_side { x - 5.0 } else { x + 5.0 }, t - 3.0);
}

/// The hovered event: a rule and a dot on the heap + stack line.
fn draw_hover(ctx: &Ctx, frame: &Frame, e: &TimelineEvent, scale: &Axes, palette: &Palette) {
    let x = frame.sx(e.point.time_offset_ps as f64).round() + 0.5;
    if (frame.plot_left()..=frame.plot_right()).contains(&x) {
        ctx.begin_path();
        ctx.move_to(x, frame.plot_top());
        ctx.line_to(x, frame.plot_bottom());
        stroke(ctx, &palette.fg_2, 1.0);
        ctx.begin_path();
        let _ = ctx.arc(x, scale.y(e.point.stats.in_use_bytes() as f64), 3.0, 0.0, std::f64::consts::TAU);
        ctx.set_fill_style_str(&palette.accent);
        ctx.fill();
    }
}
