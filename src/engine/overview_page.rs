//! The Overview Page of an opened file. Its steps need every host event read and grouped, so it is
//! computed once per file and kept ([`Session::cached_overview_page`]); the Input Pipeline Analyzer
//! is part of it ([`Session::input_pipeline`]).

use super::{OpenError, Session};
use crate::analysis::device_ops;
use crate::analysis::op_metrics::host::host_op_metrics_db;
use crate::analysis::overview_page::{OverviewPage, RunEnvironment};
use crate::analysis::steps;
use crate::decode::Profile;

impl Session {
    fn compute_overview_page(&self, file_id: u32) -> Result<OverviewPage, OpenError> {
        let f = self.get(file_id).ok_or_else(|| OpenError { file: format!("#{file_id}"), message: "no such open file".into() })?;
        let err = |message: String| OpenError { file: f.file.name.clone(), message };
        let Profile::XSpace(space) = &f.file.profile else {
            return Err(err(format!("this file is {}; the Overview Page needs an XProf trace (*.xplane.pb)", f.file.profile.format())));
        };
        let db = steps::step_db(space).map_err(|e| err(e.to_string()))?;
        let host_ops = host_op_metrics_db(space).map_err(|e| err(e.to_string()))?;
        // GPU traces have no device op table yet: their top ops are left out.
        let device_ops = device_ops::analyze(space).ok();
        Ok(OverviewPage::new(&db, &host_ops, device_ops.as_ref().map(|d| &d.db), RunEnvironment::of(space)))
    }

    /// The Overview Page of `file_id`, computed on first use and kept until the file is closed.
    pub fn cached_overview_page(&mut self, file_id: u32) -> Result<&OverviewPage, OpenError> {
        if !self.overview_pages.contains_key(&file_id) {
            let page = self.compute_overview_page(file_id)?;
            self.overview_pages.insert(file_id, page);
        }
        Ok(&self.overview_pages[&file_id])
    }
}
