//! The host op db: framework ops timed from the host threads' TraceMe events (XProf's
//! `ConvertHostThreadsXPlaneToOpMetricsDb`), the input of framework op stats' host rows and of the
//! input-pipeline op table.
//!
//! How XProf times host ops, which this follows exactly (quirks included, as its numbers are the oracle):
//! 1. **Op table.** Over the whole `/host:CPU` plane, an event whose name parses as a framework op
//!    ([`super::tf_op`], category not unknown) makes its metadata id an op; an event with the stats
//!    `input_pipeline_stage_id` and `input_pipeline_stage_category` makes its stage id one (named by the
//!    event, typed by the category). The first entry of an id wins.
//! 2. **Activities, per thread.** Derived lines are skipped. Each event gives up to two begin/end pairs,
//!    numbered in event order: one if its id (its stage id when it has one) is in the op table, and one
//!    more if it has a non-empty `tf_op` stat, parsed whatever its category (never eager). An allocator
//!    event carries the op it allocated for in `tf_op` — a bare name, so an op of unknown type and the
//!    op's name — and so becomes another occurrence of that op: XProf's `sgd/Mul_12` shows 120
//!    occurrences for 60 runs. The row keeps XProf's count and notes how many came from allocator events
//!    ([`super::OpMetrics::memory_event_occurrences`]).
//!
//!    The first pair is eager as XProf's step grouping marks it ([`super::eager`]): a TensorFlow op is
//!    eager when the `EagerExecute` nearest to it in the event graph (its thread's nesting, the
//!    contexts between threads) runs an op eagerly, whatever the event's own `is_eager` stat says;
//!    other ops, and every op of a trace XProf does not group (one with TensorFlow loop ops,
//!    [`crate::analysis::step_groups::is_grouped`], or one grouped when it was recorded,
//!    [`crate::analysis::step_groups::recorded_grouped`]), keep their `is_eager` stat. The graph is
//!    read in this same scan; an op's answer may come from a later line, so an op a graph node
//!    decides enters its thread's replay (step 3) as not eager, and its row is marked eager after
//!    the last line where the graph's answer says so (a row is eager when any of its ops is).
//! 3. **Replay.** Activities are stably sorted by time and replayed on a stack: a begin pushes; an end
//!    pops until it finds its begin (what it pops on the way is lost; without one it is ignored). A
//!    matched op adds one occurrence, its duration, and its duration less its children's as self time;
//!    its duration is added to its parent's children. A child that ends exactly when its parent does is
//!    sorted after the parent's end (the parent began first): it is lost, and not taken off the parent's
//!    self time.
//! 4. **Totals.** A thread's total is the span from its first to its last activity, at least its op time;
//!    each thread adds an `IDLE` row (total less op time), even a thread with no ops. Threads merge by
//!    (stage id or 0, name): sums add, the first non-empty type wins.
//!
//! Limited to a [`TimeWindow`] (Tidemark's own), step 2 keeps only the pairs of events that start inside
//! it (eager marking still sees every enclosing event), so steps 3–4 replay those alone.

use super::eager::{EagerGraph, Mark};
use super::tf_op::{parse_tf_op_fullname, TfOpCategory};
use super::window::{starts_in, TimeWindow};
use super::{OpMetricsDb, OpMetricsDbBuilder};
use crate::analysis::device_planes::is_derived_line;
use crate::analysis::memory_events::{ALLOCATION, DEALLOCATION};
use crate::analysis::step_groups::{is_grouped, recorded_grouped};
use crate::decode::xplane::names::{HOST_PLANE, IS_EAGER, TF_OP};
use crate::decode::xplane::{IdTable, Line, Plane, RawStat, StatValue, XSpace};
use crate::decode::DecodeError;
use crate::fast_hash::FastMap;
use std::borrow::Cow;

/// The host op db of `space`: empty (no rows, zero totals) when it has no host plane.
pub fn host_op_metrics_db(space: &XSpace) -> Result<OpMetricsDb, DecodeError> {
    host_op_metrics_db_in(space, None)
}

/// The host op db of the events of `space` that start inside `window` (all of them without one).
pub fn host_op_metrics_db_in(space: &XSpace, window: Option<TimeWindow>) -> Result<OpMetricsDb, DecodeError> {
    let Some(plane) = space.plane_named(HOST_PLANE) else { return Ok(OpMetricsDb::default()) };
    let stats = Stats::new(plane);
    let ops = op_table(space, plane, &stats)?;
    let memory_ids = [ALLOCATION, DEALLOCATION].iter().flat_map(|n| plane.event_metadata_ids(n)).collect();
    let mut eager = EagerGraph::new(plane, is_grouped(space) && !recorded_grouped(space));
    // The scan also reads the stats the eager graph needs.
    let stats = match &eager {
        Some(_) => Stats { selection: IdTable::new(stats.ids().chain(EagerGraph::stat_ids(plane)).map(|id| (id, true))), ..stats },
        None => stats,
    };
    let info = PlaneInfo { space, plane, stats, ops, memory_ids, window };
    let mut db = OpMetricsDbBuilder::new();
    // Each thread is replayed as soon as it is read; an op whose eagerness a graph node decides (its
    // answer may come from a later line) enters its row as not eager, and the rows whose ops the
    // graph's answers make eager are marked at the end (a row is eager when any of its ops is).
    // `pending`: (index in `pending_rows`, node), `pending_rows`: the (id, name) keys they concern.
    let mut pending: Vec<(u32, u32)> = Vec::new();
    let mut pending_rows: Vec<(u64, String)> = Vec::new();
    // One thread's buffers serve every line: a line's activities fill pages the next line reuses
    // instead of faulting in new ones.
    let mut thread = Thread::default();
    for line in &plane.lines {
        if is_derived_line(line.header.id) {
            continue;
        }
        thread.activities.clear();
        thread.occurrences.clear();
        collect_activities(&info, line, eager.as_mut(), &mut thread)?;
        let (thread_db, by_node) = replay(&mut thread, &info.ops.ops);
        // Each thread row with pending ops gets its place in `pending_rows` when first met (no sort:
        // the marks at the end do not depend on the order; `replay` leaves out a pair repeating the one before).
        let mut slots = vec![u32::MAX; thread_db.metrics.len()];
        for (row, node) in by_node {
            let slot = &mut slots[row as usize];
            if *slot == u32::MAX {
                let m = &thread_db.metrics[row as usize];
                *slot = pending_rows.len() as u32;
                pending_rows.push((m.hlo_module_id, m.name.clone()));
            }
            pending.push((*slot, node));
        }
        db.combine(&thread_db, false);
    }
    if let Some(graph) = eager {
        let eager_node = graph.finish();
        for &(row, node) in &pending {
            if eager_node[node as usize] {
                let (id, name) = &pending_rows[row as usize];
                db.row(*id, name).is_eager = true;
            }
        }
    }
    Ok(db.finish())
}

/// A framework op as the replay enters it: name, type, and the key's id (stage id or 0). The texts
/// borrow from the file, except a compressed stat's.
#[derive(Debug, Clone, PartialEq, Eq)]
struct HostOp<'a> {
    name: Cow<'a, str>,
    type_: Cow<'a, str>,
    id: i64,
}

impl<'a> HostOp<'a> {
    /// The op `fullname` parses to ([`parse_tf_op_fullname`]), keyed by `id`.
    fn parse(fullname: Cow<'a, str>, id: i64) -> (TfOpCategory, Self) {
        match fullname {
            Cow::Borrowed(s) => {
                let p = parse_tf_op_fullname(s);
                (p.category, HostOp { name: Cow::Borrowed(p.name), type_: Cow::Borrowed(p.type_), id })
            }
            Cow::Owned(s) => {
                let p = parse_tf_op_fullname(&s);
                (p.category, HostOp { name: Cow::Owned(p.name.to_string()), type_: Cow::Owned(p.type_.to_string()), id })
            }
        }
    }
}

/// The stat metadata ids the host op db reads.
struct Stats {
    is_eager: Option<i64>,
    tf_op: Option<i64>,
    stage_id: Option<i64>,
    stage_category: Option<i64>,
    selection: IdTable<bool>,
}

impl Stats {
    fn new(plane: &Plane) -> Self {
        const NAMES: [&str; 4] = [IS_EAGER, TF_OP, "input_pipeline_stage_id", "input_pipeline_stage_category"];
        let [is_eager, tf_op, stage_id, stage_category] = NAMES.map(|n| plane.stat_id(n));
        let selection = IdTable::new([is_eager, tf_op, stage_id, stage_category].into_iter().flatten().map(|id| (id, true)));
        Stats { is_eager, tf_op, stage_id, stage_category, selection }
    }

    /// The ids of the stats read.
    fn ids(&self) -> impl Iterator<Item = i64> {
        [self.is_eager, self.tf_op, self.stage_id, self.stage_category].into_iter().flatten()
    }
}

/// The value of the event's first stat of metadata id `id` (XProf's `GetStat` takes the first); a stat
/// without a value reads as an empty string.
pub(super) fn first_stat<'a>(plane: &'a Plane, stats: &[RawStat<'a>], id: Option<i64>) -> Result<Option<StatValue<'a>>, DecodeError> {
    let Some(id) = id else { return Ok(None) };
    match stats.iter().find(|s| s.metadata_id == id) {
        Some(s) => Ok(Some(plane.raw_stat_value(s)?.unwrap_or(StatValue::Str(Cow::Borrowed(""))))),
        None => Ok(None),
    }
}

/// A stat's `int64_value`, 0 for any other kind (XProf's `IntValue`).
pub(super) fn int_value(v: &StatValue) -> i64 {
    match v {
        StatValue::Int(i) => *i,
        _ => 0,
    }
}

/// A string stat's text, "" for any other kind (XProf's `StrOrRefValue`).
fn text_value(v: StatValue<'_>) -> Cow<'_, str> {
    match v {
        StatValue::Str(s) => s,
        _ => Cow::Borrowed(""),
    }
}

/// Step 1's table: the op of each metadata id (or stage id), numbered, so that an occurrence names
/// its op by number (no copy of its texts) and the replay finds its row by number (no hash of its
/// name for each occurrence).
#[derive(Default)]
struct OpTable<'a> {
    /// Each key's number in `ops`.
    by_key: FastMap<i64, u32>,
    ops: Vec<HostOp<'a>>,
}

impl<'a> OpTable<'a> {
    /// Enters `op` for `key` unless the key has one (the first stays).
    fn insert(&mut self, key: i64, op: HostOp<'a>) {
        if let std::collections::hash_map::Entry::Vacant(v) = self.by_key.entry(key) {
            v.insert(self.ops.len() as u32);
            self.ops.push(op);
        }
    }
}

/// Step 1 of the module doc: the op of each metadata id (or stage id).
fn op_table<'a>(space: &'a XSpace, plane: &'a Plane, stats: &Stats) -> Result<OpTable<'a>, DecodeError> {
    let mut ops = OpTable::default();
    let known = |name: &'a str| match HostOp::parse(Cow::Borrowed(name), 0) {
        (TfOpCategory::Unknown, _) => None,
        (_, op) => Some(op),
    };
    if stats.stage_id.is_none() {
        // Without stage ids an entry depends on the event's name alone: read it off the metadata.
        for (&id, m) in &plane.meta.event_metadata {
            if let Some(op) = (!m.name.is_empty()).then(|| known(&m.name)).flatten() {
                ops.insert(id, op);
            }
        }
        return Ok(ops);
    }
    for line in &plane.lines {
        space.for_each_raw_event(
            line,
            &stats.selection,
            |_| true,
            |_, e| {
                let name = plane.event_name(e.header.metadata_id);
                if name.is_empty() {
                    return Ok(());
                }
                if let Some(stage) = first_stat(plane, e.stats, stats.stage_id)? {
                    if let Some(category) = first_stat(plane, e.stats, stats.stage_category)? {
                        let stage_id = int_value(&stage);
                        let category = text_value(category);
                        let op = if category.is_empty() {
                            HostOp::parse(Cow::Borrowed(name), stage_id).1
                        } else {
                            HostOp { name: Cow::Borrowed(name), type_: category, id: stage_id }
                        };
                        ops.insert(stage_id, op);
                    }
                    return Ok(());
                }
                if let Some(op) = known(name) {
                    ops.insert(e.header.metadata_id, op);
                }
                Ok(())
            },
        )?;
    }
    Ok(ops)
}

/// One end of an op occurrence on a thread; `pair` (numbered from 0 per thread, in event order) pairs
/// a begin with its end and indexes the occurrence's [`Occurrence`].
#[derive(Debug, Clone, Copy)]
struct Activity {
    time_ps: u64,
    pair: u32,
    begin: bool,
}

/// An occurrence's op: the op table's (its number), or one parsed from an event's `tf_op` stat.
#[derive(Debug, Clone)]
enum OccurrenceOp<'a> {
    Table(u32),
    Parsed(HostOp<'a>),
}

/// What one begin/end pair enters.
#[derive(Debug, Clone)]
struct Occurrence<'a> {
    op: OccurrenceOp<'a>,
    /// [`Mark::Known`] or [`Mark::Node`].
    eager: Mark,
    /// The pair comes from an allocator event's `tf_op` stat.
    from_memory_event: bool,
}

/// One thread's activities and the occurrences they pair up.
#[derive(Default)]
struct Thread<'a> {
    activities: Vec<Activity>,
    occurrences: Vec<Occurrence<'a>>,
}

/// What the per-thread pass reads of the whole plane.
struct PlaneInfo<'a> {
    space: &'a XSpace,
    plane: &'a Plane,
    stats: Stats,
    ops: OpTable<'a>,
    /// Event metadata ids of allocator events.
    memory_ids: Vec<i64>,
    /// Only events starting inside it enter the replay.
    window: Option<TimeWindow>,
}

/// Step 2 of the module doc, for one line; each event also goes to the eager graph, if any.
fn collect_activities<'a>(
    p: &PlaneInfo<'a>,
    line: &Line,
    mut eager: Option<&mut EagerGraph>,
    thread: &mut Thread<'a>,
) -> Result<(), DecodeError> {
    let (plane, stats) = (p.plane, &p.stats);
    let line_start_ps = line.header.timestamp_ns.wrapping_mul(1000);
    thread.activities.reserve(line.event_count * 2);
    if let Some(graph) = eager.as_deref_mut() {
        graph.start_line();
    }
    p.space.for_each_raw_event(
        line,
        &stats.selection,
        |_| true,
        |_, e| {
            let begin_ps = line_start_ps.wrapping_add(e.header.offset_ps) as u64;
            let end_ps = begin_ps.wrapping_add(e.header.duration_ps as u64);
            let mark = match eager.as_deref_mut() {
                Some(graph) => graph.push(plane, e, begin_ps as i64, end_ps as i64)?,
                None => Mark::Recorded,
            };
            if !starts_in(p.window, begin_ps as i64) {
                return Ok(());
            }
            let mut push = |occurrence: Occurrence<'a>| {
                let pair = thread.occurrences.len() as u32;
                thread.occurrences.push(occurrence);
                thread.activities.push(Activity { time_ps: begin_ps, pair, begin: true });
                thread.activities.push(Activity { time_ps: end_ps, pair, begin: false });
            };
            let key = match first_stat(plane, e.stats, stats.stage_id)? {
                Some(stage) => int_value(&stage),
                None => e.header.metadata_id,
            };
            if let Some(&op) = p.ops.by_key.get(&key) {
                let eager = match mark {
                    Mark::Recorded => Mark::Known(first_stat(plane, e.stats, stats.is_eager)?.is_some_and(|v| int_value(&v) != 0)),
                    m => m,
                };
                push(Occurrence { op: OccurrenceOp::Table(op), eager, from_memory_event: false });
            }
            if let Some(v) = first_stat(plane, e.stats, stats.tf_op)? {
                let fullname = text_value(v);
                if !fullname.is_empty() {
                    let op = HostOp::parse(fullname, 0).1;
                    let from_memory_event = p.memory_ids.contains(&e.header.metadata_id);
                    push(Occurrence { op: OccurrenceOp::Parsed(op), eager: Mark::Known(false), from_memory_event });
                }
            }
            Ok(())
        },
    )
}

/// Steps 3–4 of the module doc for one thread: its op db with its `IDLE` row, and the (row, graph
/// node) of each occurrence counted whose eagerness a graph node decides ([`Mark::Node`]: not yet
/// in its row's). Sorts the activities.
fn replay<'t>(thread: &'t mut Thread, table: &'t [HostOp]) -> (OpMetricsDb, Vec<(u32, u32)>) {
    let mut db = OpMetricsDbBuilder::new();
    let mut by_node = Vec::new();
    // Each op key's row index: found without the builder's owned-string key for each occurrence.
    let mut rows: FastMap<(u64, &str), usize> = FastMap::default();
    // The row of each op of the table met so far (several may share one: same id and name).
    let mut table_rows = vec![usize::MAX; table.len()];
    let activities = &mut thread.activities;
    // By time, ties in push order (a pair's begin is pushed just before its end, pairs in order):
    // the stable sort's order, sorted in place without its scratch buffer.
    activities.sort_unstable_by_key(|a| (a.time_ps, a.pair, !a.begin));
    // (pair, begin time, children's time)
    let mut stack: Vec<(u32, u64, u64)> = Vec::new();
    // The last InfeedEnqueue's (begin, duration).
    let mut last_infeed: Option<(u64, u64)> = None;
    for a in activities.iter() {
        if a.begin {
            stack.push((a.pair, a.time_ps, 0));
            continue;
        }
        let Some((_, begin_ps, children_ps)) = pop_until(&mut stack, a.pair) else { continue };
        let occurrence = &thread.occurrences[a.pair as usize];
        let (op, slot) = match &occurrence.op {
            OccurrenceOp::Table(i) => (&table[*i as usize], Some(*i as usize)),
            OccurrenceOp::Parsed(op) => (op, None),
        };
        let time_ps = a.time_ps.saturating_sub(begin_ps);
        let self_ps = time_ps.wrapping_sub(children_ps);
        let index = match slot.map(|i| table_rows[i]) {
            Some(row) if row != usize::MAX => row,
            _ => {
                let row = *rows.entry((op.id as u64, &op.name)).or_insert_with(|| db.row_index(op.id as u64, &op.name));
                if let Some(i) = slot {
                    table_rows[i] = row;
                }
                row
            }
        };
        let row = &mut db.db_mut().metrics[index];
        if row.category.is_empty() {
            row.category = op.type_.to_string();
        }
        row.num_cores = 1;
        match occurrence.eager {
            // Ops counted one after another mostly share their row and node (the ops run under one
            // executor event): a pair repeating the one before adds nothing.
            Mark::Node(node) => {
                if by_node.last() != Some(&(index as u32, node)) {
                    by_node.push((index as u32, node));
                }
            }
            m => row.is_eager |= m == Mark::Known(true),
        }
        row.occurrences += 1;
        row.memory_event_occurrences += u64::from(occurrence.from_memory_event);
        row.time_ps = row.time_ps.wrapping_add(time_ps);
        row.self_time_ps = row.self_time_ps.wrapping_add(self_ps);
        let d = db.db_mut();
        d.total_op_time_ps = d.total_op_time_ps.wrapping_add(self_ps);
        if let Some(parent) = stack.last_mut() {
            parent.2 = parent.2.wrapping_add(time_ps);
        }
        if is_infeed_enqueue(&op.type_) {
            // XProf counts a previous enqueue only if it had a duration (an empty span reads as none).
            if let Some((last_begin, last_ps)) = last_infeed.filter(|&(_, ps)| ps != 0) {
                d.total_host_infeed_enq_duration_ps = d.total_host_infeed_enq_duration_ps.wrapping_add(last_ps);
                d.total_host_infeed_enq_start_timestamp_ps_diff =
                    d.total_host_infeed_enq_start_timestamp_ps_diff.wrapping_add(begin_ps.wrapping_sub(last_begin));
            }
            last_infeed = Some((begin_ps, time_ps));
        }
    }
    let mut db = db.finish();
    if let (Some(first), Some(last)) = (activities.first(), activities.last()) {
        db.set_total_time_ps(last.time_ps.wrapping_sub(first.time_ps));
    }
    db.add_idle_op();
    (db, by_node)
}

/// Pops the stack down to and including the entry of `pair`; `None` (stack emptied) if absent.
fn pop_until(stack: &mut Vec<(u32, u64, u64)>, pair: u32) -> Option<(u32, u64, u64)> {
    while let Some(top) = stack.pop() {
        if top.0 == pair {
            return Some(top);
        }
    }
    None
}

/// XProf's `IsInfeedEnqueueOp` on an op type.
fn is_infeed_enqueue(type_: &str) -> bool {
    type_ == "InfeedEnqueue" || type_ == "InfeedEnqueueTuple"
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::xplane as pb;
    use pb::x_stat::Value as V;
    use prost::Message;

    /// An event: name, offset and duration (ps), stats by name.
    type Ev = (&'static str, i64, i64, Vec<(&'static str, V)>);

    fn len_field(field: u64, payload: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        prost::encoding::encode_key(field as u32, prost::encoding::WireType::LengthDelimited, &mut out);
        prost::encoding::encode_varint(payload.len() as u64, &mut out);
        out.extend_from_slice(payload);
        out
    }

    /// A host plane with `lines` (line id, events), metadata ids given in order of first use.
    fn space(lines: Vec<(i64, Vec<Ev>)>) -> XSpace {
        let mut events: Vec<&str> = Vec::new();
        let mut stats: Vec<&str> = Vec::new();
        let id = |names: &mut Vec<&'static str>, n: &'static str| match names.iter().position(|&x| x == n) {
            Some(i) => i as i64 + 1,
            None => {
                names.push(n);
                names.len() as i64
            }
        };
        let mut line_bytes = Vec::new();
        for (line_id, evs) in lines {
            let encoded: Vec<pb::XEvent> = evs
                .into_iter()
                .map(|(name, offset_ps, duration_ps, st)| pb::XEvent {
                    metadata_id: id(&mut events, name),
                    data: Some(pb::x_event::Data::OffsetPs(offset_ps)),
                    duration_ps,
                    stats: st.into_iter().map(|(s, value)| pb::XStat { metadata_id: id(&mut stats, s), value: Some(value) }).collect(),
                })
                .collect();
            let mut line = pb::XLine { id: line_id, name: format!("thread {line_id}"), ..Default::default() }.encode_to_vec();
            line.extend(pb::XLineEvents { events: encoded }.encode_to_vec());
            line_bytes.push(line);
        }
        let meta = |names: &[&str]| names.iter().enumerate().map(|(i, n)| (i as i64 + 1, n.to_string())).collect::<Vec<_>>();
        let plane = pb::XPlane {
            id: 1,
            name: HOST_PLANE.into(),
            event_metadata: meta(&events)
                .into_iter()
                .map(|(id, name)| (id, pb::XEventMetadata { id, name, ..Default::default() }))
                .collect(),
            stat_metadata: meta(&stats).into_iter().map(|(id, name)| (id, pb::XStatMetadata { id, name, ..Default::default() })).collect(),
            ..Default::default()
        };
        let mut plane_bytes = plane.encode_to_vec();
        for l in &line_bytes {
            plane_bytes.extend(len_field(3, l));
        }
        XSpace::index(len_field(1, &plane_bytes), &mut |_, _| {}).expect("indexes")
    }

    /// (name, category, occurrences, time, self time) of each row, IDLE last.
    fn rows(db: &OpMetricsDb) -> Vec<(&str, &str, u64, u64, u64)> {
        db.metrics.iter().map(|m| (m.name.as_str(), m.category.as_str(), m.occurrences, m.time_ps, m.self_time_ps)).collect()
    }

    #[test]
    fn nested_ops_split_self_time_and_idle_fills_the_span() {
        let db = host_op_metrics_db(&space(vec![(
            1,
            vec![
                ("a/Outer:Outer", 0, 100, vec![]),
                ("a/Inner:Inner", 10, 30, vec![]),
                ("user TraceMe", 200, 50, vec![]),
                ("b/Last:Last", 300, 10, vec![]),
            ],
        )]))
        .unwrap();
        assert_eq!(
            rows(&db),
            vec![
                ("a/Inner", "Inner", 1, 30, 30),
                ("a/Outer", "Outer", 1, 100, 70),
                ("b/Last", "Last", 1, 10, 10),
                ("IDLE", "IDLE", 0, 200, 200)
            ]
        );
        // The span is first to last activity: 0..310; op time 110.
        assert_eq!((db.total_time_ps, db.total_op_time_ps), (310, 110));
    }

    #[test]
    fn a_child_ending_with_its_parent_is_lost() {
        // The child's end sorts after the parent's (stable sort, the parent came first): the parent's
        // end pops the child unmatched, and its own end then finds nothing.
        let db =
            host_op_metrics_db(&space(vec![(1, vec![("p/Parent:Parent", 0, 100, vec![]), ("p/Child:Child", 50, 50, vec![])])])).unwrap();
        assert_eq!(rows(&db), vec![("p/Parent", "Parent", 1, 100, 100), ("IDLE", "IDLE", 0, 0, 0)]);
        // Overlapping ops: the first one's end pops the second, which is lost too.
        let db = host_op_metrics_db(&space(vec![(1, vec![("x/A:A", 0, 10, vec![]), ("x/B:B", 5, 10, vec![])])])).unwrap();
        assert_eq!(rows(&db), vec![("x/A", "A", 1, 10, 10), ("IDLE", "IDLE", 0, 5, 5)]);
    }

    #[test]
    fn tf_op_stats_count_as_occurrences_memory_events_included() {
        let tf_op = |s: &str| vec![("tf_op", V::StrValue(s.into()))];
        let db = host_op_metrics_db(&space(vec![(
            1,
            vec![
                // The allocator event comes first at the op's start: its empty type does not stick.
                ("MemoryAllocation", 0, 0, tf_op("sgd/Mul_12")),
                ("sgd/Mul_12:Mul", 0, 40, vec![]),
                ("MemoryDeallocation", 40, 0, tf_op("sgd/Mul_12")),
                // An executor event naming its op runs the op a second time.
                ("ExecutorState::Process", 50, 20, tf_op("m/Add:Add")),
            ],
        )]))
        .unwrap();
        let mul = &db.metrics[0];
        assert_eq!((mul.name.as_str(), mul.category.as_str(), mul.occurrences, mul.true_occurrences()), ("sgd/Mul_12", "Mul", 3, 1));
        let add = db.metrics.iter().find(|m| m.name == "m/Add").unwrap();
        assert_eq!((add.occurrences, add.true_occurrences(), add.time_ps), (1, 1, 20));
    }

    #[test]
    fn every_thread_adds_an_idle_row_and_derived_lines_are_skipped() {
        let derived = 0xdead_beef_i64 | (7 << 32);
        let db = host_op_metrics_db(&space(vec![
            (1, vec![("a/A:A", 0, 10, vec![]), ("a/A:A", 30, 10, vec![])]),
            (2, vec![]),
            (derived, vec![("a/A:A", 0, 1000, vec![])]),
        ]))
        .unwrap();
        assert_eq!(rows(&db), vec![("a/A", "A", 2, 20, 20), ("IDLE", "IDLE", 0, 20, 20)]);
    }

    #[test]
    fn a_window_keeps_the_events_that_start_inside_it() {
        let eager = vec![("is_func", V::Int64Value(0))];
        let trace = space(vec![(
            1,
            vec![
                ("EagerExecute", 0, 400, eager),
                ("a/Outer:Outer", 10, 100, vec![]),
                ("a/Inner:Inner", 50, 100, vec![]),
                ("a/Inner:Inner", 200, 30, vec![]),
                ("a/Late:Late", 300, 10, vec![]),
            ],
        )]);
        // [50, 300): the outer op started before it, so the first inner op is no one's child (its
        // self time is all its time, where the whole trace loses it to the overlap); the last op is out.
        let db = host_op_metrics_db_in(&trace, Some(TimeWindow::new(50, 300).unwrap())).unwrap();
        assert_eq!(rows(&db), vec![("a/Inner", "Inner", 2, 130, 130), ("IDLE", "IDLE", 0, 50, 50)]);
        // Its span is the window's events' (50 to 230); the EagerExecute enclosing them, though it
        // starts before the window, still makes them eager.
        assert_eq!((db.total_time_ps, db.total_op_time_ps), (180, 130));
        assert!(db.metrics[0].is_eager);
        // A window over every event is the whole trace.
        assert_eq!(host_op_metrics_db_in(&trace, Some(TimeWindow::new(0, 311).unwrap())).unwrap(), host_op_metrics_db(&trace).unwrap());
    }

    #[test]
    fn eager_marking_follows_contexts_to_other_threads() {
        let eager_execute = |is_func: i64, context: i64| {
            vec![("is_func", V::Int64Value(is_func)), ("_pt", V::Int64Value(1)), ("_p", V::Int64Value(context))]
        };
        let executor = |context: i64| vec![("_ct", V::Int64Value(1)), ("_c", V::Int64Value(context))];
        let db = host_op_metrics_db(&space(vec![
            // An op run eagerly, and a compiled function, each handing its work to an executor thread.
            (1, vec![("EagerExecute", 0, 1000, eager_execute(0, 42)), ("EagerExecute", 2000, 1000, eager_execute(1, 43))]),
            (
                2,
                vec![
                    ("ExecutorState::Process", 100, 500, executor(42)),
                    ("e/Eager:MatMul", 150, 50, vec![]),
                    ("ExecutorState::Process", 2100, 500, executor(43)),
                    ("f/Func:Add", 2150, 50, vec![("is_eager", V::Int64Value(1))]),
                ],
            ),
            // The nearest `EagerExecute` decides: the enclosing function is 2 steps up (through the
            // executor) as is the eager producer, and the thread's nesting comes first; one level more
            // between the executor and the function and the producer is nearer.
            (
                3,
                vec![
                    ("EagerExecute", 5000, 1000, vec![("is_func", V::Int64Value(1))]),
                    ("ExecutorState::Process", 5100, 500, executor(42)),
                    ("t/Tie:Mul", 5150, 50, vec![]),
                    ("EagerExecute", 7000, 1000, vec![("is_func", V::Int64Value(1))]),
                    ("FunctionRun", 7050, 900, vec![]),
                    ("ExecutorState::Process", 7100, 500, executor(42)),
                    ("n/Near:Sub", 7150, 50, vec![]),
                ],
            ),
            // A producer on a later line than its consumer still decides.
            (4, vec![("ExecutorState::Process", 9100, 500, executor(44)), ("l/Later:Neg", 9150, 50, vec![])]),
            (5, vec![("EagerExecute", 9000, 1000, eager_execute(0, 44))]),
        ]))
        .unwrap();
        let eager_of = |name: &str| db.metrics.iter().find(|m| m.name == name).unwrap().is_eager;
        assert!(eager_of("e/Eager"), "run by an executor whose context an eager EagerExecute produced");
        assert!(!eager_of("f/Func"), "a compiled function's op, whatever its own stat says");
        assert!(!eager_of("t/Tie"));
        assert!(eager_of("n/Near"));
        assert!(eager_of("l/Later"));
    }

    /// Whether each op named is eager in the host db of `lines`.
    fn eager_ops(lines: Vec<(i64, Vec<Ev>)>, names: &[&str]) -> Vec<bool> {
        let db = host_op_metrics_db(&space(lines)).unwrap();
        names.iter().map(|n| db.metrics.iter().find(|m| m.name == *n).unwrap_or_else(|| panic!("{n} has a row")).is_eager).collect()
    }

    fn int_stats(stats: &[(&'static str, i64)]) -> Vec<(&'static str, V)> {
        stats.iter().map(|&(n, v)| (n, V::Int64Value(v))).collect()
    }

    #[test]
    fn eager_marking_follows_an_iterator_to_its_executor() {
        // XProf makes the (last) `ExecutorState::Process` of an `id` and `iter_num` the parent of each
        // `IteratorGetNext` with the same two.
        let key = |id: i64, iter: i64| int_stats(&[("id", id), ("iter_num", iter)]);
        let got = eager_ops(
            vec![
                (
                    1,
                    vec![
                        ("EagerExecute", 0, 1000, int_stats(&[("is_func", 1)])),
                        ("ExecutorState::Process", 100, 100, key(7, 0)),
                        ("EagerExecute", 2000, 1000, int_stats(&[("is_func", 0)])),
                        ("ExecutorState::Process", 2100, 100, key(7, 0)),
                        ("ExecutorState::Process", 3500, 100, key(8, 0)),
                    ],
                ),
                (
                    2,
                    vec![
                        ("IteratorGetNextOp::DoCompute", 2200, 500, key(7, 0)),
                        ("i/Iter:MatMul", 2250, 50, vec![]),
                        ("IteratorGetNextAsOptionalOp::DoCompute", 3600, 500, key(8, 0)),
                        ("o/Optional:MatMul", 3650, 50, vec![]),
                        ("IteratorGetNextOp::DoCompute", 4200, 500, key(9, 0)),
                        ("u/Unmatched:MatMul", 4250, 50, vec![]),
                    ],
                ),
            ],
            &["i/Iter", "o/Optional", "u/Unmatched"],
        );
        assert_eq!(got, [true, false, false]);
    }

    #[test]
    fn a_context_connects_only_the_ends_of_one_process() {
        // XProf keeps a context's ends by process id (an event's `_pid`, else the plane's): a consumer
        // of another process is not the producer's child.
        let producer = |context: i64, pid: Option<i64>| {
            let mut s = int_stats(&[("is_func", 0), ("_pt", 1), ("_p", context)]);
            s.extend(pid.map(|p| ("_pid", V::Int64Value(p))));
            s
        };
        let consumer = |context: i64, pid: i64| int_stats(&[("_ct", 1), ("_c", context), ("_pid", pid)]);
        let got = eager_ops(
            vec![
                (1, vec![("EagerExecute", 0, 1000, producer(42, Some(7))), ("EagerExecute", 2000, 1000, producer(43, None))]),
                (
                    2,
                    vec![
                        ("ExecutorState::Process", 100, 500, consumer(42, 7)),
                        ("s/Same:Add", 150, 10, vec![]),
                        ("ExecutorState::Process", 2100, 500, consumer(43, 8)),
                        ("o/Other:Mul", 2150, 10, vec![]),
                    ],
                ),
            ],
            &["s/Same", "o/Other"],
        );
        assert_eq!(got, [true, false]);
    }

    #[test]
    fn eager_marking_follows_a_loop_iteration_to_its_first_executor() {
        // XProf's `ProcessTensorFlowLoop`: the executor events of a while-loop iteration (same `id`
        // and `iter_num`) are children of the iteration's first one. Not for a function whose only
        // iteration is 0 (no loop), nor for a tf.data function run's `id`.
        let key = |id: i64, iter: i64| int_stats(&[("id", id), ("iter_num", iter)]);
        let got = eager_ops(
            vec![
                (
                    1,
                    vec![
                        ("EagerExecute", 0, 1000, int_stats(&[("is_func", 0)])),
                        ("ExecutorState::Process", 100, 100, key(7, 1)),
                        ("ExecutorState::Process", 300, 100, key(8, 0)),
                        ("ExecutorState::Process", 500, 100, key(9, 1)),
                    ],
                ),
                (
                    2,
                    vec![
                        ("ExecutorState::Process", 1100, 100, key(7, 1)),
                        ("l/Loop:Add", 1150, 10, vec![]),
                        ("ExecutorState::Process", 1300, 100, key(8, 0)),
                        ("n/NoLoop:Mul", 1350, 10, vec![]),
                        ("ExecutorState::Process", 1500, 100, key(9, 1)),
                        ("d/Data:Sub", 1550, 10, vec![]),
                    ],
                ),
                (3, vec![("InstantiatedCapturedFunction::Run", 2000, 100, int_stats(&[("id", 9)]))]),
            ],
            &["l/Loop", "n/NoLoop", "d/Data"],
        );
        assert_eq!(got, [true, false, false]);
    }

    #[test]
    fn equally_near_eager_executes_are_taken_in_parent_order() {
        // A consumer's producers are its parents in plane order: two producers at the same distance,
        // the first one's `EagerExecute` wins.
        let producer = |context: i64| int_stats(&[("_pt", 1), ("_p", context)]);
        let consumer = |context: i64| int_stats(&[("_ct", 1), ("_c", context)]);
        let got = eager_ops(
            vec![
                (
                    1,
                    vec![
                        ("EagerExecute", 0, 100, int_stats(&[("is_func", 1)])),
                        ("FunctionRun", 10, 10, producer(1)),
                        ("EagerExecute", 200, 100, int_stats(&[("is_func", 0)])),
                        ("FunctionRun", 210, 10, producer(1)),
                        ("FunctionRun", 220, 10, producer(2)),
                        ("EagerExecute", 400, 100, int_stats(&[("is_func", 1)])),
                        ("FunctionRun", 410, 10, producer(2)),
                    ],
                ),
                (
                    2,
                    vec![
                        ("ExecutorState::Process", 1000, 100, consumer(1)),
                        ("f/First:Add", 1010, 10, vec![]),
                        ("ExecutorState::Process", 2000, 100, consumer(2)),
                        ("e/First:Add", 2010, 10, vec![]),
                    ],
                ),
            ],
            &["f/First", "e/First"],
        );
        assert_eq!(got, [false, true]);
    }

    #[test]
    fn a_context_with_64_producers_and_consumers_is_skipped() {
        // XProf connects no producer to a consumer in a context with 64 or more of both; producers
        // under no `EagerExecute` count too.
        let context = |fan_producers: usize, consumers: usize, context: i64, name: &'static str| {
            let mut producer_line = vec![
                ("EagerExecute", 0, 100_000, int_stats(&[("is_func", 0)])),
                ("Record", 10, 10, int_stats(&[("_pt", 1), ("_p", context)])),
            ];
            let other: Vec<Ev> =
                (0..fan_producers - 1).map(|i| ("Record", 200_000 + 10 * i as i64, 5, int_stats(&[("_pt", 1), ("_p", context)]))).collect();
            producer_line.extend(other);
            let mut consumer_line = Vec::new();
            for i in 0..consumers as i64 {
                consumer_line.push(("StartRegion", 1_000_000 + 100 * i, 50, int_stats(&[("_ct", 1), ("_c", context)])));
                consumer_line.push((name, 1_000_000 + 100 * i + 10, 10, vec![]));
            }
            eager_ops(vec![(1, producer_line), (2, consumer_line)], &[name.split(':').next().unwrap()])[0]
        };
        assert!(context(63, 64, 5, "a/Fan63:Add"), "63 producers: connected");
        assert!(context(64, 63, 5, "b/Consumers63:Add"), "63 consumers: connected");
        assert!(!context(64, 64, 5, "c/Fan64:Add"), "64 of both: skipped");
    }

    #[test]
    fn an_eager_execute_without_is_func_runs_a_compiled_function() {
        // XProf's `IsCompiledFunc`: no `is_func` stat is a function, on a plane without the stat at
        // all as on one where other events have it.
        let got = eager_ops(
            vec![(1, vec![("EagerExecute", 0, 100, vec![]), ("a/Absent:Add", 10, 10, vec![("is_eager", V::Int64Value(1))])])],
            &["a/Absent"],
        );
        assert_eq!(got, [false]);
        let got = eager_ops(
            vec![(
                1,
                vec![
                    ("EagerExecute", 0, 100, vec![]),
                    ("a/Absent:Add", 10, 10, vec![]),
                    ("EagerExecute", 200, 100, int_stats(&[("is_func", 0)])),
                    ("e/Eager:Add", 210, 10, vec![]),
                ],
            )],
            &["a/Absent", "e/Eager"],
        );
        assert_eq!(got, [false, true]);
    }

    #[test]
    fn eager_marking_is_exact_on_a_cycle_of_contexts() {
        // Two executor events each consuming the other's context: the search goes round the cycle
        // to the eager `EagerExecute` producing the first context.
        let ends = |consumes: i64, produces: i64| int_stats(&[("_ct", 1), ("_c", consumes), ("_pt", 1), ("_p", produces)]);
        let got = eager_ops(
            vec![
                (1, vec![("EagerExecute", 0, 100, int_stats(&[("is_func", 0)])), ("Record", 10, 10, int_stats(&[("_pt", 1), ("_p", 1)]))]),
                (2, vec![("ExecutorState::Process", 1000, 100, ends(1, 2)), ("x/X:Add", 1010, 10, vec![])]),
                (3, vec![("ExecutorState::Process", 2000, 100, ends(2, 1)), ("y/Y:Add", 2010, 10, vec![])]),
            ],
            &["x/X", "y/Y"],
        );
        assert_eq!(got, [true, true]);
    }

    #[test]
    fn a_trace_grouped_when_recorded_keeps_its_eager_stats() {
        // XProf neither groups nor marks a file whose events carry `group_id`s: the stats stand.
        let db = host_op_metrics_db(&space(vec![(
            1,
            vec![
                ("EagerExecute", 0, 100, vec![("is_func", V::Int64Value(1)), ("group_id", V::Int64Value(0))]),
                ("f/Func:MatMul", 10, 10, vec![("is_eager", V::Int64Value(1))]),
                ("g/Func:Add", 30, 10, vec![]),
            ],
        )]))
        .unwrap();
        let eager_of = |name: &str| db.metrics.iter().find(|m| m.name == name).unwrap().is_eager;
        assert!(eager_of("f/Func"));
        assert!(!eager_of("g/Func"));
    }

    #[test]
    fn eager_ops_are_those_run_under_an_eager_execute() {
        let eager = |is_func: i64| vec![("is_func", V::Int64Value(is_func))];
        let db = host_op_metrics_db(&space(vec![(
            1,
            vec![
                ("EagerExecute", 0, 100, eager(0)),
                ("KernelAndDeviceFunc::Run", 1, 98, vec![]),
                ("e/Eager:BatchDatasetV2", 10, 10, vec![]),
                ("EagerExecute", 200, 100, eager(1)),
                ("f/Func:MatMul", 210, 10, vec![("is_eager", V::Int64Value(1))]),
                // Not a TensorFlow op: its own stat decides.
                ("jit(f)/dot:", 400, 10, vec![("is_eager", V::Int64Value(1))]),
            ],
        )]))
        .unwrap();
        let eager_of = |name: &str| db.metrics.iter().find(|m| m.name == name).unwrap().is_eager;
        assert!(eager_of("e/Eager"));
        assert!(!eager_of("f/Func"), "a compiled function's op is not eager, whatever its stat says");
        assert!(eager_of("jit(f)/dot"));
    }
}
