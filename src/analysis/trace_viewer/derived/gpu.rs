//! The lines XProf derives on a GPU plane (`DeriveEventsFromAnnotations`); see the parent module.

use super::cpp_sort;
use super::line_builder::{DerivedEvent, Lines};
use super::{DerivedLine, DerivedPlane, Names};
use crate::analysis::device_planes::is_derived_line;
use crate::analysis::gpu_events;
use crate::analysis::xla_modules::{decoded_modules, tf_op_fullname};
use crate::decode::xplane::XSpace;
use crate::decode::DecodeError;
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

/// What the HLO says of an instruction: its framework op and source (XProf's symbol resolver).
#[derive(Debug, Default)]
struct Symbol {
    tf_op_name: String,
    source: String,
}

/// The HLO instructions of a file's modules, by program id then name (the first of a name wins).
pub(super) struct Symbols(HashMap<u64, HashMap<String, Symbol>>);

impl Symbols {
    pub(super) fn new(space: &XSpace) -> Self {
        let mut by_program = HashMap::new();
        for (program_id, _, proto) in decoded_modules(space) {
            let mut instructions = HashMap::new();
            for instr in proto.hlo_module.iter().flat_map(|m| &m.computations).flat_map(|c| &c.instructions) {
                instructions.entry(instr.name.clone()).or_insert_with(|| {
                    let Some(meta) = instr.metadata.as_ref() else {
                        return Symbol { tf_op_name: tf_op_fullname("", ""), source: String::new() };
                    };
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

/// An event of a stream as derivation reads it: its span, and its stats when it is a kernel.
struct Kernel {
    start_ps: i64,
    duration_ps: i64,
    stats: Option<gpu_events::GpuEventStats>,
}

/// The derived lines of GPU plane `plane_index` and its streams' thread ids.
pub(super) fn derive_plane(space: &XSpace, plane_index: usize, symbols: &Symbols) -> Result<DerivedPlane, DecodeError> {
    let plane = &space.planes[plane_index];
    let mut streams: Vec<usize> = (0..plane.lines.len()).filter(|&l| !is_derived_line(plane.lines[l].header.id)).collect();
    let compute = |l: &usize| plane.lines[*l].header.name.contains("Compute");
    cpp_sort::sort(&mut streams, |a, b| {
        if compute(a) == compute(b) {
            plane.lines[*a].event_count > plane.lines[*b].event_count
        } else {
            compute(a)
        }
    });
    let mut names = Names::new(plane);
    let mut out = DerivedPlane { plane: plane_index, ..Default::default() };
    for (k, &l) in streams.iter().enumerate() {
        let tid = 1 + IDS_PER_STREAM * k as u32;
        if tid - 1 + IDS_PER_STREAM > DERIVED_IDS {
            break;
        }
        out.line_tids.push((l, tid));
        let line = &plane.lines[l];
        let mut events = Vec::with_capacity(line.event_count);
        gpu_events::for_each_line_event(space, plane, line, |ev, stats| {
            let start_ps = line.header.timestamp_ns.saturating_mul(1000).saturating_add(ev.header.offset_ps);
            let stats = (stats.is_kernel() || stats.is_cuda_graph_execution).then_some(stats);
            events.push(Kernel { start_ps, duration_ps: ev.header.duration_ps, stats });
        })?;
        let mut order: Vec<u32> = (0..events.len() as u32).collect();
        let key = |i: &u32| (events[*i as usize].start_ps, events[*i as usize].duration_ps);
        cpp_sort::sort(&mut order, |a, b| key(a) < key(b));
        let lines = derive_stream(order.iter().map(|&i| &events[i as usize]), symbols, &mut names);
        for (j, events) in lines.into_iter().enumerate() {
            if !events.is_empty() {
                let name = format!("{} - from #{}", DERIVED_LINE_NAMES[j], line.header.id);
                out.lines.push(DerivedLine { tid: tid + 1 + j as u32, name, events, args: Vec::new() });
            }
        }
    }
    out.names = names.names;
    Ok(out)
}

/// The five derived lines of one stream's kernels (its events sorted as XProf sorts them).
fn derive_stream<'k>(events: impl Iterator<Item = &'k Kernel>, symbols: &Symbols, names: &mut Names) -> Vec<Vec<DerivedEvent>> {
    let mut lines = Lines::new(5, &[(NAME_SCOPE, &[FRAMEWORK_OPS]), (XLA_MODULES, &[NAME_SCOPE, XLA_OPS])], true);
    let mut level_names = Vec::new();
    for k in events {
        let Some(s) = &k.stats else { continue };
        let (start, dur) = (k.start_ps, k.duration_ps);
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
                super::add_framework_op(&mut lines, (NAME_SCOPE, FRAMEWORK_OPS), names, tf_op, (start, dur), None);
            }
            if let Some(source) = symbol.map(|s| s.source.as_str()).filter(|t| !t.is_empty()) {
                let id = names.id(source, String::new);
                lines.add(SOURCE, id, start, dur, None);
            }
        } else if !s.tf_op.is_empty() {
            super::add_framework_op(&mut lines, (NAME_SCOPE, FRAMEWORK_OPS), names, &s.tf_op, (start, dur), None);
        }
    }
    lines.lines.into_iter().map(|l| l.events).collect()
}
