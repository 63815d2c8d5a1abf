//! `tidemark torch-overview | torch-operators | torch-kernels | torch-memory TRACE [--json]`: the
//! PyTorch Profiler's views of a Kineto trace. `--json` prints one object holding the plugin's
//! payloads for the view keyed by its file names; without it, the view's figures as text.

use crate::args::Args;
use serde_json::Value;
use tidemark::engine::torch::{torch_view, TorchView};

pub fn run(command: &str, argv: &[String]) -> i32 {
    let usage = format!("usage: tidemark {command} TRACE [--json]");
    let args = match Args::parse(argv, &[]).and_then(|a| a.check_flags(&["json"]).map(|_| a)) {
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
    let view = match command {
        "torch-overview" => TorchView::Overview,
        "torch-operators" => TorchView::Operators,
        "torch-kernels" => TorchView::Kernels,
        _ => TorchView::Memory,
    };
    let path = &args.files[0];
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
        TorchView::Operators => {
            o += "operator | calls | device self us | device total us | host self us | host total us\n";
            for r in rows(&v["operation_table"]["data"]) {
                o += &format!(
                    "{} | {} | {} | {} | {} | {}\n",
                    s(&r["name"]),
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
