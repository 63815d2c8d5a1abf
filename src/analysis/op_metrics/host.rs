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
//!    numbered in event order: one if its id (its stage id when it has one) is in the op table (eager
//!    if its `is_eager` stat is non-zero), and one more if it has a non-empty `tf_op` stat, parsed
//!    whatever its category. An allocator event carries the op it allocated for in `tf_op` — a bare name,
//!    an op of unknown type and the op's name — so it becomes another occurrence of that op: XProf's
//!    `sgd/Mul_12` shows 120 occurrences for 60 runs. The row keeps XProf's count and notes how many
//!    came from allocator events ([`super::OpMetrics::memory_event_occurrences`]).
//! 3. **Replay.** Activities are stably sorted by time and replayed on a stack: a begin pushes; an end
//!    pops until it finds its begin (what it pops on the way is lost; without one it is ignored). A
//!    matched op adds one occurrence, its duration, and its duration less its children's as self time;
//!    its duration is added to its parent's children. A child that ends exactly when its parent does is
//!    sorted after the parent's end (the parent began first): it is lost, and not taken off the parent's
//!    self time.
//! 4. **Totals.** A thread's total is the span from its first to its last activity, at least its op time;
//!    each thread adds an `IDLE` row (total less op time), even a thread with no ops. Threads merge by
//!    (stage id or 0, name): sums add, the first non-empty type wins.

use super::tf_op::{parse_tf_op_fullname, TfOpCategory};
use super::{OpMetricsDb, OpMetricsDbBuilder};
use crate::analysis::memory_events::{ALLOCATION, DEALLOCATION};
use crate::decode::xplane::{IdTable, Line, Plane, RawStat, StatValue, XSpace};
use crate::decode::DecodeError;
use crate::fast_hash::FastMap;
use std::borrow::Cow;

/// The plane XProf reads host ops from.
pub const HOST_PLANE: &str = "/host:CPU";

/// XProf's first derived-line id (`kThreadIdDerivedMin`), compared as a 32-bit int.
const DERIVED_LINE_MIN: i32 = 0xdead_beef_u32 as i32;
/// XProf's derived-line ids span this many after the first.
const DERIVED_LINE_SPAN: i32 = 289;

/// The host op db of `space`: empty (no rows, zero totals) when it has no host plane.
pub fn host_op_metrics_db(space: &XSpace) -> Result<OpMetricsDb, DecodeError> {
    let Some(plane) = space.plane_named(HOST_PLANE) else { return Ok(OpMetricsDb::default()) };
    let stats = Stats::new(plane);
    let ops = op_table(space, plane, &stats)?;
    let memory_ids: Vec<i64> = [ALLOCATION, DEALLOCATION].iter().flat_map(|n| plane.event_metadata_ids(n)).collect();
    let mut db = OpMetricsDbBuilder::new();
    for line in &plane.lines {
        if is_derived_line(line.header.id) {
            continue;
        }
        let mut thread = Thread::default();
        collect_activities(space, plane, line, &stats, &ops, &memory_ids, &mut thread)?;
        db.combine(&replay(&mut thread), false);
    }
    Ok(db.finish())
}

/// XProf's `IsDerivedThreadId` on a line id truncated to 32 bits.
fn is_derived_line(line_id: i64) -> bool {
    let id = line_id as i32;
    (DERIVED_LINE_MIN..=DERIVED_LINE_MIN.wrapping_add(DERIVED_LINE_SPAN)).contains(&id)
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
        const NAMES: [&str; 4] = ["is_eager", "tf_op", "input_pipeline_stage_id", "input_pipeline_stage_category"];
        let [is_eager, tf_op, stage_id, stage_category] = NAMES.map(|n| plane.stat_id(n));
        let selection = IdTable::new([is_eager, tf_op, stage_id, stage_category].into_iter().flatten().map(|id| (id, true)));
        Stats { is_eager, tf_op, stage_id, stage_category, selection }
    }
}

/// The value of the event's first stat of metadata id `id` (XProf's `GetStat` takes the first); a stat
/// without a value reads as an empty string.
fn first_stat<'a>(plane: &'a Plane, stats: &[RawStat<'a>], id: Option<i64>) -> Result<Option<StatValue<'a>>, DecodeError> {
    let Some(id) = id else { return Ok(None) };
    match stats.iter().find(|s| s.metadata_id == id) {
        Some(s) => Ok(Some(plane.raw_stat_value(s)?.unwrap_or(StatValue::Str(Cow::Borrowed(""))))),
        None => Ok(None),
    }
}

/// A stat's `int64_value`, 0 for any other kind (XProf's `IntValue`).
fn int_value(v: &StatValue) -> i64 {
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

/// Step 1 of the module doc: the op of each metadata id (or stage id).
fn op_table<'a>(space: &'a XSpace, plane: &'a Plane, stats: &Stats) -> Result<FastMap<i64, HostOp<'a>>, DecodeError> {
    let mut ops: FastMap<i64, HostOp<'a>> = FastMap::default();
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
                        ops.entry(stage_id).or_insert(op);
                    }
                    return Ok(());
                }
                if let Some(op) = known(name) {
                    ops.entry(e.header.metadata_id).or_insert(op);
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

/// What one begin/end pair enters.
#[derive(Debug, Clone)]
struct Occurrence<'a> {
    op: HostOp<'a>,
    is_eager: bool,
    /// The pair comes from an allocator event's `tf_op` stat.
    from_memory_event: bool,
}

/// One thread's activities and the occurrences they pair up.
#[derive(Default)]
struct Thread<'a> {
    activities: Vec<Activity>,
    occurrences: Vec<Occurrence<'a>>,
}

/// Step 2 of the module doc, for one line.
fn collect_activities<'a>(
    space: &'a XSpace,
    plane: &'a Plane,
    line: &Line,
    stats: &Stats,
    ops: &FastMap<i64, HostOp<'a>>,
    memory_ids: &[i64],
    thread: &mut Thread<'a>,
) -> Result<(), DecodeError> {
    let line_start_ps = line.header.timestamp_ns.wrapping_mul(1000);
    thread.activities.reserve(line.event_count * 2);
    space.for_each_raw_event(
        line,
        &stats.selection,
        |_| true,
        |_, e| {
            let begin_ps = line_start_ps.wrapping_add(e.header.offset_ps) as u64;
            let end_ps = begin_ps.wrapping_add(e.header.duration_ps as u64);
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
            if let Some(op) = ops.get(&key) {
                let is_eager = first_stat(plane, e.stats, stats.is_eager)?.is_some_and(|v| int_value(&v) != 0);
                push(Occurrence { op: op.clone(), is_eager, from_memory_event: false });
            }
            if let Some(v) = first_stat(plane, e.stats, stats.tf_op)? {
                let fullname = text_value(v);
                if !fullname.is_empty() {
                    let op = HostOp::parse(fullname, 0).1;
                    push(Occurrence { op, is_eager: false, from_memory_event: memory_ids.contains(&e.header.metadata_id) });
                }
            }
            Ok(())
        },
    )
}

/// Steps 3–4 of the module doc for one thread: its op db with its `IDLE` row. Sorts the activities.
fn replay(thread: &mut Thread) -> OpMetricsDb {
    let mut db = OpMetricsDbBuilder::new();
    let activities = &mut thread.activities;
    activities.sort_by_key(|a| a.time_ps);
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
        let op = &occurrence.op;
        let time_ps = a.time_ps.saturating_sub(begin_ps);
        let self_ps = time_ps.wrapping_sub(children_ps);
        let row = db.row(op.id as u64, &op.name);
        if row.category.is_empty() {
            row.category = op.type_.to_string();
        }
        row.num_cores = 1;
        row.is_eager |= occurrence.is_eager;
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
    db
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
