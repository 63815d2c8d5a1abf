//! Leak hints: what is still live at the end of the profiled window, and the unmatched events.

use super::named::PeakBar;
use super::*;
use crate::engine::memory_profile::NamedPeakRow;

#[component]
pub(super) fn LeakHintsSection(a: Arc<AllocatorView>) -> impl IntoView {
    let h = a.leaks.clone();
    let c = a.counts;
    let first_step = h.step_floors.first().map(|f| f.step_id);
    let last_step = h.step_floors.last().map(|f| f.step_id);
    let steps = h.step_floors.len();
    let columns = vec![
        Column::new("op", "Op", |g: &LiveOpGroup, _| {
            view! { <code title=g.tf_op_name.clone()>{if g.tf_op_name.is_empty() { "(no op)".to_string() } else { g.tf_op_name.clone() }}</code> }.into_any()
        })
        .class("op")
        .sort_key(|g| g.tf_op_name.clone()),
        Column::new("allocations", "Allocations", |g: &LiveOpGroup, _| {
            view! { <Count metric="live_at_end_allocations" value=g.allocations key=g.tf_op_name.clone() /> }.into_any()
        })
        .right()
        .width("110px")
        .sort_key(|g| g.allocations),
        Column::new("bytes", "Bytes", |g: &LiveOpGroup, _| {
            view! { <Bytes metric="live_at_end_op_bytes" value=g.allocation_bytes key=g.tf_op_name.clone() /> }.into_any()
        })
        .right()
        .width("110px")
        .sort_key(|g| g.allocation_bytes),
    ];
    let live_ops = TableSpec::new("mp-live", columns)
        .filter("Filter ops", "live-at-end-filter", |g: &LiveOpGroup| vec![g.tf_op_name.as_str()])
        .max_height(320.0);
    view! {
        <section class="mp-leaks" data-testid="leak-hints">
            <h2>"Leak hints"</h2>
            <p>
                "In the profiled window: " <Count metric="allocations" value=c.allocations key="window" /> " allocations ("
                <Bytes metric="window_allocated_bytes" value=h.allocated_bytes /> ") and " <Count metric="deallocations" value=c.deallocations key="window" />
                " deallocations (" <Bytes metric="window_deallocated_bytes" value=h.deallocated_bytes /> ")"
                {(h.unmatched_deallocations > 0).then(|| view! {
                    "; " <Count metric="unmatched_deallocations" value=h.unmatched_deallocations /> " deallocations free memory allocated before the window"
                })}
                "."
            </p>
            {if h.heap_grows_every_step {
                view! {
                    <p class="notes" data-testid="heap-grows">
                        "Heap grows step over step: the lowest usage of each of the " {steps} " steps ("
                        {first_step} "–" {last_step} ") is above the previous step's, "
                        <Bytes metric="floor_growth_bytes" value=h.floor_growth_bytes /> " from first to last. Memory retained every step is a leak or a cache still warming up."
                    </p>
                }.into_any()
            } else {
                view! {
                    <p class="muted" data-testid="heap-steady">
                        "Lowest usage per step does not rise every step (" {steps} " steps; first to last "
                        <Bytes metric="floor_growth_bytes" value=h.floor_growth_bytes /> ")."
                    </p>
                }.into_any()
            }}
            <p>
                "Still live at the end of the window: " <Bytes metric="live_at_end_bytes" value=h.live_at_end_bytes /> " in "
                <Count metric="live_at_end_groups" value=h.live_at_end.len() as u64 /> " op(s):"
            </p>
            <Table spec=live_ops rows=Arc::new(h.live_at_end.clone()) />
            {named_suspects(&a)}
        </section>
    }
}

/// The allocations still live at the end by what allocated each (module run and buffer, compile,
/// transfer), where the trace's allocations are named: the suspects' names.
fn named_suspects(a: &AllocatorView) -> Option<impl IntoView> {
    let named = a.named.as_ref().filter(|n| n.unaligned.is_none() && !n.live_at_end.is_empty())?;
    let columns = vec![
        Column::new("name", "Allocated by", |r: &NamedPeakRow, k| {
            view! { <span title=r.name.label.clone()><Text metric="live_at_end_name" value=r.name.label.clone() key=k.to_string() /></span> }.into_any()
        })
        .class("op")
        .sort_key(|r| r.name.label.clone()),
        Column::new("kind", "Kind", |r: &NamedPeakRow, k| view! { <Text metric="live_at_end_kind" value=r.name.kind.label() key=k.to_string() /> }.into_any())
            .width("120px")
            .sort_key(|r| r.name.kind),
        Column::new("python", "Python", |r: &NamedPeakRow, _| view! { <code>{r.name.python_frame.clone().unwrap_or_default()}</code> }.into_any())
            .width("150px")
            .sort_key(|r| r.name.python_frame.clone()),
        Column::new("allocations", "Allocations", |r: &NamedPeakRow, k| {
            view! { <Count metric="live_at_end_named_allocations" value=r.allocations key=k.to_string() /> }.into_any()
        })
        .right()
        .width("110px")
        .sort_key(|r| r.allocations),
        Column::new("bytes", "Bytes", |r: &NamedPeakRow, k| {
            view! { <Bytes metric="live_at_end_named_bytes" value=r.allocation_bytes key=k.to_string() /> }.into_any()
        })
        .right()
        .width("110px")
        .sort_key(|r| r.allocation_bytes),
    ];
    let spec = TableSpec::new("mp-table", columns)
        .testid("live-at-end-named")
        .row_attrs(|r: &NamedPeakRow, i| vec![("data-row", i.to_string()), ("data-kind", format!("{:?}", r.name.kind))])
        .max_height(320.0);
    Some(view! {
        <p>"The same allocations by what allocated each:"</p>
        <PeakBar title="By module" metric="live_at_end_module_bytes" share_metric="live_at_end_module_fraction" testid="live-at-end-by-module" parts=named.live_at_end_bar.clone() />
        <Table spec rows=Arc::new(named.live_at_end.clone()) />
    })
}
