//! Canvas charts. They draw what the engine answered and nothing else; the shared pieces here keep
//! every chart sharp on high-DPI screens, sized to its container and in the page's theme colours.
//! Every chart maps data to pixels through [`viewport`] and labels its axes with [`axis`].

pub mod axis;
pub mod block_timeline;
pub mod figure_list;
pub mod flame;
pub mod pan_zoom;
pub mod pie;
pub mod plot;
pub mod sparkline;
pub mod step_chart;
pub mod timeline;
pub mod trace;
pub mod viewport;
pub mod working_space;

use wasm_bindgen::JsCast;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

/// Sizes `canvas`'s backing store to `css_w × css_h` CSS pixels at the screen's pixel ratio, fixes
/// its CSS height to match, and returns its 2D context scaled so drawing code works in CSS pixels.
/// For charts whose height the chart decides (a flame graph grows with its depth).
pub fn prepare(canvas: &HtmlCanvasElement, css_w: f64, css_h: f64) -> Option<CanvasRenderingContext2d> {
    let _ = canvas.style().set_property("height", &format!("{css_h}px"));
    backing(canvas, css_w, css_h)
}

/// Like [`prepare`] for a canvas the stylesheet sizes: takes its current CSS box as the size and
/// returns the context with that width and height; `None` while the canvas has no box (hidden).
pub fn prepare_fit(canvas: &HtmlCanvasElement) -> Option<(CanvasRenderingContext2d, f64, f64)> {
    let (w, h) = (f64::from(canvas.client_width()), f64::from(canvas.client_height()));
    if w <= 0.0 || h <= 0.0 {
        return None;
    }
    Some((backing(canvas, w, h)?, w, h))
}

/// The one place that knows devicePixelRatio: a backing store of `css × dpr` device pixels (resized
/// only when it changed, as resizing clears it), a transform to CSS pixels, and a cleared surface.
fn backing(canvas: &HtmlCanvasElement, css_w: f64, css_h: f64) -> Option<CanvasRenderingContext2d> {
    let dpr = web_sys::window().map_or(1.0, |w| w.device_pixel_ratio()).max(1.0);
    let (w, h) = ((css_w * dpr).round().max(1.0) as u32, (css_h * dpr).round().max(1.0) as u32);
    if canvas.width() != w {
        canvas.set_width(w);
    }
    if canvas.height() != h {
        canvas.set_height(h);
    }
    let ctx: CanvasRenderingContext2d = canvas.get_context("2d").ok().flatten()?.dyn_into().ok()?;
    let _ = ctx.set_transform(dpr, 0.0, 0.0, dpr, 0.0, 0.0);
    ctx.clear_rect(0.0, 0.0, css_w, css_h);
    Some(ctx)
}

/// The theme's colours as the stylesheet defines them (`--fg`, `--accent`, ...), read from the
/// document so every chart follows the light/dark switch without a palette of its own. The colours
/// most charts use are fields; a chart's own (`--peak`, `--chart-frag`) come from [`Palette::var`].
pub struct Palette {
    style: Option<web_sys::CssStyleDeclaration>,
    pub fg: String,
    pub fg_2: String,
    pub bg: String,
    pub bg_3: String,
    pub border: String,
    pub accent: String,
    pub dark: bool,
}

impl Palette {
    pub fn read() -> Palette {
        let root = web_sys::window().and_then(|w| w.document()).and_then(|d| d.document_element());
        let style = root.as_ref().and_then(|r| web_sys::window()?.get_computed_style(r).ok().flatten());
        let dark = root.and_then(|r| r.get_attribute("data-theme")).as_deref() == Some("dark");
        let mut p = Palette {
            style,
            fg: String::new(),
            fg_2: String::new(),
            bg: String::new(),
            bg_3: String::new(),
            border: String::new(),
            accent: String::new(),
            dark,
        };
        (p.fg, p.fg_2, p.bg, p.bg_3, p.border, p.accent) =
            (p.var("--fg"), p.var("--fg-2"), p.var("--bg"), p.var("--bg-3"), p.var("--border"), p.var("--accent"));
        p
    }

    /// The value of CSS variable `name` (e.g. `--accent`); the text colour if it is not defined.
    pub fn var(&self, name: &str) -> String {
        self.style
            .as_ref()
            .and_then(|s| s.get_property_value(name).ok())
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| if self.dark { "#e3e5e8".into() } else { "#1f2328".into() })
    }
}

/// `canvas`'s current CSS box showing `v` inside margins `m`.
pub fn frame_of(canvas: &HtmlCanvasElement, v: viewport::Viewport, m: viewport::Margins) -> viewport::Frame {
    viewport::Frame { v, w: f64::from(canvas.client_width()), h: f64::from(canvas.client_height()), m }
}

/// Keeps `value` as what the next animation frame draws with `draw`, and asks for that frame unless
/// it is asked for already: a later value replaces an earlier one, so each frame draws once, with
/// the latest.
pub fn draw_next_frame<T: 'static>(next: &std::rc::Rc<std::cell::RefCell<Option<T>>>, value: T, draw: impl FnOnce(T) + 'static) {
    if next.borrow_mut().replace(value).is_none() {
        let next = next.clone();
        leptos::prelude::request_animation_frame(move || {
            if let Some(value) = next.borrow_mut().take() {
                draw(value);
            }
        });
    }
}

/// Milliseconds since the page started, for load and frame timings.
pub fn now_ms() -> f64 {
    web_sys::window().and_then(|w| w.performance()).map_or(0.0, |p| p.now())
}

/// The CSS font of chart labels: the page's sans-serif at `px`.
pub fn font(px: u32) -> String {
    format!("{px}px system-ui, -apple-system, \"Segoe UI\", Roboto, Arial, sans-serif")
}

/// `text` cut with an ellipsis to fit `max_w` CSS pixels in `ctx`'s font; `None` when not even one
/// character and the ellipsis fit.
pub fn fit_text(ctx: &CanvasRenderingContext2d, text: &str, max_w: f64) -> Option<String> {
    let width = |s: &str| ctx.measure_text(s).map_or(f64::INFINITY, |m| m.width());
    if width(text) <= max_w {
        return Some(text.to_string());
    }
    let chars: Vec<char> = text.chars().collect();
    // Binary search the longest prefix that fits with the ellipsis.
    let (mut lo, mut hi) = (0usize, chars.len());
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        let s: String = chars[..mid].iter().collect::<String>() + "…";
        if width(&s) <= max_w {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    (lo > 0).then(|| chars[..lo].iter().collect::<String>() + "…")
}

type Observer = (web_sys::ResizeObserver, wasm_bindgen::closure::Closure<dyn FnMut(js_sys::Array)>);

thread_local! {
    /// Live resize observers by id. Cleanup closures must be `Send`, so they carry the id only.
    static OBSERVERS: std::cell::RefCell<(u64, std::collections::HashMap<u64, Observer>)> = Default::default();
}

/// Watches `el`'s content width and calls `on_width` with it (now and on every resize), until the
/// current reactive owner (the chart's view) is cleaned up.
pub fn observe_width(el: &web_sys::Element, on_width: impl Fn(f64) + 'static) {
    let cb = wasm_bindgen::closure::Closure::<dyn FnMut(js_sys::Array)>::new(move |entries: js_sys::Array| {
        if let Some(e) = entries.get(0).dyn_ref::<web_sys::ResizeObserverEntry>() {
            on_width(e.content_rect().width());
        }
    });
    let Ok(obs) = web_sys::ResizeObserver::new(cb.as_ref().unchecked_ref()) else { return };
    obs.observe(el);
    let id = OBSERVERS.with(|o| {
        let (next, map) = &mut *o.borrow_mut();
        *next += 1;
        map.insert(*next, (obs, cb));
        *next
    });
    leptos::prelude::on_cleanup(move || {
        if let Some((obs, _cb)) = OBSERVERS.with(|o| o.borrow_mut().1.remove(&id)) {
            obs.disconnect();
        }
    });
}
