//! The links the trace viewer draws as arrows between events, found once per file:
//!
//! - **Flows**: events with a `flow` stat of one id, in time order, each linked to the next (the
//!   chain XProf's trace viewer draws from `XFlow`'s start, middle and end events).
//! - **Contexts**: every producer (`_pt`, `_p`) to every consumer (`_ct`, `_c`) of the same (type, id),
//!   the links tsl's event grouping follows across threads (the thread-pool regions XProf adds are
//!   consumers too). As tsl does, a context whose producers and consumers both number 64 or more is
//!   not linked.
//! - **Launches**: a host event to the device events with its `correlation_id` (a GPU kernel launch
//!   and the kernel), which XProf's preprocessing links with a `flow` stat.
//!
//! A stat on an event's metadata counts as the event's own, the event's own stat winning. Arrows
//! run from the source's start to the target's start; [`FlowIndex::window`] answers every link whose
//! time span meets a window.

use super::layout::{self, HOST_PID};
use super::store::{Source, TraceStore};
use crate::analysis::preprocess::threadpool::RegionFinder;
use crate::decode::xplane::names::CORRELATION_ID;
use crate::decode::xplane::{IdTable, Plane, StatValue, Want, XSpace};
use crate::decode::DecodeError;
use crate::fast_hash::FastMap;
use serde::{Deserialize, Serialize};

/// The stats read, by role (index + 1 in the role table).
const STATS: [&str; 6] = [super::details::FLOW, "_pt", "_p", "_ct", "_c", CORRELATION_ID];
const FLOW: usize = 0;
const PRODUCER_TYPE: usize = 1;
const PRODUCER_ID: usize = 2;
const CONSUMER_TYPE: usize = 3;
const CONSUMER_ID: usize = 4;
const CORRELATION: usize = 5;
/// tsl's limit: a context with at least this many producers and consumers is not linked.
const MAX_GROUP_SIDE: usize = 64;

/// What links two events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum LinkKind {
    /// Consecutive events of one `flow` id.
    Flow { id: u64, category: u8 },
    /// A producer and a consumer of one context.
    Context { context_type: i64, id: u64 },
    /// A host event and a device event with one `correlation_id`.
    Launch { correlation_id: i64 },
    /// Consecutive steps of a Chrome trace flow (`s`, `t`, `f` events of one category and id: a
    /// Kineto trace's `ac2g` launches and `fwdbwd` links); `category` is a name id
    /// ([`TraceStore::names`]).
    Chrome { category: u32, id: i64 },
}

/// One arrow: from the source event's start to the target event's start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Link {
    /// Events (indices into the store's columns).
    pub from: u32,
    pub to: u32,
    pub kind: LinkKind,
}

/// One link as the page draws it: both ends' thread, nesting depth and time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Arrow {
    pub link: Link,
    /// Indices into [`TraceStore::threads`].
    pub from_thread: u32,
    pub to_thread: u32,
    pub from_depth: u16,
    pub to_depth: u16,
    pub from_ps: i64,
    pub to_ps: i64,
    /// Name ids ([`TraceStore::names`]) of the two events.
    pub from_name: u32,
    pub to_name: u32,
}

/// The flows asked for: those of a window, or of one event.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlowReply {
    /// At most the limit asked for, in order of their earlier end.
    pub arrows: Vec<Arrow>,
    /// Links that meet the window (or touch the event), drawn or not.
    pub total: u64,
}

/// Every link of a trace, sorted by the earlier end's time.
#[derive(Debug, Default)]
pub struct FlowIndex {
    links: Vec<Link>,
    /// Per link: the earlier and later end's time.
    span_ps: Vec<(i64, i64)>,
    /// The longest span: a link meeting a window starts at most this long before it.
    max_span_ps: i64,
    /// (event, link) for each end of each link, sorted.
    by_event: Vec<(u32, u32)>,
}

/// The link stats found on one event.
type Values = [Option<i64>; STATS.len()];

impl FlowIndex {
    /// Reads the link stats of every event `store` shows and links them.
    pub fn build(space: &XSpace, store: &TraceStore) -> Result<Self, DecodeError> {
        let mut found = Found::default();
        let mut thread = 0usize;
        for process in layout::processes(space, store.derived()) {
            let plane = &space.planes[process.plane];
            let regions = RegionFinder::new(plane).is_some();
            let reader = StatReader::new(plane);
            for t in &process.threads {
                let mut hits: FastMap<(usize, u32), Values> = FastMap::default();
                if let Some(reader) = &reader {
                    for &l in &t.lines {
                        reader.scan(space, plane, l, &mut hits)?;
                    }
                }
                if !hits.is_empty() || regions {
                    found.add_thread(store, thread, process.pid, &hits);
                }
                thread += 1;
            }
        }
        Ok(found.index(store))
    }

    pub fn len(&self) -> usize {
        self.links.len()
    }

    pub fn is_empty(&self) -> bool {
        self.links.is_empty()
    }

    pub fn links(&self) -> &[Link] {
        &self.links
    }

    /// The links whose time span meets `[start_ps, end_ps]` with an end on one of `threads` (all when
    /// `None`), the first `limit` of them drawn.
    pub fn window(&self, store: &TraceStore, start_ps: i64, end_ps: i64, threads: Option<&[u32]>, limit: usize) -> FlowReply {
        let first = self.span_ps.partition_point(|&(a, _)| a < start_ps.saturating_sub(self.max_span_ps));
        let shown = |t: u32| threads.is_none_or(|ts| ts.contains(&t));
        let mut reply = FlowReply::default();
        for (k, &(a, b)) in self.span_ps.iter().enumerate().skip(first) {
            if a > end_ps {
                break;
            }
            if b < start_ps {
                continue;
            }
            let Some(arrow) = arrow(store, self.links[k]) else { continue };
            if !shown(arrow.from_thread) && !shown(arrow.to_thread) {
                continue;
            }
            reply.total += 1;
            if reply.arrows.len() < limit {
                reply.arrows.push(arrow);
            }
        }
        reply
    }

    /// The links of `event`, the first `limit` of them drawn.
    pub fn of_event(&self, store: &TraceStore, event: u32, limit: usize) -> FlowReply {
        let first = self.by_event.partition_point(|&(e, _)| e < event);
        let arrows: Vec<Arrow> = self.by_event[first..]
            .iter()
            .take_while(|&&(e, _)| e == event)
            .filter_map(|&(_, k)| arrow(store, self.links[k as usize]))
            .collect();
        FlowReply { total: arrows.len() as u64, arrows: arrows.into_iter().take(limit).collect() }
    }

    /// Bytes the index holds, for the memory budget.
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        self.links.capacity() * size_of::<Link>() + self.span_ps.capacity() * 16 + self.by_event.capacity() * 8
    }
}

/// The index of the thread holding `event`.
fn thread_index(store: &TraceStore, event: u32) -> Option<u32> {
    let i = store.threads.partition_point(|t| t.events.end <= event);
    store.threads.get(i).filter(|t| t.events.contains(&event)).map(|_| i as u32)
}

fn arrow(store: &TraceStore, link: Link) -> Option<Arrow> {
    Some(Arrow {
        link,
        from_thread: thread_index(store, link.from)?,
        to_thread: thread_index(store, link.to)?,
        from_depth: store.depth()[link.from as usize],
        to_depth: store.depth()[link.to as usize],
        from_ps: store.start_ps()[link.from as usize],
        to_ps: store.start_ps()[link.to as usize],
        from_name: store.name_ids()[link.from as usize],
        to_name: store.name_ids()[link.to as usize],
    })
}

/// Reads the link stats of one plane's events.
struct StatReader {
    /// Role (index into [`STATS`] + 1) by stat metadata id.
    roles: IdTable<u8>,
    selection: IdTable<bool>,
    /// The link stats of each event metadata that has any.
    metadata: FastMap<i64, Values>,
}

impl StatReader {
    /// `None` for a plane without any of the stats.
    fn new(plane: &Plane) -> Option<Self> {
        let roles: Vec<(i64, u8)> = plane
            .meta
            .stat_metadata
            .iter()
            .filter_map(|(&id, m)| STATS.iter().position(|&s| s == m.name).map(|r| (id, r as u8 + 1)))
            .collect();
        if roles.is_empty() {
            return None;
        }
        let roles = IdTable::new(roles);
        let metadata = plane
            .meta
            .event_metadata
            .iter()
            .filter_map(|(&id, m)| {
                let mut v: Values = [None; STATS.len()];
                for s in &m.stats {
                    set(&mut v, roles.get(s.metadata_id), plane.stat_value(s));
                }
                v.iter().any(Option::is_some).then_some((id, v))
            })
            .collect();
        Some(StatReader { selection: plane.stat_selection(&STATS), roles, metadata })
    }

    /// Adds the events of line `l` with link stats to `hits`, by (line, index in the line).
    fn scan(&self, space: &XSpace, plane: &Plane, l: usize, hits: &mut FastMap<(usize, u32), Values>) -> Result<(), DecodeError> {
        space.for_each_raw_event(
            &plane.lines[l],
            &self.selection,
            |_| Want::Stats,
            |index, ev| {
                let mut v = self.metadata.get(&ev.header.metadata_id).copied().unwrap_or_default();
                for s in ev.stats {
                    set(&mut v, self.roles.get(s.metadata_id), plane.raw_stat_value(s)?);
                }
                if v.iter().any(Option::is_some) {
                    hits.insert((l, index as u32), v);
                }
                Ok(())
            },
        )
    }
}

/// Sets role `role` (0: none) of `v` to an integer `value`; a `flow` keeps all 64 bits.
fn set(v: &mut Values, role: u8, value: Option<StatValue>) {
    if let (Some(slot), Some(value)) = (v.get_mut(usize::from(role).wrapping_sub(1)), value) {
        if let Some(x) = value.as_u64().map(|x| x as i64) {
            *slot = Some(x);
        }
    }
}

/// The events with link stats, by kind, as they are found.
#[derive(Default)]
struct Found {
    /// (flow stat, start, event).
    flows: Vec<(u64, i64, u32)>,
    /// ((type, id), event).
    producers: Vec<((i64, u64), u32)>,
    consumers: Vec<((i64, u64), u32)>,
    /// (correlation id, event) on the host and on devices.
    launches: Vec<(i64, u32)>,
    kernels: Vec<(i64, u32)>,
}

impl Found {
    /// Adds the events of store thread `thread` (of process `pid`) found in `hits`, and its regions.
    fn add_thread(&mut self, store: &TraceStore, thread: usize, pid: u32, hits: &FastMap<(usize, u32), Values>) {
        let Some(t) = store.threads.get(thread) else { return };
        for e in t.events.clone() {
            let v = match store.source(e) {
                Some(Source::File { line, index, .. }) => match hits.get(&(line, index)) {
                    Some(v) => *v,
                    None => continue,
                },
                Some(Source::Region(r)) => {
                    let mut v: Values = [None; STATS.len()];
                    for (name, value) in r.stats() {
                        let role = STATS.iter().position(|&s| s == name).map_or(0, |r| r as u8 + 1);
                        set(&mut v, role, Some(StatValue::Int(value)));
                    }
                    v
                }
                // Derived events carry no link stats of their own (their device events do).
                Some(Source::Derived { .. }) | Some(Source::Given { .. }) | None => continue,
            };
            self.add(store, e, pid, &v);
        }
    }

    fn add(&mut self, store: &TraceStore, event: u32, pid: u32, v: &Values) {
        if let Some(flow) = v[FLOW] {
            self.flows.push((flow as u64, store.start_ps()[event as usize], event));
        }
        if let (Some(t), Some(id)) = (v[PRODUCER_TYPE], v[PRODUCER_ID]) {
            self.producers.push(((t, id as u64), event));
        }
        if let (Some(t), Some(id)) = (v[CONSUMER_TYPE], v[CONSUMER_ID]) {
            self.consumers.push(((t, id as u64), event));
        }
        if let Some(c) = v[CORRELATION] {
            if pid == HOST_PID {
                self.launches.push((c, event));
            } else {
                self.kernels.push((c, event));
            }
        }
    }

    fn index(mut self, store: &TraceStore) -> FlowIndex {
        let mut links = Vec::new();
        // Flows: by id, in time order, each event to the next.
        self.flows.sort_unstable_by_key(|&(f, start, e)| (super::details::Flow::from_stat(f).id, start, e));
        for w in self.flows.windows(2) {
            let (a, b) = (super::details::Flow::from_stat(w[0].0), super::details::Flow::from_stat(w[1].0));
            if a.id == b.id {
                links.push(Link { from: w[0].2, to: w[1].2, kind: LinkKind::Flow { id: a.id, category: a.category } });
            }
        }
        pair(&mut self.producers, &mut self.consumers, |(context_type, id)| LinkKind::Context { context_type, id }, &mut links);
        pair(&mut self.launches, &mut self.kernels, |correlation_id| LinkKind::Launch { correlation_id }, &mut links);
        FlowIndex::from_links(links, store)
    }
}

impl FlowIndex {
    /// The index of `links` between `store`'s events (a link from an event to itself is dropped).
    pub fn from_links(mut links: Vec<Link>, store: &TraceStore) -> FlowIndex {
        links.retain(|l| l.from != l.to);
        let ends = |l: &Link| {
            let (a, b) = (store.start_ps()[l.from as usize], store.start_ps()[l.to as usize]);
            (a.min(b), a.max(b))
        };
        links.sort_unstable_by_key(|l| (ends(l), l.from, l.to));
        let span_ps: Vec<(i64, i64)> = links.iter().map(ends).collect();
        let max_span_ps = span_ps.iter().map(|&(a, b)| b.saturating_sub(a)).max().unwrap_or(0);
        let mut by_event: Vec<(u32, u32)> = links.iter().enumerate().flat_map(|(k, l)| [(l.from, k as u32), (l.to, k as u32)]).collect();
        by_event.sort_unstable();
        FlowIndex { links, span_ps, max_span_ps, by_event }
    }
}

/// Links every source to every target of one key (skipping keys with [`MAX_GROUP_SIDE`] or more on
/// both sides), in key then event order.
fn pair<K: Ord + Copy>(sources: &mut [(K, u32)], targets: &mut [(K, u32)], kind: impl Fn(K) -> LinkKind, links: &mut Vec<Link>) {
    sources.sort_unstable();
    targets.sort_unstable();
    let mut t = 0;
    for group in sources.chunk_by(|a, b| a.0 == b.0) {
        let key = group[0].0;
        t += targets[t..].partition_point(|x| x.0 < key);
        let n = targets[t..].partition_point(|x| x.0 == key);
        let matched = &targets[t..t + n];
        if group.len() >= MAX_GROUP_SIDE && matched.len() >= MAX_GROUP_SIDE {
            continue;
        }
        for &(_, from) in group {
            links.extend(matched.iter().map(|&(_, to)| Link { from, to, kind: kind(key) }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::test_xspace::{self as tx, TestLine, TestPlane};
    use crate::proto::xplane as pb;
    use pb::x_stat::Value;

    /// A flow stat's value: `id` going `direction`.
    fn flow(id: u64, direction: u64) -> pb::XStat {
        tx::stat(1, Value::Uint64Value((id << 2) | direction))
    }

    #[test]
    fn flow_stats_chain_in_time_order_and_contexts_pair_producers_with_consumers() {
        let meta = pb::XPlane {
            name: "/host:CPU".into(),
            event_metadata: tx::event_metadata(&[(1, "a")]),
            stat_metadata: tx::stat_metadata(&[(1, "flow"), (2, "_pt"), (3, "_p"), (4, "_ct"), (5, "_c")]),
            ..Default::default()
        };
        let int = |m, v| tx::stat(m, Value::Int64Value(v));
        // Thread 1: flow 7 ends at 300 and passes at 200; a producer of (3, 9) at 50.
        let one = vec![
            tx::event(1, 50, 10, vec![int(2, 3), int(3, 9)]),
            tx::event(1, 200, 10, vec![flow(7, 3)]),
            tx::event(1, 300, 10, vec![flow(7, 1)]),
        ];
        // Thread 2: flow 7 starts at 100; two consumers of (3, 9); one of (3, 8), which has no producer.
        let two = vec![
            tx::event(1, 100, 10, vec![flow(7, 2)]),
            tx::event(1, 400, 10, vec![int(4, 3), int(5, 9)]),
            tx::event(1, 500, 10, vec![int(4, 3), int(5, 9)]),
            tx::event(1, 600, 10, vec![int(4, 3), int(5, 8)]),
        ];
        let line = |id, events| TestLine { header: pb::XLine { id, name: format!("t{id}"), ..Default::default() }, events };
        let space = tx::index(&[TestPlane { meta, lines: vec![line(1, one), line(2, two)] }]);
        let store = TraceStore::build(&space).unwrap();
        let index = FlowIndex::build(&space, &store).unwrap();
        let at = |l: &Link| (store.start_ps()[l.from as usize], store.start_ps()[l.to as usize], l.kind);
        let links: Vec<_> = index.links().iter().map(at).collect();
        let ctx = LinkKind::Context { context_type: 3, id: 9 };
        let f = LinkKind::Flow { id: 7, category: 0 };
        assert_eq!(links, vec![(50, 400, ctx), (50, 500, ctx), (100, 200, f), (200, 300, f)]);
        // A window meets the links whose span it overlaps, with each end's thread and row.
        let w = index.window(&store, 150, 160, None, 10);
        assert_eq!(w.total, 3);
        let arrows: Vec<_> = w.arrows.iter().map(|a| (a.from_ps, a.to_ps, a.from_thread, a.to_thread)).collect();
        assert_eq!(arrows, vec![(50, 400, 0, 1), (50, 500, 0, 1), (100, 200, 1, 0)]);
        assert_eq!(index.window(&store, 150, 160, Some(&[0]), 1).arrows.len(), 1);
        assert_eq!(index.window(&store, 601, 700, None, 10).total, 0);
        // The event at 200 is an end of two flow links.
        let e200 = (0..store.event_count() as u32).find(|&e| store.start_ps()[e as usize] == 200).unwrap();
        assert_eq!(index.of_event(&store, e200, 10).total, 2);
    }
}
