//! `tidemark kernel-stats | hlo-stats | roofline-model`: XProf's device op tables of one trace, as a readable table or
//! (`--json`) as XProf's JSON.

use crate::args::Args;
use crate::units::count;
use std::fmt::Write;
use tidemark::analysis::hlo_stats::HloStats;
use tidemark::analysis::kernel_stats::KernelStats;
use tidemark::analysis::roofline_model::RooflineModel;
use tidemark::analysis::{hlo_stats, kernel_stats, roofline_model};
use tidemark::engine::op_tables::OpTablesError;
use tidemark::engine::Session;

/// Characters of a kernel or op name shown in a table (C++ template names run to thousands).
const NAME_WIDTH: usize = 60;
/// Rows of HLO Op Stats shown in the table.
const TOP_HLO_ROWS: usize = 40;

/// One op table: its command name, how to compute it, and its two renderings.
struct Tool<T> {
    command: &'static str,
    compute: fn(&mut Session, u32) -> Result<std::sync::Arc<T>, OpTablesError>,
    json: fn(&T) -> serde_json::Value,
    table: fn(&str, &T) -> String,
}

pub fn kernel_stats(argv: &[String]) -> i32 {
    run(
        argv,
        Tool { command: "kernel-stats", compute: Session::kernel_stats, json: kernel_stats::table::to_xprof_json, table: kernel_table },
    )
}

pub fn hlo_stats(argv: &[String]) -> i32 {
    run(argv, Tool { command: "hlo-stats", compute: Session::hlo_stats, json: hlo_stats::table::to_xprof_json, table: hlo_table })
}

pub fn roofline_model(argv: &[String]) -> i32 {
    run(
        argv,
        Tool {
            command: "roofline-model",
            compute: Session::roofline_model,
            json: roofline_model::table::to_xprof_json,
            table: roofline_table,
        },
    )
}

fn run<T>(argv: &[String], tool: Tool<T>) -> i32 {
    let usage = |message: &str| {
        eprintln!("tidemark {}: {message}\nusage: tidemark {} FILE [--json]", tool.command, tool.command);
        2
    };
    let fail = |message: &str| {
        eprintln!("tidemark {}: {message}", tool.command);
        1
    };
    let args = match Args::parse(argv, &[]).and_then(|a| a.check_flags(&["json"]).map(|_| a)) {
        Ok(a) => a,
        Err(e) => return usage(&e),
    };
    let [path] = args.files.as_slice() else { return usage("give exactly one FILE") };
    let name = path.display().to_string();
    let file_bytes = match tidemark::engine::read_input::read_input(path) {
        Ok(b) => b,
        Err(e) => return fail(&format!("{name}: cannot read the file: {e}")),
    };
    let mut session = Session::new();
    let id = match session.open(&name, file_bytes, &mut |_, _| {}) {
        Ok(f) => f.id,
        Err(e) => return fail(&e.to_string()),
    };
    let result = match (tool.compute)(&mut session, id) {
        Ok(r) => r,
        Err(e) => return fail(&e.to_string()),
    };
    if args.flag("json") {
        println!("{}", serde_json::to_string_pretty(&(tool.json)(&result)).unwrap_or_default());
    } else {
        print!("{}", (tool.table)(&name, &result));
    }
    0
}

fn shorten(s: &str) -> String {
    match s.char_indices().nth(NAME_WIDTH) {
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
