//! The level-of-detail query: for a time window drawn `width_px` pixels wide, each thread's visible
//! events as spans to draw, in columns. An event at least a pixel long is its own span; a run of
//! shorter events at one depth, each starting less than a pixel after the run so far ends, is merged
//! into one span that carries how many events it stands for (and their name, or [`MIXED_NAMES`]). No
//! event is dropped: the counts of a thread's spans add up to its events that overlap the window.

use super::packed::{self, PackError, Packed, Reader};
use super::store::TraceStore;
use serde::{Deserialize, Serialize};
use std::ops::Range;

/// The name id of a merged span whose events have different names.
pub const MIXED_NAMES: u32 = u32::MAX;

/// What the page asks for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LodQuery {
    pub start_ps: i64,
    pub end_ps: i64,
    /// Pixels the window is drawn across (at least 1 is used).
    pub width_px: u32,
    /// Indices into [`TraceStore::threads`]; `None` for all.
    pub threads: Option<Vec<u32>>,
}

/// One thread's spans, as columns (one entry per span), in start order within each depth.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ThreadSpans {
    /// Index into [`TraceStore::threads`].
    pub thread: u32,
    pub start_ps: Vec<i64>,
    /// From the first event's start to the latest end among the span's events.
    pub duration_ps: Vec<i64>,
    /// Name id ([`TraceStore::names`]) or [`MIXED_NAMES`].
    pub name: Vec<u32>,
    pub depth: Vec<u16>,
    /// Events the span stands for (1 for an event drawn on its own).
    pub count: Vec<u32>,
    /// The span's first event (index into the store's columns).
    pub event: Vec<u32>,
}

impl ThreadSpans {
    fn push(&mut self, s: &Span) {
        self.start_ps.push(s.start_ps);
        self.duration_ps.push(s.end_ps - s.start_ps);
        self.name.push(s.name);
        self.depth.push(s.depth);
        self.count.push(s.count);
        self.event.push(s.event);
    }

    pub fn len(&self) -> usize {
        self.start_ps.len()
    }

    pub fn is_empty(&self) -> bool {
        self.start_ps.is_empty()
    }
}

/// The spans of the threads asked for.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LodReply {
    pub threads: Vec<ThreadSpans>,
    /// Events that overlap the window on those threads (the sum of all counts).
    pub visible_events: u64,
}

impl LodReply {
    /// The reply as bytes ([`packed`]): `visible_events` (u64), the thread count (u32), then per
    /// thread its index and span count (u32 each) and its columns `start_ps`, `duration_ps` (i64),
    /// `name`, `count`, `event` (u32), `depth` (u16). The worker sends spans so, beside a reply
    /// that names the query; read back with [`LodReply::from_bytes`].
    pub fn to_bytes(&self) -> Vec<u8> {
        let spans: usize = self.threads.iter().map(ThreadSpans::len).sum();
        let mut out = Vec::with_capacity(12 + 8 * self.threads.len() + SPAN_BYTES * spans);
        self.visible_events.put(&mut out);
        (self.threads.len() as u32).put(&mut out);
        for t in &self.threads {
            t.thread.put(&mut out);
            (t.len() as u32).put(&mut out);
            packed::put_column(&mut out, &t.start_ps);
            packed::put_column(&mut out, &t.duration_ps);
            for column in [&t.name, &t.count, &t.event] {
                packed::put_column(&mut out, column);
            }
            packed::put_column(&mut out, &t.depth);
        }
        out
    }

    /// Reads what [`LodReply::to_bytes`] wrote.
    pub fn from_bytes(bytes: &[u8]) -> Result<LodReply, PackError> {
        let mut r = Reader::new(bytes);
        let visible_events = r.value::<u64>()?;
        let thread_count = r.value::<u32>()? as usize;
        // Every thread takes at least 8 bytes: a count past that is damage, not a huge allocation.
        if thread_count > r.remaining() / 8 {
            return Err(PackError("more threads than bytes"));
        }
        let mut threads = Vec::with_capacity(thread_count);
        for _ in 0..thread_count {
            let thread = r.value::<u32>()?;
            let n = r.value::<u32>()? as usize;
            if n > r.remaining() / SPAN_BYTES {
                return Err(PackError("more spans than bytes"));
            }
            threads.push(ThreadSpans {
                thread,
                start_ps: r.column(n)?,
                duration_ps: r.column(n)?,
                name: r.column(n)?,
                count: r.column(n)?,
                event: r.column(n)?,
                depth: r.column(n)?,
            });
        }
        r.finish()?;
        Ok(LodReply { threads, visible_events })
    }
}

/// Bytes one packed span takes: two i64, three u32 and a u16.
const SPAN_BYTES: usize = 30;

#[derive(Debug, Clone, Copy)]
struct Span {
    start_ps: i64,
    end_ps: i64,
    name: u32,
    depth: u16,
    count: u32,
    event: u32,
}

/// Answers `q` from `store`.
pub fn query(store: &TraceStore, q: &LodQuery) -> LodReply {
    let all: Vec<u32>;
    let threads = match &q.threads {
        Some(t) => t.as_slice(),
        None => {
            all = (0..store.threads.len() as u32).collect();
            &all
        }
    };
    let ps_per_px = ((q.end_ps.saturating_sub(q.start_ps)) / i64::from(q.width_px.max(1))).max(1);
    let mut reply = LodReply::default();
    for &t in threads {
        let Some(thread) = store.threads.get(t as usize) else { continue };
        let spans = thread_spans(store, t, thread.events.clone(), thread.max_duration_ps, q.start_ps, q.end_ps, ps_per_px);
        reply.visible_events += spans.count.iter().map(|&c| u64::from(c)).sum::<u64>();
        reply.threads.push(spans);
    }
    reply
}

/// The first event of `events` (sorted by start) that can overlap a window starting at `from_ps`.
pub fn first_candidate(store: &TraceStore, events: Range<u32>, max_duration_ps: i64, from_ps: i64) -> u32 {
    let starts = &store.start_ps()[events.start as usize..events.end as usize];
    events.start + starts.partition_point(|&s| s < from_ps.saturating_sub(max_duration_ps)) as u32
}

fn thread_spans(
    store: &TraceStore,
    thread: u32,
    events: Range<u32>,
    max_duration_ps: i64,
    from: i64,
    to: i64,
    ps_per_px: i64,
) -> ThreadSpans {
    let (starts, names, depths) = (store.start_ps(), store.name_ids(), store.depth());
    let mut out = ThreadSpans { thread, ..Default::default() };
    // The run being merged at each depth.
    let mut pending: Vec<Option<Span>> = Vec::new();
    for e in first_candidate(store, events.clone(), max_duration_ps, from)..events.end {
        let i = e as usize;
        let (start, duration) = (starts[i], store.duration_ps(i).max(0));
        if start > to {
            break;
        }
        let end = start.saturating_add(duration);
        if end < from {
            continue;
        }
        let depth = depths[i];
        let d = usize::from(depth);
        if pending.len() <= d {
            pending.resize(d + 1, None);
        }
        let span = Span { start_ps: start, end_ps: end, name: names[i], depth, count: 1, event: e };
        if duration >= ps_per_px {
            if let Some(run) = pending[d].take() {
                out.push(&run);
            }
            out.push(&span);
            continue;
        }
        match &mut pending[d] {
            Some(run) if start.saturating_sub(run.end_ps) < ps_per_px => {
                run.end_ps = run.end_ps.max(end);
                run.count += 1;
                if run.name != span.name {
                    run.name = MIXED_NAMES;
                }
            }
            slot => {
                if let Some(run) = slot.replace(span) {
                    out.push(&run);
                }
            }
        }
    }
    for run in pending.into_iter().flatten() {
        out.push(&run);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::test_xspace::{self as tx, TestLine, TestPlane};
    use crate::proto::xplane as pb;

    /// A host plane with one line of events (start, duration) named a (1) or b (2), at time 0.
    fn store(events: &[(i64, i64, i64)]) -> TraceStore {
        let meta = pb::XPlane { name: "/host:CPU".into(), event_metadata: tx::event_metadata(&[(1, "a"), (2, "b")]), ..Default::default() };
        let events = events.iter().map(|&(m, s, d)| tx::event(m, s, d, vec![])).collect();
        let line = TestLine { header: pb::XLine { id: 1, name: "t".into(), ..Default::default() }, events };
        TraceStore::build(&tx::index(&[TestPlane { meta, lines: vec![line] }])).unwrap()
    }

    fn q(start_ps: i64, end_ps: i64, width_px: u32) -> LodQuery {
        LodQuery { start_ps, end_ps, width_px, threads: None }
    }

    #[test]
    fn sub_pixel_runs_merge_with_their_count() {
        // 1 px = 10 ps: five 2-ps events 3 ps apart merge; the 50-ps event stands alone; then a gap of
        // 2 px starts a new run.
        let s = store(&[(1, 0, 2), (1, 3, 2), (2, 6, 2), (1, 9, 2), (1, 12, 2), (1, 20, 50), (1, 100, 2), (1, 130, 2)]);
        let r = query(&s, &q(0, 1000, 100));
        let t = &r.threads[0];
        assert_eq!(r.visible_events, 8);
        // Depth 0 holds them all (none nests in another).
        let spans: Vec<_> = (0..t.len()).map(|i| (t.start_ps[i], t.duration_ps[i], t.count[i], t.name[i] == MIXED_NAMES)).collect();
        assert_eq!(spans, vec![(0, 14, 5, true), (20, 50, 1, false), (100, 2, 1, false), (130, 2, 1, false)]);
        // Zoomed in until every event is a pixel wide, nothing merges.
        let r = query(&s, &q(0, 200, 200));
        assert_eq!(r.threads[0].count, vec![1; 8]);
    }

    #[test]
    fn runs_merge_per_depth_and_no_event_is_lost_at_any_zoom() {
        // A parent with tiny children, and tiny events around it.
        let mut events = vec![(1, 0, 10_000)];
        events.extend((0..100).map(|k| (2, k * 100, 30)));
        events.extend((0..50).map(|k| (1, 10_000 + k * 7, 3)));
        let s = store(&events);
        for width in [1, 3, 10, 100, 1000, 100_000] {
            for (from, to) in [(0, 20_000), (5_000, 5_100), (9_999, 10_200), (-50, 1)] {
                let r = query(&s, &q(from, to, width));
                let expected = events.iter().filter(|&&(_, st, d)| st <= to && st + d >= from).count() as u64;
                assert_eq!(r.visible_events, expected, "width {width}, window {from}..{to}");
                let t = &r.threads[0];
                assert_eq!(t.count.iter().map(|&c| u64::from(c)).sum::<u64>(), expected);
                // Spans at one depth never overlap and come in start order.
                for d in 0..2u16 {
                    let at: Vec<usize> = (0..t.len()).filter(|&i| t.depth[i] == d).collect();
                    assert!(at.windows(2).all(|w| t.start_ps[w[0]] + t.duration_ps[w[0]] <= t.start_ps[w[1]]), "depth {d}");
                }
            }
        }
        // At 1 px for the whole trace the children (depth 1) become one span of 100.
        let r = query(&s, &q(0, 20_000, 1));
        let t = &r.threads[0];
        let children: Vec<u32> = (0..t.len()).filter(|&i| t.depth[i] == 1).map(|i| t.count[i]).collect();
        assert_eq!(children, vec![100]);
    }

    #[test]
    fn packed_replies_read_back_equal_and_damage_is_an_error() {
        let s = store(&[(1, 0, 2), (1, 3, 2), (2, 6, 2), (1, 20, 50), (1, 100, 2)]);
        for width in [1, 10, 1000] {
            let r = query(&s, &q(0, 200, width));
            let bytes = r.to_bytes();
            assert_eq!(LodReply::from_bytes(&bytes), Ok(r.clone()));
            for cut in 0..bytes.len() {
                assert!(LodReply::from_bytes(&bytes[..cut]).is_err(), "cut at {cut}");
            }
            let mut longer = bytes.clone();
            longer.push(0);
            assert!(LodReply::from_bytes(&longer).is_err());
        }
        assert_eq!(LodReply::from_bytes(&LodReply::default().to_bytes()), Ok(LodReply::default()));
    }

    #[test]
    fn window_edges_keep_events_that_overlap_them() {
        let s = store(&[(1, 0, 100), (1, 150, 0), (1, 200, 100)]);
        // [100, 200]: the first ends at 100, the instant is inside, the last starts at 200.
        let r = query(&s, &q(100, 200, 10));
        assert_eq!(r.threads[0].event, vec![0, 1, 2]);
        let r = query(&s, &q(101, 199, 10));
        assert_eq!(r.threads[0].event, vec![1]);
        assert_eq!(query(&s, &q(301, 400, 10)).visible_events, 0);
    }
}
