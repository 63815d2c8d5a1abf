//! A pie chart of shares (XProf's "grouped by type" charts): slices clockwise from the top in the
//! order given, a legend of the largest, and a hover card naming the slice under the pointer.

use super::plot::redraw;
use super::{prepare_fit, Palette};
use crate::ui::components::metric::Percent;
use leptos::prelude::*;
use std::f64::consts::{FRAC_PI_2, TAU};
use std::sync::Arc;

/// Slice colours, cycled: mid-tone hues that read on both themes.
const COLORS: [&str; 10] = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"];
/// Slices named in the legend; the rest are reached by hovering.
const LEGEND_SLICES: usize = 8;
/// How far the hovered slice stands out, in CSS pixels.
const POP_PX: f64 = 5.0;

/// One slice: its label, its value (what the hover card shows, through the chart's `value_text`)
/// and its share of the whole.
#[derive(Debug, Clone, PartialEq)]
pub struct PieSlice {
    pub label: String,
    pub value: f64,
    pub fraction: f64,
}

/// The slice whose colour is `i`'s.
fn color(i: usize) -> &'static str {
    COLORS[i % COLORS.len()]
}

/// The slice under offset (`dx`, `dy`) from the centre of a pie of radius `r` whose slices have
/// `fractions`, clockwise from the top.
fn slice_at(fractions: impl Iterator<Item = f64>, dx: f64, dy: f64, r: f64) -> Option<usize> {
    if dx.hypot(dy) > r + POP_PX {
        return None;
    }
    let turn = (dy.atan2(dx) + FRAC_PI_2).rem_euclid(TAU) / TAU;
    let mut end = 0.0;
    let mut last = None;
    for (i, f) in fractions.enumerate() {
        end += f;
        last = Some(i);
        if turn < end {
            return Some(i);
        }
    }
    last.filter(|_| end > 0.0)
}

/// The pie of `slices` titled `title`; `value_text` writes a slice's value in the hover card. The
/// canvas is `data-testid=testid`, the legend's shares are metric `metric` keyed by label.
#[component]
pub fn PieChart(
    title: &'static str,
    slices: Arc<Vec<PieSlice>>,
    testid: &'static str,
    metric: &'static str,
    value_text: Arc<dyn Fn(f64) -> String + Send + Sync>,
    /// When set, the legend also shows each slice's value (`value_text`), as this metric keyed by label.
    value_metric: Option<&'static str>,
) -> impl IntoView {
    let canvas = NodeRef::<leptos::html::Canvas>::new();
    let hovered = RwSignal::new(None::<usize>);
    let geometry = StoredValue::new((0.0f64, 0.0f64, 0.0f64)); // centre x, centre y, radius
    {
        let slices = slices.clone();
        redraw(canvas, move |c| {
            let hover = hovered.get();
            let Some((ctx, w, h)) = prepare_fit(c) else { return false };
            let p = Palette::read();
            let (cx, cy, r) = (w / 2.0, h / 2.0, (w.min(h) / 2.0 - POP_PX - 2.0).max(1.0));
            geometry.set_value((cx, cy, r));
            let mut start = -FRAC_PI_2;
            for (i, s) in slices.iter().enumerate() {
                let end = start + s.fraction * TAU;
                let rr = if hover == Some(i) { r + POP_PX } else { r };
                ctx.begin_path();
                ctx.move_to(cx, cy);
                let _ = ctx.arc(cx, cy, rr, start, end);
                ctx.close_path();
                ctx.set_fill_style_str(color(i));
                ctx.fill();
                ctx.set_stroke_style_str(&p.bg);
                ctx.set_line_width(1.0);
                ctx.stroke();
                start = end;
            }
            let _ = c.set_attribute("data-slices", &slices.len().to_string());
            true
        });
    }
    let on_move = {
        let slices = slices.clone();
        move |ev: web_sys::MouseEvent| {
            let (cx, cy, r) = geometry.get_value();
            let at = slice_at(slices.iter().map(|s| s.fraction), f64::from(ev.offset_x()) - cx, f64::from(ev.offset_y()) - cy, r);
            if hovered.get_untracked() != at {
                hovered.set(at);
            }
        }
    };
    let card = {
        let (slices, value_text) = (slices.clone(), value_text.clone());
        move || {
            let s = slices.get(hovered.get()?)?.clone();
            let value = value_text(s.value);
            Some(view! {
                <div class="pie-card" data-testid=format!("{testid}-card")>
                    <strong>{s.label.clone()}</strong>
                    <div>{value} " · " {format!("{:.2} %", s.fraction * 100.0)}</div>
                </div>
            })
        }
    };
    let legend = slices
        .iter()
        .take(LEGEND_SLICES)
        .enumerate()
        .map(|(i, s)| {
            view! {
                <li>
                    <i style=format!("background:{}", color(i))></i>
                    <span class="pie-label" title=s.label.clone()>{s.label.clone()}</span>
                    {value_metric.map(|value_metric| {
                        let (value_text, value) = (value_text.clone(), s.value);
                        view! {
                            <span class="pie-value" data-metric=value_metric data-key=s.label.clone() data-value=value.to_string()>
                                {move || value_text(value)}
                            </span>
                        }
                    })}
                    <Percent metric value=s.fraction key=s.label.clone() />
                </li>
            }
        })
        .collect_view();
    let more = slices.len().saturating_sub(LEGEND_SLICES);
    view! {
        <figure class="pie">
            <figcaption>{title}</figcaption>
            <div class="pie-body">
                <div class="pie-plot">
                    <canvas
                        node_ref=canvas
                        data-testid=testid
                        on:mousemove=on_move
                        on:mouseleave=move |_| hovered.set(None)
                    ></canvas>
                    {card}
                </div>
                <ul class="pie-legend">
                    {legend}
                    {(more > 0).then(|| view! { <li class="muted">{format!("+ {more} more (hover the chart)")}</li> })}
                </ul>
            </div>
        </figure>
    }
}
