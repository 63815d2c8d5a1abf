//! The heap floor by module (Tidemark's own, for traces whose allocations are named): each step's
//! lowest heap + stack, what stays allocated between steps, and which module's outputs hold it, so
//! "why is this much always in use" has an answer. Every figure is the engine's
//! ([`NamedPeakView::floors`]).

use super::named::PeakBar;
use super::*;
use crate::engine::memory_profile::{NamedFloor, NamedPeakView};

#[component]
pub(super) fn HeapFloor(named: Arc<NamedPeakView>) -> impl IntoView {
    let (Some(last), Some(bars)) = (named.floors.last().cloned(), named.last_floor_bars.clone()) else { return ().into_any() };
    let state = expect_context::<AppState>();
    let columns = vec![
        Column::new("step", "Step", |f: &NamedFloor, _| view! { <Text metric="floor_step" value=f.step_id.to_string() key=f.step_id.to_string() /> }.into_any())
            .width("70px")
            .sort_key(|f| f.step_id),
        Column::new("floor", "Floor", |f: &NamedFloor, _| view! { <Bytes metric="floor_bytes" value=f.in_use_bytes key=f.step_id.to_string() /> }.into_any())
            .right()
            .width("110px")
            .sort_key(|f| f.in_use_bytes),
        Column::new("modules", "Held by module", move |f: &NamedFloor, _| {
            let step = f.step_id;
            let parts = f
                .by_module
                .iter()
                .enumerate()
                .map(|(i, (m, b))| {
                    let label = if m.is_empty() { "no module".to_string() } else { m.clone() };
                    view! { {(i > 0).then_some(" · ")} <code>{label}</code> " " <Bytes metric="floor_module_bytes" value=*b key=format!("{step}:{m}") /> }
                })
                .collect_view();
            // The cell may cut the list short; the tooltip has all of it, in the page's unit.
            let modules = f.by_module.clone();
            let title = move || {
                let unit = state.unit.get();
                modules.iter().map(|(m, b)| format!("{} {}", if m.is_empty() { "no module" } else { m }, unit.format(*b))).collect::<Vec<_>>().join(" · ")
            };
            view! { <span data-testid="floor-modules" title=title>{parts}</span> }.into_any()
        })
        .class("op"),
        Column::new("kinds", "By kind", |f: &NamedFloor, _| {
            let step = f.step_id;
            f.by_kind
                .iter()
                .enumerate()
                .map(|(i, (k, b))| view! { {(i > 0).then_some(" · ")} {k.label()} " " <Bytes metric="floor_kind_bytes" value=*b key=format!("{step}:{}", k.label()) /> })
                .collect_view()
                .into_any()
        })
        .width("260px"),
    ];
    let spec = TableSpec::new("mp-table mp-floor-table", columns).testid("floor-rows").max_height(320.0);
    view! {
        <section class="mp-named" data-testid="heap-floor">
            <h2>"What stays allocated between steps"</h2>
            <p>
                "Each step's heap floor — its lowest heap + stack, what the step never gives back — by the module whose run allocated it. At the floor of step "
                <Text metric="floor_last_step" value=last.step_id.to_string() /> " (the window's last), "
                <Bytes metric="floor_last_bytes" value=last.in_use_bytes /> " stay allocated:"
            </p>
            <PeakBar title="By kind" metric="floor_last_kind_bytes" share_metric="floor_last_kind_fraction" testid="floor-by-kind" parts=bars.by_kind />
            <PeakBar title="By module" metric="floor_last_module_bytes" share_metric="floor_last_module_fraction" testid="floor-by-module" parts=bars.by_module />
            <Table spec rows=Arc::new(named.floors.clone()) />
        </section>
    }
    .into_any()
}
