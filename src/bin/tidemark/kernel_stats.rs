//! `tidemark kernel-stats`: XProf's GPU Kernel Stats of one trace, as a table or as XProf's JSON.

use crate::args::Args;
use crate::units::count;
use std::fmt::Write;
use tidemark::analysis::kernel_stats::{table::to_xprof_json, KernelStats};
use tidemark::engine::Session;

const USAGE: &str = "usage: tidemark kernel-stats FILE [--json]";
/// Characters of a kernel or op name shown in the table (C++ template names run to thousands).
const NAME_WIDTH: usize = 60;

pub fn run(argv: &[String]) -> i32 {
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
    let stats = match session.kernel_stats(id) {
        Ok(s) => s,
        Err(e) => return fail(&e.to_string()),
    };
    if args.flag("json") {
        println!("{}", serde_json::to_string_pretty(&to_xprof_json(&stats)).unwrap_or_default());
    } else {
        print!("{}", table(&name, &stats));
    }
    0
}

fn usage(message: &str) -> i32 {
    eprintln!("tidemark kernel-stats: {message}\n{USAGE}");
    2
}

fn fail(message: &str) -> i32 {
    eprintln!("tidemark kernel-stats: {message}");
    1
}

fn shorten(s: &str) -> String {
    match s.char_indices().nth(NAME_WIDTH) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

fn table(name: &str, stats: &KernelStats) -> String {
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
