//! `tidemark memory-profile`: XProf's Memory Profile as text, or as XProf's own JSON (`--json`, plus a
//! `tidemark` key with our exact counts and leak hints).

use crate::args::{open_one, OpenedFile};
use crate::units::{bytes, count};
use std::fmt::Write;
use tidemark::analysis::allocation_names::{self, AllocationNames, AllocatorNames, NameKind, PoolAtPeak};
use tidemark::analysis::memory_profile::{xprof_json, AllocatorProfile, MemoryProfile};
use tidemark::engine::tool::Tool;

const USAGE: &str = "usage: tidemark memory-profile FILE [--memory-id ID] [--json]";
/// Breakdown rows shown in the text output (the JSON has all of them).
const TOP_ROWS: usize = 10;
/// Ops listed among the allocations still live at the end.
const TOP_LIVE_OPS: usize = 5;

pub fn run(argv: &[String]) -> i32 {
    let OpenedFile { args, name, mut session, id } = match open_one("memory-profile", USAGE, argv, &["memory-id"], &["json"]) {
        Ok(f) => f,
        Err(code) => return code,
    };
    let mut profile = match session.take_memory_profile(id) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("tidemark: {e}");
            return 1;
        }
    };
    if let Some(id) = args.option("memory-id") {
        if profile.allocator(id).is_none() {
            let known: Vec<&str> = profile.memory_ids().collect();
            let known = if known.is_empty() { "none".to_string() } else { known.join(", ") };
            eprintln!("tidemark: {name}: no memory ID `{id}` (memory IDs in this file: {known})");
            return 1;
        }
        profile.allocators.retain(|a| a.memory_id == id);
    }
    // Named where XProf names nothing: a trace whose allocations at the peak carry no op (JAX's).
    let names = if allocation_names::needed(&profile) {
        match session.allocation_names(id, &profile) {
            Ok(n) => Some(n),
            Err(e) => {
                eprintln!("tidemark: {e}");
                return 1;
            }
        }
    } else {
        None
    };
    if args.flag("json") {
        match xprof_json::to_string_named(&profile, names.as_ref()) {
            Ok(s) => println!("{s}"),
            Err(e) => {
                eprintln!("tidemark: {name}: cannot write JSON: {e}");
                return 1;
            }
        }
    } else {
        print!("{}{}", crate::open::empty_reason_line(&session, &[id], Tool::MemoryProfile), text(&name, &profile, names.as_ref()));
    }
    0
}

fn text(name: &str, p: &MemoryProfile, names: Option<&AllocationNames>) -> String {
    let mut s = format!("{name}\n");
    if p.allocators.is_empty() {
        s.push_str("  no memory allocation events on /host:CPU: nothing to profile (JAX on CPU, and TensorFlow on CPU without a BFC allocator, record none)\n");
    }
    for reason in names.map_or(&[][..], |n| &n.reasons) {
        let _ = writeln!(s, "  note: {reason}");
    }
    for a in &p.allocators {
        allocator_text(&mut s, a);
        if let Some(n) = names.and_then(|n| n.allocator(&a.memory_id)) {
            named_text(&mut s, n);
        }
    }
    s
}

/// What was live at the peak by name (Tidemark's own): every live allocation, not only the peak
/// step's as XProf's table.
fn named_text(s: &mut String, n: &AllocatorNames) {
    if let Some(why) = &n.unaligned {
        let _ = writeln!(s, "    named at peak: not available ({why})");
        return;
    }
    let p = &n.peak;
    let shown = if p.rows.len() > TOP_ROWS { ", largest shown" } else { "" };
    let _ = writeln!(
        s,
        "    named at peak ({} rows{shown}; every allocation live at the peak event, by module run / compile / transfer and buffer):",
        p.rows.len()
    );
    let _ = writeln!(s, "      {:>12} {:>6}  name  [innermost Python frame]", "bytes", "count");
    for r in p.rows.iter().take(TOP_ROWS) {
        let Some(name) = n.names.get(r.name as usize) else { continue };
        let frame = name.python_frame.as_deref().map(|f| format!("  [{f}]")).unwrap_or_default();
        let _ = writeln!(s, "      {:>12} {:>6}  {}{frame}", bytes(r.allocation_bytes), count(r.allocations), name.label);
    }
    if p.before_trace_bytes != 0 {
        let _ = writeln!(
            s,
            "      {:>12} {:>6}  allocated before the trace began (no event of it in the window)",
            bytes(p.before_trace_bytes),
            ""
        );
    }
    if p.stack_bytes != 0 {
        let _ = writeln!(s, "      {:>12} {:>6}  stack", bytes(p.stack_bytes), "");
    }
    let _ = writeln!(s, "      by kind: {}", by_kind(&p.by_kind));
    let pool = &p.pool;
    let _ = writeln!(s, "      preallocated but unused: {}", pool_text(pool));
    let _ = writeln!(s, "        {}", pool.note);
    let _ = writeln!(s, "      by module: {}", by_module(&p.by_module));
    let end = &n.live_at_end;
    let shown = if end.rows.len() > TOP_LIVE_OPS { ", largest shown" } else { "" };
    let _ = writeln!(s, "    leak suspects named (still live at the end, {} rows{shown}):", end.rows.len());
    for r in end.rows.iter().take(TOP_LIVE_OPS) {
        let Some(name) = n.names.get(r.name as usize) else { continue };
        let _ = writeln!(s, "      {:>12} {:>6}  {}", bytes(r.allocation_bytes), count(r.allocations), name.label);
    }
    if !end.rows.is_empty() {
        let _ = writeln!(s, "      by module: {}", by_module(&end.by_module));
    }
    if !n.floors.is_empty() {
        let _ = writeln!(
            s,
            "    heap floor per step (lowest heap + stack of the step: what stays allocated between steps), by module and kind:"
        );
    }
    for f in &n.floors {
        let mut parts = by_module(&f.live.by_module);
        if f.live.before_trace_bytes != 0 {
            parts.push_str(&format!(" · before the trace {}", bytes(f.live.before_trace_bytes)));
        }
        if f.stack_bytes != 0 {
            parts.push_str(&format!(" · stack {}", bytes(f.stack_bytes)));
        }
        let _ = writeln!(s, "      step {:>4} {:>12}  {parts}  [{}]", f.step_id, bytes(f.in_use_bytes), by_kind(&f.live.by_kind));
    }
}

/// Bytes per kind, most first, as one line.
pub(crate) fn by_kind(kinds: &[(NameKind, i64)]) -> String {
    kinds.iter().map(|(k, b)| format!("{} {}", k.label(), bytes(*b))).collect::<Vec<_>>().join(" · ")
}

/// Bytes per module, most first, as one line (`""` is no module).
pub(crate) fn by_module(modules: &[(String, i64)]) -> String {
    modules.iter().map(|(m, b)| format!("{} {}", if m.is_empty() { "no module" } else { m }, bytes(*b))).collect::<Vec<_>>().join(" · ")
}

fn allocator_text(s: &mut String, a: &AllocatorProfile) {
    let sum = &a.summary;
    let peak = &sum.peak_stats;
    let exact = |n: i64| format!("{} ({} B)", bytes(n), signed(n));
    let _ = writeln!(s, "  memory ID {}", a.memory_id);
    let _ = writeln!(
        s,
        "    peak in use  {}  = heap {} + stack {}",
        exact(peak.peak_bytes_in_use),
        bytes(peak.heap_allocated_bytes),
        bytes(peak.stack_reserved_bytes)
    );
    let _ = writeln!(s, "    peak time    {:.3} ms (step {})", sum.peak_stats_time_ps as f64 / 1e9, sum.peak_step_id);
    let _ = writeln!(s, "    capacity     {}", exact(sum.memory_capacity_bytes));
    let _ = writeln!(s, "    fragmentation at peak {:.2} %", peak.fragmentation * 100.0);
    let _ = writeln!(s, "    lifetime peak {}", exact(sum.peak_bytes_usage_lifetime));
    let c = &a.counts;
    let _ = writeln!(
        s,
        "    events       {} allocations, {} deallocations (XProf counts {} / {} on its {} sampled points)",
        count(c.allocations),
        count(c.deallocations),
        count(c.sampled_allocations),
        count(c.sampled_deallocations),
        count(a.sampled_indices.len() as u64)
    );
    let _ =
        writeln!(s, "    live at peak ({} rows{}):", a.breakdown.len(), if a.breakdown.len() > TOP_ROWS { ", largest shown" } else { "" });
    let _ = writeln!(s, "      {:>12} {:>12} {:>6}  op / region / dtype / shape", "bytes", "requested", "count");
    for row in a.breakdown.iter().take(TOP_ROWS) {
        let Some(m) = a.row_metadata(row) else { continue };
        let freed = match row.freed_before_peak {
            0 => String::new(),
            n => format!("  [{} already freed by another step: XProf counts them live]", count(n)),
        };
        let _ = writeln!(
            s,
            "      {:>12} {:>12} {:>6}  {} / {} / {} / {}{freed}",
            bytes(m.allocation_bytes),
            bytes(m.requested_bytes),
            count(row.occurrences),
            or_dash(m.tf_op_name),
            or_dash(m.region_type),
            m.data_type,
            or_dash(m.tensor_shape)
        );
    }
    let freed: u64 = a.breakdown.iter().map(|r| r.freed_before_peak).sum();
    if freed > 0 {
        let _ = writeln!(
            s,
            "      note: {} of these allocations were freed before the peak by events XProf groups into another step; XProf still lists them",
            count(freed)
        );
    }
    let l = &a.leaks;
    let _ = writeln!(s, "    leak hints");
    let _ = writeln!(
        s,
        "      allocated {} and freed {} in the window; {} deallocations free memory allocated before it",
        bytes(l.allocated_bytes),
        bytes(l.deallocated_bytes),
        count(l.unmatched_deallocations)
    );
    let live: u64 = l.live_at_end.iter().map(|g| g.allocations).sum();
    let _ = writeln!(s, "      still live at the end: {} allocations, {}", count(live), bytes(l.live_at_end_bytes));
    for g in l.live_at_end.iter().take(TOP_LIVE_OPS) {
        let _ = writeln!(s, "        {:>12} {:>6}  {}", bytes(g.allocation_bytes), count(g.allocations), or_dash(&g.tf_op_name));
    }
    let verdict = if l.heap_grows_every_step { "rises every step: memory is retained step over step" } else { "does not rise every step" };
    let _ =
        writeln!(s, "      lowest usage per step {verdict} ({} steps, first to last {})", l.step_floors.len(), bytes(l.floor_growth_bytes));
}

fn or_dash(s: &str) -> &str {
    if s.is_empty() {
        "-"
    } else {
        s
    }
}

/// `count` for values that may (in a corrupt file) be negative.
fn signed(n: i64) -> String {
    let sign = if n < 0 { "-" } else { "" };
    format!("{sign}{}", count(n.unsigned_abs()))
}

/// The by-kind "preallocated but unused" at the peak: the bytes where the allocator's figures pin the
/// pool, else the bounds and that the trace cannot tell.
fn pool_text(pool: &PoolAtPeak) -> String {
    let pool_bound =
        pool.pool_at_least_bytes.map(|b| format!("pool at least {}", bytes(b))).unwrap_or_else(|| "no bound on the pool".into());
    match (pool.unused_bytes(), pool.unused_at_most_bytes) {
        (Some(most), _) => format!(
            "{} (the pool is the allocator's whole limit {}: {pool_bound}; in use {})",
            bytes(most),
            bytes(pool.limit_bytes),
            bytes(pool.in_use_bytes)
        ),
        (None, Some(most)) => format!(
            "the trace cannot tell: between {} and {} ({pool_bound}; limit {} − in use {})",
            bytes(pool.unused_at_least_bytes),
            bytes(most),
            bytes(pool.limit_bytes),
            bytes(pool.in_use_bytes)
        ),
        (None, None) => "the trace cannot tell (no limit above the bytes in use)".into(),
    }
}
