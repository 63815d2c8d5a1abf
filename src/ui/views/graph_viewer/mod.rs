//! The Graph tool: an HLO module's graph around one instruction (XProf's graph viewer), laid out by
//! the engine (`analysis::graph_viewer::layout`) and drawn here on a canvas, operands above users.
//! Wheel, drag and the chart keys zoom and pan; a click on a node (or on its line in the node list)
//! re-centres the graph on it. The module, node and width live in the URL. Nodes are coloured as XLA
//! colours them (by opcode category), or shaded by their op's share of the time (when the file's trace
//! ran the module) or by the bytes of the buffers they define (when the module has its buffer
//! assignment). The centre's card links back to the op's rows in the op tools and the Memory Viewer.

use crate::analysis::graph_viewer::dot::colors;
use crate::analysis::graph_viewer::layout::{node_lines, Layout, Rect, LINE_HEIGHT};
use crate::analysis::graph_viewer::{ColorScheme, EdgeKind, Graph, NodeKind, MAX_WIDTH};
use crate::engine::graph_viewer::{GraphFigures, GraphView, TimeSource};
use crate::engine::protocol::request;
use crate::ui::charts::pan_zoom::PanZoom;
use crate::ui::charts::plot::redraw;
use crate::ui::charts::viewport::{Frame, Margins, Viewport};
use crate::ui::charts::{prepare_fit, Palette};
use crate::ui::components::metric::{Bytes, Count, Duration, Percent, Text};
use crate::ui::components::op_links::{show_buffers, show_occurrences, show_op_in, LinkButton};
use crate::ui::state::{AppState, Tool};
use crate::ui::use_engine::{use_engine, Reply};
use leptos::prelude::*;
use std::sync::Arc;
use web_sys::HtmlCanvasElement;

/// Room around the graph the view may pan into, in layout units.
const SLACK: f64 = 2_000.0;
/// The closest zoom: this many layout units across the canvas at least.
const MIN_SPAN: f64 = 120.0;
/// The fill of a node the chosen figure says nothing of (a fused instruction has no time of its own).
const NO_FIGURE: &str = "#e0e0e0";

/// What the nodes' fill shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shade {
    /// XLA's colours, by opcode category.
    Category,
    /// The op's share of the time (its op table row's self-time fraction).
    Time,
    /// The bytes of the buffers the instruction defines.
    Bytes,
}

impl Shade {
    /// Instruction `name`'s figure under this shade.
    fn value(self, figures: &GraphFigures, name: &str) -> Option<f64> {
        let f = figures.by_name.get(name)?;
        match self {
            Shade::Category => None,
            Shade::Time => f.self_time_fraction,
            Shade::Bytes => Some(f.bytes() as f64).filter(|_| !f.buffers.is_empty()),
        }
    }

    /// The largest figure among the drawn instructions (the scale's top), `None` when none has one.
    fn max(self, figures: &GraphFigures) -> Option<f64> {
        figures.by_name.keys().filter_map(|n| self.value(figures, n)).reduce(f64::max)
    }
}

/// The fill for `t` in 0–1 of the scale: pale yellow through orange to dark red.
fn heat(t: f64) -> String {
    const STOPS: [(f64, f64, f64); 3] = [(255.0, 247.0, 220.0), (253.0, 141.0, 60.0), (165.0, 15.0, 21.0)];
    let t = t.clamp(0.0, 1.0) * 2.0;
    let (k, u) = if t < 1.0 { (0, t) } else { (1, t - 1.0) };
    let (a, b) = (STOPS[k], STOPS[k + 1]);
    let mix = |x: f64, y: f64| (x + (y - x) * u).round() as u8;
    format!("rgb({},{},{})", mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

#[component]
pub fn GraphViewerView(file_id: u32) -> impl IntoView {
    let state = expect_context::<AppState>();
    let fetch = use_engine("Graph Viewer", move || {
        Some(request::GraphViewer { file_id, module: state.module.get(), node: state.graph_node.get(), width: state.graph_width.get() })
    });
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
            // The worker's time for the graph, its figures and its layout (bench/graph_layout.mjs reads it).
            {move || fetch.elapsed_ms.get().map(|ms| view! { <span class="muted timing" data-metric="graph_answer_ms" data-value=ms.to_string()>{format!("answered in {ms:.0} ms")}</span> })}
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
    // The centre: its node, or the cluster of a fusion at the centre drawn as its fused computation.
    let center = g
        .nodes
        .iter()
        .position(|n| n.highlight)
        .map(|n| l.nodes[n])
        .or_else(|| g.clusters.iter().position(|c| c.highlight).map(|c| l.clusters[c]));
    let shade = RwSignal::new(Shade::Category);
    {
        let v = v.clone();
        redraw(canvas, move |c| {
            let mut shown = view.get();
            if shown.width() <= 0.0 {
                shown = initial_view(c, &v.layout, center);
                view.update_untracked(|v| *v = shown);
            }
            let f = Frame { v: shown, w: f64::from(c.client_width()), h: f64::from(c.client_height()), m: Margins::NONE };
            let shade = shade.get();
            let top = shade.max(&v.figures).filter(|&m| m > 0.0);
            let fill = |name: &str| top.map(|top| shade.value(&v.figures, name).map(|x| heat(x / top)));
            draw(c, &v.graph, &v.layout, &f, &fill);
            let _ = c.set_attribute("data-shade", &format!("{shade:?}").to_lowercase());
            if let Some(r) = center {
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
    let card = g.center_node.clone().map(|node| view! { <Card node v=v.clone() /> });
    let list: Vec<_> = g
        .nodes
        .iter()
        .filter(|n| n.kind != NodeKind::Root)
        .map(|n| {
            let name = n.name.clone();
            let (go, label) = (name.clone(), name.clone());
            let f = v.figures.by_name.get(&name);
            let time = f.and_then(|f| f.self_time_fraction).map(|x| view! { " " <Percent metric="node_time_fraction" value=x key=name.clone() /> });
            let bytes = f.filter(|f| !f.buffers.is_empty()).map(|f| view! { " " <Bytes metric="node_bytes" value=f.bytes() key=name.clone() /> });
            view! {
                <li>
                    <button class="btn link" data-metric="graph_node" data-value=name.clone() data-opcode=n.opcode.clone() on:click=move |_| state.graph_node.set(Some(go.clone()))>
                        {label}
                    </button>
                    " " <span class="muted">{n.opcode.clone()} " " {n.shape.clone()}</span>
                    {time}
                    {bytes}
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
                <ShadeControl shade figures=v.figures.clone() />
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

/// The colouring choice and its legend: XLA's categories, or a scale from no figure to the largest
/// figure among the drawn instructions.
#[component]
fn ShadeControl(shade: RwSignal<Shade>, figures: GraphFigures) -> impl IntoView {
    let time_note = match figures.time_source {
        Some(TimeSource::HloStats) => "share of the device's time (HLO Op Stats)",
        Some(TimeSource::XlaOpsCpu) => "share of the XLA ops' self time on the host (XLA ops)",
        None => "the file's trace has no times for this module",
    };
    let (timed, buffered) = (figures.time_source.is_some(), figures.has_buffers);
    let bytes_note =
        if figures.has_buffers { "bytes of the buffers each instruction defines" } else { "the module carries no buffer assignment" };
    let option = move |value: Shade, label: &'static str, testid: &'static str, enabled: bool, title: &'static str| {
        view! {
            <label class="field" title=title>
                <input type="radio" name="graph-shade" data-testid=testid disabled=!enabled
                    prop:checked=move || shade.get() == value on:change=move |_| shade.set(value) />
                " " {label}
            </label>
        }
    };
    let legend = move || {
        let s = shade.get();
        match s.max(&figures) {
            _ if s == Shade::Category => view! { <span class="muted">"XLA's colours: blue convolution/dot, yellow elementwise, purple reductions, green data movement, grey fusions"</span> }.into_any(),
            None => view! { <span class="muted">"No drawn instruction has this figure"</span> }.into_any(),
            Some(top) => {
                let top_view = if s == Shade::Time {
                    view! { <Percent metric="graph_shade_max" value=top /> }.into_any()
                } else {
                    view! { <Bytes metric="graph_shade_max" value=top as i64 /> }.into_any()
                };
                view! {
                    <span class="graph-legend" data-testid="graph-legend">
                        <span class="graph-legend-none" style=format!("background:{NO_FIGURE}") title="no figure"></span>
                        " none · 0 "
                        <span class="graph-legend-bar" style=format!("background:linear-gradient(to right,{},{},{})", heat(0.0), heat(0.5), heat(1.0))></span>
                        " " {top_view}
                    </span>
                }
                .into_any()
            }
        }
    };
    view! {
        <div class="graph-shade" data-testid="graph-shade">
            <span class="field-label">"Colour "</span>
            {option(Shade::Category, "category", "graph-shade-category", true, "XLA's colours by opcode")}
            {option(Shade::Time, "time", "graph-shade-time", timed, time_note)}
            {option(Shade::Bytes, "bytes", "graph-shade-bytes", buffered, bytes_note)}
            " " {legend}
        </div>
    }
}

/// The centre instruction's card: what XLA says of it, what the trace and the buffer assignment
/// say, and links to its rows in the other tools.
#[component]
fn Card(node: crate::analysis::graph_viewer::Node, v: Arc<GraphView>) -> impl IntoView {
    let state = expect_context::<AppState>();
    let f = v.figures.by_name.get(&node.name).cloned().unwrap_or_default();
    let time = f.self_time_us.map(|us| {
        view! {
            <tr><td>"Self time"</td><td>
                <Duration metric="card_self_time_us" value_us=us />
                {f.self_time_fraction.map(|x| view! { " (" <Percent metric="card_time_fraction" value=x /> ")" })}
                {f.occurrences.map(|n| view! { ", " <Count metric="card_occurrences" value=n /> " runs" })}
            </td></tr>
        }
    });
    let flops = f.flop_rate.map(|r| view! { <tr><td>"FLOP rate"</td><td><Text metric="card_flop_rate" value=r.to_string() shown=format!("{r:.2} GFLOP/s") /></td></tr> });
    let buffers = (!f.buffers.is_empty()).then(|| {
        let rows = f.buffers.iter().map(|(name, size)| view! { <li><code>{name.clone()}</code> " " <Bytes metric="card_buffer_bytes" value=*size key=name.clone() /></li> }).collect_view();
        view! { <tr><td>"Buffers"</td><td><ul class="graph-card-buffers">{rows}</ul></td></tr> }
    });
    // Back to the op: its rows in the op tools the file has times from, its buffers, its events.
    let (module, name) = (v.module.clone(), node.name.clone());
    let tool_link = move |tool: Tool, testid: &'static str, label: &'static str| {
        let op = name.clone();
        view! { <LinkButton testid label title=format!("{}: the row of {op}", tool.title()) go=move || show_op_in(state, tool, op.clone()) /> }
    };
    let tables = match v.figures.time_source {
        Some(TimeSource::HloStats) => view! {
            {tool_link(Tool::OpProfile, "node-show-op-profile", "op profile")}
            {tool_link(Tool::HloStats, "node-show-hlo-stats", "HLO ops")}
            {tool_link(Tool::RooflineModel, "node-show-roofline", "roofline")}
        }
        .into_any(),
        Some(TimeSource::XlaOpsCpu) => tool_link(Tool::XlaOpsCpu, "node-show-xla-ops", "XLA ops").into_any(),
        None => ().into_any(),
    };
    let buffer_link = v.figures.has_buffers.then(|| {
        let (m, op) = (module.clone(), node.name.clone());
        view! { <LinkButton testid="node-show-buffers" label="buffers" title=format!("Memory Viewer: {module}, the buffers {op} defines highlighted") go=move || show_buffers(state, m.clone(), Some(op.clone())) /> }
    });
    let events = v.figures.time_source.map(|_| {
        let op = node.name.clone();
        view! { <LinkButton testid="node-show-occurrences" label="occurrences" title=format!("Trace Viewer: the events of {op}") go=move || show_occurrences(state, op.clone()) /> }
    });
    view! {
        <aside class="graph-card hover-card" data-testid="graph-card">
            <div class="hc-title"><code><Text metric="card_name" value=node.name.clone() /></code></div>
            <table>
                <tr><td>"Opcode"</td><td><Text metric="card_opcode" value=node.opcode.clone() /></td></tr>
                <tr><td>"Shape"</td><td><code><Text metric="card_shape" value=node.shape.clone() /></code></td></tr>
                {node.framework_op.clone().map(|op| view! { <tr><td>"Framework op"</td><td><Text metric="card_framework_op" value=op /></td></tr> })}
                {node.source.clone().map(|s| view! { <tr><td>"Source"</td><td><Text metric="card_source" value=s /></td></tr> })}
                {time}
                {flops}
                {buffers}
            </table>
            <pre class="hlo-text" data-metric="card_hlo_text" data-value=node.expression.clone()>{node.expression.clone()}</pre>
            <div class="op-links graph-card-links">{tables}{buffer_link}{events}</div>
        </aside>
    }
}

/// Layout y (down) as viewport y (up).
fn flip(l: &Layout, y: f64) -> f64 {
    l.height - y
}

/// The centre (its node or cluster; else the graph's top) at zoom 1.
fn initial_view(c: &HtmlCanvasElement, l: &Layout, center: Option<Rect>) -> Viewport {
    let (w, h) = (f64::from(c.client_width()).max(1.0), f64::from(c.client_height()).max(1.0));
    let (cx, cy) = match center {
        Some(r) => (r.x + r.w / 2.0, flip(l, r.y + r.h / 2.0)),
        None => (l.width / 2.0, l.height - h / 2.0),
    };
    Viewport { x0: cx - w / 2.0, x1: cx + w / 2.0, y0: cy - h / 2.0, y1: cy + h / 2.0 }
}

/// Clusters, edges, then nodes, in layout units mapped through `f`. `shade` gives an instruction's
/// fill under a figure (`Some(None)`: it has none), `None` for XLA's colours.
fn draw(c: &HtmlCanvasElement, g: &Graph, l: &Layout, f: &Frame, shade: &dyn Fn(&str) -> Option<Option<String>>) {
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
        // A fusion drawn as its cluster: shaded by its own figure, which its fused nodes lack.
        let shaded = if cl.fused { shade(&cl.caller).flatten() } else { None };
        ctx.set_fill_style_str(shaded.as_deref().unwrap_or(if cl.fused {
            if p.dark {
                "#2a2d31"
            } else {
                "#f5f5f5"
            }
        } else if p.dark {
            "#1f2226"
        } else {
            "#fbfbfb"
        }));
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
        let shaded = shade(&node.name).map(|s| s.unwrap_or_else(|| NO_FIGURE.to_string()));
        let (font, fill) = match &shaded {
            Some(s) => ("#212121", s.as_str()),
            None => (font, fill),
        };
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
