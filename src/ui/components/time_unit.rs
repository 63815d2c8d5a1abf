//! The time unit picker of the pages with time figures (the op tables). The unit lives in
//! [`AppState`], so every such page shows the one the user picked last.

use crate::ui::state::AppState;
use crate::units::TimeUnit;
use leptos::prelude::*;

#[component]
pub fn TimeUnitSelect() -> impl IntoView {
    let state = expect_context::<AppState>();
    view! {
        <label class="field" title="Unit for time figures">
            "Time in "
            <select
                data-testid="time-unit-select"
                on:change=move |ev| state.time_unit.set(TimeUnit::parse(&event_target_value(&ev)).unwrap_or_default())
                prop:value=move || state.time_unit.get().label()
            >
                {TimeUnit::ALL.into_iter().map(|u| view! { <option value=u.label()>{u.label()}</option> }).collect_view()}
            </select>
        </label>
    }
}
