//! The lines XProf derives on a GPU plane (`DeriveEventsFromAnnotations`); see the parent module.

use super::cpp_sort;
use super::groups::HostGroups;
use super::line_builder::{DerivedEvent, Lines};
use super::{DerivedLine, DerivedPlane, Names, NO_GROUP};
use crate::analysis::device_planes::{is_derived_line, DERIVED_LINE_ID_MIN};
use crate::analysis::gpu_events;
use crate::analysis::steps::device::{derived_step_line, give_ungrouped_the_group_before};
use crate::analysis::steps::events::Span;
use crate::analysis::xla_modules::{decoded_modules, tf_op_fullname};
use crate::decode::xplane::names::{
    CORRELATION_ID, FRAMEWORK_NAME_SCOPE_LINE, FRAMEWORK_OPS_LINE, SCOPE_RANGE_TREE_PLANE, SOURCE_LINE, STEP_NAME, XLA_MODULES_LINE,
    XLA_OPS_LINE,
};
use crate::decode::xplane::XSpace;
use crate::decode::DecodeError;
use std::collections::HashMap;

/// The derived lines of one stream, in their thread order (XProf 2.24's `kThreadIdTfNameScope` …
/// `kThreadIdSource`, then its command buffers).
const DERIVED_LINE_NAMES: [&str; 6] =
    [FRAMEWORK_NAME_SCOPE_LINE, FRAMEWORK_OPS_LINE, XLA_MODULES_LINE, XLA_OPS_LINE, SOURCE_LINE, "Command Buffers"];
const NAME_SCOPE: usize = 0;
const FRAMEWORK_OPS: usize = 1;
const XLA_MODULES: usize = 2;
const XLA_OPS: usize = 3;
const SOURCE: usize = 4;
const COMMAND_BUFFERS: usize = 5;
/// The stat naming the CUDA graph a kernel ran in (XProf's `cuda_graph_id_for_inner_node`).
const CUDA_GRAPH_ID: &str = "cuda_graph_id";
/// The stat naming a kernel's innermost scope range (its XLA op's, nested in its module's).
const SCOPE_RANGE_ID: &str = "scope_range_id";
/// The thread id of XProf's `Steps` line (`kThreadIdStepInfo`).
const STEPS_TID: u32 = DERIVED_LINE_ID_MIN as u32;
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

/// The HLO instructions of a file's modules, by program id then name (the first of a name wins), and
/// the parent of each scope range (by id).
pub(super) struct Symbols(HashMap<u64, HashMap<String, Symbol>>, HashMap<i64, i64>);

impl Symbols {
    pub(super) fn new(space: &XSpace) -> Self {
        let scope_parents = space
            .plane_named(SCOPE_RANGE_TREE_PLANE)
            .map(|p| p.meta.stats.iter().filter_map(|s| Some((s.metadata_id, p.stat_value(s)?.as_i64()?))).collect())
            .unwrap_or_default();
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
        Symbols(by_program, scope_parents)
    }

    /// A kernel's scope range and its ancestors, innermost first (XProf's `level_range_ids`; a cycle
    /// ends the chain).
    fn scope_chain(&self, scope_range_id: i64, chain: &mut Vec<Option<i64>>) {
        chain.clear();
        chain.push(Some(scope_range_id));
        let mut seen = std::collections::HashSet::new();
        let mut at = scope_range_id;
        while let Some(&parent) = self.1.get(&at) {
            if !seen.insert(parent) {
                break;
            }
            chain.push(Some(parent));
            at = parent;
        }
    }

    fn get(&self, program_id: Option<u64>, hlo_op: &str) -> Option<&Symbol> {
        self.0.get(&program_id?)?.get(hlo_op)
    }
}

/// An event of a stream as derivation reads it: its span, group, and its stats when it is a kernel.
struct Kernel {
    start_ps: i64,
    duration_ps: i64,
    group_id: Option<i64>,
    /// Its launch's correlation id and its CUDA graph id, when it ran in a CUDA graph (id ≠ 0).
    graph: Option<(i64, u64)>,
    scope_range_id: Option<i64>,
    stats: Option<gpu_events::GpuEventStats>,
}

/// One event as [`launched`] reads it: its span, correlation id, CUDA graph id and scope range id.
type LaunchedEvent = (Span, Option<i64>, Option<u64>, Option<i64>);
/// What the plane's events say besides [`gpu_events::GpuEventStats`], by line.
type Launched = Vec<Vec<LaunchedEvent>>;

/// The derived lines of GPU plane `plane_index` (the `gpu_ordinal`-th GPU plane of the file) and its
/// streams' thread ids; with `host_groups`, its events' groups and its `Steps` and `Launch Stats` lines.
pub(super) fn derive_plane(
    space: &XSpace,
    plane_index: usize,
    symbols: &Symbols,
    host_groups: Option<&HostGroups>,
    gpu_ordinal: i64,
) -> Result<DerivedPlane, DecodeError> {
    let plane = &space.planes[plane_index];
    let mut names = Names::new(plane);
    let mut out = DerivedPlane { plane: plane_index, ..Default::default() };
    let launched = launched(space, plane_index)?;
    if let Some(h) = host_groups {
        group_events(h, &launched, &mut out, &mut names);
        if let Some(line) = h.launch_stats(gpu_ordinal, |name| names.id(&name, String::new)) {
            out.lines.push(line);
        }
    }
    let mut streams: Vec<usize> = (0..plane.lines.len()).filter(|&l| !is_derived_line(plane.lines[l].header.id)).collect();
    let compute = |l: &usize| plane.lines[*l].header.name.contains("Compute");
    cpp_sort::sort(&mut streams, |a, b| {
        if compute(a) == compute(b) {
            plane.lines[*a].event_count > plane.lines[*b].event_count
        } else {
            compute(a)
        }
    });
    for (k, &l) in streams.iter().enumerate() {
        let tid = 1 + IDS_PER_STREAM * k as u32;
        if tid - 1 + IDS_PER_STREAM > DERIVED_IDS {
            break;
        }
        out.line_tids.push((l, tid));
        let line = &plane.lines[l];
        let mut events = Vec::with_capacity(line.event_count);
        gpu_events::for_each_line_event(space, plane, line, |ev, stats| {
            let index = events.len();
            let start_ps = line.header.timestamp_ns.saturating_mul(1000).saturating_add(ev.header.offset_ps);
            let stats = (stats.is_kernel() || stats.is_cuda_graph_execution).then_some(stats);
            let (graph, scope_range_id) =
                launched[l].get(index).map_or((None, None), |&(_, c, g, r)| ((|| Some((c?, g.filter(|&g| g != 0)?)))(), r));
            let group_id = out.group_id(l, index);
            events.push(Kernel { start_ps, duration_ps: ev.header.duration_ps, group_id, graph, scope_range_id, stats });
        })?;
        let mut order: Vec<u32> = (0..events.len() as u32).collect();
        let key = |i: &u32| (events[*i as usize].start_ps, events[*i as usize].duration_ps);
        cpp_sort::sort(&mut order, |a, b| key(a) < key(b));
        let lines = derive_stream(order.iter().map(|&i| &events[i as usize]), symbols, &mut names);
        for (j, (events, args)) in lines.into_iter().enumerate() {
            if !events.is_empty() {
                let name = format!("{} - from #{}", DERIVED_LINE_NAMES[j], line.header.id);
                out.lines.push(DerivedLine { tid: tid + 1 + j as u32, name, events, args });
            }
        }
    }
    out.names = names.names;
    Ok(out)
}

/// Each event of the plane's lines (not derived ones): its span, correlation id, CUDA graph id and
/// scope range id.
fn launched(space: &XSpace, plane_index: usize) -> Result<Launched, DecodeError> {
    let plane = &space.planes[plane_index];
    let (correlation, graph, scope) = (plane.stat_id(CORRELATION_ID), plane.stat_id(CUDA_GRAPH_ID), plane.stat_id(SCOPE_RANGE_ID));
    let selection = plane.stat_selection(&[CORRELATION_ID, CUDA_GRAPH_ID, SCOPE_RANGE_ID]);
    let mut out = Vec::with_capacity(plane.lines.len());
    for line in &plane.lines {
        let mut events = Vec::new();
        if !is_derived_line(line.header.id) {
            let base_ps = line.header.timestamp_ns.saturating_mul(1000);
            space.for_each_raw_event(
                line,
                &selection,
                |_| true,
                |_, ev| {
                    let (mut c, mut g, mut r) = (None, None, None);
                    for raw in ev.stats {
                        if Some(raw.metadata_id) == correlation {
                            c = plane.raw_stat_value(raw)?.and_then(|v| v.as_i64());
                        } else if Some(raw.metadata_id) == graph {
                            g = plane.raw_stat_value(raw)?.and_then(|v| v.as_u64());
                        } else if Some(raw.metadata_id) == scope {
                            r = plane.raw_stat_value(raw)?.and_then(|v| v.as_i64());
                        }
                    }
                    let begin_ps = base_ps.saturating_add(ev.header.offset_ps);
                    events.push((Span { begin_ps, end_ps: begin_ps.saturating_add(ev.header.duration_ps) }, c, g, r));
                    Ok(())
                },
            )?;
        }
        out.push(events);
    }
    Ok(out)
}

/// The groups of the plane's events (XProf's grouping, then `ProcessUngroupedEvents`) and its `Steps`
/// line (`DeriveStepEventsFromGroups`): each event takes the group of the host event that launched it,
/// one without then the group before it in time order; one step event spans each run of events of one
/// group in that order, shown by the group's name (`train 3`, its `step_name`), else its id.
fn group_events(host: &HostGroups, launched: &Launched, out: &mut DerivedPlane, names: &mut Names) {
    let mut events: Vec<(Span, usize, usize, Option<i64>)> = Vec::new();
    for (l, line) in launched.iter().enumerate() {
        events.extend(line.iter().enumerate().map(|(i, &(span, c, ..))| (span, l, i, c.and_then(|c| host.of_launch(c)))));
    }
    // XProf's order of a plane's events (`GetSortedEvents`): by start, the shorter first at one.
    events.sort_by_key(|(span, ..)| (span.begin_ps, span.duration_ps()));
    give_ungrouped_the_group_before(events.iter_mut().map(|e| &mut e.3));
    for (l, line) in launched.iter().enumerate() {
        if !line.is_empty() {
            out.groups.push((l, vec![NO_GROUP; line.len()]));
        }
    }
    for &(_, l, i, group) in &events {
        if let (Some(g), Ok(k)) = (group, out.groups.binary_search_by_key(&l, |(line, _)| *line)) {
            out.groups[k].1[i] = g as u32;
        }
    }
    let mut steps = DerivedLine { tid: STEPS_TID, name: "Steps".into(), events: Vec::new(), args: Vec::new() };
    for (span, group) in derived_step_line(events.iter().filter_map(|&(span, _, _, g)| Some((span, g?)))) {
        let step_name = host.name(group);
        let name = names.id(step_name.map_or_else(|| group.to_string(), str::to_string).as_str(), String::new);
        let duration_ps = span.end_ps - span.begin_ps;
        steps.events.push(DerivedEvent { start_ps: span.begin_ps, duration_ps, name, group_id: Some(group) });
        steps.args.push(step_name.map(|n| vec![(STEP_NAME.to_string(), n.to_string())]).unwrap_or_default());
    }
    if !steps.events.is_empty() {
        out.lines.push(steps);
    }
}

/// One derived line's events and their own arguments (none, or one list per event).
type LineParts = (Vec<DerivedEvent>, Vec<Vec<(String, String)>>);

/// The six derived lines of one stream's kernels (its events sorted as XProf sorts them), each with
/// its events' own arguments (none, or one list per event).
fn derive_stream<'k>(events: impl Iterator<Item = &'k Kernel>, symbols: &Symbols, names: &mut Names) -> Vec<LineParts> {
    let mut lines = Lines::new(6, &[(NAME_SCOPE, &[FRAMEWORK_OPS]), (XLA_MODULES, &[NAME_SCOPE, XLA_OPS])], true);
    let mut level_names = Vec::new();
    let mut scopes = Vec::new();
    // The CUDA graph stats XProf sets on an XLA op or command buffer event, by line and event index;
    // a later kernel's replace an earlier one's (`SetOrAddStatValue`).
    let mut graph_args: [HashMap<usize, (i64, u64)>; 6] = Default::default();
    for k in events {
        let Some(s) = &k.stats else { continue };
        let (start, dur, group) = (k.start_ps, k.duration_ps, k.group_id);
        // The scope ranges, innermost first: the outermost is the module's.
        match k.scope_range_id.filter(|_| !s.hlo_module.is_empty() || !s.hlo_op_path.is_empty()) {
            Some(r) => symbols.scope_chain(r, &mut scopes),
            None => scopes.clear(),
        }
        if !s.hlo_module.is_empty() {
            let name = match s.program_id {
                Some(id) => format!("{}({id})", s.hlo_module),
                None => s.hlo_module.clone(),
            };
            let id = names.id(&name, String::new);
            lines.add_scoped(XLA_MODULES, id, start, dur, group, scopes.last().copied().flatten());
        }
        if let Some(innermost) = s.hlo_op_names().last() {
            let prefix = match s.program_id {
                Some(id) => id.to_string(),
                None => s.hlo_module.clone(),
            };
            level_names.clear();
            level_names.extend(s.hlo_op_names().map(|op| names.id(&format!("{prefix}/{op}"), || op.to_string())));
            // The innermost op's event, as `add_nested` leaves it (before closing deeper levels).
            // Each level's scope range, outermost first, where there is one per level.
            scopes.reverse();
            let level_scopes = if scopes.len() == level_names.len() { scopes.as_slice() } else { &[] };
            lines.add_nested_scoped(XLA_OPS, &level_names, level_scopes, start, dur, group);
            if let (Some(graph), Some(event)) = (k.graph, lines.last_event(XLA_OPS, level_names.len() - 1)) {
                graph_args[XLA_OPS].insert(event, graph);
            }
            let symbol = symbols.get(s.program_id, innermost);
            if let Some(tf_op) = symbol.map(|s| s.tf_op_name.as_str()).filter(|t| !t.is_empty()) {
                super::add_framework_op(&mut lines, (NAME_SCOPE, FRAMEWORK_OPS), names, tf_op, (start, dur), group);
            }
            if let Some(source) = symbol.map(|s| s.source.as_str()).filter(|t| !t.is_empty()) {
                let id = names.id(source, String::new);
                lines.add(SOURCE, id, start, dur, group);
            }
        } else if !s.tf_op.is_empty() {
            super::add_framework_op(&mut lines, (NAME_SCOPE, FRAMEWORK_OPS), names, &s.tf_op, (start, dur), group);
        }
        if let Some((correlation_id, graph_id)) = k.graph {
            let id = names.id(&format!("Command Buffer {graph_id}"), String::new);
            lines.add(COMMAND_BUFFERS, id, start, dur, group);
            if let Some(event) = lines.last_event(COMMAND_BUFFERS, 0) {
                graph_args[COMMAND_BUFFERS].insert(event, (correlation_id, graph_id));
            }
        }
    }
    lines
        .lines
        .into_iter()
        .zip(graph_args)
        .map(|(l, graph)| {
            let args = if graph.is_empty() {
                Vec::new()
            } else {
                (0..l.events.len())
                    .map(|e| {
                        graph
                            .get(&e)
                            .map(|(c, g)| vec![(CORRELATION_ID.to_string(), c.to_string()), (CUDA_GRAPH_ID.to_string(), g.to_string())])
                            .unwrap_or_default()
                    })
                    .collect()
            };
            (l.events, args)
        })
        .collect()
}
