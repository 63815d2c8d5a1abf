//! Target minus base, stack by stack.

use super::stacks::*;
use super::*;
use crate::ui::components::metric::sign;

/// The stacks that changed between base and target, largest growth first; a click shows the stack.
#[component]
pub(super) fn DiffTable(rows: Vec<DiffRow>) -> impl IntoView {
    let max = rows.iter().map(|s| s.delta_bytes.unsigned_abs()).max().unwrap_or(0).max(1);
    let key = |s: &DiffRow| stack_key(&s.kind, &s.device, &s.site);
    let columns = vec![
        Column::new("site", "Site (library call ← your code)", move |s: &DiffRow, _| {
            view! { <span title=s.site.clone()><Text metric="diff_site" value=s.site.clone() key=key(s) /></span> }.into_any()
        })
        .sort_key(|s| s.site.clone()),
        Column::new("kind", "Kind", |s: &DiffRow, _| view! { <span class="muted">{kind_label(&s.kind, &s.device)}</span> }.into_any())
            .width("130px")
            .sort_key(|s| (s.kind.clone(), s.device.clone())),
        Column::new("base", "Base", move |s: &DiffRow, _| view! { <Bytes metric="diff_base_bytes" value=s.base_bytes key=key(s) /> }.into_any())
            .right()
            .width("100px")
            .sort_key(|s| s.base_bytes),
        Column::new("target", "Target", move |s: &DiffRow, _| view! { <Bytes metric="diff_target_bytes" value=s.new_bytes key=key(s) /> }.into_any())
            .right()
            .width("100px")
            .sort_key(|s| s.new_bytes),
        Column::new("change", "Change", move |s: &DiffRow, _| view! { <SignedBytes metric="diff_delta_bytes" value=s.delta_bytes key=key(s) /> }.into_any())
            .right()
            .width("110px")
            .sort_key(|s| s.delta_bytes),
        Column::new("bar", "", move |s: &DiffRow, _| {
            let pct = s.delta_bytes.unsigned_abs() as f64 * 100.0 / max as f64;
            view! { <div class="delta-bar" data-sign=sign(s.delta_bytes as f64) style=format!("width:{pct:.1}%")></div> }.into_any()
        })
        .class("bar-col")
        .width("120px"),
        Column::new("delta_count", "Δ count", move |s: &DiffRow, _| {
            view! { <span class="num" data-metric="diff_delta_count" data-key=key(s) data-value=s.delta_count.to_string()>{crate::units::signed_count(s.delta_count, true)}</span> }.into_any()
        })
        .right()
        .width("80px")
        .sort_key(|s| s.delta_count),
    ];
    let spec = TableSpec::new("dm-diff", columns).row_attrs(|s, _| vec![("data-site", s.site.clone()), ("data-kind", s.kind.clone())]);
    with_stack_panel(spec, rows, |s| &s.frames)
}

#[component]
pub(super) fn DiffView(view: DeviceMemoryDiffView) -> impl IntoView {
    let r = view.report;
    let no_highlight = Signal::derive(|| None);
    view! {
        <header class="summary-cards">
            <div class="card"><div class="label">{format!("Base · {}", view.base_name)}</div><div class="value"><Bytes metric="diff_base_total_bytes" value=r.base_total_bytes /></div></div>
            <div class="card"><div class="label">{format!("Target · {}", view.target_name)}</div><div class="value"><Bytes metric="diff_target_total_bytes" value=r.new_total_bytes /></div></div>
            <div class="card"><div class="label">"Change"</div><div class="value"><SignedBytes metric="diff_delta_total_bytes" value=r.delta_bytes /></div></div>
            <div class="card"><div class="label">"Change in samples"</div><div class="value"><span class="num" data-metric="diff_delta_total_count" data-value=r.delta_count.to_string()>{crate::units::signed_count(r.delta_count, true)}</span></div></div>
        </header>
        {(!r.notes.is_empty()).then(|| view! { <ul class="notes">{r.notes.iter().map(|n| view! { <li>{n.clone()}</li> }).collect_view()}</ul> })}
        <section>
            <h2>"Change by Python stack " <span class="legend"><i class="grow"></i>"growth " <i class="shrink"></i>"shrinkage"</span></h2>
            {if r.stacks.is_empty() {
                view! { <p class="empty" data-testid="diff-empty">"No stack changed: the target holds exactly what the base held."</p> }.into_any()
            } else {
                view! { <FlameGraph nodes=view.flame diff=true highlight=no_highlight /> }.into_any()
            }}
        </section>
        <section>
            <h2>"Changed stacks"</h2>
            <DiffTable rows=r.stacks />
        </section>
    }
}
