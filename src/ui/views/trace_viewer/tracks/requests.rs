//! What the tracks ask the engine: the allocators' counter tracks once, then for the window at the
//! canvas's width the spans of the shown threads, every counter track's steps, and the flows (the
//! selected event's, and all of the window's when asked). Each is asked again only when what it
//! depends on changes, and the spans and counters keep their last answer on screen until the next.

use super::TrackView;
use crate::analysis::trace_viewer::counters::{CounterQuery, CounterTracks, CounterWindow};
use crate::analysis::trace_viewer::flows::FlowReply;
use crate::analysis::trace_viewer::lod::{LodQuery, LodReply};
use crate::engine::protocol::request;
use crate::engine::trace_viewer::{FlowQuery, MAX_FLOW_ARROWS};
use crate::ui::use_engine::{use_engine, Reply};
use leptos::prelude::*;
use std::sync::Arc;

/// The engine's answers for the tracks. `Copy`, like the view's other shared state.
#[derive(Clone, Copy)]
pub(super) struct Replies {
    /// The spans' reply as it stands (waiting while a new window is asked for).
    pub spans: ReadSignal<Reply<Arc<LodReply>>>,
    /// The last spans answered, which stay on screen (mapped to the current window) until the next.
    pub shown: RwSignal<Arc<LodReply>>,
    /// Every counter track's steps over the window (the last answered).
    pub counter_windows: RwSignal<Arc<Vec<CounterWindow>>>,
    selected_flows: ReadSignal<Reply<Arc<FlowReply>>>,
    window_flows: ReadSignal<Reply<Arc<FlowReply>>>,
    selected_event: RwSignal<Option<u32>>,
    show_flows: RwSignal<bool>,
}

impl Replies {
    /// The selected event's flows, once answered (none while no event is selected).
    pub fn event_flows(&self) -> Option<Arc<FlowReply>> {
        self.selected_event.get().and(self.selected_flows.get().ready().cloned())
    }

    /// All of the window's flows, once answered, when they are asked for.
    pub fn window_flows(&self) -> Option<Arc<FlowReply>> {
        if self.show_flows.get() {
            self.window_flows.get().ready().cloned()
        } else {
            None
        }
    }
}

/// The allocators' counter tracks (none for a trace without allocator events, or where the Memory
/// Profile cannot be computed: the tracks are then simply not drawn).
pub(super) fn counter_tracks(file_id: u32) -> Memo<Arc<CounterTracks>> {
    let reply = use_engine("Trace Viewer counter tracks", move || Some(request::TraceCounterTracks { file_id })).reply;
    Memo::new(move |_| reply.get().ready().cloned().unwrap_or_default())
}

/// Asks for the spans, the counters' steps and the flows of `tv`'s window, as it changes.
pub(super) fn ask(file_id: u32, tv: TrackView) -> Replies {
    let (selected_event, show_flows) = (tv.selected_event, tv.show_flows);
    // The spans of the window at the canvas's width, for the threads of expanded processes.
    let spans = use_engine("Trace Viewer spans", move || {
        let (start_ps, end_ps) = tv.window.get();
        let width_px = tv.width.get().round() as u32;
        if width_px == 0 {
            return None;
        }
        Some(request::TraceSpans { file_id, query: LodQuery { start_ps, end_ps, width_px, threads: tv.shown_threads() } })
    })
    .reply;
    let shown = RwSignal::new(Arc::new(LodReply::default()));
    Effect::new(move |_| {
        if let Reply::Ready(r) = spans.get() {
            shown.set(r);
        }
    });

    // Every counter track's steps over the window, one request for all.
    let counters = use_engine("Trace Viewer counters", move || {
        let (start_ps, end_ps) = tv.window.get();
        let width_px = tv.width.get().round() as u32;
        let queries: Vec<CounterQuery> = tv
            .counter_tracks
            .with(|t| t.tracks.iter().map(|c| CounterQuery { memory_id: c.memory_id.clone(), start_ps, end_ps, width_px }).collect());
        (width_px > 0 && !queries.is_empty()).then_some(request::TraceCounters { file_id, queries })
    })
    .reply;
    let counter_windows = RwSignal::new(Arc::new(Vec::<CounterWindow>::new()));
    Effect::new(move |_| {
        if let Reply::Ready(w) = counters.get() {
            counter_windows.set(w);
        }
    });

    let flow_query = |event: Option<u32>, (start_ps, end_ps): (i64, i64), threads: Option<Vec<u32>>| FlowQuery {
        start_ps,
        end_ps,
        threads,
        event,
        limit: MAX_FLOW_ARROWS as u32,
    };
    let selected_flows = use_engine("Trace Viewer event flows", move || {
        selected_event.get().map(|e| request::TraceFlows { file_id, query: flow_query(Some(e), (0, 0), None) })
    })
    .reply;
    let window_flows = use_engine("Trace Viewer flows", move || {
        if !show_flows.get() {
            return None;
        }
        Some(request::TraceFlows { file_id, query: flow_query(None, tv.window.get(), tv.shown_threads()) })
    })
    .reply;
    Replies { spans, shown, counter_windows, selected_flows, window_flows, selected_event, show_flows }
}
