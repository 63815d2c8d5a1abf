//! Which TensorFlow ops of the host plane XProf marks eager (`EventForest::MarkEagerlyExecutedCpuTfOps`
//! in tsl's `group_events.cc`, run by its step grouping): a `TfOpRun` event (a name that parses as a
//! TensorFlow op) is eager when the `EagerExecute` event (XProf's `EagerKernelExecute` type) nearest to
//! it, searched breadth first up the event graph from the event itself, runs an op eagerly: its
//! `is_func` stat has the integer value 0 (absent means a compiled function). Its `is_eager` stat is
//! overwritten either way, so an op under no `EagerExecute` is not eager. XProf groups (and so marks)
//! neither a trace with TensorFlow loop ops nor one grouped when it was recorded: there every op keeps
//! its recorded `is_eager` stat ([`Mark::Recorded`]).
//!
//! An event's parents, in the order XProf adds them (the order breadth first search takes them in):
//! the innermost earlier event on its line whose span includes it (async events, `_a`, neither nest
//! nor are nested); for an `IteratorGetNext*` event, the `ExecutorState::Process` with the same `id`
//! and `iter_num` (the last one); for a consumer of a context (`_ct`, `_c`), every producer of it
//! (`_pt`, `_p`) of the same process (an event's `_pid`, else the plane's `process_id`) in plane
//! order, unless the context has 64 or more of both in that process; for an executor event of
//! a TensorFlow while-loop iteration (XProf's `ProcessTensorFlowLoop`: executors by `id` and
//! `iter_num`, tf.data's left out, a function whose only iteration is 0 has no loop), the first
//! executor event of its iteration, last. So an op run on an executor thread is eager when the
//! executor event consumes the context of an `EagerExecute` that runs it eagerly on another thread,
//! or belongs to a loop iteration whose first executor event does.
//!
//! Cost: the graph is read in the host op db's own scan of the plane ([`EagerGraph::push`], one call
//! per event the scan decodes anyway), never in a pass of its own; a plane without `EagerExecute`
//! events builds none (no op of it is eager). Only the events with a parent besides their nesting one,
//! the context ends, executors and `EagerExecute` events become graph nodes: any other event's nearest
//! `EagerExecute` is found through its innermost enclosing node, as many steps away as the nesting
//! levels between them. A producer under no node that consumes nothing is under no `EagerExecute` for
//! sure and is no node either (its context is kept for XProf's fan limit); an executor stays one (a
//! loop iteration's first executor may be its parent, known only after the last line).
//! The answers are computed once, after the last line ([`EagerGraph::finish`]): only the nodes below an
//! `EagerExecute` that runs an op eagerly can be eager, so only they and the nodes above them are
//! searched (with exact distances, cycles of contexts included); until then an op carries its node
//! ([`Mark::Node`]). A plane without `EagerExecute` events or without `is_func` stats builds no graph.

use super::host::{first_stat, int_value};
use crate::analysis::step_groups::{tf_loop_iterations, ContextKinds, TF_DATA_FUNCTION_RUNS};
use crate::decode::xplane::{IdTable, Plane, RawEvent, StatValue};
use crate::decode::DecodeError;
use crate::fast_hash::FastMap;

/// XProf skips a context with at least this many producers and consumers.
const MAX_CONTEXT_FAN: usize = 64;
const EAGER_EXECUTE: &str = "EagerExecute";
const EXECUTOR: &str = "ExecutorState::Process";
const ITERATOR_GET_NEXT: [&str; 2] = ["IteratorGetNextOp::DoCompute", "IteratorGetNextAsOptionalOp::DoCompute"];

/// The stats the graph reads of every event, in role order (role = index + 1); an `EagerExecute`'s
/// `is_func` besides.
const STAT_NAMES: [&str; 8] = ["_pt", "_p", "_ct", "_c", "_a", "_pid", "id", "iter_num"];
/// The roles that make an event more than a leaf of its enclosing node (context ends, async).
const CONTEXT_ROLES: usize = 5;
/// The roles read from the scan's selection: those and `_pid` (not `id` and `iter_num`, the
/// executors' and iterators' keys).
const SCANNED_ROLES: usize = 6;
const IS_FUNC: &str = "is_func";

/// A context: its kind (the rank of its (type, process id), [`ContextKinds`]) and id.
/// XProf keeps a context's ends by process id and connects only those of one process.
type Context = (u32, u64);

/// What the marking reads of each event metadata id.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum Kind {
    #[default]
    Other,
    TfOpRun,
    EagerExecute,
    Executor,
    Iterator,
    /// A tf.data function run: its `id` is no loop's (XProf leaves those executors out of loops).
    TfDataRun,
}

/// How an event's `is_eager` is decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mark {
    /// By its own `is_eager` stat: not a `TfOpRun`, or a trace XProf does not mark.
    Recorded,
    /// Known already: an op under no graph node (or of a plane without `EagerExecute`) is not eager.
    Known(bool),
    /// As the nearest `EagerExecute` to this graph node says ([`EagerGraph::finish`]).
    Node(u32),
}

/// A graph node: its innermost enclosing node and how many nesting levels up it is, and for an
/// `EagerExecute`, whether it runs an op eagerly.
#[derive(Debug, Clone, Copy)]
struct Node {
    enclosing: Option<(u32, u32)>,
    eager_execute: Option<bool>,
}

/// An event enclosing the one read: its span, and the nearest node at or above it with that node's
/// nesting depth.
struct Enclosing {
    begin: i64,
    end: i64,
    nearest: Option<(u32, u32)>,
}

/// The event graph of a host plane as XProf's eager marking walks it, built event by event.
pub(super) struct EagerGraph {
    kinds: IdTable<Kind>,
    /// Each read stat metadata id's role (index in [`STAT_NAMES`] + 1).
    roles: IdTable<u8>,
    is_func: Option<i64>,
    /// The plane has `EagerExecute` events and `is_func` stats: without, no op is eager and no graph
    /// is built.
    any_eager_execute: bool,
    /// Some `EagerExecute` node runs an op eagerly: without one, no node's answer is eager.
    any_eager_node: bool,
    nodes: Vec<Node>,
    /// The current line's open events.
    stack: Vec<Enclosing>,
    /// The last executor of each (`id`, `iter_num`).
    executors: FastMap<(i64, i64), u32>,
    iterators: Vec<(u32, (i64, i64))>,
    /// Every executor node with its (`id`, `iter_num`) and start, for the loops' edges.
    loop_members: Vec<(i64, i64, (u32, i64))>,
    /// The `id`s of tf.data function runs.
    tf_data_steps: Vec<i64>,
    /// Producers that may be under an `EagerExecute` ((type, id), node), in plane order.
    producers: Vec<(Context, u32)>,
    /// The contexts of producers under none for sure (not nodes: only XProf's fan limit counts them).
    dead_producers: Vec<Context>,
    /// Each context kind (type, process) seen.
    context_kinds: ContextKinds,
    /// Consumers ((type, id), node), in plane order.
    consumers: Vec<(Context, u32)>,
}

impl EagerGraph {
    /// The graph of `plane`, or `None` where XProf marks no op: `marked` false (the trace is not
    /// grouped by XProf, see the module doc).
    pub(super) fn new(plane: &Plane, marked: bool) -> Option<Self> {
        if !marked {
            return None;
        }
        let mut any_eager_execute = false;
        let kinds = IdTable::new(plane.meta.event_metadata.iter().filter_map(|(&id, m)| {
            let kind = match m.name.as_str() {
                EAGER_EXECUTE => Kind::EagerExecute,
                EXECUTOR => Kind::Executor,
                n if ITERATOR_GET_NEXT.contains(&n) => Kind::Iterator,
                n if TF_DATA_FUNCTION_RUNS.contains(&n) => Kind::TfDataRun,
                n if super::tf_op::parse_tf_op_fullname(n).category == super::tf_op::TfOpCategory::TensorFlow => Kind::TfOpRun,
                _ => return None,
            };
            any_eager_execute |= kind == Kind::EagerExecute;
            Some((id, kind))
        }));
        // Without an `is_func` stat every `EagerExecute` runs a compiled function: no op is eager, and
        // no graph is needed to say so.
        let is_func = plane.stat_id(IS_FUNC);
        any_eager_execute &= is_func.is_some();
        let roles = IdTable::new(STAT_NAMES.iter().zip(1u8..).filter_map(|(n, role)| Some((plane.stat_id(n)?, role))));
        Some(EagerGraph {
            kinds,
            roles,
            is_func,
            any_eager_execute,
            any_eager_node: false,
            nodes: Vec::new(),
            stack: Vec::new(),
            executors: FastMap::default(),
            iterators: Vec::new(),
            loop_members: Vec::new(),
            tf_data_steps: Vec::new(),
            producers: Vec::new(),
            dead_producers: Vec::new(),
            context_kinds: ContextKinds::new(plane),
            consumers: Vec::new(),
        })
    }

    /// The stat metadata ids the graph reads of an event (for the scan's selection).
    /// `id` and `iter_num` are not among them: many events (allocators') carry an `id`, and only an
    /// executor's, iterator's or tf.data run's counts, so [`EagerGraph::push`] reads those events'
    /// stats itself.
    pub(super) fn stat_ids(plane: &Plane) -> impl Iterator<Item = i64> + '_ {
        STAT_NAMES[..SCANNED_ROLES].iter().chain([&IS_FUNC]).filter_map(|n| plane.stat_id(n))
    }

    /// Starts the next line.
    pub(super) fn start_line(&mut self) {
        self.stack.clear();
    }

    /// Adds the next event of the current line, spanning `begin..=end` (ps), and says how its
    /// `is_eager` is decided.
    #[inline]
    pub(super) fn push(&mut self, plane: &Plane, e: &RawEvent<'_, '_>, begin: i64, end: i64) -> Result<Mark, DecodeError> {
        let kind = self.kinds.get(e.header.metadata_id);
        if !self.any_eager_execute {
            return Ok(if kind == Kind::TfOpRun { Mark::Known(false) } else { Mark::Recorded });
        }
        // Most events (the ops, and what else runs on the threads) carry none of the graph's stats
        // and are neither `EagerExecute`s, executors nor iterators: not async, no node, they only
        // nest. Kept on the stack here, without the reading below (the scan's hottest path).
        let plain = matches!(kind, Kind::Other | Kind::TfOpRun)
            && !e.stats.iter().any(|s| (1..=CONTEXT_ROLES as u8).contains(&self.roles.get(s.metadata_id)));
        if !plain {
            return self.push_node(plane, e, kind, begin, end);
        }
        self.nest(begin, end);
        let nearest = self.stack.last().and_then(|o| o.nearest);
        self.stack.push(Enclosing { begin, end, nearest });
        Ok(match (kind, nearest) {
            (Kind::TfOpRun, Some((node, _))) => Mark::Node(node),
            (Kind::TfOpRun, None) => Mark::Known(false),
            _ => Mark::Recorded,
        })
    }

    /// Pops the open events that do not enclose `begin..=end`; returns the nesting depth left.
    #[inline]
    fn nest(&mut self, begin: i64, end: i64) -> u32 {
        while self.stack.last().is_some_and(|o| !(o.begin <= begin && end <= o.end)) {
            self.stack.pop();
        }
        self.stack.len() as u32
    }

    /// [`Self::push`] for an event that may be a node (or is async).
    #[inline(never)]
    fn push_node(&mut self, plane: &Plane, e: &RawEvent<'_, '_>, kind: Kind, begin: i64, end: i64) -> Result<Mark, DecodeError> {
        let mut producer = (None, None);
        let mut consumer = (None, None);
        let (mut is_async, mut pid, mut step_id, mut iter_num) = (false, None, None, None);
        // The roles still to read (a bit per role): the first stat of each; `id` and `iter_num` only
        // of the executors and iterators that are keyed by them.
        let keyed = matches!(kind, Kind::Executor | Kind::Iterator | Kind::TfDataRun);
        let own;
        let stats = if keyed {
            own = e.read_stats(|id| self.roles.get(id) != 0)?.0;
            &own[..]
        } else {
            e.stats
        };
        let mut unread: u8 = if keyed { u8::MAX } else { (1 << SCANNED_ROLES) - 1 };
        for stat in stats {
            let role = self.roles.get(stat.metadata_id);
            if role == 0 || unread & (1 << (role - 1)) == 0 {
                continue;
            }
            unread &= !(1 << (role - 1));
            let int = match stat.number() {
                Some(v) => v,
                None => match plane.raw_stat_value(stat)? {
                    Some(v) => v,
                    None => continue,
                },
            };
            let int = match int {
                StatValue::Int(i) => Some(i),
                StatValue::Uint(u) => Some(u as i64),
                _ => None,
            };
            match role {
                1 => producer.0 = int,
                2 => producer.1 = int.map(|i| i as u64),
                3 => consumer.0 = int,
                4 => consumer.1 = int.map(|i| i as u64),
                5 => is_async = int.is_some_and(|i| i != 0),
                6 => pid = int,
                7 => step_id = int,
                _ => iter_num = int,
            }
        }
        let depth = if is_async { None } else { Some(self.nest(begin, end)) };
        let enclosing = depth.and_then(|d| self.stack.last().and_then(|o| o.nearest).map(|(node, nd)| (node, d - nd)));
        let producer = producer.0.zip(producer.1).map(|(t, id)| (self.context_kinds.rank(t, pid).0, id));
        let consumer = consumer.0.zip(consumer.1).map(|(t, id)| (self.context_kinds.rank(t, pid).0, id));
        let loop_key = step_id.zip(iter_num);
        if let (Kind::TfDataRun, Some(step)) = (kind, step_id) {
            self.tf_data_steps.push(step);
        }
        let is_node = kind == Kind::EagerExecute
            || producer.is_some()
            || consumer.is_some()
            || (matches!(kind, Kind::Executor | Kind::Iterator) && loop_key.is_some());
        // An event whose only parent is its nesting one, under no node, is under no `EagerExecute`
        // (its answer is none, as that of everything it is the only way up for): no node. An
        // executor with a loop key may have a loop iteration's first executor as a parent (known
        // only after the last line): it stays a node.
        let keyed_executor = kind == Kind::Executor && loop_key.is_some();
        let dead = kind != Kind::EagerExecute && consumer.is_none() && kind != Kind::Iterator && !keyed_executor && enclosing.is_none();
        if is_node && dead {
            if let Some(context) = producer {
                self.dead_producers.push(context);
            }
        }
        let mut nearest = enclosing;
        if is_node && !dead {
            let node = u32::try_from(self.nodes.len()).map_err(|_| DecodeError::Corrupt {
                format: crate::decode::Format::XSpace,
                detail: "too many events on the host plane to mark eager ops".into(),
            })?;
            let eager_execute = match kind {
                Kind::EagerExecute => Some(first_stat(plane, e.stats, self.is_func)?.is_some_and(|v| int_value(&v) == 0)),
                _ => None,
            };
            self.any_eager_node |= eager_execute == Some(true);
            self.nodes.push(Node { enclosing, eager_execute });
            if let Some(context) = producer {
                self.producers.push((context, node));
            }
            if let Some(context) = consumer {
                self.consumers.push((context, node));
            }
            match (kind, loop_key) {
                (Kind::Executor, Some(key)) => {
                    self.executors.insert(key, node);
                    self.loop_members.push((key.0, key.1, (node, begin)));
                }
                (Kind::Iterator, Some(key)) => self.iterators.push((node, key)),
                _ => {}
            }
            nearest = Some((node, 0));
        }
        if let Some(d) = depth {
            self.stack.push(Enclosing { begin, end, nearest: nearest.map(|(node, steps)| (node, d - steps)) });
        }
        Ok(match (kind, nearest) {
            (Kind::TfOpRun, Some((node, _))) => Mark::Node(node),
            (Kind::TfOpRun, None) => Mark::Known(false),
            _ => Mark::Recorded,
        })
    }

    /// Whether each node's nearest `EagerExecute` runs an op eagerly (false under none).
    ///
    /// Only the nodes below an `EagerExecute` that runs an op eagerly (reached down the graph from
    /// one) can be eager; only they and the nodes above them (all their ways up) are searched, so a
    /// trace whose eager ops stay near their `EagerExecute` pays for a handful of nodes, not for the
    /// thousands of executor and thread-pool events that run its functions.
    pub(super) fn finish(self) -> Vec<bool> {
        let n = self.nodes.len();
        let mut eager = vec![false; n];
        if !self.any_eager_node {
            return eager;
        }
        let mut graph = Graph::new(&self);
        // Down from the eager `EagerExecute`s: the nodes that may be eager. In waves: the contexts the
        // wave's producers open are looked up together, in one pass over the context ends.
        let mut below = vec![false; n];
        let mut stack: Vec<u32> = Vec::new();
        for (i, node) in self.nodes.iter().enumerate() {
            if node.eager_execute == Some(true) {
                below[i] = true;
                stack.push(i as u32);
            }
        }
        let mut reached = stack.clone();
        while !stack.is_empty() {
            graph.resolve(stack.iter().filter_map(|&v| context_of(&self.producers, v)));
            let wave = std::mem::take(&mut stack);
            for v in wave {
                for c in graph.children_of(v) {
                    if !below[c as usize] {
                        below[c as usize] = true;
                        stack.push(c);
                        reached.push(c);
                    }
                }
            }
        }
        // Up from those: every node their searches can meet.
        let mut searched = below.clone();
        let mut order = reached.clone();
        stack.extend_from_slice(&reached);
        while !stack.is_empty() {
            graph.resolve(stack.iter().filter_map(|&v| context_of(&self.consumers, v)));
            let wave = std::mem::take(&mut stack);
            for v in wave {
                for (p, _) in graph.parents_of(v) {
                    if !searched[p as usize] {
                        searched[p as usize] = true;
                        stack.push(p);
                        order.push(p);
                    }
                }
            }
        }
        for (node, answer) in graph.answers(&order) {
            if below[node as usize] {
                eager[node as usize] = answer;
            }
        }
        eager
    }
}

/// The graph's edges besides nesting: a consumer's producers and a producer's consumers by context
/// (none for a context XProf skips, with [`MAX_CONTEXT_FAN`] or more of both, where the producers
/// under no node count too), an iterator's executor and an executor's iterators.
struct Graph<'a> {
    g: &'a EagerGraph,
    /// Each node's nested nodes: `nested[nested_start[n]..nested_start[n + 1]]`.
    nested_start: Vec<u32>,
    nested: Vec<u32>,
    /// The contexts looked up so far ([`Graph::resolve`]): their producers and consumers, in plane
    /// order, or none for a context XProf skips.
    contexts: FastMap<Context, (Vec<u32>, Vec<u32>)>,
    /// (executor, iterator) pairs, by executor; (iterator, executor), by iterator.
    executor_iterators: Vec<(u32, u32)>,
    iterator_executor: Vec<(u32, u32)>,
    /// A loop iteration's (first executor, other executor) pairs, by first; (other, first), by other.
    loop_children: Vec<(u32, u32)>,
    loop_parent: Vec<(u32, u32)>,
}

/// The context of `node` among `ends` (in node order), if it is one of them.
fn context_of(ends: &[(Context, u32)], node: u32) -> Option<Context> {
    ends.binary_search_by_key(&node, |&(_, n)| n).ok().map(|i| ends[i].0)
}

impl<'a> Graph<'a> {
    fn new(g: &'a EagerGraph) -> Self {
        let n = g.nodes.len();
        let mut nested_start = vec![0u32; n + 1];
        for node in &g.nodes {
            if let Some((p, _)) = node.enclosing {
                nested_start[p as usize + 1] += 1;
            }
        }
        for i in 0..n {
            nested_start[i + 1] += nested_start[i];
        }
        let mut fill = nested_start.clone();
        let mut nested = vec![0u32; nested_start[n] as usize];
        for (c, node) in g.nodes.iter().enumerate() {
            if let Some((p, _)) = node.enclosing {
                nested[fill[p as usize] as usize] = c as u32;
                fill[p as usize] += 1;
            }
        }
        let iterator_executor: Vec<(u32, u32)> = g.iterators.iter().filter_map(|&(it, key)| Some((it, *g.executors.get(&key)?))).collect();
        let mut executor_iterators: Vec<(u32, u32)> = iterator_executor.iter().map(|&(it, ex)| (ex, it)).collect();
        executor_iterators.sort_unstable();
        let tf_data: std::collections::HashSet<i64> = g.tf_data_steps.iter().copied().collect();
        let executors = g.loop_members.iter().copied().filter(|(step, _, _)| !tf_data.contains(step));
        let mut loop_children: Vec<(u32, u32)> = Vec::new();
        for (first, events) in tf_loop_iterations(executors) {
            loop_children.extend(events.iter().filter(|&&(e, _)| e != first).map(|&(e, _)| (first, e)));
        }
        let mut loop_parent: Vec<(u32, u32)> = loop_children.iter().map(|&(first, e)| (e, first)).collect();
        loop_children.sort_unstable();
        loop_parent.sort_unstable();
        Graph { g, nested_start, nested, contexts: FastMap::default(), executor_iterators, iterator_executor, loop_children, loop_parent }
    }

    /// Looks up `contexts` not looked up yet: one pass over the producers and consumers (and, for a
    /// context with [`MAX_CONTEXT_FAN`] or more consumers, the producers under no node).
    fn resolve(&mut self, contexts: impl Iterator<Item = Context>) {
        let mut new: FastMap<Context, (Vec<u32>, Vec<u32>)> = FastMap::default();
        for c in contexts {
            if !self.contexts.contains_key(&c) {
                new.entry(c).or_default();
            }
        }
        if new.is_empty() {
            return;
        }
        for &(c, node) in &self.g.producers {
            if let Some(e) = new.get_mut(&c) {
                e.0.push(node);
            }
        }
        for &(c, node) in &self.g.consumers {
            if let Some(e) = new.get_mut(&c) {
                e.1.push(node);
            }
        }
        let mut dead: FastMap<Context, usize> =
            new.iter().filter(|(_, (p, c))| c.len() >= MAX_CONTEXT_FAN && p.len() < MAX_CONTEXT_FAN).map(|(&c, _)| (c, 0)).collect();
        if !dead.is_empty() {
            for c in &self.g.dead_producers {
                if let Some(k) = dead.get_mut(c) {
                    *k += 1;
                }
            }
        }
        for (c, (producers, consumers)) in new {
            let fan = producers.len() + dead.get(&c).copied().unwrap_or(0);
            let skipped = consumers.len() >= MAX_CONTEXT_FAN && fan >= MAX_CONTEXT_FAN;
            self.contexts.insert(c, if skipped { Default::default() } else { (producers, consumers) });
        }
    }

    /// The context `c`'s (producers, consumers) as XProf connects them; looked up before.
    fn ends(&self, c: Context) -> (&[u32], &[u32]) {
        let (p, c) = &self.contexts[&c];
        (p, c)
    }

    /// The nodes `v` is a parent of.
    fn children_of(&self, v: u32) -> impl Iterator<Item = u32> + '_ {
        let nested = &self.nested[self.nested_start[v as usize] as usize..self.nested_start[v as usize + 1] as usize];
        let from = self.executor_iterators.partition_point(|&(ex, _)| ex < v);
        let iterators = self.executor_iterators[from..].iter().take_while(move |&&(ex, _)| ex == v).map(|&(_, it)| it);
        let consumers = context_of(&self.g.producers, v).map_or(&[][..], |c| self.ends(c).1);
        let from = self.loop_children.partition_point(|&(first, _)| first < v);
        let looped = self.loop_children[from..].iter().take_while(move |&&(first, _)| first == v).map(|&(_, e)| e);
        nested.iter().copied().chain(iterators).chain(consumers.iter().copied()).chain(looped)
    }

    /// The parents of `v` in XProf's order (its enclosing node, an iterator's executor, a consumer's
    /// producers in plane order, a loop iteration's first executor), with the steps to each.
    fn parents_of(&self, v: u32) -> impl Iterator<Item = (u32, u32)> + '_ {
        let executor = self.iterator_executor.binary_search_by_key(&v, |&(it, _)| it).ok().map(|i| self.iterator_executor[i].1);
        let producers = context_of(&self.g.consumers, v).map_or(&[][..], |c| self.ends(c).0);
        let first = self.loop_parent.binary_search_by_key(&v, |&(e, _)| e).ok().map(|i| self.loop_parent[i].1);
        self.g.nodes[v as usize]
            .enclosing
            .into_iter()
            .chain(executor.map(|ex| (ex, 1)))
            .chain(producers.iter().map(|&p| (p, 1)))
            .chain(first.map(|f| (f, 1)))
    }

    /// The answer of each node of `nodes` (every node any of them can reach up the graph), as XProf's
    /// breadth first search up the graph finds it: it meets the nodes in the order of their shortest
    /// paths compared parent by parent (a node's parents in their order), so among the nearest
    /// `EagerExecute`s it returns the one whose path takes the earliest parent at the first step where
    /// the paths part. Each node's distance to its nearest `EagerExecute` comes from one search down
    /// from all of them at once (exact on any graph, cycles included); then, nearest first, each node
    /// takes the answer of its first parent on a shortest path.
    fn answers(&self, nodes: &[u32]) -> Vec<(u32, bool)> {
        use std::cmp::Reverse;
        let local: FastMap<u32, u32> = nodes.iter().enumerate().map(|(i, &v)| (v, i as u32)).collect();
        let m = nodes.len();
        // Each searched node's parents (local numbers) with their steps, and the reverse.
        let parents: Vec<Vec<(u32, u32)>> =
            nodes.iter().map(|&v| self.parents_of(v).map(|(p, steps)| (local[&p], steps)).collect()).collect();
        let mut children: Vec<Vec<(u32, u32)>> = vec![Vec::new(); m];
        for (c, ps) in parents.iter().enumerate() {
            for &(p, steps) in ps {
                children[p as usize].push((c as u32, steps));
            }
        }
        const FAR: u32 = u32::MAX;
        let mut distance = vec![FAR; m];
        let mut heap = std::collections::BinaryHeap::new();
        for (i, &v) in nodes.iter().enumerate() {
            if self.g.nodes[v as usize].eager_execute.is_some() {
                distance[i] = 0;
                heap.push(Reverse((0u32, i as u32)));
            }
        }
        // Local nodes in the order their distance became final: nearest first.
        let mut settled = Vec::with_capacity(m);
        while let Some(Reverse((d, i))) = heap.pop() {
            if d != distance[i as usize] {
                continue;
            }
            settled.push(i);
            for &(c, steps) in &children[i as usize] {
                let via = d.saturating_add(steps);
                if via < distance[c as usize] {
                    distance[c as usize] = via;
                    heap.push(Reverse((via, c)));
                }
            }
        }
        let mut eager = vec![false; m];
        for i in settled {
            let i = i as usize;
            eager[i] = match self.g.nodes[nodes[i] as usize].eager_execute {
                Some(e) => e,
                None => parents[i]
                    .iter()
                    .find(|&&(p, steps)| distance[p as usize] != FAR && distance[p as usize].saturating_add(steps) == distance[i])
                    .is_some_and(|&(p, _)| eager[p as usize]),
            };
        }
        nodes.iter().zip(eager).map(|(&v, e)| (v, e)).collect()
    }
}
