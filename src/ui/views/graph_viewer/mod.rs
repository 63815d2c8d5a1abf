//! The Graph tool: an HLO module's graph around one instruction (XProf's graph viewer), laid out by
//! the engine (`analysis::graph_viewer::layout`) and drawn here on a canvas, operands above users.
//! Wheel, drag and the chart keys zoom and pan; a click on a node (or on its line in the node list)
//! re-centres the graph on it. The module, node and width live in the URL.

use crate::analysis::graph_viewer::dot::colors;
use crate::analysis::graph_viewer::layout::{node_lines, Layout, Rect, LINE_HEIGHT};
use crate::analysis::graph_viewer::{ColorScheme, EdgeKind, Graph, NodeKind, MAX_WIDTH};
use crate::engine::graph_viewer::GraphView;
use crate::engine::protocol::{RequestBody, ResponseBody};
use crate::ui::charts::pan_zoom::PanZoom;
use crate::ui::charts::plot::redraw;
use crate::ui::charts::viewport::{Frame, Margins, Viewport};
use crate::ui::charts::{prepare_fit, Palette};
use crate::ui::components::metric::{Count, Text};
use crate::ui::state::AppState;
use crate::ui::use_engine::{use_engine, Reply};
use leptos::prelude::*;
use std::sync::Arc;
use web_sys::HtmlCanvasElement;

/// Room around the graph the view may pan into, in layout units.
const SLACK: f64 = 2_000.0;
/// The closest zoom: this many layout units across the canvas at least.
const MIN_SPAN: f64 = 120.0;

#[component]
pub fn GraphViewerView(file_id: u32) -> impl IntoView {
    let state = expect_context::<AppState>();
    let fetch = use_engine(
        "Graph Viewer",
        move || {
            Some(RequestBody::GraphViewer {
                file_id,
                module: state.module.get(),
                node: state.graph_node.get(),
                width: state.graph_width.get(),
            })
        },
        |body| match body {
            ResponseBody::GraphViewer { view } => Some(Arc::new(*view)),
            _ => None,
        },
    );
    let body = move || match fetch.reply.get() {
        Reply::Waiting => view! { <p class="muted loading">"Drawing the graph…"</p> }.into_any(),
        Reply::Failed(e) => view! { <p class="banner error" data-testid="graph-error">{e.to_string()}</p> }.into_any(),
        Reply::Rejected(e) => view! { <p class="banner error">{e}</p> }.into_any(),
        Reply::Ready(v) => view! { <GraphPanel v /> }.into_any(),
    };
    view! {
        <article
            class="graph-viewer"
            data-testid="graph-viewer"
            data-state=move || if matches!(fetch.reply.get(), Reply::Ready(_)) { "ready" } else { "waiting" }
        >
            <Controls modules=move || fetch.reply.get().ready().map(|v| (v.modules.clone(), v.module.clone())) />
            {body}
        </article>
    }
}

/// Module, node search and width.
#[component]
fn Controls(
    modules: impl Fn() -> Option<(Vec<crate::engine::graph_viewer::GraphModule>, String)> + Send + Sync + 'static,
) -> impl IntoView {
    let state = expect_context::<AppState>();
    let query = RwSignal::new(String::new());
    let search = move || {
        let q = query.get_untracked().trim().to_string();
        if !q.is_empty() {
            state.graph_node.set(Some(q));
        }
    };
    let width = move |delta: i64| {
        let w = (i64::from(state.graph_width.get_untracked()) + delta).clamp(0, i64::from(MAX_WIDTH));
        state.graph_width.set(w as u32);
    };
    view! {
        <header class="graph-head">
            {move || modules().map(|(list, current)| view! {
                <label class="field-label">"Module "
                    <select data-testid="graph-module" on:change=move |ev| {
                        state.module.set(Some(event_target_value(&ev)));
                        state.graph_node.set(None);
                    }>
                        {list.into_iter().map(|m| {
                            let selected = m.name == current;
                            view! { <option value=m.name.clone() selected=selected>{format!("{} ({} instructions)", m.name, m.instructions)}</option> }
                        }).collect_view()}
                    </select>
                </label>
            })}
            <form class="graph-search" on:submit=move |ev| {
                ev.prevent_default();
                search();
            }>
                <input
                    type="search"
                    data-testid="graph-search"
                    placeholder="Instruction or computation name"
                    aria-label="Centre the graph on the instruction or computation of this name"
                    prop:value=move || query.get()
                    on:input=move |ev| query.set(event_target_value(&ev))
                />
                <button class="btn" type="submit">"Centre"</button>
            </form>
            <span class="graph-width">
                <span class="field-label">"Width "</span>
                <button class="btn" data-testid="graph-width-less" title="One hop fewer" on:click=move |_| width(-1)>"−"</button>
                {move || view! { <Text metric="graph_width" value=state.graph_width.get().to_string() /> }}
                <button class="btn" data-testid="graph-width-more" title="One hop more" on:click=move |_| width(1)>"+"</button>
            </span>
        </header>
    }
}

/// The canvas, the centre's card and the node list.
#[component]
fn GraphPanel(v: Arc<GraphView>) -> impl IntoView {
    let state = expect_context::<AppState>();
    let canvas = NodeRef::<leptos::html::Canvas>::new();
    let g = &v.graph;
    let l = &v.layout;
    let full = Viewport { x0: -SLACK, x1: l.width + SLACK, y0: -SLACK, y1: l.height + SLACK };
    // The first view: the centre node at zoom 1, set once the canvas has a size.
    let view = RwSignal::new(Viewport { x0: 0.0, x1: 0.0, y0: 0.0, y1: 0.0 });
    let pz = PanZoom::new(canvas, view, full, Margins::NONE).min_size(MIN_SPAN, MIN_SPAN);
    let center = g.nodes.iter().position(|n| n.highlight);
    {
        let v = v.clone();
        redraw(canvas, move |c| {
            let mut shown = view.get();
            if shown.width() <= 0.0 {
                shown = initial_view(c, &v.layout, center);
                view.update_untracked(|v| *v = shown);
            }
            let f = Frame { v: shown, w: f64::from(c.client_width()), h: f64::from(c.client_height()), m: Margins::NONE };
            draw(c, &v.graph, &v.layout, &f);
            if let Some(r) = center.map(|n| v.layout.nodes[n]) {
                let (x, y) = (f.sx(r.x + r.w / 2.0), f.sy(flip(&v.layout, r.y + r.h / 2.0)));
                let _ = c.set_attribute("data-center-at", &format!("{x:.1},{y:.1}"));
            }
            true
        });
    }
    let hit_view = v.clone();
    let on_up = move |ev: web_sys::MouseEvent| {
        let start = pz.release();
        let (px, py) = (f64::from(ev.offset_x()), f64::from(ev.offset_y()));
        // A click, not the end of a drag: re-centre on the node under the pointer.
        if start.is_some_and(|(sx, sy)| (sx - px).abs() + (sy - py).abs() < 4.0) {
            let Some(c) = canvas.get_untracked() else { return };
            let f = Frame { v: view.get_untracked(), w: f64::from(c.client_width()), h: f64::from(c.client_height()), m: Margins::NONE };
            let (x, y) = (f.dx(px), flip(&hit_view.layout, f.dy(py)));
            let hit = hit_view.layout.nodes.iter().position(|r| x >= r.x && x <= r.x + r.w && y >= r.y && y <= r.y + r.h);
            if let Some(n) = hit.filter(|&n| hit_view.graph.nodes[n].kind != NodeKind::Root) {
                state.graph_node.set(Some(hit_view.graph.nodes[n].name.clone()));
            }
        }
    };
    let card = center.map(|n| {
        let node = g.nodes[n].clone();
        view! {
            <aside class="graph-card hover-card" data-testid="graph-card">
                <div class="hc-title"><code>{node.name.clone()}</code></div>
                <table>
                    <tr><td>"Opcode"</td><td><Text metric="card_opcode" value=node.opcode.clone() /></td></tr>
                    <tr><td>"Shape"</td><td><code><Text metric="card_shape" value=node.shape.clone() /></code></td></tr>
                    {node.framework_op.clone().map(|op| view! { <tr><td>"Framework op"</td><td><Text metric="card_framework_op" value=op /></td></tr> })}
                    {node.source.clone().map(|s| view! { <tr><td>"Source"</td><td><Text metric="card_source" value=s /></td></tr> })}
                </table>
                <pre class="hlo-text" data-metric="card_hlo_text" data-value=node.expression.clone()>{node.expression.clone()}</pre>
            </aside>
        }
    });
    let list: Vec<_> = g
        .nodes
        .iter()
        .filter(|n| n.kind != NodeKind::Root)
        .map(|n| {
            let name = n.name.clone();
            let (go, label) = (name.clone(), name.clone());
            view! {
                <li>
                    <button class="btn link" data-metric="graph_node" data-value=name.clone() data-opcode=n.opcode.clone() on:click=move |_| state.graph_node.set(Some(go.clone()))>
                        {label}
                    </button>
                    " " <span class="muted">{n.opcode.clone()} " " {n.shape.clone()}</span>
                </li>
            }
        })
        .collect();
    let notes = g.notes.clone();
    view! {
        <div class="graph-body">
            <figure class="graph-figure">
                <canvas
                    class="chart graph-canvas"
                    data-testid="graph-canvas"
                    aria-label="The graph: wheel to zoom, drag to pan, W/S zoom, A/D pan, 0 or double-click to reset; click a node to centre on it"
                    on:mousedown=move |ev: web_sys::MouseEvent| pz.press(&ev)
                    on:mousemove=move |ev: web_sys::MouseEvent| {
                        pz.hover(&ev);
                    }
                    on:mouseup=on_up
                    on:mouseleave=move |_| {
                        pz.release();
                    }
                    {..pz.attributes()}
                ></canvas>
                <figcaption class="muted">
                    <Text metric="graph_center" value=g.center.clone() /> " in " <code>{g.computation.clone()}</code> ": "
                    <Count metric="graph_nodes" value=g.nodes.iter().filter(|n| n.kind != NodeKind::Root).count() as u64 /> " nodes, "
                    <Count metric="graph_edges" value=g.edges.len() as u64 /> " edges, "
                    <Count metric="graph_clusters" value=g.clusters.len() as u64 /> " clusters (fused computations and called computations)."
                </figcaption>
                {notes.into_iter().map(|n| view! { <p class="banner" data-testid="graph-note">{n}</p> }).collect_view()}
            </figure>
            <div class="graph-side">
                {card}
                <details class="graph-nodes" open>
                    <summary>"Nodes"</summary>
                    <ul data-testid="graph-node-list">{list}</ul>
                </details>
            </div>
        </div>
    }
}

/// Layout y (down) as viewport y (up).
fn flip(l: &Layout, y: f64) -> f64 {
    l.height - y
}

/// The centre node (or the graph's top) at zoom 1.
fn initial_view(c: &HtmlCanvasElement, l: &Layout, center: Option<usize>) -> Viewport {
    let (w, h) = (f64::from(c.client_width()).max(1.0), f64::from(c.client_height()).max(1.0));
    let (cx, cy) = match center.map(|n| l.nodes[n]) {
        Some(r) => (r.x + r.w / 2.0, flip(l, r.y + r.h / 2.0)),
        None => (l.width / 2.0, l.height - h / 2.0),
    };
    Viewport { x0: cx - w / 2.0, x1: cx + w / 2.0, y0: cy - h / 2.0, y1: cy + h / 2.0 }
}

/// Clusters, edges, then nodes, in layout units mapped through `f`.
fn draw(c: &HtmlCanvasElement, g: &Graph, l: &Layout, f: &Frame) {
    let Some((ctx, w, h)) = prepare_fit(c) else { return };
    let p = Palette::read();
    let scale = f.w / f.v.width();
    let rect = |r: &Rect| (f.sx(r.x), f.sy(flip(l, r.y)), r.w * scale, r.h * scale);
    let visible = |x: f64, y: f64, rw: f64, rh: f64| x + rw >= 0.0 && x <= w && y + rh >= 0.0 && y <= h;
    let font_px = (12.0 * scale).clamp(1.0, 24.0);
    ctx.set_font(&format!("{font_px:.1}px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace"));
    for (cl, r) in g.clusters.iter().zip(&l.clusters) {
        let (x, y, rw, rh) = rect(r);
        if !visible(x, y, rw, rh) || rw <= 0.0 {
            continue;
        }
        ctx.set_fill_style_str(if cl.fused {
            if p.dark {
                "#2a2d31"
            } else {
                "#f5f5f5"
            }
        } else if p.dark {
            "#1f2226"
        } else {
            "#fbfbfb"
        });
        ctx.set_stroke_style_str(if cl.highlight { "#b71c1c" } else { p.border.as_str() });
        ctx.fill_rect(x, y, rw, rh);
        ctx.stroke_rect(x, y, rw, rh);
        if scale > 0.3 {
            ctx.set_fill_style_str(&p.fg_2);
            let title = if cl.fused { format!("{} ({})", cl.caller, cl.category) } else { format!("{} of {}", cl.computation, cl.caller) };
            let _ = ctx.fill_text(&title, x + 4.0, y + font_px + 2.0);
        }
    }
    ctx.set_line_width(1.0);
    for (e, points) in g.edges.iter().zip(&l.edges) {
        let Some(&(lx, ly)) = points.last() else { continue };
        ctx.set_stroke_style_str(match e.kind {
            EdgeKind::Control => "#9e9e9e",
            EdgeKind::Subcomputation => "#607d8b",
            _ => p.fg_2.as_str(),
        });
        ctx.begin_path();
        for (k, &(x, y)) in points.iter().enumerate() {
            let (px, py) = (f.sx(x), f.sy(flip(l, y)));
            if k == 0 {
                ctx.move_to(px, py);
            } else {
                ctx.line_to(px, py);
            }
        }
        ctx.stroke();
        // The arrowhead, pointing down into the user.
        let (ax, ay) = (f.sx(lx), f.sy(flip(l, ly)));
        let s = (5.0 * scale).clamp(2.0, 8.0);
        ctx.set_fill_style_str(p.fg_2.as_str());
        ctx.begin_path();
        ctx.move_to(ax, ay);
        ctx.line_to(ax - s, ay - 1.6 * s);
        ctx.line_to(ax + s, ay - 1.6 * s);
        ctx.close_path();
        ctx.fill();
    }
    for (n, node) in g.nodes.iter().enumerate() {
        let (x, y, rw, rh) = rect(&l.nodes[n]);
        if !visible(x, y, rw, rh) {
            continue;
        }
        let (_, font, stroke, fill) = colors(node.color);
        ctx.set_fill_style_str(fill);
        ctx.set_stroke_style_str(stroke);
        ctx.set_line_width(if node.highlight { 3.0 } else { 1.0 });
        ctx.fill_rect(x, y, rw, rh);
        ctx.stroke_rect(x, y, rw, rh);
        if font_px >= 5.0 {
            ctx.set_fill_style_str(if node.color == ColorScheme::DashedBorder { "#757575" } else { font });
            for (k, line) in node_lines(g, n).iter().enumerate() {
                let _ = ctx.fill_text(line, x + 8.0 * scale, y + (k as f64 + 1.0) * LINE_HEIGHT * scale);
            }
        }
    }
    ctx.set_line_width(1.0);
}
