//! The Input Pipeline Analyzer of an opened file: the analysis the Overview Page is built on, kept
//! with it.

use super::{EngineError, Session};
use crate::analysis::input_pipeline::InputPipeline;

impl Session {
    /// The Input Pipeline Analyzer of `file_id` (computed with its Overview Page on first use).
    pub fn input_pipeline(&mut self, file_id: u32) -> Result<&InputPipeline, EngineError> {
        Ok(&self.cached_overview_page(file_id)?.input)
    }

    /// The Input Pipeline Analyzer of the run `file_ids` (computed with its Overview Page).
    pub fn run_input_pipeline(&mut self, file_ids: &[u32]) -> Result<&InputPipeline, EngineError> {
        Ok(&self.run_overview_page(file_ids)?.input)
    }
}
