//! The steps: their time statistics, the step-time chart stacked by XProf's categories with each
//! category's average and deviation, and the share of each step spent waiting for input. No steps,
//! one step and steps without device time are said in words.

use super::ms;
use crate::analysis::input_pipeline::CATEGORIES;
use crate::engine::input_pipeline::{InputPipelineView, Stats};
use crate::ui::charts::step_chart::{category_color, StepChart, StepChartKind, StepSeries};
use crate::ui::components::metric::{Count, Text};
use leptos::prelude::*;
use std::sync::Arc;

/// Index of "Device compute" in [`CATEGORIES`].
const DEVICE_COMPUTE: usize = 0;

/// A deviation: `None` (XProf's `-nan`) is shown as "n/a". `key`: which figure it is the deviation of.
fn deviation(metric: &'static str, key: &'static str, s: &Stats, unit: &'static str) -> impl IntoView {
    let (value, shown) = match s.standard_deviation {
        Some(sd) => (sd.to_string(), format!("{sd:.2} {unit}")),
        None => ("nan".to_string(), "n/a".to_string()),
    };
    view! { <Text metric value shown key=key /> }
}

#[component]
pub fn DeviceSide(v: Arc<InputPipelineView>) -> impl IntoView {
    let n = v.steps.names.len();
    if n == 0 {
        let why = if v.steps_found == 0 {
            "No step was found: the trace has no step markers (steps named \u{201c}train …\u{201d} or \u{201c}test …\u{201d}, or given a step name), \
             or its steps have no compute time."
        } else {
            "Steps were found, but none remains once the incomplete ones are left out."
        };
        return view! {
            <section class="ipa-section" data-testid="ipa-no-steps">
                <h2>"Step time"</h2>
                <p><strong>"No step time measured."</strong> " " {why}</p>
            </section>
        }
        .into_any();
    }
    let names = Arc::new(v.steps.names.clone());
    let series: Vec<StepSeries> = CATEGORIES
        .iter()
        .zip(&v.steps.category_ms)
        .map(|(c, values)| StepSeries { label: c.label, metric: c.id, colour: category_color(c.id), values: values.clone() })
        .collect();
    let dropped = v.steps_found - n;
    let no_device_time = v.steps.category_ms[DEVICE_COMPUTE].iter().all(|x| *x == 0.0);
    let s = v.step_time_ms;
    let stats_rows = CATEGORIES
        .iter()
        .zip(&v.category_ms)
        .zip(&v.category_fraction)
        .filter(|((_, st), _)| st.average != 0.0 || st.maximum != 0.0)
        .map(|((c, st), share)| {
            let colour = category_color(c.id);
            view! {
                <tr data-category=c.id>
                    <td><span class="swatch" style=format!("background:{colour}")></span>{c.label}</td>
                    <td class="r"><Text metric="category_ms_average" key=c.id value=st.average.to_string() shown=format!("{:.3} ms", st.average) /></td>
                    <td class="r">{deviation("category_ms_standard_deviation", c.id, st, "ms")}</td>
                    <td class="r"><Text metric="category_fraction" key=c.id value=share.to_string() shown=format!("{:.1} %", 100.0 * share) /></td>
                </tr>
            }
        })
        .collect_view();
    let input_series = vec![StepSeries {
        label: "Waiting for input",
        metric: "input_percent",
        colour: category_color("infeedTimeMs"),
        values: v.steps.input_percent.clone(),
    }];
    let ip = v.input_percent;
    let range_note = if v.hardware_type == "TPU" {
        "The share of each step spent waiting for input. XProf draws its range across a TPU's cores; Tidemark does not measure the cores apart yet, so this is one value per step."
    } else {
        "The share of each step spent waiting for input. XProf draws a range across cores on TPUs only; here each step has one value."
    };
    view! {
        <section class="ipa-section" data-testid="ipa-steps">
            <h2>"Step time"</h2>
            <p class="fos-summary">
                <span><Count metric="steps" value=n as u64 /> " steps"
                    {(dropped > 0).then(|| view! { <span class="muted">" (of " <Count metric="steps_found" value=v.steps_found as u64 /> " found; the first and last are left out as incomplete, as XProf does)"</span> })}
                </span>
                <span>"Average " {ms("steptime_ms_average", s.average, 2)} " (σ " {deviation("steptime_ms_standard_deviation", "step_time", &s, "ms")} ")"</span>
                <span>"Range " {ms("steptime_ms_minimum", s.minimum, 2)} " – " {ms("steptime_ms_maximum", s.maximum, 2)}</span>
            </p>
            {(n == 1).then(|| view! {
                <p class="ipa-note" data-testid="ipa-one-step">"One step: its time is the whole sample, so there is no deviation to measure."</p>
            })}
            {no_device_time.then(|| view! {
                <p class="muted ipa-note-plain" data-testid="ipa-no-device-time">"These steps have no device time: they are the host's (the trace has no accelerator), so the device categories are 0."</p>
            })}
            <StepChart series names=names.clone() kind=StepChartKind::Stacked unit="ms" label="Step time by category, per step" testid="ipa-step-chart" />
            <table class="grid ipa-stats" data-testid="ipa-category-stats">
                <thead><tr><th>"Category"</th><th class="r">"Average"</th><th class="r">"σ"</th><th class="r">"Of step time"</th></tr></thead>
                <tbody>{stats_rows}</tbody>
            </table>
            <h2>"Waiting for input"</h2>
            <p class="fos-summary">
                <span>"Average " <Text metric="input_percent_average" value=ip.average.to_string() shown=format!("{:.1} %", ip.average) /> " of step time (σ " {deviation("input_percent_standard_deviation", "input_percent", &ip, "%")} ")"</span>
                <span>"Range " <Text metric="input_percent_minimum" value=ip.minimum.to_string() shown=format!("{:.1} %", ip.minimum) />
                    " – " <Text metric="input_percent_maximum" value=ip.maximum.to_string() shown=format!("{:.1} %", ip.maximum) /></span>
            </p>
            <p class="muted ipa-note-plain">{range_note}</p>
            {if ip.maximum > 0.0 {
                view! { <StepChart series=input_series names kind=StepChartKind::Lines unit="%" label="Share of each step waiting for input" testid="ipa-input-chart" height=200.0 /> }.into_any()
            } else {
                view! { <p data-testid="ipa-no-input-wait">"No step spent time waiting for input."</p> }.into_any()
            }}
        </section>
    }
    .into_any()
}
