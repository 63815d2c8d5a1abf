//! `tidemark inspect`: the page's overview, as text or JSON.

use crate::args::Args;
use crate::open::open_file;
use crate::units::{bytes, count};
use std::fmt::Write;
use tidemark::engine::{first_screen, FileDetails, Session};

pub fn run(argv: &[String]) -> i32 {
    let args = match Args::parse(argv, &[]).and_then(|a| a.check_flags(&["json"]).map(|_| a)) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("tidemark inspect: {e}");
            return 2;
        }
    };
    let (files, sidecars) = match args.expanded() {
        Ok((f, s)) if !f.is_empty() || !s.is_empty() => (f, s),
        Ok(_) => {
            eprintln!("tidemark inspect: no files given (usage: tidemark inspect FILE|DIR... [--json])");
            return 2;
        }
        Err(e) => {
            eprintln!("tidemark inspect: {e}");
            return 1;
        }
    };
    let mut session = Session::new();
    let mut overviews = Vec::new();
    let mut errors = Vec::new();
    for input in &files {
        match open_file(&mut session, &input.path, &input.relative) {
            Ok(id) => overviews.extend(session.get(id).map(|f| f.overview.clone())),
            Err(e) => errors.push(e),
        }
    }
    if args.flag("json") {
        let sidecars: Vec<serde_json::Value> = sidecars
            .iter()
            .map(|s| {
                let rh = tidemark::decode::log_dir::run_host(&s.relative);
                serde_json::json!({ "path": s.relative, "run": rh.run, "run_dir": rh.run_dir, "host": rh.host })
            })
            .collect();
        let out = serde_json::json!({ "files": overviews, "sidecars": sidecars, "errors": errors });
        println!("{}", serde_json::to_string_pretty(&out).expect("overview serializes"));
    } else {
        let with_others = overviews.len() > 1;
        for o in &overviews {
            print!("{}", text(o, with_others));
        }
        for s in &sidecars {
            println!("{}\n  sidecar (TensorBoard's or XProf's tool output; not opened)", s.relative);
        }
    }
    for e in &errors {
        eprintln!("tidemark: {e}");
    }
    i32::from(!errors.is_empty())
}

/// `o` as text; `with_others`: opened with other files (the page then opens the run's Overview).
fn text(o: &FileDetails, with_others: bool) -> String {
    let mut s = String::new();
    let gz = if o.gzipped { ", gzip" } else { "" };
    let _ = writeln!(s, "{}\n  format: {} ({}{gz})", o.path, o.format, bytes(o.size_bytes as i64));
    if !o.run_host.run.is_empty() {
        let _ = writeln!(s, "  run: {}, host: {}", o.run_host.run, o.run_host.host);
    }
    if !o.hosts.is_empty() {
        let _ = writeln!(s, "  host: {}", o.hosts.join(", "));
    }
    if !o.planes.is_empty() {
        let _ = writeln!(s, "  planes ({}):", o.planes.len());
        for p in &o.planes {
            let _ = writeln!(s, "    {:<28} {:>4} lines {:>12} events", p.name, p.line_count, count(p.event_count as u64));
        }
    }
    if o.format == tidemark::decode::Format::XSpace {
        if o.allocators.is_empty() {
            let _ = writeln!(s, "  memory events: none");
        }
        for a in &o.allocators {
            let _ = writeln!(
                s,
                "  memory events [{}]: {} allocations, {} deallocations, peak in use {}",
                a.memory_id,
                count(a.allocations),
                count(a.deallocations),
                bytes(a.max_peak_bytes_in_use)
            );
        }
    }
    if !o.hlo_modules.is_empty() {
        let _ = writeln!(s, "  HLO modules ({}):", o.hlo_modules.len());
        for m in &o.hlo_modules {
            let ba = if m.has_buffer_assignment {
                format!("{} allocations, total {}", m.allocation_count, bytes(m.total_allocation_bytes as i64))
            } else {
                "no buffer assignment".to_string()
            };
            let _ = writeln!(s, "    {:<40} {:>6} instructions  {ba}", m.name, count(m.instruction_count as u64));
        }
    }
    if let Some(p) = &o.pprof {
        let kinds: Vec<String> = p.samples_by_kind.iter().map(|(k, n)| format!("{n} {k}")).collect();
        let _ = writeln!(
            s,
            "  pprof: {} samples ({}), live {} [{}]",
            count(p.sample_count as u64),
            kinds.join(", "),
            bytes(p.live_bytes),
            p.sample_types.join(", ")
        );
    }
    if let Some(t) = &o.torch_snapshot {
        let events: Vec<String> = t.events_per_device.iter().enumerate().map(|(d, n)| format!("device {d}: {}", count(*n))).collect();
        let _ = writeln!(
            s,
            "  CUDA memory snapshot: {} segments, {} reserved, {} active; trace events {}; {} distinct stacks",
            count(t.segment_count as u64),
            bytes(t.reserved_bytes),
            bytes(t.active_bytes),
            if events.is_empty() { "none".to_string() } else { events.join(", ") },
            count(t.distinct_stacks as u64)
        );
    }
    for n in &o.notes {
        let _ = writeln!(s, "  note: {n}");
    }
    if let Some(steps) = o.steps {
        let _ = writeln!(s, "  steps: {}", count(steps as u64));
    }
    let _ = writeln!(s, "  opens on: {}", first_screen::landing(o, with_others).title());
    // Each reason once, with the tools it empties.
    let mut reasons: Vec<(first_screen::EmptyReason, Vec<&str>)> = Vec::new();
    for tool in tidemark::engine::tool::Tool::ALL {
        if let Some(r) = first_screen::empty_reason(tool, o) {
            match reasons.iter_mut().find(|(known, _)| *known == r) {
                Some((_, tools)) => tools.push(tool.title()),
                None => reasons.push((r, vec![tool.title()])),
            }
        }
    }
    for (r, tools) in reasons {
        let _ = writeln!(s, "  empty: {}: {}", tools.join(", "), r.sentence());
    }
    s
}
