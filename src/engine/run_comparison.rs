//! Two runs compared ([`crate::analysis::run_comparison`]): the figures each run already has,
//! gathered from the session. Nothing is recomputed: the op figures are the rows of each run's
//! Framework Op Stats (XProf's table with the `IDLE` rows, its hosts combined as XProf combines them,
//! so at most XProf's 500 rows per side), the memory peaks each host's Memory Profile summary, the
//! step times each run's Overview Page.

use super::{EngineError, Scope, Session};
pub use crate::analysis::run_comparison::*;
use std::collections::BTreeMap;

impl Session {
    /// The run `current` (its hosts' file ids, in the run's order) against the run `baseline`.
    pub fn run_comparison(&mut self, current: &[u32], baseline: &[u32]) -> Result<RunComparison, EngineError> {
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
