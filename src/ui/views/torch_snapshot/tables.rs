//! The device's tables: the largest allocations (a click shows their Python and C++ frames), what
//! was live at the peak by size and frame, and the leak suspects — what the trace never freed and
//! how each frame's live bytes grew over it.

use super::*;
use crate::analysis::torch_snapshot::{FrameBytes, FrameGrowth, LargeAllocation, LiveRow};
use crate::ui::components::metric::SignedBytes;
use crate::ui::components::table::{Column, Table, TableSpec, TableState};

/// A frame's cell: the text, or a note when the stack had no Python frame.
fn frame_cell(frame: &str) -> AnyView {
    if frame.is_empty() {
        view! { <span class="muted">"(no Python frame)"</span> }.into_any()
    } else {
        view! { <code>{frame.to_string()}</code> }.into_any()
    }
}

pub(super) fn tables(r: &DeviceReport, choose: Callback<i64>) -> impl IntoView {
    view! {
        <section data-testid="ts-largest">
            <h2>"Largest allocations"</h2>
            {largest(r.largest_allocations.clone(), choose)}
        </section>
        <div class="ts-tables">
            <section data-testid="ts-live-at-peak">
                <h2>"Live at the peak, by size and frame"</h2>
                {live_at_peak(r.live_at_peak.clone())}
            </section>
            <section data-testid="ts-never-freed">
                <h2>"Never freed, by frame"</h2>
                <p class="hint muted">"Allocations of the trace still live at its end: leak suspects when they should have been temporary."</p>
                {never_freed(r.never_freed.clone())}
            </section>
        </div>
        <section data-testid="ts-growth">
            <h2>"Growth by frame"</h2>
            <p class="hint muted">"Each frame's live bytes at evenly spaced points of the trace; suspects grew in most intervals and ended larger, first."</p>
            {growth(r.growth.clone())}
        </section>
    }
}

fn largest(rows: Vec<LargeAllocation>, choose: Callback<i64>) -> impl IntoView {
    let key = |a: &LargeAllocation| a.event_index.to_string();
    let spec = TableSpec::new(
        "ts-table",
        vec![
            Column::new("size", "Size", move |a: &LargeAllocation, _| {
                view! { <Bytes metric="largest_size" value=a.size key=key(a) /> }.into_any()
            })
            .right()
            .width("100px")
            .sort_key(|a| a.size)
            .csv("size_bytes", |a| a.size.to_string()),
            Column::new("event", "Event", move |a: &LargeAllocation, _| {
                view! { <Count metric="largest_event_index" value=a.event_index key=key(a) /> }.into_any()
            })
            .right()
            .width("80px")
            .sort_key(|a| a.event_index)
            .csv("event_index", |a| a.event_index.to_string()),
            Column::new("freed", "Freed at", move |a: &LargeAllocation, _| match a.freed_at_event_index {
                Some(e) => view! { <Count metric="largest_freed_at" value=e key=key(a) /> }.into_any(),
                None => view! { <Text metric="largest_freed_at" value="" key=key(a) shown="never" /> }.into_any(),
            })
            .right()
            .width("80px")
            .sort_key(|a| a.freed_at_event_index.unwrap_or(u64::MAX))
            .csv("freed_at_event_index", |a| a.freed_at_event_index.map(|e| e.to_string()).unwrap_or_default()),
            Column::new("frame", "Innermost Python frame", |a: &LargeAllocation, _| frame_cell(&a.frame))
                .class("op")
                .sort_key(|a| a.frame.clone())
                .csv("frame", |a| a.frame.clone()),
        ],
    )
    .testid("ts-largest-table")
    .row_attrs(|a, _| vec![("data-event", a.event_index.to_string())])
    .csv("largest_allocations.csv".into(), "ts-largest-csv");
    let rows = Arc::new(rows);
    let picked = RwSignal::new(None::<usize>);
    // Whether the chosen allocation's library frames are unfolded; kept as rows are picked.
    let unfolded = RwSignal::new(false);
    let of_row = rows.clone();
    view! {
        <Table spec=spec.pick(picked) rows state=TableState::sorted("size", true) />
        {move || match picked.get().and_then(|i| of_row.get(i)) {
            Some(a) => {
                let key = a.event_index.to_string();
                let event = a.event_index as i64;
                view! {
                    <div class="stack-panel ts-stack" data-testid="ts-largest-frames" data-event=key.clone()>
                        {if a.python_stack.is_empty() {
                            view! { <p class="muted small">"No Python frame: it was allocated from C++ alone (as autograd's backward pass allocates)."</p> }.into_any()
                        } else {
                            let stack = a.python_stack.clone();
                            let folded = folded_count(&stack);
                            let frames_key = key.clone();
                            view! {
                                <span class="muted small">"Python frames, innermost first"</span>
                                {(folded > 0).then(|| view! {
                                    <button class="btn ts-unfold" data-testid="ts-unfold-python" aria-pressed=move || unfolded.get().to_string()
                                        on:click=move |_| unfolded.update(|u| *u = !*u)>
                                        {move || if unfolded.get() { format!("Fold library frames ({folded})") } else { format!("Unfold library frames ({folded})") }}
                                    </button>
                                })}
                                {move || python_frames(&stack, frames_key.clone(), unfolded.get())}
                            }.into_any()
                        }}
                        <details data-testid="ts-cpp-frames">
                            <summary class="muted small">{format!("C++ frames ({})", a.cpp_stack.len())}</summary>
                            <ol class="ts-frames">{a.cpp_stack.iter().map(|f| view! { <li><code>{f.clone()}</code></li> }).collect_view()}</ol>
                        </details>
                        <button class="btn" data-testid="ts-largest-at" on:click=move |_| choose.run(event)>"Allocator state at its allocation"</button>
                    </div>
                }
                .into_any()
            }
            None => view! { <p class="muted small stack-panel">"Click a row for its frames."</p> }.into_any(),
        }}
    }
}

fn live_at_peak(rows: Vec<LiveRow>) -> impl IntoView {
    let key = |r: &LiveRow| format!("{}|{}", r.size, r.frame);
    let spec = TableSpec::new(
        "ts-table",
        vec![
            Column::new("size", "Size", move |r: &LiveRow, _| view! { <Bytes metric="live_size" value=r.size key=key(r) /> }.into_any())
                .right()
                .width("100px")
                .sort_key(|r| r.size)
                .csv("size_bytes", |r| r.size.to_string()),
            Column::new("count", "Count", move |r: &LiveRow, _| {
                view! { <Count metric="live_count" value=r.count key=key(r) /> }.into_any()
            })
            .right()
            .width("70px")
            .sort_key(|r| r.count)
            .csv("count", |r| r.count.to_string()),
            Column::new("bytes", "Bytes", move |r: &LiveRow, _| {
                view! { <Bytes metric="live_bytes" value=r.size.saturating_mul(r.count as i64) key=key(r) /> }.into_any()
            })
            .right()
            .width("100px")
            .sort_key(|r| r.size.saturating_mul(r.count as i64)),
            Column::new("frame", "Innermost Python frame", |r: &LiveRow, _| frame_cell(&r.frame))
                .class("op")
                .sort_key(|r| r.frame.clone())
                .csv("frame", |r| r.frame.clone()),
        ],
    )
    .testid("ts-live-table")
    .filter("Filter frames", "ts-live-filter", |r: &LiveRow| vec![r.frame.as_str()])
    .csv("live_at_peak.csv".into(), "ts-live-csv");
    view! { <Table spec rows=Arc::new(rows) /> }
}

fn never_freed(rows: Vec<FrameBytes>) -> impl IntoView {
    let spec = TableSpec::new(
        "ts-table",
        vec![
            Column::new("bytes", "Bytes", |r: &FrameBytes, _| {
                view! { <Bytes metric="never_freed_bytes" value=r.bytes key=r.frame.clone() /> }.into_any()
            })
            .right()
            .width("100px")
            .sort_key(|r| r.bytes)
            .csv("bytes", |r| r.bytes.to_string()),
            Column::new("count", "Count", |r: &FrameBytes, _| {
                view! { <Count metric="never_freed_count" value=r.count key=r.frame.clone() /> }.into_any()
            })
            .right()
            .width("70px")
            .sort_key(|r| r.count)
            .csv("count", |r| r.count.to_string()),
            Column::new("frame", "Innermost Python frame", |r: &FrameBytes, _| frame_cell(&r.frame))
                .class("op")
                .sort_key(|r| r.frame.clone())
                .csv("frame", |r| r.frame.clone()),
        ],
    )
    .testid("ts-never-freed-table")
    .csv("never_freed.csv".into(), "ts-never-freed-csv");
    view! { <Table spec rows=Arc::new(rows) /> }
}

fn growth(rows: Vec<FrameGrowth>) -> impl IntoView {
    let first = |g: &FrameGrowth| g.bytes.first().copied().unwrap_or(0);
    let last = |g: &FrameGrowth| g.bytes.last().copied().unwrap_or(0);
    let spec = TableSpec::new(
        "ts-table",
        vec![
            Column::new("suspect", "Suspect", |g: &FrameGrowth, _| {
                view! { <Text metric="growth_suspect" value=g.suspect.to_string() key=g.frame.clone() shown=if g.suspect { "suspect" } else { "" }.to_string() /> }.into_any()
            })
            .width("70px")
            .sort_key(|g| g.suspect)
            .csv("suspect", |g| g.suspect.to_string()),
            Column::new("net", "Net growth", |g: &FrameGrowth, _| {
                view! { <SignedBytes metric="growth_net_bytes" value=g.growth.net_growth_bytes key=g.frame.clone() /> }.into_any()
            })
            .right()
            .width("110px")
            .sort_key(|g| g.growth.net_growth_bytes)
            .csv("net_growth_bytes", |g| g.growth.net_growth_bytes.to_string()),
            Column::new("grew", "Grew in", |g: &FrameGrowth, _| {
                view! { <Count metric="growth_grew_steps" value=g.growth.grew_steps as u64 key=g.frame.clone() /> " of " {g.growth.steps} }.into_any()
            })
            .right()
            .width("80px")
            .sort_key(|g| g.growth.grew_steps)
            .csv("grew_steps", |g| g.growth.grew_steps.to_string()),
            Column::new("first", "At the first point", move |g: &FrameGrowth, _| {
                view! { <Bytes metric="growth_first_bytes" value=first(g) key=g.frame.clone() /> }.into_any()
            })
            .right()
            .width("120px")
            .sort_key(first)
            .csv("first_bytes", move |g| first(g).to_string()),
            Column::new("last", "At the end", move |g: &FrameGrowth, _| {
                view! { <Bytes metric="growth_last_bytes" value=last(g) key=g.frame.clone() /> }.into_any()
            })
            .right()
            .width("100px")
            .sort_key(last)
            .csv("last_bytes", move |g| last(g).to_string()),
            Column::new("frame", "Innermost Python frame", |g: &FrameGrowth, _| frame_cell(&g.frame))
                .class("op")
                .sort_key(|g| g.frame.clone())
                .csv("frame", |g| g.frame.clone()),
        ],
    )
    .testid("ts-growth-table")
    .row_class(|g| if g.suspect { "suspect" } else { "" })
    .filter("Filter frames", "ts-growth-filter", |g: &FrameGrowth| vec![g.frame.as_str()])
    .csv("growth_by_frame.csv".into(), "ts-growth-csv");
    view! { <Table spec rows=Arc::new(rows) /> }
}
