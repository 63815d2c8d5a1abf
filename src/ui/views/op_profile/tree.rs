//! The Op Profile tree as a virtualised list: only the rows on screen (plus a margin) are in the DOM,
//! and one canvas behind them, the height of the scroll box, draws each visible row's share of the
//! root's time as a bar across the row (XProf's bars), so thousands of nodes scroll smoothly.
//! Rows expand and collapse with a click or the keyboard (arrows, Enter, Home, End).

use super::colors::{bandwidth_color, flops_color};
use super::rows::Line;
use crate::engine::op_profile::OpProfileView;
use crate::ui::charts::plot::redraw;
use crate::ui::charts::{prepare_fit, Palette};
use crate::ui::components::metric::{Duration, Percent};
use crate::ui::components::table::{rows_in_dom, ROW_H_PX};
use leptos::attr::any_attribute::IntoAnyAttribute;
use leptos::attr::custom::custom_attribute;
use leptos::prelude::*;
use std::collections::HashSet;
use std::sync::Arc;

/// Height of the scroll box in CSS pixels (the stylesheet's `.opp-scroll`).
const TREE_H_PX: f64 = 560.0;

/// Where the user is in the tree, shared with the details card.
#[derive(Clone, Copy)]
pub struct TreeState {
    pub expanded: RwSignal<HashSet<u32>>,
    pub selected: RwSignal<Option<u32>>,
    pub hovered: RwSignal<Option<u32>>,
}

/// The tree of `view` as `lines` lay it out.
#[component]
pub fn Tree(view: Arc<OpProfileView>, lines: Memo<Vec<Line>>, state: TreeState) -> impl IntoView {
    let scroll_top = RwSignal::new(0.0f64);
    let scroller = NodeRef::<leptos::html::Div>::new();
    let canvas = NodeRef::<leptos::html::Canvas>::new();
    let in_dom = Memo::new(move |_| rows_in_dom(lines.with(Vec::len), scroll_top.get(), TREE_H_PX));

    {
        let view = view.clone();
        redraw(canvas, move |c| {
            let top = scroll_top.get();
            let Some((ctx, w, h)) = prepare_fit(c) else { return false };
            let p = Palette::read();
            ctx.set_fill_style_str(&p.var("--opp-bar"));
            let mut drawn = 0;
            lines.with(|lines| {
                let first = (top / ROW_H_PX).floor() as usize;
                let last = (((top + h) / ROW_H_PX).ceil() as usize).min(lines.len());
                for (i, line) in lines.iter().enumerate().take(last).skip(first) {
                    if let Line::Node { node, .. } = *line {
                        let y = i as f64 * ROW_H_PX - top;
                        ctx.fill_rect(0.0, y + 1.0, w * view.nodes.time_fraction[node as usize], ROW_H_PX - 2.0);
                        drawn += 1;
                    }
                }
            });
            let _ = c.set_attribute("data-bars", &drawn.to_string());
            true
        });
    }

    let row = {
        let view = view.clone();
        move |(i, line): (usize, Line)| match line {
            Line::LeftOut { depth, count } => view! {
                <div class="opp-row opp-leftout" data-line=i>
                    <span></span>
                    <span class="muted" style=indent(depth)>{format!("{count} categories or ops have been left out.")}</span>
                </div>
            }
            .into_any(),
            Line::Node { node, depth, has_children, expanded } => node_row(&view, node, depth, has_children, expanded, i, state).into_any(),
        }
    };

    let on_key = move |ev: web_sys::KeyboardEvent| {
        let Some(next) = lines.with_untracked(|l| key_move(l, state, &ev.key())) else { return };
        ev.prevent_default();
        if let Some(el) = scroller.get_untracked() {
            // Keep the selected row inside the box.
            let (top, y) = (f64::from(el.scroll_top()), next as f64 * ROW_H_PX);
            if y < top {
                el.set_scroll_top(y as i32);
            } else if y + ROW_H_PX > top + TREE_H_PX {
                el.set_scroll_top((y + ROW_H_PX - TREE_H_PX).ceil() as i32);
            }
        }
    };

    view! {
        <div class="opp-tree" data-testid="opp-tree" data-rows=move || lines.with(Vec::len).to_string()>
            <div class="opp-row opp-head" aria-hidden="true">
                <span>"Time"</span>
                <span>"Name"</span>
                <span class="r">"Total time"</span>
                <span class="r" title="FLOP rate over the device's peak (XProf's FLOPS utilization)">"FLOPS"</span>
                <span class="r" title="HBM bandwidth over the device's peak">"HBM bw"</span>
                <span class="r" title="Time share × (1 − max(FLOPS, HBM utilization)), XProf's wasted time">"Wasted"</span>
            </div>
            <div
                class="opp-scroll"
                role="tree"
                tabindex="0"
                node_ref=scroller
                style=format!("height:{TREE_H_PX}px")
                on:scroll=move |_| {
                    if let Some(el) = scroller.get_untracked() {
                        scroll_top.set(f64::from(el.scroll_top()));
                    }
                }
                on:keydown=on_key
                on:mouseleave=move |_| state.hovered.set(None)
            >
                <canvas class="opp-bars" node_ref=canvas data-testid="opp-bars" style=format!("height:{TREE_H_PX}px;margin-bottom:-{TREE_H_PX}px")></canvas>
                <div style=move || format!("height:{}px", in_dom.get().start as f64 * ROW_H_PX)></div>
                <For
                    each=move || {
                        let range = in_dom.get();
                        lines.with(|l| l[range.clone()].iter().copied().enumerate().map(|(k, line)| (range.start + k, line)).collect::<Vec<_>>())
                    }
                    key=|x| *x
                    children=row
                />
                <div style=move || format!("height:{}px", lines.with(Vec::len).saturating_sub(in_dom.get().end) as f64 * ROW_H_PX)></div>
            </div>
        </div>
    }
}

fn indent(depth: u16) -> String {
    format!("padding-left:{}em", f64::from(depth) * 1.2)
}

/// One node's row: its share (the bar behind it is the canvas's), name, time and utilisations.
fn node_row(
    view: &OpProfileView,
    node: u32,
    depth: u16,
    has_children: bool,
    expanded: bool,
    line: usize,
    state: TreeState,
) -> impl IntoView {
    let n = &view.nodes;
    let i = node as usize;
    let name = n.name[i].clone();
    let flops = n.flops_utilization[i];
    let hbm = n.bandwidth_utilization[0][i];
    let maybe = move |metric: &'static str, v: Option<f64>, key: String| match v {
        Some(v) => view! { <Percent metric value=v key /> }.into_any(),
        None => view! { <span class="muted" data-metric=metric data-value="" data-key=key>"-"</span> }.into_any(),
    };
    let toggle = move || {
        if has_children {
            state.expanded.update(|e| {
                if !e.remove(&node) {
                    e.insert(node);
                }
            });
        }
    };
    // `aria-level` has no typed attribute in Leptos: it goes in as a custom one.
    let level = vec![custom_attribute("aria-level", (depth + 1).to_string()).into_any_attr()];
    view! {
        <div
            class="opp-row"
            class:op=n.is_op[i]
            class:selected=move || state.selected.get() == Some(node)
            role="treeitem"
            aria-expanded=has_children.then(|| expanded.to_string())
            data-node=node
            data-line=line
            data-name=name.clone()
            title=n.expression[i].clone()
            on:mouseenter=move |_| state.hovered.set(Some(node))
            on:click=move |_| {
                state.selected.set(Some(node));
                toggle();
            }
            {..level}
        >
            <span class="r"><Percent metric="time_fraction" value=n.time_fraction[i] key=name.clone() /></span>
            <span class="opp-name" style=indent(depth)>
                <span class="disc" aria-hidden="true">{if !has_children { "" } else if expanded { "▼" } else { "▶" }}</span>
                {name.clone()}
            </span>
            <span class="r"><Duration metric="time_us" value_us=n.raw_time_ps[i] as f64 / 1e6 key=name.clone() /></span>
            <span class="r">{maybe("flops_utilization", flops, name.clone())}<i class="dot" style=format!("background:{}", flops_color(flops))></i></span>
            <span class="r">{maybe("hbm_utilization", hbm, name.clone())}<i class="dot" style=format!("background:{}", bandwidth_color(hbm))></i></span>
            <span class="r">{maybe("wasted_fraction", n.wasted_fraction[i], name.clone())}</span>
        </div>
    }
}

/// Applies key `key` to the selection and expansion; returns the line now selected, `None` when the
/// key is not one of the tree's.
fn key_move(lines: &[Line], state: TreeState, key: &str) -> Option<usize> {
    let nodes: Vec<(usize, u32, u16, bool, bool)> = lines
        .iter()
        .enumerate()
        .filter_map(|(i, l)| match *l {
            Line::Node { node, depth, has_children, expanded } => Some((i, node, depth, has_children, expanded)),
            Line::LeftOut { .. } => None,
        })
        .collect();
    if nodes.is_empty() {
        return None;
    }
    let at = state.selected.get_untracked().and_then(|s| nodes.iter().position(|n| n.1 == s));
    let set_expanded = |node: u32, open: bool| {
        state.expanded.update(|e| {
            if open {
                e.insert(node);
            } else {
                e.remove(&node);
            }
        })
    };
    let to = match (key, at) {
        ("ArrowDown", None) | ("Home", _) => 0,
        ("ArrowUp", None) | ("End", _) => nodes.len() - 1,
        ("ArrowDown", Some(k)) => (k + 1).min(nodes.len() - 1),
        ("ArrowUp", Some(k)) => k.saturating_sub(1),
        ("ArrowRight", Some(k)) => {
            let (_, node, _, has_children, expanded) = nodes[k];
            if has_children && !expanded {
                set_expanded(node, true);
                k
            } else {
                (k + 1).min(nodes.len() - 1)
            }
        }
        ("ArrowLeft", Some(k)) => {
            let (_, node, depth, _, expanded) = nodes[k];
            if expanded {
                set_expanded(node, false);
                k
            } else {
                // The parent: the nearest row above with a smaller depth.
                nodes[..k].iter().rposition(|n| n.2 < depth).unwrap_or(k)
            }
        }
        ("Enter" | " ", Some(k)) => {
            let (_, node, _, has_children, expanded) = nodes[k];
            if has_children {
                set_expanded(node, !expanded);
            }
            k
        }
        _ => return None,
    };
    state.selected.set(Some(nodes[to].1));
    Some(nodes[to].0)
}

/// The nodes whose names contain `needle` (lower case), for the search.
pub fn matches(view: &OpProfileView, needle: &str) -> Vec<bool> {
    view.nodes.name.iter().map(|n| n.to_lowercase().contains(needle)).collect()
}

/// Marks `node`'s ancestors expanded, so it is on screen.
pub fn reveal(view: &OpProfileView, node: u32, expanded: &mut HashSet<u32>) {
    let mut p = view.nodes.parent[node as usize];
    while p != 0 {
        expanded.insert(p);
        p = view.nodes.parent[p as usize];
    }
}
