//! One memory ID: its summary cards, then its timeline, breakdown and leak hints (or, when the
//! allocator reported no sizes, only its counts).

use super::breakdown::Breakdown;
use super::leaks::LeakHintsSection;
use super::named::NamedPeak;
use super::timeline_chart::TimelineChart;
use super::*;
use crate::ui::views::trace_viewer::show_in_trace;

#[component]
pub(super) fn AllocatorPanel(
    file_id: u32,
    name: String,
    memory_ids: Vec<String>,
    a: Arc<AllocatorView>,
    memory_id: RwSignal<Option<String>>,
    elapsed_ms: ReadSignal<Option<f64>>,
) -> impl IntoView {
    let state = expect_context::<AppState>();
    let selected_row = state.breakdown_row;
    let current = a.memory_id.clone();
    let s = &a.summary;
    let c = a.counts;
    // The peak's event in the trace (the Memory Profile's times leave out its line's start).
    let peak_trace_link = a.peak_trace_time_ps.map(|t| view! {
        <div class="sub"><a href="#" data-testid="peak-trace-link" data-trace-ps=t.to_string() title="The events around the peak, in the Trace Viewer" on:click=move |ev| { ev.prevent_default(); show_in_trace(state, t); }>"in the trace →"</a></div>
    });

    // The breakdown and the leak hints, below the fold, are built in a task of their own after the
    // second frame: the first lays out the summary and the timeline (whose width arrives then), the
    // second draws the timeline (see `TimelineChart`), the task after it builds the tables and the
    // third frame lays them out. The reply is then not one long task of building, laying out and
    // drawing every section.
    let below_fold = RwSignal::new(false);
    request_animation_frame(move || {
        request_animation_frame(move || {
            set_timeout(
                move || {
                    below_fold.try_set(true);
                },
                std::time::Duration::ZERO,
            )
        })
    });

    view! {
        <header class="mp-head">
            <label class="field">
                "Memory ID"
                <select
                    data-testid="memory-id-select"
                    prop:value=current.clone()
                    on:change=move |ev| {
                        selected_row.set(None);
                        memory_id.set(Some(event_target_value(&ev)));
                    }
                >
                    {memory_ids.into_iter().map(|id| view! { <option value=id.clone() selected=id == current>{id.clone()}</option> }).collect_view()}
                </select>
            </label>
            <span class="muted">
                <Count metric="snapshot_count" value=a.snapshot_count as u64 /> " events · peak in step "
                <Text metric="peak_step_id" value=s.peak_step_id.to_string() />
            </span>
            <span class="spacer"></span>
            {move || elapsed_ms.get().map(|t| view! {
                <span class="muted" title="Time from the page's request to the worker's reply; the first request includes the analysis, later ones reuse it.">
                    "engine reply " <Text metric="memory_profile_reply_ms" value=format!("{t:.1}") shown=format!("{t:.0} ms") />
                </span>
            })}
        </header>

        <div class="summary-cards" data-testid="memory-summary">
            <div class="card"><div class="label">"Allocations"</div><div class="value"><Count metric="allocations" value=c.allocations /></div>{(c.allocations != c.sampled_allocations).then(|| view! { <div class="sub" title="XProf's page counts only its 1,000 sampled points">"XProf: " <Count metric="xprof_sampled_allocations" value=c.sampled_allocations /> " (sampled)"</div> })}</div>
            <div class="card"><div class="label">"Deallocations"</div><div class="value"><Count metric="deallocations" value=c.deallocations /></div>{(c.deallocations != c.sampled_deallocations).then(|| view! { <div class="sub" title="XProf's page counts only its 1,000 sampled points">"XProf: " <Count metric="xprof_sampled_deallocations" value=c.sampled_deallocations /> " (sampled)"</div> })}</div>
            {(!a.zero_bytes).then(|| view! {
                <div class="card"><div class="label">"Peak heap"</div><div class="value"><Bytes metric="peak_heap_bytes" value=s.peak_stats.heap_allocated_bytes /></div></div>
                <div class="card"><div class="label">"Peak stack"</div><div class="value"><Bytes metric="peak_stack_bytes" value=s.peak_stats.stack_reserved_bytes /></div></div>
                <div class="card"><div class="label">"Peak time"</div><div class="value"><Text metric="peak_time_ps" value=s.peak_stats_time_ps.to_string() shown=ms(s.peak_stats_time_ps) /></div>
                    {peak_trace_link}</div>
                <div class="card"><div class="label">"Capacity"</div><div class="value"><Bytes metric="memory_capacity_bytes" value=s.memory_capacity_bytes /></div></div>
                <div class="card"><div class="label">"Peak fragmentation"</div><div class="value"><Text metric="fragmentation_at_peak" value=s.peak_stats.fragmentation.to_string() shown=percent(s.peak_stats.fragmentation) /></div></div>
                <div class="card"><div class="label">"Lifetime peak"</div><div class="value"><Bytes metric="peak_bytes_usage_lifetime" value=s.peak_bytes_usage_lifetime /></div></div>
            })}
        </div>

        {if a.zero_bytes {
            view! { <ZeroBytes a=a.clone() /> }.into_any()
        } else {
            view! {
                <TimelineChart file_id a=a.clone() selected_row />
                {move || below_fold.get().then(|| view! {
                    {a.named.clone().map(|named| view! { <NamedPeak name=name.clone() named=Arc::new(named) /> })}
                    <Breakdown name=name.clone() a=a.clone() selected_row />
                    <LeakHintsSection a=a.clone() />
                })}
            }.into_any()
        }}
    }
}

/// Events with every byte count zero: counts are real, sizes are not recorded.
#[component]
pub(super) fn ZeroBytes(a: Arc<AllocatorView>) -> impl IntoView {
    view! {
        <div class="mp-empty" data-testid="memory-profile-empty" data-reason="zero_bytes">
            <p>
                <strong>"The allocator " <code>{a.memory_id.clone()}</code> " recorded its events without sizes"</strong>
                ": every byte count in them is zero, so there is no timeline or peak to show — only the counts above."
            </p>
            <p class="muted">
                "TensorFlow's default CPU allocator does this. Profile again with " <code>"TF_CPU_ALLOCATOR_USE_BFC=true"</code>
                " set before TensorFlow starts, or on a GPU, to get real sizes."
            </p>
        </div>
    }
}
