//! A file's details ([`crate::analysis::file_details`]) as the session gives them at open: the
//! counting is the analysis's; here are its inputs the session already holds (the host's Memory
//! Profile, computed once for both) and the step count from the step database it keeps.

use super::EngineError;
pub use crate::analysis::file_details::*;
use crate::analysis::memory_profile::MemoryProfile;
use crate::analysis::steps::StepDb;
use crate::decode::DecodedFile;

/// The details of `file` opened as `path`, with `memory` (its Memory Profile, if computed) and
/// `step_db` (its steps, if found; a TPU trace whose steps are not computed counts none).
pub(super) fn of(
    path: &str,
    file: &DecodedFile,
    memory: Option<&MemoryProfile>,
    step_db: Option<&StepDb>,
) -> Result<FileDetails, EngineError> {
    let mut d = details(file, memory).map_err(|e| EngineError::decode(path, &e))?;
    d.steps = step_db.filter(|db| !db.device_steps_unsupported).map(|db| db.steps.len());
    Ok(d)
}
