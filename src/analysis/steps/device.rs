//! The step events of a GPU trace (XProf's `ConvertDeviceTraceXPlaneToStepEvents`): on a trace with
//! GPUs, XProf takes the steps from the devices, not the host. Each GPU plane's derived `Steps` line
//! gives the step markers (one span per run of events of one group); the kernels and copies on its
//! stream lines that carry a correlation id and a group id are the typed events; a plane's steps are
//! those it has both markers and events of, and the planes' steps are then merged.
//!
//! The groups are the ones the file was saved with: a trace grouped when it was recorded (TensorFlow's
//! profiler groups before saving) carries them as `group_id` stats on its device events and its derived
//! lines. A GPU trace saved ungrouped is grouped by XProf across the host and the devices (kernels
//! inherit the group of the host event that launched them); that is not done here
//! ([`super::StepDb::device_steps_unsupported`]).

use super::events::{Span, StepEvents};
use super::EventType;
use crate::analysis::device_planes::{is_derived_line, DERIVED_LINE_ID_MIN};
use crate::analysis::op_metrics::tf_op::{parse_tf_op_fullname, TfOpCategory};
use crate::analysis::step_groups::GROUP_ID_STAT;
use crate::decode::xplane::{Plane, XSpace};
use crate::decode::DecodeError;
use std::collections::BTreeMap;

/// The id of the derived line holding the steps (XProf's `kThreadIdStepInfo`, the first derived id).
const STEP_LINE_ID: i32 = DERIVED_LINE_ID_MIN;

/// The stats read from device events (`shape`: the tensor shapes of the op that launched it).
const STATS: [&str; 5] = [GROUP_ID_STAT, "correlation_id", "shape", "device_offset_ps", "device_duration_ps"];

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

/// The step events of the GPU `planes` of `space`, by group id (all planes merged).
pub fn gpu_step_events(space: &XSpace, planes: &[&Plane]) -> Result<BTreeMap<i64, StepEvents>, DecodeError> {
    let mut steps: BTreeMap<i64, StepEvents> = BTreeMap::new();
    for plane in planes {
        for (group, e) in plane_step_events(space, plane)? {
            let step = steps.entry(group).or_default();
            step.markers.extend(e.markers);
            step.events.extend(e.events);
        }
    }
    Ok(steps)
}

/// One plane's step events: its markers, and its typed events for the steps it has markers of.
fn plane_step_events(space: &XSpace, plane: &Plane) -> Result<BTreeMap<i64, StepEvents>, DecodeError> {
    let names: Vec<&str> = STATS.to_vec();
    let selection = plane.stat_selection(&names);
    let ids: Vec<Option<i64>> = STATS.iter().map(|s| plane.stat_id(s)).collect();
    let mut markers: BTreeMap<i64, Vec<Span>> = BTreeMap::new();
    let mut events: BTreeMap<i64, Vec<(EventType, Span)>> = BTreeMap::new();
    for line in &plane.lines {
        let line_id = line.header.id as i32;
        let is_step_line = line_id == STEP_LINE_ID;
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
                let Some(group) = s.group_id else { return Ok(()) };
                let begin_ps = base_ps.saturating_add(ev.header.offset_ps);
                let span = Span { begin_ps, end_ps: begin_ps.saturating_add(ev.header.duration_ps) };
                if is_step_line {
                    markers.entry(group).or_default().push(device_span(span, &s));
                } else if s.correlation_id.is_some_and(|c| c >= 0) && group >= 0 {
                    let t = classify(plane.event_name(ev.header.metadata_id), s.half_shapes);
                    events.entry(group).or_default().push((t, span));
                }
                Ok(())
            },
        )?;
    }
    // XProf keeps a plane's steps that have both events and markers of this plane.
    Ok(events
        .into_iter()
        .filter_map(|(group, events)| Some((group, StepEvents { markers: markers.remove(&group)?, events, name: None })))
        .collect())
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

    #[test]
    fn a_device_timed_span_wins() {
        let span = Span { begin_ps: 10, end_ps: 30 };
        assert_eq!(device_span(span, &EventStats::default()), span);
        let s = EventStats { device_offset_ps: Some(12), device_duration_ps: Some(5), ..EventStats::default() };
        assert_eq!(device_span(span, &s), Span { begin_ps: 12, end_ps: 17 });
    }
}
