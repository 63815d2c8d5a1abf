//! What XProf's preprocessing adds on a TPU plane: step groups and the lines derived from op stats.
//!
//! Groups (`GroupTpuEventsOSS`, then `GroupXplaneEvents`), for a plane with an `XLA Modules` line and
//! no `Steps` line, in a file whose host has no root events (no `_r` stat, no `TraceContext`) and no
//! TensorFlow loop ops: each module event, in file order, starts a group numbered by its place; every
//! event of the plane's lines (the module line included) takes the group of the first module event
//! whose span overlaps its own, ends included (XProf's `GroupQueue`: an event starting where a module
//! ends belongs to that module). Other cases (host roots, a `Steps` line) are not grouped here.
//!
//! Lines (`DeriveLinesFromStats`, on `/device:TPU:<n>` planes): the plane's events by start, shorter
//! first on ties (sorted as XProf sorts them, [`super::cpp_sort`]), each with its `tf_op`, `source`, `_a` stats (metadata's, then its own) and group:
//! asynchronous events (`_a` ≠ 0) are passed over; a `tf_op` gives `Framework Name Scope` and
//! `Framework Ops` events, a `source` a `Source code` event ([`super::line_builder`]'s rules off a
//! GPU: same name and group stretch), each with the group id. A host-offload copy (`copy`,
//! `dynamic-slice`, `dynamic-update-slice` `-start`/`-done` shown names whose full name has host
//! memory `S(5)`) pairs each `-done` with the earliest unpaired `-start` of its name into one
//! `offload-<op>.<n>` event from the start's start to the done's end, on the `Host Offload Ops row
//! <k>` that ended earliest no later than it starts (the last such row on ties; a new row when none,
//! up to 41 rows, then the last row), with `_a` = 1, the done's `raw_bytes_accessed` and the start's
//! `shape_with_layout`.

use super::cpp_sort;
use super::line_builder::Lines;
use super::{add_framework_op, DerivedLine, DerivedPlane, Names, NO_GROUP};
use crate::analysis::device_planes::DERIVED_LINE_ID_MIN;
use crate::analysis::step_groups;
use crate::analysis::trace_viewer::event_text::stat_text;
use crate::decode::xplane::names::{
    FRAMEWORK_NAME_SCOPE_LINE, FRAMEWORK_OPS_LINE, HOST_PLANE, SHAPE_WITH_LAYOUT, SOURCE_LINE, STEPS_LINE, TF_OP, TPU_PLANE_PREFIX,
    XLA_MODULES_LINE,
};
use crate::decode::xplane::{IdTable, Plane, StatValue, XSpace};
use crate::decode::DecodeError;
use crate::fast_hash::FastMap;
use std::collections::{HashMap, VecDeque};

const NAME_SCOPE: usize = 0;
const FRAMEWORK_OPS: usize = 1;
const SOURCE: usize = 2;
/// Thread ids of the derived lines (XProf's `kThreadIdTfNameScope`, `kThreadIdTfOp`,
/// `kThreadIdSource`, `kThreadIdHostOffloadOpStart`).
const LINE_IDS: [(u32, &str); 3] = [(2, FRAMEWORK_NAME_SCOPE_LINE), (3, FRAMEWORK_OPS_LINE), (7, SOURCE_LINE)];
const HOST_OFFLOAD_FIRST_ID: u32 = 8;
const HOST_OFFLOAD_ROWS: usize = 41;
const HOST_OFFLOAD_KEYWORDS: [&str; 6] =
    ["copy-start", "copy-done", "dynamic-slice-start", "dynamic-slice-done", "dynamic-update-slice-start", "dynamic-update-slice-done"];
/// XLA's host memory space in a shape's layout.
const HOST_MEMORY_LABEL: &str = "S(5)";
/// The stats read from the events: framework op, source, asynchronous; and for host-offload copies.
const STATS: [&str; 5] = [TF_OP, "source", "_a", "raw_bytes_accessed", SHAPE_WITH_LAYOUT];

/// One event of the plane as derivation reads it.
struct Event {
    line: usize,
    index: u32,
    start_ps: i64,
    duration_ps: i64,
    metadata_id: i64,
    /// Values of [`STATS`] (metadata's, then the event's own), as text: an index into [`Events::stats`].
    stats: u32,
}

/// The plane's events, and the stat values they share (one entry per metadata, plus one per event
/// with stats of its own among [`STATS`]).
struct Events {
    events: Vec<Event>,
    stats: Vec<[Option<String>; 5]>,
}

/// The derived lines and groups of TPU plane `plane_index`.
pub(super) fn derive_plane(space: &XSpace, plane_index: usize) -> Result<DerivedPlane, DecodeError> {
    let plane = &space.planes[plane_index];
    let events = read_events(space, plane)?;
    let groups = if groups_known(space, plane) { group(plane, &events.events) } else { Vec::new() };
    let mut out = DerivedPlane { plane: plane_index, groups, ..Default::default() };
    if is_tensor_core(plane.name()) {
        derive_lines(plane, events, &mut out);
    }
    Ok(out)
}

/// `/device:TPU:<digits>` (XProf's tensor-core planes).
fn is_tensor_core(name: &str) -> bool {
    name.strip_prefix(TPU_PLANE_PREFIX).is_some_and(|n| n.bytes().all(|c| c.is_ascii_digit()))
}

/// Whether the groups are the ones the module doc describes.
fn groups_known(space: &XSpace, plane: &Plane) -> bool {
    let host_roots = space
        .planes
        .iter()
        .filter(|p| p.name() == HOST_PLANE)
        .any(|p| p.stat_id("_r").is_some() || p.meta.event_metadata.values().any(|m| m.name == "TraceContext"));
    let has_steps = plane.lines.iter().any(|l| l.header.name == STEPS_LINE);
    !host_roots && !has_steps && step_groups::is_grouped(space)
}

fn read_events(space: &XSpace, plane: &Plane) -> Result<Events, DecodeError> {
    let selection = plane.stat_selection(&STATS);
    let role: IdTable<u8> =
        IdTable::new(STATS.iter().enumerate().filter_map(|(i, n)| plane.stat_id(n).map(|id| (id, i as u8 + 1))).collect::<Vec<_>>());
    let text = |v: Option<StatValue>| v.map(|v| stat_text(&v));
    let mut by_metadata: FastMap<i64, u32> = FastMap::default();
    let mut table: Vec<[Option<String>; 5]> = Vec::new();
    let mut events = Vec::new();
    for (l, line) in plane.lines.iter().enumerate() {
        let base_ps = line.header.timestamp_ns.saturating_mul(1000);
        space.for_each_raw_event(
            line,
            &selection,
            |_| true,
            |index, ev| {
                let mid = ev.header.metadata_id;
                let mut stats = *by_metadata.entry(mid).or_insert_with(|| {
                    let mut s: [Option<String>; 5] = Default::default();
                    for st in plane.meta.event_metadata.get(&mid).map(|m| m.stats.as_slice()).unwrap_or_default() {
                        if let Some(r) = role.get(st.metadata_id).checked_sub(1) {
                            if let Some(v) = text(plane.stat_value(st)) {
                                s[r as usize] = Some(v);
                            }
                        }
                    }
                    table.push(s);
                    table.len() as u32 - 1
                });
                if !ev.stats.is_empty() {
                    let mut own = table[stats as usize].clone();
                    for st in ev.stats {
                        if let Some(r) = role.get(st.metadata_id).checked_sub(1) {
                            if let Some(v) = text(plane.raw_stat_value(st)?) {
                                own[r as usize] = Some(v);
                            }
                        }
                    }
                    table.push(own);
                    stats = table.len() as u32 - 1;
                }
                events.push(Event {
                    line: l,
                    index: index as u32,
                    start_ps: base_ps.saturating_add(ev.header.offset_ps),
                    duration_ps: ev.header.duration_ps,
                    metadata_id: mid,
                    stats,
                });
                Ok(())
            },
        )?;
    }
    Ok(Events { events, stats: table })
}

/// XProf's `GroupQueue` over the module events (file order): the group of the first module event
/// that overlaps a span, the last one found kept while it overlaps.
struct GroupQueue<'a> {
    modules: &'a [(i64, i64)],
    current: Option<usize>,
    cached: Option<usize>,
}

impl GroupQueue<'_> {
    fn overlaps(&self, i: usize, (begin, end): (i64, i64)) -> bool {
        let (b, e) = self.modules[i];
        b <= end && begin <= e
    }

    fn group(&mut self, span: (i64, i64)) -> Option<usize> {
        if self.cached.is_some_and(|c| self.overlaps(c, span)) {
            return self.cached;
        }
        self.cached = self.find(span);
        self.cached
    }

    /// XProf's `XEventContextTracker::GetOverlappingEvent`.
    fn find(&mut self, span: (i64, i64)) -> Option<usize> {
        if let Some(c) = self.current.filter(|&c| self.overlaps(c, span)) {
            return Some(c);
        }
        for i in self.current.map_or(0, |c| c + 1)..self.modules.len() {
            let (b, e) = self.modules[i];
            if b > span.1 {
                break;
            }
            if e < span.0 {
                continue;
            }
            self.current = Some(i);
            return self.overlaps(i, span).then_some(i);
        }
        None
    }
}

/// The group of every event, by line (see the module doc).
fn group(plane: &Plane, events: &[Event]) -> Vec<(usize, Vec<u32>)> {
    let Some(module_line) = plane.lines.iter().rposition(|l| l.header.name == XLA_MODULES_LINE) else { return Vec::new() };
    let modules: Vec<(i64, i64)> =
        events.iter().filter(|e| e.line == module_line).map(|e| (e.start_ps, e.start_ps.saturating_add(e.duration_ps))).collect();
    let mut out: Vec<(usize, Vec<u32>)> = Vec::new();
    for (l, line) in plane.lines.iter().enumerate() {
        let mut queue = GroupQueue { modules: &modules, current: None, cached: None };
        let mut groups = vec![NO_GROUP; line.event_count];
        for e in events.iter().filter(|e| e.line == l) {
            let span = (e.start_ps, e.start_ps.saturating_add(e.duration_ps));
            if let (Some(g), Some(slot)) = (queue.group(span), groups.get_mut(e.index as usize)) {
                *slot = g as u32;
            }
        }
        out.push((l, groups));
    }
    out
}

/// XProf's `DeriveLinesFromStats` (see the module doc).
fn derive_lines(plane: &Plane, Events { events, stats }: Events, out: &mut DerivedPlane) {
    let mut order: Vec<u32> = (0..events.len() as u32).collect();
    let key = |i: &u32| (events[*i as usize].start_ps, events[*i as usize].duration_ps);
    cpp_sort::sort(&mut order, |a, b| key(a) < key(b));
    let mut names = Names::new(plane);
    let mut lines = Lines::new(3, &[(NAME_SCOPE, &[FRAMEWORK_OPS])], false);
    let mut offload = HostOffload::default();
    for e in order.iter().map(|&i| &events[i as usize]) {
        let [tf_op, source, is_async, _, _] = &stats[e.stats as usize];
        if is_async.as_deref().is_some_and(|a| a != "0") {
            continue;
        }
        let group_id = out.group_id(e.line, e.index as usize);
        let span = (e.start_ps, e.duration_ps);
        if let Some(tf_op) = tf_op.as_deref().filter(|t| !t.is_empty()) {
            add_framework_op(&mut lines, (NAME_SCOPE, FRAMEWORK_OPS), &mut names, tf_op, span, group_id);
        }
        if let Some(source) = source.as_deref().filter(|s| !s.is_empty()) {
            let id = names.id(source, String::new);
            lines.add(SOURCE, id, e.start_ps, e.duration_ps, group_id);
        }
        offload.push(plane, e, &stats[e.stats as usize], &mut names);
    }
    lines.close(NAME_SCOPE, 0);
    for (builder, (id, name)) in lines.lines.into_iter().zip(LINE_IDS) {
        if !builder.events.is_empty() {
            let tid = DERIVED_LINE_ID_MIN as u32 + id;
            out.lines.push(DerivedLine { tid, name: name.to_string(), events: builder.events, args: Vec::new() });
        }
    }
    for (k, row) in offload.rows.into_iter().enumerate() {
        let tid = DERIVED_LINE_ID_MIN as u32 + HOST_OFFLOAD_FIRST_ID + k as u32;
        out.lines.push(DerivedLine { tid, name: format!("Host Offload Ops row {k}"), events: row.events, args: row.args });
    }
    out.names = names.names;
}

/// One `Host Offload Ops` row being built.
#[derive(Default)]
struct Row {
    end_ps: i64,
    events: Vec<super::line_builder::DerivedEvent>,
    args: Vec<Vec<(String, String)>>,
}

/// XProf's `HostOffloadEventProcessor`.
#[derive(Default)]
struct HostOffload {
    /// The unpaired starts of each `offload-…` name: (start, `shape_with_layout`).
    starts: HashMap<String, VecDeque<(i64, Option<String>)>>,
    rows: Vec<Row>,
}

impl HostOffload {
    fn push(&mut self, plane: &Plane, e: &Event, stats: &[Option<String>; 5], names: &mut Names) {
        let Some(m) = plane.meta.event_metadata.get(&e.metadata_id) else { return };
        let display = m.display_name.as_str();
        let is_offload = HOST_OFFLOAD_KEYWORDS.iter().any(|k| display.contains(k)) && m.name.contains(HOST_MEMORY_LABEL);
        if !is_offload {
            return;
        }
        let name = offload_name(display);
        let [_, _, _, raw_bytes, shape] = stats;
        if display.contains("-start") {
            self.starts.entry(name).or_default().push_back((e.start_ps, shape.clone()));
            return;
        }
        if !display.contains("-done") {
            return;
        }
        let Some((start_ps, shape)) = self.starts.get_mut(&name).and_then(|q| q.pop_front()) else { return };
        let end_ps = e.start_ps.saturating_add(e.duration_ps);
        let mut row = None;
        let mut earliest = start_ps;
        for (i, r) in self.rows.iter().enumerate() {
            if r.end_ps <= earliest {
                row = Some(i);
                earliest = r.end_ps;
            }
        }
        let row = match row {
            Some(r) => r,
            None => {
                if self.rows.len() < HOST_OFFLOAD_ROWS {
                    self.rows.push(Row { end_ps, ..Default::default() });
                }
                self.rows.len() - 1
            }
        };
        let r = &mut self.rows[row];
        r.end_ps = r.end_ps.max(end_ps);
        let id = names.unique(name);
        r.events.push(super::line_builder::DerivedEvent { start_ps, duration_ps: (end_ps - start_ps).max(0), name: id, group_id: None });
        let mut args = vec![("_a".to_string(), "1".to_string())];
        args.extend(raw_bytes.clone().map(|v| ("raw_bytes_accessed".to_string(), v)));
        args.extend(shape.map(|v| (SHAPE_WITH_LAYOUT.to_string(), v)));
        r.args.push(args);
    }
}

/// XProf's `GetOffloadInstructionName`: `copy-start.3` → `offload-copy.3` (`.0` without a number).
fn offload_name(op: &str) -> String {
    let parts: Vec<&str> = op.split('.').collect();
    let id = if parts.len() < 2 { "0" } else { parts[parts.len() - 1] };
    let base = op.find("-start").or_else(|| op.find("-done")).map_or(op, |i| &op[..i]);
    format!("offload-{base}.{id}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offload_names_follow_xprof() {
        assert_eq!(offload_name("copy-start"), "offload-copy.0");
        assert_eq!(offload_name("copy-done.1"), "offload-copy.1");
        assert_eq!(offload_name("dynamic-update-slice-start.12"), "offload-dynamic-update-slice.12");
    }

    #[test]
    fn an_event_starting_where_a_module_ends_belongs_to_that_module() {
        let modules = [(0, 10), (10, 20), (25, 30)];
        let mut q = GroupQueue { modules: &modules, current: None, cached: None };
        assert_eq!(q.group((0, 10)), Some(0));
        assert_eq!(q.group((10, 20)), Some(0));
        assert_eq!(q.group((21, 22)), None);
        assert_eq!(q.group((26, 27)), Some(2));
    }
}
