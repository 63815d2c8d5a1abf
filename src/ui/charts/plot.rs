//! Shared plot frame of the Memory Viewer's charts: margins, axes and group colours. Canvas sizing,
//! theme colours and tick steps are the ones every chart uses (`super`).

use super::{font, nice, now_ms, observe_width, ticks, Palette};
use crate::ui::state::AppState;
use leptos::prelude::*;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

/// Left and bottom margins of the plot area in CSS pixels. The working-space chart and the block
/// timeline share them, so their x axes line up when they share a viewport.
pub const LEFT: f64 = 72.0;
pub const BOTTOM: f64 = 20.0;
pub const TOP: f64 = 8.0;
pub const RIGHT: f64 = 12.0;

/// What part of a chart is shown, in data units: program steps (x) and heap bytes (y). The block
/// timeline's viewport; the working-space chart follows its x range.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Viewport {
    pub x0: f64,
    pub x1: f64,
    pub y0: f64,
    pub y1: f64,
}

/// Screen mapping of a viewport onto a canvas of `w` × `h` CSS px, inside the margins above.
#[derive(Clone, Copy)]
pub struct Frame {
    pub v: Viewport,
    pub w: f64,
    pub h: f64,
}

impl Frame {
    /// `canvas`'s current CSS box showing `v`.
    pub fn of(canvas: &HtmlCanvasElement, v: Viewport) -> Frame {
        Frame { v, w: f64::from(canvas.client_width()), h: f64::from(canvas.client_height()) }
    }
    pub fn plot_w(&self) -> f64 {
        self.w - LEFT - RIGHT
    }
    pub fn plot_h(&self) -> f64 {
        self.h - TOP - BOTTOM
    }
    pub fn sx(&self, x: f64) -> f64 {
        LEFT + (x - self.v.x0) / (self.v.x1 - self.v.x0) * self.plot_w()
    }
    pub fn sy(&self, y: f64) -> f64 {
        TOP + self.plot_h() - (y - self.v.y0) / (self.v.y1 - self.v.y0) * self.plot_h()
    }
    pub fn dx(&self, px: f64) -> f64 {
        self.v.x0 + (px - LEFT) / self.plot_w() * (self.v.x1 - self.v.x0)
    }
    pub fn dy(&self, py: f64) -> f64 {
        self.v.y0 + (TOP + self.plot_h() - py) / self.plot_h() * (self.v.y1 - self.v.y0)
    }
}

/// Redraws a chart with `draw` whenever a signal `draw` reads changes, the theme switches (colours
/// come from CSS) or the canvas's width changes (it follows its CSS box), and records how long the
/// frame took in `data-draw-ms` for the page's timings and the tests. `draw` answers whether it drew.
pub fn redraw(canvas: NodeRef<leptos::html::Canvas>, draw: impl Fn(&HtmlCanvasElement) -> bool + 'static) {
    let state = expect_context::<AppState>();
    let width = RwSignal::new(0.0f64);
    Effect::new(move |_| {
        if let Some(c) = canvas.get() {
            observe_width(&c, move |w| {
                if width.get_untracked() != w {
                    width.set(w);
                }
            });
        }
    });
    Effect::new(move |_| {
        state.theme.track();
        width.track();
        let Some(c) = canvas.get() else { return };
        let start = now_ms();
        if draw(&c) {
            let _ = c.set_attribute("data-draw-ms", &format!("{:.3}", now_ms() - start));
        }
    });
}

/// The colour of an allocation group (XProf's category names), the same in every chart and legend.
/// Mid-tone hues that read on both themes; `shade` 0–2 varies lightness so neighbouring blocks of one
/// group stay apart.
pub fn group_color(group: &str, shade: usize) -> &'static str {
    const COLORS: [[&str; 3]; 6] = [
        ["#4e79a7", "#6b93c0", "#3b6390"], // Temporary
        ["#f28e2b", "#f6a85a", "#d9761a"], // Parameter
        ["#59a14f", "#76b96c", "#45873c"], // Output
        ["#b07aa1", "#c495b7", "#956386"], // Thread-local
        ["#9c755f", "#b38f7a", "#82604c"], // Constant
        ["#76b7b2", "#93cbc6", "#5c9c97"], // anything else
    ];
    COLORS[group_index(group)][shade % 3]
}

/// The groups in legend order.
pub const GROUPS: [&str; 5] = ["Temporary", "Parameter", "Output", "Thread-local", "Constant"];

pub fn group_index(group: &str) -> usize {
    GROUPS.iter().position(|g| *g == group).unwrap_or(GROUPS.len())
}

/// A compact byte label for an axis: `512 B`, `1.5 MiB`.
pub fn axis_bytes(v: f64) -> String {
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

/// Draws the x axis (program order, integer steps) under a plot of width `w` and height `h`.
pub fn x_axis(ctx: &CanvasRenderingContext2d, p: &Palette, x0: f64, x1: f64, w: f64, h: f64) {
    let plot_w = w - LEFT - RIGHT;
    ctx.set_fill_style_str(&p.fg_2);
    ctx.set_text_align("center");
    ctx.set_text_baseline("top");
    ctx.set_font(&font(11));
    for t in ticks(x0, x1, nice((x1 - x0) / (plot_w / 90.0).max(2.0).floor(), false)) {
        if t.fract() != 0.0 {
            continue;
        }
        let x = LEFT + (t - x0) / (x1 - x0) * plot_w;
        ctx.set_fill_style_str(&p.border);
        ctx.fill_rect(x, TOP, 1.0, h - TOP - BOTTOM);
        ctx.set_fill_style_str(&p.fg_2);
        let label = crate::units::count(t as u64);
        // Keep the end labels inside the canvas.
        let half = ctx.measure_text(&label).map_or(0.0, |m| m.width() / 2.0);
        let _ = ctx.fill_text(&label, x.clamp(half + 1.0, w - half - 1.0), h - BOTTOM + 4.0);
    }
}

/// Draws the y axis (bytes) beside a plot of height `h`, `y0` at the bottom.
pub fn y_axis(ctx: &CanvasRenderingContext2d, p: &Palette, y0: f64, y1: f64, w: f64, h: f64) {
    let plot_h = h - TOP - BOTTOM;
    ctx.set_text_align("right");
    ctx.set_text_baseline("middle");
    ctx.set_font(&font(11));
    for t in ticks(y0, y1, nice((y1 - y0) / (plot_h / 40.0).max(2.0).floor(), true)) {
        let y = TOP + plot_h - (t - y0) / (y1 - y0) * plot_h;
        ctx.set_fill_style_str(&p.border);
        ctx.fill_rect(LEFT, y.round(), w - LEFT - RIGHT, 1.0);
        ctx.set_fill_style_str(&p.fg_2);
        let _ = ctx.fill_text(&axis_bytes(t), LEFT - 6.0, y);
    }
}
