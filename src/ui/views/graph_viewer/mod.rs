//! The Graph tool: an HLO module's graph around one instruction (XProf's graph viewer), laid out by
//! the engine (`analysis::graph_viewer::layout`) and drawn here on a canvas, operands above users.
//! Wheel, drag and the chart keys zoom and pan; a click on a node (or on its line in the node list)
//! re-centres the graph on it. Above it, the whole module's overview (each fusion one node, laid out
//! by the engine like the neighbourhood) marks the neighbourhood's nodes; it pans and zooms the same
//! way, drawn coarsely (boxes, straight edges, no text) when zoomed out so that a frame of thousands of
//! nodes stays short, and a click on one of its nodes centres the neighbourhood there. The module,
//! node, width and colouring live in the URL. Nodes are coloured as XLA colours them (by opcode
//! category), or shaded by their op's share of the time (when the file's trace ran the module) or by
//! the bytes of the buffers they define (when the module has its buffer assignment). The centre's card
//! links back to the op's rows in the op tools and the Memory Viewer.

use crate::analysis::graph_viewer::dot::colors;
use crate::analysis::graph_viewer::layout::{node_lines, Layout, Rect, LINE_HEIGHT};
use crate::analysis::graph_viewer::{ColorScheme, EdgeKind, Graph, NodeKind, MAX_WIDTH};
use crate::engine::graph_viewer::{GraphFigures, GraphOverview, GraphView, TimeSource};
use crate::engine::protocol::request;
use crate::ui::charts::pan_zoom::PanZoom;
use crate::ui::charts::plot::redraw;
use crate::ui::charts::viewport::{Frame, Margins, Viewport};
use crate::ui::charts::{prepare_fit, Palette};
use crate::ui::components::metric::{Bytes, Count, Duration, Percent, Text};
use crate::ui::components::op_links::{show_buffers, show_occurrences, show_op_in, LinkButton};
use crate::ui::state::{AppState, GraphShade, Tool};
use crate::ui::use_engine::{use_engine, Reply};
use leptos::prelude::*;
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

/// Room around the graph the view may pan into, in layout units.
const SLACK: f64 = 2_000.0;
/// The closest zoom: this many layout units across the canvas at least.
const MIN_SPAN: f64 = 120.0;
/// The fill of a node the chosen figure says nothing of (a fused instruction has no time of its own).
const NO_FIGURE: &str = "#e0e0e0";
/// Below this zoom (screen pixels per layout unit) a graph is drawn coarsely: text would be under
/// 4 px, so boxes without text, straight edges without arrowheads, fills batched by colour.
const DETAIL_SCALE: f64 = 0.33;
/// The least size of a node drawn coarsely, and the reach of a click or hover around it, in pixels.
const MIN_NODE_PX: f64 = 2.0;
const HIT_PX: f64 = 4.0;
/// The marks of the neighbourhood's nodes in the overview are at least this wide, in pixels.
const MARK_PX: f64 = 8.0;

impl GraphShade {
    /// Instruction `name`'s figure under this shade.
    fn value(self, figures: &GraphFigures, name: &str) -> Option<f64> {
        let f = figures.by_name.get(name)?;
        match self {
            GraphShade::Category => None,
            GraphShade::Time => f.self_time_fraction,
            GraphShade::Bytes => Some(f.bytes() as f64).filter(|_| !f.buffers.is_empty()),
        }
    }

    /// The largest figure among the drawn instructions (the scale's top), `None` when none has one.
    fn max(self, figures: &GraphFigures) -> Option<f64> {
        figures.by_name.keys().filter_map(|n| self.value(figures, n)).reduce(f64::max)
    }
}

/// Each node's and each fused cluster's fill under a shade, worked out once per shade rather than
/// per frame, with the nodes in fill order (a coarse frame sets each colour once).
#[derive(Debug, Clone, PartialEq)]
struct Fills {
    /// Whether the fills are a figure's scale (dark text on them) rather than XLA's colours.
    shaded: bool,
    nodes: Vec<String>,
    /// A fused cluster's own figure's fill (its fused nodes have none); `None`: the cluster's plain fill.
    clusters: Vec<Option<String>>,
    by_fill: Vec<usize>,
}

impl Fills {
    fn new(g: &Graph, figures: &GraphFigures, shade: GraphShade) -> Self {
        let top = shade.max(figures).filter(|&m| m > 0.0);
        let shaded = |name: &str| top.map(|top| shade.value(figures, name).map(|x| heat(x / top)));
        let nodes: Vec<String> = g
            .nodes
            .iter()
            .map(|n| match shaded(&n.name) {
                Some(s) => s.unwrap_or_else(|| NO_FIGURE.to_string()),
                None => colors(n.color).3.to_string(),
            })
            .collect();
        let clusters = g.clusters.iter().map(|c| if c.fused { shaded(&c.caller).flatten() } else { None }).collect();
        let mut by_fill: Vec<usize> = (0..nodes.len()).collect();
        by_fill.sort_by(|&a, &b| nodes[a].cmp(&nodes[b]).then(a.cmp(&b)));
        Fills { shaded: top.is_some(), nodes, clusters, by_fill }
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
    // The module the engine chose, kept while a re-centred graph is on its way, so the overview is
    // asked once per module rather than once per centre.
    let chosen = RwSignal::new(None::<String>);
    Effect::new(move |_| {
        if let Some(v) = fetch.reply.get().ready() {
            if chosen.get_untracked().as_deref() != Some(v.module.as_str()) {
                chosen.set(Some(v.module.clone()));
            }
        }
    });
    // What the overview marks: the instructions the neighbourhood draws (a fusion expanded there is
    // one node in the overview) and the centre.
    let marked = Memo::new(move |_| fetch.reply.get().ready().map(|v| neighbourhood_names(&v.graph)).unwrap_or_default());
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
            <Overview file_id module=chosen marked />
            {body}
        </article>
    }
}

/// The names the neighbourhood draws, as the overview names them: its nodes, the fusions it draws
/// expanded (their clusters' callers) and its centre.
fn neighbourhood_names(g: &Graph) -> BTreeSet<String> {
    g.nodes
        .iter()
        .filter(|n| n.kind != NodeKind::Root)
        .map(|n| n.name.clone())
        .chain(g.clusters.iter().filter(|c| c.fused).map(|c| c.caller.clone()))
        .chain(std::iter::once(g.center.clone()))
        .collect()
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
    let shade = state.graph_shade;
    let fills = {
        let v = v.clone();
        Memo::new(move |_| Fills::new(&v.graph, &v.figures, shade.get()))
    };
    {
        let v = v.clone();
        redraw(canvas, move |c| {
            let (w, h) = (f64::from(c.client_width()), f64::from(c.client_height()));
            let shown = match view.get() {
                s if s.width() <= 0.0 => initial_view(c, &v.layout, center),
                // Reset (0, Esc, double-click) asks for the whole extent: the whole graph, fitted.
                s if s == full => fit(&v.layout, Rect { x: 0.0, y: 0.0, w: v.layout.width, h: v.layout.height }, w, h),
                s => s,
            };
            let shown = one_scale(shown, w, h);
            if shown != view.get_untracked() {
                view.update_untracked(|v| *v = shown);
            }
            let f = Frame { v: shown, w, h, m: Margins::NONE };
            let Some((ctx, w, h)) = prepare_fit(c) else { return false };
            fills.with(|fills| draw(&ctx, (w, h), &v.graph, &v.layout, &f, fills));
            let _ = c.set_attribute("data-shade", shade.get().slug());
            let _ = c.set_attribute("data-scale", &format!("{:.4}", f.w / f.v.width()));
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
            if let Some(n) = node_at(&hit_view.graph, &hit_view.layout, &f, px, py) {
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
fn ShadeControl(shade: RwSignal<GraphShade>, figures: GraphFigures) -> impl IntoView {
    let time_note = match figures.time_source {
        Some(TimeSource::HloStats) => "share of the device's time (HLO Op Stats)",
        Some(TimeSource::XlaOpsCpu) => "share of the XLA ops' self time on the host (XLA ops)",
        None => "the file's trace has no times for this module",
    };
    let (timed, buffered) = (figures.time_source.is_some(), figures.has_buffers);
    let bytes_note =
        if figures.has_buffers { "bytes of the buffers each instruction defines" } else { "the module carries no buffer assignment" };
    let option = move |value: GraphShade, label: &'static str, testid: &'static str, enabled: bool, title: &'static str| {
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
            _ if s == GraphShade::Category => view! { <span class="muted">"XLA's colours: blue convolution/dot, yellow elementwise, purple reductions, green data movement, grey fusions"</span> }.into_any(),
            None => view! { <span class="muted">"No drawn instruction has this figure"</span> }.into_any(),
            Some(top) => {
                let top_view = if s == GraphShade::Time {
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
            {option(GraphShade::Category, "category", "graph-shade-category", true, "XLA's colours by opcode")}
            {option(GraphShade::Time, "time", "graph-shade-time", timed, time_note)}
            {option(GraphShade::Bytes, "bytes", "graph-shade-bytes", buffered, bytes_note)}
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
                // A source path can be longer than the card is wide: wrapped anywhere, the whole path in the title.
                {node.source.clone().map(|s| {
                    let title = s.clone();
                    view! { <tr><td>"Source"</td><td class="graph-card-source" title=title><Text metric="card_source" value=s /></td></tr> }
                })}
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

/// `v` widened about its centre along one axis to the canvas's proportions: a graph is drawn at
/// one scale on both axes (boxes sized for their text), whatever the pan-and-zoom clamp left.
fn one_scale(v: Viewport, w: f64, h: f64) -> Viewport {
    let (w, h) = (w.max(1.0), h.max(1.0));
    let per_px = (v.width() / w).max(v.height() / h);
    let (cx, cy) = ((v.x0 + v.x1) / 2.0, (v.y0 + v.y1) / 2.0);
    let (hw, hh) = (w * per_px / 2.0, h * per_px / 2.0);
    let squared = Viewport { x0: cx - hw, x1: cx + hw, y0: cy - hh, y1: cy + hh };
    // Already proportioned (to rounding): kept as it is, so a redraw does not creep.
    if (squared.width() - v.width()).abs() <= 1e-9 * v.width() && (squared.height() - v.height()).abs() <= 1e-9 * v.height() {
        v
    } else {
        squared
    }
}

/// The view of `r` (layout units, y down) on a `w` × `h` canvas, at one scale on both axes, padded.
fn fit(l: &Layout, r: Rect, w: f64, h: f64) -> Viewport {
    let (w, h) = (w.max(1.0), h.max(1.0));
    let pad = 1.1;
    let per_px = (r.w / w).max(r.h / h).max(MIN_SPAN / w) * pad;
    let (cx, cy) = (r.x + r.w / 2.0, flip(l, r.y + r.h / 2.0));
    let (hw, hh) = (w * per_px / 2.0, h * per_px / 2.0);
    Viewport { x0: cx - hw, x1: cx + hw, y0: cy - hh, y1: cy + hh }
}

/// The node under pixel (`px`, `py`), or within [`HIT_PX`] of it (the nearest): a zoomed-out node
/// can be smaller than a pixel. The root tag is no instruction.
fn node_at(g: &Graph, l: &Layout, f: &Frame, px: f64, py: f64) -> Option<usize> {
    let (x, y) = (f.dx(px), flip(l, f.dy(py)));
    let reach = HIT_PX * f.v.width() / f.w;
    let distance = |r: &Rect| {
        let dx = (r.x - x).max(x - (r.x + r.w)).max(0.0);
        let dy = (r.y - y).max(y - (r.y + r.h)).max(0.0);
        dx.max(dy)
    };
    l.nodes
        .iter()
        .enumerate()
        .filter(|&(n, r)| g.nodes[n].kind != NodeKind::Root && distance(r) <= reach)
        .min_by(|a, b| distance(a.1).total_cmp(&distance(b.1)))
        .map(|(n, _)| n)
}

/// A graph on a cleared `w` × `h` canvas, in layout units mapped through `f`: in detail (clusters,
/// edges with arrowheads, nodes with their text) or, zoomed out past [`DETAIL_SCALE`], coarsely.
/// Only what is in view is drawn.
fn draw(ctx: &CanvasRenderingContext2d, (w, h): (f64, f64), g: &Graph, l: &Layout, f: &Frame, fills: &Fills) {
    let p = Palette::read();
    let scale = f.w / f.v.width();
    let rect = |r: &Rect| (f.sx(r.x), f.sy(flip(l, r.y)), r.w * scale, r.h * scale);
    let visible = |x: f64, y: f64, rw: f64, rh: f64| x + rw >= 0.0 && x <= w && y + rh >= 0.0 && y <= h;
    // An edge is drawn when the box around its points meets the canvas.
    let edge_visible = |points: &[(f64, f64)]| {
        let (mut x0, mut x1, mut y0, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, f64::INFINITY, f64::NEG_INFINITY);
        for &(x, y) in points {
            let (px, py) = (f.sx(x), f.sy(flip(l, y)));
            (x0, x1, y0, y1) = (x0.min(px), x1.max(px), y0.min(py), y1.max(py));
        }
        visible(x0, y0, x1 - x0, y1 - y0)
    };
    let detail = scale >= DETAIL_SCALE;
    let font_px = (12.0 * scale).clamp(1.0, 24.0);
    ctx.set_font(&format!("{font_px:.1}px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace"));
    ctx.set_line_width(1.0);
    for ((cl, r), shaded) in g.clusters.iter().zip(&l.clusters).zip(&fills.clusters) {
        let (x, y, rw, rh) = rect(r);
        if !visible(x, y, rw, rh) || rw <= 0.0 {
            continue;
        }
        // A fusion drawn as its cluster: shaded by its own figure, which its fused nodes lack.
        let plain = match (cl.fused, p.dark) {
            (true, true) => "#2a2d31",
            (true, false) => "#f5f5f5",
            (false, true) => "#1f2226",
            (false, false) => "#fbfbfb",
        };
        ctx.set_fill_style_str(shaded.as_deref().unwrap_or(plain));
        ctx.set_stroke_style_str(if cl.highlight { "#b71c1c" } else { p.border.as_str() });
        ctx.fill_rect(x, y, rw, rh);
        ctx.stroke_rect(x, y, rw, rh);
        if detail {
            ctx.set_fill_style_str(&p.fg_2);
            let title = if cl.fused { format!("{} ({})", cl.caller, cl.category) } else { format!("{} of {}", cl.computation, cl.caller) };
            let _ = ctx.fill_text(&title, x + 4.0, y + font_px + 2.0);
        }
    }
    if detail {
        for (e, points) in g.edges.iter().zip(&l.edges) {
            let Some(&(lx, ly)) = points.last() else { continue };
            if !edge_visible(points) {
                continue;
            }
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
    } else {
        // One path for every edge in view, each its polyline's ends.
        ctx.set_stroke_style_str(p.border.as_str());
        ctx.begin_path();
        for points in &l.edges {
            let (Some(&(ax, ay)), Some(&(bx, by))) = (points.first(), points.last()) else { continue };
            if edge_visible(&[(ax, ay), (bx, by)]) {
                ctx.move_to(f.sx(ax), f.sy(flip(l, ay)));
                ctx.line_to(f.sx(bx), f.sy(flip(l, by)));
            }
        }
        ctx.stroke();
    }
    if !detail {
        // Boxes only, each colour set once.
        let mut current = "";
        for &n in &fills.by_fill {
            let (x, y, rw, rh) = rect(&l.nodes[n]);
            if !visible(x, y, rw, rh) {
                continue;
            }
            if fills.nodes[n] != current {
                current = &fills.nodes[n];
                ctx.set_fill_style_str(current);
            }
            ctx.fill_rect(x, y, rw.max(MIN_NODE_PX), rh.max(MIN_NODE_PX));
        }
        return;
    }
    for (n, node) in g.nodes.iter().enumerate() {
        let (x, y, rw, rh) = rect(&l.nodes[n]);
        if !visible(x, y, rw, rh) {
            continue;
        }
        let (_, font, stroke, _) = colors(node.color);
        let font = if fills.shaded { "#212121" } else { font };
        ctx.set_fill_style_str(&fills.nodes[n]);
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

/// The whole module (each fusion one node) above the neighbourhood: its figures, and the canvas.
#[component]
fn Overview(file_id: u32, module: RwSignal<Option<String>>, marked: Memo<BTreeSet<String>>) -> impl IntoView {
    let fetch = use_engine("Graph overview", move || module.get().map(|module| request::GraphOverview { file_id, module }));
    let body = move || match fetch.reply.get() {
        Reply::Waiting => view! { <p class="muted loading">"Laying out the whole module…"</p> }.into_any(),
        Reply::Failed(e) => view! { <p class="banner error" data-testid="graph-overview-error">{e.to_string()}</p> }.into_any(),
        Reply::Rejected(e) => view! { <p class="banner error">{e}</p> }.into_any(),
        Reply::Ready(o) => view! { <OverviewPanel o marked /> }.into_any(),
    };
    view! {
        // Hidden until a graph has named its module (a failed first graph names none).
        <details class="graph-overview" data-testid="graph-overview" open
            style:display=move || if module.with(Option::is_none) { "none" } else { "" }
            data-state=move || if matches!(fetch.reply.get(), Reply::Ready(_)) { "ready" } else { "waiting" }>
            <summary>
                "Whole module "
                {move || fetch.elapsed_ms.get().map(|ms| view! { <span class="muted timing" data-metric="graph_overview_answer_ms" data-value=ms.to_string()>{format!("(answered in {ms:.0} ms)")}</span> })}
            </summary>
            {body}
        </details>
    }
}

/// The overview's canvas: the whole module fitted, the neighbourhood's nodes marked; a click on a
/// node centres the neighbourhood there.
#[component]
fn OverviewPanel(o: Arc<GraphOverview>, marked: Memo<BTreeSet<String>>) -> impl IntoView {
    let state = expect_context::<AppState>();
    let canvas = NodeRef::<leptos::html::Canvas>::new();
    let l = &o.layout;
    // Room to pan, and for the whole module fitted at one scale on a canvas up to 8 times wider than
    // tall (or taller than wide), which the extent must not clip.
    let span = 4.0 * l.width.max(l.height);
    let full = Viewport { x0: -span, x1: l.width + span, y0: -span, y1: l.height + span };
    // Zero until the first frame fits the module to the canvas.
    let view = RwSignal::new(Viewport { x0: 0.0, x1: 0.0, y0: 0.0, y1: 0.0 });
    let pz = PanZoom::new(canvas, view, full, Margins::NONE).min_size(MIN_SPAN, MIN_SPAN);
    let shade = state.graph_shade;
    let fills = {
        let o = o.clone();
        Memo::new(move |_| Fills::new(&o.graph, &o.figures, shade.get()))
    };
    // The marked nodes, by index: looked up once per neighbourhood.
    let by_name: Arc<HashMap<String, usize>> = Arc::new(o.graph.nodes.iter().enumerate().map(|(i, n)| (n.name.clone(), i)).collect());
    let marks = {
        let by_name = by_name.clone();
        Memo::new(move |_| marked.with(|m| m.iter().filter_map(|name| by_name.get(name).copied()).collect::<Vec<usize>>()))
    };
    let whole = Rect { x: 0.0, y: 0.0, w: l.width, h: l.height };
    {
        let o = o.clone();
        redraw(canvas, move |c| {
            let (w, h) = (f64::from(c.client_width()), f64::from(c.client_height()));
            let shown = match view.get() {
                // Unset, or reset to the whole extent (0, Esc, double-click): the module fitted.
                s if s.width() <= 0.0 || s == full => fit(&o.layout, whole, w, h),
                s => s,
            };
            let shown = one_scale(shown, w, h);
            if shown != view.get_untracked() {
                view.update_untracked(|v| *v = shown);
            }
            let f = Frame { v: shown, w, h, m: Margins::NONE };
            let Some((ctx, w, h)) = prepare_fit(c) else { return false };
            fills.with(|fills| draw(&ctx, (w, h), &o.graph, &o.layout, &f, fills));
            // The neighbourhood's nodes: outlined, never smaller than a mark.
            ctx.set_stroke_style_str("#d50000");
            ctx.set_line_width(2.0);
            let marks = marks.get();
            for &n in &marks {
                let r = o.layout.nodes[n];
                let (x, y) = (f.sx(r.x), f.sy(flip(&o.layout, r.y)));
                let (rw, rh) = ((r.w * f.w / f.v.width()).max(MARK_PX), (r.h * f.h / f.v.height()).max(MARK_PX));
                let (cx, cy) = (x + (r.w * f.w / f.v.width()) / 2.0, y + (r.h * f.h / f.v.height()) / 2.0);
                ctx.stroke_rect(cx - rw / 2.0, cy - rh / 2.0, rw, rh);
            }
            ctx.set_line_width(1.0);
            let _ = c.set_attribute("data-marked", &marks.len().to_string());
            let _ = c.set_attribute("data-detail", if f.w / f.v.width() >= DETAIL_SCALE { "true" } else { "false" });
            true
        });
    }
    // The node under the pointer, named on the canvas and in the caption.
    let hovered = RwSignal::new(None::<usize>);
    let (hover_view, click_view) = (o.clone(), o.clone());
    let frame_of_canvas = move || {
        canvas.get_untracked().map(|c| Frame {
            v: view.get_untracked(),
            w: f64::from(c.client_width()),
            h: f64::from(c.client_height()),
            m: Margins::NONE,
        })
    };
    let on_move = move |ev: web_sys::MouseEvent| {
        let Some((f, px, py)) = pz.hover(&ev) else { return };
        let n = node_at(&hover_view.graph, &hover_view.layout, &f, px, py);
        if hovered.get_untracked() != n {
            hovered.set(n);
            if let Some(c) = canvas.get_untracked() {
                let _ = c.set_attribute("data-hover", n.map_or("", |n| hover_view.graph.nodes[n].name.as_str()));
            }
        }
    };
    let on_up = move |ev: web_sys::MouseEvent| {
        let start = pz.release();
        let (px, py) = (f64::from(ev.offset_x()), f64::from(ev.offset_y()));
        // A click, not the end of a drag: the neighbourhood of the node under the pointer.
        if start.is_some_and(|(sx, sy)| (sx - px).abs() + (sy - py).abs() < 4.0) {
            let Some(f) = frame_of_canvas() else { return };
            if let Some(n) = node_at(&click_view.graph, &click_view.layout, &f, px, py) {
                state.graph_node.set(Some(click_view.graph.nodes[n].name.clone()));
            }
        }
    };
    // The neighbourhood's marks framed.
    let frame_view = o.clone();
    let frame_marks = move |_| {
        let ns = marks.get_untracked();
        let Some(c) = canvas.get_untracked() else { return };
        let l = &frame_view.layout;
        let boxes = ns.iter().map(|&n| l.nodes[n]);
        let (x0, y0, x1, y1) = boxes.fold((f64::INFINITY, f64::INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY), |b, r| {
            (b.0.min(r.x), b.1.min(r.y), b.2.max(r.x + r.w), b.3.max(r.y + r.h))
        });
        if x0.is_finite() {
            let r = Rect { x: x0, y: y0, w: x1 - x0, h: y1 - y0 };
            view.set(fit(l, r, f64::from(c.client_width()), f64::from(c.client_height())));
        }
    };
    let g = &o.graph;
    let fused = o.graph.nodes.iter().filter(|n| n.opcode == "fusion").count() as u64;
    let caption_view = o.clone();
    view! {
        <figure class="graph-overview-figure">
            <canvas
                class="chart graph-overview-canvas"
                data-testid="graph-overview-canvas"
                aria-label="The whole module, each fusion one node: wheel to zoom, drag to pan, W/S zoom, A/D pan; click a node to centre the graph on it"
                on:mousedown=move |ev: web_sys::MouseEvent| pz.press(&ev)
                on:mousemove=on_move
                on:mouseup=on_up
                on:mouseleave=move |_| {
                    pz.release();
                }
                {..pz.attributes()}
            ></canvas>
            <figcaption class="muted">
                <code>{g.computation.clone()}</code> " and the computations it calls: "
                <Count metric="overview_nodes" value=g.nodes.iter().filter(|n| n.kind != NodeKind::Root).count() as u64 /> " nodes ("
                <Count metric="overview_fusions" value=fused /> " fusions, each one node), "
                <Count metric="overview_edges" value=g.edges.len() as u64 /> " edges, "
                <Count metric="overview_clusters" value=g.clusters.len() as u64 /> " called computations; "
                {move || view! { <Count metric="overview_marked" value=marks.get().len() as u64 /> }} " marked (the graph below). "
                <button class="btn" data-testid="overview-frame" title="Zoom the overview to the graph below" on:click=frame_marks>"Frame the graph below"</button>
                // The node under the pointer on a line of its own, kept when empty: the page below
                // does not move as the pointer crosses the overview.
                <span class="graph-overview-hover" style="display:block;min-height:1.5em">
                    {move || hovered.get().map(|n| {
                        let node = &caption_view.graph.nodes[n];
                        view! { "Pointer on " <Text metric="overview_hover" value=node.name.clone() /> " (" {node.opcode.clone()} ")" }
                    })}
                </span>
            </figcaption>
            {o.graph.notes.iter().map(|n| view! { <p class="banner" data-testid="graph-overview-note">{n.clone()}</p> }).collect_view()}
        </figure>
    }
}
