//! Which TensorFlow ops of the host plane XProf marks eager (`EventForest::MarkEagerlyExecutedCpuTfOps`
//! in tsl's `group_events.cc`, run by its step grouping): a `TfOpRun` event (a name that parses as a
//! TensorFlow op) is eager when the `EagerExecute` event (XProf's `EagerKernelExecute` type) nearest to
//! it, searched breadth first up the event graph from the event itself, runs an op eagerly: its
//! `is_func` stat is 0 (absent means a compiled function). Its `is_eager` stat is overwritten either
//! way, so an op under no `EagerExecute` is not eager.
//!
//! An event's parents, in the order XProf adds them (the order breadth first search takes them in):
//! the innermost earlier event on its line whose span includes it (async events, `_a`, neither nest
//! nor are nested); for an `IteratorGetNext*` event, the `ExecutorState::Process` with the same `id`
//! and `iter_num` (the last one); for a consumer of a context (`_ct`, `_c`), every producer of it
//! (`_pt`, `_p`) in plane order, unless the context has 64 or more of both. So an op run on an
//! executor thread is eager when the executor event consumes the context of an `EagerExecute` that
//! runs it eagerly on another thread.
//!
//! Only the events with a parent besides their nesting one, the context producers, executors and
//! `EagerExecute` events become graph nodes: any other event's nearest `EagerExecute` is found through
//! its innermost enclosing node, as many steps away as the nesting levels between them. A node's answer
//! (the nearest `EagerExecute` and its distance; among equally near, the one reached through the
//! earliest parent, as breadth first search finds it) is computed once.

use crate::decode::xplane::{IdTable, Plane, RawStat, StatValue, XSpace};
use crate::decode::DecodeError;
use crate::fast_hash::FastMap;

/// XProf skips a context with at least this many producers and consumers.
const MAX_CONTEXT_FAN: usize = 64;
const EAGER_EXECUTE: &str = "EagerExecute";
const EXECUTOR: &str = "ExecutorState::Process";
const ITERATOR_GET_NEXT: [&str; 2] = ["IteratorGetNextOp::DoCompute", "IteratorGetNextAsOptionalOp::DoCompute"];

/// The eager `TfOpRun` events of a host plane, by line (index in the plane) and event ordinal.
#[derive(Debug, Clone)]
pub struct EagerOps {
    /// The event metadata ids of `TfOpRun` events.
    tf_op_runs: IdTable<bool>,
    by_line: Vec<Vec<u64>>,
}

impl EagerOps {
    /// Whether XProf marks event `event` (ordinal) of line `line`, of metadata id `metadata_id`, eager;
    /// `None` for an event that is no `TfOpRun` (XProf leaves its `is_eager` stat as recorded).
    pub fn marked(&self, line: usize, event: usize, metadata_id: i64) -> Option<bool> {
        self.tf_op_runs
            .get(metadata_id)
            .then(|| self.by_line.get(line).and_then(|bits| bits.get(event / 64)).is_some_and(|w| w >> (event % 64) & 1 == 1))
    }
}

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

/// The stat metadata ids read, in [`STAT_NAMES`] order.
const STAT_NAMES: [&str; 8] = ["_pt", "_p", "_ct", "_c", "_a", "id", "iter_num", "is_func"];

/// An event's stats among [`STAT_NAMES`] (the first of each).
#[derive(Debug, Default)]
struct EventStats {
    producer: (Option<i64>, Option<u64>),
    consumer: (Option<i64>, Option<u64>),
    is_async: bool,
    step_id: Option<i64>,
    iter_num: Option<i64>,
    is_func: Option<i64>,
}

fn read_stats(plane: &Plane, ids: &IdTable<u8>, raw: &[RawStat<'_>]) -> Result<EventStats, DecodeError> {
    let mut s = EventStats::default();
    let mut seen = 0u8;
    for stat in raw {
        let role = ids.get(stat.metadata_id);
        if role == 0 || seen & (1 << (role - 1)) != 0 {
            continue;
        }
        seen |= 1 << (role - 1);
        let Some(v) = plane.raw_stat_value(stat)? else { continue };
        let int = || match v {
            StatValue::Int(i) => Some(i),
            StatValue::Uint(u) => Some(u as i64),
            _ => None,
        };
        match role {
            1 => s.producer.0 = int(),
            2 => s.producer.1 = int().map(|i| i as u64),
            3 => s.consumer.0 = int(),
            4 => s.consumer.1 = int().map(|i| i as u64),
            5 => s.is_async = int().is_some_and(|i| i != 0),
            6 => s.step_id = int(),
            7 => s.iter_num = int(),
            _ => s.is_func = int(),
        }
    }
    Ok(s)
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

/// The eager ops of `plane` (the host plane of `space`), as XProf's grouping marks them.
pub fn eager_ops(space: &XSpace, plane: &Plane) -> Result<EagerOps, DecodeError> {
    let kinds = IdTable::new(plane.meta.event_metadata.iter().filter_map(|(&id, m)| {
        let kind = match m.name.as_str() {
            EAGER_EXECUTE => Kind::EagerExecute,
            EXECUTOR => Kind::Executor,
            n if ITERATOR_GET_NEXT.contains(&n) => Kind::Iterator,
            n if super::tf_op::parse_tf_op_fullname(n).category == super::tf_op::TfOpCategory::TensorFlow => Kind::TfOpRun,
            _ => return None,
        };
        Some((id, kind))
    }));
    let tf_op_runs = IdTable::new(plane.meta.event_metadata.keys().filter(|&&id| kinds.get(id) == Kind::TfOpRun).map(|&id| (id, true)));
    if !plane.meta.event_metadata.keys().any(|&id| kinds.get(id) == Kind::EagerExecute) {
        // Without an `EagerExecute` no op is eager: the graph need not be read.
        return Ok(EagerOps { tf_op_runs, by_line: Vec::new() });
    }
    let ids = IdTable::new(STAT_NAMES.iter().zip(1u8..).filter_map(|(n, role)| Some((plane.stat_id(n)?, role))));
    let selection = IdTable::new(STAT_NAMES.iter().filter_map(|n| Some((plane.stat_id(n)?, true))));

    let mut nodes: Vec<Node> = Vec::new();
    // (child, parent) edges besides nesting, executors' first, then contexts'.
    let mut executors: FastMap<(i64, i64), u32> = FastMap::default();
    let mut iterators: Vec<(u32, (i64, i64))> = Vec::new();
    let mut contexts: FastMap<(i64, u64), (Vec<u32>, Vec<u32>)> = FastMap::default();
    // Per line: each TfOpRun event's ordinal, the node its answer comes from and the steps to it.
    let mut ops: Vec<Vec<(u32, u32, u32)>> = Vec::with_capacity(plane.lines.len());
    for line in &plane.lines {
        let line_start_ps = line.header.timestamp_ns.wrapping_mul(1000);
        let mut stack: Vec<Enclosing> = Vec::new();
        let mut line_ops = Vec::new();
        space.for_each_raw_event(
            line,
            &selection,
            |_| true,
            |ordinal, e| {
                let kind = kinds.get(e.header.metadata_id);
                let s = read_stats(plane, &ids, e.stats)?;
                let begin = line_start_ps.wrapping_add(e.header.offset_ps);
                let end = begin.wrapping_add(e.header.duration_ps);
                let depth = if s.is_async {
                    None
                } else {
                    while stack.last().is_some_and(|o| !(o.begin <= begin && end <= o.end)) {
                        stack.pop();
                    }
                    Some(stack.len() as u32)
                };
                let enclosing = depth.and_then(|d| stack.last().and_then(|o| o.nearest).map(|(node, nd)| (node, d - nd)));
                let producer = match s.producer {
                    (Some(t), Some(id)) => Some((t, id)),
                    _ => None,
                };
                let consumer = match s.consumer {
                    (Some(t), Some(id)) => Some((t, id)),
                    _ => None,
                };
                let loop_key = s.step_id.zip(s.iter_num);
                let is_node = kind == Kind::EagerExecute
                    || producer.is_some()
                    || consumer.is_some()
                    || (matches!(kind, Kind::Executor | Kind::Iterator) && loop_key.is_some());
                let mut nearest = enclosing;
                if is_node {
                    let node = nodes.len() as u32;
                    let eager_execute = (kind == Kind::EagerExecute).then_some(s.is_func == Some(0));
                    nodes.push(Node { enclosing, eager_execute });
                    if let Some(p) = producer {
                        contexts.entry(p).or_default().0.push(node);
                    }
                    if let Some(c) = consumer {
                        contexts.entry(c).or_default().1.push(node);
                    }
                    match (kind, loop_key) {
                        (Kind::Executor, Some(key)) => {
                            executors.insert(key, node);
                        }
                        (Kind::Iterator, Some(key)) => iterators.push((node, key)),
                        _ => {}
                    }
                    nearest = Some((node, 0));
                }
                if kind == Kind::TfOpRun {
                    if let Some((node, steps)) = nearest {
                        line_ops.push((ordinal as u32, node, steps));
                    }
                }
                if let Some(d) = depth {
                    stack.push(Enclosing { begin, end, nearest: nearest.map(|(node, steps)| (node, d - steps)) });
                }
                Ok(())
            },
        )?;
        ops.push(line_ops);
    }

    let mut extra: Vec<(u32, u32)> = iterators.iter().filter_map(|&(it, key)| Some((it, *executors.get(&key)?))).collect();
    // A consumer is in one context at most: the order of contexts changes no node's parents.
    for (producers, consumers) in contexts.values() {
        if producers.len() >= MAX_CONTEXT_FAN && consumers.len() >= MAX_CONTEXT_FAN {
            continue;
        }
        for &c in consumers {
            extra.extend(producers.iter().map(|&p| (c, p)));
        }
    }
    // Stable: each node's executor first, then its producers in plane order.
    extra.sort_by_key(|&(child, _)| child);
    let mut start = vec![0usize; nodes.len() + 1];
    for &(child, _) in &extra {
        start[child as usize + 1] += 1;
    }
    for i in 0..nodes.len() {
        start[i + 1] += start[i];
    }
    let graph = Graph { nodes: &nodes, start: &start, parents: &extra };
    let answers = graph.answers();

    let by_line = ops
        .into_iter()
        .zip(&plane.lines)
        .map(|(line_ops, line)| {
            let mut bits = vec![0u64; line.event_count.div_ceil(64)];
            for (ordinal, node, _) in line_ops {
                if answers[node as usize].is_some_and(|(_, eager)| eager) {
                    let i = ordinal as usize;
                    if let Some(w) = bits.get_mut(i / 64) {
                        *w |= 1 << (i % 64);
                    }
                }
            }
            bits
        })
        .collect();
    Ok(EagerOps { tf_op_runs, by_line })
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
