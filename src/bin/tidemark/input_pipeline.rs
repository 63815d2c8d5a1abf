//! `tidemark input-pipeline-analyzer`: XProf's Input Pipeline Analyzer as text (verdict, step
//! statistics, the step table, the host's input ops), or as XProf's own JSON (`--json`).

use crate::overview_page::{open, steps_text};
use std::fmt::Write;
use tidemark::analysis::input_pipeline::{xprof_json, InputPipeline, CATEGORIES};
use tidemark::engine::tool::Tool;

const USAGE: &str = "usage: tidemark input-pipeline-analyzer FILE|RUN_DIR [--json]";

pub fn run(argv: &[String]) -> i32 {
    let (args, hosts, page) = match open("input-pipeline-analyzer", USAGE, argv, Tool::InputPipeline) {
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
        // The categories some step spent time in, as columns.
        let shown: Vec<usize> = (0..CATEGORIES.len()).filter(|&i| a.steps.iter().any(|r| r.breakdown_ms()[i] != 0.0)).collect();
        let _ = write!(s, "\n{:<16} {:>12}", "step", "time ms");
        for &i in &shown {
            let _ = write!(s, " {:>16}", CATEGORIES[i].tooltip.to_lowercase());
        }
        s.push('\n');
        for r in &a.steps {
            let _ = write!(s, "{:<16} {:>12.3}", r.name, r.step_time_ms);
            let breakdown = r.breakdown_ms();
            for &i in &shown {
                let _ = write!(s, " {:>16.3}", breakdown[i]);
            }
            s.push('\n');
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
