//! A flame graph drawn as an icicle (callers on top, callees below, like `pprof -http`'s flame
//! view) of a stack tree the engine flattened in preorder. Click a frame to zoom into it, hover for
//! its function, file:line, bytes and count; double-click, Esc or the breadcrumb's root resets.
//!
//! Widths are magnitudes (`|self| + Σ children`), so the same chart draws a diff, whose values are
//! signed: there a frame's colour says growth (red) or shrinkage (green), its width how much.

use super::viewport::{Frame, Margins, Viewport};
use super::{fit_text, font, observe_width, prepare, Palette};
use crate::engine::device_memory::FlameNode;
use crate::ui::components::metric::{Bytes, Count, SignedBytes};
use crate::ui::state::AppState;
use leptos::prelude::*;
use std::sync::Arc;

const ROW_H: f64 = 18.0;
/// Narrower frames get no label: a couple of letters and an ellipsis say nothing.
const MIN_LABEL_W: f64 = 28.0;

/// Where a node sits on the value axis (root's left edge = 0), and its caller.
struct Placed {
    x0: f64,
    w: f64,
    parent: Option<usize>,
}

fn layout(nodes: &[FlameNode]) -> Vec<Placed> {
    let mut parent = vec![None; nodes.len()];
    let mut path: Vec<usize> = Vec::new();
    for (i, n) in nodes.iter().enumerate() {
        path.truncate(n.depth as usize);
        parent[i] = path.last().copied();
        path.push(i);
    }
    let mut w: Vec<f64> = nodes.iter().map(|n| n.self_bytes.unsigned_abs() as f64).collect();
    for i in (0..nodes.len()).rev() {
        if let Some(p) = parent[i] {
            w[p] += w[i];
        }
    }
    let mut cursor = vec![0.0; nodes.len()];
    let mut placed: Vec<Placed> = Vec::with_capacity(nodes.len());
    for i in 0..nodes.len() {
        let x0 = parent[i].map_or(0.0, |p| {
            let x = cursor[p];
            cursor[p] += w[i];
            x
        });
        cursor[i] = x0;
        placed.push(Placed { x0, w: w[i], parent: parent[i] });
    }
    placed
}

/// A frame on screen, in CSS pixels.
#[derive(Debug, Clone, PartialEq)]
struct Rect {
    i: usize,
    x: f64,
    y: f64,
    w: f64,
}

fn visible(nodes: &[FlameNode], placed: &[Placed], zoom: usize, width: f64) -> Vec<Rect> {
    let Some(z) = placed.get(zoom) else { return Vec::new() };
    if z.w <= 0.0 || width <= 0.0 {
        return Vec::new();
    }
    // The zoomed frame's value range fills the width.
    let f = Frame { v: Viewport::x_range(z.x0, z.x0 + z.w), w: width, h: 0.0, m: Margins::NONE };
    placed
        .iter()
        .enumerate()
        .filter_map(|(i, p)| {
            let x0 = f.sx(p.x0).max(0.0);
            let x1 = f.sx(p.x0 + p.w).min(width);
            (x1 - x0 >= 0.5).then(|| Rect { i, x: x0, w: x1 - x0, y: f64::from(nodes[i].depth) * ROW_H })
        })
        .collect()
}

/// A stable hue per function, so the same function has the same colour in every view.
fn hue(name: &str) -> f64 {
    let h = name.bytes().fold(2166136261u32, |h, b| (h ^ u32::from(b)).wrapping_mul(16777619));
    f64::from(h % 1000) / 1000.0
}

fn fill(n: &FlameNode, root: bool, diff: Option<f64>, pal: &Palette) -> String {
    if root {
        return pal.bg_3.clone();
    }
    if let Some(max) = diff {
        let t = if max > 0.0 { (n.total_bytes.unsigned_abs() as f64 / max).sqrt().clamp(0.15, 1.0) } else { 0.0 };
        let h = match n.total_bytes.signum() {
            1 => 4.0,
            -1 => 135.0,
            _ => return pal.bg_3.clone(),
        };
        return if pal.dark { format!("hsl({h} 45% {:.0}%)", 22.0 + 16.0 * t) } else { format!("hsl({h} 70% {:.0}%)", 90.0 - 26.0 * t) };
    }
    match (n.library, pal.dark) {
        (true, false) => "hsl(220 10% 84%)".into(),
        (true, true) => "hsl(220 8% 30%)".into(),
        (false, false) => format!("hsl({:.0} 55% 76%)", 195.0 + 40.0 * hue(&n.function)),
        (false, true) => format!("hsl({:.0} 40% 36%)", 195.0 + 40.0 * hue(&n.function)),
    }
}

/// `file:12,15` (the lines of the function on the stacks through this frame).
fn place(n: &FlameNode) -> String {
    let lines: Vec<String> = n.lines.iter().map(i64::to_string).collect();
    if n.file.is_empty() {
        lines.join(",")
    } else if lines.is_empty() {
        n.file.clone()
    } else {
        format!("{}:{}", n.file, lines.join(","))
    }
}

#[allow(clippy::too_many_arguments)]
fn draw(
    canvas: &web_sys::HtmlCanvasElement,
    nodes: &[FlameNode],
    rects: &[Rect],
    height: f64,
    width: f64,
    diff: bool,
    highlight: Option<&(String, String)>,
    hovered: Option<usize>,
) {
    let Some(ctx) = prepare(canvas, width, height) else { return };
    let pal = Palette::read();
    let max_delta = diff.then(|| nodes.iter().skip(1).map(|n| n.total_bytes.unsigned_abs() as f64).fold(0.0, f64::max));
    ctx.set_font(&font(11));
    ctx.set_text_baseline("middle");
    for r in rects {
        let n = &nodes[r.i];
        let dimmed = highlight.is_some_and(|(f, file)| !(n.function == *f && n.file == *file));
        ctx.set_global_alpha(if dimmed { 0.35 } else { 1.0 });
        ctx.set_fill_style_str(&fill(n, r.i == 0, max_delta, &pal));
        let gap = if r.w > 3.0 { 1.0 } else { 0.0 };
        ctx.fill_rect(r.x, r.y, (r.w - gap).max(0.5), ROW_H - 1.0);
        if r.w >= MIN_LABEL_W {
            let label = if r.i == 0 { "all".to_string() } else { n.function.clone() };
            if let Some(t) = fit_text(&ctx, &label, r.w - 8.0) {
                ctx.set_fill_style_str(if n.library && !diff { &pal.fg_2 } else { &pal.fg });
                let _ = ctx.fill_text(&t, r.x + 4.0, r.y + ROW_H / 2.0);
            }
        }
        ctx.set_global_alpha(1.0);
        if highlight.is_some() && !dimmed || hovered == Some(r.i) {
            ctx.set_stroke_style_str(if hovered == Some(r.i) { &pal.fg } else { &pal.accent });
            ctx.set_line_width(if hovered == Some(r.i) { 1.0 } else { 2.0 });
            ctx.stroke_rect(r.x + 0.5, r.y + 0.5, (r.w - gap - 1.0).max(0.5), ROW_H - 2.0);
        }
    }
}

/// The hovered frame's tooltip: its function and place, and its bytes (or their change), count and
/// share of all. `hover`: the frame and the pointer's place; `root_w`: the root's width in bytes.
fn tooltip(
    nodes: Arc<Vec<FlameNode>>,
    hover: RwSignal<Option<(usize, f64, f64)>>,
    width: RwSignal<f64>,
    root_w: f64,
    diff: bool,
) -> impl IntoView {
    move || {
        let (i, x, y) = hover.get()?;
        let n = nodes.get(i)?;
        let w = width.get();
        let side = if x > w / 2.0 { format!("right:{:.0}px", w - x + 14.0) } else { format!("left:{:.0}px", x + 14.0) };
        let share = if root_w > 0.0 { n.total_bytes.unsigned_abs() as f64 * 100.0 / root_w } else { 0.0 };
        let name = if i == 0 { "all stacks".to_string() } else { n.function.clone() };
        let figures = if diff {
            view! {
                <tr><td>"Change"</td><td class="r"><SignedBytes metric="flame_hover_total_bytes" value=n.total_bytes /></td></tr>
                <tr><td>"Change here (self)"</td><td class="r"><SignedBytes metric="flame_hover_self_bytes" value=n.self_bytes /></td></tr>
                <tr><td>"Change in count"</td><td class="r"><span class="num" data-metric="flame_hover_total_count" data-value=n.total_count.to_string()>{crate::units::signed_count(n.total_count, true)}</span></td></tr>
            }
            .into_any()
        } else {
            view! {
                <tr><td>"Live bytes"</td><td class="r"><Bytes metric="flame_hover_total_bytes" value=n.total_bytes /></td></tr>
                <tr><td>"Allocated here (self)"</td><td class="r"><Bytes metric="flame_hover_self_bytes" value=n.self_bytes /></td></tr>
                <tr><td>"Buffers / executables"</td><td class="r"><Count metric="flame_hover_total_count" value=n.total_count.unsigned_abs() /></td></tr>
            }
            .into_any()
        };
        Some(view! {
            <div class="flame-tip" data-testid="flame-tooltip" data-function=n.function.clone() style=format!("{side};top:{:.0}px", y + 16.0)>
                <div class="fn">{name}{n.library.then(|| view! { <span class="tag">"library"</span> })}</div>
                <div class="where">{place(n)}</div>
                <table>
                    {figures}
                    <tr><td>"Share of all"</td><td class="r"><span class="num" data-metric="flame_hover_share_pct" data-value=format!("{share:.2}")>{format!("{share:.1}%")}</span></td></tr>
                </table>
            </div>
        })
    }
}

/// The frames on screen as a list inside the canvas, for screen readers and tests: canvas content
/// is only shown when the canvas is not.
fn frame_list(nodes: Arc<Vec<FlameNode>>, rects: Memo<Vec<Rect>>) -> impl IntoView {
    move || {
        rects
            .get()
            .into_iter()
            .map(|r| {
                let n = &nodes[r.i];
                view! {
                    <li
                        data-function=n.function.clone()
                        data-file=n.file.clone()
                        data-depth=n.depth.to_string()
                        data-x=format!("{:.1}", r.x)
                        data-y=format!("{:.1}", r.y)
                        data-w=format!("{:.1}", r.w)
                        data-metric="flame_frame_bytes"
                        data-key=format!("{}@{}", n.function, n.file)
                        data-value=n.total_bytes.to_string()
                    >
                        {format!("{} ({}): {} B", n.function, place(n), n.total_bytes)}
                    </li>
                }
            })
            .collect_view()
    }
}

/// The flame graph of `nodes` (preorder, root first). `diff`: the values are changes (target minus
/// base). `highlight`: frames of this (function, file) are outlined and the rest dimmed.
#[component]
pub fn FlameGraph(
    nodes: Vec<FlameNode>,
    #[prop(optional)] diff: bool,
    #[prop(into)] highlight: Signal<Option<(String, String)>>,
) -> impl IntoView {
    let state = expect_context::<AppState>();
    let placed = Arc::new(layout(&nodes));
    let nodes = Arc::new(nodes);
    // Only frames with bytes are drawn: deep stacks of 0-byte executables must not add empty rows.
    let depth = nodes.iter().zip(placed.iter()).filter(|(_, p)| p.w > 0.0).map(|(n, _)| n.depth).max().unwrap_or(0);
    let height = f64::from(depth + 1) * ROW_H;
    let root_bytes = nodes.first().map_or(0, |n| n.total_bytes);
    let root_w = placed.first().map_or(0.0, |p| p.w);

    let width = RwSignal::new(0.0f64);
    let zoom = RwSignal::new(0usize);
    // Hovered frame and the pointer's position in the chart, for the tooltip.
    let hover = RwSignal::new(None::<(usize, f64, f64)>);
    let rects = {
        let (nodes, placed) = (nodes.clone(), placed.clone());
        Memo::new(move |_| visible(&nodes, &placed, zoom.get(), width.get()))
    };
    let wrap = NodeRef::<leptos::html::Div>::new();
    let canvas = NodeRef::<leptos::html::Canvas>::new();

    Effect::new(move |_| {
        if let Some(el) = wrap.get() {
            observe_width(&el, move |w| width.set(w));
        }
    });
    {
        let nodes = nodes.clone();
        Effect::new(move |_| {
            let _theme = state.theme.get();
            let hl = highlight.get();
            let hovered = hover.get().map(|h| h.0);
            let Some(c) = canvas.get() else { return };
            rects.with(|r| draw(&c, &nodes, r, height, width.get(), diff, hl.as_ref(), hovered));
        });
    }

    let hit = move |x: f64, y: f64| -> Option<usize> {
        let depth = (y / ROW_H).floor();
        rects.with_untracked(|rs| rs.iter().find(|r| r.y == depth * ROW_H && x >= r.x && x < r.x + r.w).map(|r| r.i))
    };
    let on_move = move |ev: web_sys::MouseEvent| {
        let (x, y) = (f64::from(ev.offset_x()), f64::from(ev.offset_y()));
        hover.set(hit(x, y).map(|i| (i, x, y)));
    };
    let on_click = move |ev: web_sys::MouseEvent| {
        if let Some(i) = hit(f64::from(ev.offset_x()), f64::from(ev.offset_y())) {
            zoom.set(i);
        }
    };
    let parent_of = {
        let placed = placed.clone();
        move |i: usize| placed.get(i).and_then(|p| p.parent)
    };
    let on_key = {
        let parent_of = parent_of.clone();
        move |ev: web_sys::KeyboardEvent| match ev.key().as_str() {
            "Escape" => zoom.set(0),
            "ArrowUp" | "Backspace" => {
                ev.prevent_default();
                zoom.update(|z| *z = parent_of(*z).unwrap_or(0));
            }
            _ => {}
        }
    };
    let crumbs = {
        let nodes = nodes.clone();
        move || {
            let mut path = vec![zoom.get()];
            while let Some(p) = path.last().and_then(|&i| parent_of(i)) {
                path.push(p);
            }
            path.reverse();
            path.into_iter()
                .map(|i| {
                    let label = if i == 0 { "all".to_string() } else { nodes[i].function.clone() };
                    view! { <button class="crumb" data-node=i.to_string() on:click=move |_| zoom.set(i)>{label}</button> }
                })
                .collect_view()
        }
    };
    let tip = tooltip(nodes.clone(), hover, width, root_w, diff);
    let frames = frame_list(nodes.clone(), rects);
    view! {
        <div class="flame">
            <div class="flame-bar">
                <nav class="crumbs" aria-label="Zoom path">{crumbs}</nav>
                <span class="muted hint">"Click a frame to zoom · double-click or Esc to reset · ↑ zooms out"</span>
            </div>
            <div class="flame-wrap" node_ref=wrap on:mouseleave=move |_| hover.set(None)>
                {if root_w > 0.0 {
                    view! {
                        <canvas
                            node_ref=canvas
                            tabindex="0"
                            role="img"
                            aria-label="Flame graph of live bytes by Python stack"
                            data-testid="flame-canvas"
                            data-metric="flame_root_bytes"
                            data-value=root_bytes.to_string()
                            data-zoom=move || zoom.get().to_string()
                            on:mousemove=on_move
                            on:click=on_click
                            on:dblclick=move |_| zoom.set(0)
                            on:keydown=on_key
                        >
                            <ul>{frames}</ul>
                        </canvas>
                    }
                    .into_any()
                } else {
                    view! {
                        <p class="empty" data-testid="flame-empty">
                            "Nothing to draw: every sample here is 0 bytes (executables on CPU hold no device memory). The tables list them by count."
                        </p>
                    }
                    .into_any()
                }}
                {tip}
            </div>
        </div>
    }
}
