//! The step-time graph: each step stacked by category on a canvas, hover for a step's figures, click
//! to select it for every tool (the Memory Profile zooms to it, the Trace Viewer opens on it; a second
//! click or Escape clears it). Without steps, or with steps that lack device time, it says so.

use super::ms_text;
use crate::engine::overview_page::OverviewPageView;
use crate::ui::charts::step_chart::{self, category_color, Scene, StepChartKind};
use crate::ui::charts::{observe_width, prepare, Palette};
use crate::ui::components::metric::Text;
use crate::ui::state::{AppState, StepPick, Tool};
use leptos::prelude::*;
use std::sync::Arc;

/// CSS height of the graph.
const GRAPH_HEIGHT: f64 = 260.0;

/// Selects step `i` of `v` (or clears the selection when it is the one selected): the step for every
/// tool, and the Trace Viewer's window on its span.
fn pick(state: AppState, v: &OverviewPageView, i: usize) {
    let s = &v.steps;
    let Some((&group_id, (&begin_ps, &end_ps))) = s.group_ids.get(i).zip(s.begin_ps.get(i).zip(s.end_ps.get(i))) else { return };
    if state.step.get_untracked().is_some_and(|p| p.group_id == group_id) {
        state.step.set(None);
        return;
    }
    state.step.set(Some(StepPick { group_id, begin_ps, end_ps }));
    state.trace_window.set(Some((begin_ps, end_ps)));
    state.trace_range.set(None);
}

#[component]
pub(super) fn StepGraph(v: Arc<OverviewPageView>) -> impl IntoView {
    let state = expect_context::<AppState>();
    let n = v.steps.names.len();
    let notes = view! {
        {v.device_steps_unsupported.then(|| view! {
            <p class="ovp-note" data-testid="device-steps-unsupported">
                "XProf takes this TPU trace's steps from its TensorCores' step lines, which Tidemark does not read yet: "
                "no steps are shown."
            </p>
        })}
        {(n == 1).then(|| view! {
            <p class="ovp-note" data-testid="one-step">"One step measured: its time has no deviation, and one step says little about the run."</p>
        })}
    };
    if n == 0 {
        let why = v.warnings.first().cloned().unwrap_or_default();
        return view! {
            {notes}
            <div class="ovp-empty" data-testid="no-steps">
                <p><strong>{v.statement.clone()}</strong></p>
                <p class="muted">{why}</p>
            </div>
        }
        .into_any();
    }
    let selected = Memo::new({
        let ids = v.steps.group_ids.clone();
        move |_| state.step.get().and_then(|p| ids.iter().position(|&g| g == p.group_id))
    });
    let hover = RwSignal::new(None::<usize>);
    let pointer = RwSignal::new((0.0f64, 0.0f64));
    let width = RwSignal::new(0.0f64);
    let canvas_ref = NodeRef::<leptos::html::Canvas>::new();
    let wrap_ref = NodeRef::<leptos::html::Div>::new();
    let stacks: Vec<&[f64]> = v.steps.categories.iter().map(|c| c.ms.as_slice()).collect();
    let max_ms = step_chart::highest(StepChartKind::Stacked, &stacks);
    let frame = move || step_chart::frame(width.get(), GRAPH_HEIGHT, n, max_ms);

    Effect::new(move |_| {
        if let Some(el) = wrap_ref.get() {
            observe_width(&el, move |w| width.set(w));
        }
    });
    let drawn = v.clone();
    Effect::new(move |_| {
        state.theme.track();
        let f = frame();
        let Some(canvas) = canvas_ref.get() else { return };
        if f.w <= 0.0 {
            return;
        }
        let Some(ctx) = prepare(&canvas, f.w, f.h) else { return };
        let series = drawn.steps.categories.iter().map(|c| (category_color(&c.id), c.ms.as_slice())).collect();
        let scene = Scene {
            names: &drawn.steps.names,
            series,
            kind: StepChartKind::Stacked,
            unit: "ms",
            hover: hover.get(),
            selected: selected.get(),
        };
        step_chart::draw(&ctx, &f, &scene, &Palette::read());
    });

    let on_move = move |e: web_sys::MouseEvent| {
        let (x, y) = (f64::from(e.offset_x()), f64::from(e.offset_y()));
        pointer.set((x, y));
        let found = step_chart::step_at(&frame(), x, y, n);
        if hover.get_untracked() != found {
            hover.set(found);
        }
    };
    let clicked = v.clone();
    let on_click = move |e: web_sys::MouseEvent| {
        let (x, y) = (f64::from(e.offset_x()), f64::from(e.offset_y()));
        if let Some(i) = step_chart::step_at(&frame(), x, y, n) {
            pick(state, &clicked, i);
        }
    };
    let hovered = v.clone();
    let tooltip = move || {
        let i = hover.get()?;
        let (x, y) = pointer.get();
        let left = if x + 310.0 > width.get() { x - 304.0 } else { x + 14.0 };
        Some(view! {
            <div class="mp-tooltip" data-testid="step-tooltip" style=format!("left:{left:.0}px;top:{:.0}px", (y + 14.0).min(GRAPH_HEIGHT - 60.0))>
                <StepFigures v=hovered.clone() i prefix="hover" />
                <div class="muted">"Click to select this step in every tool"</div>
            </div>
        })
    };
    let legend = v
        .steps
        .categories
        .iter()
        .map(|c| view! { <span class="sw" style=format!("background:{}", category_color(&c.id))></span>{c.label.clone()} })
        .collect_view();
    let panel = v.clone();
    view! {
        {notes}
        <div class="mp-chart-bar">
            <span class="legend">{legend}</span>
            <span class="spacer"></span>
            <span class="muted">"Click a step to select it in every tool · Esc clears"</span>
        </div>
        <div class="mp-chart" node_ref=wrap_ref>
            <canvas
                node_ref=canvas_ref
                data-testid="step-graph"
                data-steps=n.to_string()
                data-plot-left=move || frame().plot_left().to_string()
                data-plot-right=move || frame().plot_right().to_string()
                data-plot-top=move || frame().plot_top().to_string()
                data-plot-bottom=move || frame().plot_bottom().to_string()
                aria-label="Step-time graph: each step's time stacked by category. Click a step to select it."
                style=move || format!("width:{}px;height:{GRAPH_HEIGHT}px;cursor:pointer", width.get())
                on:mousemove=on_move
                on:mouseleave=move |_| hover.set(None)
                on:click=on_click
            ></canvas>
            {tooltip}
        </div>
        {move || selected.get().map(|i| view! {
            <div class="ovp-selected" data-testid="selected-step">
                <StepFigures v=panel.clone() i prefix="selected" />
                <button class="btn" data-testid="step-memory-profile" title="The memory timeline, zoomed to this step" on:click=move |_| state.tool.set(Tool::MemoryProfile)>"Memory Profile →"</button>
                <button class="btn" data-testid="step-trace-viewer" title="The trace, on this step" on:click=move |_| state.tool.set(Tool::TraceViewer)>"Trace Viewer →"</button>
                <button class="btn" data-testid="clear-step" on:click=move |_| state.step.set(None)>"Clear (Esc)"</button>
            </div>
        })}
    }
    .into_any()
}

/// Step `i`'s name, time and time per category, each a figure (`step_time_ms`, `step_category_ms`
/// keyed by XProf's column id) inside a block marked `data-step-figures=prefix`.
#[component]
fn StepFigures(v: Arc<OverviewPageView>, i: usize, prefix: &'static str) -> impl IntoView {
    let s = &v.steps;
    let name = s.names[i].clone();
    let rows = s
        .categories
        .iter()
        .map(|c| {
            let ms = c.ms[i];
            view! {
                <dt><span class="sw" style=format!("background:{}", category_color(&c.id))></span>{c.label.clone()}</dt>
                <dd><Text metric="step_category_ms" value=ms.to_string() key=c.id.clone() shown=format!("{ms:.2} ms") /></dd>
            }
        })
        .collect_view();
    view! {
        <div class="step-figures" data-step-figures=prefix data-group-id=s.group_ids[i].to_string()>
            <div class="tt-head">
                <Text metric="step_name" value=name /> " · "
                <Text metric="step_time_ms" value=s.step_time_ms[i].to_string() shown=ms_text(s.step_time_ms[i]) />
            </div>
            <dl>
                {rows}
                <dt>"Span"</dt>
                <dd>
                    <Text metric="step_begin_ps" value=s.begin_ps[i].to_string() shown=format!("{:.3} ms", s.begin_ps[i] as f64 / 1e9) />
                    " – "
                    <Text metric="step_end_ps" value=s.end_ps[i].to_string() shown=format!("{:.3} ms", s.end_ps[i] as f64 / 1e9) />
                </dd>
            </dl>
        </div>
    }
}
