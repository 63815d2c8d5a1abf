//! `tidemark input-pipeline-analyzer`: XProf's Input Pipeline Analyzer as text (verdict, step
//! statistics, the step table, the host's input ops), or as XProf's own JSON (`--json`).

use crate::overview_page::{open, steps_text};
use std::fmt::Write;
use tidemark::analysis::input_pipeline::{xprof_json, InputPipeline};

const USAGE: &str = "usage: tidemark input-pipeline-analyzer FILE|RUN_DIR [--json]";

pub fn run(argv: &[String]) -> i32 {
    let (args, hosts, page) = match open("input-pipeline-analyzer", USAGE, argv) {
        Ok(x) => x,
        Err(code) => return code,
    };
    if args.flag("json") {
        println!("{}", xprof_json::input_pipeline_json(&page.input));
    } else {
        print!("{hosts}{}", text(&page.input));
    }
    0
}

fn text(a: &InputPipeline) -> String {
    let mut s = steps_text(a);
    if !a.steps.is_empty() {
        let _ = writeln!(s, "\n{:<16} {:>12} {:>12} {:>12} {:>12}", "step", "time ms", "host ms", "input ms", "others ms");
        for r in &a.steps {
            let _ = writeln!(
                s,
                "{:<16} {:>12.3} {:>12.3} {:>12.3} {:>12.3}",
                r.name,
                r.step_time_ms,
                r.host_compute_ms,
                r.input_ms(),
                r.unknown_ms
            );
        }
    }
    let _ = writeln!(s, "\n{}", a.summary_next_step);
    if !a.input_ops.is_empty() {
        let _ = writeln!(s, "\n{:<60} {:>8} {:>12} {:>8}  category", "input op", "count", "self ms", "self %");
        for o in &a.input_ops {
            let _ = writeln!(
                s,
                "{:<60} {:>8} {:>12.3} {:>7.1}%  {}",
                o.name,
                o.occurrences,
                o.self_time_ps as f64 / 1e9,
                100.0 * o.self_time_fraction,
                o.category.label()
            );
        }
    }
    s
}
