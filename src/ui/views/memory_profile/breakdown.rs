//! The breakdown table of the allocations live at the peak.

use super::*;

/// The rows live at the peak, as XProf orders them until a column is sorted; a click on a row draws
/// its allocation's lifetimes on the timeline.
#[component]
pub(super) fn Breakdown(name: String, a: Arc<AllocatorView>, selected_row: RwSignal<Option<usize>>) -> impl IntoView {
    let hide_small = RwSignal::new(false);
    let text = |metric: &'static str, value: &str, k: usize| view! { <Text metric value=value.to_string() key=k.to_string() /> };
    let mut columns: Vec<Column<BreakdownEntry>> = vec![Column::new("op", "Op name", |r: &BreakdownEntry, k| {
        let op = &r.metadata.tf_op_name;
        let shown = if op.is_empty() { "(no op)".to_string() } else { op.clone() };
        view! { <span class:muted=op.is_empty() title=op.clone()><Text metric="row_op" value=op.clone() key=k.to_string() shown /></span> }
            .into_any()
    })
    .class("op")
    .sort_key(|r| r.metadata.tf_op_name.clone())
    .csv("op_name", |r| r.metadata.tf_op_name.clone())];
    // Where the trace's allocations are named (no op says what asked for them): Tidemark's name of
    // each row, beside XProf's op.
    if a.named.is_some() {
        columns.push(
            Column::new("name", "Allocated by", |r: &BreakdownEntry, k| {
                let name = r.name.clone().unwrap_or_default();
                view! { <span class:muted=name.is_empty() title=name.clone()><Text metric="row_name" value=name.clone() key=k.to_string() shown=if name.is_empty() { "–".to_string() } else { name.clone() } /></span> }.into_any()
            })
            .class("op")
            .sort_key(|r| r.name.clone())
            .csv("allocated_by", |r| r.name.clone().unwrap_or_default()),
        );
    }
    columns.extend([
        Column::new("allocation_bytes", "Allocation size", |r: &BreakdownEntry, k| view! { <Bytes metric="row_allocation_bytes" value=r.metadata.allocation_bytes key=k.to_string() /> }.into_any())
            .right()
            .width("130px")
            .sort_key(|r| r.metadata.allocation_bytes)
            .csv("allocation_bytes", |r| r.metadata.allocation_bytes.to_string()),
        Column::new("requested_bytes", "Requested size", |r: &BreakdownEntry, k| view! { <Bytes metric="row_requested_bytes" value=r.metadata.requested_bytes key=k.to_string() /> }.into_any())
            .right()
            .width("130px")
            .sort_key(|r| r.metadata.requested_bytes)
            .csv("requested_bytes", |r| r.metadata.requested_bytes.to_string()),
        Column::new("occurrences", "Occurrences", |r: &BreakdownEntry, k| view! { <Count metric="row_occurrences" value=r.occurrences key=k.to_string() /> }.into_any())
            .right()
            .width("115px")
            .sort_key(|r| r.occurrences)
            .csv("occurrences", |r| r.occurrences.to_string()),
        Column::new("freed_before_peak", "Freed before peak", |r: &BreakdownEntry, k| {
            view! { <span class:muted=r.freed_before_peak == 0><Count metric="row_freed_before_peak" value=r.freed_before_peak key=k.to_string() /></span> }.into_any()
        })
        .right()
        .width("150px")
        .sort_key(|r| r.freed_before_peak)
        .csv("freed_before_peak", |r| r.freed_before_peak.to_string()),
        Column::new("region", "Region", move |r: &BreakdownEntry, k| view! { <span title=r.metadata.region_type.clone()>{text("row_region", &r.metadata.region_type, k)}</span> }.into_any())
            .width("110px")
            .sort_key(|r| r.metadata.region_type.clone())
            .csv("region_type", |r| r.metadata.region_type.clone()),
        Column::new("data_type", "Data type", move |r: &BreakdownEntry, k| view! { <span title=r.metadata.data_type.clone()>{text("row_data_type", &r.metadata.data_type, k)}</span> }.into_any())
            .width("100px")
            .sort_key(|r| r.metadata.data_type.clone())
            .csv("data_type", |r| r.metadata.data_type.clone()),
        Column::new("shape", "Shape", move |r: &BreakdownEntry, k| view! { <code title=r.metadata.tensor_shape.clone()>{text("row_shape", &r.metadata.tensor_shape, k)}</code> }.into_any())
            .width("140px")
            .sort_key(|r| r.metadata.tensor_shape.clone())
            .csv("shape", |r| r.metadata.tensor_shape.clone()),
    ]);
    let export_name =
        format!("{}.{}.breakdown.csv", name.trim_end_matches(".gz").trim_end_matches(".pb").trim_end_matches(".xplane"), a.memory_id);
    let spec = TableSpec::new("mp-table", columns)
        .testid("breakdown")
        .filter("Filter op, region, type, shape", "breakdown-filter", |r: &BreakdownEntry| r.metadata.strings().to_vec())
        .keep(move |r: &BreakdownEntry| !hide_small.get() || r.metadata.requested_bytes as f64 >= SMALL_ROW_BYTES)
        .counts("breakdown-count", "breakdown_rows_shown", "breakdown_rows")
        .csv(export_name, "export-csv")
        .row_attrs(|_, i| vec![("data-row", i.to_string())])
        .row_class(|r: &BreakdownEntry| if r.lifetimes.is_empty() { "" } else { "selectable" })
        .row_title(|r: &BreakdownEntry| {
            if r.lifetimes.is_empty() {
                "A computed row: no single allocation to draw"
            } else {
                "Click to draw this allocation's lifetime on the timeline"
            }
            .to_string()
        })
        .pick(selected_row);
    view! {
        <section class="mp-breakdown">
            <h2>"Live at the peak"</h2>
            <Table spec rows=Arc::new(a.breakdown.clone())>
                <label class="field" title="XProf's page hides rows requesting less than 0.001 GiB">
                    <input type="checkbox" data-testid="hide-small" prop:checked=move || hide_small.get() on:change=move |ev| hide_small.set(event_target_checked(&ev)) />
                    "Hide rows under 0.001 GiB requested (as XProf)"
                </label>
            </Table>
            <p class="hint muted">
                <strong>"Freed before peak"</strong>
                " is Tidemark's: allocations XProf lists as live at the peak although a deallocation before the peak freed them. XProf replays only the peak's step, and steps overlap in time (input pipeline, next step), so it misses those frees; the other columns are XProf's."
            </p>
        </section>
    }
}
