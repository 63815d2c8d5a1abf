//! The DOM beside and over the tracks' canvas: the names column (process headers that fold their
//! threads away, thread names, the memory counter tracks' names and figures), placed from the same
//! layout as the canvas's rows, and the hovered counter step's tooltip.

use super::hit::Hover;
use super::navigation::Pointer;
use super::requests::Replies;
use super::{TrackView, NAMES_W, TRACKS_H};
use crate::analysis::trace_viewer::counters::CounterKind;
use crate::ui::components::metric::{Bytes, Count, Text};
use crate::ui::views::trace_viewer::layout::{COUNTER_H, HEADER_H};
use crate::ui::views::trace_viewer::ps_text;
use leptos::prelude::*;

/// Room the counter tooltip takes below the pointer: nearer the tracks' bottom it goes above.
const TOOLTIP_H: f64 = 80.0;
/// The tooltip's width: nearer the canvas's right edge than this it goes left of the pointer.
const TOOLTIP_W: f64 = 280.0;

/// The names column: a header per process (a click folds or unfolds its threads), a name per
/// thread lane, and a name with its figures per memory counter track.
pub(super) fn names(tv: TrackView) -> impl IntoView {
    let collapsed = tv.collapsed;
    move || {
        let o = tv.outline.get_value();
        tv.layout.with(|l| {
            let headers = l
                .headers
                .iter()
                .map(|&(pi, y)| {
                    let p = &o.processes[pi];
                    let pid = p.pid;
                    let folded = collapsed.with(|c| c.contains(&pid));
                    view! {
                        <button
                            class="tv-process"
                            data-testid="trace-process"
                            data-pid=pid.to_string()
                            data-collapsed=folded.to_string()
                            aria-expanded=(!folded).to_string()
                            title=p.name.clone()
                            style=format!("top:{y}px;height:{HEADER_H}px")
                            on:click=move |_| collapsed.update(|c| if let Some(i) = c.iter().position(|&x| x == pid) { c.remove(i); } else { c.push(pid); })
                        >
                            {if folded { "▸ " } else { "▾ " }}
                            {p.name.clone()}
                            <span class="muted">{format!(" ({} threads)", p.threads.len())}</span>
                        </button>
                    }
                })
                .collect_view();
            let threads = l
                .lanes
                .iter()
                .zip(&l.lane_thread)
                .map(|(lane, &(pi, ti))| {
                    let t = &o.processes[pi].threads[ti];
                    let name = if t.name.is_empty() { format!("thread {}", t.tid) } else { t.name.clone() };
                    let title = format!("{name} · tid {} · {} events", t.tid, t.event_count);
                    view! {
                        <div
                            class="tv-thread"
                            data-testid="trace-thread"
                            data-pid=o.processes[pi].pid.to_string()
                            data-tid=t.tid.to_string()
                            data-events=t.event_count.to_string()
                            data-name=t.name.clone()
                            title=title
                            style=format!("top:{}px;height:{}px", lane.y, lane.h)
                        >
                            {name}
                        </div>
                    }
                })
                .collect_view();
            let info = tv.counter_tracks.get();
            let counters = l
                .counters
                .iter()
                .filter_map(|&(k, y)| {
                    let t = info.tracks.get(k)?.clone();
                    let title = format!("{} memory: {} over time ({} events)", t.memory_id, figures(t.kind).both, t.event_count);
                    Some(view! {
                        <div
                            class="tv-thread tv-counter"
                            data-testid="trace-counter"
                            data-memory-id=t.memory_id.clone()
                            title=title
                            style=format!("top:{y}px;height:{COUNTER_H}px")
                        >
                            <Text metric="counter_memory_id" value=t.memory_id.clone() />
                            <span class="muted small">
                                " ≤ " <Bytes metric="counter_max_in_use_bytes" key=t.memory_id.clone() value=t.max_in_use_bytes />
                                " · " <Count metric="counter_event_count" key=t.memory_id.clone() value=t.event_count />
                            </span>
                        </div>
                    })
                })
                .collect_view();
            (headers, threads, counters)
        })
    }
}

/// What a counter track's two figures are called, on screen and as `data-metric`s.
struct Figures {
    first: (&'static str, &'static str),
    second: (&'static str, &'static str),
    /// Both, in words.
    both: &'static str,
}

fn figures(kind: CounterKind) -> Figures {
    match kind {
        CounterKind::HeapStack => {
            Figures { first: ("Heap", "counter_heap_bytes"), second: ("stack", "counter_stack_bytes"), both: "heap and stack" }
        }
        CounterKind::AllocatedReserved => Figures {
            first: ("Allocated", "counter_allocated_bytes"),
            second: ("reserved", "counter_reserved_bytes"),
            both: "allocated and reserved bytes",
        },
    }
}

/// The hovered counter step: time, its two figures (and the range of the events merged into it).
pub(super) fn counter_tooltip(tv: TrackView, replies: Replies, pointer: Pointer) -> impl IntoView {
    move || {
        let Hover { track: k, t_ps, x, y } = pointer.hover.get()?;
        let windows = replies.counter_windows.get();
        let w = windows.get(k)?;
        let i = w.at(t_ps)?;
        let info = tv.counter_tracks.get();
        let track = info.tracks.get(k)?;
        let left = if x + TOOLTIP_W > tv.width.get() { x - TOOLTIP_W } else { x + 14.0 };
        let merged = w.count[i] > 1;
        let origin = tv.full.0;
        Some(view! {
            <div class="tv-tooltip" data-testid="counter-tooltip" style=format!("left:{:.0}px;top:{:.0}px", left + NAMES_W, if y > TRACKS_H - TOOLTIP_H { y - TOOLTIP_H } else { y + 12.0 } + tv.scroll_top.get())>
                <div><Text metric="counter_hover_memory_id" value=track.memory_id.clone() /> " at "
                    <Text metric="counter_hover_time_ps" value=(w.time_ps[i] - origin).to_string() shown=ps_text(w.time_ps[i] - origin) /></div>
                {
                    let Figures { first, second, .. } = figures(track.kind);
                    view! { <div>{first.0}" " <Bytes metric=first.1 value=w.heap_bytes[i] /> " · "{second.0}" " <Bytes metric=second.1 value=w.stack_bytes[i] /></div> }
                }
                {merged.then(|| view! {
                    <div class="muted">
                        <Count metric="counter_merged_events" value=u64::from(w.count[i]) /> " events in this pixel, in use "
                        <Bytes metric="counter_min_in_use_bytes" value=w.min_in_use_bytes[i] /> " – " <Bytes metric="counter_max_in_use_bytes_here" value=w.max_in_use_bytes[i] />
                    </div>
                })}
            </div>
        })
    }
}
