//! The step charts of the Overview (its clickable step-time graph) and the Input Pipeline (step time by
//! category, the share waiting for input): one figure per step for several series, drawn as stacked
//! bars (a step's time by category, XProf's step-time graph) or as lines (a share per step), with the
//! hovered and the selected step marked. One frame and one drawing path serve both pages; [`StepChart`]
//! is the hover-only chart, the Overview wraps [`frame`], [`draw`] and [`step_at`] in its clickable one.
//!
//! Steps are slots of width 1 on the x axis (step `i` spans `i - 0.5 .. i + 0.5`), labelled by the last
//! word of their name (`7` of `train 7`); y runs from 0 to a round value above the highest stack (or
//! value). Canvas 2D in CSS pixels on a context from [`super::prepare`].

use super::axis::{nice, tick_figure, x_axis, y_axis, Style};
use super::figure_list::{figure_list, Figure};
use super::plot::redraw;
use super::viewport::{Frame, Margins, Viewport};
use super::{prepare, Palette};
use leptos::prelude::*;
use std::rc::Rc;
use std::sync::Arc;
use web_sys::CanvasRenderingContext2d as Ctx;

/// Room for the axes around the plot, in CSS pixels.
const MARGINS: Margins = Margins { left: 64.0, right: 12.0, top: 10.0, bottom: 24.0 };
/// Share of a step's slot its bar fills.
const BAR_FILL: f64 = 0.78;
/// Y ticks wanted on the plot.
const Y_TICKS: f64 = 5.0;

/// Colours of the stacks, by XProf's column id: mid-tone hues that read on both themes (the Overview and
/// the Input Pipeline draw the same category in the same colour).
pub fn category_color(id: &str) -> &'static str {
    match id {
        "deviceComputeTimeMs" => "#59a14f",
        "deviceToDeviceTimeMs" => "#b07aa1",
        "deviceCollectivesTimeMs" => "#9c755f",
        "hostComputeTimeMs" => "#4e79a7",
        "kernelLaunchTimeMs" => "#edc948",
        "infeedTimeMs" => "#f28e2b",
        "outfeedTimeMs" => "#ff9da7",
        "compileTimeMs" => "#76b7b2",
        _ => "#8c8c8c",
    }
}

/// How the series are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepChartKind {
    /// Bars, one per step, the series stacked in order from the bottom.
    Stacked,
    /// One line per series through the steps.
    Lines,
}

/// The highest figure of any step: its stack, or its highest value.
pub fn highest(kind: StepChartKind, series: &[&[f64]]) -> f64 {
    let steps = series.iter().map(|s| s.len()).max().unwrap_or(0);
    (0..steps)
        .map(|i| {
            let values = series.iter().map(|s| s.get(i).copied().unwrap_or(0.0));
            match kind {
                StepChartKind::Stacked => values.map(|v| v.max(0.0)).sum::<f64>(),
                StepChartKind::Lines => values.fold(0.0, f64::max),
            }
        })
        .fold(0.0, f64::max)
}

/// The y axis's top for figures up to `max`: a whole number of round steps.
fn y_top(max: f64) -> f64 {
    let step = nice((max / Y_TICKS).max(f64::MIN_POSITIVE), false);
    ((max / step).ceil() * step).max(step)
}

/// The chart's frame: a canvas `width` × `height` CSS px showing `steps` steps up to `max`.
pub fn frame(width: f64, height: f64, steps: usize, max: f64) -> Frame {
    Frame { v: Viewport { x0: -0.5, x1: steps.max(1) as f64 - 0.5, y0: 0.0, y1: y_top(max) }, w: width, h: height, m: MARGINS }
}

/// The step under the pointer at (`x`, `y`) (anywhere in its slot), if it is over the plot.
pub fn step_at(f: &Frame, x: f64, y: f64, steps: usize) -> Option<usize> {
    if !f.in_plot(x, y) {
        return None;
    }
    let i = f.dx(x).round();
    (i >= 0.0 && (i as usize) < steps).then_some(i as usize)
}

/// Everything one frame shows.
pub struct Scene<'a> {
    /// Step names (XProf's `stepnum`, e.g. `train 7`).
    pub names: &'a [String],
    /// Each series: its colour and each step's value, bottom (or first) first.
    pub series: Vec<(&'a str, &'a [f64])>,
    pub kind: StepChartKind,
    /// The values' unit on the y axis (`ms`, `%`).
    pub unit: &'a str,
    pub hover: Option<usize>,
    pub selected: Option<usize>,
}

pub fn draw(ctx: &Ctx, f: &Frame, s: &Scene, p: &Palette) {
    let unit = s.unit;
    y_axis(ctx, f, p, Style { grid: true, ..Style::default() }, |v, step| format!("{} {unit}", tick_figure(v, step)));
    let names = s.names;
    x_axis(ctx, f, p, Style { integer: true, ..Style::default() }, |v, _| {
        names.get(v.round().max(0.0) as usize).map(|n| n.rsplit(' ').next().unwrap_or(n).to_string()).unwrap_or_default()
    });
    let slot_px = f.plot_w() / f.v.width();
    let base = f.plot_bottom();
    // Marks under the figures: the hovered step's slot, then the selected one's.
    for (i, colour) in [(s.hover, p.bg_3.as_str()), (s.selected, p.border.as_str())] {
        if let Some(i) = i {
            ctx.set_fill_style_str(colour);
            ctx.fill_rect(f.sx(i as f64 - 0.5), f.plot_top(), slot_px, base - f.plot_top());
        }
    }
    match s.kind {
        StepChartKind::Stacked => stacked_bars(ctx, f, s, slot_px),
        StepChartKind::Lines => lines(ctx, f, s, slot_px),
    }
    if let Some(i) = s.selected {
        ctx.set_stroke_style_str(&p.accent);
        ctx.set_line_width(2.0);
        ctx.stroke_rect(f.sx(i as f64 - 0.5) + 1.0, f.plot_top() + 1.0, slot_px - 2.0, base - f.plot_top() - 2.0);
    }
}

/// The steps whose bars are drawn: every step, or where steps are narrower than a pixel, the tallest
/// stack of each pixel column (a max filter: no spike is lost, and a run of thousands of steps draws
/// a bar per pixel rather than per step).
fn drawn_steps(f: &Frame, s: &Scene, slot_px: f64) -> Vec<usize> {
    let total = |i: usize| s.series.iter().map(|(_, values)| values.get(i).copied().unwrap_or(0.0).max(0.0)).sum::<f64>();
    if slot_px >= 1.0 {
        return (0..s.names.len()).collect();
    }
    let mut drawn: Vec<(i64, usize, f64)> = Vec::new();
    for i in 0..s.names.len() {
        let (column, t) = (f.sx(i as f64).floor() as i64, total(i));
        match drawn.last_mut() {
            Some(last) if last.0 == column => {
                if t > last.2 {
                    *last = (column, i, t);
                }
            }
            _ => drawn.push((column, i, t)),
        }
    }
    drawn.into_iter().map(|(_, i, _)| i).collect()
}

/// Series by series, each step's segment on top of the series below it: one fill colour per series
/// (a run of thousands of steps would otherwise set the colour once per segment, each a call out of
/// wasm with its string).
fn stacked_bars(ctx: &Ctx, f: &Frame, s: &Scene, slot_px: f64) {
    let bar_w = (slot_px * BAR_FILL).max(1.0);
    let steps = drawn_steps(f, s, slot_px);
    let mut below = vec![0.0; steps.len()];
    for (colour, values) in &s.series {
        ctx.set_fill_style_str(colour);
        for (&i, below) in steps.iter().zip(below.iter_mut()) {
            let v = values.get(i).copied().unwrap_or(0.0);
            if v <= 0.0 {
                continue;
            }
            let (y0, y1) = (f.sy(*below), f.sy(*below + v));
            ctx.fill_rect(f.sx(i as f64) - bar_w / 2.0, y1, bar_w, (y0 - y1).max(0.5));
            *below += v;
        }
    }
}

fn lines(ctx: &Ctx, f: &Frame, s: &Scene, slot_px: f64) {
    ctx.set_line_width(2.0);
    for (colour, values) in &s.series {
        ctx.set_stroke_style_str(colour);
        ctx.set_fill_style_str(colour);
        ctx.begin_path();
        for (i, v) in values.iter().enumerate() {
            let (x, y) = (f.sx(i as f64), f.sy(*v));
            if i == 0 {
                ctx.move_to(x, y);
            } else {
                ctx.line_to(x, y);
            }
        }
        ctx.stroke();
        // A dot per step where steps are far enough apart to tell them.
        if slot_px >= 6.0 {
            for (i, v) in values.iter().enumerate() {
                ctx.begin_path();
                let _ = ctx.arc(f.sx(i as f64), f.sy(*v), 2.5, 0.0, std::f64::consts::TAU);
                ctx.fill();
            }
        }
    }
}

/// One series of a [`StepChart`]: its name (legend, tooltip), its metric name (`data-metric` of its
/// points), a CSS colour and one value per step.
#[derive(Debug, Clone, PartialEq)]
pub struct StepSeries {
    pub label: &'static str,
    pub metric: &'static str,
    pub colour: &'static str,
    pub values: Vec<f64>,
}

/// The chart of `series` over the steps `names` (one value per step in every series), `height` CSS
/// pixels tall, values in `unit` (`ms`, `%`); hover names the step and lists each series' exact value.
/// Series that are zero at every step are left out of the drawing, the legend and the tooltip. Each
/// step's values are also listed in the canvas's fallback content as `data-metric=<series metric>`,
/// `data-key=<step name>`, `data-value` (written a slice at a time: see [`figure_list`]).
#[component]
pub fn StepChart(
    series: Vec<StepSeries>,
    names: Arc<Vec<String>>,
    kind: StepChartKind,
    unit: &'static str,
    /// What the chart shows, for screen readers.
    label: &'static str,
    testid: &'static str,
    #[prop(default = 280.0)] height: f64,
) -> impl IntoView {
    let series: Arc<Vec<StepSeries>> = Arc::new(series.into_iter().filter(|s| s.values.iter().any(|v| *v != 0.0)).collect());
    let max = highest(kind, &series.iter().map(|s| s.values.as_slice()).collect::<Vec<_>>());
    let n = names.len();
    // The step under the pointer, its x and the chart's width (CSS pixels).
    let hover = RwSignal::new(None::<(usize, f64, f64)>);
    let canvas = NodeRef::<leptos::html::Canvas>::new();
    {
        let (series, names) = (series.clone(), names.clone());
        redraw(canvas, move |c| {
            let width = f64::from(c.client_width());
            let Some(ctx) = prepare(c, width, height) else { return false };
            let scene = Scene {
                names: &names,
                series: series.iter().map(|s| (s.colour, s.values.as_slice())).collect(),
                kind,
                unit,
                hover: hover.get().map(|h| h.0),
                selected: None,
            };
            draw(&ctx, &frame(width, height, n, max), &scene, &Palette::read());
            true
        });
    }
    let on_move = move |ev: web_sys::MouseEvent| {
        let Some(c) = canvas.get_untracked() else { return };
        let (x, y, w) = (f64::from(ev.offset_x()), f64::from(ev.offset_y()), f64::from(c.client_width()));
        hover.set(step_at(&frame(w, height, n, max), x, y, n).map(|i| (i, x, w)));
    };
    let tip = {
        let (series, names) = (series.clone(), names.clone());
        move || {
            let (i, x, w) = hover.get()?;
            let side = if x > w / 2.0 { format!("right:{:.0}px", w - x + 10.0) } else { format!("left:{:.0}px", x + 10.0) };
            let total = (kind == StepChartKind::Stacked).then(|| series.iter().map(|s| s.values[i]).sum::<f64>());
            let lines = series
                .iter()
                .rev()
                .filter(|s| s.values[i] != 0.0)
                .map(|s| {
                    view! {
                        <div>
                            <span class="swatch" style=format!("background:{}", s.colour)></span>
                            {s.label} ": "
                            <span data-metric=format!("hover_{}", s.metric) data-value=s.values[i].to_string()>{format!("{:.3} {unit}", s.values[i])}</span>
                        </div>
                    }
                })
                .collect_view();
            Some(view! {
                <div class="chart-tip step-tip" style=side data-testid=format!("{testid}-tip")>
                    <div class="fn">{names[i].clone()}</div>
                    {total.map(|t| view! { <div>"Total: " <span data-metric="hover_total" data-value=t.to_string()>{format!("{t:.3} {unit}")}</span></div> })}
                    {lines}
                </div>
            })
        }
    };
    // Figure `i`: series `i / n`, step `i % n`.
    let points = {
        let (series, names) = (series.clone(), names.clone());
        figure_list(
            series.len() * n,
            Rc::new(move |i, write| {
                let (s, name) = (&series[i / n], &names[i % n]);
                let v = s.values[i % n];
                let (value, text) = (v.to_string(), format!("{name} {}: {v} {unit}", s.label));
                write(Figure { metric: s.metric, key: name, value: &value, text: &text });
            }),
        )
    };
    let legend = series
        .iter()
        .map(|s| view! { <span class="legend-item"><span class="swatch" style=format!("background:{}", s.colour)></span>{s.label}</span> })
        .collect_view();
    view! {
        <div class="step-chart" data-testid=testid>
            <div class="legend">{legend}</div>
            <div class="series-chart" on:mouseleave=move |_| hover.set(None)>
                <canvas node_ref=canvas role="img" aria-label=label on:mousemove=on_move>
                    {points}
                </canvas>
                {tip}
            </div>
        </div>
    }
}
