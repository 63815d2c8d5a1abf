//! The graph the groups spread over: each line's nesting (kept as ranges), and the other edges
//! (inter-thread contexts, executors to iterators) in compressed sparse rows.

use super::classify::{Keyed, Kind};
use super::roots::UNGROUPED;
use crate::fast_hash::FastMap;
use std::collections::VecDeque;

/// XProf skips a context with at least this many producers and consumers (a runaway fan-out).
pub(super) const MAX_CONTEXT_FAN: usize = 64;
/// Adds the edges of the inter-thread contexts ([`super::Grouper::push`]'s packed ends) to `edges`;
/// returns the node count, hubs included.
///
/// Each context's producers, then its consumers. XProf makes every producer a parent of every
/// consumer. A context with several of both goes through one extra node instead (producers → it →
/// consumers): p + c edges, not p · c, and the same events reachable from any event, so the same
/// groups (the extra node has no root level). Which order the contexts come in changes no group, so
/// the ends are sorted as plain integers.
pub(super) fn context_edges(context_ends: Vec<u128>, nodes: u32, edges: &mut Vec<(u32, u32)>) -> usize {
    let ends = contexts_together(context_ends);
    let context = |e: &u128| e >> 33;
    let is_consumer = |e: &u128| (e >> 32) & 1 == 1;
    let node = |e: &u128| *e as u32;
    let mut n = nodes as usize;
    for context in ends.chunk_by(|a, b| context(a) == context(b)) {
        let (producers, consumers) = context.split_at(context.partition_point(|e| !is_consumer(e)));
        if producers.len() >= MAX_CONTEXT_FAN && consumers.len() >= MAX_CONTEXT_FAN {
            continue;
        }
        let hub = (producers.len() > 1 && consumers.len() > 1).then(|| u32::try_from(n).ok().filter(|&h| h != UNGROUPED)).flatten();
        if let Some(hub) = hub {
            n += 1;
            edges.extend(producers.iter().map(|p| (node(p), hub)));
            edges.extend(consumers.iter().map(|c| (hub, node(c))));
        } else {
            for p in producers {
                edges.extend(consumers.iter().map(|c| (node(p), node(c))));
            }
        }
    }
    n
}

/// The context ends ([`Grouper::push`]'s packing) reordered so that each context's ends are adjacent,
/// producers first. Contexts may come in any order, so instead of sorting a million ends outright they
/// are spread over about one bucket per eight ends by a hash of their context, and each small bucket is
/// sorted. The hash is fixed (the result must not vary between runs); a file crafted to put every
/// context in one bucket only brings back the cost of one full sort.
pub(super) fn contexts_together(ends: Vec<u128>) -> Vec<u128> {
    let n = ends.len();
    let bits = (usize::BITS - n.leading_zeros()).saturating_sub(3).clamp(1, 24);
    let bucket = |e: u128| {
        let context = e >> 33;
        let h = (context as u64 ^ ((context >> 64) as u64).rotate_left(29)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        (h >> (64 - bits)) as usize
    };
    let mut starts = vec![0usize; (1 << bits) + 1];
    for &e in &ends {
        starts[bucket(e) + 1] += 1;
    }
    for i in 1..starts.len() {
        starts[i] += starts[i - 1];
    }
    let mut fill = starts.clone();
    let mut out = vec![0u128; n];
    for &e in &ends {
        let b = bucket(e);
        out[fill[b]] = e;
        fill[b] += 1;
    }
    for w in starts.windows(2) {
        out[w[0]..w[1]].sort_unstable();
    }
    out
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
