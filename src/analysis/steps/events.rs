//! The host plane's step events: per step group, its markers (spans that may be the step) and its
//! typed events (`ConvertHostThreadsXPlaneToStepEvents`).

use super::EventType;
use crate::analysis::op_metrics::tf_op::{parse_tf_op_fullname, TfOpCategory};
use crate::analysis::step_groups::{self, Grouper, StepGroups};
use crate::decode::xplane::names::{GROUP_ID, STEP_NAME};
use crate::decode::xplane::{IdTable, Plane, RawEvent, StatValue, XSpace};
use crate::decode::DecodeError;
use std::collections::{BTreeMap, HashSet};

/// A span of time, in ps from the trace's start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub begin_ps: i64,
    pub end_ps: i64,
}

impl Span {
    pub fn duration_ps(&self) -> u64 {
        self.end_ps.saturating_sub(self.begin_ps).max(0) as u64
    }

    fn includes(&self, other: &Span) -> bool {
        self.begin_ps <= other.begin_ps && other.end_ps <= self.end_ps
    }
}

/// The step events of one group, all host lines together (lines in order, events in order).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StepEvents {
    pub markers: Vec<Span>,
    pub events: Vec<(EventType, Span)>,
    /// The `step_name` grouping gave the group's root, if it named one.
    pub name: Option<String>,
}

/// What an event's name makes it, before its group and stats are known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Role {
    /// Real host work; waiting for input instead when it is a root input-pipeline stage.
    #[default]
    Compute,
    /// `train…`, `test…`, `TraceContext…` without a `/`: a step marker whatever its group.
    Marker,
    /// Eager dispatch and function runs: wrappers around the real work, not counted.
    Wrapper,
    Typed(EventType),
}

fn role_of(name: &str) -> Role {
    let op = parse_tf_op_fullname(name);
    if ["train", "test", "TraceContext"].iter().any(|p| name.starts_with(p)) && !name.contains('/') {
        Role::Marker
    } else if ["EagerExecute", "EagerLocalExecute", "EagerKernelExecute", "FunctionRun"].iter().any(|p| name.starts_with(p)) {
        Role::Wrapper
    } else if op.category == TfOpCategory::MemcpyHToD || (op.category == TfOpCategory::TensorFlow && is_infeed_enqueue(op.type_)) {
        Role::Typed(EventType::HostToDevice)
    } else if op.category == TfOpCategory::MemcpyHToH {
        Role::Typed(EventType::HostToHost)
    } else if name.get(..15).is_some_and(|p| p.eq_ignore_ascii_case("IteratorGetNext")) {
        Role::Typed(EventType::HostWaitInput)
    } else {
        Role::Compute
    }
}

/// An op type that enqueues infeed for a TPU (`InfeedEnqueue`, `InfeedEnqueueTuple`).
pub fn is_infeed_enqueue(op_type: &str) -> bool {
    op_type.starts_with("InfeedEnqueue")
}

/// The stat naming an input-pipeline stage (tf.data's newer instrumentation).
const STAGE_NAME: &str = "input_pipeline_stage_name";

/// One host event as the scan saw it: span, role and whether it is a root input-pipeline stage.
struct Seen {
    span: Span,
    role: Role,
    root_stage: bool,
}

/// The step events of the host `plane`, by group id. The groups are XProf's grouping of the plane
/// ([`step_groups`]), or, in a file grouped when it was recorded (which XProf does not group again),
/// the `group_id` and `step_name` stats its events carry.
pub fn host_step_events(space: &XSpace, plane: &Plane) -> Result<BTreeMap<i64, StepEvents>, DecodeError> {
    let roles: IdTable<Role> = IdTable::new(plane.meta.event_metadata.iter().map(|(&id, m)| (id, role_of(&m.name))));
    let stages = Stages::new(space, plane)?;
    let mut names: Vec<&str> = step_groups::STATS.to_vec();
    names.extend([STAGE_NAME, GROUP_ID, STEP_NAME]);
    let stats = plane.stat_selection(&names);
    let mut source = if step_groups::recorded_grouped(space) {
        Source::Recorded(Recorded::new(plane))
    } else {
        Source::Grouping(Box::new(Grouper::new(space, plane, |_| true)))
    };
    let mut seen: Vec<Seen> = Vec::with_capacity(plane.event_count());
    for line in &plane.lines {
        if let Source::Grouping(g) = &mut source {
            g.start_line(line);
        }
        let base_ps = line.header.timestamp_ns.saturating_mul(1000);
        let mut stack = StageStack::default();
        space.for_each_raw_event(
            line,
            &stats,
            |_| true,
            |_, ev| {
                match &mut source {
                    Source::Grouping(g) => g.push(ev)?,
                    Source::Recorded(r) => r.push(plane, ev, seen.len())?,
                }
                let h = &ev.header;
                let begin_ps = base_ps.saturating_add(h.offset_ps);
                let span = Span { begin_ps, end_ps: begin_ps.saturating_add(h.duration_ps) };
                let root_stage = match &stages {
                    Some(s) => stack.push(span, s.is_stage(plane, ev)?, s.has_async_parent(plane, ev)?),
                    None => false,
                };
                seen.push(Seen { span, role: roles.get(h.metadata_id), root_stage });
                Ok(())
            },
        )?;
    }
    let groups = match source {
        Source::Grouping(g) => g.finish(),
        Source::Recorded(r) => StepGroups::recorded(r.groups, r.step_names),
    };
    let mut steps: BTreeMap<i64, StepEvents> = BTreeMap::new();
    for (rank, s) in seen.into_iter().enumerate() {
        let Some(group) = groups.group_id(rank) else { continue };
        let step = steps.entry(group).or_default();
        let step_name = groups.step_name(rank);
        match s.role {
            Role::Marker => step.markers.push(s.span),
            _ if step_name.is_some() => step.markers.push(s.span),
            Role::Wrapper => {}
            Role::Compute => step.events.push((if s.root_stage { EventType::HostWaitInput } else { EventType::HostCompute }, s.span)),
            Role::Typed(t) => step.events.push((t, s.span)),
        }
        if let (Some(name), None) = (step_name, &step.name) {
            step.name = Some(name.to_string());
        }
    }
    Ok(steps)
}

/// Where the host events' groups come from.
enum Source<'a> {
    /// XProf's grouping, run over the plane.
    Grouping(Box<Grouper<'a>>),
    Recorded(Recorded),
}

/// The groups a file grouped when it was recorded carries, read event by event: each one's own
/// `group_id` stat and the `step_name` stats (XProf reads the event's own stats).
struct Recorded {
    ids: (Option<i64>, Option<i64>),
    groups: Vec<Option<i64>>,
    step_names: Vec<(usize, String)>,
}

impl Recorded {
    fn new(plane: &Plane) -> Self {
        let ids = (plane.stat_id(GROUP_ID), plane.stat_id(STEP_NAME));
        Recorded { ids, groups: Vec::with_capacity(plane.event_count()), step_names: Vec::new() }
    }

    /// Reads event `ev`, the `rank`-th of the plane.
    fn push(&mut self, plane: &Plane, ev: &RawEvent, rank: usize) -> Result<(), DecodeError> {
        let mut group = None;
        for s in ev.stats {
            if Some(s.metadata_id) == self.ids.0 {
                group = plane.raw_stat_value(s)?.and_then(|v| v.as_i64());
            } else if Some(s.metadata_id) == self.ids.1 {
                if let Some(name) = plane.raw_stat_value(s)?.and_then(|v| v.as_str().map(str::to_string)).filter(|n| !n.is_empty()) {
                    self.step_names.push((rank, name));
                }
            }
        }
        self.groups.push(group);
        Ok(())
    }
}

/// Input-pipeline stages, for traces that name them: which events are stages, and which have a
/// parent stage on another thread (their consumer context is some event's producer context).
struct Stages {
    stage_stat: i64,
    consumer: (Option<i64>, Option<i64>),
    /// Producer contexts (type, id) of the whole plane.
    producers: HashSet<(i64, i64)>,
    /// Event metadata that names a stage itself.
    stage_metadata: HashSet<i64>,
}

impl Stages {
    /// `None` when the plane names no stage (then no event is one, and no extra pass is made).
    fn new(space: &XSpace, plane: &Plane) -> Result<Option<Self>, DecodeError> {
        let Some(stage_stat) = plane.stat_id(STAGE_NAME) else { return Ok(None) };
        let (pt, p) = (plane.stat_id("_pt"), plane.stat_id("_p"));
        let stage_metadata = plane
            .meta
            .event_metadata
            .iter()
            .filter(|(_, m)| m.stats.iter().any(|s| s.metadata_id == stage_stat && plane.stat_value(s).is_some_and(|v| non_empty(&v))))
            .map(|(&id, _)| id)
            .collect();
        let mut producers = HashSet::new();
        let selection = plane.stat_selection(&["_pt", "_p"]);
        for line in &plane.lines {
            space.for_each_raw_event(
                line,
                &selection,
                |_| true,
                |_, ev| {
                    let (mut ty, mut id) = (None, None);
                    for s in ev.stats {
                        let v = plane.raw_stat_value(s)?.and_then(|v| v.as_i64());
                        if Some(s.metadata_id) == pt {
                            ty = v;
                        } else if Some(s.metadata_id) == p {
                            id = v;
                        }
                    }
                    if let (Some(t), Some(i)) = (ty, id) {
                        producers.insert((t, i));
                    }
                    Ok(())
                },
            )?;
        }
        Ok(Some(Stages { stage_stat, consumer: (plane.stat_id("_ct"), plane.stat_id("_c")), producers, stage_metadata }))
    }

    fn is_stage(&self, plane: &Plane, ev: &RawEvent) -> Result<bool, DecodeError> {
        // The event's own stat, else its metadata's.
        match ev.stats.iter().find(|s| s.metadata_id == self.stage_stat) {
            Some(s) => Ok(plane.raw_stat_value(s)?.is_some_and(|v| non_empty(&v))),
            None => Ok(self.stage_metadata.contains(&ev.header.metadata_id)),
        }
    }

    fn has_async_parent(&self, plane: &Plane, ev: &RawEvent) -> Result<bool, DecodeError> {
        let (mut ty, mut id) = (None, None);
        for s in ev.stats {
            if Some(s.metadata_id) == self.consumer.0 {
                ty = plane.raw_stat_value(s)?.and_then(|v| v.as_i64());
            } else if Some(s.metadata_id) == self.consumer.1 {
                id = plane.raw_stat_value(s)?.and_then(|v| v.as_i64());
            }
        }
        Ok(ty.zip(id).is_some_and(|pair| self.producers.contains(&pair)))
    }
}

fn non_empty(v: &StatValue) -> bool {
    v.as_str().is_some_and(|s| !s.is_empty())
}

/// XProf's ancestor stack over one line: an event below a stage (on its line, or through a consumer
/// context from another line) is a stage's descendant.
#[derive(Default)]
struct StageStack {
    /// (span, is a stage, is a stage's descendant) of the enclosing events.
    open: Vec<(Span, bool, bool)>,
}

impl StageStack {
    /// Pushes the next event; returns whether it is a root stage (a stage under no stage).
    fn push(&mut self, span: Span, is_stage: bool, async_parent: bool) -> bool {
        while self.open.last().is_some_and(|(s, _, _)| !s.includes(&span)) {
            self.open.pop();
        }
        let descendant = async_parent || self.open.last().is_some_and(|&(_, stage, desc)| stage || desc);
        self.open.push((span, is_stage, descendant));
        is_stage && !descendant
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(begin_ps: i64, end_ps: i64) -> Span {
        Span { begin_ps, end_ps }
    }

    #[test]
    fn only_a_stage_under_no_stage_is_a_root_stage() {
        let mut stack = StageStack::default();
        assert!(stack.push(span(0, 100), true, false));
        // Inside the first stage: a descendant, not a root, and so is what it encloses.
        assert!(!stack.push(span(10, 50), true, false));
        assert!(!stack.push(span(20, 30), false, false));
        // After it: a root again, unless its parent stage runs on another thread.
        assert!(stack.push(span(200, 300), true, false));
        assert!(!stack.push(span(400, 500), true, true));
    }

    /// A CPU-only file grouped when it was recorded: its step events carry `group_id` and `step_name`
    /// stats, and nothing XProf's grouping would take for a root (no `_r`, no `train…` name).
    #[test]
    fn a_file_grouped_when_recorded_takes_its_steps_from_its_stats() {
        use crate::analysis::test_xspace::{self as tx, TestLine, TestPlane};
        use crate::proto::xplane as pb;
        use pb::x_stat::Value as V;
        let group = |g| tx::stat(1, V::Int64Value(g));
        let step = |g: i64| vec![group(g), tx::stat(2, V::StrValue(format!("train {g}")))];
        let host = TestPlane {
            meta: pb::XPlane {
                name: "/host:CPU".into(),
                event_metadata: tx::event_metadata(&[(1, "StepFunction"), (2, "MatMul")]),
                stat_metadata: tx::stat_metadata(&[(1, GROUP_ID), (2, STEP_NAME)]),
                ..Default::default()
            },
            lines: vec![TestLine {
                header: pb::XLine { id: 1, name: "python".into(), ..Default::default() },
                events: vec![
                    tx::event(1, 0, 100, step(0)),
                    tx::event(2, 10, 60, vec![group(0)]),
                    tx::event(1, 100, 100, step(1)),
                    tx::event(2, 110, 30, vec![group(1)]),
                    tx::event(2, 250, 30, vec![]),
                ],
            }],
        };
        let db = super::super::step_db(&tx::index(&[host])).unwrap();
        let steps: Vec<(&str, u64, u64, u64)> =
            db.steps.iter().map(|s| (s.name.as_str(), s.duration_ps, s.ps(EventType::HostCompute), s.ps(EventType::Unknown))).collect();
        assert_eq!(steps, [("train 0", 100, 60, 40), ("train 1", 100, 30, 70)]);
    }

    #[test]
    fn names_give_xprofs_roles() {
        assert_eq!(role_of("train"), Role::Marker);
        assert_eq!(role_of("TraceContext"), Role::Marker);
        assert_eq!(role_of("train_step/loss"), Role::Compute);
        assert_eq!(role_of("EagerKernelExecute"), Role::Wrapper);
        assert_eq!(role_of("IteratorGetNextOp::DoCompute"), Role::Typed(EventType::HostWaitInput));
        assert_eq!(role_of("MemcpyHToD"), Role::Typed(EventType::HostToDevice));
        assert_eq!(role_of("infeed/enqueue:InfeedEnqueueTuple"), Role::Typed(EventType::HostToDevice));
        assert_eq!(role_of("MEMCPYHToH"), Role::Typed(EventType::HostToHost));
        assert_eq!(role_of("model/conv:Conv2D"), Role::Compute);
    }
}
