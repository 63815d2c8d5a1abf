//! The hovered event's details beside the pointer: what happened (allocation or deallocation, at
//! what time, by which op, named how), the allocation's size, shape and region, and the allocator's
//! state then.

use super::super::*;
use super::Chart;

/// The tooltip's width: nearer the canvas's right edge than this it goes left of the pointer.
const TOOLTIP_W: f64 = 300.0;

/// The tooltip of `c`'s hovered event (nothing while none is hovered).
pub(super) fn tooltip(c: Chart) -> impl IntoView {
    move || {
        let i = c.hover.get()?;
        let mut event = None;
        c.with_events(&mut |events| event = events.get(i).cloned());
        let e = event?;
        let a = c.a.get_value();
        let (x, y) = c.pointer.get();
        let left = if x + TOOLTIP_W > c.width.get() { x - TOOLTIP_W } else { x + 14.0 };
        let m = &e.activity;
        let st = e.point.stats;
        // What asked for the allocation, where the trace's allocations are named.
        let name = e.name.and_then(|k| a.named.as_ref()?.labels.get(k as usize).cloned());
        let is_peak = e.point.time_offset_ps == a.summary.peak_stats_time_ps && st.in_use_bytes() == a.summary.peak_stats.peak_bytes_in_use;
        Some(view! {
            <div class="mp-tooltip" data-testid="timeline-tooltip" style=format!("left:{left:.0}px;top:{:.0}px", (y + 14.0).min(CHART_HEIGHT - 40.0))>
                <div class="tt-head">
                    <Text metric="hover_activity" value=format!("{:?}", m.activity).to_lowercase() shown=if m.activity == Activity::Allocation { "Allocation" } else { "Deallocation" }.to_string() />
                    " at " <Text metric="hover_time_ps" value=e.point.time_offset_ps.to_string() shown=ms(e.point.time_offset_ps) />
                    {is_peak.then_some(" · peak")}
                </div>
                <div class="tt-op"><Text metric="hover_op" value=m.tf_op_name.clone() shown=if m.tf_op_name.is_empty() { "(no op)".to_string() } else { m.tf_op_name.clone() } /></div>
                {name.map(|n| view! { <div class="tt-name" data-testid="hover-name">"Allocated by " <Text metric="hover_name" value=n /></div> })}
                <dl>
                    <dt>"Size"</dt><dd><Bytes metric="hover_allocation_bytes" value=m.allocation_bytes /> " (requested " <Bytes metric="hover_requested_bytes" value=m.requested_bytes /> ")"</dd>
                    <dt>"Shape"</dt><dd><Text metric="hover_shape" value=m.tensor_shape.clone() /> " " <Text metric="hover_dtype" value=m.data_type.clone() /></dd>
                    <dt>"Region"</dt><dd><Text metric="hover_region" value=m.region_type.clone() /></dd>
                    <dt>"Step"</dt><dd><Text metric="hover_step" value=m.step_id.to_string() /></dd>
                    <dt>"Heap"</dt><dd><Bytes metric="hover_heap_bytes" value=st.heap_allocated_bytes /> " + stack " <Bytes metric="hover_stack_bytes" value=st.stack_reserved_bytes /></dd>
                    <dt>"Free"</dt><dd><Bytes metric="hover_free_bytes" value=st.free_memory_bytes /> " · frag. " <Text metric="hover_fragmentation" value=st.fragmentation.to_string() shown=percent(st.fragmentation) /></dd>
                </dl>
            </div>
        })
    }
}
