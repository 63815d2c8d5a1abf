//! XProf's step grouping (`GroupTfEvents`, tsl `group_events.cc`) on the host plane: which step
//! ("group id") each event belongs to. XProf runs it before its tools; the Memory Profile's `stepId` is
//! this group id (not the allocator's own `id` stat, which is TensorFlow's random executor step id).
//!
//! How XProf groups:
//! 1. Events form a forest: on each line an event is the child of the innermost earlier event whose
//!    time span includes it; `ExecutorState::Process` is the parent of `IteratorGetNext*` with the same
//!    (`id`, `iter_num`); a producer (`_pt`, `_p`) is the parent of every consumer (`_ct`, `_c`) with the
//!    same context (unless both sides have 64 or more events).
//! 2. Roots: the iterations of TensorFlow while-loops if any (executor events with `iter_num` ≠ 0);
//!    else every event with a root level (`_r`, or a `TraceContext` event), higher levels first, then by
//!    start time. A root nested under a root of the same level is left to that one. tf.data function
//!    runs are never roots.
//! 3. Group ids count up over the roots in that order; each root's id spreads breadth-first to every
//!    descendant not yet grouped. Traces with TensorFlow loop ops (`WhileOp-EvalCond`, ...) are not grouped.
//!
//! Cost: linear in the host plane's events (millions in a long trace). Each event is read once from the
//! wire by the caller's scan ([`Grouper::push`]). Only events that can start or pass on a group other
//! than through nesting become nodes: roots, executor / iterator / tf.data events, and context ends.
//! Any other event's only way in is its enclosing event, so its group is that of its innermost
//! enclosing node (or none): it is not a node, and its nested events nest in that node instead (the
//! same groups; see [`Grouper::push`]). The caller names the events whose groups it wants (the
//! memory events); each keeps just its enclosing node. Among nodes, nesting, the edge nearly every
//! node has, is kept as two integers per node ([`Nesting`]: parent, and where the subtree ends); the
//! other edges live in flat arrays (compressed sparse rows). Only the few events that can be roots or
//! loop members keep their stats, in side lists. `tests/step_groups.rs` checks all of it against a
//! plain transcription of XProf's algorithm on random traces.
//!
//! Differences: only the host plane is grouped (XProf also adds device planes, whose events connect
//! through correlation ids but carry no roots of their own in the traces we know); roots with equal
//! start times are taken in file order (XProf's sort is unstable there).

use crate::decode::xplane::{IdTable, Line, Plane, RawEvent, StatValue, XSpace};
use crate::decode::DecodeError;
use crate::fast_hash::FastMap;
use std::collections::{HashSet, VecDeque};

/// Group id of each tracked event of the host plane ([`Grouper::new`]), by its rank among the tracked
/// events pushed (file order, lines in order).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StepGroups {
    /// [`UNGROUPED`] for an event without a group.
    groups: Vec<u32>,
    /// The `step_name` XProf gives each tracked root that started a group and is not one of its
    /// implicit roots (`FunctionRun`, `SessionRun`, `RunGraph`, executor events): (tracked rank, name),
    /// by rank. The step events read these roots as step markers.
    step_names: Vec<(usize, String)>,
}

impl StepGroups {
    pub fn group_id(&self, tracked: usize) -> Option<i64> {
        self.groups.get(tracked).filter(|&&g| g != UNGROUPED).map(|&g| i64::from(g))
    }

    /// The `step_name` grouping gave the tracked event of this rank, if any.
    pub fn step_name(&self, tracked: usize) -> Option<&str> {
        self.step_names.binary_search_by_key(&tracked, |(t, _)| *t).ok().map(|i| self.step_names[i].1.as_str())
    }
}

/// XProf's name for the events that make a trace ungroupable (TensorFlow 1 control-flow loops).
const LOOP_OPS: [&str; 5] = ["WhileOp-EvalCond", "WhileOp-StartBody", "ForOp", "ParallelForOp", "ForeverOp"];
const EXECUTOR: &str = "ExecutorState::Process";
const ITERATOR_GET_NEXT: [&str; 2] = ["IteratorGetNextOp::DoCompute", "IteratorGetNextAsOptionalOp::DoCompute"];
const TF_DATA_FUNCTION_RUNS: [&str; 4] = [
    "InstantiatedCapturedFunction::Run",
    "InstantiatedCapturedFunction::RunAsync",
    "InstantiatedCapturedFunction::RunInstantiated",
    "InstantiatedCapturedFunction::RunWithBorrowedArgs",
];
const LEGACY_ROOT: &str = "TraceContext";
/// Roots that start a group without being named as a step (XProf's implicit roots; executor events
/// are [`Kind::Executor`]).
const IMPLICIT_ROOTS: [&str; 3] = ["FunctionRun", "SessionRun", "RunGraph"];
/// XProf skips a context with at least this many producers and consumers (a runaway fan-out).
const MAX_CONTEXT_FAN: usize = 64;
/// "No group yet" in [`Forest::group`].
const UNGROUPED: u32 = u32::MAX;
/// Ancestor visits allowed over all roots, per event plus a constant: real traces nest roots a few
/// levels deep and use a tiny fraction of it (see [`has_ancestor_root_of_level`]).
const ANCESTOR_VISITS_PER_NODE: usize = 64;
const ANCESTOR_VISITS_SLACK: usize = 1 << 20;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Other,
    Executor,
    IteratorGetNext,
    TfDataFunctionRun,
}

/// The grouping stats of one event: metadata stats first, then the event's own (later wins, as
/// XProf's `ForEachStat` visits them).
#[derive(Default, Clone, Copy, PartialEq)]
struct GroupingStats {
    producer: (Option<i64>, Option<u64>),
    consumer: (Option<i64>, Option<u64>),
    root_level: Option<i64>,
    is_async: bool,
    step_id: Option<i64>,
    iter_num: Option<i64>,
    step_num: Option<i64>,
}

/// The stats grouping reads ([`Grouper::push`] needs them selected), by name; a stat's role is its
/// position here + 1 (0: not read). `step_num` only names a root's group.
pub const STATS: [&str; 9] = ["_pt", "_p", "_ct", "_c", "_r", "_a", "id", "iter_num", "step_num"];

/// The stats of an event's own that can make an event whose metadata gives it no part in grouping
/// (no name XProf treats specially, no grouping stats) more than a leaf of its enclosing node: a
/// context end, a root, or asynchronous. (`id` and `iter_num` count only for events that are one.)
pub const NODE_MAKING_STATS: [&str; 6] = ["_pt", "_p", "_ct", "_c", "_r", "_a"];

/// The role of each stat metadata id of the plane (the first id of each name, as XProf looks them up).
struct StatIds(IdTable<u8>);

impl StatIds {
    fn new(plane: &Plane) -> Self {
        StatIds(IdTable::new(STATS.iter().enumerate().filter_map(|(i, n)| plane.stat_id(n).map(|id| (id, i as u8 + 1)))))
    }

    #[inline]
    fn role(&self, metadata_id: i64) -> u8 {
        self.0.get(metadata_id)
    }
}

fn int(v: &StatValue) -> Option<i64> {
    match v {
        StatValue::Int(i) => Some(*i),
        StatValue::Uint(u) => Some(*u as i64),
        _ => None,
    }
}

impl GroupingStats {
    /// Applies one stat of `role` (a stat without a value changes nothing, as in XProf).
    fn apply(&mut self, role: u8, v: Option<StatValue>) {
        let Some(v) = v else { return };
        let i = int(&v);
        match role {
            1 => self.producer.0 = i,
            2 => self.producer.1 = i.map(|x| x as u64),
            3 => self.consumer.0 = i,
            4 => self.consumer.1 = i.map(|x| x as u64),
            5 => self.root_level = i,
            6 => self.is_async = i.is_some_and(|x| x != 0),
            7 => self.step_id = i,
            8 => self.iter_num = i,
            9 => self.step_num = i,
            _ => {}
        }
    }
}

/// What an event's metadata alone says: its kind, whether its name makes it a legacy root, and the
/// grouping stats of the metadata (the event's own stats are applied on top).
#[derive(Clone, Copy)]
struct MetaInfo {
    kind: Kind,
    legacy_root: bool,
    /// A root of this name starts a group without naming a step.
    implicit_root: bool,
    /// The caller wants the groups of these events.
    tracked: bool,
    stats: GroupingStats,
}

/// An event that may matter beyond nesting: a root candidate, or an executor / iterator / tf.data run.
#[derive(Clone, Copy)]
struct Keyed {
    node: u32,
    kind: Kind,
    root_level: i64,
    begin_ps: i64,
    step_id: Option<i64>,
    iter_num: Option<i64>,
    step_num: Option<i64>,
    /// Its event metadata id (for a root's group name).
    metadata_id: i64,
    /// Its rank among the tracked events, or [`NONE`].
    tracked: u32,
}

/// Builds the host plane's step groups from its events, fed one by one in file order (lines in order,
/// [`Grouper::start_line`] before each line's events).
pub struct Grouper<'a> {
    plane: &'a Plane,
    ids: StatIds,
    /// Index in `metas` by event metadata id, looked up once per host event.
    meta: IdTable<u32>,
    /// What each event metadata says; the first entry stands for events without metadata.
    metas: Vec<MetaInfo>,
    /// The plane has TensorFlow loop ops (anywhere in the file): then nothing is grouped.
    has_loop_ops: bool,
    nodes: u32,
    base_ps: i64,
    /// Nodes of the current line still open (node, begin, end): the nesting stack.
    open: Vec<(u32, i64, i64)>,
    /// The innermost enclosing node of each tracked event that is not a node itself ([`NONE`] if none).
    tracked: Vec<u32>,
    nesting: Nesting,
    /// Edges other than nesting (contexts, executors to iterators, loop iterations): (from, to).
    edges: Vec<(u32, u32)>,
    keyed: Vec<Keyed>,
    /// Producer and consumer ends of inter-thread contexts, packed by [`Grouper::context_end`]. A flat
    /// list sorted once at the end, rather than a map of lists: millions of events may carry one.
    context_ends: Vec<u128>,
    /// Each context type seen, numbered in order of appearance.
    context_types: FastMap<i64, u32>,
    /// The last context type looked up and its number: there are a handful of types, and a long run
    /// of events mostly repeats one.
    last_context_type: Option<(i64, u32)>,
}

impl<'a> Grouper<'a> {
    /// A grouper for `plane`, the host plane of `space`, that gives the groups of the events whose
    /// event metadata id is `tracked`.
    pub fn new(space: &XSpace, plane: &'a Plane, tracked: impl Fn(i64) -> bool) -> Self {
        let has_loop_ops = space.planes.iter().any(|p| p.meta.event_metadata.values().any(|m| LOOP_OPS.contains(&m.name.as_str())));
        let ids = StatIds::new(plane);
        let mut metas =
            vec![MetaInfo { kind: Kind::Other, legacy_root: false, implicit_root: false, tracked: false, stats: GroupingStats::default() }];
        let meta = IdTable::new(plane.meta.event_metadata.iter().map(|(&id, m)| {
            let name = m.name.as_str();
            let kind = if name == EXECUTOR {
                Kind::Executor
            } else if ITERATOR_GET_NEXT.contains(&name) {
                Kind::IteratorGetNext
            } else if TF_DATA_FUNCTION_RUNS.contains(&name) {
                Kind::TfDataFunctionRun
            } else {
                Kind::Other
            };
            let mut stats = GroupingStats::default();
            for stat in &m.stats {
                stats.apply(ids.role(stat.metadata_id), plane.stat_value(stat));
            }
            let implicit_root = kind == Kind::Executor || IMPLICIT_ROOTS.contains(&name);
            metas.push(MetaInfo { kind, legacy_root: name == LEGACY_ROOT, implicit_root, tracked: tracked(id), stats });
            (id, metas.len() as u32 - 1)
        }));
        Grouper {
            plane,
            ids,
            meta,
            metas,
            has_loop_ops,
            nodes: 0,
            base_ps: 0,
            open: Vec::new(),
            tracked: Vec::new(),
            nesting: Nesting::with_capacity(plane.event_count() / 4),
            edges: Vec::new(),
            keyed: Vec::new(),
            context_ends: Vec::new(),
            context_types: FastMap::default(),
            last_context_type: None,
        }
    }

    /// The event metadata ids of tracked events whose own stats the grouping can do without, provided
    /// none of them has one of [`NODE_MAKING_STATS`] (which a caller reading them anyway can check):
    /// their metadata gives them no part in grouping, so they are leaves of their enclosing nodes.
    pub fn plain_tracked(&self) -> IdTable<bool> {
        IdTable::new(self.plane.meta.event_metadata.keys().map(|&id| {
            let m = &self.metas[self.meta.get(id) as usize];
            (id, m.tracked && m.kind == Kind::Other && !m.legacy_root && m.stats == GroupingStats::default())
        }))
    }

    /// Starts the next line of the plane.
    pub fn start_line(&mut self, line: &Line) {
        self.base_ps = line.header.timestamp_ns.saturating_mul(1000);
        self.close_line();
    }

    /// Ends the events still open on the current line: their subtrees end with it.
    fn close_line(&mut self) {
        for (node, _, _) in self.open.drain(..) {
            self.nesting.subtree_end[node as usize] = self.nodes;
        }
    }

    /// Adds the next event of the current line.
    ///
    /// An event that is not a node still ends, on the nesting stack, the nodes that do not enclose
    /// it, as it would as a node: the stack then holds the nodes among the events XProf's stack would
    /// hold, so each node's parent is its innermost enclosing node (a chain of enclosing events all
    /// enclose one another, so none is skipped that XProf would have kept).
    pub fn push(&mut self, ev: &RawEvent<'a, '_>) -> Result<(), DecodeError> {
        let Grouper {
            plane,
            ids,
            meta,
            metas,
            nodes,
            base_ps,
            open,
            tracked,
            nesting,
            keyed,
            context_ends,
            context_types,
            last_context_type,
            ..
        } = self;
        let h = &ev.header;
        let info = &metas[meta.get(h.metadata_id) as usize];
        // Most events have no grouping stats of their own: then the metadata's are used as they are.
        let mut own: Option<GroupingStats> = None;
        for stat in ev.stats {
            let role = ids.role(stat.metadata_id);
            if role != 0 {
                let v = match stat.number() {
                    Some(v) => Some(v),
                    None => plane.raw_stat_value(stat)?,
                };
                own.get_or_insert(info.stats).apply(role, v);
            }
        }
        let s = own.as_ref().unwrap_or(&info.stats);
        let begin_ps = base_ps.saturating_add(h.offset_ps);
        let end_ps = begin_ps.saturating_add(h.duration_ps);
        let root_level = s.root_level.unwrap_or(if info.legacy_root { 1 } else { 0 });
        let has_context = |(t, id): (Option<i64>, Option<u64>)| t.is_some() && id.is_some();
        let node = root_level > 0 || info.kind != Kind::Other || has_context(s.producer) || has_context(s.consumer);
        if !node {
            let enclosing = if s.is_async { NONE } else { innermost_enclosing(open, nesting, *nodes, begin_ps, end_ps) };
            if info.tracked {
                tracked.push(enclosing);
            }
            return Ok(());
        }
        let me = *nodes;
        *nodes = nodes.checked_add(1).filter(|&n| n != UNGROUPED).ok_or_else(|| DecodeError::Corrupt {
            format: crate::decode::Format::XSpace,
            detail: "too many events on the host plane to group".into(),
        })?;
        if root_level > 0 || info.kind != Kind::Other {
            let tracked_rank = if info.tracked { tracked.len() as u32 } else { NONE };
            keyed.push(Keyed {
                node: me,
                kind: info.kind,
                root_level,
                begin_ps,
                step_id: s.step_id,
                iter_num: s.iter_num,
                step_num: s.step_num,
                metadata_id: h.metadata_id,
                tracked: tracked_rank,
            });
        }
        let mut context_end = |(t, id): (i64, u64), consumer: bool| {
            // One integer that sorts by context, then producers before consumers: the id, the type's
            // number, the side and the node, from the high bits down.
            let rank = match *last_context_type {
                Some((last, rank)) if last == t => rank,
                _ => {
                    let next = context_types.len() as u32;
                    let rank = *context_types.entry(t).or_insert(next);
                    *last_context_type = Some((t, rank));
                    rank
                }
            };
            context_ends.push(u128::from(id) << 64 | u128::from(rank) << 33 | u128::from(consumer) << 32 | u128::from(me));
        };
        if let (Some(t), Some(id)) = s.producer {
            context_end((t, id), false);
        }
        if let (Some(t), Some(id)) = s.consumer {
            context_end((t, id), true);
        }
        if info.tracked {
            tracked.push(me);
        }
        let parent = if s.is_async { NONE } else { innermost_enclosing(open, nesting, me, begin_ps, end_ps) };
        nesting.parent.push(parent);
        nesting.subtree_end.push(me + 1);
        if !s.is_async {
            open.push((me, begin_ps, end_ps));
        }
        Ok(())
    }

    /// The groups of the tracked events pushed.
    pub fn finish(mut self) -> StepGroups {
        self.close_line();
        let Grouper { plane, meta, metas, has_loop_ops, nodes, nesting, mut edges, keyed, context_ends, tracked, .. } = self;
        connect_executors_to_iterators(&keyed, &mut edges);
        // Each context's producers, then its consumers. XProf makes every producer a parent of every
        // consumer. A context with several of both goes through one extra node instead (producers → it
        // → consumers): p + c edges, not p · c, and the same events reachable from any event, so the
        // same groups (the extra node has no root level). Which order the contexts come in changes
        // no group, so the ends are sorted as plain integers ([`Grouper::context_end`]).
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
        let mut group = vec![UNGROUPED; n];
        let named = if has_loop_ops { Vec::new() } else { assign_groups(n, &keyed, nesting, &mut edges, &mut group) };
        // XProf's group name: the root's name, then its iteration or step number (the root's own or
        // its nearest ancestor's), else the group id.
        let mut step_names: Vec<(usize, String)> = named
            .into_iter()
            .filter_map(|(k, id, number)| {
                let k = &keyed[k];
                let info = &metas[meta.get(k.metadata_id) as usize];
                (k.tracked != NONE && !info.implicit_root)
                    .then(|| (k.tracked as usize, format!("{} {}", plane.event_name(k.metadata_id), number.unwrap_or(i64::from(id)))))
            })
            .collect();
        step_names.sort_unstable_by_key(|(t, _)| *t);
        StepGroups { groups: tracked.iter().map(|&t| if t == NONE { UNGROUPED } else { group[t as usize] }).collect(), step_names }
    }
}

/// Pops the open nodes that do not enclose `begin..=end` (their subtrees end before node `next`, the
/// next node to be numbered) and returns the innermost one that does, or [`NONE`].
#[inline]
fn innermost_enclosing(open: &mut Vec<(u32, i64, i64)>, nesting: &mut Nesting, next: u32, begin: i64, end: i64) -> u32 {
    while let Some(&(node, b, e)) = open.last() {
        if b <= begin && end <= e {
            return node;
        }
        nesting.subtree_end[node as usize] = next;
        open.pop();
    }
    NONE
}

/// The context ends ([`Grouper::push`]'s packing) reordered so that each context's ends are adjacent,
/// producers first. Contexts may come in any order, so instead of sorting a million ends outright they
/// are spread over about one bucket per eight ends by a hash of their context, and each small bucket is
/// sorted. The hash is fixed (the result must not vary between runs); a file crafted to put every
/// context in one bucket only brings back the cost of one full sort.
fn contexts_together(ends: Vec<u128>) -> Vec<u128> {
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
fn connect_executors_to_iterators(keyed: &[Keyed], edges: &mut Vec<(u32, u32)>) {
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
const NONE: u32 = u32::MAX;

/// The nesting forest of the host plane's lines, without an edge list: each line's events arrive in
/// start order and nest by a stack, so the descendants of an event are exactly the events that follow
/// it on its line up to `subtree_end` (depth-first order). Two integers per event, where edge lists
/// in both directions took five, for the one kind of edge nearly every event has.
struct Nesting {
    /// The enclosing event, or [`NONE`] (first level, and asynchronous events, which never nest).
    parent: Vec<u32>,
    /// One past the event's last descendant.
    subtree_end: Vec<u32>,
}

impl Nesting {
    fn with_capacity(n: usize) -> Self {
        Nesting { parent: Vec::with_capacity(n), subtree_end: Vec::with_capacity(n) }
    }

    /// The events directly nested in `node`: its range, skipping over each child's own subtree (and
    /// over asynchronous events, which lie in the range without being children).
    #[inline]
    fn for_each_child(&self, node: u32, mut f: impl FnMut(u32)) {
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

    fn parent_of(&self, node: u32) -> Option<u32> {
        self.parent.get(node as usize).copied().filter(|&p| p != NONE)
    }
}

/// All edges: nesting, and the others in compressed sparse rows both ways.
struct Graph {
    nesting: Nesting,
    children: Csr,
    parents: Csr,
}

impl Graph {
    fn for_each_child(&self, node: u32, mut f: impl FnMut(u32)) {
        self.nesting.for_each_child(node, &mut f);
        self.children.of(node).iter().for_each(|&c| f(c));
    }

    fn for_each_parent(&self, node: u32, mut f: impl FnMut(u32)) {
        self.nesting.parent_of(node).into_iter().for_each(&mut f);
        self.parents.of(node).iter().for_each(|&p| f(p));
    }
}

/// Adjacency in compressed sparse rows: the neighbours of node `i` are `targets[starts[i]..starts[i + 1]]`.
struct Csr {
    starts: Vec<u32>,
    targets: Vec<u32>,
}

impl Csr {
    /// From `edges` as (from, to) pairs, or reversed. Counts per node are summed into where each
    /// node's run ends, then the edges are placed from the back (keeping their order), which leaves
    /// each entry at its run's start: no second array of positions.
    fn new(n: usize, edges: &[(u32, u32)], reversed: bool) -> Self {
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

    fn of(&self, node: u32) -> &[u32] {
        &self.targets[self.starts[node as usize] as usize..self.starts[node as usize + 1] as usize]
    }
}

/// Breadth-first search scratch space reused across searches: a node is seen when its mark equals the
/// current search's number, so starting a search costs nothing.
struct Bfs {
    mark: Vec<u32>,
    search: u32,
    queue: VecDeque<u32>,
}

impl Bfs {
    fn new(n: usize) -> Self {
        Bfs { mark: vec![0; n], search: 0, queue: VecDeque::new() }
    }

    fn start(&mut self) {
        self.search += 1;
        self.queue.clear();
    }

    /// Marks `node` seen in this search and queues it, unless it was seen already.
    fn visit(&mut self, node: u32) {
        let m = &mut self.mark[node as usize];
        if *m != self.search {
            *m = self.search;
            self.queue.push_back(node);
        }
    }
}

/// Groups the nodes from their roots. Returns the roots that started a group outside TensorFlow loops
/// (their index in `keyed`, their group id and the iteration or step number their group is named by).
fn assign_groups(
    n: usize,
    keyed: &[Keyed],
    nesting: Nesting,
    edges: &mut Vec<(u32, u32)>,
    group: &mut [u32],
) -> Vec<(usize, u32, Option<i64>)> {
    let tf_data_steps: HashSet<i64> = keyed.iter().filter(|k| k.kind == Kind::TfDataFunctionRun).filter_map(|k| k.step_id).collect();
    let loop_roots = tf_loop_roots(keyed, &tf_data_steps, edges);
    let graph = Graph { nesting, children: Csr::new(n, edges, false), parents: Csr::new(n, edges, true) };
    let mut bfs = Bfs::new(n);
    let mut next_group = 0u32;
    if !loop_roots.is_empty() {
        for root in loop_roots {
            propagate(&graph, &mut bfs, group, root, next_group);
            next_group += 1;
        }
        return Vec::new();
    }
    let mut roots: Vec<(usize, &Keyed)> =
        keyed.iter().enumerate().filter(|(_, k)| k.root_level > 0 && !k.step_id.is_some_and(|s| tf_data_steps.contains(&s))).collect();
    roots.sort_by_key(|(_, k)| (std::cmp::Reverse(k.root_level), k.begin_ps, k.node));
    if roots.is_empty() {
        return Vec::new();
    }
    // Root level of every event with a positive one (the only levels an ancestor check can match).
    let level_of: FastMap<u32, i64> = keyed.iter().filter(|k| k.root_level > 0).map(|k| (k.node, k.root_level)).collect();

    let keyed_of: FastMap<u32, usize> = keyed.iter().enumerate().map(|(i, k)| (k.node, i)).collect();
    let mut named = Vec::new();
    let mut budget = ANCESTOR_VISITS_PER_NODE.saturating_mul(n).saturating_add(ANCESTOR_VISITS_SLACK);
    for (index, root) in roots {
        if group[root.node as usize] == UNGROUPED
            && !has_ancestor_root_of_level(&graph, &mut bfs, &level_of, root.node, root.root_level, &mut budget)
        {
            propagate(&graph, &mut bfs, group, root.node, next_group);
            let number = context_number(&graph, &mut bfs, keyed, &keyed_of, root.node, |k| k.iter_num, &mut budget)
                .or_else(|| context_number(&graph, &mut bfs, keyed, &keyed_of, root.node, |k| k.step_num, &mut budget));
            named.push((index, next_group, number));
            next_group += 1;
        }
    }
    named
}

/// XProf's context stat: the stat `of` of `node` itself, else of the nearest event with one among its
/// ancestors (breadth-first over all parents). Stats are kept for keyed events only (roots, executor and
/// iterator events): the events that carry step and iteration numbers. Visits spend `budget` as in
/// [`has_ancestor_root_of_level`].
fn context_number(
    graph: &Graph,
    bfs: &mut Bfs,
    keyed: &[Keyed],
    keyed_of: &FastMap<u32, usize>,
    node: u32,
    of: impl Fn(&Keyed) -> Option<i64>,
    budget: &mut usize,
) -> Option<i64> {
    bfs.start();
    bfs.visit(node);
    while let Some(n) = bfs.queue.pop_front() {
        if *budget == 0 {
            return None;
        }
        *budget -= 1;
        if let Some(v) = keyed_of.get(&n).and_then(|&i| of(&keyed[i])) {
            return Some(v);
        }
        graph.for_each_parent(n, |p| bfs.visit(p));
    }
    None
}

/// A node and its start time (ps).
type NodeStart = (u32, i64);

/// TensorFlow while-loops: executor events grouped by (`id`, `iter_num`); each iteration of a
/// function that has more than the single iteration 0 becomes a root, adopting its other events
/// (added to `edges`). Returns the roots in group order.
fn tf_loop_roots(keyed: &[Keyed], tf_data_steps: &HashSet<i64>, edges: &mut Vec<(u32, u32)>) -> Vec<u32> {
    // step id → iter num → events (in node order, with their start).
    let mut loops: FastMap<i64, FastMap<i64, Vec<NodeStart>>> = FastMap::default();
    for k in keyed {
        if k.kind != Kind::Executor {
            continue;
        }
        let (Some(step), Some(iter)) = (k.step_id, k.iter_num) else { continue };
        if tf_data_steps.contains(&step) {
            continue;
        }
        loops.entry(step).or_default().entry(iter).or_default().push((k.node, k.begin_ps));
    }
    let mut iterations: Vec<Vec<NodeStart>> = Vec::new();
    for iters in loops.into_values() {
        if iters.len() == 1 && iters.contains_key(&0) {
            continue;
        }
        iterations.extend(iters.into_values());
    }
    // First event of an iteration: the earliest (first in node order on ties).
    let mut roots: Vec<(NodeStart, Vec<NodeStart>)> =
        iterations.into_iter().filter_map(|ev| ev.iter().copied().min_by_key(|&(node, begin)| (begin, node)).map(|r| (r, ev))).collect();
    roots.sort_by_key(|&((node, begin), _)| (begin, node));
    for ((root, _), events) in &roots {
        edges.extend(events.iter().filter(|&&(e, _)| e != *root).map(|&(e, _)| (*root, e)));
    }
    roots.into_iter().map(|((r, _), _)| r).collect()
}

/// Whether some ancestor (breadth-first over all parents) is a root of level `level`. Each visit
/// spends one unit of `budget`; once it is spent the answer is "no" (the root keeps its own group), so
/// the checks stay linear on a crafted trace of deeply nested roots of many different levels.
fn has_ancestor_root_of_level(
    graph: &Graph,
    bfs: &mut Bfs,
    level_of: &FastMap<u32, i64>,
    node: u32,
    level: i64,
    budget: &mut usize,
) -> bool {
    bfs.start();
    bfs.mark[node as usize] = bfs.search;
    graph.for_each_parent(node, |p| bfs.visit(p));
    while let Some(n) = bfs.queue.pop_front() {
        if *budget == 0 {
            return false;
        }
        *budget -= 1;
        if level_of.get(&n) == Some(&level) {
            return true;
        }
        graph.for_each_parent(n, |p| bfs.visit(p));
    }
    false
}

/// Gives `id` to `root` and, breadth-first, to every descendant reached through ungrouped nodes.
fn propagate(graph: &Graph, bfs: &mut Bfs, group: &mut [u32], root: u32, id: u32) {
    bfs.start();
    bfs.visit(root);
    while let Some(n) = bfs.queue.pop_front() {
        if group[n as usize] != UNGROUPED {
            continue;
        }
        group[n as usize] = id;
        graph.for_each_child(n, |c| bfs.visit(c));
    }
}
