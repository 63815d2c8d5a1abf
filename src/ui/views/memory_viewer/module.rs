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
use leptos::prelude::*;
use std::sync::Arc;

#[component]
pub(super) fn Module(viewer: Arc<ViewerData>, timeline: Arc<TimelineData>, load_ms: f64) -> impl IntoView {
    let hovered = RwSignal::new(None::<i64>);
    let pinned = RwSignal::new(None::<i64>);
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
            <PeakBuffers viewer=viewer.clone() hovered pinned />
        </div>
    }
}

#[component]
pub(super) fn Card(label: &'static str, hint: &'static str, children: Children) -> impl IntoView {
    view! { <div class="card" title=hint><div class="label">{label}</div><div class="value">{children()}</div></div> }
}
