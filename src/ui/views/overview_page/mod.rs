//! The Overview tool (XProf's overview page): the performance summary, the step-time graph stacked by
//! XProf's categories, the device's top ops, the run environment and XProf's recommendation with links
//! to the tools it names. Every number is the engine's ([`crate::engine::overview_page`]); this view
//! lays them out. A step clicked in the graph is selected for every tool ([`AppState::step`]).

mod sections;
mod step_graph;

use crate::analysis::overview_page::Figure;
use crate::decode::Format;
use crate::engine::overview_page::OverviewPageView;
use crate::engine::protocol::request;
use crate::engine::FileDetails;
use crate::ui::components::metric::{Count, Duration, Text};
use crate::ui::state::AppState;
use crate::ui::use_engine::{use_engine, Reply};
use leptos::prelude::*;
use std::sync::Arc;

/// `x` ms with one decimal, as XProf writes its step figures.
fn ms_text(x: f64) -> String {
    format!("{x:.1} ms")
}

#[component]
pub fn OverviewPage(file_id: u32, details: FileDetails) -> impl IntoView {
    let state = expect_context::<AppState>();
    let is_trace = details.format == Format::XSpace;
    let fetch = use_engine(
        "Overview",
        // "All hosts": the run's hosts combined, as XProf combines them.
        move || is_trace.then(|| request::OverviewPage { file_ids: state.op_file_ids(file_id) }),
    );
    let data_state = move || match fetch.reply.get() {
        Reply::Waiting => "loading",
        Reply::Ready(_) => "ready",
        Reply::Failed(_) | Reply::Rejected(_) => "failed",
    };
    let to_details = move |ev: web_sys::MouseEvent| {
        ev.prevent_default();
        state.tool.set(crate::ui::state::Tool::FileDetails);
    };
    view! {
        <article class="ovp" data-file=details.path.clone() data-testid="overview-page" data-state=data_state>
            {move || {
                if !is_trace {
                    return view! {
                        <div class="ovp-empty" data-testid="overview-not-a-trace">
                            <p>{format!("{} is not a trace: the overview page reads XProf traces (", details.name)} <code>"*.xplane.pb"</code> ")."</p>
                            <p class="muted"><a href="#" on:click=to_details>"File details"</a> " shows what this file holds."</p>
                        </div>
                    }.into_any();
                }
                match fetch.reply.get() {
                    Reply::Waiting => view! { <p class="muted loading">"Grouping the host's events into steps…"</p> }.into_any(),
                    Reply::Failed(error) => view! { <p class="ovp-empty" data-testid="overview-error">{error.detail()}</p> }.into_any(),
                    Reply::Rejected(message) => view! { <p class="ovp-empty" data-testid="overview-error">{message}</p> }.into_any(),
                    Reply::Ready(v) => view! { <Page v /> }.into_any(),
                }
            }}
        </article>
    }
}

/// The reply laid out.
#[component]
fn Page(v: Arc<OverviewPageView>) -> impl IntoView {
    view! {
        <section>
            <h2>"Performance summary"</h2>
            <Summary v=v.clone() />
        </section>
        <section>
            <h2>"Step-time graph"</h2>
            <step_graph::StepGraph v=v.clone() />
        </section>
        <div class="ovp-columns">
            <section>
                <h2>"Top 10 device ops"</h2>
                <sections::TopOps v=v.clone() />
            </section>
            <section>
                <h2>"Run environment"</h2>
                <sections::RunEnvironment v=v.clone() />
            </section>
        </div>
        <section>
            <h2>"Recommendation for next step"</h2>
            <sections::Recommendation v />
        </section>
    }
}

/// The summary cards: step time, XProf's verdict, and the utilisation figures (or why there are none).
#[component]
fn Summary(v: Arc<OverviewPageView>) -> impl IntoView {
    let u = v.utilisation;
    let steps = v.steps.names.len() as u64;
    let step_card = match v.step_time_ms {
        Some(s) => view! {
            <div class="card wide">
                <div class="label">"Average step time"</div>
                <div class="value"><Text metric="step_time_avg_ms" value=s.average.to_string() shown=ms_text(s.average) /></div>
                <div class="sub">
                    "σ " {match s.standard_deviation {
                        Some(d) => view! { <Text metric="step_time_sdv_ms" value=d.to_string() shown=ms_text(d) /> }.into_any(),
                        None => view! { <span data-metric="step_time_sdv_ms" data-value="" title="One step: no deviation">"—"</span> }.into_any(),
                    }}
                    " · min " <Text metric="step_time_min_ms" value=s.minimum.to_string() shown=ms_text(s.minimum) />
                    " · max " <Text metric="step_time_max_ms" value=s.maximum.to_string() shown=ms_text(s.maximum) />
                </div>
            </div>
        }
        .into_any(),
        None => view! {
            <div class="card wide">
                <div class="label">"Average step time"</div>
                <div class="value"><span data-metric="step_time_avg_ms" data-value="">"no steps"</span></div>
                <div class="sub">"No step time measured"</div>
            </div>
        }
        .into_any(),
    };
    let verdict = match v.bottleneck.as_str() {
        "host" => "highly input-bound",
        "both" => "possibly input-bound",
        "device" => "not input-bound",
        _ => "unknown",
    };
    view! {
        <div class="summary-cards ovp-cards" data-testid="overview-summary">
            {step_card}
            <div class="card">
                <div class="label">"Steps"</div>
                <div class="value"><Count metric="step_count" value=steps /></div>
                <div class="sub">"of " <Count metric="steps_found" value=v.steps_found as u64 /> " found"</div>
            </div>
            <div class="card">
                <div class="label">"Input"</div>
                <div class="value"><Text metric="input_bottleneck" value=v.bottleneck.clone() shown=verdict /></div>
            </div>
            <FigureCard label="Host idle" metric="host_idle_time_percent" figure=u.host_idle_time_percent />
            <FigureCard label="Device idle" metric="device_idle_time_percent" figure=u.device_idle_time_percent />
            {duty_cycle_card(&v)}
            <FigureCard label="FLOP rate vs peak" metric="flop_rate_utilization_relative_to_roofline" figure=u.flop_rate_utilization_relative_to_roofline />
            <FigureCard label="HBM bandwidth vs peak" metric="memory_bw_utilization_relative_to_hw_limit" figure=u.memory_bw_utilization_relative_to_hw_limit />
            <div class="card">
                <div class="label">"Framework ops on host"</div>
                <div class="value"><Text metric="host_tf_op_percent" value=v.host_tf_op_percent.to_string() shown=format!("{:.1} %", v.host_tf_op_percent) /></div>
                <div class="sub">"eager: " <Text metric="host_op_time_eager_percent" value=v.host_op_time_eager_percent.to_string() shown=format!("{:.1} %", v.host_op_time_eager_percent) /></div>
            </div>
        </div>
    }
}

/// XProf's tooltip of its TPU duty cycle.
const DUTY_CYCLE_HINT: &str = "Percentage of the device time that is busy. Higher is better.";

/// The duty cycle. On a TPU it is XProf's "TPU Duty Cycle", with the pair XProf 2.24 computes beside
/// it: the high-confidence duty cycle (every custom call counted as busy) and that duty cycle's idle
/// time, the chips' time without ops within their programs' span.
fn duty_cycle_card(v: &OverviewPageView) -> AnyView {
    let u = v.utilisation;
    if v.hardware_type != "TPU" {
        return view! { <FigureCard label="Device duty cycle" metric="device_duty_cycle_percent" figure=u.device_duty_cycle_percent /> }
            .into_any();
    }
    let high_confidence = v.idle_time_high_confidence_ps.map(|idle_ps| {
        view! {
            <div class="sub" data-testid="duty-cycle-high-confidence">
                "high confidence: " <FigureValue metric="device_duty_cycle_high_confidence_percent" figure=u.device_duty_cycle_high_confidence_percent />
                " · idle " <Duration metric="idle_time_high_confidence_us" value_us=idle_ps as f64 / 1e6 />
            </div>
        }
    });
    view! {
        <div class="card" class:absent=!matches!(u.device_duty_cycle_percent, Figure::Percent(_)) title=DUTY_CYCLE_HINT>
            <div class="label">"TPU Duty Cycle"</div>
            <div class="value"><FigureValue metric="device_duty_cycle_percent" figure=u.device_duty_cycle_percent /></div>
            {high_confidence}
        </div>
    }
    .into_any()
}

/// One utilisation card: the percentage, or in words why there is none (XProf writes 0.0% for all of
/// them).
#[component]
fn FigureCard(label: &'static str, metric: &'static str, figure: Figure) -> impl IntoView {
    view! {
        <div class="card" class:absent=!matches!(figure, Figure::Percent(_)) title=absence(figure)>
            <div class="label">{label}</div>
            <div class="value"><FigureValue metric figure /></div>
        </div>
    }
}

/// Why a figure is absent, for its tooltip (empty for a percentage).
fn absence(figure: Figure) -> &'static str {
    match figure {
        Figure::Percent(_) => "",
        Figure::NoDevice => "A CPU-only trace: there is no device to measure.",
        Figure::NotReported => "XProf does not compute it for this hardware, and writes 0.0%.",
        Figure::NotComputed => "XProf computes it for this hardware; Tidemark does not yet.",
    }
}

/// A utilisation figure: the percentage, or the kind of absence in words; `data-state` says which.
#[component]
fn FigureValue(metric: &'static str, figure: Figure) -> impl IntoView {
    let (value, state, shown) = match figure {
        Figure::Percent(p) => (p.to_string(), "percent", format!("{p:.1} %")),
        Figure::NoDevice => (String::new(), "no_device", "no device".into()),
        Figure::NotReported => (String::new(), "not_reported", "not reported".into()),
        Figure::NotComputed => (String::new(), "not_computed", "not computed".into()),
    };
    view! { <span data-metric=metric data-value=value data-state=state>{shown}</span> }
}
