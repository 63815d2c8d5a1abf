//! The Trace Viewer's tracks: every thread's spans (as the engine's level-of-detail query merged them)
//! on one canvas, one row per nesting depth, coloured by name, labelled where a label fits; the range
//! selection shaded; and the hit test that maps a click back to the span under it. Canvas 2D in CSS
//! pixels on a context from [`super::prepare_fit`]; x through the shared [`Frame`].

use super::viewport::Frame;
use super::{font, Palette};
use crate::analysis::trace_viewer::lod::{LodReply, MIXED_NAMES};
use web_sys::CanvasRenderingContext2d as Ctx;

/// Height of one depth of a thread, and the room above and below a thread's depths, in CSS px.
pub const SPAN_H: f64 = 16.0;
pub const LANE_PAD: f64 = 3.0;
/// A span this wide or wider gets its name written in it.
const LABEL_MIN_PX: f64 = 28.0;
const LABEL_PX: u32 = 11;

/// Where one thread is drawn: its index (as the engine numbers threads) and its rows, `y` from the
/// top of all tracks (not of the canvas, which shows them from the scroll offset down).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Lane {
    pub thread: u32,
    pub y: f64,
    pub h: f64,
}

impl Lane {
    /// The top of depth `depth`'s row.
    fn depth_y(&self, depth: u16) -> f64 {
        self.y + LANE_PAD + f64::from(depth) * SPAN_H
    }
}

/// A lane's height for a thread of `depth_count` nesting depths (an empty thread keeps one row).
pub fn lane_height(depth_count: u16) -> f64 {
    f64::from(depth_count.max(1)) * SPAN_H + 2.0 * LANE_PAD
}

/// Everything one frame shows.
pub struct Scene<'a> {
    pub lanes: &'a [Lane],
    /// `lane_of[thread]`: the thread's lane, if shown.
    pub lane_of: &'a [Option<usize>],
    pub spans: &'a LodReply,
    pub names: &'a [String],
    /// How far the tracks are scrolled, in CSS px.
    pub scroll_top: f64,
    pub selected_event: Option<u32>,
    /// The range selection, in ps, and one being dragged, in px.
    pub range_ps: Option<(i64, i64)>,
    pub drag_px: Option<(f64, f64)>,
}

/// A stable colour for an event name: a hash of the name picks the hue; lightness suits the theme
/// (light fills under dark text, dark fills under light text).
pub fn name_colour(name: &str, dark: bool) -> String {
    // FNV-1a: the same name has the same colour on every load and machine.
    let hash = name.bytes().fold(0x811c_9dc5u32, |h, b| (h ^ u32::from(b)).wrapping_mul(0x0100_0193));
    let hue = hash % 360;
    let sat = 45 + (hash >> 9) % 25;
    if dark {
        format!("hsl({hue} {sat}% {}%)", 30 + (hash >> 17) % 10)
    } else {
        format!("hsl({hue} {sat}% {}%)", 70 + (hash >> 17) % 10)
    }
}

/// Label widths measured once per name: measuring is a call out of wasm that shapes the text, so a
/// label that fits is drawn without one, and one cut short is measured once or twice (see
/// [`TextWidths::fit`]). Kept by the view for as long as its names.
#[derive(Debug, Default)]
pub struct TextWidths {
    /// `name_px[name id]`, measured on first use.
    name_px: Vec<Option<f64>>,
    /// The width of one digit (tabular in the label font), of " ×", of " events" and of "…".
    digit_px: f64,
    times_px: f64,
    events_px: f64,
    ellipsis_px: f64,
}

impl TextWidths {
    fn measure(ctx: &Ctx, text: &str) -> f64 {
        ctx.measure_text(text).map_or(f64::INFINITY, |m| m.width())
    }

    /// Makes ready to measure labels in `ctx`'s font for `names`.
    fn prepare(&mut self, ctx: &Ctx, names: usize) {
        if self.name_px.len() != names {
            *self = TextWidths {
                name_px: vec![None; names],
                digit_px: Self::measure(ctx, "0123456789") / 10.0,
                times_px: Self::measure(ctx, " ×"),
                events_px: Self::measure(ctx, " events"),
                ellipsis_px: Self::measure(ctx, "…"),
            };
        }
    }

    /// The label of a span of `count` events named `name` (id `id`; `None` for mixed names), cut
    /// with an ellipsis to fit `max_w` px; `None` when not even one character does.
    fn fit(&mut self, ctx: &Ctx, id: u32, name: Option<&str>, count: u32, max_w: f64) -> Option<String> {
        let digits = count.to_string();
        let digits_px = digits.len() as f64 * self.digit_px;
        let (label, width) = match name {
            Some(n) => {
                let name_px = *self.name_px[id as usize].get_or_insert_with(|| Self::measure(ctx, n));
                match count {
                    1 => (n.to_string(), name_px),
                    _ => (format!("{n} ×{digits}"), name_px + self.times_px + digits_px),
                }
            }
            None => (format!("{digits} events"), digits_px + self.events_px),
        };
        if width <= max_w {
            return Some(label);
        }
        // Cut where the average character width says the text fits, then shorten until it does.
        let chars: Vec<char> = label.chars().collect();
        let mut keep = ((chars.len() as f64 * (max_w - self.ellipsis_px) / width).floor().max(0.0) as usize).min(chars.len() - 1);
        while keep > 0 {
            let cut: String = chars[..keep].iter().chain(['…'].iter()).collect();
            let cut_px = Self::measure(ctx, &cut);
            if cut_px <= max_w {
                return Some(cut);
            }
            let shorter = (keep as f64 * max_w / cut_px).floor() as usize;
            keep = shorter.min(keep - 1);
        }
        None
    }
}

/// Draws `scene` and returns how many spans were drawn (those on screen). The spans are filled a
/// colour at a time (one fill style per name on screen: setting a colour passes its string out of
/// wasm), then labelled. (One path of many rectangles per colour was tried: Chromium's software
/// canvas then spends far longer rasterising it when the frame is committed.)
pub fn draw(ctx: &Ctx, f: &Frame, s: &Scene, p: &Palette, widths: &mut TextWidths) -> usize {
    let (w, h) = (f.w, f.h);
    let text = if p.dark { "#eef0f2" } else { "#15171a" };
    ctx.set_font(&font(LABEL_PX));
    ctx.set_text_baseline("middle");
    ctx.set_text_align("left");
    widths.prepare(ctx, s.names.len());
    // Lane separators first, under the spans.
    ctx.set_fill_style_str(&p.border);
    for lane in s.lanes {
        let y = lane.y + lane.h - s.scroll_top;
        if (0.0..=h).contains(&y) {
            ctx.fill_rect(0.0, y.round() - 0.5, w, 1.0);
        }
    }
    let mut selected = None;
    // (name, x, y, width) of each span on screen, and (thread entry, span) of those wide enough for a label.
    let mut rects: Vec<(u32, f64, f64, f64)> = Vec::new();
    let mut labelled: Vec<(usize, usize, f64, f64, f64)> = Vec::new();
    for (ti, t) in s.spans.threads.iter().enumerate() {
        let Some(lane) = s.lane_of.get(t.thread as usize).copied().flatten().and_then(|i| s.lanes.get(i)) else { continue };
        if lane.y + lane.h < s.scroll_top || lane.y > s.scroll_top + h {
            continue;
        }
        for i in 0..t.len() {
            let y = lane.depth_y(t.depth[i]) - s.scroll_top;
            if y + SPAN_H < 0.0 || y > h {
                continue;
            }
            let x0 = f.sx(t.start_ps[i] as f64).max(-1.0);
            let x1 = f.sx((t.start_ps[i] + t.duration_ps[i]) as f64).min(w + 1.0);
            if x1 < 0.0 || x0 > w {
                continue;
            }
            let width = (x1 - x0).max(1.0);
            let name = if (t.name[i] as usize) < s.names.len() { t.name[i] } else { MIXED_NAMES };
            rects.push((name, x0, y, width));
            if s.selected_event == Some(t.event[i]) {
                selected = Some((x0, y, width));
            }
            if width >= LABEL_MIN_PX {
                labelled.push((ti, i, x0, y, width));
            }
        }
    }
    rects.sort_unstable_by_key(|r| r.0);
    for group in rects.chunk_by(|a, b| a.0 == b.0) {
        let name = group[0].0;
        match s.names.get(name as usize) {
            Some(n) => ctx.set_fill_style_str(&name_colour(n, p.dark)),
            None => ctx.set_fill_style_str(&p.bg_3),
        }
        for &(_, x, y, width) in group {
            ctx.fill_rect(x, y, width, SPAN_H - 1.0);
        }
    }
    ctx.set_fill_style_str(text);
    for (ti, i, x0, y, width) in labelled {
        let t = &s.spans.threads[ti];
        let name = s.names.get(t.name[i] as usize).map(String::as_str);
        if let Some(fit) = widths.fit(ctx, t.name[i], name, t.count[i], width - 6.0) {
            let _ = ctx.fill_text(&fit, x0.max(0.0) + 3.0, y + SPAN_H / 2.0);
        }
    }
    if let Some((x, y, width)) = selected {
        ctx.set_stroke_style_str(&p.accent);
        ctx.set_line_width(2.0);
        ctx.stroke_rect(x - 1.0, y - 1.0, width + 2.0, SPAN_H + 1.0);
    }
    let shade = |a: f64, b: f64| {
        let (a, b) = (a.min(b).max(0.0), a.max(b).min(w));
        if b > a {
            ctx.set_global_alpha(0.18);
            ctx.set_fill_style_str(&p.accent);
            ctx.fill_rect(a, 0.0, b - a, h);
            ctx.set_global_alpha(1.0);
            ctx.fill_rect(a, 0.0, 1.0, h);
            ctx.fill_rect(b - 1.0, 0.0, 1.0, h);
        }
    };
    if let Some((a, b)) = s.range_ps {
        shade(f.sx(a as f64), f.sx(b as f64));
    }
    if let Some((a, b)) = s.drag_px {
        shade(a, b);
    }
    rects.len()
}

/// The span under canvas point (`x`, `y`): (its thread's entry in `spans.threads`, its index there).
pub fn span_at(f: &Frame, s: &Scene, x: f64, y: f64) -> Option<(usize, usize)> {
    let y = y + s.scroll_top;
    for (ti, t) in s.spans.threads.iter().enumerate() {
        let Some(lane) = s.lane_of.get(t.thread as usize).copied().flatten().and_then(|i| s.lanes.get(i)) else { continue };
        if !(lane.y..lane.y + lane.h).contains(&y) {
            continue;
        }
        let depth = ((y - lane.y - LANE_PAD) / SPAN_H).floor();
        if depth < 0.0 {
            return None;
        }
        // Spans thinner than a pixel are drawn a pixel wide: allow as much slack.
        return (0..t.len())
            .filter(|&i| f64::from(t.depth[i]) == depth)
            .find(|&i| {
                let x0 = f.sx(t.start_ps[i] as f64);
                let x1 = f.sx((t.start_ps[i] + t.duration_ps[i]) as f64).max(x0 + 1.0);
                (x0 - 0.5..=x1 + 0.5).contains(&x)
            })
            .map(|i| (ti, i));
    }
    None
}
