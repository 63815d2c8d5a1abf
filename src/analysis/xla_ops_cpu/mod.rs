//! "XLA ops on CPU": Tidemark's own table, not an XProf tool. On a CPU-only JAX trace XProf's op tools
//! are empty (there is no device plane), yet XLA's CPU runtime times every HLO op it runs on the host
//! threads that execute programs (`tf_XLAExecute/*`, `tf_XLAEigen/*`): an event per op run, with the
//! stats `hlo_op` (the instruction's name), `hlo_module` (the module's name) and, in newer traces,
//! `program_id`. This reads those events and gives one row per (module, HLO op).
//!
//! How the figures are made:
//! - **Which events.** Every event of a `/host:CPU` line (derived lines skipped) that has an `hlo_op`
//!   stat, on the event or on its metadata (the event's own wins). The `end: <op>` markers the runtime
//!   writes after an op carry no `hlo_op` and are not ops.
//! - **Nesting.** On one line, an op event that lies inside another (starts at or after it and starts
//!   before it ends) is its child: an op's self time is its duration less its direct children's
//!   durations (never below 0, should a child outlast its parent). Ops on different threads never
//!   nest, even where one thread waits for another.
//! - **Module.** The `program_id` stat names the module when the event has it; otherwise the module
//!   whose name is the `hlo_module` stat, when exactly one module of the trace has that name. A
//!   module missing from `/host:metadata` (or named by several) leaves the row without instruction
//!   details; [`XlaOpsCpu::unresolved_modules`] lists those names.
//! - **Instruction.** Opcode, XLA's category, framework op, text, shape and source line come from the
//!   module's instruction of that name ([`crate::analysis::xla_modules::XlaInstruction`]).
//! - **Order.** Self time, longest first, then module, then op name: the same file gives the same
//!   rows in the same order.

use crate::analysis::device_planes::is_derived_line;
use crate::analysis::xla_modules::XlaModules;
use crate::decode::xplane::names::{HLO_MODULE, HLO_OP, HOST_PLANE, PROGRAM_ID};
use crate::decode::xplane::{Plane, RawStat, StatValue, Want, XSpace};
use crate::decode::DecodeError;
use crate::fast_hash::FastMap;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// One HLO op of one module, over all its runs on the host threads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct XlaOpRow {
    /// The module's name as the events give it (`hlo_module`: `jit_train_step`).
    pub module: String,
    /// The module's program id, when the trace names it or the module name resolves to one module.
    pub program_id: Option<u64>,
    /// The module as the Memory Viewer names it (`jit_train_step(14)`), when it is in the trace.
    pub memory_viewer_module: Option<String>,
    /// The HLO instruction's name (`hlo_op`: `multiply_add_fusion.3`).
    pub op_name: String,
    /// The instruction's opcode (`fusion`, `dot`, `copy`); empty when its module is not in the trace
    /// or has no instruction of that name.
    pub opcode: String,
    /// XLA's category of the instruction (`loop fusion`, `data formatting`, `dot`, ...), as XProf shows
    /// it for device ops; [`UNKNOWN`] without an instruction.
    pub category: String,
    /// The framework op the instruction came from (`jit(train_step)/dot_general:`), as XProf writes it.
    pub framework_op: String,
    /// The instruction's text (XProf's "HLO expression"); empty without an instruction.
    pub expression: String,
    /// Its result shape with layout (`f32[128,512]{1,0}`); empty without an instruction.
    pub shape: String,
    /// `file:line` it came from, when the HLO says.
    pub source: Option<String>,
    /// How many times the op ran.
    pub occurrences: u64,
    /// Σ duration of its runs (self plus nested ops).
    pub total_time_ps: u64,
    /// `total_time_ps / occurrences`.
    pub avg_time_ps: f64,
    /// Σ (duration − direct children's durations).
    pub self_time_ps: u64,
    /// `self_time_ps / occurrences`.
    pub avg_self_time_ps: f64,
    /// `self_time_ps` over every op's self time (the rows' self times sum to 1).
    pub self_time_fraction: f64,
}

/// The table of a trace.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct XlaOpsCpu {
    /// By self time, longest first, then module, then op name.
    pub rows: Vec<XlaOpRow>,
    /// Σ self time of all rows: what [`XlaOpRow::self_time_fraction`] divides by.
    pub total_self_time_ps: u64,
    /// Σ occurrences of all rows.
    pub total_occurrences: u64,
    /// The host threads that ran XLA ops, by name.
    pub threads: Vec<String>,
    /// `hlo_module` names that match no module of `/host:metadata` (or several): their rows have no
    /// opcode, category or framework op.
    pub unresolved_modules: Vec<String>,
}

/// The category of an op without an instruction (its module is not in the trace, or lacks the op).
pub const UNKNOWN: &str = "unknown";

/// The stats an op event is read by.
const STATS: [&str; 3] = [HLO_OP, HLO_MODULE, PROGRAM_ID];

/// What names one op event: instruction, module name, program id.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
struct OpKey {
    op: String,
    module: String,
    program_id: Option<u64>,
}

/// One run of an op on a line.
#[derive(Debug, Clone, Copy)]
struct Run {
    start_ps: i64,
    end_ps: i64,
    key: usize,
}

/// Sums of one key.
#[derive(Debug, Clone, Copy, Default)]
struct Sums {
    occurrences: u64,
    total_ps: u64,
    self_ps: u64,
}

/// The XLA ops of `space` on its host threads, joined with `modules`' instructions. Empty (no rows)
/// for a trace without a host plane or without XLA op events.
pub fn analyze(space: &XSpace, modules: &XlaModules) -> Result<XlaOpsCpu, DecodeError> {
    let Some(plane) = space.plane_named(HOST_PLANE) else { return Ok(XlaOpsCpu::default()) };
    let ids = STATS.map(|n| plane.stat_id(n));
    if ids[0].is_none() {
        return Ok(XlaOpsCpu::default());
    }
    let selection = plane.stat_selection(&STATS);
    let by_metadata = metadata_keys(plane, &ids);
    let mut keys: Vec<OpKey> = Vec::new();
    let mut key_index: FastMap<OpKey, usize> = FastMap::default();
    let mut sums: Vec<Sums> = Vec::new();
    let mut threads = Vec::new();
    for line in plane.lines.iter().filter(|l| !is_derived_line(l.header.id)) {
        let mut runs = Vec::new();
        space.for_each_raw_event(
            line,
            &selection,
            |_| Want::Stats,
            |_, e| {
                let meta = by_metadata.get(&e.header.metadata_id);
                let Some(key) = event_key(plane, &ids, e.stats, meta)? else { return Ok(()) };
                let next = keys.len();
                let key = *key_index.entry(key.clone()).or_insert_with(|| {
                    keys.push(key);
                    sums.push(Sums::default());
                    next
                });
                let start_ps = e.header.offset_ps;
                runs.push(Run { start_ps, end_ps: start_ps.saturating_add(e.header.duration_ps.max(0)), key });
                Ok(())
            },
        )?;
        if !runs.is_empty() {
            threads.push(if line.header.display_name.is_empty() { line.header.name.clone() } else { line.header.display_name.clone() });
            add_line(&mut runs, &mut sums);
        }
    }
    threads.sort();
    Ok(table(keys, &sums, modules, threads))
}

/// The (op, module, program id) of each event metadata that carries an `hlo_op` stat.
fn metadata_keys(plane: &Plane, ids: &[Option<i64>; 3]) -> FastMap<i64, OpKey> {
    let mut out = FastMap::default();
    for (&id, meta) in &plane.meta.event_metadata {
        let value = |stat: Option<i64>| {
            let stat = stat?;
            meta.stats.iter().find(|s| s.metadata_id == stat).and_then(|s| plane.stat_value(s))
        };
        let Some(op) = value(ids[0]).as_ref().and_then(StatValue::as_str).map(str::to_string) else { continue };
        let module = value(ids[1]).as_ref().and_then(StatValue::as_str).unwrap_or("").to_string();
        let program_id = value(ids[2]).as_ref().and_then(StatValue::as_u64);
        out.insert(id, OpKey { op, module, program_id });
    }
    out
}

/// The op an event ran, from its own stats over its metadata's; `None` for an event that is no op.
fn event_key(plane: &Plane, ids: &[Option<i64>; 3], stats: &[RawStat<'_>], meta: Option<&OpKey>) -> Result<Option<OpKey>, DecodeError> {
    let mut own: [Option<StatValue<'_>>; 3] = [None, None, None];
    for s in stats {
        if let Some(slot) = ids.iter().position(|&id| id == Some(s.metadata_id)) {
            if own[slot].is_none() {
                own[slot] = plane.raw_stat_value(s)?;
            }
        }
    }
    let text = |v: &Option<StatValue<'_>>| v.as_ref().and_then(StatValue::as_str).map(str::to_string);
    let Some(op) = text(&own[0]).or_else(|| meta.map(|m| m.op.clone())) else { return Ok(None) };
    let module = text(&own[1]).or_else(|| meta.map(|m| m.module.clone())).unwrap_or_default();
    let program_id = own[2].as_ref().and_then(StatValue::as_u64).or_else(|| meta.and_then(|m| m.program_id));
    Ok(Some(OpKey { op, module, program_id }))
}

/// Adds one line's runs to `sums`: each run's occurrence and duration, and its self time once its
/// direct children (runs inside it on this line) are known.
fn add_line(runs: &mut [Run], sums: &mut [Sums]) {
    // Parents before their children: by start, then the longer first.
    runs.sort_by(|a, b| a.start_ps.cmp(&b.start_ps).then(b.end_ps.cmp(&a.end_ps)));
    // Open runs: (run, Σ its direct children's durations).
    let mut open: Vec<(Run, u64)> = Vec::new();
    let close = |(run, children_ps): (Run, u64), sums: &mut [Sums]| {
        let duration_ps = (run.end_ps - run.start_ps) as u64;
        let s = &mut sums[run.key];
        s.occurrences += 1;
        s.total_ps = s.total_ps.wrapping_add(duration_ps);
        s.self_ps = s.self_ps.wrapping_add(duration_ps.saturating_sub(children_ps));
    };
    for &run in runs.iter() {
        while open.last().is_some_and(|(p, _)| p.end_ps <= run.start_ps) {
            close(open.pop().expect("checked non-empty"), sums);
        }
        if let Some((_, children_ps)) = open.last_mut() {
            *children_ps = children_ps.wrapping_add((run.end_ps - run.start_ps) as u64);
        }
        open.push((run, 0));
    }
    while let Some(o) = open.pop() {
        close(o, sums);
    }
}

/// The rows of `keys`, joined with their instructions, sorted.
fn table(keys: Vec<OpKey>, sums: &[Sums], modules: &XlaModules, threads: Vec<String>) -> XlaOpsCpu {
    let total_self_time_ps = sums.iter().fold(0u64, |t, s| t.wrapping_add(s.self_ps));
    let mut unresolved = BTreeSet::new();
    let mut rows: Vec<XlaOpRow> = keys
        .into_iter()
        .zip(sums)
        .map(|(key, s)| {
            let program_id = key.program_id.or_else(|| modules.program_id_named(&key.module));
            if program_id.is_none_or(|id| modules.module_name(id).is_none()) {
                unresolved.insert(key.module.clone());
            }
            let instruction = program_id.and_then(|id| modules.instruction(id, &key.op));
            let per = |ps: u64| if s.occurrences == 0 { 0.0 } else { ps as f64 / s.occurrences as f64 };
            XlaOpRow {
                memory_viewer_module: program_id.and_then(|id| modules.xprof_name(id)).map(str::to_string),
                program_id,
                opcode: instruction.map(|i| i.opcode.clone()).unwrap_or_default(),
                category: instruction.map_or_else(|| UNKNOWN.to_string(), |i| i.category.clone()),
                framework_op: instruction.map(|i| i.tf_op_name.clone()).unwrap_or_default(),
                expression: instruction.map(|i| i.expression.clone()).unwrap_or_default(),
                shape: instruction.map(|i| i.shape.clone()).unwrap_or_default(),
                source: instruction.and_then(|i| i.source.clone()),
                occurrences: s.occurrences,
                total_time_ps: s.total_ps,
                avg_time_ps: per(s.total_ps),
                self_time_ps: s.self_ps,
                avg_self_time_ps: per(s.self_ps),
                self_time_fraction: if total_self_time_ps == 0 { 0.0 } else { s.self_ps as f64 / total_self_time_ps as f64 },
                module: key.module,
                op_name: key.op,
            }
        })
        .collect();
    rows.sort_by(|a, b| b.self_time_ps.cmp(&a.self_time_ps).then_with(|| a.module.cmp(&b.module)).then_with(|| a.op_name.cmp(&b.op_name)));
    XlaOpsCpu {
        total_occurrences: rows.iter().map(|r| r.occurrences).sum(),
        rows,
        total_self_time_ps,
        threads,
        unresolved_modules: unresolved.into_iter().collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(start_ps: i64, end_ps: i64, key: usize) -> Run {
        Run { start_ps, end_ps, key }
    }

    #[test]
    fn self_time_is_duration_less_direct_children() {
        // 0: [0, 100) holds 1: [10, 60), which holds 2: [20, 30); 3: [70, 80) is another child of 0.
        let mut runs = vec![run(20, 30, 2), run(0, 100, 0), run(70, 80, 3), run(10, 60, 1)];
        let mut sums = vec![Sums::default(); 4];
        add_line(&mut runs, &mut sums);
        let selfs: Vec<u64> = sums.iter().map(|s| s.self_ps).collect();
        assert_eq!(selfs, [100 - 50 - 10, 50 - 10, 10, 10]);
        assert!(sums.iter().all(|s| s.occurrences == 1));
        assert_eq!(sums[0].total_ps, 100);
    }

    #[test]
    fn back_to_back_runs_do_not_nest_and_an_overlong_child_leaves_no_negative_self_time() {
        let mut runs = vec![run(0, 10, 0), run(10, 20, 1), run(15, 40, 2)];
        let mut sums = vec![Sums::default(); 3];
        add_line(&mut runs, &mut sums);
        assert_eq!(sums.iter().map(|s| s.self_ps).collect::<Vec<_>>(), [10, 0, 25]);
    }
}
