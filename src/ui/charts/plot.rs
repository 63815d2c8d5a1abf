//! Shared plot frame of the Memory Viewer's charts: margins, axes, group colours; sizes a canvas for
//! the device pixel ratio and reads the theme's colours.


use wasm_bindgen::JsCast;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

/// Left and bottom margins of the plot area in CSS pixels. The working-space chart and the block
/// timeline share them, so their x axes line up when they share a viewport.
pub const LEFT: f64 = 72.0;
pub const BOTTOM: f64 = 20.0;
pub const TOP: f64 = 8.0;
pub const RIGHT: f64 = 12.0;

/// Sizes `canvas` to its CSS box times the device pixel ratio and returns its context, scaled so that
/// drawing is in CSS pixels, with the CSS width and height.
pub fn prepare(canvas: &HtmlCanvasElement) -> Option<(CanvasRenderingContext2d, f64, f64)> {
    let dpr = web_sys::window().map_or(1.0, |w| w.device_pixel_ratio()).max(1.0);
    let (w, h) = (f64::from(canvas.client_width()), f64::from(canvas.client_height()));
    if w <= 0.0 || h <= 0.0 {
        return None;
    }
    let (pw, ph) = ((w * dpr).round() as u32, (h * dpr).round() as u32);
    if canvas.width() != pw || canvas.height() != ph {
        canvas.set_width(pw);
        canvas.set_height(ph);
    }
    let ctx: CanvasRenderingContext2d = canvas.get_context("2d").ok().flatten()?.dyn_into().ok()?;
    let _ = ctx.set_transform(dpr, 0.0, 0.0, dpr, 0.0, 0.0);
    ctx.clear_rect(0.0, 0.0, w, h);
    Some((ctx, w, h))
}

/// The theme's colours, read from the page's CSS variables so the charts follow light and dark.
#[derive(Clone)]
pub struct Palette {
    pub fg: String,
    pub fg2: String,
    pub border: String,
    pub bg: String,
    pub bg2: String,
    pub accent: String,
    pub peak: String,
}

impl Palette {
    pub fn read() -> Palette {
        let style = web_sys::window()
            .and_then(|w| w.document().and_then(|d| d.document_element()).and_then(|e| w.get_computed_style(&e).ok().flatten()));
        let var = |name: &str, fallback: &str| {
            style
                .as_ref()
                .and_then(|s| s.get_property_value(name).ok())
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
                .unwrap_or_else(|| fallback.to_string())
        };
        Palette {
            fg: var("--fg", "#1f2328"),
            fg2: var("--fg-2", "#57606a"),
            border: var("--border", "#d8dce2"),
            bg: var("--bg", "#ffffff"),
            bg2: var("--bg-2", "#f6f7f9"),
            accent: var("--accent", "#1a73e8"),
            peak: var("--peak", "#d93025"),
        }
    }
}

/// Milliseconds since the page started, for frame timings.
pub fn now_ms() -> f64 {
    web_sys::window().and_then(|w| w.performance()).map_or(0.0, |p| p.now())
}

/// About `target` round tick values covering `[lo, hi]`: 1, 2 or 5 times a power of ten for steps
/// (`binary` false), powers of two for bytes (`binary` true: 1, 2, 4 ... KiB).
pub fn ticks(lo: f64, hi: f64, target: usize, binary: bool) -> Vec<f64> {
    let span = hi - lo;
    if !(span.is_finite() && span > 0.0) || target == 0 {
        return Vec::new();
    }
    let raw = span / target as f64;
    let (base, mults): (f64, &[f64]) = if binary { (2.0, &[1.0, 2.0]) } else { (10.0, &[1.0, 2.0, 5.0, 10.0]) };
    let unit = base.powf(raw.log(base).floor());
    let step = mults.iter().map(|m| unit * m).find(|s| *s >= raw).unwrap_or(unit * base);
    let first = (lo / step).ceil() * step;
    (0..=target * 3).map(|i| first + i as f64 * step).take_while(|v| *v <= hi + step * 1e-9).collect()
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
    ctx.set_fill_style_str(&p.fg2);
    ctx.set_text_align("center");
    ctx.set_text_baseline("top");
    ctx.set_font("11px system-ui, sans-serif");
    for t in ticks(x0, x1, (plot_w / 90.0).max(2.0) as usize, false) {
        if t.fract() != 0.0 {
            continue;
        }
        let x = LEFT + (t - x0) / (x1 - x0) * plot_w;
        ctx.set_fill_style_str(&p.border);
        ctx.fill_rect(x, TOP, 1.0, h - TOP - BOTTOM);
        ctx.set_fill_style_str(&p.fg2);
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
    ctx.set_font("11px system-ui, sans-serif");
    for t in ticks(y0, y1, (plot_h / 40.0).max(2.0) as usize, true) {
        let y = TOP + plot_h - (t - y0) / (y1 - y0) * plot_h;
        ctx.set_fill_style_str(&p.border);
        ctx.fill_rect(LEFT, y.round(), w - LEFT - RIGHT, 1.0);
        ctx.set_fill_style_str(&p.fg2);
        let _ = ctx.fill_text(&axis_bytes(t), LEFT - 6.0, y);
    }
}
