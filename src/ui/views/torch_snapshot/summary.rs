//! The device's figures: the peak (the trace's own, as PyTorch's replay counts it, and with what was
//! live before the trace), the events, the segments at the dump, what the ring buffer lost, and each
//! out-of-memory event explained.

use super::*;
use crate::ui::components::metric::Duration;

/// The cards, the history and the OOMs of device report `r`.
pub(super) fn summary(r: &DeviceReport) -> impl IntoView {
    let h = &r.history;
    let g = &r.segments;
    let first_us = h.first_time_us.unwrap_or(0);
    let span_us = h.last_time_us.unwrap_or(first_us).saturating_sub(first_us);
    let peak_at = r.peak_time_us.map(|t| t.saturating_sub(first_us));
    view! {
        <header class="summary-cards" data-testid="ts-summary">
            <div class="card" title="The most bytes the trace's own allocations held at once (PyTorch's replay of the trace)">
                <div class="label">"Peak active (trace)"</div>
                <div class="value"><Bytes metric="peak_active_bytes" value=r.peak_active_bytes /></div>
                <div class="muted small">
                    {(r.peak_event_index >= 0).then(|| view! { "event " <Count metric="peak_event_index" value=r.peak_event_index as u64 /> })}
                    {peak_at.map(|t| view! { " · " <Duration metric="peak_offset_us" value_us=t as f64 /> })}
                    {r.peak_time_us.map(|t| view! { <span hidden><Text metric="peak_time_us" value=t.to_string() /></span> })}
                </div>
            </div>
            <div class="card" title="With the allocations made before the trace began (or lost from its ring buffer), as PyTorch's viewer draws it">
                <div class="label">"Peak active (with earlier)"</div>
                <div class="value"><Bytes metric="peak_with_prior_bytes" value=r.peak_with_prior_bytes /></div>
                <div class="muted small">{if r.peak_with_prior_event_index < 0 {
                    view! { <Text metric="peak_with_prior_event_index" value="-1" shown="before the first event" /> }.into_any()
                } else {
                    view! { "event " <Count metric="peak_with_prior_event_index" value=r.peak_with_prior_event_index as u64 /> }.into_any()
                }}</div>
            </div>
            {card("Reserved at the dump", "segments_total_size", g.total_size, "dump")}
            {card("Allocated at the dump", "segments_allocated_size", g.allocated_size, "dump")}
            {card("Active at the dump", "segments_active_size", g.active_size, "dump")}
            <div class="card"><div class="label">"Segments"</div><div class="value"><Count metric="segments_count" value=g.count /></div>
                <div class="muted small">{g.blocks_by_state.iter().map(|(s, n)| view! { <span class="ts-state">{s.replace('_', " ")} " " <Count metric="blocks_by_state" value=*n key=s.clone() /></span> }).collect_view()}</div>
            </div>
            <div class="card"><div class="label">"Events"</div><div class="value"><Count metric="trace_events" value=h.trace_events /></div>
                <div class="muted small">"over " <Duration metric="trace_span_us" value_us=span_us as f64 /></div>
            </div>
            <div class="card" title="Segments allocated minus freed by the trace"><div class="label">"Reserved by the trace"</div>
                <div class="value"><Bytes metric="reserved_delta_bytes" value=r.reserved_delta_bytes /></div>
            </div>
        </header>
        <div class="ts-events muted small" data-testid="ts-events">
            {r.events.iter().map(|(a, n)| view! { <span><Count metric="events" value=*n key=a.clone() /> " " <code>{a.clone()}</code></span> }).collect_view()}
        </div>
        <section class="ts-history" data-testid="ts-history" data-lost=h.lost.to_string()>
            <h2>"History"</h2>
            <p><Text metric="history_sentence" value=h.sentence.clone() /></p>
            <dl class="ts-figures">
                <dt>"Blocks live before the trace"</dt><dd><Count metric="live_before_trace_blocks" value=h.live_before_trace_blocks /> " · " <Bytes metric="live_before_trace_bytes" value=h.live_before_trace_bytes /></dd>
                <dt>"Frees of allocations it never saw"</dt><dd><Count metric="unseen_frees" value=r.unseen_frees /> " · " <Bytes metric="unseen_freed_bytes" value=h.unseen_freed_bytes /></dd>
                <dt>"Active when it begins"</dt><dd><Bytes metric="active_at_start_bytes" value=h.active_at_start_bytes /></dd>
            </dl>
        </section>
        {(!r.ooms.is_empty()).then(|| view! {
            <section class="ts-ooms" data-testid="ts-ooms">
                <h2>"Out of memory"</h2>
                {r.ooms.iter().map(|o| {
                    let key = o.event_index.to_string();
                    view! {
                        <div class="card alert ts-oom" data-event=key.clone()>
                            <p><Text metric="oom_sentence" value=o.sentence.clone() key=key.clone() /></p>
                            <dl class="ts-figures">
                                <dt>"Event"</dt><dd><Count metric="oom_event_index" value=o.event_index key=key.clone() /></dd>
                                <dt>"Asked for"</dt><dd><Bytes metric="oom_requested_bytes" value=o.requested_bytes key=key.clone() /></dd>
                                <dt>"Active"</dt><dd><Bytes metric="oom_active_bytes" value=o.active_bytes key=key.clone() /></dd>
                                <dt>"Reserved"</dt><dd><Bytes metric="oom_reserved_bytes" value=o.reserved_bytes key=key.clone() /></dd>
                                <dt>"Cached, not active"</dt><dd><Bytes metric="oom_cached_free_bytes" value=o.cached_free_bytes key=key.clone() /></dd>
                                <dt>"Free on the device"</dt><dd><Bytes metric="oom_device_free_bytes" value=o.device_free_bytes key=key.clone() /></dd>
                            </dl>
                        </div>
                    }
                }).collect_view()}
            </section>
        })}
    }
}
