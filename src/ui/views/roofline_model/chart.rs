//! The roofline chart on canvas: log–log axes (operational intensity in FLOP/byte against GFLOP/s,
//! both as powers of ten in the shared viewport), the compute roof and each memory roof, and the
//! records as points sized by time and coloured by what bounds them. Wheel, drag and the chart keys
//! zoom and pan (the shared [`viewport`](crate::ui::charts::viewport)); hovering a point shows its
//! card and marks its table row.
//!
//! As in XProf's chart a record's x is its bottleneck operational intensity (FLOPs over the bytes of
//! the memory that bounds it) and its y its normalised FLOP rate; records bound by nothing known
//! are left out, and so are records with no FLOPs or bytes, which a log axis cannot place (the page
//! counts them).

use crate::engine::roofline_model::RooflineModelView;
use crate::ui::charts::axis::{x_axis, y_axis, Style};
use crate::ui::charts::pan_zoom::PanZoom;
use crate::ui::charts::plot::redraw;
use crate::ui::charts::viewport::{Frame, Margins, Viewport};
use crate::ui::charts::{font, prepare_fit, Palette};
use crate::ui::components::metric::{Count, Duration, Percent, Text};
use leptos::prelude::*;
use std::f64::consts::TAU;
use std::sync::Arc;

const MARGINS: Margins = Margins { left: 64.0, right: 14.0, top: 22.0, bottom: 34.0 };
/// Point radii in CSS pixels: the longest op gets the largest, area in proportion to time.
const MIN_R_PX: f64 = 3.0;
const MAX_R_PX: f64 = 14.0;
/// The least window, in decades, zoom can narrow to.
const MIN_DECADES: f64 = 0.2;

/// The colour of what bounds a record, the same for its memory's roof.
pub fn bound_colour(bound_by: &str) -> &'static str {
    match bound_by {
        "Compute" => "#f28e2b",
        "HBM" => "#e15759",
        "VMEM Read" => "#4e79a7",
        "VMEM Write" => "#76b7b2",
        "CMEM Read" => "#59a14f",
        "CMEM Write" => "#b5a22b",
        "Shm/L1" => "#b07aa1",
        _ => "#9c755f",
    }
}

/// One drawn record: its row, its place as log10 (FLOP/byte, GFLOP/s), its radius.
#[derive(Debug, Clone, Copy)]
struct Point {
    row: usize,
    x: f64,
    y: f64,
    r_px: f64,
}

/// The radius of the program's diamond: the program is the sum of the ops, so it is not sized by time.
const PROGRAM_R_PX: f64 = 7.0;

/// The records that can be drawn: the ops largest first (so smaller ones are drawn over them), the
/// program last (on top, as in XProf's chart).
fn points(v: &RooflineModelView) -> Vec<Point> {
    let c = &v.records;
    let is_op = |i: usize| c.rank[i] > 0;
    let longest = (0..c.rank.len()).filter(|&i| is_op(i)).map(|i| c.total_time_us[i]).fold(0.0, f64::max);
    let mut points: Vec<Point> = (0..c.rank.len())
        .filter(|&i| c.bound_by[i] != "Unknown" && c.bottleneck_operational_intensity[i] > 0.0 && c.measured_flop_rate[i] > 0.0)
        .map(|i| {
            let share = if longest > 0.0 { (c.total_time_us[i] / longest).sqrt() } else { 0.0 };
            Point {
                row: i,
                x: c.bottleneck_operational_intensity[i].log10(),
                y: c.measured_flop_rate[i].log10(),
                r_px: if is_op(i) { MIN_R_PX + (MAX_R_PX - MIN_R_PX) * share } else { PROGRAM_R_PX },
            }
        })
        .collect();
    points.sort_by(|a, b| is_op(b.row).cmp(&is_op(a.row)).then(b.r_px.total_cmp(&a.r_px)).then(a.row.cmp(&b.row)));
    points
}

/// Whole decades around the points, the ridge points and the compute roof.
fn full_view(v: &RooflineModelView, points: &[Point]) -> Viewport {
    let peak = v.peak_flop_rate.max(1e-9).log10();
    let ridges: Vec<f64> = v.roofs.iter().filter(|r| r.ridge_point > 0.0).map(|r| r.ridge_point.log10()).collect();
    let xs = points.iter().map(|p| p.x).chain(ridges.iter().copied());
    let (x_lo, x_hi) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| (lo.min(x), hi.max(x)));
    let (x_lo, x_hi) = if x_lo.is_finite() { (x_lo, x_hi) } else { (-1.0, 2.0) };
    let y_lo = points.iter().map(|p| p.y).fold(peak - 3.0, f64::min);
    Viewport { x0: (x_lo - 0.5).floor(), x1: (x_hi + 0.5).ceil(), y0: (y_lo - 0.3).floor(), y1: (peak + 0.5).ceil() }
}

/// The point under (`px`, `py`), the nearest within its radius and a little.
fn hit(f: &Frame, points: &[Point], px: f64, py: f64) -> Option<usize> {
    points
        .iter()
        .map(|p| (p.row, (f.sx(p.x) - px).hypot(f.sy(p.y) - py), p.r_px))
        .filter(|(_, d, r)| *d <= r + 3.0)
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(row, _, _)| row)
}

/// `10^t` written compactly: `1e-5`, `0.01`, `1`, `1k`, `10M`.
fn decade_label(t: f64) -> String {
    let v = 10f64.powf(t);
    if v < 1e-3 {
        return format!("{v:.0e}");
    }
    let (scaled, suffix) = match v {
        v if v >= 1e9 => (v / 1e9, "G"),
        v if v >= 1e6 => (v / 1e6, "M"),
        v if v >= 1e3 => (v / 1e3, "k"),
        v => (v, ""),
    };
    let text = format!("{scaled:.3}");
    format!("{}{suffix}", text.trim_end_matches('0').trim_end_matches('.'))
}

/// Draws the chart; returns the number of points drawn.
fn draw(
    canvas: &web_sys::HtmlCanvasElement,
    v: &RooflineModelView,
    points: &[Point],
    view: Viewport,
    ring: Option<usize>,
) -> Option<usize> {
    let (ctx, w, h) = prepare_fit(canvas)?;
    let p = Palette::read();
    let f = Frame { v: view, w, h, m: MARGINS };
    // Whole decades when zoomed out; finer steps inside a decade or two.
    let step = (view.width() >= 2.0).then_some(1.0);
    x_axis(&ctx, &f, &p, Style { grid: true, step, ..Style::default() }, |t, _| decade_label(t));
    let step = (view.height() >= 2.0).then_some(1.0);
    y_axis(&ctx, &f, &p, Style { grid: true, step, ..Style::default() }, |t, _| decade_label(t));
    ctx.set_font(&font(11));
    ctx.set_fill_style_str(&p.fg_2);
    ctx.set_text_align("center");
    ctx.set_text_baseline("bottom");
    let _ = ctx.fill_text("Operational intensity (FLOP/byte)", (f.plot_left() + f.plot_right()) / 2.0, h - 2.0);
    ctx.set_text_align("left");
    ctx.set_text_baseline("top");
    let _ = ctx.fill_text("GFLOP/s", 4.0, 4.0);

    ctx.save();
    ctx.begin_path();
    ctx.rect(f.plot_left(), f.plot_top(), f.plot_w(), f.plot_h());
    ctx.clip();
    // The roofs: each memory's bandwidth up to its ridge point, then the compute roof.
    let peak = v.peak_flop_rate.log10();
    ctx.set_line_width(2.0);
    for roof in v.roofs.iter().filter(|r| r.ridge_point > 0.0) {
        let ridge = roof.ridge_point.log10();
        // log10(FLOP/s) = log10(FLOP/byte) + log10(bytes/s): a line of slope 1 through the ridge point.
        ctx.set_stroke_style_str(bound_colour(&roof.name));
        ctx.begin_path();
        ctx.move_to(f.sx(view.x0), f.sy(peak - (ridge - view.x0)));
        ctx.line_to(f.sx(ridge), f.sy(peak));
        ctx.stroke();
    }
    // No compute roof where the peak is unknown (zero: a GPU plane naming no vendor).
    if v.peak_flop_rate > 0.0 {
        let first_ridge = v.roofs.iter().filter(|r| r.ridge_point > 0.0).map(|r| r.ridge_point.log10()).fold(view.x1, f64::min);
        ctx.set_stroke_style_str(bound_colour("Compute"));
        ctx.begin_path();
        ctx.move_to(f.sx(first_ridge.max(view.x0)), f.sy(peak));
        ctx.line_to(f.sx(view.x1), f.sy(peak));
        ctx.stroke();
    }
    // The points, largest first; the program as a diamond.
    ctx.set_line_width(1.0);
    let c = &v.records;
    for pt in points {
        let (x, y, r) = (f.sx(pt.x), f.sy(pt.y), pt.r_px);
        ctx.begin_path();
        if c.rank[pt.row] == 0 {
            ctx.move_to(x, y - r);
            ctx.line_to(x + r, y);
            ctx.line_to(x, y + r);
            ctx.line_to(x - r, y);
            ctx.close_path();
        } else {
            let _ = ctx.arc(x, y, r, 0.0, TAU);
        }
        ctx.set_global_alpha(0.75);
        ctx.set_fill_style_str(bound_colour(&c.bound_by[pt.row]));
        ctx.fill();
        ctx.set_global_alpha(1.0);
        ctx.set_stroke_style_str(&p.bg);
        ctx.stroke();
    }
    if let Some(pt) = ring.and_then(|row| points.iter().find(|p| p.row == row)) {
        ctx.set_line_width(2.5);
        ctx.set_stroke_style_str(&p.fg);
        ctx.begin_path();
        let _ = ctx.arc(f.sx(pt.x), f.sy(pt.y), pt.r_px + 3.0, 0.0, TAU);
        ctx.stroke();
    }
    ctx.restore();
    // Where the longest op is, for scripts and tests that hover it.
    if let Some(pt) = points.first() {
        let _ = canvas.set_attribute("data-largest-at", &format!("{:.1},{:.1}", f.sx(pt.x), f.sy(pt.y)));
    }
    Some(points.len())
}

/// The chart of `v`'s records; `hovered` is the record under the pointer, here or in the table.
#[component]
pub fn RooflineChart(v: Arc<RooflineModelView>, hovered: RwSignal<Option<usize>>) -> impl IntoView {
    let canvas = NodeRef::<leptos::html::Canvas>::new();
    let points = Arc::new(points(&v));
    let full = full_view(&v, &points);
    let view = RwSignal::new(full);
    let pz = PanZoom::new(canvas, view, full, MARGINS).min_size(MIN_DECADES, MIN_DECADES);
    // The record under the pointer, with the pointer's place in the canvas (for the card).
    let card_at = RwSignal::new(None::<(usize, f64, f64)>);
    {
        let (v, points) = (v.clone(), points.clone());
        redraw(canvas, move |c| {
            let shown = view.get();
            let Some(drawn) = draw(c, &v, &points, shown, hovered.get()) else { return false };
            let _ = c.set_attribute("data-points", &drawn.to_string());
            let _ = c.set_attribute("data-view", &format!("{},{},{},{}", shown.x0, shown.x1, shown.y0, shown.y1));
            true
        });
    }
    let hit_points = points.clone();
    let on_move = move |ev: web_sys::MouseEvent| {
        let Some((f, px, py)) = pz.hover(&ev) else { return };
        let found = hit(&f, &hit_points, px, py);
        card_at.set(found.map(|row| (row, px, py)));
        if hovered.get_untracked() != found {
            hovered.set(found);
        }
    };
    let card_view = v.clone();
    let card = move || {
        let (row, px, py) = card_at.get()?;
        let c = &card_view.records;
        let key = c.name.get(row)?.clone();
        let (cw, ch) = canvas.get_untracked().map_or((0.0, 0.0), |c| (f64::from(c.client_width()), f64::from(c.client_height())));
        let left = if px > cw - 300.0 { (px - 290.0).max(0.0) } else { px + 14.0 };
        let top = if py > ch - 190.0 { (py - 190.0).max(0.0) } else { py + 14.0 };
        Some(view! {
            <div class="hover-card" data-testid="roofline-card" data-op=key.clone() style=format!("left:{left:.0}px;top:{top:.0}px")>
                <div class="hc-title"><code>{key.clone()}</code></div>
                <table>
                    <tr><td>"Category"</td><td><Text metric="card_category" value=c.category[row].clone() /></td></tr>
                    <tr><td>"Occurrences"</td><td><Count metric="card_occurrences" value=c.occurrences[row] /></td></tr>
                    <tr><td>"Total time"</td><td><Duration metric="card_total_time_us" value_us=c.total_time_us[row] /></td></tr>
                    <tr><td>"GFLOP/s"</td><td><Text metric="card_flop_rate" value=c.measured_flop_rate[row].to_string() shown=format!("{:.3}", c.measured_flop_rate[row]) /></td></tr>
                    <tr><td>"FLOP/byte"</td><td><Text metric="card_intensity" value=c.bottleneck_operational_intensity[row].to_string() shown=format!("{:.4}", c.bottleneck_operational_intensity[row]) /></td></tr>
                    <tr><td>"Bound by"</td><td><Text metric="card_bound_by" value=c.bound_by[row].clone() /></td></tr>
                    <tr><td>"Roofline eff."</td><td><Percent metric="card_roofline_efficiency" value=c.roofline_efficiency[row] /></td></tr>
                </table>
            </div>
        })
    };
    let undrawn = v.records.rank.len() - points.len();
    view! {
        <figure class="roofline-chart">
            <div class="chart-wrap">
                <canvas
                    class="chart roofline-canvas"
                    data-testid="roofline-chart"
                    data-undrawn=undrawn.to_string()
                    aria-label="Roofline: wheel to zoom, drag to pan, W/S zoom, A/D pan, 0 or double-click to reset"
                    on:mousemove=on_move
                    on:mousedown=move |ev: web_sys::MouseEvent| {
                        pz.press(&ev);
                        card_at.set(None);
                    }
                    on:mouseup=move |_| {
                        pz.release();
                    }
                    on:mouseleave=move |_| {
                        pz.release();
                        card_at.set(None);
                        hovered.set(None);
                    }
                    {..pz.attributes()}
                ></canvas>
                {card}
            </div>
            <figcaption class="muted">
                <Count metric="drawn_points" value=points.len() as u64 /> " records drawn, sized by time, coloured by what bounds them"
                {(undrawn > 0).then(|| view! {
                    "; " <Count metric="undrawn_points" value=undrawn as u64 />
                    " not drawn (no FLOPs or no bytes, or bound by nothing known: a log axis has no place for them)"
                })}
                "."
            </figcaption>
        </figure>
    }
}
