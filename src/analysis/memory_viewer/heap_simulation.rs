//! Replays one heap-simulator trace as XProf does: heap size before every event, the first strictly
//! largest point (the peak) with the buffers live there in program order, and each buffer's lifetime.
//!
//! Memory is reference-counted per sharing group (SHARE_WITH joins a buffer to its canonical one, and
//! the memory is released when the group's count reaches 0). A SHARE_WITH onto a group whose memory was
//! already released *revives* it; XProf 2.24.2 then treats the sharing buffer as a new allocation of
//! its own: it is what is live (peak list, blocks), its lifetime starts there and ends at its own FREE,
//! even when a later sharer keeps the memory alive longer. Its published source predates this; the rule
//! is inferred from its outputs (every fixture's `logicalBufferSpans` and peak lists agree with it).

use super::assignment::Assignment;
use super::MemoryViewerError;
use crate::proto::hlo::heap_simulator_trace::event::Kind;
use crate::proto::hlo::heap_simulator_trace::Event as HeapSimulatorEvent;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// What a replay yields. Timelines have one point per event (the state *before* it) plus a final one.
#[derive(Default)]
pub struct Replay {
    pub heap_bytes: Vec<i64>,
    pub unpadded_heap_bytes: Vec<i64>,
    /// The instruction each event belongs to; "" for the final point.
    pub instruction_names: Vec<String>,
    pub peak_bytes: i64,
    pub peak_unpadded_bytes: i64,
    /// Index of the event that raised the heap to its peak.
    pub peak_position: usize,
    /// Buffers live at the peak, in allocation order.
    pub peak_buffer_ids: Vec<i64>,
    /// `[start, limit]` event indices per buffer that an event referenced and that was allocated.
    pub spans: BTreeMap<i64, Span>,
    /// Buffers that joined live memory with SHARE_WITH: they get no block of their own.
    pub shared: BTreeSet<i64>,
    /// Events whose buffer is unknown, skipped.
    pub skipped_events: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Span {
    pub start: i64,
    pub limit: i64,
}

/// Reference-counting state of one buffer during the replay.
#[derive(Default)]
struct BufferState {
    ref_count: i64,
    /// The buffer this one shares memory with (not necessarily the root of the chain).
    canonical: Option<i64>,
    span: Option<Span>,
    /// Whether `span` has ended.
    closed: bool,
    /// On a root: the buffer that revived its memory after it was freed, which is what is live now.
    representative: Option<i64>,
}

struct Simulator<'s, 'a> {
    assignment: &'s Assignment<'a>,
    /// `limit` of a span still open when the trace ends: its last event.
    last_event: i64,
    states: HashMap<i64, BufferState>,
    /// Live canonical buffers in the order they were allocated, keyed by allocation sequence number; a
    /// buffer allocated again while live is listed again, as XProf's list does.
    live: BTreeMap<u64, i64>,
    /// The sequence numbers under which each buffer is in `live`, so releasing it is not a scan.
    live_keys: HashMap<i64, Vec<u64>>,
    next_key: u64,
    heap_bytes: i64,
    unpadded_heap_bytes: i64,
    seen_buffers: BTreeSet<i64>,
    seen_allocations: BTreeSet<i64>,
    out: Replay,
}

/// Longest SHARE_WITH chain followed. XLA names the group's canonical buffer directly (chains of one);
/// the bound keeps a malformed trace of long chains from making every event walk all of them.
const MAX_SHARE_CHAIN: usize = 1024;

/// Replays trace `trace_index` of `assignment`.
pub fn replay(assignment: &Assignment, trace_index: usize) -> Result<Replay, MemoryViewerError> {
    let Some(trace) = assignment.traces.get(trace_index) else { return Ok(Replay::default()) };
    let mut sim = Simulator::new(assignment, trace.events.len());
    for (position, event) in trace.events.iter().enumerate() {
        sim.out.heap_bytes.push(sim.heap_bytes);
        sim.out.unpadded_heap_bytes.push(sim.unpadded_heap_bytes);
        sim.out.instruction_names.push(event.instruction_name.clone());
        sim.step(position, event)?;
    }
    sim.out.heap_bytes.push(sim.heap_bytes);
    sim.out.unpadded_heap_bytes.push(sim.unpadded_heap_bytes);
    sim.out.instruction_names.push(String::new());
    if sim.seen_allocations.len() != 1 {
        return Err(MemoryViewerError::Trace(format!(
            "the heap simulation must work within a single buffer allocation, but its events touch {}",
            sim.seen_allocations.len()
        )));
    }
    sim.out.spans = sim.seen_buffers.iter().filter_map(|id| sim.states.get(id).and_then(|s| s.span).map(|s| (*id, s))).collect();
    // What was live at the peak: replayed again up to the event that reached it. Copying the live list
    // at every new peak instead would be quadratic in a trace whose heap keeps growing.
    if sim.out.peak_bytes > 0 {
        let mut again = Simulator::new(assignment, trace.events.len());
        for (position, event) in trace.events.iter().enumerate().take(sim.out.peak_position + 1) {
            again.step(position, event)?;
        }
        sim.out.peak_buffer_ids = again.live.into_values().collect();
    }
    Ok(sim.out)
}

impl<'s, 'a> Simulator<'s, 'a> {
    fn new(assignment: &'s Assignment<'a>, event_count: usize) -> Self {
        Simulator {
            assignment,
            last_event: event_count as i64 - 1,
            states: HashMap::new(),
            live: BTreeMap::new(),
            live_keys: HashMap::new(),
            next_key: 0,
            heap_bytes: 0,
            unpadded_heap_bytes: 0,
            seen_buffers: BTreeSet::new(),
            seen_allocations: BTreeSet::new(),
            out: Replay::default(),
        }
    }

    /// Applies event `position` of the trace.
    fn step(&mut self, position: usize, event: &HeapSimulatorEvent) -> Result<(), MemoryViewerError> {
        let assignment = self.assignment;
        let position = position as i64;
        let Some(buffer) = assignment.buffer(event.buffer_id) else {
            self.out.skipped_events += 1;
            return Ok(());
        };
        self.seen_buffers.insert(buffer.id());
        self.seen_allocations.insert(buffer.allocation_index);
        match Kind::try_from(event.kind) {
            Ok(Kind::Alloc) => {
                self.inc(buffer.id())?;
                self.increase(buffer.id(), position);
            }
            Ok(Kind::Free) => {
                let ref_count = self.dec(buffer.id())?;
                if ref_count < 0 {
                    return Err(MemoryViewerError::Trace(format!("buffer {} is freed more times than it is allocated", buffer.id())));
                }
                if self.states.get(&buffer.id()).is_some_and(|s| s.canonical.is_some()) {
                    self.close_span(buffer.id(), position);
                }
                if ref_count == 0 {
                    let root = self.root(buffer.id())?;
                    let live = self.states.get_mut(&root).and_then(|s| s.representative.take()).unwrap_or(root);
                    self.decrease(live, position)?;
                }
            }
            Ok(Kind::ShareWith) => {
                let canonical = event.share_with_canonical_id;
                if assignment.buffer(canonical).is_none() {
                    self.out.skipped_events += 1;
                    return Ok(());
                }
                self.states.entry(buffer.id()).or_default().canonical = Some(canonical);
                if self.inc(canonical)? == 1 {
                    // The group's memory had been released: this buffer allocates it anew.
                    let root = self.root(canonical)?;
                    self.states.entry(root).or_default().representative = Some(buffer.id());
                    self.increase(buffer.id(), position);
                } else {
                    self.out.shared.insert(buffer.id());
                }
            }
            Err(_) => return Err(MemoryViewerError::Trace(format!("event {position} has an unknown kind {}", event.kind))),
        }
        Ok(())
    }

    /// The end of `id`'s sharing chain. A chain longer than the number of buffers is a cycle, which
    /// only a malformed trace produces (XProf would recurse forever).
    fn root(&self, id: i64) -> Result<i64, MemoryViewerError> {
        let mut current = id;
        for _ in 0..=self.states.len().min(MAX_SHARE_CHAIN) {
            match self.states.get(&current).and_then(|s| s.canonical) {
                Some(next) => current = next,
                None => return Ok(current),
            }
        }
        Err(MemoryViewerError::Trace(format!(
            "buffer {id} shares memory in a cycle or through a chain of more than {MAX_SHARE_CHAIN} buffers"
        )))
    }

    fn inc(&mut self, id: i64) -> Result<i64, MemoryViewerError> {
        let root = self.root(id)?;
        let state = self.states.entry(root).or_default();
        state.ref_count += 1;
        Ok(state.ref_count)
    }

    fn dec(&mut self, id: i64) -> Result<i64, MemoryViewerError> {
        let root = self.root(id)?;
        let state = self.states.entry(root).or_default();
        state.ref_count -= 1;
        Ok(state.ref_count)
    }

    /// Buffer `id` becomes live at `position`, its lifetime provisionally lasting to the last event.
    fn increase(&mut self, id: i64, position: i64) {
        let Some(buffer) = self.assignment.buffer(id) else { return };
        let key = self.next_key;
        self.next_key += 1;
        self.live.insert(key, id);
        self.live_keys.entry(id).or_default().push(key);
        self.heap_bytes = self.heap_bytes.saturating_add(buffer.size_bytes());
        self.unpadded_heap_bytes = self.unpadded_heap_bytes.saturating_add(buffer.unpadded_bytes());
        if self.heap_bytes > self.out.peak_bytes {
            self.out.peak_bytes = self.heap_bytes;
            self.out.peak_unpadded_bytes = self.unpadded_heap_bytes;
            self.out.peak_position = position as usize;
        }
        let state = self.states.entry(id).or_default();
        state.span = Some(Span { start: position, limit: self.last_event });
        state.closed = false;
    }

    /// Ends `id`'s lifetime at `position`, unless it has already ended.
    fn close_span(&mut self, id: i64, position: i64) {
        if let Some(state) = self.states.get_mut(&id).filter(|s| !s.closed) {
            if let Some(span) = state.span.as_mut() {
                span.limit = position;
                state.closed = true;
            }
        }
    }

    /// The memory of live buffer `id` is released at `position`: it leaves the live list and its
    /// lifetime ends (if its own FREE has not ended it already).
    fn decrease(&mut self, id: i64, position: i64) -> Result<(), MemoryViewerError> {
        let Some(buffer) = self.assignment.buffer(id) else { return Ok(()) };
        for key in self.live_keys.remove(&id).unwrap_or_default() {
            self.live.remove(&key);
        }
        self.heap_bytes = self.heap_bytes.saturating_sub(buffer.size_bytes());
        if self.heap_bytes < 0 {
            return Err(MemoryViewerError::Trace(format!("the heap size goes negative ({} bytes) at event {position}", self.heap_bytes)));
        }
        self.unpadded_heap_bytes = self.unpadded_heap_bytes.saturating_sub(buffer.unpadded_bytes());
        self.close_span(id, position);
        Ok(())
    }
}
