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
//! Differences: only the host plane is grouped (XProf also adds device planes, whose events connect
//! through correlation ids but carry no roots of their own in the traces we know); roots with equal
//! start times are taken in file order (XProf's sort is unstable there).

use crate::decode::xplane::{Plane, StatValue, XSpace};
use crate::decode::DecodeError;
use crate::proto::xplane as pb;
use std::collections::{HashMap, HashSet, VecDeque};

/// Group id per event of the host plane, indexed by line and event position.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StepGroups {
    per_line: Vec<Vec<Option<i64>>>,
}

impl StepGroups {
    pub fn group_id(&self, line_index: usize, event_index: usize) -> Option<i64> {
        self.per_line.get(line_index).and_then(|l| l.get(event_index)).copied().flatten()
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
/// XProf skips a context with at least this many producers and consumers (a runaway fan-out).
const MAX_CONTEXT_FAN: usize = 64;
/// Ancestor visits allowed over all roots, per event plus a constant: real traces nest roots a few
/// levels deep and use a tiny fraction of it (see `has_ancestor_root_of_same_level`).
const ANCESTOR_VISITS_PER_NODE: usize = 64;
const ANCESTOR_VISITS_SLACK: usize = 1 << 20;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Other,
    Executor,
    IteratorGetNext,
    TfDataFunctionRun,
}

struct Node {
    begin_ps: i64,
    kind: Kind,
    root_level: i64,
    step_id: Option<i64>,
    iter_num: Option<i64>,
    children: Vec<usize>,
    parents: Vec<usize>,
    group: Option<i64>,
}

/// The grouping stats of one event: metadata stats first, then the event's own (later wins, as
/// XProf's `ForEachStat` visits them).
#[derive(Default)]
struct GroupingStats {
    producer: (Option<i64>, Option<u64>),
    consumer: (Option<i64>, Option<u64>),
    root_level: Option<i64>,
    is_async: bool,
    step_id: Option<i64>,
    iter_num: Option<i64>,
}

struct StatIds {
    producer_type: Option<i64>,
    producer_id: Option<i64>,
    consumer_type: Option<i64>,
    consumer_id: Option<i64>,
    is_root: Option<i64>,
    is_async: Option<i64>,
    step_id: Option<i64>,
    iter_num: Option<i64>,
}

fn int(v: &StatValue) -> Option<i64> {
    match v {
        StatValue::Int(i) => Some(*i),
        StatValue::Uint(u) => Some(*u as i64),
        _ => None,
    }
}

impl GroupingStats {
    fn read(plane: &Plane, ids: &StatIds, meta_stats: &[pb::XStat], event_stats: &[pb::XStat]) -> Self {
        let mut s = GroupingStats::default();
        for stat in meta_stats.iter().chain(event_stats) {
            let Some(v) = plane.stat_value(stat) else { continue };
            let id = Some(stat.metadata_id);
            let i = int(&v);
            if id == ids.producer_type {
                s.producer.0 = i;
            } else if id == ids.producer_id {
                s.producer.1 = i.map(|x| x as u64);
            } else if id == ids.consumer_type {
                s.consumer.0 = i;
            } else if id == ids.consumer_id {
                s.consumer.1 = i.map(|x| x as u64);
            } else if id == ids.is_root {
                s.root_level = i;
            } else if id == ids.is_async {
                s.is_async = i.is_some_and(|x| x != 0);
            } else if id == ids.step_id {
                s.step_id = i;
            } else if id == ids.iter_num {
                s.iter_num = i;
            }
        }
        s
    }
}

/// Groups the events of `plane` (the host plane of `space`).
pub fn group(space: &XSpace, plane: &Plane) -> Result<StepGroups, DecodeError> {
    let has_loop_ops =
        space.planes.iter().any(|p| p.meta.event_metadata.values().any(|m| LOOP_OPS.contains(&m.name.as_str())));
    let mut forest = Forest::build(space, plane)?;
    if !has_loop_ops {
        forest.assign_groups();
    }
    let mut per_line = Vec::with_capacity(forest.line_starts.len());
    for (l, &start) in forest.line_starts.iter().enumerate() {
        let end = forest.line_starts.get(l + 1).copied().unwrap_or(forest.nodes.len());
        per_line.push(forest.nodes[start..end].iter().map(|n| n.group).collect());
    }
    Ok(StepGroups { per_line })
}

struct Forest {
    nodes: Vec<Node>,
    /// Index of each line's first node.
    line_starts: Vec<usize>,
}

impl Forest {
    fn build(space: &XSpace, plane: &Plane) -> Result<Self, DecodeError> {
        let ids = StatIds {
            producer_type: plane.stat_id("_pt"),
            producer_id: plane.stat_id("_p"),
            consumer_type: plane.stat_id("_ct"),
            consumer_id: plane.stat_id("_c"),
            is_root: plane.stat_id("_r"),
            is_async: plane.stat_id("_a"),
            step_id: plane.stat_id("id"),
            iter_num: plane.stat_id("iter_num"),
        };
        let mut nodes: Vec<Node> = Vec::new();
        let mut line_starts = Vec::with_capacity(plane.lines.len());
        let mut contexts: HashMap<(i64, u64), (Vec<usize>, Vec<usize>)> = HashMap::new();
        let mut edges: Vec<(usize, usize)> = Vec::new();
        for line in &plane.lines {
            line_starts.push(nodes.len());
            let base_ps = line.header.timestamp_ns.saturating_mul(1000);
            let mut open: Vec<(usize, i64, i64)> = Vec::new(); // (node, begin, end)
            for ev in space.events(line)? {
                let meta = plane.meta.event_metadata.get(&ev.metadata_id);
                let name = meta.map_or("", |m| m.name.as_str());
                let meta_stats = meta.map_or(&[][..], |m| &m.stats[..]);
                let s = GroupingStats::read(plane, &ids, meta_stats, &ev.stats);
                let offset_ps = match ev.data {
                    Some(pb::x_event::Data::OffsetPs(o)) => o,
                    _ => 0,
                };
                let begin_ps = base_ps.saturating_add(offset_ps);
                let end_ps = begin_ps.saturating_add(ev.duration_ps);
                let kind = if name == EXECUTOR {
                    Kind::Executor
                } else if ITERATOR_GET_NEXT.contains(&name) {
                    Kind::IteratorGetNext
                } else if TF_DATA_FUNCTION_RUNS.contains(&name) {
                    Kind::TfDataFunctionRun
                } else {
                    Kind::Other
                };
                let root_level = s.root_level.unwrap_or(if name == LEGACY_ROOT { 1 } else { 0 });
                let me = nodes.len();
                nodes.push(Node {
                    begin_ps,
                    kind,
                    root_level,
                    step_id: s.step_id,
                    iter_num: s.iter_num,
                    children: Vec::new(),
                    parents: Vec::new(),
                    group: None,
                });
                if let (Some(t), Some(id)) = s.producer {
                    contexts.entry((t, id)).or_default().0.push(me);
                }
                if let (Some(t), Some(id)) = s.consumer {
                    contexts.entry((t, id)).or_default().1.push(me);
                }
                if !s.is_async {
                    while let Some(&(parent, b, e)) = open.last() {
                        if b <= begin_ps && end_ps <= e {
                            edges.push((parent, me));
                            break;
                        }
                        open.pop();
                    }
                    open.push((me, begin_ps, end_ps));
                }
            }
        }
        let mut forest = Forest { nodes, line_starts };
        for (p, c) in edges {
            forest.add_child(p, c);
        }
        forest.connect_executors_to_iterators();
        // Contexts in a fixed order, so children lists (and nothing else) do not depend on hashing.
        let mut contexts: Vec<_> = contexts.into_iter().collect();
        contexts.sort_by_key(|(k, _)| *k);
        for (_, (producers, consumers)) in contexts {
            if producers.len() >= MAX_CONTEXT_FAN && consumers.len() >= MAX_CONTEXT_FAN {
                continue;
            }
            for &p in &producers {
                for &c in &consumers {
                    forest.add_child(p, c);
                }
            }
        }
        Ok(forest)
    }

    fn add_child(&mut self, parent: usize, child: usize) {
        self.nodes[parent].children.push(child);
        self.nodes[child].parents.push(parent);
    }

    /// XProf's inter-thread rule: the last executor event with a given (`id`, `iter_num`) adopts the
    /// iterator `GetNext` events with the same pair.
    fn connect_executors_to_iterators(&mut self) {
        let key = |n: &Node| n.step_id.zip(n.iter_num);
        let mut parent_of: HashMap<(i64, i64), usize> = HashMap::new();
        for (i, n) in self.nodes.iter().enumerate() {
            if let (Kind::Executor, Some(k)) = (n.kind, key(n)) {
                parent_of.insert(k, i);
            }
        }
        let links: Vec<(usize, usize)> = (0..self.nodes.len())
            .filter(|&i| self.nodes[i].kind == Kind::IteratorGetNext)
            .filter_map(|i| key(&self.nodes[i]).and_then(|k| parent_of.get(&k)).map(|&p| (p, i)))
            .collect();
        for (p, c) in links {
            self.add_child(p, c);
        }
    }

    fn assign_groups(&mut self) {
        let tf_data_steps: HashSet<i64> =
            self.nodes.iter().filter(|n| n.kind == Kind::TfDataFunctionRun).filter_map(|n| n.step_id).collect();
        let loop_roots = self.tf_loop_roots(&tf_data_steps);
        let mut next_group = 0i64;
        if !loop_roots.is_empty() {
            for root in loop_roots {
                self.propagate(root, next_group);
                next_group += 1;
            }
            return;
        }
        let mut roots: Vec<usize> = (0..self.nodes.len())
            .filter(|&i| {
                let n = &self.nodes[i];
                n.root_level > 0 && !n.step_id.is_some_and(|s| tf_data_steps.contains(&s))
            })
            .collect();
        roots.sort_by_key(|&i| (std::cmp::Reverse(self.nodes[i].root_level), self.nodes[i].begin_ps, i));
        let mut budget = ANCESTOR_VISITS_PER_NODE.saturating_mul(self.nodes.len()).saturating_add(ANCESTOR_VISITS_SLACK);
        for root in roots {
            if self.nodes[root].group.is_none() && !self.has_ancestor_root_of_same_level(root, &mut budget) {
                self.propagate(root, next_group);
                next_group += 1;
            }
        }
    }

    /// TensorFlow while-loops: executor events grouped by (`id`, `iter_num`); each iteration of a
    /// function that has more than the single iteration 0 becomes a root, adopting its other events.
    fn tf_loop_roots(&mut self, tf_data_steps: &HashSet<i64>) -> Vec<usize> {
        // step id → iter num → events (in node order).
        let mut loops: HashMap<i64, HashMap<i64, Vec<usize>>> = HashMap::new();
        for (i, n) in self.nodes.iter().enumerate() {
            if n.kind != Kind::Executor {
                continue;
            }
            let (Some(step), Some(iter)) = (n.step_id, n.iter_num) else { continue };
            if tf_data_steps.contains(&step) {
                continue;
            }
            loops.entry(step).or_default().entry(iter).or_default().push(i);
        }
        let mut iterations: Vec<Vec<usize>> = Vec::new();
        for iters in loops.into_values() {
            if iters.len() == 1 && iters.contains_key(&0) {
                continue;
            }
            iterations.extend(iters.into_values());
        }
        // First event of an iteration: the earliest (first in node order on ties).
        let first = |events: &[usize], nodes: &[Node]| events.iter().copied().min_by_key(|&i| (nodes[i].begin_ps, i));
        let mut roots: Vec<(usize, Vec<usize>)> =
            iterations.into_iter().filter_map(|ev| first(&ev, &self.nodes).map(|r| (r, ev))).collect();
        roots.sort_by_key(|(r, _)| (self.nodes[*r].begin_ps, *r));
        for (root, events) in &roots {
            for &e in events.iter().filter(|&&e| e != *root) {
                self.add_child(*root, e);
            }
        }
        roots.into_iter().map(|(r, _)| r).collect()
    }

    /// Whether some ancestor (breadth-first over all parents) is a root of `node`'s root level. Each
    /// visit spends one unit of `budget`; once it is spent the answer is "no" (the root keeps its own
    /// group), so the check stays linear on a crafted trace of deeply nested roots of many levels.
    fn has_ancestor_root_of_same_level(&self, node: usize, budget: &mut usize) -> bool {
        let level = self.nodes[node].root_level;
        let mut seen: HashSet<usize> = HashSet::from([node]);
        let mut queue: VecDeque<usize> = VecDeque::new();
        for &p in &self.nodes[node].parents {
            if seen.insert(p) {
                queue.push_back(p);
            }
        }
        while let Some(n) = queue.pop_front() {
            if *budget == 0 {
                return false;
            }
            *budget -= 1;
            if self.nodes[n].root_level > 0 && self.nodes[n].root_level == level {
                return true;
            }
            for &p in &self.nodes[n].parents {
                if seen.insert(p) {
                    queue.push_back(p);
                }
            }
        }
        false
    }

    /// Gives `group` to `root` and, breadth-first, to every descendant reached through ungrouped nodes.
    fn propagate(&mut self, root: usize, group: i64) {
        let mut seen: HashSet<usize> = HashSet::from([root]);
        let mut queue = VecDeque::from([root]);
        while let Some(n) = queue.pop_front() {
            if self.nodes[n].group.is_some() {
                continue;
            }
            self.nodes[n].group = Some(group);
            for k in 0..self.nodes[n].children.len() {
                let c = self.nodes[n].children[k];
                if seen.insert(c) {
                    queue.push_back(c);
                }
            }
        }
    }
}
