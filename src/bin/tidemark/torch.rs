//! `tidemark torch-overview | torch-operators | torch-kernels | torch-memory TRACE [--json]`: the
//! PyTorch Profiler's views of a Kineto trace. `--json` prints one object holding the plugin's
//! payloads for the view keyed by its file names; without it, the view's figures as text.
//! `torch-operators TRACE --group-by input-shape`: the operators by name and input shape (the
//! plugin's `group_by=OperationAndInputShape`).
//!
//! `torch-overview | torch-operators | torch-kernels RUN_FOLDER`: a run of several ranks (one trace
//! per worker, `<run>/<worker>.<span>.pt.trace.json.gz`): each rank's step split and the run's
//! operators or kernels summed over its ranks; `--json` the engine's run (every rank's figures and
//! the combined ones).
//!
//! `torch-ranks RUN_FOLDER`: the page's Ranks view, all three of those tables at once.

use crate::args::{open_run_dir, Args};
use serde_json::Value;
use std::fmt::Write;
use tidemark::analysis::torch::operators::OpGrouping;
use tidemark::engine::torch::{torch_view, TorchView};
use tidemark::engine::torch_run::TorchRun;
use tidemark::engine::Session;

pub fn run(command: &str, argv: &[String]) -> i32 {
    let usage = match command {
        "torch-memory" => format!("usage: tidemark {command} TRACE [--json]"),
        "torch-operators" => format!("usage: tidemark {command} TRACE|RUN_FOLDER [--group-by name|input-shape] [--json]"),
        "torch-ranks" => format!("usage: tidemark {command} RUN_FOLDER [--json]"),
        _ => format!("usage: tidemark {command} TRACE|RUN_FOLDER [--json]"),
    };
    let valued: &[&str] = if command == "torch-operators" { &["group-by"] } else { &[] };
    let args = match Args::parse(argv, valued).and_then(|a| a.check_flags(&["json"]).map(|_| a)) {
        Ok(a) if a.files.len() == 1 => a,
        Ok(_) => {
            eprintln!("{usage}");
            return 2;
        }
        Err(e) => {
            eprintln!("tidemark {command}: {e}\n{usage}");
            return 2;
        }
    };
    let grouping = match args.option("group-by") {
        None | Some("name") => OpGrouping::Name,
        Some("input-shape") => OpGrouping::InputShape,
        Some(other) => {
            eprintln!("tidemark {command}: --group-by {other}: expected name or input-shape\n{usage}");
            return 2;
        }
    };
    let path = &args.files[0];
    let views: &[TorchView] = match command {
        "torch-overview" => &[TorchView::Overview],
        "torch-operators" => &[TorchView::Operators(grouping)],
        "torch-kernels" => &[TorchView::Kernels],
        "torch-ranks" if path.is_dir() => &[TorchView::Overview, TorchView::Operators(OpGrouping::Name), TorchView::Kernels],
        "torch-ranks" => {
            eprintln!("tidemark {command}: {}: not a folder; the ranks are a run folder's traces, one per worker\n{usage}", path.display());
            return 2;
        }
        _ => &[TorchView::Memory],
    };
    let view = views[0];
    if path.is_dir() {
        if view == TorchView::Memory {
            eprintln!("tidemark {command}: {}: a folder; the Memory view reads one trace (one rank)\n{usage}", path.display());
            return 2;
        }
        if grouping == OpGrouping::InputShape {
            eprintln!("tidemark {command}: {}: a folder; operators by input shape are of one trace (one rank)\n{usage}", path.display());
            return 2;
        }
        return run_folder(command, &usage, path, views, args.flag("json"));
    }
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("tidemark {command}: {}: {e}", path.display());
            return 1;
        }
    };
    let out = match torch_view(&bytes, view) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("tidemark {command}: {}: {e}", path.display());
            return 1;
        }
    };
    if args.flag("json") {
        println!("{out}");
    } else {
        print!("{}", text(view, &out));
    }
    0
}

/// The run in `dir` (its ranks' traces): the views' figures per rank and combined.
fn run_folder(command: &str, usage: &str, dir: &std::path::Path, views: &[TorchView], json: bool) -> i32 {
    let mut session = Session::new();
    let ids = match open_run_dir(&mut session, dir, "") {
        Ok(ids) => ids,
        Err(e) => return e.report(command, usage),
    };
    let run = match session.torch_run(&ids) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("tidemark: {e}");
            return 1;
        }
    };
    if json {
        match serde_json::to_string(&run) {
            Ok(j) => println!("{j}"),
            Err(e) => {
                eprintln!("tidemark: {e}");
                return 1;
            }
        }
    } else {
        print!("{}", run_text(views, &run));
    }
    0
}

/// A run's figures as text: its ranks, then each view's table (step split per rank, or operators or
/// kernels summed over the ranks).
fn run_text(views: &[TorchView], run: &TorchRun) -> String {
    let mut o = String::new();
    let ranks: Vec<String> = run.ranks.iter().map(|r| format!("{} ({})", r.key(), r.worker)).collect();
    let _ = writeln!(o, "{} ranks: {}", run.ranks.len(), ranks.join(", "));
    for view in views {
        run_table(&mut o, *view, run);
    }
    o
}

/// One view's table of the run.
fn run_table(o: &mut String, view: TorchView, run: &TorchRun) {
    match view {
        TorchView::Operators(_) => {
            let _ = writeln!(o, "operators summed over the ranks");
            *o += "operator | calls | device self us | device total us | host self us | host total us\n";
            for r in &run.operators {
                let _ = writeln!(
                    o,
                    "{} | {} | {:.3} | {:.3} | {:.3} | {:.3}",
                    r.name, r.calls, r.device_self_us, r.device_total_us, r.host_self_us, r.host_total_us
                );
            }
        }
        TorchView::Kernels => {
            let _ = writeln!(o, "kernels summed over the ranks");
            *o += "calls | total us | kernel\n";
            for k in &run.kernels {
                let _ = writeln!(o, "{} | {:.3} | {}", k.calls, k.total_us, k.name);
            }
        }
        _ => {
            let _ = writeln!(o, "average step (us): rank | worker | steps | step | computation | communication | memcpy | other");
            let line = |o: &mut String, rank: &str, worker: &str, steps: usize, s: &tidemark::analysis::torch::ranks::StepSplit| {
                let _ = writeln!(
                    o,
                    "  {rank} | {worker} | {steps} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3}",
                    s.step_us, s.computation_us, s.communication_us, s.memcpy_us, s.other_us
                );
            };
            for r in &run.ranks {
                line(o, &r.key(), &r.worker, r.steps, &r.split);
            }
            line(o, "combined (mean of ranks)", "", run.steps, &run.split);
        }
    }
}

fn s(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The view's figures as text: the same numbers as the JSON, laid out for a terminal.
fn text(view: TorchView, v: &Value) -> String {
    let mut o = String::new();
    let empty = Vec::new();
    let rows = |v: &Value| v.as_array().unwrap_or(&empty).clone();
    match view {
        TorchView::Overview => {
            let ov = &v["overview"];
            for perf in rows(&ov["performance"]) {
                o += &format!("{}: {} us\n", s(&perf["name"]), s(&perf["value"]));
                for c in rows(&perf["children"]) {
                    o += &format!("  {:<11} {:>8} us  {:>6} %\n", s(&c["name"]), s(&c["value"]), s(&c["extra"]));
                }
            }
            let cols: Vec<String> =
                rows(&ov["steps"]["columns"]).iter().filter(|c| c.get("name").is_some()).map(|c| s(&c["name"])).collect();
            o += &format!("\nsteps (us): {}\n", cols.join(" | "));
            for r in rows(&ov["steps"]["rows"]) {
                let cells: Vec<String> =
                    r.as_array().unwrap_or(&empty).iter().enumerate().filter(|(i, _)| *i == 0 || i % 2 == 1).map(|(_, c)| s(c)).collect();
                o += &format!("  {}\n", cells.join(" | "));
            }
            for d in rows(&ov["gpu_metrics"]["data"]) {
                o += &format!("{} {}\n", s(&d["title"]), s(&d["value"]));
            }
            o += &format!("recommendations: {}\n", s(&ov["recommendations"]));
        }
        TorchView::Operators(grouping) => {
            let shape = grouping == OpGrouping::InputShape;
            o += if shape { "operator | input shape" } else { "operator" };
            o += " | calls | device self us | device total us | host self us | host total us\n";
            for r in rows(&v["operation_table"]["data"]) {
                let name = if shape { format!("{} | {}", s(&r["name"]), s(&r["input_shape"])) } else { s(&r["name"]) };
                o += &format!(
                    "{} | {} | {} | {} | {} | {}\n",
                    name,
                    s(&r["calls"]),
                    s(&r["device_self_duration"]),
                    s(&r["device_total_duration"]),
                    s(&r["host_self_duration"]),
                    s(&r["host_total_duration"])
                );
            }
        }
        TorchView::Kernels => {
            let cols: Vec<String> = rows(&v["kernel_table"]["data"]["columns"]).iter().map(|c| s(&c["name"])).collect();
            o += &format!("{}\n", cols.join(" | "));
            for r in rows(&v["kernel_table"]["data"]["rows"]) {
                o += &format!("{}\n", r.as_array().unwrap_or(&empty).iter().map(s).collect::<Vec<_>>().join(" | "));
            }
            for r in rows(&v["kernel_tc_pie"]["total"]["rows"]) {
                o += &format!("{}: {}\n", s(&r[0]), s(&r[1]));
            }
        }
        TorchView::Memory => {
            if let Some(peaks) = v["memory_curve"]["metadata"]["peaks"].as_object() {
                for (dev, p) in peaks {
                    o += &format!("{dev}: {}\n", s(p));
                }
            }
            if let Some(devs) = v["memory"]["rows"].as_object() {
                for (dev, list) in devs {
                    o += &format!("\n{dev}: operator | calls | size increase KB | self size increase KB | allocations | self allocations | allocation KB | self allocation KB\n");
                    for r in rows(list) {
                        o += &format!("  {}\n", r.as_array().unwrap_or(&empty).iter().map(s).collect::<Vec<_>>().join(" | "));
                    }
                }
            }
        }
    }
    o
}
