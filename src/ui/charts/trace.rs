//! The Trace Viewer's tracks: every thread's spans (as the engine's level-of-detail query merged them)
//! on one canvas, one row per nesting depth, coloured by name, labelled where a label fits; the range
//! selection shaded; and the hit test that maps a click back to the span under it. Canvas 2D in CSS
//! pixels on a context from [`super::prepare_fit`]; x through the shared [`Frame`].

use super::viewport::Frame;
use super::{fit_text, font, Palette};
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

/// Draws `scene` and returns how many spans were drawn (those on screen).
pub fn draw(ctx: &Ctx, f: &Frame, s: &Scene, p: &Palette) -> usize {
    let (w, h) = (f.w, f.h);
    let mixed = p.bg_3.clone();
    let text = if p.dark { "#eef0f2" } else { "#15171a" };
    let mut colours: Vec<Option<String>> = vec![None; s.names.len()];
    ctx.set_font(&font(LABEL_PX));
    ctx.set_text_baseline("middle");
    ctx.set_text_align("left");
    // Lane separators first, under the spans.
    ctx.set_fill_style_str(&p.border);
    for lane in s.lanes {
        let y = lane.y + lane.h - s.scroll_top;
        if (0.0..=h).contains(&y) {
            ctx.fill_rect(0.0, y.round() - 0.5, w, 1.0);
        }
    }
    let mut drawn = 0;
    let mut selected = None;
    // The name whose colour is the fill style now.
    let mut last_fill: Option<u32> = None;
    for t in &s.spans.threads {
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
            let name = t.name[i];
            let fill = match s.names.get(name as usize) {
                Some(n) if name != MIXED_NAMES => colours[name as usize].get_or_insert_with(|| name_colour(n, p.dark)).as_str(),
                _ => mixed.as_str(),
            };
            // Each colour set is a call out of wasm with its string: only when the name changes.
            if last_fill != Some(name) {
                ctx.set_fill_style_str(fill);
                last_fill = Some(name);
            }
            ctx.fill_rect(x0, y, width, SPAN_H - 1.0);
            drawn += 1;
            if s.selected_event == Some(t.event[i]) {
                selected = Some((x0, y, width));
            }
            if width >= LABEL_MIN_PX {
                let label = match s.names.get(name as usize) {
                    Some(n) if t.count[i] == 1 => n.clone(),
                    Some(n) => format!("{n} ×{}", t.count[i]),
                    None => format!("{} events", t.count[i]),
                };
                if let Some(fit) = fit_text(ctx, &label, width - 6.0) {
                    ctx.set_fill_style_str(text);
                    last_fill = None;
                    let _ = ctx.fill_text(&fit, x0.max(0.0) + 3.0, y + SPAN_H / 2.0);
                }
            }
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
    drawn
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
