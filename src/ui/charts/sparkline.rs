//! One value per snapshot of a series: as bars with a value axis (live bytes per snapshot), or as a
//! sparkline for small multiples (one stack's bytes through the series). Hover names the snapshot
//! and its exact value.

use super::axis::{y_axis, Style};
use super::viewport::{Frame, Margins, Viewport};
use super::{font, observe_width, prepare, Palette};
use crate::ui::components::metric::Bytes;
use crate::ui::state::AppState;
use leptos::prelude::*;
use std::sync::Arc;

/// Room for the value axis labels (bars) and the snapshot labels below them.
const AXIS_W: f64 = 64.0;
const LABEL_H: f64 = 16.0;

/// The chart's frame: snapshot `i` spans x `i..i + 1` (its bar or point at the middle), y spans the
/// values and 0; bars leave room for the value axis and the snapshot labels.
fn frame(values: &[i64], width: f64, height: f64, bars: bool) -> Frame {
    let lo = values.iter().copied().min().unwrap_or(0).min(0) as f64;
    let hi = values.iter().copied().max().unwrap_or(0).max(0) as f64;
    let m = if bars {
        Margins { left: AXIS_W, right: 0.0, top: 6.0, bottom: LABEL_H }
    } else {
        Margins { left: 0.0, right: 0.0, top: 3.0, bottom: 3.0 }
    };
    let v = Viewport { x0: 0.0, x1: values.len().max(1) as f64, y0: lo, y1: if hi > lo { hi } else { lo + 1.0 } };
    Frame { v, w: width, h: height, m }
}

#[allow(clippy::too_many_arguments)]
fn draw(
    canvas: &web_sys::HtmlCanvasElement,
    values: &[i64],
    labels: &[String],
    width: f64,
    height: f64,
    bars: bool,
    colour_var: &str,
    hovered: Option<usize>,
    format: impl Fn(i64) -> String,
) {
    let Some(ctx) = prepare(canvas, width, height) else { return };
    let pal = Palette::read();
    let colour = pal.var(colour_var);
    let f = frame(values, width, height, bars);
    let y = |v: f64| f.sy(v);
    let x: Vec<f64> = (0..values.len()).map(|i| f.sx(i as f64 + 0.5)).collect();
    let step = f.plot_w() / values.len().max(1) as f64;
    if bars {
        y_axis(&ctx, &f, &pal, Style { grid: true, ..Style::default() }, |v, _| format(v.round() as i64));
        ctx.set_font(&font(10));
        ctx.set_text_align("center");
        ctx.set_text_baseline("top");
        // Label every k-th snapshot so labels never overlap.
        let widest = labels.iter().map(|l| ctx.measure_text(l).map_or(40.0, |m| m.width())).fold(0.0, f64::max);
        let every = ((widest + 8.0) / step).ceil().max(1.0) as usize;
        for (i, v) in values.iter().enumerate() {
            let bw = (step * 0.7).max(1.0);
            let (y0, y1) = (y(0.0), y(*v as f64));
            ctx.set_fill_style_str(if hovered == Some(i) { &pal.fg } else { &colour });
            ctx.fill_rect(x[i] - bw / 2.0, y0.min(y1), bw, (y1 - y0).abs().max(1.0));
            if i % every == 0 {
                ctx.set_fill_style_str(&pal.fg_2);
                let _ = ctx.fill_text(labels.get(i).map_or("", String::as_str), x[i], f.plot_bottom() + 3.0);
            }
        }
        return;
    }
    ctx.set_stroke_style_str(&colour);
    ctx.set_line_width(1.5);
    ctx.begin_path();
    for (i, v) in values.iter().enumerate() {
        if i == 0 {
            ctx.move_to(x[i], y(*v as f64));
        } else {
            ctx.line_to(x[i], y(*v as f64));
        }
    }
    ctx.stroke();
    ctx.set_fill_style_str(&pal.border);
    ctx.fill_rect(0.0, y(0.0).round(), width, 1.0);
    if let Some(i) = hovered.filter(|&i| i < values.len()).or(values.len().checked_sub(1)) {
        ctx.set_fill_style_str(&colour);
        ctx.begin_path();
        let _ = ctx.arc(x[i], y(values[i] as f64), 2.5, 0.0, std::f64::consts::TAU);
        ctx.fill();
    }
}

/// `values[i]` is the byte figure of snapshot `labels[i]`. `metric`/`key`: each point is also listed
/// as `data-metric=metric`, `data-key="{key}|{label}"`. `colour_var`: the CSS variable to draw with.
#[component]
pub fn SeriesChart(
    values: Vec<i64>,
    labels: Vec<String>,
    metric: &'static str,
    #[prop(into)] key: String,
    height: f64,
    #[prop(optional)] bars: bool,
    #[prop(default = "--accent")] colour_var: &'static str,
) -> impl IntoView {
    let state = expect_context::<AppState>();
    let values = Arc::new(values);
    let labels = Arc::new(labels);
    let width = RwSignal::new(0.0f64);
    let hover = RwSignal::new(None::<(usize, f64)>);
    let wrap = NodeRef::<leptos::html::Div>::new();
    let canvas = NodeRef::<leptos::html::Canvas>::new();
    Effect::new(move |_| {
        if let Some(el) = wrap.get() {
            observe_width(&el, move |w| width.set(w));
        }
    });
    {
        let (values, labels) = (values.clone(), labels.clone());
        Effect::new(move |_| {
            let _theme = state.theme.get();
            let unit = state.unit.get();
            let hovered = hover.get().map(|h| h.0);
            let Some(c) = canvas.get() else { return };
            draw(&c, &values, &labels, width.get(), height, bars, colour_var, hovered, |v| unit.format(v));
        });
    }
    let n = values.len();
    let hit_values = values.clone();
    let on_move = move |ev: web_sys::MouseEvent| {
        let x = f64::from(ev.offset_x());
        let i = frame(&hit_values, width.get_untracked(), height, bars).dx(x).floor();
        hover.set((i >= 0.0 && (i as usize) < n).then_some((i as usize, x)));
    };
    let tip = {
        let (values, labels) = (values.clone(), labels.clone());
        move || {
            let (i, x) = hover.get()?;
            let w = width.get();
            let side = if x > w / 2.0 { format!("right:{:.0}px", w - x + 10.0) } else { format!("left:{:.0}px", x + 10.0) };
            let delta = i.checked_sub(1).map(|p| values[i] - values[p]);
            Some(view! {
                <div class="chart-tip" style=side>
                    <span class="fn">{labels[i].clone()}</span>" "
                    <Bytes metric="chart_hover_bytes" value=values[i] />
                    {delta.map(|d| view! { <span class="muted">" ("{crate::units::signed_count(d, true)}" B)"</span> })}
                </div>
            })
        }
    };
    let points = values
        .iter()
        .zip(labels.iter())
        .map(|(v, l)| view! { <li data-metric=metric data-key=format!("{key}|{l}") data-value=v.to_string()>{format!("{l}: {v} B")}</li> })
        .collect_view();
    view! {
        <div class="series-chart" class:bars=bars node_ref=wrap on:mouseleave=move |_| hover.set(None)>
            <canvas node_ref=canvas role="img" aria-label="Bytes per snapshot" on:mousemove=on_move>
                <ul>{points}</ul>
            </canvas>
            {tip}
        </div>
    }
}
