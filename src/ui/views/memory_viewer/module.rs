//! One module's page: the headline figures, the working-space and block charts, the side panels.

use super::details::{BufferDetails, BufferInfo};
use super::peak_buffers::PeakBuffers;
use super::shrink::Shrink;
use crate::engine::memory_viewer_columns::ViewerData;
use crate::ui::charts::block_timeline::{BlockTimeline, TimelineData};
use crate::ui::charts::plot::{group_color, GROUPS};
use crate::ui::charts::viewport::Viewport;
use crate::ui::charts::working_space::WorkingSpace;
use crate::ui::components::metric::{Bytes, Count, Text};
use crate::ui::state::AppState;
use leptos::prelude::*;
use std::collections::BTreeSet;
use std::sync::Arc;

/// The logical buffers instruction `op` defines: those whose text names it, at the peak or among the
/// heap-simulated blocks.
fn buffers_defined_by(viewer: &ViewerData, op: &str) -> BTreeSet<i64> {
    let peak = viewer.peak_buffers().filter(|b| b.text.name == op).filter_map(|b| b.logical_buffer_id);
    let blocks =
        (0..viewer.block_count()).filter_map(|i| viewer.block(i)).filter(|b| b.text.name == op).filter_map(|b| b.logical_buffer_id);
    peak.chain(blocks).collect()
}

#[component]
pub(super) fn Module(
    viewer: Arc<ViewerData>,
    timeline: Arc<TimelineData>,
    load_ms: f64,
    /// The op whose buffers are highlighted (from an op row's "show buffers" link).
    highlight: Option<String>,
) -> impl IntoView {
    let highlighted: Arc<BTreeSet<i64>> = Arc::new(highlight.as_deref().map(|op| buffers_defined_by(&viewer, op)).unwrap_or_default());
    // The largest highlighted buffer at the peak (else the first) is pinned: the charts and the details
    // show it.
    let first_highlighted = viewer
        .peak_buffers_by_size
        .iter()
        .filter_map(|&i| viewer.peak_buffer(i)?.logical_buffer_id)
        .find(|id| highlighted.contains(id))
        .or_else(|| highlighted.first().copied());
    let hovered = RwSignal::new(None::<i64>);
    let pinned = RwSignal::new(first_highlighted);
    let view_port: RwSignal<Viewport> = RwSignal::new(timeline.full);
    let v = viewer.clone();
    let f = v.figures.clone().into_owned();
    let fragmentation = f.fragmentation.map(|x| (format!("{x}"), format!("{:.1} %", x * 100.0)));
    let notes = v.notes.to_vec();
    let has_blocks = !timeline.is_empty();
    let details_viewer = viewer.clone();
    let details_timeline = timeline.clone();
    let default_id = v.peak_buffers_by_size.iter().filter_map(|&i| v.peak_buffer(i)).find_map(|o| o.logical_buffer_id);
    let details = move || {
        let id = hovered.get().or(pinned.get()).or(default_id)?;
        BufferInfo::find(&details_viewer, &details_timeline, id).map(|b| view! { <BufferDetails b pinned=pinned.get() == Some(id) /> })
    };
    view! {
        <div class="mv-module" data-module=v.module_name.to_string() data-load-ms=format!("{load_ms:.1}")>
            {highlight.map(|op| view! { <Highlight op highlighted=highlighted.clone() /> })}
            {(!notes.is_empty()).then(|| view! { <ul class="notes">{notes.into_iter().map(|n| view! { <li data-testid="note">{n}</li> }).collect_view()}</ul> })}
            <div class="summary-cards mv-cards" data-testid="mv-overview">
                <Card label="Peak heap" hint="The heap at its highest point, including parameters and outputs live for the whole program"><Bytes metric="peak_heap_bytes" value=f.peak_heap_bytes /></Card>
                <Card label="Unpadded peak" hint="The same buffers without layout padding and tiling"><Bytes metric="peak_unpadded_heap_bytes" value=f.peak_unpadded_heap_bytes /></Card>
                <Card label="Padding overhead" hint="Peak − unpadded peak"><Bytes metric="padding_overhead_bytes" value=f.padding_overhead_bytes /></Card>
                <Card label="Total allocation" hint="Every allocation of this memory space except thread-local ones"><Bytes metric="total_allocation_bytes" value=f.total_allocation_bytes /></Card>
                <Card label="Fragmentation" hint="Share of the temporary allocation unused at the peak">
                    {match fragmentation {
                        Some((raw, shown)) => view! { <Text metric="fragmentation" value=raw shown=shown /> }.into_any(),
                        None => view! { <Text metric="fragmentation" value="" shown="—" /> }.into_any(),
                    }}
                </Card>
                <Card label="Entry parameters" hint="Arguments of the entry computation"><Bytes metric="entry_parameters_bytes" value=f.entry_parameters_bytes /></Card>
                <Card label="Maybe live-out" hint="Outputs that may outlive the program"><Bytes metric="maybe_live_out_bytes" value=f.maybe_live_out_bytes /></Card>
                <Card label="Temporaries" hint="Total allocation − allocations live for the whole program"><Bytes metric="temporary_allocation_bytes" value=f.temporary_allocation_bytes /></Card>
                <Card label="Indefinite" hint="Parameters, constants and outputs: live for the whole program"><Bytes metric="indefinite_allocation_bytes" value=f.indefinite_allocation_bytes /></Card>
                <Card label="Non-reusable" hint="Thread-local and tuple allocations"><Bytes metric="non_reusable_bytes" value=f.non_reusable_bytes /></Card>
            </div>
            <div class="mv-grid">
                <div class="mv-charts">
                    <section class="panel">
                        <div class="panel-head">
                            <h2>"Working space"</h2>
                            {(!v.heap_bytes.is_empty()).then(|| view! {
                                <span class="legend"><i class="swatch line accent"></i>"heap" <i class="swatch line dashed"></i>"unpadded" <i class="swatch line peak"></i>"peak at step " <Count metric="peak_position" value=v.peak_position as u64 /></span>
                            })}
                        </div>
                        {if v.heap_bytes.is_empty() {
                            view! { <p class="empty chart-empty" data-testid="no-trace">"This memory space has no heap-simulator trace, so the heap does not change over the program: it holds only the allocations live for the whole program, listed below."</p> }.into_any()
                        } else {
                            view! { <WorkingSpace viewer=viewer.clone() view=view_port hovered pinned /> }.into_any()
                        }}
                    </section>
                    <section class="panel">
                        <div class="panel-head">
                            <h2>"Allocation blocks"</h2>
                            <span class="legend">
                                {GROUPS.iter().map(|g| view! { <i class="swatch" style=format!("background:{}", group_color(g, 0))></i>{*g}" " }).collect_view()}
                            </span>
                        </div>
                        {if has_blocks {
                            view! {
                                <BlockTimeline viewer=viewer.clone() data=timeline.clone() view=view_port hovered pinned />
                                <div class="muted chart-foot">"x: program order (width = lifetime) · y: offset (height = size) · wheel zooms (Ctrl: x only, Alt: y only) · drag pans · W/S zoom, A/D pan · click pins a buffer · double-click resets"</div>
                            }.into_any()
                        } else {
                            view! { <p class="empty chart-empty" data-testid="no-blocks">"This memory space has no heap-simulated buffers: everything in it is live for the whole program (parameters, constants, outputs), so there is no layout over time to draw."</p> }.into_any()
                        }}
                    </section>
                </div>
                <aside class="mv-side">
                    {details}
                    <Shrink viewer=viewer.clone() hovered pinned />
                </aside>
            </div>
            <PeakBuffers viewer=viewer.clone() hovered pinned highlighted />
        </div>
    }
}

#[component]
pub(super) fn Card(label: &'static str, hint: &'static str, children: Children) -> impl IntoView {
    view! { <div class="card" title=hint><div class="label">{label}</div><div class="value">{children()}</div></div> }
}

/// The line naming the op whose buffers are highlighted, how many there are, and a way to clear it.
#[component]
fn Highlight(op: String, highlighted: Arc<BTreeSet<i64>>) -> impl IntoView {
    let state = expect_context::<AppState>();
    let ids = highlighted.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
    let n = highlighted.len() as u64;
    let shown = op.clone();
    view! {
        <p class="mv-highlight" data-testid="mv-highlight" data-op=op data-buffer-ids=ids>
            "Buffers defined by " <code>{shown}</code> ": " <Count metric="highlighted_buffer_count" value=n />
            {if n == 0 {
                " — none in this memory space (the op writes into a buffer another instruction defines, or into none)"
            } else {
                " highlighted below; the largest is pinned in the charts"
            }}
            <button class="btn" data-testid="mv-highlight-clear" on:click=move |_| state.highlight_op.set(None)>"clear"</button>
        </p>
    }
}
