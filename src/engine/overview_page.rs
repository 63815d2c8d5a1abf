//! The Overview Page of an opened file. Its steps need every host event read and grouped, so it is
//! computed once per file and kept ([`Session::cached_overview_page`]); the Input Pipeline Analyzer
//! is part of it ([`Session::input_pipeline`]). Its op figures come from the file's one op-metrics
//! pass ([`Session::op_metrics`]).

use super::{EngineError, Session};
use crate::analysis::overview_page::OverviewPage;
use crate::analysis::steps;

/// The tool's name in errors.
const TOOL: &str = "Overview Page";

impl Session {
    fn compute_overview_page(&mut self, file_id: u32) -> Result<OverviewPage, EngineError> {
        let m = self.op_metrics(file_id)?;
        let (_, space) = self.trace_of(file_id, TOOL)?;
        let db = steps::step_db(space).map_err(|e| self.analysis_error(file_id, TOOL, e.to_string()))?;
        // A trace whose device side Tidemark cannot read yet has its top device ops left out.
        let device = m.device.as_ref().ok().map(|d| &d.db);
        let mut page = OverviewPage::new(&db, &m.host, device, m.run_environment.clone());
        page.mark_tensor_cores(&m.kernel_stats);
        Ok(page)
    }

    /// The Overview Page of `file_id`, computed on first use and kept until the file is closed.
    pub fn cached_overview_page(&mut self, file_id: u32) -> Result<&OverviewPage, EngineError> {
        if !self.overview_pages.contains_key(&file_id) {
            let page = self.compute_overview_page(file_id)?;
            self.overview_pages.insert(file_id, page);
        }
        Ok(&self.overview_pages[&file_id])
    }
}
