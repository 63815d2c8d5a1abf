//! A figure per step for several series: stacked bars (a step's time by category, XProf's step-time
//! graph) or lines (a share per step). Hover names the step and lists each series' exact value.
//! Series that are zero at every step are left out of the drawing, the legend and the tooltip.

use super::axis::{x_axis, y_axis, Style};
use super::plot::redraw;
use super::viewport::{Frame, Margins, Viewport};
use super::{prepare, Palette};
use leptos::prelude::*;
use std::sync::Arc;

/// One series: its name (legend, tooltip), its metric name (`data-metric` of its points), a CSS
/// colour and one value per step.
#[derive(Debug, Clone, PartialEq)]
pub struct StepSeries {
    pub label: &'static str,
    pub metric: &'static str,
    pub colour: &'static str,
    pub values: Vec<f64>,
}

/// How the series are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepChartKind {
    /// Bars, one per step, the series stacked in order from the bottom.
    Stacked,
    /// One line per series through the steps.
    Lines,
}

const MARGINS: Margins = Margins { left: 64.0, right: 12.0, top: 8.0, bottom: 22.0 };

/// Step `i` (from 0) is centred on x `i + 1`, so the axis counts steps from 1; y spans 0 to the
/// highest stack (or value).
fn frame(series: &[StepSeries], steps: usize, kind: StepChartKind, width: f64, height: f64) -> Frame {
    let top = (0..steps)
        .map(|i| match kind {
            StepChartKind::Stacked => series.iter().map(|s| s.values[i].max(0.0)).sum::<f64>(),
            StepChartKind::Lines => series.iter().map(|s| s.values[i]).fold(0.0, f64::max),
        })
        .fold(0.0, f64::max);
    let v = Viewport { x0: 0.5, x1: steps.max(1) as f64 + 0.5, y0: 0.0, y1: if top > 0.0 { top * 1.05 } else { 1.0 } };
    Frame { v, w: width, h: height, m: MARGINS }
}

#[allow(clippy::too_many_arguments)]
fn draw(
    canvas: &web_sys::HtmlCanvasElement,
    series: &[StepSeries],
    names: &[String],
    kind: StepChartKind,
    width: f64,
    height: f64,
    hovered: Option<usize>,
    unit: &str,
) {
    let Some(ctx) = prepare(canvas, width, height) else { return };
    let pal = Palette::read();
    let steps = names.len();
    let f = frame(series, steps, kind, width, height);
    y_axis(&ctx, &f, &pal, Style { grid: true, ..Style::default() }, |v, step| {
        format!("{v:.*} {unit}", crate::ui::charts::axis::decimals(step))
    });
    // Steps are labelled by their position (from 1); the tooltip names them.
    x_axis(&ctx, &f, &pal, Style { integer: true, ..Style::default() }, |v, _| format!("{v:.0}"));
    let step_w = f.plot_w() / steps.max(1) as f64;
    if let Some(i) = hovered {
        ctx.set_fill_style_str(&pal.bg_3);
        ctx.fill_rect(f.sx(i as f64 + 0.5), f.plot_top(), step_w, f.plot_h());
    }
    match kind {
        StepChartKind::Stacked => {
            let bar_w = (step_w * 0.8).max(1.0);
            for i in 0..steps {
                let mut base = 0.0;
                let x = f.sx(i as f64 + 1.0) - bar_w / 2.0;
                for s in series {
                    let v = s.values[i].max(0.0);
                    if v > 0.0 {
                        let (y0, y1) = (f.sy(base), f.sy(base + v));
                        ctx.set_fill_style_str(s.colour);
                        ctx.fill_rect(x, y1, bar_w, (y0 - y1).max(0.5));
                    }
                    base += v;
                }
            }
        }
        StepChartKind::Lines => {
            ctx.set_line_width(2.0);
            for s in series {
                ctx.set_stroke_style_str(s.colour);
                ctx.set_fill_style_str(s.colour);
                ctx.begin_path();
                for (i, v) in s.values.iter().enumerate() {
                    let (x, y) = (f.sx(i as f64 + 1.0), f.sy(*v));
                    if i == 0 {
                        ctx.move_to(x, y);
                    } else {
                        ctx.line_to(x, y);
                    }
                }
                ctx.stroke();
                // A dot per step where steps are far enough apart to tell them.
                if step_w >= 6.0 {
                    for (i, v) in s.values.iter().enumerate() {
                        ctx.begin_path();
                        let _ = ctx.arc(f.sx(i as f64 + 1.0), f.sy(*v), 2.5, 0.0, std::f64::consts::TAU);
                        ctx.fill();
                    }
                }
            }
        }
    }
}

/// The chart of `series` over the steps `names` (one value per step in every series), `height` CSS
/// pixels tall, values in `unit` (`ms`, `%`). Each step's values are also listed in the canvas's
/// fallback content as `data-metric=<series metric>`, `data-key=<step name>`, `data-value`.
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
    // The step under the pointer, its x and the chart's width (CSS pixels).
    let hover = RwSignal::new(None::<(usize, f64, f64)>);
    let canvas = NodeRef::<leptos::html::Canvas>::new();
    {
        let (series, names) = (series.clone(), names.clone());
        redraw(canvas, move |c| {
            let hovered = hover.get().map(|h| h.0);
            draw(c, &series, &names, kind, f64::from(c.client_width()), height, hovered, unit);
            true
        });
    }
    let n = names.len();
    let hit = series.clone();
    let on_move = move |ev: web_sys::MouseEvent| {
        let Some(c) = canvas.get_untracked() else { return };
        let (x, w) = (f64::from(ev.offset_x()), f64::from(c.client_width()));
        let i = (frame(&hit, n, kind, w, height).dx(x) - 0.5).floor();
        hover.set((i >= 0.0 && (i as usize) < n).then_some((i as usize, x, w)));
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
    let points = series
        .iter()
        .flat_map(|s| {
            names.iter().zip(&s.values).map(move |(name, v)| {
                view! { <li data-metric=s.metric data-key=name.clone() data-value=v.to_string()>{format!("{name} {}: {v} {unit}", s.label)}</li> }
            })
        })
        .collect_view();
    let legend = series
        .iter()
        .map(|s| view! { <span class="legend-item"><span class="swatch" style=format!("background:{}", s.colour)></span>{s.label}</span> })
        .collect_view();
    view! {
        <div class="step-chart" data-testid=testid>
            <div class="legend">{legend}</div>
            <div class="series-chart" on:mouseleave=move |_| hover.set(None)>
                <canvas node_ref=canvas role="img" aria-label=label on:mousemove=on_move>
                    <ul>{points}</ul>
                </canvas>
                {tip}
            </div>
        </div>
    }
}
