//! A series of snapshots: what keeps growing, with the leak suspects ranked.

use super::stacks::*;
use super::*;

/// How many non-suspect stacks the series shows before "Show all".
pub(super) const OTHER_STACKS: usize = 6;

#[component]
pub(super) fn SeriesView(view: DeviceMemorySeriesView) -> impl IntoView {
    let u = ui();
    let r = view.report;
    let labels: Vec<String> = r.snapshots.iter().map(|s| basename(&s.name).to_string()).collect();
    let totals: Vec<i64> = r.snapshots.iter().map(|s| s.total_bytes).collect();
    let (first, last) = (totals.first().copied().unwrap_or(0), totals.last().copied().unwrap_or(0));
    let order = if r.ordered_by_number {
        "ordered by the number in each file name"
    } else {
        "in the order loaded (the names carry no distinct numbers)"
    };
    let suspects: Vec<SeriesStack> = r.stacks.iter().take(r.suspect_count).cloned().collect();
    let others: Vec<SeriesStack> = r.stacks.iter().skip(r.suspect_count).cloned().collect();
    let other_count = others.len();
    let show_all = u.show_all.clone();
    let show_set = u.show_all.clone();
    let labels2 = labels.clone();
    let suspect_card = if r.suspect_count > 0 { "card alert" } else { "card" };
    view! {
        <header class="summary-cards">
            <div class="card"><div class="label">"Snapshots"</div><div class="value"><Count metric="snapshot_count" value=r.snapshots.len() as u64 /></div></div>
            <div class="card"><div class="label">"First → last"</div><div class="value"><Bytes metric="series_first_total_bytes" value=first />" → "<Bytes metric="series_last_total_bytes" value=last /></div></div>
            <div class="card"><div class="label">"Change"</div><div class="value"><SignedBytes metric="series_delta_total_bytes" value=last - first /></div></div>
            <div class=suspect_card><div class="label">"Leak suspects"</div><div class="value"><Count metric="suspect_count" value=r.suspect_count as u64 /></div></div>
        </header>
        {(!r.notes.is_empty()).then(|| view! { <ul class="notes">{r.notes.iter().map(|n| view! { <li>{n.clone()}</li> }).collect_view()}</ul> })}
        <section>
            <h2>"Live bytes per snapshot " <span class="muted small">{order}</span></h2>
            <SeriesChart values=totals labels=labels.clone() metric="snapshot_total_bytes" key="total" height=120.0 bars=true />
        </section>
        <section>
            <h2>"Leak suspects"</h2>
            {if suspects.is_empty() {
                view! { <p class="empty" data-testid="no-suspects">"No stack ended larger than it started while growing in more than half of the steps: nothing here looks like a leak."</p> }.into_any()
            } else {
                view! { <div class="multiples">{suspects.into_iter().enumerate().map(|(i, s)| stack_card(s, i + 1, labels.clone())).collect_view()}</div> }.into_any()
            }}
        </section>
        <section>
            <h2>"Other stacks " <span class="muted small">"largest last snapshot first"</span></h2>
            <div class="multiples">
                {move || {
                    let n = if show_all.get() { other_count } else { OTHER_STACKS };
                    others.iter().take(n).cloned().map(|s| stack_card(s, 0, labels2.clone())).collect_view()
                }}
            </div>
            {(other_count > OTHER_STACKS).then(|| view! {
                <button class="btn" data-testid="dm-show-all" on:click=move |_| show_set.update(|v| *v = !*v)>
                    {move || if u.show_all.get() { "Show fewer".to_string() } else { format!("Show all {other_count}") }}
                </button>
            })}
        </section>
    }
}

/// One stack through the series as a small multiple: its sparkline, growth figures and the
/// engine's explanation. `rank` is its place among the suspects (0: not a suspect).
pub(super) fn stack_card(s: SeriesStack, rank: usize, labels: Vec<String>) -> impl IntoView {
    let key = stack_key(&s.kind, &s.device, &s.site);
    let g = s.growth.clone();
    let last = s.bytes.last().copied().unwrap_or(0);
    let kind = kind_label(&s.kind, &s.device);
    view! {
        <article class="dm-stack" class:suspect=s.suspect data-site=s.site.clone() data-kind=s.kind.clone() data-suspect=s.suspect.to_string() data-rank=rank.to_string()>
            <div class="head">
                {(rank > 0).then(|| view! { <span class="rank">{format!("#{rank}")}</span> })}
                <code class="site" title=s.site.clone()>{s.site.clone()}</code>
                <span class="muted small">{kind}</span>
            </div>
            <SeriesChart values=s.bytes.clone() labels=labels metric="series_bytes" key=key.clone() height=44.0 colour_var=if s.suspect { "--grow" } else { "--fg-2" } />
            <div class="figures">
                <span>"now "<Bytes metric="series_last_bytes" value=last key=key.clone() /></span>
                <span>"net "<SignedBytes metric="series_net_growth_bytes" value=g.net_growth_bytes key=key.clone() /></span>
                <span>"per step "<SignedBytes metric="series_mean_growth_bytes_per_step" value=g.mean_growth_bytes_per_step.round() as i64 key=key.clone() /></span>
                <span>"grew in "<Count metric="series_grew_steps" value=g.grew_steps as u64 key=key.clone() />"/"{g.steps}</span>
                <span title="How well a straight line fits the bytes (1: steady growth)">"R² "<Text metric="series_r_squared" value=format!("{:.3}", g.r_squared) key=key.clone() /></span>
            </div>
            <p class="explain"><Text metric="series_explanation" value=s.explanation.clone() key=key /></p>
            <details><summary class="muted">"Stack"</summary>{stack_view(&s.frames)}</details>
        </article>
    }
}
