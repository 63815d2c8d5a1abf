//! The lines XProf's preprocessing derives from the device events before its trace viewer shows them
//! (`PreprocessSingleHostXSpace`, `derived_timeline.cc`), and the stats its grouping adds.
//!
//! XProf preprocesses a file only when it was not grouped when recorded (no plane declares `group_id`:
//! TensorFlow's profiler groups and derives its lines itself when it saves a trace). Then:
//!
//! On each GPU plane ([`gpu`], `DeriveEventsFromAnnotations`):
//! - the plane's lines (not XProf's derived ones) are ordered compute streams first (a name with
//!   `Compute`), then by number of events, most first (ties as XProf's unstable `std::sort` leaves
//!   them, [`cpp_sort`]);
//! - each stream, in that order, gets five lines derived from its kernels (events with
//!   `kernel_details`, or CUDA graph executions), taken by start, shorter first on ties (XProf's
//!   `GetSortedEvents`, its sort reproduced by [`cpp_sort`]):
//!   `Framework Name Scope`, `Framework Ops`, `XLA Modules`, `XLA Ops`, `Source code`, each named
//!   ` - from #<stream line id>`. A kernel with `hlo_module` extends the module's event
//!   (`jit_f(12)`: the module and its `program_id`); one with `hlo_op` (`::`-separated, outermost
//!   first) the nested XLA op events (`12/fusion.3`, shown as `fusion.3`), and the HLO instruction's
//!   framework op (`op_name:op_type` from its metadata) and source (`file:line`, the file's base name)
//!   give its framework-op, name-scope and source events; a kernel with only a `tf_op` gives those
//!   from it. Events are stretched and nested by [`line_builder`]'s rules;
//! - the stream lines and their derived lines are numbered in that order as the trace viewer's
//!   thread ids: stream k (from 0) is thread 1 + 7k and its derived lines follow it (+1 … +5); XProf
//!   2.24 leaves each stream seven ids (what its output shows), and derives lines for as many streams
//!   as 99 ids hold (14); a line without events is not shown. Each kernel of a CUDA graph (a
//!   `cuda_graph_id` ≠ 0) also gives a `Command Buffer <graph id>` event (XProf 2.24's seventh id of
//!   the stream), and its XLA op event and that one carry its `correlation_id` and `cuda_graph_id`;
//! - grouping (`GroupTfEvents`, on a file without TPU planes nor TensorFlow loop ops) marks every
//!   device event with a `correlation_id` `is_eager`: 1 when its launch runs under an
//!   `EagerKernelExecute` of an op that is not a compiled function. Tidemark gives the value 0 where
//!   no plane has an `EagerKernelExecute` (JAX, TensorFlow graphs); a trace with one gets no
//!   `is_eager` from Tidemark. The same holds for host events that are TensorFlow ops by name. Where
//!   the host has steps, every event gets its step's `group_id`, the derived lines' events too, and
//!   each GPU plane a `Steps` and a `Launch Stats` line ([`groups`]).
//!
//! On each TPU plane ([`tpu`]): the step groups of its events (`GroupTpuEventsOSS`) and the lines
//! XProf derives from its op stats (`DeriveLinesFromStats`).
//!
//! Not derived (no fixture has them; XProf would): scope-range ids of XLA ops (which keep XProf from
//! stretching an op over another scope's); a group name's TensorFlow graph type; the `flow` stats
//! (their ids hash with a per-process salt, so they cannot be equal to XProf's).

pub mod cpp_sort;
mod gpu;
mod groups;
pub mod line_builder;
mod tpu;

use super::event_text::{EventText, LONG_NAME};
use crate::analysis::op_metrics::tf_op::{parse_tf_op_fullname, tf_name_scopes, TfOpCategory};
use crate::analysis::step_groups;
use crate::decode::xplane::names::{CORRELATION_ID, GPU_PLANE_PREFIX, GROUP_ID, HOST_PLANE, IS_EAGER, STEP_NAME, TPU_PLANE_PREFIX};
use crate::decode::xplane::{Plane, XSpace};
use crate::decode::DecodeError;
use crate::fast_hash::FastMap;
use line_builder::{DerivedEvent, Lines};
use std::collections::BTreeMap;

/// The event whose presence makes `is_eager` need the host nesting (not done).
const EAGER_KERNEL_EXECUTE: &str = "EagerKernelExecute";
/// A group id column's "no group".
const NO_GROUP: u32 = u32::MAX;

/// One derived line: its thread and events.
#[derive(Debug, Clone, PartialEq)]
pub struct DerivedLine {
    pub tid: u32,
    pub name: String,
    pub events: Vec<DerivedEvent>,
    /// Each event's own arguments (beside its name's and group's), when the line's events have any.
    pub args: Vec<Vec<(String, String)>>,
}

/// What XProf's preprocessing changes on one plane.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DerivedPlane {
    /// Index of the plane in the file.
    pub plane: usize,
    /// Thread ids XProf gives lines (index in the plane, tid).
    pub line_tids: Vec<(usize, u32)>,
    /// Shown lines only (each has events).
    pub lines: Vec<DerivedLine>,
    /// Derived event names: (name, display name; empty when none).
    names: Vec<(String, String)>,
    /// Whether events with a `correlation_id` get `is_eager` = 0.
    pub not_eager: bool,
    /// The group id grouping gives each event of a line (index in the plane; by event index in the
    /// line, [`NO_GROUP`] for none).
    groups: Vec<(usize, Vec<u32>)>,
    /// The `step_name` grouping gives the root events of its groups, which then names them: ((line,
    /// index in the line), name), sorted.
    step_names: Vec<((usize, usize), String)>,
    /// The event metadata ids of TensorFlow ops given `is_eager` 0 (host planes), sorted.
    tf_ops: Vec<i64>,
}

impl DerivedPlane {
    /// The thread id XProf gives line `line` of the plane, when preprocessing renumbers it.
    pub fn line_tid(&self, line: usize) -> Option<u32> {
        self.line_tids.iter().find(|(l, _)| *l == line).map(|(_, t)| *t)
    }

    /// Event `index` of derived line `line`: its name and arguments as the trace viewer shows them;
    /// `None` when there is no such event.
    pub fn text(&self, line: usize, index: usize) -> Option<EventText> {
        let l = self.lines.get(line)?;
        let event = l.events.get(index)?;
        let (name, display) = &self.names[event.name as usize];
        let mut args: BTreeMap<String, String> = l.args.get(index).cloned().unwrap_or_default().into_iter().collect();
        if let Some(g) = event.group_id {
            args.insert(GROUP_ID.into(), g.to_string());
        }
        let shown = if display.is_empty() {
            name.clone()
        } else {
            args.insert(LONG_NAME.into(), name.clone());
            display.clone()
        };
        Some(EventText { name: shown, args: args.into_iter().collect() })
    }

    /// The group id grouping gives event `index` of line `line` of the plane.
    pub fn group_id(&self, line: usize, index: usize) -> Option<i64> {
        let (_, groups) = self.groups.iter().find(|(l, _)| *l == line)?;
        groups.get(index).copied().filter(|&g| g != NO_GROUP).map(i64::from)
    }

    /// The step names of line `line`'s events: ((line, index in the line), name), by index.
    pub fn step_names_of_line(&self, line: usize) -> &[((usize, usize), String)] {
        let from = self.step_names.partition_point(|((l, _), _)| *l < line);
        let to = self.step_names.partition_point(|((l, _), _)| *l <= line);
        &self.step_names[from..to]
    }

    /// Changes what the trace viewer shows of event `index` of line `line` of the plane (of event
    /// metadata `metadata_id`), `text` with its arguments sorted by name, as grouping does: the step
    /// name that renames it and its `step_name`, `group_id` and `is_eager`.
    pub fn annotate(&self, line: usize, index: usize, metadata_id: i64, text: &mut EventText) {
        let set = |args: &mut Vec<(String, String)>, key: &str, value: String| match args.binary_search_by(|(k, _)| k.as_str().cmp(key)) {
            Ok(i) => args[i].1 = value,
            Err(i) => args.insert(i, (key.into(), value)),
        };
        if let Ok(i) = self.step_names.binary_search_by(|(at, _)| at.cmp(&(line, index))) {
            let name = &self.step_names[i].1;
            text.name = name.clone();
            set(&mut text.args, STEP_NAME, name.clone());
        }
        if let Some(g) = self.group_id(line, index) {
            set(&mut text.args, GROUP_ID, g.to_string());
        }
        let eager_known =
            (self.not_eager && text.args.iter().any(|(k, _)| k == CORRELATION_ID)) || self.tf_ops.binary_search(&metadata_id).is_ok();
        if eager_known {
            set(&mut text.args, IS_EAGER, "0".into());
        }
    }
}

/// What XProf's preprocessing changes in a file, by plane.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DerivedTimeline {
    pub planes: Vec<DerivedPlane>,
}

impl DerivedTimeline {
    /// Derives XProf's lines of `space` (see the module doc).
    pub fn build(space: &XSpace) -> Result<Self, DecodeError> {
        if step_groups::recorded_grouped(space) {
            return Ok(Self::default());
        }
        let has_tpu = space.planes.iter().any(|p| p.name().starts_with(TPU_PLANE_PREFIX));
        let eager_unknown = space.planes.iter().any(|p| p.meta.event_metadata.values().any(|m| m.name == EAGER_KERNEL_EXECUTE));
        let grouped = !has_tpu && step_groups::is_grouped(space);
        let not_eager = grouped && !eager_unknown;
        let mut planes = Vec::new();
        let mut host_groups = None;
        // Only beside GPU planes for now: the host's group column costs 4 bytes per host event, over the
        // store's memory budget on the long CPU traces (whose groups are not shown yet).
        let has_gpu = space.planes.iter().any(|p| p.name().starts_with(GPU_PLANE_PREFIX));
        if let Some(host) = space.planes.iter().position(|p| p.name() == HOST_PLANE).filter(|_| grouped && has_gpu) {
            let mut plane = DerivedPlane { plane: host, ..Default::default() };
            host_groups = groups::HostGroups::build(space, host, not_eager, &mut plane)?;
            if !plane.groups.is_empty() || !plane.tf_ops.is_empty() {
                planes.push(plane);
            }
        }
        let mut symbols = None;
        let mut gpu_ordinal = 0;
        for (i, plane) in space.planes.iter().enumerate() {
            if plane.name().starts_with(GPU_PLANE_PREFIX) {
                let symbols = symbols.get_or_insert_with(|| gpu::Symbols::new(space));
                planes.push(DerivedPlane { not_eager, ..gpu::derive_plane(space, i, symbols, host_groups.as_ref(), gpu_ordinal)? });
                gpu_ordinal += 1;
            } else if plane.name().starts_with(TPU_PLANE_PREFIX) {
                planes.push(tpu::derive_plane(space, i)?);
            } else if not_eager && plane.name().starts_with("/device:") {
                planes.push(DerivedPlane { plane: i, not_eager, ..Default::default() });
            }
        }
        Ok(DerivedTimeline { planes })
    }

    pub fn plane(&self, plane: usize) -> Option<&DerivedPlane> {
        self.planes.iter().find(|p| p.plane == plane)
    }

    /// Bytes held, for the store's memory budget.
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        let text = |(k, v): &(String, String)| k.capacity() + v.capacity() + size_of::<(String, String)>();
        self.planes
            .iter()
            .map(|p| {
                let lines: usize = p
                    .lines
                    .iter()
                    .map(|l| {
                        let args: usize =
                            l.args.iter().map(|a| a.iter().map(text).sum::<usize>() + size_of::<Vec<(String, String)>>()).sum();
                        l.name.capacity() + l.events.capacity() * size_of::<DerivedEvent>() + args
                    })
                    .sum();
                let names: usize = p.names.iter().map(text).sum();
                let groups: usize = p.groups.iter().map(|(_, g)| g.capacity() * size_of::<u32>() + size_of::<(usize, Vec<u32>)>()).sum();
                let step_names: usize = p.step_names.iter().map(|(_, n)| n.capacity() + size_of::<((usize, usize), String)>()).sum();
                lines
                    + names
                    + groups
                    + step_names
                    + p.tf_ops.capacity() * size_of::<i64>()
                    + p.line_tids.capacity() * size_of::<(usize, u32)>()
                    + size_of::<DerivedPlane>()
            })
            .sum()
    }
}

/// Derived event names of one plane, interned: XProf's plane event metadata by name, whose display
/// name is set once, by the first line that names it (the file's own metadata first).
struct Names<'p> {
    /// The file's metadata names that have a display name.
    own: FastMap<&'p str, &'p str>,
    ids: FastMap<String, u32>,
    names: Vec<(String, String)>,
}

impl<'p> Names<'p> {
    fn new(plane: &'p Plane) -> Self {
        let own = plane
            .meta
            .event_metadata
            .values()
            .filter(|m| !m.display_name.is_empty())
            .map(|m| (m.name.as_str(), m.display_name.as_str()))
            .collect();
        Names { own, ids: FastMap::default(), names: Vec::new() }
    }

    fn id(&mut self, name: &str, display: impl FnOnce() -> String) -> u32 {
        if let Some(&id) = self.ids.get(name) {
            if self.names[id as usize].1.is_empty() {
                self.names[id as usize].1 = display();
            }
            return id;
        }
        let display = self.own.get(name).map_or_else(display, |d| d.to_string());
        self.names.push((name.to_string(), display));
        let id = self.names.len() as u32 - 1;
        self.ids.insert(name.to_string(), id);
        id
    }

    /// A name of its own (XProf's `CreateEventMetadata`): never shared, shown by `display`.
    fn unique(&mut self, display: String) -> u32 {
        self.names.push((String::new(), display));
        self.names.len() as u32 - 1
    }
}

/// XProf's `ProcessTfOpEvent`: the op's name scopes (TensorFlow and JAX ops) on line `lines.0` and the
/// op itself, shown by its type, on line `lines.1`.
fn add_framework_op(
    builder: &mut Lines,
    lines: (usize, usize),
    names: &mut Names,
    tf_op_fullname: &str,
    (start_ps, duration_ps): (i64, i64),
    group_id: Option<i64>,
) {
    let op = parse_tf_op_fullname(tf_op_fullname);
    if matches!(op.category, TfOpCategory::TensorFlow | TfOpCategory::Jax) {
        let scopes: Vec<u32> = tf_name_scopes(op.name).map(|s| names.id(s, String::new)).collect();
        builder.add_nested(lines.0, &scopes, start_ps, duration_ps, group_id);
    }
    // XProf's `TfOpEventName`.
    let id = names.id(tf_op_fullname, || match op.category {
        TfOpCategory::Unknown => op.name.trim_end_matches(|c: char| c.is_ascii_whitespace()).to_string(),
        TfOpCategory::TfData => format!("Iterator::{}", op.name.rsplit("::").next().unwrap_or(op.name)),
        _ => op.type_.to_string(),
    });
    builder.add(lines.1, id, start_ps, duration_ps, group_id);
}
