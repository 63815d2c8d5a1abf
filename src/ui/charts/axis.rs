//! The one axis of every chart: ticks at round values of the data's own unit (1, 2 or 5 × 10ⁿ, or
//! powers of two for byte axes labelled in KiB/MiB), labels that never collide (the step widens until
//! the widest label fits between two ticks), and grid lines or tick marks, drawn for a [`Frame`].

use super::viewport::Frame;
use super::{font, Palette};
use web_sys::CanvasRenderingContext2d as Ctx;

/// Pixels wanted between two x ticks before labels are measured, and the least gap between labels.
const X_TICK_PX: f64 = 90.0;
const X_LABEL_GAP_PX: f64 = 12.0;
/// Pixels wanted between two y ticks, and the least: a label's height with room around it.
const Y_TICK_PX: f64 = 40.0;
const Y_LABEL_PX: f64 = 20.0;
/// Label font size in CSS pixels.
const LABEL_PX: u32 = 11;

/// A round axis step of at least `x`: 1, 2 or 5 times a power of ten, or (`binary`, for byte axes
/// whose labels are KiB/MiB) a power of two. 1 for a step that is not a positive number.
pub fn nice(x: f64, binary: bool) -> f64 {
    if !(x.is_finite() && x > 0.0) {
        return 1.0;
    }
    let (base, mults): (f64, &[f64]) = if binary { (2.0, &[1.0, 2.0]) } else { (10.0, &[1.0, 2.0, 5.0, 10.0]) };
    let unit = base.powf(x.log(base).floor());
    mults.iter().map(|m| unit * m).find(|s| *s >= x * (1.0 - 1e-12)).unwrap_or(unit * base)
}

/// The multiples of `step` in `[lo, hi]` (tick positions), computed from the first one rather than
/// accumulated, so long axes do not drift.
pub fn ticks(lo: f64, hi: f64, step: f64) -> Vec<f64> {
    if !(step.is_finite() && step > 0.0 && lo.is_finite() && hi.is_finite() && hi >= lo) {
        return Vec::new();
    }
    let first = (lo / step).ceil() * step;
    (0..).map(|i| first + f64::from(i) * step).take_while(|v| *v <= hi + step * 1e-9).collect()
}

/// Decimals that tell ticks `step` apart.
pub fn decimals(step: f64) -> usize {
    (-step.log10().floor()).clamp(0.0, 6.0) as usize
}

/// A tick's figure, short enough for the axis's margin: with its decimals for `step` below 100,000,
/// else scaled to thousands, millions, … with SI's letter (`3.5 G` for 3,500,000,000), so a chart of
/// huge rates does not print nine-digit labels that the margin cuts.
pub fn tick_figure(v: f64, step: f64) -> String {
    const PREFIXES: [&str; 5] = ["k", "M", "G", "T", "P"];
    if step < 1e5 {
        return format!("{v:.*}", decimals(step));
    }
    let power = ((step.log10() / 3.0).floor() as usize).clamp(1, PREFIXES.len());
    let scale = 10f64.powi(3 * power as i32);
    format!("{:.*} {}", decimals(step / scale), v / scale, PREFIXES[power - 1])
}

/// A compact byte label: `512 B`, `1.5 MiB`.
pub fn bytes_label(v: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = v;
    let mut u = 0;
    while v.abs() >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if (v - v.round()).abs() < 1e-6 {
        format!("{v:.0} {}", UNITS[u])
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// How an axis looks and steps.
#[derive(Debug, Clone, Copy, Default)]
pub struct Style<'a> {
    /// Grid lines across the plot at each tick (else short tick marks outside it).
    pub grid: bool,
    /// Power-of-two steps (byte axes), else 1, 2 or 5 × 10ⁿ.
    pub binary: bool,
    /// Whole-number ticks only (program steps).
    pub integer: bool,
    /// A y axis on the right of the plot (else the left).
    pub right: bool,
    /// The labels' colour (a CSS colour); the secondary text colour when `None`.
    pub colour: Option<&'a str>,
    /// The tick step, when the chart chose it (its top is a whole number of steps); else it is
    /// chosen here from the plot's size.
    pub step: Option<f64>,
}

/// The x axis under `f`'s plot; `label(value, step)` writes a tick's label.
pub fn x_axis(ctx: &Ctx, f: &Frame, p: &Palette, style: Style, label: impl Fn(f64, f64) -> String) {
    ctx.set_font(&font(LABEL_PX));
    let (v, plot_w) = (f.v, f.plot_w());
    let min = if style.integer { 1.0 } else { 0.0 };
    let mut step = style.step.unwrap_or_else(|| nice((v.width() / (plot_w / X_TICK_PX).max(1.0)).max(min), style.binary));
    let width = |s: &str| ctx.measure_text(s).map_or(0.0, |m| m.width());
    // Widen the step until the widest label fits between two ticks (a few rounds at most).
    for _ in 0..8 {
        let widest = ticks(v.x0, v.x1, step).iter().map(|&t| width(&label(t, step))).fold(0.0, f64::max);
        if widest + X_LABEL_GAP_PX <= step / v.width() * plot_w {
            break;
        }
        step = nice(step * 1.01, style.binary);
    }
    let (top, bottom) = (f.plot_top(), f.plot_bottom());
    ctx.set_text_align("center");
    ctx.set_text_baseline("top");
    for t in ticks(v.x0, v.x1, step) {
        let x = f.sx(t).round();
        ctx.set_fill_style_str(if style.grid { &p.border } else { &p.fg_2 });
        if style.grid {
            ctx.fill_rect(x, top, 1.0, bottom - top);
        } else {
            ctx.fill_rect(x, bottom, 1.0, 4.0);
        }
        ctx.set_fill_style_str(style.colour.unwrap_or(&p.fg_2));
        let text = label(t, step);
        // Keep the end labels inside the canvas.
        let half = width(&text) / 2.0;
        let _ = ctx.fill_text(&text, (x + 0.5).clamp(half + 1.0, f.w - half - 1.0), bottom + if style.grid { 4.0 } else { 6.0 });
    }
}

/// A y axis beside `f`'s plot (left, or right with `style.right`); `label(value, step)` writes a
/// tick's label.
pub fn y_axis(ctx: &Ctx, f: &Frame, p: &Palette, style: Style, label: impl Fn(f64, f64) -> String) {
    ctx.set_font(&font(LABEL_PX));
    let (v, plot_h) = (f.v, f.plot_h());
    let min = if style.integer { 1.0 } else { 0.0 };
    let mut step = style.step.unwrap_or_else(|| nice((v.height() / (plot_h / Y_TICK_PX).max(2.0).floor()).max(min), style.binary));
    while step / v.height() * plot_h < Y_LABEL_PX && step < v.height() {
        step = nice(step * 1.01, style.binary);
    }
    ctx.set_text_align(if style.right { "left" } else { "right" });
    ctx.set_text_baseline("middle");
    let (left, right) = (f.plot_left(), f.plot_right());
    for t in ticks(v.y0, v.y1, step) {
        let y = f.sy(t).round();
        if style.grid {
            ctx.set_fill_style_str(&p.border);
            ctx.fill_rect(left, y, right - left, 1.0);
        }
        ctx.set_fill_style_str(style.colour.unwrap_or(&p.fg_2));
        let _ = ctx.fill_text(&label(t, step), if style.right { right + 6.0 } else { left - 6.0 }, y + 0.5);
    }
}
