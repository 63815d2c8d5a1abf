//! The step-time graph: one bar per step, stacked by XProf's categories (host compute, input, all
//! others, ...), the hovered and the selected step marked. Steps are slots of width 1 on the x axis
//! (step `i` spans `i - 0.5 .. i + 0.5`); y is milliseconds. Canvas 2D in CSS pixels on a context from
//! [`super::prepare`].

use super::axis::{decimals, nice, x_axis, y_axis, Style};
use super::viewport::{Frame, Margins, Viewport};
use super::Palette;
use web_sys::CanvasRenderingContext2d as Ctx;

/// Room for the axes around the plot, in CSS pixels.
const MARGINS: Margins = Margins { left: 64.0, right: 12.0, top: 10.0, bottom: 24.0 };
/// Share of a step's slot its bar fills.
const BAR_FILL: f64 = 0.78;
/// Y ticks wanted on the plot.
const Y_TICKS: f64 = 5.0;

/// Colours of the stacks, by XProf's column id: mid-tone hues that read on both themes (the Overview and
/// the Input Pipeline draw the same category in the same colour).
pub fn category_color(id: &str) -> &'static str {
    match id {
        "deviceComputeTimeMs" => "#59a14f",
        "deviceToDeviceTimeMs" => "#b07aa1",
        "deviceCollectivesTimeMs" => "#9c755f",
        "hostComputeTimeMs" => "#4e79a7",
        "kernelLaunchTimeMs" => "#edc948",
        "infeedTimeMs" => "#f28e2b",
        "outfeedTimeMs" => "#ff9da7",
        "compileTimeMs" => "#76b7b2",
        _ => "#8c8c8c",
    }
}

/// The y axis's top for steps up to `max_ms` long: a whole number of round steps.
fn y_top(max_ms: f64) -> f64 {
    let step = nice((max_ms / Y_TICKS).max(f64::MIN_POSITIVE), false);
    ((max_ms / step).ceil() * step).max(step)
}

/// The graph's frame: a canvas `width` × `height` CSS px showing `steps` steps up to `max_ms`.
pub fn frame(width: f64, height: f64, steps: usize, max_ms: f64) -> Frame {
    Frame { v: Viewport { x0: -0.5, x1: steps.max(1) as f64 - 0.5, y0: 0.0, y1: y_top(max_ms) }, w: width, h: height, m: MARGINS }
}

/// The step under pixel column `x` (anywhere in its slot), if the pointer is over the plot.
pub fn step_at(f: &Frame, x: f64, y: f64, steps: usize) -> Option<usize> {
    if !f.in_plot(x, y) {
        return None;
    }
    let i = f.dx(x).round();
    (i >= 0.0 && (i as usize) < steps).then_some(i as usize)
}

/// Everything one frame shows.
pub struct Scene<'a> {
    /// Step labels (XProf's `stepnum`, e.g. `train 7`).
    pub names: &'a [String],
    /// Each stack: its colour and each step's time in it, bottom first.
    pub stacks: Vec<(&'static str, &'a [f64])>,
    pub hover: Option<usize>,
    pub selected: Option<usize>,
}

pub fn draw(ctx: &Ctx, f: &Frame, s: &Scene, p: &Palette) {
    y_axis(ctx, f, p, Style { grid: true, ..Style::default() }, |v, step| format!("{v:.*} ms", decimals(step)));
    let names = s.names;
    x_axis(ctx, f, p, Style { integer: true, ..Style::default() }, |v, _| {
        names.get(v.round().max(0.0) as usize).map(|n| n.rsplit(' ').next().unwrap_or(n).to_string()).unwrap_or_default()
    });
    let slot_px = f.plot_w() / f.v.width();
    let bar_w = (slot_px * BAR_FILL).max(1.0);
    let base = f.plot_bottom();
    // Marks under the bars: the hovered step's slot, then the selected one's.
    for (i, colour) in [(s.hover, p.bg_3.as_str()), (s.selected, p.border.as_str())] {
        if let Some(i) = i {
            ctx.set_fill_style_str(colour);
            ctx.fill_rect(f.sx(i as f64 - 0.5), f.plot_top(), slot_px, base - f.plot_top());
        }
    }
    for i in 0..names.len() {
        let x = f.sx(i as f64) - bar_w / 2.0;
        let mut below_ms = 0.0;
        for (colour, ms) in &s.stacks {
            let v = ms.get(i).copied().unwrap_or(0.0);
            if v <= 0.0 {
                continue;
            }
            let (y0, y1) = (f.sy(below_ms), f.sy(below_ms + v));
            ctx.set_fill_style_str(colour);
            ctx.fill_rect(x, y1, bar_w, (y0 - y1).max(0.5));
            below_ms += v;
        }
    }
    if let Some(i) = s.selected {
        ctx.set_stroke_style_str(&p.accent);
        ctx.set_line_width(2.0);
        ctx.stroke_rect(f.sx(i as f64 - 0.5) + 1.0, f.plot_top() + 1.0, slot_px - 2.0, base - f.plot_top() - 2.0);
    }
}
