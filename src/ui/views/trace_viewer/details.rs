//! The selected event in full: name, thread, start (since the trace's start), duration, self time,
//! every argument as XProf shows it, its flow and its producer/consumer contexts.

use super::ps_text;
use crate::engine::protocol::request;
use crate::ui::components::metric::Text;
use crate::ui::components::op_links::{show_graph, LinkButton};
use crate::ui::state::AppState;
use crate::ui::use_engine::{use_engine, Reply};
use leptos::prelude::*;

/// A time figure: the raw ps in `data-value`, in words on screen.
fn time(metric: &'static str, ps: i64) -> impl IntoView {
    view! { <Text metric value=ps.to_string() shown=ps_text(ps) /> }
}

/// The HLO module and instruction an event names (an XLA op's event carries `hlo_module`, and its
/// op as `hlo_op` or as its name): where its "graph" link goes.
fn hlo_op_of(args: &[(String, String)], name: &str) -> Option<(String, String)> {
    let arg = |key: &str| args.iter().find(|(k, v)| k == key && !v.is_empty()).map(|(_, v)| v.clone());
    Some((arg("hlo_module")?, arg("hlo_op").unwrap_or_else(|| name.to_string())))
}

#[component]
pub(super) fn Details(file_id: u32, selected_event: RwSignal<Option<u32>>, origin_ps: i64) -> impl IntoView {
    let fetch =
        use_engine("Trace Viewer event details", move || selected_event.get().map(|event| request::TraceEventDetails { file_id, event }));
    let body = move || match (selected_event.get(), fetch.reply.get()) {
        (None, _) => view! { <p class="muted">"Click an event to see its details."</p> }.into_any(),
        (Some(_), Reply::Waiting) => view! { <p class="muted loading">"Reading the event…"</p> }.into_any(),
        (Some(_), Reply::Failed(e)) => view! { <p class="banner error">{e.detail()}</p> }.into_any(),
        (Some(_), Reply::Rejected(e)) => view! { <p class="banner error">{e}</p> }.into_any(),
        (Some(_), Reply::Ready(None)) => view! { <p class="muted">"No such event."</p> }.into_any(),
        (Some(_), Reply::Ready(Some(d))) => {
            let args = d
                .args
                .iter()
                .map(|(k, v)| view! { <dt>{k.clone()}</dt><dd><Text metric="event_arg" key=k.clone() value=v.clone() /></dd> })
                .collect_view();
            let flow = d.flow.map(|f| {
                view! { <dt>"flow"</dt><dd><Text metric="event_flow_id" value=f.id.to_string() />{format!(" (direction {}, category {})", f.direction, f.category)}</dd> }
            });
            let contexts = d
                .contexts
                .iter()
                .map(|c| {
                    let role = if c.producer { "producer" } else { "consumer" };
                    view! { <dt>{role}" context"</dt><dd><Text metric="event_context" key=role value=format!("{}:{}", c.context_type, c.id) /></dd> }
                })
                .collect_view();
            let state = expect_context::<AppState>();
            let graph = hlo_op_of(&d.args, &d.name).map(|(module, op)| {
                let title = format!("Graph: {module} around {op}");
                view! { " " <LinkButton testid="event-show-graph" label="graph" title go=move || show_graph(state, module.clone(), op.clone()) /> }
            });
            view! {
                <h3 class="tv-event-name"><Text metric="event_name" value=d.name.clone() />{graph}</h3>
                <dl class="tv-details" data-testid="event-details" data-event=d.event.to_string()>
                    <dt>"Thread"</dt><dd><Text metric="event_thread" value=d.thread_name.clone() />{format!(" (pid {}, tid {})", d.pid, d.tid)}</dd>
                    <dt>"Start"</dt><dd>{time("event_start_ps", d.start_ps - origin_ps)}" after the trace's start"</dd>
                    <dt>"Duration"</dt><dd>{time("event_duration_ps", d.duration_ps)}</dd>
                    <dt>"Self time"</dt><dd>{time("event_self_time_ps", d.self_time_ps)}</dd>
                    <dt>"Depth"</dt><dd><Text metric="event_depth" value=d.depth.to_string() /></dd>
                    {(!d.category.is_empty()).then(|| view! { <dt>"Category"</dt><dd><Text metric="event_category" value=d.category.clone() /></dd> })}
                    {args}
                    {flow}
                    {contexts}
                </dl>
            }
            .into_any()
        }
    };
    view! {
        <section class="tv-panel" data-testid="trace-details">
            <h2>"Event"</h2>
            {body}
        </section>
    }
}
