//! The step groups XProf's preprocessing gives a file it groups itself (`GroupTfEvents` on a trace saved
//! ungrouped, as JAX saves them; not on TPU files, nor files with TensorFlow loop ops), as its trace
//! viewer shows them:
//! - every host event in a group carries its `group_id`; the root that named the group (a
//!   `StepTraceAnnotation("train", step_num=3)`) gets the `step_name` `train 3`, which also names the
//!   event ([`crate::analysis::step_groups`]);
//! - host events that are TensorFlow ops by name (`ThenExecuteCallback:GetEventFor…`, XProf's
//!   `TfOpRun`) get `is_eager` (`MarkEagerlyExecutedCpuTfOps`): 0 where no plane has an
//!   `EagerKernelExecute`, the only case given here;
//! - each kernel or copy a host event launched (same `correlation_id`) takes its group; the GPU lines
//!   built from them ([`super::gpu`]) follow;
//! - each GPU plane gets a `Launch Stats` line (`DeriveEventsFromHostTrace`): per group, one event
//!   `Launch Stats for <group name>` spanning the group's launches of that device (host events with
//!   a `correlation_id` and a `device_id`, names starting with `cu` left out), with their count and
//!   their longest and mean duration in µs.

use super::{DerivedLine, DerivedPlane, NO_GROUP};
use crate::analysis::device_planes::DERIVED_LINE_ID_MIN;
use crate::analysis::op_metrics::tf_op::{parse_tf_op_fullname, TfOpCategory};
use crate::analysis::step_groups::{self, StepGroups};
use crate::analysis::trace_viewer::event_text::stat_text;
use crate::decode::xplane::names::CORRELATION_ID;
use crate::decode::xplane::{StatValue, XSpace};
use crate::decode::DecodeError;
use std::collections::{BTreeMap, HashMap};

/// The stat naming the device a host event launched work on.
const DEVICE_ID: &str = "device_id";
/// The thread id of XProf's `Launch Stats` line (`kThreadIdKernelLaunch`).
const LAUNCH_STATS_TID: u32 = DERIVED_LINE_ID_MIN as u32 + 1;

/// A host launch as `Launch Stats` count it: its device ordinal, group and span.
struct Launch {
    device: i64,
    group: i64,
    start_ps: i64,
    duration_ps: i64,
}

/// The groups of a file XProf groups itself (see the module doc).
pub(super) struct HostGroups {
    groups: StepGroups,
    /// The group of each launch on the host, by correlation id.
    by_correlation: HashMap<i64, i64>,
    launches: Vec<Launch>,
}

impl HostGroups {
    /// Groups the host plane of `space` (the plane at `host`); `None` when no event has a group. Its
    /// events' groups and step names go to `plane`, and with `tf_ops_not_eager` its TensorFlow ops
    /// (whose `is_eager` XProf marks whether or not there are groups).
    pub(super) fn build(
        space: &XSpace,
        host: usize,
        tf_ops_not_eager: bool,
        plane: &mut DerivedPlane,
    ) -> Result<Option<Self>, DecodeError> {
        let host_plane = &space.planes[host];
        let (correlation, device) = (host_plane.stat_id(CORRELATION_ID), host_plane.stat_id(DEVICE_ID));
        // The rank of each line's first event; (rank, correlation id, device id, start, duration).
        let mut line_start = vec![usize::MAX; host_plane.lines.len()];
        let mut launched: Vec<(usize, i64, Option<i64>, i64, i64)> = Vec::new();
        let groups = step_groups::group_every_event(space, host_plane, &[CORRELATION_ID, DEVICE_ID], |rank, l, index, ev| {
            if index == 0 {
                line_start[l] = rank;
            }
            let (mut c, mut d) = (None, None);
            for raw in ev.stats {
                if Some(raw.metadata_id) == correlation {
                    c = host_plane.raw_stat_value(raw)?.and_then(|v| v.as_i64());
                } else if Some(raw.metadata_id) == device {
                    d = host_plane.raw_stat_value(raw)?.and_then(|v| v.as_i64());
                }
            }
            if let Some(c) = c {
                // XProf leaves the driver's API calls (`cuEventRecord`, …) out of the launch stats.
                let d = d.filter(|_| !host_plane.event_name(ev.header.metadata_id).starts_with("cu"));
                let start = host_plane.lines[l].header.timestamp_ns.saturating_mul(1000).saturating_add(ev.header.offset_ps);
                launched.push((rank, c, d, start, ev.header.duration_ps));
            }
            Ok(())
        })?;
        if tf_ops_not_eager {
            plane.tf_ops = host_plane
                .meta
                .event_metadata
                .iter()
                .filter(|(_, m)| parse_tf_op_fullname(&m.name).category == TfOpCategory::TensorFlow)
                .map(|(&id, _)| id)
                .collect();
            plane.tf_ops.sort_unstable();
        }
        if !groups.any_grouped() {
            return Ok(None);
        }
        let mut by_correlation = HashMap::new();
        let mut launches = Vec::new();
        for (rank, c, d, start_ps, duration_ps) in launched {
            let Some(group) = groups.group_id(rank) else { continue };
            by_correlation.insert(c, group);
            if let Some(device) = d {
                launches.push(Launch { device, group, start_ps, duration_ps });
            }
        }
        for (l, line) in host_plane.lines.iter().enumerate() {
            if line_start[l] == usize::MAX {
                continue;
            }
            let of_line = (line_start[l]..line_start[l] + line.event_count).map(|r| groups.group_id(r).map_or(NO_GROUP, |g| g as u32));
            plane.groups.push((l, of_line.collect()));
        }
        for (rank, name) in groups.step_names() {
            let l = line_start.iter().enumerate().filter(|(_, &s)| s != usize::MAX && s <= *rank).max_by_key(|(_, &s)| s);
            if let Some((l, &s)) = l {
                plane.step_names.push(((l, rank - s), name.clone()));
            }
        }
        plane.step_names.sort_unstable();
        Ok(Some(HostGroups { groups, by_correlation, launches }))
    }

    /// The group of the launch with this correlation id.
    pub(super) fn of_launch(&self, correlation_id: i64) -> Option<i64> {
        self.by_correlation.get(&correlation_id).copied()
    }

    /// XProf's name of group `group` (`train 3`).
    pub(super) fn name(&self, group: i64) -> Option<&str> {
        self.groups.group_name(group)
    }

    /// The `Launch Stats` line of the GPU whose ordinal among the file's GPU planes is `device`, its
    /// event names interned by `intern`; `None` without launches.
    pub(super) fn launch_stats(&self, device: i64, mut intern: impl FnMut(String) -> u32) -> Option<DerivedLine> {
        // Per group: (first start, last end, count, longest, total duration).
        let mut per_group: BTreeMap<i64, (i64, i64, u64, i64, i64)> = BTreeMap::new();
        for l in self.launches.iter().filter(|l| l.device == device) {
            let end = l.start_ps.saturating_add(l.duration_ps);
            let g = per_group.entry(l.group).or_insert((l.start_ps, end, 0, 0, 0));
            g.0 = g.0.min(l.start_ps);
            g.1 = g.1.max(end);
            g.2 += 1;
            g.3 = g.3.max(l.duration_ps);
            g.4 += l.duration_ps;
        }
        let mut line = DerivedLine { tid: LAUNCH_STATS_TID, name: "Launch Stats".into(), events: Vec::new(), args: Vec::new() };
        for (group, (start_ps, end_ps, count, max_ps, total_ps)) in per_group {
            let Some(name) = self.name(group) else { continue };
            let name = intern(format!("Launch Stats for {name}"));
            line.events.push(super::line_builder::DerivedEvent { start_ps, duration_ps: end_ps - start_ps, name, group_id: Some(group) });
            // XProf's `PicoToMicro` of the longest and of the mean (a double), as its stats print them.
            let micros = |ps: f64| stat_text(&StatValue::Double(ps / 1e6));
            line.args.push(vec![
                ("avg_launch_time_us".into(), micros(total_ps as f64 / count as f64)),
                ("max_launch_time_us".into(), micros(max_ps as f64)),
                ("num_launches".into(), count.to_string()),
            ]);
        }
        (!line.events.is_empty()).then_some(line)
    }
}
