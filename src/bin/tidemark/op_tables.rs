//! `tidemark op-profile | hlo-stats | kernel-stats | roofline-model`: XProf's device op tables of one trace or of a run's hosts combined, as a readable table or
//! (`--json`) as XProf's JSON.

use crate::args::open_run;
use crate::step_window::step_window;
use crate::units::count;
use std::fmt::Write;
use tidemark::analysis::hlo_stats::HloStats;
use tidemark::analysis::kernel_stats::KernelStats;
use tidemark::analysis::op_profile::{OpProfile, DUPLICATES_SUFFIX};
use tidemark::analysis::roofline_model::RooflineModel;
use tidemark::analysis::{hlo_stats, kernel_stats, op_profile, roofline_model};
use tidemark::engine::op_profile::{OpNodeColumns, OpProfileGrouping};
use tidemark::engine::tool::Tool as Shown;
use tidemark::engine::{EngineError, Scope, Session};

/// Characters of a kernel or op name shown in a table (C++ template names run to thousands).
const NAME_WIDTH: usize = 60;
/// Rows of HLO Op Stats shown in the table.
const TOP_HLO_ROWS: usize = 40;

/// How an op table is computed for a file or run, over the window of `--step` where it is given.
type Compute<T> = fn(&mut Session, &Scope) -> Result<std::sync::Arc<T>, EngineError>;

/// One op table: its command name, how to compute it, and its two renderings.
struct Tool<T> {
    command: &'static str,
    /// The page's tool of the same table, whose empty-state reason the text output begins with.
    shown: Shown,
    compute: Compute<T>,
    /// XProf's JSON, pretty-printed (as its converter's output is kept).
    json: fn(&T) -> String,
    /// The text: the file or run's name and the table, read from the engine's page view where the
    /// page draws figures of its own (the Op Profile's utilisations), so both print the same numbers.
    table: fn(&mut Session, &Scope, &str, &T) -> Result<String, EngineError>,
}

pub fn kernel_stats(argv: &[String]) -> i32 {
    run(
        argv,
        Tool {
            command: "kernel-stats",
            shown: Shown::KernelStats,
            compute: Session::kernel_stats,
            json: |t| pretty(&kernel_stats::xprof_json::table(t)),
            table: |_, _, name, t| Ok(kernel_table(name, t)),
        },
    )
}

pub fn hlo_stats(argv: &[String]) -> i32 {
    run(
        argv,
        Tool {
            command: "hlo-stats",
            shown: Shown::HloStats,
            compute: Session::hlo_stats,
            json: |t| pretty(&hlo_stats::xprof_json::table(t)),
            table: |_, _, name, t| Ok(hlo_table(name, t)),
        },
    )
}

pub fn op_profile(argv: &[String]) -> i32 {
    run(
        argv,
        Tool {
            command: "op-profile",
            shown: Shown::OpProfile,
            compute: Session::op_profile,
            json: |t| pretty(&op_profile::xprof_json::to_xprof_json(t)),
            table: profile_tree,
        },
    )
}

pub fn roofline_model(argv: &[String]) -> i32 {
    run(
        argv,
        Tool {
            command: "roofline-model",
            shown: Shown::RooflineModel,
            compute: Session::roofline_model,
            json: |t| pretty(&roofline_model::xprof_json::to_xprof_json(t)),
            table: |_, _, name, t| Ok(roofline_table(name, t)),
        },
    )
}

/// `value` as pretty JSON.
fn pretty(value: &impl serde::Serialize) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}

fn run<T>(argv: &[String], tool: Tool<T>) -> i32 {
    let usage = format!("usage: tidemark {} FILE|RUN_DIR [--step N] [--json]", tool.command);
    let mut f = match open_run(tool.command, &usage, argv, &["step"], &["json"]) {
        Ok(f) => f,
        Err(code) => return code,
    };
    let step = match step_window(&mut f, tool.command, &usage) {
        Ok(s) => s,
        Err(code) => return code,
    };
    if !f.args.flag("json") {
        print!("{}", crate::open::empty_reason_line(&f.session, &f.ids, tool.shown));
    }
    let scope = Scope::run(&f.ids).within(step.as_ref().map(|s| s.window));
    let result = match (tool.compute)(&mut f.session, &scope) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("tidemark {}: {e}", tool.command);
            return 1;
        }
    };
    if f.args.flag("json") {
        println!("{}", (tool.json)(&result));
        return 0;
    }
    match (tool.table)(&mut f.session, &scope, &f.name, &result) {
        Ok(table) => print!("{}{}{table}", f.hosts_line(), step.map(|s| s.line()).unwrap_or_default()),
        Err(e) => {
            eprintln!("tidemark {}: {e}", tool.command);
            return 1;
        }
    }
    0
}

/// The note of ops shown without FLOPs or bytes (Tidemark cannot compute XProf's cost of them).
fn write_cost_note(s: &mut String, note: &Option<String>) {
    if let Some(note) = note {
        let _ = writeln!(s, "note: {note}");
    }
}

fn shorten(s: &str) -> String {
    shorten_to(s, NAME_WIDTH)
}

/// `s` cut to `width` characters, with `…` when cut.
fn shorten_to(s: &str, width: usize) -> String {
    match s.char_indices().nth(width) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

fn kernel_table(name: &str, stats: &KernelStats) -> String {
    let mut s = String::new();
    if stats.reports.is_empty() {
        let _ = writeln!(s, "{name}: no GPU kernels (Kernel Stats reads `kernel_details` on /device:GPU planes)");
        return s;
    }
    let total_ns: u64 = stats.reports.iter().map(|r| r.total_duration_ns).sum();
    let _ = writeln!(s, "{name}: {} kernels, {:.3} ms on the GPUs", stats.reports.len(), total_ns as f64 / 1e6);
    let _ = writeln!(
        s,
        "{:>4} {:>8} {:>12} {:>10} {:>10} {:>10} {:>4} {:>6} {:>6}  {:<w$}  op",
        "rank",
        "count",
        "total µs",
        "avg µs",
        "min µs",
        "max µs",
        "regs",
        "shmem",
        "TC",
        "kernel",
        w = NAME_WIDTH + 1
    );
    for (i, r) in stats.reports.iter().enumerate() {
        let k = &r.key;
        let tc = match (k.is_kernel_using_tensor_core, k.is_op_tensor_core_eligible) {
            (true, _) => "used",
            (false, true) => "unused",
            (false, false) => "-",
        };
        let _ = writeln!(
            s,
            "{:>4} {:>8} {:>12.3} {:>10.3} {:>10.3} {:>10.3} {:>4} {:>6} {:>6}  {:<w$}  {}",
            i + 1,
            count(r.occurrences),
            r.total_duration_ns as f64 / 1e3,
            r.avg_duration_ns() as f64 / 1e3,
            r.min_duration_ns as f64 / 1e3,
            r.max_duration_ns as f64 / 1e3,
            k.registers_per_thread,
            r.shmem_bytes(),
            tc,
            shorten(&k.name),
            shorten(&k.op_name),
            w = NAME_WIDTH + 1
        );
    }
    s
}

fn hlo_table(name: &str, stats: &HloStats) -> String {
    let mut s = String::new();
    if stats.rows.is_empty() {
        let _ = writeln!(s, "{name}: no HLO ops ran on a device (HLO Op Stats reads the TPU `XLA Ops` lines)");
        return s;
    }
    let _ = writeln!(s, "{name}: {} HLO ops{}", stats.rows.len(), if stats.rows.len() > TOP_HLO_ROWS { ", longest shown" } else { "" });
    write_cost_note(&mut s, &stats.cost_note);
    let _ = writeln!(
        s,
        "{:>4} {:>8} {:>14} {:>8} {:>8} {:>10} {:>10}  {:<8}  {:<18}  {:<w$}  framework op",
        "rank",
        "count",
        "self µs",
        "self %",
        "cum %",
        "GFLOP/s",
        "GiB/s",
        "bound",
        "category",
        "HLO op",
        w = NAME_WIDTH + 1
    );
    for r in stats.rows.iter().take(TOP_HLO_ROWS) {
        let _ = writeln!(
            s,
            "{:>4} {:>8} {:>14.3} {:>8.3} {:>8.3} {:>10.3} {:>10.3}  {:<8}  {:<18}  {:<w$}  {}",
            r.rank,
            count(r.op.occurrences),
            r.op.self_time_ps as f64 / 1e6,
            r.self_time_fraction * 100.0,
            r.cumulative_self_time_fraction * 100.0,
            r.roofline.measured_flop_rate,
            r.roofline.measured_memory_bw,
            r.roofline.bound_by,
            shorten(&r.op.category),
            shorten(r.hlo_op_name()),
            shorten(&r.op.provenance),
            w = NAME_WIDTH + 1
        );
    }
    s
}

fn roofline_table(name: &str, model: &RooflineModel) -> String {
    let mut s = String::new();
    if model.records.is_empty() {
        let _ = writeln!(s, "{name}: no device ops (the Roofline Model reads TPU `XLA Ops` lines)");
        return s;
    }
    let _ = writeln!(
        s,
        "{name}: {} — peak {:.0} GFLOP/s, HBM {:.1} GiB/s (ridge point {:.1} FLOP/byte)",
        model.device_type,
        model.peak_flop_rate,
        model.peak_hbm_bw,
        model.ridge_point(model.peak_hbm_bw)
    );
    write_cost_note(&mut s, &model.cost_note);
    for w in &model.warnings {
        let _ = writeln!(s, "note: {w}");
    }
    let _ = writeln!(
        s,
        "{:<8} {:>4} {:>14} {:>10} {:>10} {:>10} {:>8}  {:<8}  {:<w$}  category",
        "span",
        "rank",
        "time µs",
        "GFLOP/s",
        "GiB/s",
        "FLOP/B",
        "eff %",
        "bound",
        "op",
        w = NAME_WIDTH + 1
    );
    // The records with infeed/outfeed included (XProf repeats them without).
    for r in model.records.iter().filter(|r| r.include_infeed_outfeed).take(TOP_HLO_ROWS) {
        let _ = writeln!(
            s,
            "{:<8} {:>4} {:>14.3} {:>10.3} {:>10.3} {:>10.3} {:>8.3}  {:<8}  {:<w$}  {}",
            r.span.label(),
            r.rank,
            r.total_time_us,
            r.rates.measured_flop_rate,
            r.rates.measured_memory_bw,
            r.rates.operational_intensity,
            r.roofline_efficiency * 100.0,
            r.rates.bound_by,
            shorten(&r.name),
            r.category,
            w = NAME_WIDTH + 1
        );
    }
    s
}

/// Children shown per node of the Op Profile tree.
const TREE_CHILDREN: usize = 10;
/// Characters of an op's HLO text shown at the end of its line in the Op Profile tree.
const EXPRESSION_WIDTH: usize = 100;

/// The Op Profile tree by program, idle included, as the page's view gives it (its time shares and
/// utilisations: XProf's page formulas, computed once in the engine).
fn profile_tree(session: &mut Session, scope: &Scope, name: &str, profile: &OpProfile) -> Result<String, EngineError> {
    let mut s = String::new();
    if profile.by_program.children.is_empty() && profile.by_program.xla.is_none() {
        let _ = writeln!(s, "{name}: no device ops ({}; Op Profile reads TPU `XLA Ops` lines and GPU kernels)", profile.device_type);
        return Ok(s);
    }
    let view = session.op_profile_view(scope, OpProfileGrouping::ByProgram, true)?;
    let _ = writeln!(
        s,
        "{name}: {} — time, share of the device's time, FLOPS and HBM utilisation, HLO text; under a fusion, its fused instructions",
        view.device_type
    );
    write_cost_note(&mut s, &view.cost_note);
    fn walk(s: &mut String, nodes: &OpNodeColumns, children: &[Vec<u32>], i: usize, depth: usize, in_fusion: bool) {
        if in_fusion {
            // A fused instruction has no time of its own: its category and text say what it is.
            let _ = writeln!(
                s,
                "{:indent$}{:<w$} {:<49}  {}",
                "",
                shorten(&nodes.name[i]),
                nodes.category[i],
                shorten_to(&nodes.expression[i], EXPRESSION_WIDTH),
                indent = depth * 2,
                w = NAME_WIDTH + 1
            );
        } else {
            let percent = |v: Option<f64>| v.map_or_else(|| format!("{:>7}", "-"), |v| format!("{:>7.2}", v * 100.0 + 0.0));
            let _ = writeln!(
                s,
                "{:indent$}{:<w$} {:>16.3} µs {:>7.3} % {} % {} %  {}",
                "",
                shorten(&nodes.name[i]),
                nodes.raw_time_ps[i] as f64 / 1e6,
                nodes.time_fraction[i] * 100.0,
                percent(nodes.flops_utilization[i]),
                percent(nodes.bandwidth_utilization[0][i]),
                shorten_to(&nodes.expression[i], EXPRESSION_WIDTH),
                indent = depth * 2,
                w = NAME_WIDTH + 1
            );
        }
        // An op's children are the instructions fused into it.
        let fused = in_fusion || nodes.is_op[i] && nodes.program_id[i] != 0 && !nodes.name[i].ends_with(DUPLICATES_SUFFIX);
        for &c in children[i].iter().take(TREE_CHILDREN) {
            walk(s, nodes, children, c as usize, depth + 1, fused);
        }
        if children[i].len() > TREE_CHILDREN {
            let _ = writeln!(s, "{:indent$}… {} more", "", children[i].len() - TREE_CHILDREN, indent = depth * 2 + 2);
        }
    }
    walk(&mut s, &view.nodes, &view.nodes.children(), 0, 0, false);
    Ok(s)
}
