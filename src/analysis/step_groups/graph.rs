//! The graph the groups spread over: each line's nesting (kept as ranges), and the other edges
//! (inter-thread contexts, executors to iterators) in compressed sparse rows.

use super::classify::{Keyed, Kind};
use super::roots::UNGROUPED;
use crate::fast_hash::FastMap;
use std::collections::VecDeque;

/// XProf skips a context with at least this many producers and consumers (a runaway fan-out).
pub(super) const MAX_CONTEXT_FAN: usize = 64;
/// The most nodes the grouping numbers for events: a node's number and a context end's side share
/// one 32-bit word ([`ContextEnd`]).
pub(super) const MAX_EVENT_NODES: u32 = 1 << 31;

/// One end of an inter-thread context of one type ([`super::Grouper::push`]): its id, then its side
/// (producers first) and node in one word, so that the ends sorted as integers put each context's
/// together, producers first, in node order. 12 bytes: a long trace has millions.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct ContextEnd {
    id_high: u32,
    id_low: u32,
    side_node: u32,
}

impl ContextEnd {
    /// `node` is below [`MAX_EVENT_NODES`].
    pub(super) fn new(id: u64, consumer: bool, node: u32) -> Self {
        ContextEnd { id_high: (id >> 32) as u32, id_low: id as u32, side_node: (u32::from(consumer) << 31) | node }
    }

    fn id(&self) -> u64 {
        (u64::from(self.id_high) << 32) | u64::from(self.id_low)
    }

    fn is_consumer(&self) -> bool {
        self.side_node >> 31 == 1
    }

    fn node(&self) -> u32 {
        self.side_node & (MAX_EVENT_NODES - 1)
    }
}

/// Adds the edges of the inter-thread contexts (the ends of each context type) to `edges`; returns
/// the node count, hubs included.
///
/// Each context's producers, then its consumers. XProf makes every producer a parent of every
/// consumer. A context with several of both goes through one extra node instead (producers → it →
/// consumers): p + c edges, not p · c, and the same events reachable from any event, so the same
/// groups (the extra node has no root level). Which order the contexts come in changes no group (an
/// event is at most one context's producer and one's consumer), so the ends are sorted as plain
/// integers, one type at a time, each type's dropped once its edges are made.
pub(super) fn context_edges(ends_by_type: Vec<Vec<ContextEnd>>, nodes: u32, edges: &mut Vec<(u32, u32)>) -> usize {
    let mut n = nodes as usize;
    for mut ends in ends_by_type {
        contexts_together(&mut ends);
        for context in ends.chunk_by(|a, b| a.id() == b.id()) {
            let (producers, consumers) = context.split_at(context.partition_point(|e| !e.is_consumer()));
            if producers.len() >= MAX_CONTEXT_FAN && consumers.len() >= MAX_CONTEXT_FAN {
                continue;
            }
            let hub = (producers.len() > 1 && consumers.len() > 1).then(|| u32::try_from(n).ok().filter(|&h| h != UNGROUPED)).flatten();
            if let Some(hub) = hub {
                n += 1;
                edges.extend(producers.iter().map(|p| (p.node(), hub)));
                edges.extend(consumers.iter().map(|c| (hub, c.node())));
            } else {
                for p in producers {
                    edges.extend(consumers.iter().map(|c| (p.node(), c.node())));
                }
            }
        }
    }
    n
}

/// Buckets of the in-place spread in [`contexts_together`]: few enough that each bucket's next slot
/// stays in the cache, where one bucket per few ends made nearly every move a cache miss.
const CONTEXT_BUCKETS: usize = 256;

/// One type's context ends reordered in place so that each context's ends are adjacent, producers
/// first, in node order. Rather than sorting millions of ends outright, they are spread over
/// [`CONTEXT_BUCKETS`] buckets by a hash of their context (in place, each end swapped straight into
/// its bucket: a second list of the ends took as much memory again), and each bucket, small enough
/// to sort within the cache, is sorted. Contexts may come in any order. The hash is fixed (the result
/// must not vary between runs); a file crafted to put every context in one bucket only brings back the
/// cost of one full sort.
pub(super) fn contexts_together(ends: &mut [ContextEnd]) {
    let bucket = |e: &ContextEnd| (e.id().wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 56) as usize;
    let mut starts = [0usize; CONTEXT_BUCKETS + 1];
    for e in ends.iter() {
        starts[bucket(e) + 1] += 1;
    }
    for i in 1..starts.len() {
        starts[i] += starts[i - 1];
    }
    // Each bucket's next slot: an end found there that belongs elsewhere is swapped into its own
    // bucket's next slot, until this slot holds one of this bucket's.
    let mut next = starts;
    for b in 0..CONTEXT_BUCKETS {
        while next[b] < starts[b + 1] {
            let home = bucket(&ends[next[b]]);
            if home == b {
                next[b] += 1;
            } else {
                ends.swap(next[b], next[home]);
                next[home] += 1;
            }
        }
    }
    for w in starts.windows(2) {
        ends[w[0]..w[1]].sort_unstable();
    }
}

/// XProf's inter-thread rule: the last executor event with a given (`id`, `iter_num`) adopts the
/// iterator `GetNext` events with the same pair.
pub(super) fn connect_executors_to_iterators(keyed: &[Keyed], edges: &mut Vec<(u32, u32)>) {
    let key = |k: &Keyed| k.step_id.zip(k.iter_num);
    let mut parent_of: FastMap<(i64, i64), u32> = FastMap::default();
    for k in keyed {
        if let (Kind::Executor, Some(pair)) = (k.kind, key(k)) {
            parent_of.insert(pair, k.node);
        }
    }
    for k in keyed.iter().filter(|k| k.kind == Kind::IteratorGetNext) {
        if let Some(&p) = key(k).and_then(|pair| parent_of.get(&pair)) {
            edges.push((p, k.node));
        }
    }
}

/// "No node" in [`Nesting::parent`].
pub(super) const NONE: u32 = u32::MAX;

/// The nesting forest of the host plane's lines, without an edge list: each line's events arrive in
/// start order and nest by a stack, so the descendants of an event are exactly the events that follow
/// it on its line up to `subtree_end` (depth-first order). Two integers per event, where edge lists
/// in both directions took five, for the one kind of edge nearly every event has.
pub(super) struct Nesting {
    /// The enclosing event, or [`NONE`] (first level, and asynchronous events, which never nest).
    pub(super) parent: Vec<u32>,
    /// One past the event's last descendant.
    pub(super) subtree_end: Vec<u32>,
}

impl Nesting {
    pub(super) fn with_capacity(n: usize) -> Self {
        Nesting { parent: Vec::with_capacity(n), subtree_end: Vec::with_capacity(n) }
    }

    /// The events directly nested in `node`: its range, skipping over each child's own subtree (and
    /// over asynchronous events, which lie in the range without being children).
    #[inline]
    pub(super) fn for_each_child(&self, node: u32, mut f: impl FnMut(u32)) {
        let Some(&end) = self.subtree_end.get(node as usize) else { return };
        let mut c = node + 1;
        while c < end {
            if self.parent[c as usize] == node {
                f(c);
                c = self.subtree_end[c as usize];
            } else {
                c += 1;
            }
        }
    }

    pub(super) fn parent_of(&self, node: u32) -> Option<u32> {
        self.parent.get(node as usize).copied().filter(|&p| p != NONE)
    }
}

/// All edges: nesting, and the others in compressed sparse rows both ways.
pub(super) struct Graph {
    pub(super) nesting: Nesting,
    pub(super) children: Csr,
    pub(super) parents: Csr,
}

impl Graph {
    pub(super) fn for_each_child(&self, node: u32, mut f: impl FnMut(u32)) {
        self.nesting.for_each_child(node, &mut f);
        self.children.of(node).iter().for_each(|&c| f(c));
    }

    pub(super) fn for_each_parent(&self, node: u32, mut f: impl FnMut(u32)) {
        self.nesting.parent_of(node).into_iter().for_each(&mut f);
        self.parents.of(node).iter().for_each(|&p| f(p));
    }
}

/// Adjacency in compressed sparse rows: the neighbours of node `i` are `targets[starts[i]..starts[i + 1]]`.
pub(super) struct Csr {
    pub(super) starts: Vec<u32>,
    pub(super) targets: Vec<u32>,
}

impl Csr {
    /// From `edges` as (from, to) pairs, or reversed. Counts per node are summed into where each
    /// node's run ends, then the edges are placed from the back (keeping their order), which leaves
    /// each entry at its run's start: no second array of positions.
    pub(super) fn new(n: usize, edges: &[(u32, u32)], reversed: bool) -> Self {
        let ends = |&(a, b): &(u32, u32)| if reversed { (b, a) } else { (a, b) };
        let mut starts = vec![0u32; n + 1];
        for e in edges {
            starts[ends(e).0 as usize] += 1;
        }
        let mut total = 0;
        for s in &mut starts {
            total += *s;
            *s = total;
        }
        let mut targets = vec![0u32; edges.len()];
        for e in edges.iter().rev() {
            let (from, to) = ends(e);
            starts[from as usize] -= 1;
            targets[starts[from as usize] as usize] = to;
        }
        Csr { starts, targets }
    }

    pub(super) fn of(&self, node: u32) -> &[u32] {
        &self.targets[self.starts[node as usize] as usize..self.starts[node as usize + 1] as usize]
    }
}

/// Breadth-first search scratch space reused across searches: a node is seen when its mark equals the
/// current search's number, so starting a search costs nothing.
pub(super) struct Bfs {
    pub(super) mark: Vec<u32>,
    pub(super) search: u32,
    pub(super) queue: VecDeque<u32>,
}

impl Bfs {
    pub(super) fn new(n: usize) -> Self {
        Bfs { mark: vec![0; n], search: 0, queue: VecDeque::new() }
    }

    pub(super) fn start(&mut self) {
        self.search += 1;
        self.queue.clear();
    }

    /// Marks `node` seen in this search and queues it, unless it was seen already.
    pub(super) fn visit(&mut self, node: u32) {
        let m = &mut self.mark[node as usize];
        if *m != self.search {
            *m = self.search;
            self.queue.push_back(node);
        }
    }
}
