//! The lines XProf's preprocessing derives from the device events before its trace viewer shows them
//! (`PreprocessSingleHostXSpace`, `derived_timeline.cc`), and the stats its grouping adds.
//!
//! XProf preprocesses a file only when it was not grouped when recorded (no plane declares `group_id`:
//! TensorFlow's profiler groups and derives its lines itself when it saves a trace). Then, on each GPU
//! plane (`DeriveEventsFromAnnotations`):
//! - the plane's lines (not XProf's derived ones) are ordered compute streams first (a name with
//!   `Compute`), then by number of events, most first (ties in file order; XProf's sort is unstable);
//! - each stream, in that order, gets five lines derived from its kernels (events with
//!   `kernel_details`, or CUDA graph executions), taken by start, longer first on ties:
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
//!   as 99 ids hold (14); a line without events is not shown.
//!
//! Grouping (`GroupTfEvents`, on a file without TPU planes nor TensorFlow loop ops) marks every device
//! event with a `correlation_id` `is_eager`: 1 when its launch runs under an `EagerKernelExecute` of an
//! op that is not a compiled function. Tidemark gives the value 0 where the host has no
//! `EagerKernelExecute` (JAX, TensorFlow graphs); a trace with one gets no `is_eager` from Tidemark.
//!
//! Not derived (no fixture has them; XProf would): the `Steps` and `Launch Stats` lines and the group
//! ids of device events in files XProf groups itself (device steps of such files); the lines XProf
//! derives on TPU planes (`Framework Name Scope`, `Framework Ops`, `Source code`, `Host Offload Ops
//! row N`) and the group ids of its TPU grouping; scope-range ids and CUDA-graph stats of XLA ops;
//! `is_eager` on host TensorFlow ops; the `flow` stats (their ids hash with a per-process salt).

pub mod line_builder;

use super::event_text::{EventText, LONG_NAME};
use crate::analysis::device_planes::{is_derived_line, GPU_PLANE_PREFIX, TPU_PLANE_PREFIX};
use crate::analysis::gpu_events;
use crate::analysis::op_metrics::tf_op::{parse_tf_op_fullname, tf_name_scopes, TfOpCategory};
use crate::analysis::step_groups;
use crate::analysis::xla_modules::{decoded_modules, tf_op_fullname};
use crate::decode::xplane::{Plane, XSpace};
use crate::decode::DecodeError;
use crate::fast_hash::FastMap;
use line_builder::{DerivedEvent, Lines};
use std::collections::HashMap;

/// The derived lines of one stream, in their thread order (XProf's `kThreadIdTfNameScope` …
/// `kThreadIdSource` order).
const DERIVED_LINE_NAMES: [&str; 5] = ["Framework Name Scope", "Framework Ops", "XLA Modules", "XLA Ops", "Source code"];
const NAME_SCOPE: usize = 0;
const FRAMEWORK_OPS: usize = 1;
const XLA_MODULES: usize = 2;
const XLA_OPS: usize = 3;
const SOURCE: usize = 4;
/// Thread ids each stream takes: itself and its derived lines.
const IDS_PER_STREAM: u32 = 7;
/// Derived line ids XProf has for a plane's streams (`kThreadIdDeviceDerivedMax - Min`).
const DERIVED_IDS: u32 = 99;
/// The value of the `is_eager` stat grouping adds (see the module doc).
pub const IS_EAGER: &str = "is_eager";
/// The event whose presence on the host makes `is_eager` need the host nesting (not done).
const EAGER_KERNEL_EXECUTE: &str = "EagerKernelExecute";

/// One derived line: its thread and events.
#[derive(Debug, Clone, PartialEq)]
pub struct DerivedLine {
    pub tid: u32,
    pub name: String,
    pub events: Vec<DerivedEvent>,
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
}

impl DerivedPlane {
    /// The thread id XProf gives line `line` of the plane, when preprocessing renumbers it.
    pub fn line_tid(&self, line: usize) -> Option<u32> {
        self.line_tids.iter().find(|(l, _)| *l == line).map(|(_, t)| *t)
    }

    /// A derived event's name and arguments as the trace viewer shows them.
    pub fn text(&self, event: &DerivedEvent) -> EventText {
        let (name, display) = &self.names[event.name as usize];
        if display.is_empty() {
            EventText { name: name.clone(), args: Vec::new() }
        } else {
            EventText { name: display.clone(), args: vec![(LONG_NAME.to_string(), name.clone())] }
        }
    }

    /// Adds the `is_eager` grouping gives an event to its arguments (sorted by name).
    pub fn mark_eager(&self, args: &mut Vec<(String, String)>) {
        if !self.not_eager || !args.iter().any(|(k, _)| k == "correlation_id") {
            return;
        }
        match args.binary_search_by(|(k, _)| k.as_str().cmp(IS_EAGER)) {
            Ok(i) => args[i].1 = "0".into(),
            Err(i) => args.insert(i, (IS_EAGER.into(), "0".into())),
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
        let not_eager = !has_tpu && !eager_unknown && step_groups::is_grouped(space);
        let mut symbols: Option<Symbols> = None;
        let mut planes = Vec::new();
        for (i, plane) in space.planes.iter().enumerate() {
            if plane.name().starts_with(GPU_PLANE_PREFIX) {
                let symbols = symbols.get_or_insert_with(|| Symbols::new(space));
                planes.push(DerivedPlane { not_eager, ..derive_gpu_plane(space, i, symbols)? });
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
        self.planes
            .iter()
            .map(|p| {
                let lines: usize = p.lines.iter().map(|l| l.name.capacity() + l.events.capacity() * size_of::<DerivedEvent>()).sum();
                let names: usize = p.names.iter().map(|(n, d)| n.capacity() + d.capacity() + size_of::<(String, String)>()).sum();
                lines + names + p.line_tids.capacity() * size_of::<(usize, u32)>() + size_of::<DerivedPlane>()
            })
            .sum()
    }
}

/// What the HLO says of an instruction: its framework op and source (XProf's symbol resolver).
#[derive(Debug, Default)]
struct Symbol {
    tf_op_name: String,
    source: String,
}

/// The HLO instructions of a file's modules, by program id then name (the first of a name wins).
struct Symbols(HashMap<u64, HashMap<String, Symbol>>);

impl Symbols {
    fn new(space: &XSpace) -> Self {
        let mut by_program = HashMap::new();
        for (program_id, _, proto) in decoded_modules(space) {
            let mut instructions = HashMap::new();
            for instr in proto.hlo_module.iter().flat_map(|m| &m.computations).flat_map(|c| &c.instructions) {
                instructions.entry(instr.name.clone()).or_insert_with(|| {
                    let meta = instr.metadata.clone().unwrap_or_default();
                    let file = meta.source_file.rsplit('/').next().unwrap_or("");
                    Symbol {
                        tf_op_name: tf_op_fullname(&meta.op_type, &meta.op_name),
                        source: if file.is_empty() { String::new() } else { format!("{file}:{}", meta.source_line) },
                    }
                });
            }
            by_program.insert(program_id, instructions);
        }
        Symbols(by_program)
    }

    fn get(&self, program_id: Option<u64>, hlo_op: &str) -> Option<&Symbol> {
        self.0.get(&program_id?)?.get(hlo_op)
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
}

/// A kernel as derivation reads it.
struct Kernel {
    start_ps: i64,
    duration_ps: i64,
    stats: gpu_events::GpuEventStats,
}

fn derive_gpu_plane(space: &XSpace, plane_index: usize, symbols: &Symbols) -> Result<DerivedPlane, DecodeError> {
    let plane = &space.planes[plane_index];
    let mut streams: Vec<usize> = (0..plane.lines.len()).filter(|&l| !is_derived_line(plane.lines[l].header.id)).collect();
    streams.sort_by_key(|&l| (!plane.lines[l].header.name.contains("Compute"), std::cmp::Reverse(plane.lines[l].event_count)));
    let mut names = Names::new(plane);
    let mut out = DerivedPlane { plane: plane_index, ..Default::default() };
    for (k, &l) in streams.iter().enumerate() {
        let tid = 1 + IDS_PER_STREAM * k as u32;
        if tid - 1 + IDS_PER_STREAM > DERIVED_IDS {
            break;
        }
        out.line_tids.push((l, tid));
        let line = &plane.lines[l];
        let mut kernels = Vec::new();
        gpu_events::for_each_line_event(space, plane, line, |ev, stats| {
            if stats.is_kernel() || stats.is_cuda_graph_execution {
                let start_ps = line.header.timestamp_ns.saturating_mul(1000).saturating_add(ev.header.offset_ps);
                kernels.push(Kernel { start_ps, duration_ps: ev.header.duration_ps, stats });
            }
        })?;
        kernels.sort_by_key(|k| (k.start_ps, std::cmp::Reverse(k.duration_ps)));
        let lines = derive_stream(&kernels, symbols, &mut names);
        for (j, events) in lines.into_iter().enumerate() {
            if !events.is_empty() {
                let name = format!("{} - from #{}", DERIVED_LINE_NAMES[j], line.header.id);
                out.lines.push(DerivedLine { tid: tid + 1 + j as u32, name, events });
            }
        }
    }
    out.names = names.names;
    Ok(out)
}

/// The five derived lines of one stream's kernels (sorted by start, longer first).
fn derive_stream(kernels: &[Kernel], symbols: &Symbols, names: &mut Names) -> Vec<Vec<DerivedEvent>> {
    let mut lines = Lines::new(5, &[(NAME_SCOPE, &[FRAMEWORK_OPS]), (XLA_MODULES, &[NAME_SCOPE, XLA_OPS])], true);
    let mut level_names = Vec::new();
    for k in kernels {
        let (s, start, dur) = (&k.stats, k.start_ps, k.duration_ps);
        if !s.hlo_module.is_empty() {
            let name = match s.program_id {
                Some(id) => format!("{}({id})", s.hlo_module),
                None => s.hlo_module.clone(),
            };
            let id = names.id(&name, String::new);
            lines.add(XLA_MODULES, id, start, dur, None);
        }
        if let Some(innermost) = s.hlo_op_names().last() {
            let prefix = match s.program_id {
                Some(id) => id.to_string(),
                None => s.hlo_module.clone(),
            };
            level_names.clear();
            level_names.extend(s.hlo_op_names().map(|op| names.id(&format!("{prefix}/{op}"), || op.to_string())));
            lines.add_nested(XLA_OPS, &level_names, start, dur, None);
            let symbol = symbols.get(s.program_id, innermost);
            if let Some(tf_op) = symbol.map(|s| s.tf_op_name.as_str()).filter(|t| !t.is_empty()) {
                add_framework_op(&mut lines, names, tf_op, start, dur);
            }
            if let Some(source) = symbol.map(|s| s.source.as_str()).filter(|t| !t.is_empty()) {
                let id = names.id(source, String::new);
                lines.add(SOURCE, id, start, dur, None);
            }
        } else if !s.tf_op.is_empty() {
            add_framework_op(&mut lines, names, &s.tf_op, start, dur);
        }
    }
    lines.lines.into_iter().map(|l| l.events).collect()
}

/// XProf's `ProcessTfOpEvent`: the op's name scopes (TensorFlow and JAX ops) and the op itself, shown
/// by its type.
fn add_framework_op(lines: &mut Lines, names: &mut Names, tf_op_fullname: &str, start_ps: i64, duration_ps: i64) {
    let op = parse_tf_op_fullname(tf_op_fullname);
    if matches!(op.category, TfOpCategory::TensorFlow | TfOpCategory::Jax) {
        let scopes: Vec<u32> = tf_name_scopes(op.name).map(|s| names.id(s, String::new)).collect();
        lines.add_nested(NAME_SCOPE, &scopes, start_ps, duration_ps, None);
    }
    // XProf's `TfOpEventName`.
    let id = names.id(tf_op_fullname, || match op.category {
        TfOpCategory::Unknown => op.name.trim_end_matches(|c: char| c.is_ascii_whitespace()).to_string(),
        TfOpCategory::TfData => format!("Iterator::{}", op.name.rsplit("::").next().unwrap_or(op.name)),
        _ => op.type_.to_string(),
    });
    lines.add(FRAMEWORK_OPS, id, start_ps, duration_ps, None);
}
