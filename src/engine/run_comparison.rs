//! Two runs compared ([`crate::analysis::run_comparison`]): the figures each run already has,
//! gathered from the session. Nothing is recomputed: the op figures are the rows of each run's
//! Framework Op Stats (XProf's table with the `IDLE` rows, its hosts combined as XProf combines them,
//! so at most XProf's 500 rows per side), the memory peaks each host's Memory Profile summary, the
//! step times each run's Overview Page.
//!
//! Two PyTorch runs (each its ranks' Kineto traces) are compared from their [`Session::torch_run`]s.

use super::{torch_run, EngineError, Scope, Session};
pub use crate::analysis::run_comparison::*;
use std::collections::BTreeMap;

impl Session {
    /// The run `current` (its hosts' file ids, in the run's order) against the run `baseline`.
    pub fn run_comparison(&mut self, current: &[u32], baseline: &[u32]) -> Result<RunComparison, EngineError> {
        match (self.is_torch_run(current)?, self.is_torch_run(baseline)?) {
            (true, true) => return self.torch_run_comparison(current, baseline),
            (false, false) => {}
            (torch_current, _) => {
                let (torch, other) = if torch_current { (current, baseline) } else { (baseline, current) };
                let Some(&other) = other.first() else { return Err(EngineError::EmptyRun) };
                let other = self.overview(other)?;
                return Err(EngineError::WrongFormat {
                    file: other.path.clone(),
                    tool: "Run comparison".into(),
                    found: other.format,
                    needs: format!("a run of the same kind as {} (PyTorch traces, *.pt.trace.json[.gz])", self.overview(torch[0])?.path),
                });
            }
        }
        let current_rows = self.framework_op_stats(&Scope::run(current))?.with_idle.rows;
        let baseline_rows = self.framework_op_stats(&Scope::run(baseline))?.with_idle.rows;
        let ops = op_deltas(&current_rows, &baseline_rows);
        let device_self_time_us = side_self_time_us(&current_rows, &baseline_rows, true);
        let host_self_time_us = side_self_time_us(&current_rows, &baseline_rows, false);
        let mut notes = Vec::new();
        let (current_info, baseline_info) = (self.run_info(current)?, self.run_info(baseline)?);
        let hosts = host_matches(&current_info.hosts, &baseline_info.hosts);
        let memory = memory_deltas(self.memory_peaks(current, &mut notes)?, self.memory_peaks(baseline, &mut notes)?);
        let step_time = match (self.step_time(current, "current", &mut notes), self.step_time(baseline, "baseline", &mut notes)) {
            (Some((current_steps, c)), Some((baseline_steps, b))) => {
                Some(StepTimeChange { current_steps, baseline_steps, average_ms: Change::new(c, b) })
            }
            _ => None,
        };
        Ok(RunComparison {
            current: current_info,
            baseline: baseline_info,
            hosts,
            device_self_time_us,
            host_self_time_us,
            step_time,
            ops,
            memory,
            notes,
            torch: None,
        })
    }

    /// Two PyTorch runs: ops summed over each run's ranks (device and host self time), kernels,
    /// average step time and ranks. Kineto traces' allocator events are the PyTorch Memory view's,
    /// not compared here (a note says so).
    fn torch_run_comparison(&mut self, current: &[u32], baseline: &[u32]) -> Result<RunComparison, EngineError> {
        let (c, b) = (self.torch_run(current)?, self.torch_run(baseline)?);
        let (current_rows, baseline_rows, ops) = torch::torch_op_deltas(&c, &b);
        let ranks = torch::rank_deltas(&c, &b);
        let info = |s: &Self, ids: &[u32], run: &torch_run::TorchRun| -> Result<RunInfo, EngineError> {
            let first = s.overview(ids[0])?;
            Ok(RunInfo {
                run_dir: first.run_host.run_dir.clone(),
                run: first.run_host.run.clone(),
                hosts: run.ranks.iter().map(|r| r.key()).collect(),
            })
        };
        let (current_info, baseline_info) = (info(self, current, &c)?, info(self, baseline, &b)?);
        Ok(RunComparison {
            hosts: host_matches(&current_info.hosts, &baseline_info.hosts),
            current: current_info,
            baseline: baseline_info,
            device_self_time_us: side_self_time_us(&current_rows, &baseline_rows, true),
            host_self_time_us: side_self_time_us(&current_rows, &baseline_rows, false),
            step_time: Some(torch::step_time(&c, &b)),
            ops,
            memory: Vec::new(),
            notes: vec!["PyTorch runs: memory is not compared here (see each trace's PyTorch Memory view)".into()],
            torch: Some(torch::TorchComparison { kernels: torch::kernel_deltas(&c, &b), ranks }),
        })
    }

    fn run_info(&self, ids: &[u32]) -> Result<RunInfo, EngineError> {
        let mut info = RunInfo::default();
        for &id in ids {
            let rh = &self.overview(id)?.run_host;
            if info.hosts.is_empty() {
                info.run_dir.clone_from(&rh.run_dir);
                info.run.clone_from(&rh.run);
            }
            info.hosts.push(rh.host.clone());
        }
        Ok(info)
    }

    /// Each host's allocators' peaks, by (host, memory ID). A host whose Memory Profile cannot be
    /// computed (not a trace, or the analysis failed) has none, and a note says why.
    fn memory_peaks(&mut self, ids: &[u32], notes: &mut Vec<String>) -> Result<BTreeMap<(String, String), MemoryPeak>, EngineError> {
        let mut peaks = BTreeMap::new();
        for &id in ids {
            let host = self.overview(id)?.run_host.host.clone();
            match self.host_memory(id) {
                Ok(memory) => {
                    for (a, lifetime_peak_bytes) in &memory.allocators {
                        let peak = MemoryPeak { peak_bytes: a.peak_bytes, lifetime_peak_bytes: *lifetime_peak_bytes };
                        peaks.insert((host.clone(), a.memory_id.clone()), peak);
                    }
                }
                // A released host is read again (see `engine::residency`), not noted.
                Err(e @ EngineError::NotResident { .. }) => return Err(e),
                Err(e) => notes.push(format!("{host}: no memory peaks ({})", e.detail())),
            }
        }
        Ok(peaks)
    }

    /// The run's step count and average step time (ms), `None` without steps; a run whose steps
    /// could not be found gets a note saying why.
    fn step_time(&mut self, ids: &[u32], which: &str, notes: &mut Vec<String>) -> Option<(usize, f64)> {
        match self.overview_page(ids) {
            Ok(page) => {
                let s = &page.input.step_time_ms;
                (s.count > 0).then_some((s.count, s.average))
            }
            Err(e) => {
                notes.push(format!("the {which} run has no step time ({})", e.detail()));
                None
            }
        }
    }
}
