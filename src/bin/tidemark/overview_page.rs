//! `tidemark overview-page`: XProf's Overview Page as text (run environment, step time, verdict,
//! where to look next), or as XProf's own JSON (`--json`).

use crate::args::{open_run, Args};
use std::fmt::Write;
use tidemark::analysis::input_pipeline::{InputPipeline, CATEGORIES};
use tidemark::analysis::overview_page::{xprof_json, OverviewPage};
use tidemark::engine::tool::Tool;

const USAGE: &str = "usage: tidemark overview-page FILE|RUN_DIR [--json]";

pub fn run(argv: &[String]) -> i32 {
    let (args, hosts, page) = match open("overview-page", USAGE, argv, Tool::OverviewPage) {
        Ok(x) => x,
        Err(code) => return code,
    };
    if args.flag("json") {
        println!("{}", xprof_json::overview_page_json(&page));
    } else {
        print!("{hosts}{}", text(&page));
    }
    0
}

/// Opens `argv`'s one file or run folder through [`open_run`] (flag `--json`) and computes its
/// Overview Page; with the line naming the hosts of a run ([`crate::args::OpenedRun::hosts_line`]). On
/// failure the exit code (2 usage, 1 unreadable or not analysable), the message printed.
///
/// The text output's first line (`hosts`) is then, for one file, why `tool` has nothing to show, when
/// it has nothing.
pub fn open(command: &str, usage: &str, argv: &[String], tool: Tool) -> Result<(Args, String, OverviewPage), i32> {
    let mut f = open_run(command, usage, argv, &[], &["json"])?;
    let hosts = f.hosts_line() + &crate::open::empty_reason_line(&f.session, &f.ids, tool);
    match f.session.overview_page(&f.ids) {
        Ok(page) => Ok((f.args, hosts, page.clone())),
        Err(e) => {
            eprintln!("tidemark: {e}");
            Err(1)
        }
    }
}

fn text(page: &OverviewPage) -> String {
    let mut s = String::new();
    let r = &page.run_environment;
    let _ = writeln!(
        s,
        "run environment: {} host, device {} × {}, training: {}",
        r.host_count, r.device_type, r.device_core_count, r.is_training
    );
    s.push_str(&steps_text(&page.input));
    let _ = writeln!(
        s,
        "host ops run as TensorFlow ops: {:.1}%, eager: {:.1}% of host op time",
        page.host_tf_op_percent, page.host_op_time_eager_percent
    );
    s
}

/// The verdict and the step statistics, shared with `input-pipeline-analyzer`.
pub fn steps_text(a: &InputPipeline) -> String {
    let mut s = String::new();
    if a.device_steps_unsupported {
        s.push_str("note: XProf takes this trace's steps from its devices in a way not computed here (a GPU trace saved ungrouped, a TPU trace with a step line): no steps\n");
    }
    let _ = writeln!(s, "{}", a.bottleneck.input_statement);
    if !a.bottleneck.all_other_statement.is_empty() {
        let _ = writeln!(s, "{}", a.bottleneck.all_other_statement);
    }
    if a.steps.is_empty() {
        let why = if a.steps_found == 0 { "no step found (no step markers, or steps without host compute)" } else { "no step left" };
        let _ = writeln!(s, "steps: {why}");
        return s;
    }
    let dropped = a.steps_found - a.steps.len();
    let t = &a.step_time_ms;
    let _ = writeln!(
        s,
        "steps: {} (of {} found{}), step time avg {:.1} ms, sd {:.1}, min {:.1}, max {:.1}",
        a.steps.len(),
        a.steps_found,
        if dropped > 0 { ", the first and last dropped" } else { "" },
        t.average,
        t.standard_deviation,
        t.minimum,
        t.maximum
    );
    let averages: Vec<String> = CATEGORIES
        .iter()
        .zip(&a.category_ms)
        .filter(|(_, m)| m.average != 0.0)
        .map(|(c, m)| format!("{} {:.1} ms", c.label.to_lowercase(), m.average))
        .collect();
    let _ = writeln!(s, "per step: {}", averages.join(", "));
    s
}
