//! The allocation-block timeline: every buffer of the module's heap as a rectangle, x = program order
//! (width = lifetime), y = offset in the heap (height = size), coloured by allocation group.
//!
//! It stays smooth with 100,000 blocks: a frame only touches blocks whose rectangle meets the view
//! (the list is sorted by start, so the scan stops at the right edge), draws them in one path per
//! colour, and folds blocks thinner than a couple of pixels into a coarse coverage grid drawn as one
//! path per colour and density level, so the cost of a frame is bounded by the screen, not the module.

use super::axis::{bytes_label, x_axis, y_axis, Style};
use super::pan_zoom::{PanZoom, ZoomAxes};
use super::plot::{group_color, group_index, redraw, GROUPS, MARGINS};
use super::viewport::{Frame, Viewport};
use super::{prepare_fit, Palette};
use crate::engine::memory_viewer_columns::ViewerData;
use crate::ui::components::metric::{Bytes, Count, Text};
use leptos::prelude::*;
use std::collections::HashMap;
use std::sync::Arc;

/// The least view: one step wide and 16 bytes tall.
const MIN_STEPS: f64 = 1.0;
const MIN_BYTES: f64 = 16.0;
/// Blocks thinner or shorter than this (CSS px) are folded into the coverage grid.
const MIN_BLOCK_PX: f64 = 1.5;
/// Side of a coverage-grid cell (CSS px).
const CELL_PX: f64 = 2.0;
/// Blocks at least this large in both directions get a separating outline.
const OUTLINE_PX: f64 = 4.0;
/// Shades per group (see [`group_color`]) and density levels of the coverage grid.
const SHADES: usize = 3;
const DENSITY_ALPHA: [f64; 4] = [0.35, 0.55, 0.75, 0.95];

/// One block, in data units, prepared once per module.
struct Block {
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
    group: usize,
    shade: usize,
    /// Index into the viewer's blocks.
    index: usize,
}

/// The module's blocks sorted by start, its allocation bands, and the full extent.
pub struct TimelineData {
    blocks: Vec<Block>,
    bands: Vec<(f64, f64)>,
    by_buffer: HashMap<i64, usize>,
    pub full: Viewport,
}

impl TimelineData {
    pub fn new(v: &ViewerData) -> TimelineData {
        let mut blocks = Vec::new();
        let mut bands = Vec::new();
        let mut steps = (v.heap_bytes.len().max(2) - 1) as f64;
        let mut top = 0f64;
        for (index, b) in (0..v.block_count()).filter_map(|i| Some((i, v.block(i)?))) {
            let y0 = b.offset_bytes as f64;
            let y1 = y0 + b.size_bytes as f64;
            top = top.max(y1);
            steps = steps.max(b.end_step as f64);
            match b.logical_buffer_id {
                None => bands.push((y0, y1)),
                Some(id) => blocks.push(Block {
                    x0: b.start_step as f64,
                    // A buffer freed at the step it was made still occupies that step.
                    x1: (b.end_step.max(b.start_step + 1)) as f64,
                    y0,
                    y1,
                    group: group_index(b.category),
                    shade: id.rem_euclid(SHADES as i64) as usize,
                    index,
                }),
            }
        }
        blocks.sort_by(|a, b| a.x0.total_cmp(&b.x0));
        let by_buffer = blocks.iter().enumerate().filter_map(|(i, b)| v.block(b.index)?.logical_buffer_id.map(|id| (id, i))).collect();
        TimelineData { blocks, bands, by_buffer, full: Viewport { x0: 0.0, x1: steps, y0: 0.0, y1: top.max(1.0) } }
    }

    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }

    /// The index in the viewer's blocks of buffer `id`'s block.
    pub fn block_of(&self, id: i64) -> Option<usize> {
        self.by_buffer.get(&id).and_then(|&i| self.blocks.get(i)).map(|b| b.index)
    }
}

/// What a frame drew, for the tests.
struct FrameStats {
    drawn: usize,
    folded: usize,
}

fn draw(canvas: &web_sys::HtmlCanvasElement, data: &TimelineData, v: Viewport, highlight: Option<usize>) -> Option<FrameStats> {
    let (ctx, w, h) = prepare_fit(canvas)?;
    let p = Palette::read();
    let f = Frame { v, w, h, m: MARGINS };
    let (pw, ph) = (f.plot_w(), f.plot_h());
    if pw <= 1.0 || ph <= 1.0 {
        return None;
    }
    let (left, top) = (f.plot_left(), f.plot_top());
    y_axis(&ctx, &f, &p, Style { grid: true, binary: true, ..Style::default() }, |b, _| bytes_label(b));
    x_axis(&ctx, &f, &p, Style { grid: true, integer: true, ..Style::default() }, |t, _| crate::units::count(t as u64));
    ctx.save();
    ctx.begin_path();
    ctx.rect(left, top, pw, ph);
    ctx.clip();
    // Allocation bands: where each allocation's bytes start and end.
    ctx.set_fill_style_str(&p.fg_2);
    for &(y0, y1) in &data.bands {
        for y in [y0, y1] {
            if y >= v.y0 && y <= v.y1 {
                ctx.fill_rect(left, f.sy(y).round() - 0.5, pw, 1.0);
            }
        }
    }

    let groups = GROUPS.len() + 1;
    let mut rects: Vec<Vec<[f64; 4]>> = vec![Vec::new(); groups * SHADES];
    let mut outlines: Vec<[f64; 4]> = Vec::new();
    let cols = (pw / CELL_PX).ceil() as usize;
    let rows = (ph / CELL_PX).ceil() as usize;
    let mut coverage = vec![0f32; cols * rows];
    let mut cell_group = vec![0u8; cols * rows];
    let mut cell_best = vec![0f32; cols * rows];
    let (mut drawn, mut folded) = (0usize, 0usize);
    let end = data.blocks.partition_point(|b| b.x0 < v.x1);
    for b in &data.blocks[..end] {
        if b.x1 <= v.x0 || b.y1 <= v.y0 || b.y0 >= v.y1 {
            continue;
        }
        let (l, r) = (f.sx(b.x0).max(left), f.sx(b.x1).min(left + pw));
        let (t, bot) = (f.sy(b.y1).max(top), f.sy(b.y0).min(top + ph));
        let (bw, bh) = (r - l, bot - t);
        if bw >= MIN_BLOCK_PX && bh >= MIN_BLOCK_PX {
            rects[b.group * SHADES + b.shade].push([l, t, bw, bh]);
            if bw >= OUTLINE_PX && bh >= OUTLINE_PX {
                outlines.push([l, t, bw, bh]);
            }
            drawn += 1;
            continue;
        }
        folded += 1;
        let (c0, c1) = (((l - left) / CELL_PX) as usize, (((r - left) / CELL_PX) as usize).min(cols - 1));
        let (r0, r1) = (((t - top) / CELL_PX) as usize, (((bot - top) / CELL_PX) as usize).min(rows - 1));
        for row in r0..=r1.max(r0).min(rows - 1) {
            let cy0 = top + row as f64 * CELL_PX;
            let oy = (bot.min(cy0 + CELL_PX) - t.max(cy0)).max(0.0);
            for col in c0..=c1.max(c0).min(cols - 1) {
                let cx0 = left + col as f64 * CELL_PX;
                let ox = (r.min(cx0 + CELL_PX) - l.max(cx0)).max(0.0);
                // Even an infinitely thin block is visible: count it as a tenth of a pixel.
                let area = (ox * oy).max(0.1) as f32;
                let k = row * cols + col;
                coverage[k] += area;
                if area > cell_best[k] {
                    cell_best[k] = area;
                    cell_group[k] = b.group as u8;
                }
            }
        }
    }
    for (k, batch) in rects.iter().enumerate() {
        if batch.is_empty() {
            continue;
        }
        ctx.set_fill_style_str(group_color(GROUPS.get(k / SHADES).copied().unwrap_or(""), k % SHADES));
        ctx.begin_path();
        for [x, y, bw, bh] in batch {
            ctx.rect(*x, *y, *bw, *bh);
        }
        ctx.fill();
    }
    if !outlines.is_empty() {
        ctx.set_stroke_style_str(&p.bg);
        ctx.set_line_width(1.0);
        ctx.begin_path();
        for [x, y, bw, bh] in &outlines {
            ctx.rect(x + 0.5, y + 0.5, bw - 1.0, bh - 1.0);
        }
        ctx.stroke();
    }
    // The coverage grid: one path per group and density level, each row's equal neighbours merged
    // into one rectangle.
    let cell_area = (CELL_PX * CELL_PX) as f32;
    let levels = DENSITY_ALPHA.len();
    let mut runs: Vec<Vec<(usize, usize, usize)>> = vec![Vec::new(); groups * levels];
    for row in 0..rows {
        let mut open: Option<(usize, usize)> = None; // (batch, first column)
        for col in 0..=cols {
            let batch = (col < cols).then(|| row * cols + col).filter(|&k| coverage[k] > 0.0).map(|k| {
                let level = ((coverage[k] / cell_area * levels as f32) as usize).min(levels - 1);
                usize::from(cell_group[k]) * levels + level
            });
            if open.map(|(b, _)| Some(b)) != Some(batch) {
                if let Some((b, c0)) = open {
                    runs[b].push((c0, row, col - c0));
                }
                open = batch.map(|b| (b, col));
            }
        }
    }
    for (k, batch) in runs.iter().enumerate() {
        if batch.is_empty() {
            continue;
        }
        ctx.set_global_alpha(DENSITY_ALPHA[k % levels]);
        ctx.set_fill_style_str(group_color(GROUPS.get(k / levels).copied().unwrap_or(""), 0));
        ctx.begin_path();
        for &(c, r, n) in batch {
            ctx.rect(left + c as f64 * CELL_PX, top + r as f64 * CELL_PX, n as f64 * CELL_PX, CELL_PX);
        }
        ctx.fill();
    }
    ctx.set_global_alpha(1.0);
    if let Some(b) = highlight.and_then(|i| data.blocks.get(i)) {
        let (l, r) = (f.sx(b.x0), f.sx(b.x1));
        let (t, bot) = (f.sy(b.y1), f.sy(b.y0));
        // At least a few pixels, so a highlighted tiny buffer can still be found.
        let (cx, cy) = ((l + r) / 2.0, (t + bot) / 2.0);
        let (hw, hh) = (((r - l) / 2.0).max(3.0), ((bot - t) / 2.0).max(3.0));
        ctx.set_stroke_style_str(&p.fg);
        ctx.set_line_width(2.0);
        ctx.stroke_rect(cx - hw, cy - hh, 2.0 * hw, 2.0 * hh);
    }
    ctx.restore();
    ctx.set_stroke_style_str(&p.border);
    ctx.set_line_width(1.0);
    ctx.stroke_rect(left + 0.5, top + 0.5, pw - 1.0, ph - 1.0);
    Some(FrameStats { drawn, folded })
}

/// The block under (`px`, `py`), the smallest when several are (a couple of pixels of slack, so thin
/// blocks can be pointed at).
fn hit(data: &TimelineData, f: Frame, px: f64, py: f64) -> Option<usize> {
    let (x, y) = (f.dx(px), f.dy(py));
    let (per_x, per_y) = f.per_px();
    let (sx, sy) = (2.0 * per_x, 2.0 * per_y);
    let end = data.blocks.partition_point(|b| b.x0 < x + sx);
    let mut best: Option<(f64, usize)> = None;
    for (i, b) in data.blocks[..end].iter().enumerate() {
        if b.x1 + sx > x && b.y0 - sy < y && b.y1 + sy > y {
            let inside = b.x0 <= x && x < b.x1 && b.y0 <= y && y < b.y1;
            let area = (b.x1 - b.x0) * (b.y1 - b.y0) * if inside { 1.0 } else { 1e12 };
            if best.is_none_or(|(a, _)| area < a) {
                best = Some((area, i));
            }
        }
    }
    best.map(|(_, i)| i)
}

#[component]
pub fn BlockTimeline(
    viewer: Arc<ViewerData>,
    data: Arc<TimelineData>,
    /// Shared with the working-space chart, whose x axis follows this one.
    view: RwSignal<Viewport>,
    /// The buffer hovered anywhere on the page (logical buffer id).
    hovered: RwSignal<Option<i64>>,
    /// Set on click: the buffer the details card keeps showing.
    pinned: RwSignal<Option<i64>>,
) -> impl IntoView {
    let canvas = NodeRef::<leptos::html::Canvas>::new();
    // The block under the pointer, with the pointer's position in the canvas (for the card).
    let hover = RwSignal::new(None::<(usize, f64, f64)>);
    let pz = PanZoom::new(canvas, view, data.full, MARGINS).min_size(MIN_STEPS, MIN_BYTES).axes(ZoomAxes::ByModifier);
    let d = data.clone();
    redraw(canvas, move |c| {
        let highlight = hovered.get().or(pinned.get()).and_then(|id| d.by_buffer.get(&id).copied());
        let Some(s) = draw(c, &d, view.get(), highlight) else { return false };
        let _ = c.set_attribute("data-drawn-blocks", &s.drawn.to_string());
        let _ = c.set_attribute("data-folded-blocks", &s.folded.to_string());
        true
    });

    let d = data.clone();
    let move_viewer = viewer.clone();
    let on_move = move |ev: web_sys::MouseEvent| {
        let Some((f, px, py)) = pz.hover(&ev) else { return };
        let found = hit(&d, f, px, py);
        hover.set(found.map(|i| (i, px, py)));
        let id = found.and_then(|i| move_viewer.block(d.blocks[i].index).and_then(|b| b.logical_buffer_id));
        if hovered.get_untracked() != id {
            hovered.set(id);
        }
    };
    let card_viewer = viewer.clone();
    let card_data = data.clone();
    let card = move || {
        let (i, px, py) = hover.get()?;
        let b = card_viewer.block(card_data.blocks.get(i)?.index)?;
        let t = b.text;
        let key = b.logical_buffer_id.unwrap_or(-1).to_string();
        // Keep the card inside the canvas: flip it left/up near the right/bottom edge.
        let (cw, ch) = canvas.get_untracked().map_or((0.0, 0.0), |c| (f64::from(c.client_width()), f64::from(c.client_height())));
        let left = if px > cw - 340.0 { px - 330.0 } else { px + 14.0 };
        let top = if py > ch - 170.0 { (py - 170.0).max(0.0) } else { py + 14.0 };
        let source = t.source.as_ref().map(|s| format!("{}:{}", s.file_name, s.line_number));
        Some(view! {
            <div class="hover-card" data-testid="block-card" data-buffer-id=key.clone() style=format!("left:{left:.0}px;top:{top:.0}px")>
                <div class="hc-title"><code>{t.name.to_string()}</code></div>
                <table>
                    <tr><td>"Size"</td><td><Bytes metric="block_size_bytes" value=b.size_bytes key=key.clone() /></td></tr>
                    <tr><td>"Offset"</td><td><Bytes metric="block_offset_bytes" value=b.offset_bytes key=key.clone() /></td></tr>
                    <tr><td>"Lifetime"</td><td>"steps " <Count metric="block_start_step" value=b.start_step.max(0) as u64 key=key.clone() /> " – " <Count metric="block_end_step" value=b.end_step.max(0) as u64 key=key.clone() /></td></tr>
                    <tr><td>"Group"</td><td><Text metric="block_category" value=b.category.to_string() key=key.clone() /></td></tr>
                    <tr><td>"Shape"</td><td><code>{t.shape.to_string()}</code></td></tr>
                    {(!t.op_name.is_empty()).then(|| view! { <tr><td>"Op"</td><td class="wrap">{t.op_name.to_string()}</td></tr> })}
                    {source.map(|s| view! { <tr><td>"Source"</td><td class="wrap"><code>{s}</code></td></tr> })}
                </table>
            </div>
        })
    };
    view! {
        <div class="chart-wrap timeline-wrap">
            <canvas
                class="chart timeline"
                data-testid="block-timeline"
                data-block-count=data.blocks.len().to_string()
                aria-label="Allocation-block timeline: wheel to zoom, drag to pan, W/S zoom, A/D pan, double-click to reset"
                on:mousemove=on_move
                on:mousedown=move |ev: web_sys::MouseEvent| {
                    pz.press(&ev);
                    hover.set(None);
                }
                on:mouseup=move |ev: web_sys::MouseEvent| {
                    // A click without movement pins the buffer under the pointer.
                    if let Some((sx, sy)) = pz.release() {
                        if (f64::from(ev.offset_x()) - sx).abs() < 3.0 && (f64::from(ev.offset_y()) - sy).abs() < 3.0 {
                            pinned.set(hovered.get_untracked());
                        }
                    }
                }
                on:mouseleave=move |_| {
                    pz.release();
                    hover.set(None);
                    hovered.set(None);
                }
                {..pz.attributes()}
            ></canvas>
            {card}
        </div>
    }
}
