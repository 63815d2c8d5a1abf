//! Roots and groups: which events start a step group, in what order, and how each group spreads to
//! the events below its root.

use super::classify::{Keyed, Kind};
use super::graph::{Bfs, Csr, Graph, Nesting};
use crate::fast_hash::FastMap;
use std::collections::HashSet;

/// "No group yet" in a node's group.
pub(super) const UNGROUPED: u32 = u32::MAX;
/// Ancestor visits allowed over all roots, per event plus a constant: real traces nest roots a few
/// levels deep and use a tiny fraction of it (see [`has_ancestor_root_of_level`]).
pub(super) const ANCESTOR_VISITS_PER_NODE: usize = 64;
pub(super) const ANCESTOR_VISITS_SLACK: usize = 1 << 20;

/// Groups the nodes from their roots. Returns the roots that started a group outside TensorFlow loops
/// (their index in `keyed`, their group id and the iteration or step number their group is named by).
pub(super) fn assign_groups(
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

    let mut named = Vec::new();
    let mut budget = ANCESTOR_VISITS_PER_NODE.saturating_mul(n).saturating_add(ANCESTOR_VISITS_SLACK);
    for (index, root) in roots {
        if group[root.node as usize] == UNGROUPED
            && !has_ancestor_root_of_level(&graph, &mut bfs, &level_of, root.node, root.root_level, &mut budget)
        {
            propagate(&graph, &mut bfs, group, root.node, next_group);
            // XProf's iteration number, else its step number: each the root's own, else its nearest
            // ancestor's.
            let number = context_number(&graph, &mut bfs, keyed, root.node, |k| k.iter_num, &mut budget)
                .or_else(|| context_number(&graph, &mut bfs, keyed, root.node, |k| k.step_num, &mut budget));
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
pub(super) fn context_number(
    graph: &Graph,
    bfs: &mut Bfs,
    keyed: &[Keyed],
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
        // Keyed events are in node order.
        if let Some(v) = keyed.binary_search_by_key(&n, |k| k.node).ok().and_then(|i| of(&keyed[i])) {
            return Some(v);
        }
        graph.for_each_parent(n, |p| bfs.visit(p));
    }
    None
}

/// A node and its start time (ps).
pub(crate) type NodeStart = (u32, i64);

/// TensorFlow while-loops: executor events grouped by (`id`, `iter_num`); each iteration of a
/// function that has more than the single iteration 0 becomes a root, adopting its other events
/// (added to `edges`). Returns the roots in group order.
pub(super) fn tf_loop_roots(keyed: &[Keyed], tf_data_steps: &HashSet<i64>, edges: &mut Vec<(u32, u32)>) -> Vec<u32> {
    let executors = keyed
        .iter()
        .filter(|k| k.kind == Kind::Executor && !k.step_id.is_some_and(|s| tf_data_steps.contains(&s)))
        .filter_map(|k| Some((k.step_id?, k.iter_num?, (k.node, k.begin_ps))));
    let iterations = tf_loop_iterations(executors);
    for (root, events) in &iterations {
        edges.extend(events.iter().filter(|&&(e, _)| e != *root).map(|&(e, _)| (*root, e)));
    }
    iterations.into_iter().map(|(r, _)| r).collect()
}

/// XProf's TensorFlow while-loop iterations (`ProcessTensorFlowLoop`) among `executors` ((`id`,
/// `iter_num`, node and start) of each `ExecutorState::Process` event, in node order; tf.data's left
/// out by the caller): the executor events by `id` and then `iter_num`, except an `id` whose only
/// iteration is 0 (a function without a loop). Each iteration with its first event (the earliest,
/// first in node order on ties), which XProf makes the parent of the others; ordered by that first
/// event. Shared by the step grouping (its roots) and the eager marking (its edges).
pub(crate) fn tf_loop_iterations(executors: impl Iterator<Item = (i64, i64, NodeStart)>) -> Vec<(u32, Vec<NodeStart>)> {
    // step id → iter num → events (in node order, with their start).
    let mut loops: FastMap<i64, FastMap<i64, Vec<NodeStart>>> = FastMap::default();
    for (step, iter, event) in executors {
        loops.entry(step).or_default().entry(iter).or_default().push(event);
    }
    let mut iterations: Vec<Vec<NodeStart>> = Vec::new();
    for iters in loops.into_values() {
        if iters.len() == 1 && iters.contains_key(&0) {
            continue;
        }
        iterations.extend(iters.into_values());
    }
    let mut roots: Vec<(NodeStart, Vec<NodeStart>)> =
        iterations.into_iter().filter_map(|ev| ev.iter().copied().min_by_key(|&(node, begin)| (begin, node)).map(|r| (r, ev))).collect();
    roots.sort_by_key(|&((node, begin), _)| (begin, node));
    roots.into_iter().map(|((root, _), events)| (root, events)).collect()
}

/// Whether some ancestor (breadth-first over all parents) is a root of level `level`. Each visit
/// spends one unit of `budget`; once it is spent the answer is "no" (the root keeps its own group), so
/// the checks stay linear on a crafted trace of deeply nested roots of many different levels.
pub(super) fn has_ancestor_root_of_level(
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
pub(super) fn propagate(graph: &Graph, bfs: &mut Bfs, group: &mut [u32], root: u32, id: u32) {
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
