//! The Memory Profile of an opened file.

use super::{OpenError, Session};
use crate::analysis::memory_profile::{self, MemoryProfile};
use crate::decode::Profile;

impl Session {
    /// Computes the Memory Profile of file `file_id` (an XProf trace). Not cached: callers that ask
    /// repeatedly (zooming, selecting rows) keep the returned value and query it.
    pub fn memory_profile(&self, file_id: u32) -> Result<MemoryProfile, OpenError> {
        let f = self.get(file_id).ok_or_else(|| OpenError { file: format!("#{file_id}"), message: "no such open file".into() })?;
        let err = |message: String| OpenError { file: f.file.name.clone(), message };
        match &f.file.profile {
            Profile::XSpace(space) => memory_profile::analyze(space).map_err(|e| err(e.to_string())),
            other => Err(err(format!(
                "this file is {}; the Memory Profile needs an XProf trace (*.xplane.pb) with allocator events",
                other.format()
            ))),
        }
    }
}
