//! The one viewport of every chart: the data window shown ([`Viewport`]), its mapping to the pixels
//! of a canvas inside the axes' margins ([`Frame`]), and the zoom and pan maths that the wheel, a drag
//! and the keys (W/S zoom, A/D pan, 0 or Esc resets) share, so every chart moves the same way.
//! Plain maths with no web dependency (`tests/ui_geometry.rs` runs it natively).

/// Room around the plot for the axes, in CSS pixels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Margins {
    pub left: f64,
    pub right: f64,
    pub top: f64,
    pub bottom: f64,
}

impl Margins {
    /// No axes: the plot is the whole canvas.
    pub const NONE: Margins = Margins { left: 0.0, right: 0.0, top: 0.0, bottom: 0.0 };
}

/// The data window a chart shows: x from `x0` (left) to `x1`, y from `y0` (bottom) to `y1`, in the
/// chart's own units (program steps, bytes, picoseconds).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Viewport {
    pub x0: f64,
    pub x1: f64,
    pub y0: f64,
    pub y1: f64,
}

/// Zoom factor of one W or S press, and the share of the window one A or D press moves it.
const KEY_ZOOM: f64 = 0.75;
const KEY_PAN: f64 = 0.2;
/// Wheel zoom per unit of `deltaY` (exponential, so trackpads zoom smoothly and a notch of 100 is ×1.22).
const WHEEL_ZOOM_PER_DELTA: f64 = 0.002;

/// What a key asks of a chart.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum KeyNav {
    /// Scale the window around its centre by this factor (< 1 zooms in).
    Zoom(f64),
    /// Move the window by this share of its width (x) or height (y); positive is right or up.
    PanX(f64),
    PanY(f64),
    /// Back to the whole extent.
    Reset,
}

/// The chart keys: W/S or +/- zoom, A/D or ←/→ pan, ↑/↓ pan vertically, 0 or Esc reset.
pub fn key_nav(key: &str) -> Option<KeyNav> {
    Some(match key {
        "w" | "W" | "+" | "=" => KeyNav::Zoom(KEY_ZOOM),
        "s" | "S" | "-" | "_" => KeyNav::Zoom(1.0 / KEY_ZOOM),
        "a" | "A" | "ArrowLeft" => KeyNav::PanX(-KEY_PAN),
        "d" | "D" | "ArrowRight" => KeyNav::PanX(KEY_PAN),
        "ArrowUp" => KeyNav::PanY(KEY_PAN),
        "ArrowDown" => KeyNav::PanY(-KEY_PAN),
        "0" | "Escape" => KeyNav::Reset,
        _ => return None,
    })
}

/// The zoom factor of a wheel turn of `delta_y` (negative zooms in).
fn wheel_zoom(delta_y: f64) -> f64 {
    (delta_y * WHEEL_ZOOM_PER_DELTA).exp()
}

impl Viewport {
    /// An x range alone, for charts whose y range follows the data (y is 0..1 until set).
    pub fn x_range(x0: f64, x1: f64) -> Viewport {
        Viewport { x0, x1, y0: 0.0, y1: 1.0 }
    }

    pub fn width(&self) -> f64 {
        self.x1 - self.x0
    }

    pub fn height(&self) -> f64 {
        self.y1 - self.y0
    }

    /// Scaled by `kx` horizontally and `ky` vertically around the data point (`x`, `y`), which stays
    /// where it is on screen; factors below 1 zoom in.
    pub fn zoom(self, x: f64, y: f64, kx: f64, ky: f64) -> Viewport {
        Viewport { x0: x - (x - self.x0) * kx, x1: x + (self.x1 - x) * kx, y0: y - (y - self.y0) * ky, y1: y + (self.y1 - y) * ky }
    }

    /// Moved by `dx`, `dy` data units.
    pub fn shift(self, dx: f64, dy: f64) -> Viewport {
        Viewport { x0: self.x0 + dx, x1: self.x1 + dx, y0: self.y0 + dy, y1: self.y1 + dy }
    }

    /// What key `nav` makes of this window (`zoom_y`: whether W/S zoom vertically too); `full` is the
    /// whole extent, which Reset returns to. Not yet clamped: see [`Viewport::within`].
    pub fn key(self, nav: KeyNav, full: Viewport, zoom_y: bool) -> Viewport {
        let (cx, cy) = ((self.x0 + self.x1) / 2.0, (self.y0 + self.y1) / 2.0);
        match nav {
            KeyNav::Zoom(k) => self.zoom(cx, cy, k, if zoom_y { k } else { 1.0 }),
            KeyNav::PanX(f) => self.shift(self.width() * f, 0.0),
            KeyNav::PanY(f) => self.shift(0.0, self.height() * f),
            KeyNav::Reset => full,
        }
    }

    /// This window moved and shrunk to lie inside `full`, and widened to at least `min_w` × `min_h`
    /// (as far as `full` allows), so no zoom or pan leaves the data or narrows to nothing.
    pub fn within(self, full: Viewport, min_w: f64, min_h: f64) -> Viewport {
        let fit = |a: f64, b: f64, lo: f64, hi: f64, min: f64| {
            let w = (b - a).clamp(min.min(hi - lo), hi - lo);
            let a = a.clamp(lo, hi - w);
            (a, a + w)
        };
        let (x0, x1) = fit(self.x0, self.x1, full.x0, full.x1, min_w);
        let (y0, y1) = fit(self.y0, self.y1, full.y0, full.y1, min_h);
        Viewport { x0, x1, y0, y1 }
    }
}

/// A viewport drawn on a canvas of `w` × `h` CSS pixels with margins `m`: maps data to pixels and
/// back.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Frame {
    pub v: Viewport,
    pub w: f64,
    pub h: f64,
    pub m: Margins,
}

impl Frame {
    pub fn plot_left(&self) -> f64 {
        self.m.left
    }
    pub fn plot_right(&self) -> f64 {
        (self.w - self.m.right).max(self.m.left + 1.0)
    }
    pub fn plot_top(&self) -> f64 {
        self.m.top
    }
    pub fn plot_bottom(&self) -> f64 {
        (self.h - self.m.bottom).max(self.m.top + 1.0)
    }
    pub fn plot_w(&self) -> f64 {
        self.plot_right() - self.plot_left()
    }
    pub fn plot_h(&self) -> f64 {
        self.plot_bottom() - self.plot_top()
    }
    /// The same frame showing `v`.
    pub fn with(self, v: Viewport) -> Frame {
        Frame { v, ..self }
    }
    /// Pixel column of data x.
    pub fn sx(&self, x: f64) -> f64 {
        self.plot_left() + (x - self.v.x0) / self.v.width() * self.plot_w()
    }
    /// Pixel row of data y (y grows upwards).
    pub fn sy(&self, y: f64) -> f64 {
        self.plot_bottom() - (y - self.v.y0) / self.v.height() * self.plot_h()
    }
    /// Data x under pixel column `px`.
    pub fn dx(&self, px: f64) -> f64 {
        self.v.x0 + (px - self.plot_left()) / self.plot_w() * self.v.width()
    }
    /// Data y under pixel row `py`.
    pub fn dy(&self, py: f64) -> f64 {
        self.v.y0 + (self.plot_bottom() - py) / self.plot_h() * self.v.height()
    }
    /// Data units per pixel, horizontally and vertically.
    pub fn per_px(&self) -> (f64, f64) {
        (self.v.width() / self.plot_w(), self.v.height() / self.plot_h())
    }
    pub fn in_plot(&self, px: f64, py: f64) -> bool {
        (self.plot_left()..=self.plot_right()).contains(&px) && (self.plot_top()..=self.plot_bottom()).contains(&py)
    }
    /// The window after a wheel turn of `delta_y` with the pointer at (`px`, `py`): zoomed around the
    /// data under the pointer, in x when `zx` and in y when `zy`.
    pub fn wheel(&self, px: f64, py: f64, delta_y: f64, zx: bool, zy: bool) -> Viewport {
        let k = wheel_zoom(delta_y);
        self.v.zoom(self.dx(px), self.dy(py), if zx { k } else { 1.0 }, if zy { k } else { 1.0 })
    }
    /// The window `start` moved so the point grabbed follows the pointer `dpx`, `dpy` pixels away.
    pub fn drag(&self, start: Viewport, dpx: f64, dpy: f64) -> Viewport {
        let (kx, ky) = (start.width() / self.plot_w(), start.height() / self.plot_h());
        start.shift(-dpx * kx, dpy * ky)
    }
}
