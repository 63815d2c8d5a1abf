//! The step events of a GPU trace (XProf's `ConvertDeviceTraceXPlaneToStepEvents`): on a trace with
//! GPUs, XProf takes the steps from the devices, not the host. Each GPU plane's derived `Steps` line
//! gives the step markers (one span per run of events of one group); the kernels and copies on its
//! stream lines that carry a correlation id and a group id are the typed events; a plane's steps are
//! those it has both markers and events of, and the planes' steps are then merged.
//!
//! Where the groups come from ([`Groups`]): a trace grouped when it was recorded (TensorFlow's profiler
//! groups before saving) carries them as `group_id` stats on its device events and its derived `Steps`
//! line. A GPU trace saved ungrouped (JAX's) is grouped by XProf across the host and the devices: the
//! host's events are grouped ([`crate::analysis::step_groups`]), each kernel or copy inherits the group
//! of the host event that launched it (the one with its correlation id), then each event still without
//! a group takes, in time order, the group of the last grouped event before it
//! (`ProcessUngroupedEvents`: JAX's copies dispatched from its transfer threads, launched outside any
//! step, so count in the step before them), and each plane's `Steps` line is derived from them, one
//! span per run of events of one group in time order (`DeriveStepEventsFromGroups`). A host without
//! step markers gives no group, so no step.

use super::events::{Span, StepEvents};
use super::EventType;
use crate::analysis::device_planes::{is_derived_line, DERIVED_LINE_ID_MIN};
use crate::analysis::op_metrics::tf_op::{parse_tf_op_fullname, TfOpCategory};
use crate::analysis::step_groups;
use crate::decode::xplane::names::{CORRELATION_ID, GROUP_ID};
use crate::decode::xplane::{Plane, XSpace};
use crate::decode::DecodeError;
use std::collections::{BTreeMap, HashMap};

/// The id of the derived line holding the steps (XProf's `kThreadIdStepInfo`, the first derived id).
const STEP_LINE_ID: i32 = DERIVED_LINE_ID_MIN;

/// The stats read from device events (`shape`: the tensor shapes of the op that launched it).
const STATS: [&str; 5] = [GROUP_ID, CORRELATION_ID, "shape", "device_offset_ps", "device_duration_ps"];

/// What a device event's stats say.
#[derive(Default)]
struct EventStats {
    group_id: Option<i64>,
    correlation_id: Option<i64>,
    /// Whether its tensor shapes are known and name a half-precision one.
    half_shapes: Option<bool>,
    device_offset_ps: Option<i64>,
    device_duration_ps: Option<i64>,
}

/// Where the device events' groups come from.
pub enum Groups {
    /// The `group_id` stats the trace was saved with; the markers are the derived `Steps` line's.
    Recorded,
    /// The groups of the host events that launched them, by correlation id ([`launch_groups`]); the
    /// markers are derived from the events (named by their group id, as XProf's derived line names them).
    Launched { by_correlation: HashMap<i64, i64> },
}

/// The step events of the GPU `planes` of `space`, by group id (all planes merged).
pub fn gpu_step_events(space: &XSpace, planes: &[&Plane], groups: &Groups) -> Result<BTreeMap<i64, StepEvents>, DecodeError> {
    let mut steps: BTreeMap<i64, StepEvents> = BTreeMap::new();
    for plane in planes {
        for (group, e) in plane_step_events(space, plane, groups)? {
            let step = steps.entry(group).or_default();
            step.markers.extend(e.markers);
            step.events.extend(e.events);
        }
    }
    Ok(steps)
}

/// The groups XProf gives an ungrouped trace's launches: its host plane grouped, and each host event
/// with a correlation id (a kernel or copy launch) in its group. `Groups::Launched` of no group when the
/// trace has no host plane or names TensorFlow loop ops (XProf then groups nothing).
pub fn launch_groups(space: &XSpace) -> Result<Groups, DecodeError> {
    let mut by_correlation = HashMap::new();
    let Some(host) = space.plane_named(crate::decode::xplane::names::HOST_PLANE) else {
        return Ok(Groups::Launched { by_correlation });
    };
    let correlation = host.stat_id(CORRELATION_ID);
    // (tracked rank, correlation id) of each launch.
    let mut launches: Vec<(usize, i64)> = Vec::new();
    let groups = step_groups::group_every_event(space, host, &[CORRELATION_ID], |rank, _, _, ev| {
        for raw in ev.stats.iter().filter(|r| Some(r.metadata_id) == correlation) {
            if let Some(id) = host.raw_stat_value(raw)?.and_then(|v| v.as_i64()) {
                launches.push((rank, id));
            }
        }
        Ok(())
    })?;
    for (rank, id) in launches {
        if let Some(group) = groups.group_id(rank) {
            by_correlation.insert(id, group);
        }
    }
    Ok(Groups::Launched { by_correlation })
}

/// One device event of a launched-groups plane, before the ungrouped ones take a group.
struct Launch {
    span: Span,
    group: Option<i64>,
    /// What it is, for an event with a correlation id (a kernel or copy; the others only stretch
    /// the steps).
    typed: Option<EventType>,
}

/// One plane's step events: its markers, and its typed events for the steps it has markers of.
fn plane_step_events(space: &XSpace, plane: &Plane, groups: &Groups) -> Result<BTreeMap<i64, StepEvents>, DecodeError> {
    let names: Vec<&str> = STATS.to_vec();
    let selection = plane.stat_selection(&names);
    let ids: Vec<Option<i64>> = STATS.iter().map(|s| plane.stat_id(s)).collect();
    let mut markers: BTreeMap<i64, Vec<Span>> = BTreeMap::new();
    let mut events: BTreeMap<i64, Vec<(EventType, Span)>> = BTreeMap::new();
    // For launched groups: every event of the plane, grouped or not.
    let mut launches: Vec<Launch> = Vec::new();
    for line in &plane.lines {
        let line_id = line.header.id as i32;
        let is_step_line = matches!(groups, Groups::Recorded) && line_id == STEP_LINE_ID;
        if !is_step_line && is_derived_line(line.header.id) {
            continue;
        }
        let base_ps = line.header.timestamp_ns.saturating_mul(1000);
        space.for_each_raw_event(
            line,
            &selection,
            |_| true,
            |_, ev| {
                let mut s = EventStats::default();
                for raw in ev.stats {
                    let Some(value) = plane.raw_stat_value(raw)? else { continue };
                    match ids.iter().position(|id| *id == Some(raw.metadata_id)) {
                        Some(0) => s.group_id = value.as_i64(),
                        Some(1) => s.correlation_id = value.as_i64(),
                        Some(2) => s.half_shapes = value.as_str().filter(|t| !t.is_empty()).map(|t| t.contains("half")),
                        Some(3) => s.device_offset_ps = value.as_i64(),
                        Some(4) => s.device_duration_ps = value.as_i64(),
                        _ => {}
                    }
                }
                let begin_ps = base_ps.saturating_add(ev.header.offset_ps);
                let span = Span { begin_ps, end_ps: begin_ps.saturating_add(ev.header.duration_ps) };
                let typed =
                    || s.correlation_id.is_some_and(|c| c >= 0).then(|| classify(plane.event_name(ev.header.metadata_id), s.half_shapes));
                match (groups, s.group_id) {
                    (Groups::Launched { by_correlation }, _) => {
                        let group = s.correlation_id.and_then(|c| by_correlation.get(&c).copied());
                        launches.push(Launch { span, group, typed: typed() });
                    }
                    (Groups::Recorded, Some(group)) if is_step_line => markers.entry(group).or_default().push(device_span(span, &s)),
                    (Groups::Recorded, Some(group)) if group >= 0 => {
                        if let Some(t) = typed() {
                            events.entry(group).or_default().push((t, span));
                        }
                    }
                    (Groups::Recorded, _) => {}
                }
                Ok(())
            },
        )?;
    }
    if !launches.is_empty() {
        // XProf's order of a plane's events (`GetSortedEvents`): by start, the shorter first at one.
        launches.sort_by_key(|l| (l.span.begin_ps, l.span.duration_ps()));
        give_ungrouped_the_group_before(launches.iter_mut().map(|l| &mut l.group));
        for (span, group) in derived_step_line(launches.iter().filter_map(|l| Some((l.span, l.group?)))) {
            markers.entry(group).or_default().push(span);
        }
        for l in launches {
            if let (Some(group), Some(t)) = (l.group, l.typed) {
                if group >= 0 {
                    events.entry(group).or_default().push((t, l.span));
                }
            }
        }
    }
    // XProf keeps a plane's steps that have both events and markers of this plane.
    Ok(events
        .into_iter()
        .filter_map(|(group, events)| Some((group, StepEvents { markers: markers.remove(&group)?, events, name: None })))
        .collect())
}

/// XProf's `ProcessUngroupedEvents`, run on each GPU plane after grouping, over the groups of the
/// plane's events in time order: an event without a group takes the group of the last grouped one
/// before it (a copy or a kernel launched outside any step then counts in the step before it, and
/// stretches it); those before the first grouped event stay ungrouped.
pub fn give_ungrouped_the_group_before<'g>(groups: impl IntoIterator<Item = &'g mut Option<i64>>) {
    let mut last = None;
    for group in groups {
        match *group {
            Some(g) => last = Some(g),
            None => *group = last,
        }
    }
}

/// The `Steps` line XProf derives from a plane's grouped events, given in time order: one span per
/// run of events of one group, from its first start to its last end.
pub fn derived_step_line(grouped: impl Iterator<Item = (Span, i64)>) -> Vec<(Span, i64)> {
    let mut line: Vec<(Span, i64)> = Vec::new();
    for (span, group) in grouped {
        match line.last_mut() {
            Some((last, g)) if *g == group => last.end_ps = last.end_ps.max(span.end_ps),
            _ => line.push((span, group)),
        }
    }
    line
}

/// A device event's span as the device timed it (`device_offset_ps`, `device_duration_ps`) where it
/// says so, else as recorded (XProf's `GetDeviceEventTimespan`).
fn device_span(span: Span, s: &EventStats) -> Span {
    let begin_ps = s.device_offset_ps.unwrap_or(span.begin_ps);
    let duration_ps = s.device_duration_ps.unwrap_or(span.end_ps - span.begin_ps);
    Span { begin_ps, end_ps: begin_ps.saturating_add(duration_ps) }
}

/// What a GPU event is (XProf's `ClassifyGpuEvent`): a copy by its direction, NCCL collectives, else
/// compute in half precision (by its tensor shapes, `half_shapes`, or its name where it has none) or
/// in single.
fn classify(name: &str, half_shapes: Option<bool>) -> EventType {
    match parse_tf_op_fullname(name).category {
        TfOpCategory::MemcpyHToD => EventType::HostToDevice,
        TfOpCategory::MemcpyDToH => EventType::DeviceToHost,
        TfOpCategory::MemcpyDToD => EventType::DeviceToDevice,
        _ if name.get(..4).is_some_and(|p| p.eq_ignore_ascii_case("nccl")) => EventType::DeviceCollectives,
        _ => {
            if half_shapes.unwrap_or_else(|| name.contains("half") || name.contains("fp16")) {
                EventType::DeviceCompute16
            } else {
                EventType::DeviceCompute32
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpu_events_are_classified_as_xprof_does() {
        assert_eq!(classify("MemcpyHToD", None), EventType::HostToDevice);
        assert_eq!(classify("MEMCPYDToH", None), EventType::DeviceToHost);
        assert_eq!(classify("MemcpyDToD", None), EventType::DeviceToDevice);
        assert_eq!(classify("ncclAllReduceRingLLKernel", None), EventType::DeviceCollectives);
        assert_eq!(classify("volta_fp16_sgemm", None), EventType::DeviceCompute16);
        assert_eq!(classify("volta_fp16_sgemm", Some(false)), EventType::DeviceCompute32);
        assert_eq!(classify("volta_sgemm", Some(true)), EventType::DeviceCompute16);
        assert_eq!(classify("volta_sgemm", None), EventType::DeviceCompute32);
    }

    /// A host with two steps (`train` roots, `_r` 1) each launching a kernel (correlation ids 5, 6),
    /// and a GPU running those kernels and one launched outside any step (7), after a memset with no
    /// correlation id.
    fn ungrouped_gpu_trace() -> XSpace {
        use crate::analysis::test_xspace::{self as tx, TestLine, TestPlane};
        use crate::proto::xplane as pb;
        use pb::x_stat::Value as V;
        let corr = |c| vec![tx::stat(2, V::Int64Value(c))];
        let root = vec![tx::stat(1, V::Int64Value(1))];
        let host = TestPlane {
            meta: pb::XPlane {
                name: "/host:CPU".into(),
                event_metadata: tx::event_metadata(&[(1, "train"), (2, "hipLaunchKernel")]),
                stat_metadata: tx::stat_metadata(&[(1, "_r"), (2, CORRELATION_ID)]),
                ..Default::default()
            },
            lines: vec![TestLine {
                header: pb::XLine { id: 1, name: "python".into(), ..Default::default() },
                events: vec![
                    tx::event(1, 0, 100, root.clone()),
                    tx::event(2, 10, 5, corr(5)),
                    tx::event(1, 200, 100, root),
                    tx::event(2, 210, 5, corr(6)),
                    tx::event(2, 400, 5, corr(7)),
                ],
            }],
        };
        let gpu = TestPlane {
            meta: pb::XPlane {
                name: "/device:GPU:0".into(),
                event_metadata: tx::event_metadata(&[(1, "loop_fusion_kernel"), (2, "Memset")]),
                stat_metadata: tx::stat_metadata(&[(2, CORRELATION_ID)]),
                ..Default::default()
            },
            lines: vec![TestLine {
                header: pb::XLine { id: 16, name: "Stream #16(Kernel)".into(), ..Default::default() },
                events: vec![
                    tx::event(1, 20, 30, corr(5)),
                    tx::event(1, 220, 40, corr(6)),
                    tx::event(2, 300, 20, vec![]),
                    tx::event(1, 420, 10, corr(7)),
                ],
            }],
        };
        tx::index(&[host, gpu])
    }

    #[test]
    fn kernels_take_the_steps_of_the_host_events_that_launched_them() {
        let space = ungrouped_gpu_trace();
        let db = super::super::step_db(&space).unwrap();
        assert!(!db.device_steps_unsupported);
        // Each step spans its kernels (the derived step line). The events launched outside any step
        // take the step before them: the memset stretches the second step without counting in it
        // (no correlation id), the last kernel stretches it and counts as its compute.
        let steps: Vec<(u64, u64)> = db.steps.iter().map(|s| (s.duration_ps, s.ps(EventType::DeviceCompute32))).collect();
        assert_eq!(steps, [(30, 30), (210, 50)]);
        assert_ne!(db.steps[0].group_id, db.steps[1].group_id);
    }

    #[test]
    fn derived_steps_are_runs_of_one_group_in_time_order() {
        let span = |b, e| Span { begin_ps: b, end_ps: e };
        let line =
            derived_step_line([(span(0, 10), 1), (span(5, 40), 1), (span(50, 60), 1), (span(70, 80), 2), (span(90, 95), 1)].into_iter());
        assert_eq!(line, [(span(0, 60), 1), (span(70, 80), 2), (span(90, 95), 1)]);
    }

    #[test]
    fn a_device_timed_span_wins() {
        let span = Span { begin_ps: 10, end_ps: 30 };
        assert_eq!(device_span(span, &EventStats::default()), span);
        let s = EventStats { device_offset_ps: Some(12), device_duration_ps: Some(5), ..EventStats::default() };
        assert_eq!(device_span(span, &s), Span { begin_ps: 12, end_ps: 17 });
    }
}
