//! The Overview Page of an opened file. Its steps need every host event read and grouped, so it is
//! computed once per file or run and kept ([`Session::run_overview_page`]); the Input Pipeline Analyzer
//! is part of it ([`Session::input_pipeline`]). Its op figures come from the file's one op-metrics
//! pass ([`Session::op_metrics`]).

use super::{EngineError, Session};
use crate::analysis::op_metrics::HardwareType;
use crate::analysis::overview_page::OverviewPage;
use crate::analysis::steps;

/// The tool's name in errors.
const TOOL: &str = "Overview Page";

impl Session {
    fn compute_overview_page(&mut self, file_ids: &[u32]) -> Result<OverviewPage, EngineError> {
        let m = self.run_op_metrics(file_ids)?;
        // Where some host has devices, the hosts without any (coordinators) have no steps of the run
        // (XProf's `IsCoordinator`).
        let mut has_device = Vec::with_capacity(file_ids.len());
        for &id in file_ids {
            has_device.push(self.op_metrics(id)?.hardware != HardwareType::CpuOnly);
        }
        let any_device = has_device.contains(&true);
        let mut dbs = Vec::with_capacity(file_ids.len());
        for (&id, &device) in file_ids.iter().zip(&has_device) {
            if any_device && !device {
                continue;
            }
            let (_, space) = self.trace_of(id, TOOL)?;
            dbs.push(steps::step_db(space).map_err(|e| self.analysis_error(id, TOOL, e.to_string()))?);
        }
        let db = steps::intersection::combine(&dbs);
        // A trace whose device side Tidemark cannot read yet has its top device ops left out.
        let device = m.device.as_ref().ok().map(|d| &d.db);
        let mut page = OverviewPage::new(&db, &m.host, device, m.run_environment.clone());
        page.mark_tensor_cores(&m.kernel_stats);
        Ok(page)
    }

    /// The Overview Page of `file_id`, computed on first use and kept until the file is closed.
    pub fn cached_overview_page(&mut self, file_id: u32) -> Result<&OverviewPage, EngineError> {
        self.run_overview_page(&[file_id])
    }

    /// The Overview Page of the run `file_ids` (one file, or several hosts combined as XProf combines
    /// them: op tables added up, steps intersected), kept until one of its files is closed.
    pub fn run_overview_page(&mut self, file_ids: &[u32]) -> Result<&OverviewPage, EngineError> {
        if !self.overview_pages.contains_key(file_ids) {
            let page = self.compute_overview_page(file_ids)?;
            self.overview_pages.insert(file_ids.to_vec(), page);
        }
        Ok(&self.overview_pages[file_ids])
    }
}
