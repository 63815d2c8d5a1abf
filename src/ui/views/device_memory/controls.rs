//! The tool's controls: mode, filters, fold, the diff's base and target.

use super::*;

/// A select of label values with an "all" entry; `None` = all.
pub(super) fn label_select(
    testid: &'static str,
    all: &'static str,
    values: Vec<String>,
    signal: ArcRwSignal<Option<String>>,
) -> impl IntoView {
    let current = signal.clone();
    view! {
        <select data-testid=testid on:change=move |ev| { let v = event_target_value(&ev); signal.set((!v.is_empty()).then_some(v)); } prop:value=move || current.get().unwrap_or_default()>
            <option value="">{all}</option>
            {values.into_iter().map(|v| view! { <option value=v.clone()>{v.clone()}</option> }).collect_view()}
        </select>
    }
}

#[component]
pub(super) fn Controls(mode: Memo<Mode>, labels: ReadSignal<Labels>, pending: Signal<bool>) -> impl IntoView {
    let state = expect_context::<AppState>();
    let u = ui();
    let count = move || profiles(state).0.len();
    let labels = move || labels.get();
    let mode_button = {
        let u = u.clone();
        move |m: Mode, label: &'static str| {
            let u = u.clone();
            let needs_two = m != Mode::Profile;
            view! {
                <button
                    class="seg"
                    data-mode=m.slug()
                    aria-pressed=move || (mode.get() == m).to_string()
                    disabled=move || needs_two && count() < 2
                    title=if needs_two { "Needs two or more loaded *.prof files" } else { "The selected profile" }
                    on:click=move |_| u.mode.set(Some(m))
                >
                    {label}
                </button>
            }
        }
    };
    let pair = {
        let u = u.clone();
        move || {
            if mode.get() != Mode::Diff {
                return None;
            }
            let pprofs = profiles(state).0;
            let (base, target) = diff_pair(state, &u, &pprofs);
            let options = move |sel: Option<String>| {
                pprofs
                    .iter()
                    .map(|(n, _)| view! { <option value=n.clone() selected=sel.as_deref() == Some(n.as_str())>{n.clone()}</option> })
                    .collect_view()
            };
            let (ub, ut) = (u.base.clone(), u.target.clone());
            let (sb, st) = (base.clone(), target.clone());
            let swap = {
                let (ub, ut) = (u.base.clone(), u.target.clone());
                move |_| {
                    ub.set(st.clone());
                    ut.set(sb.clone());
                }
            };
            Some(view! {
                <label class="field">"Base " <select data-testid="dm-base" on:change=move |ev| ub.set(Some(event_target_value(&ev)))>{options.clone()(base)}</select></label>
                <button class="btn icon" title="Swap base and target" data-testid="dm-swap" on:click=swap>"⇄"</button>
                <label class="field">"Target " <select data-testid="dm-target" on:change=move |ev| ut.set(Some(event_target_value(&ev)))>{options(target)}</select></label>
            })
        }
    };
    let selected = move || (mode.get() == Mode::Profile).then(|| view! { <span class="muted">{state.selected.get()}</span> });
    let pending = move || pending.get().then(|| view! { <span class="muted updating">"updating…"</span> });
    let fold = u.fold.clone();
    let fold_set = u.fold.clone();
    let (kinds, devices) = (move || labels().kinds, move || labels().devices);
    let (kind, device) = (u.kind.clone(), u.device.clone());
    view! {
        <div class="dm-controls">
            <div class="segmented" role="group" aria-label="View">
                {mode_button(Mode::Profile, "Snapshot")}
                {mode_button(Mode::Diff, "Diff")}
                {mode_button(Mode::Series, "Series")}
            </div>
            {selected}
            {pair}
            <span class="sep"></span>
            <label class="field check" title="Collapse runs of library frames (site-packages, JAX, the standard library) to the library call your code made">
                <input type="checkbox" data-testid="dm-fold" prop:checked=move || fold.get() on:change=move |ev| fold_set.set(event_target_checked(&ev)) />
                "Fold library frames"
            </label>
            <label class="field">"Kind " {move || label_select("dm-kind", "all", kinds(), kind.clone())}</label>
            <label class="field">"Device " {move || label_select("dm-device", "all", devices(), device.clone())}</label>
            {pending}
        </div>
    }
}
