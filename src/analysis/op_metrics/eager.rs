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
//! (`_pt`, `_p`) in plane order, unless the context has 64 or more of both. So an op run on an
//! executor thread is eager when the executor event consumes the context of an `EagerExecute` that
//! runs it eagerly on another thread.
//!
//! Cost: the graph is read in the host op db's own scan of the plane ([`EagerGraph::push`], one call
//! per event the scan decodes anyway), never in a pass of its own; a plane without `EagerExecute`
//! events builds none (no op of it is eager). Only the events with a parent besides their nesting one,
//! the context ends, executors and `EagerExecute` events become graph nodes: any other event's nearest
//! `EagerExecute` is found through its innermost enclosing node, as many steps away as the nesting
//! levels between them. A producer or executor under no node that consumes nothing is under no
//! `EagerExecute` for sure and is no node either (a producer's context is kept for XProf's fan limit). A node's answer (the nearest `EagerExecute` and its distance; among equally
//! near, the one reached through the earliest parent, as breadth first search finds it) is computed
//! once, after the last line ([`EagerGraph::finish`]); until then an op carries its node
//! ([`Mark::Node`]).

use super::host::{first_stat, int_value};
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
const STAT_NAMES: [&str; 7] = ["_pt", "_p", "_ct", "_c", "_a", "id", "iter_num"];
const IS_FUNC: &str = "is_func";

/// A context's (type, id).
type Context = (i64, u64);

/// What the marking reads of each event metadata id.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum Kind {
    #[default]
    Other,
    TfOpRun,
    EagerExecute,
    Executor,
    Iterator,
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
    /// The plane has `EagerExecute` events: without, no op is eager and no graph is built.
    any_eager_execute: bool,
    nodes: Vec<Node>,
    /// The current line's open events.
    stack: Vec<Enclosing>,
    /// The last executor of each (`id`, `iter_num`); `None` for one under no `EagerExecute` for sure.
    executors: FastMap<(i64, i64), Option<u32>>,
    iterators: Vec<(u32, (i64, i64))>,
    /// Producers that may be under an `EagerExecute` ((type, id), node), in plane order.
    producers: Vec<(Context, u32)>,
    /// The contexts of producers under none for sure (not nodes: only XProf's fan limit counts them).
    dead_producers: Vec<Context>,
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
                n if super::tf_op::parse_tf_op_fullname(n).category == super::tf_op::TfOpCategory::TensorFlow => Kind::TfOpRun,
                _ => return None,
            };
            any_eager_execute |= kind == Kind::EagerExecute;
            Some((id, kind))
        }));
        let roles = IdTable::new(STAT_NAMES.iter().zip(1u8..).filter_map(|(n, role)| Some((plane.stat_id(n)?, role))));
        Some(EagerGraph {
            kinds,
            roles,
            is_func: plane.stat_id(IS_FUNC),
            any_eager_execute,
            nodes: Vec::new(),
            stack: Vec::new(),
            executors: FastMap::default(),
            iterators: Vec::new(),
            producers: Vec::new(),
            dead_producers: Vec::new(),
            consumers: Vec::new(),
        })
    }

    /// The stat metadata ids the graph reads of an event (for the scan's selection).
    pub(super) fn stat_ids(plane: &Plane) -> impl Iterator<Item = i64> + '_ {
        STAT_NAMES.iter().chain([&IS_FUNC]).filter_map(|n| plane.stat_id(n))
    }

    /// Starts the next line.
    pub(super) fn start_line(&mut self) {
        self.stack.clear();
    }

    /// Adds the next event of the current line, spanning `begin..=end` (ps), and says how its
    /// `is_eager` is decided.
    pub(super) fn push(&mut self, plane: &Plane, e: &RawEvent<'_, '_>, begin: i64, end: i64) -> Result<Mark, DecodeError> {
        let kind = self.kinds.get(e.header.metadata_id);
        if !self.any_eager_execute {
            return Ok(if kind == Kind::TfOpRun { Mark::Known(false) } else { Mark::Recorded });
        }
        let mut producer = (None, None);
        let mut consumer = (None, None);
        let (mut is_async, mut step_id, mut iter_num) = (false, None, None);
        let mut seen = 0u8;
        for stat in e.stats {
            let role = self.roles.get(stat.metadata_id);
            if role == 0 || seen & (1 << (role - 1)) != 0 {
                continue;
            }
            seen |= 1 << (role - 1);
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
                6 => step_id = int,
                _ => iter_num = int,
            }
        }
        let depth = if is_async {
            None
        } else {
            while self.stack.last().is_some_and(|o| !(o.begin <= begin && end <= o.end)) {
                self.stack.pop();
            }
            Some(self.stack.len() as u32)
        };
        let enclosing = depth.and_then(|d| self.stack.last().and_then(|o| o.nearest).map(|(node, nd)| (node, d - nd)));
        let producer = producer.0.zip(producer.1);
        let consumer = consumer.0.zip(consumer.1);
        let loop_key = step_id.zip(iter_num);
        let is_node = kind == Kind::EagerExecute
            || producer.is_some()
            || consumer.is_some()
            || (matches!(kind, Kind::Executor | Kind::Iterator) && loop_key.is_some());
        // An event whose only parent is its nesting one, under no node, is under no `EagerExecute`
        // (its answer is none, as that of everything it is the only way up for): no node.
        let dead = kind != Kind::EagerExecute && consumer.is_none() && kind != Kind::Iterator && enclosing.is_none();
        if is_node && dead {
            if let Some(context) = producer {
                self.dead_producers.push(context);
            }
            if let (Kind::Executor, Some(key)) = (kind, loop_key) {
                self.executors.insert(key, None);
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
            self.nodes.push(Node { enclosing, eager_execute });
            if let Some(context) = producer {
                self.producers.push((context, node));
            }
            if let Some(context) = consumer {
                self.consumers.push((context, node));
            }
            match (kind, loop_key) {
                (Kind::Executor, Some(key)) => {
                    self.executors.insert(key, Some(node));
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
    pub(super) fn finish(self) -> Vec<bool> {
        let mut extra: Vec<(u32, u32)> = self.iterators.iter().filter_map(|&(it, key)| Some((it, (*self.executors.get(&key)?)?))).collect();
        // Each context with a live producer: its producers (in plane order), then its consumers. A
        // consumer is in one context at most: the order of contexts changes no node's parents.
        let mut contexts: FastMap<Context, (Vec<u32>, Vec<u32>)> = FastMap::default();
        for &(context, node) in &self.producers {
            contexts.entry(context).or_default().0.push(node);
        }
        if !contexts.is_empty() {
            for &(context, node) in &self.consumers {
                if let Some((_, consumers)) = contexts.get_mut(&context) {
                    consumers.push(node);
                }
            }
        }
        // XProf's fan limit counts every producer: those under no `EagerExecute`, of the contexts it
        // may skip, are counted in one pass.
        let mut dead_fan: FastMap<Context, usize> =
            contexts.iter().filter(|(_, (_, consumers))| consumers.len() >= MAX_CONTEXT_FAN).map(|(&c, _)| (c, 0)).collect();
        if !dead_fan.is_empty() {
            for context in &self.dead_producers {
                if let Some(n) = dead_fan.get_mut(context) {
                    *n += 1;
                }
            }
        }
        for (context, (producers, consumers)) in &contexts {
            let fan = producers.len() + dead_fan.get(context).copied().unwrap_or(0);
            if consumers.len() >= MAX_CONTEXT_FAN && fan >= MAX_CONTEXT_FAN {
                continue;
            }
            for &c in consumers {
                extra.extend(producers.iter().map(|&p| (c, p)));
            }
        }
        // Stable: each node's executor first, then its producers in plane order.
        extra.sort_by_key(|&(child, _)| child);
        let mut start = vec![0usize; self.nodes.len() + 1];
        for &(child, _) in &extra {
            start[child as usize + 1] += 1;
        }
        for i in 0..self.nodes.len() {
            start[i + 1] += start[i];
        }
        let graph = Graph { nodes: &self.nodes, start: &start, parents: &extra };
        graph.answers().into_iter().map(|a| a.is_some_and(|(_, eager)| eager)).collect()
    }
}

struct Graph<'a> {
    nodes: &'a [Node],
    /// Each node's parents besides its enclosing one: `parents[start[n]..start[n + 1]]`, one step each.
    start: &'a [usize],
    parents: &'a [(u32, u32)],
}

/// A node's nearest `EagerExecute`: steps to it and whether it runs an op eagerly.
type Answer = Option<(u32, bool)>;

impl Graph<'_> {
    /// The parents of `n` in XProf's order, with the steps to each.
    fn parents_of(&self, n: usize) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.nodes[n].enclosing.into_iter().chain(self.parents[self.start[n]..self.start[n + 1]].iter().map(|&(_, p)| (p, 1)))
    }

    /// Every node's answer, each computed once after its parents' (a parent still being computed, on a
    /// cycle, is passed over: a nearest path never goes round one).
    fn answers(&self) -> Vec<Answer> {
        #[derive(Clone, Copy, PartialEq)]
        enum State {
            New,
            Open,
            Done,
        }
        let mut state = vec![State::New; self.nodes.len()];
        let mut answer: Vec<Answer> = vec![None; self.nodes.len()];
        let mut stack: Vec<usize> = Vec::new();
        for root in 0..self.nodes.len() {
            if state[root] != State::New {
                continue;
            }
            stack.push(root);
            while let Some(&n) = stack.last() {
                if state[n] == State::New {
                    state[n] = State::Open;
                    if self.nodes[n].eager_execute.is_none() {
                        let before = stack.len();
                        stack.extend(self.parents_of(n).map(|(p, _)| p as usize).filter(|&p| state[p] == State::New));
                        if stack.len() > before {
                            continue;
                        }
                    }
                }
                stack.pop();
                if state[n] == State::Done {
                    continue;
                }
                answer[n] = match self.nodes[n].eager_execute {
                    Some(eager) => Some((0, eager)),
                    None => self
                        .parents_of(n)
                        .filter(|&(p, _)| state[p as usize] == State::Done)
                        .filter_map(|(p, steps)| answer[p as usize].map(|(d, eager)| (d + steps, eager)))
                        .fold(None, |best: Answer, a| if best.is_some_and(|b| b.0 <= a.0) { best } else { Some(a) }),
                };
                state[n] = State::Done;
            }
        }
        answer
    }
}
