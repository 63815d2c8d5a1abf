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
//! 4. A root that is not one of XProf's implicit roots (`FunctionRun`, `SessionRun`, `RunGraph`, executor
//!    events) gets the stat `step_name`: its name and its iteration or step number (its own, else its
//!    nearest ancestor's), else the group id — `train 7`. The step analysis reads these roots as step
//!    markers ([`StepGroups::step_name`]).
//!
//! By job: [`classify`] says what each event is to grouping (kind, root level, contexts, numbers),
//! [`graph`] holds the edges, [`roots`] orders the roots and spreads their groups; this module is the
//! scan the caller feeds.
//!
//! Cost: linear in the host plane's events (millions in a long trace). Each event is read once from the
//! wire by the caller's scan ([`Grouper::push`]). Only events that can start or pass on a group other
//! than through nesting become nodes: roots, executor / iterator / tf.data events, and context ends.
//! Any other event's only way in is its enclosing event, so its group is that of its innermost
//! enclosing node (or none): it is not a node, and its nested events nest in that node instead (the
//! same groups; see [`Grouper::push`]). The caller names the events whose groups it wants (the
//! memory events, or every event for the steps); each keeps just its enclosing node. Among nodes, nesting, the edge nearly every
//! node has, is kept as two integers per node ([`Nesting`]: parent, and where the subtree ends); the
//! other edges live in flat arrays (compressed sparse rows). Only the few events that can be roots or
//! loop members keep their stats, in side lists. `tests/step_groups.rs` checks all of it against a
//! plain transcription of XProf's algorithm on random traces.
//!
//! A file grouped when it was saved is not grouped again by XProf ([`recorded_grouped`]): its events
//! carry their `group_id` stats, which the caller reads instead of running this grouping.
//!
//! Differences: only the host plane is grouped (XProf also adds device planes, whose events connect
//! through correlation ids but carry no roots of their own in the traces we know); roots with equal
//! start times are taken in file order (XProf's sort is unstable there).

mod classify;
mod graph;
mod roots;

use crate::decode::xplane::names::GROUP_ID;
use crate::decode::xplane::{IdTable, Line, Plane, RawEvent, XSpace};
use crate::decode::DecodeError;
pub(crate) use classify::{ContextKinds, TF_DATA_FUNCTION_RUNS};
use classify::{GroupingStats, Keyed, Kind, MetaInfo, StatIds, EXECUTOR, IMPLICIT_ROOTS, ITERATOR_GET_NEXT, LEGACY_ROOT, LOOP_OPS};
pub use classify::{NODE_MAKING_STATS, STATS};
use graph::{connect_executors_to_iterators, context_edges, ContextEnd, Nesting, MAX_EVENT_NODES, NONE};
pub(crate) use roots::tf_loop_iterations;
use roots::{assign_groups, UNGROUPED};

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
    /// Each group's name, by group id (XProf's `GroupMetadata::name`): its root's `step_name`, or for an
    /// implicit root just the number. Empty for a file grouped when it was recorded.
    group_names: Vec<String>,
}

impl StepGroups {
    pub fn group_id(&self, tracked: usize) -> Option<i64> {
        self.groups.get(tracked).filter(|&&g| g != UNGROUPED).map(|&g| i64::from(g))
    }

    /// The groups of a file grouped when it was recorded ([`recorded_grouped`]), as its tracked events
    /// carry them: each one's `group_id` stat (none, or one below 0 or beyond `u32`: no group), and the
    /// (rank, `step_name` stat) of those that have one, by rank.
    pub fn recorded(groups: impl IntoIterator<Item = Option<i64>>, step_names: Vec<(usize, String)>) -> Self {
        let groups = groups.into_iter().map(|g| g.and_then(|g| u32::try_from(g).ok()).unwrap_or(UNGROUPED)).collect();
        StepGroups { groups, step_names, group_names: Vec::new() }
    }

    /// The name XProf gives group `group` (`Launch Stats for train 3`), where grouping named it.
    pub fn group_name(&self, group: i64) -> Option<&str> {
        usize::try_from(group).ok().and_then(|g| self.group_names.get(g)).map(String::as_str)
    }

    /// The tracked events grouping gave a `step_name`: (rank, name), by rank.
    pub fn step_names(&self) -> &[(usize, String)] {
        &self.step_names
    }

    /// Whether any tracked event has a group.
    pub fn any_grouped(&self) -> bool {
        self.groups.iter().any(|&g| g != UNGROUPED)
    }

    /// The `step_name` grouping gave the tracked event of this rank, if any.
    pub fn step_name(&self, tracked: usize) -> Option<&str> {
        self.step_names.binary_search_by_key(&tracked, |(t, _)| *t).ok().map(|i| self.step_names[i].1.as_str())
    }
}

/// Whether the file was grouped when it was recorded (XProf's `IsXSpaceGrouped`: some plane declares
/// the `group_id` stat, as TensorFlow's profiler does when it saves a trace). XProf then groups
/// nothing again: each event's group is the `group_id` stat it carries, if any.
pub fn recorded_grouped(space: &XSpace) -> bool {
    space.planes.iter().any(|p| p.meta.stat_metadata.values().any(|m| m.name == GROUP_ID))
}

/// Whether XProf groups `space`'s events: not when a plane names a TensorFlow loop op.
pub fn is_grouped(space: &XSpace) -> bool {
    !space.planes.iter().any(|p| p.meta.event_metadata.values().any(|m| LOOP_OPS.contains(&m.name.as_str())))
}

/// The step groups of the host plane `host` of `space` with every event tracked (by rank: file order,
/// lines in order), in one scan of its events that also hands each to `visit` (with its rank, its
/// line's index and its index in the line) and the stats `extra_stats` among its selected ones.
pub fn group_every_event<'a>(
    space: &'a XSpace,
    host: &'a Plane,
    extra_stats: &[&str],
    mut visit: impl FnMut(usize, usize, usize, &RawEvent<'a, '_>) -> Result<(), DecodeError>,
) -> Result<StepGroups, DecodeError> {
    let mut wanted: Vec<&str> = STATS.to_vec();
    wanted.extend_from_slice(extra_stats);
    let selection = host.stat_selection(&wanted);
    let mut grouper = Grouper::new(space, host, |_| true);
    let mut rank = 0;
    for (l, line) in host.lines.iter().enumerate() {
        grouper.start_line(line);
        space.for_each_raw_event(
            line,
            &selection,
            |_| true,
            |index, ev| {
                grouper.push(ev)?;
                visit(rank, l, index, ev)?;
                rank += 1;
                Ok(())
            },
        )?;
    }
    Ok(grouper.finish())
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
    /// Producer and consumer ends of inter-thread contexts, by context kind (its rank in
    /// `context_kinds`). Flat lists sorted once at the end, rather than a map of lists: millions of
    /// events may carry one.
    context_ends: Vec<Vec<ContextEnd>>,
    /// Each context kind (type, process) seen.
    context_kinds: ContextKinds,
}

impl<'a> Grouper<'a> {
    /// A grouper for `plane`, the host plane of `space`, that gives the groups of the events whose
    /// event metadata id is `tracked`.
    pub fn new(space: &XSpace, plane: &'a Plane, tracked: impl Fn(i64) -> bool) -> Self {
        let has_loop_ops = !is_grouped(space);
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
            context_kinds: ContextKinds::new(plane),
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
        let Grouper { plane, ids, meta, metas, nodes, base_ps, open, tracked, nesting, keyed, context_ends, context_kinds, .. } = self;
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
        *nodes = nodes.checked_add(1).filter(|&n| n <= MAX_EVENT_NODES).ok_or_else(|| DecodeError::Corrupt {
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
            let (rank, new) = context_kinds.rank(t, s.pid);
            if new {
                context_ends.push(Vec::new());
            }
            context_ends[rank as usize].push(ContextEnd::new(id, consumer, me));
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
        let n = context_edges(context_ends, nodes, &mut edges);
        let mut group = vec![UNGROUPED; n];
        let named = if has_loop_ops { Vec::new() } else { assign_groups(n, &keyed, nesting, &mut edges, &mut group) };
        // XProf's group name (`GetGroupName`): the root's name unless it is an implicit root, then its
        // iteration or step number (the root's own or its nearest ancestor's), else the group id. Groups
        // are numbered in `named`'s order, so a group's name is at its id.
        let mut step_names: Vec<(usize, String)> = Vec::new();
        let mut group_names = Vec::with_capacity(named.len());
        for (k, id, number) in named {
            debug_assert_eq!(id as usize, group_names.len(), "groups are numbered in order");
            let k = &keyed[k];
            let number = number.unwrap_or(i64::from(id));
            if metas[meta.get(k.metadata_id) as usize].implicit_root {
                group_names.push(number.to_string());
                continue;
            }
            let name = format!("{} {number}", plane.event_name(k.metadata_id));
            if k.tracked != NONE {
                step_names.push((k.tracked as usize, name.clone()));
            }
            group_names.push(name);
        }
        step_names.sort_unstable_by_key(|(t, _)| *t);
        let groups = tracked.iter().map(|&t| if t == NONE { UNGROUPED } else { group[t as usize] }).collect();
        StepGroups { groups, step_names, group_names }
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
