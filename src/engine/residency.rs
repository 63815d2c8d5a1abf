//! Which files' bytes the session holds. The page opens log folders of many hosts, each a large
//! trace; holding every one decoded would need the sum of their sizes in a wasm memory that never
//! shrinks. A session made with [`Session::holding_one_trace`] (the page's worker) therefore holds the
//! bytes and index of one trace read as a stream at a time: opening or reading another releases it.
//!
//! While a trace is held, what a run's tools need of it is computed and kept: its op metrics
//! ([`Session::op_metrics`]), its steps ([`Session::host_step_db`]) and its memory summary
//! ([`Session::host_memory`]), with its overview and host names. "All hosts" tools and Memory across
//! hosts combine those, so they never need two hosts' bytes at once. A tool that needs a released
//! file's bytes gets [`EngineError::NotResident`]; [`answer`] then has the file read again (the same
//! path as its first read) and asks once more. A released trace's buffer is the next one's: the
//! memory grows only to the largest file.

use super::{EngineError, FileDetails, OpenFile, Session};
use crate::analysis::steps::{self, StepDb};
use crate::decode::{self, Profile, Progress};
use serde::{Deserialize, Serialize};

/// A file whose bytes were released: what the session still knows of it without them.
pub(super) struct ReleasedFile {
    pub id: u32,
    pub name: String,
    pub overview: FileDetails,
    /// The trace's own host names (the overview's may fall back to the file name).
    pub hostnames: Vec<String>,
}

/// The residency state of a session.
#[derive(Default)]
pub(super) struct Residency {
    /// Whether a trace read as a stream is released when another is read.
    pub hold_one_trace: bool,
    /// Files read as a stream: those that can be read again.
    pub streamed: std::collections::HashSet<u32>,
    pub released: Vec<ReleasedFile>,
}

/// A file the session holds, and the memory its bytes take.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResidentFile {
    pub file_id: u32,
    pub path: String,
    /// The file's bytes held (inflated, for a gzipped trace).
    pub resident_bytes: u64,
}

/// What the session holds: its resident files, the released ones, and the wasm memory's size (the
/// page's: `None` natively).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResidencyReport {
    pub resident: Vec<ResidentFile>,
    pub released: Vec<u32>,
    pub wasm_memory_bytes: Option<u64>,
}

impl Session {
    /// A session that holds one trace read as a stream at a time ([`Session::open_stream`]): the
    /// page's worker, which can read a released file again from its `File`. Its Memory Profiles wait
    /// until a tool asks for one, as [`Session::deferring_memory_profiles`]'s do: the page's memory,
    /// which never shrinks, is not grown at open by the analysis of a file whose memory tools are
    /// never opened.
    pub fn holding_one_trace() -> Self {
        let mut s = Self::deferring_memory_profiles();
        s.residency.hold_one_trace = true;
        s
    }

    /// Releases every trace read as a stream that the session holds (when it holds one at a time),
    /// keeping what a run's tools need of each; the largest released buffer, for the next read.
    pub(super) fn release_streamed(&mut self) -> Vec<u8> {
        if !self.residency.hold_one_trace {
            return Vec::new();
        }
        let ids: Vec<u32> = self
            .files
            .iter()
            .filter(|f| self.residency.streamed.contains(&f.id) && matches!(f.file.profile, Profile::XSpace(_)))
            .map(|f| f.id)
            .collect();
        let mut spare = Vec::new();
        for id in ids {
            // What the run's tools need of it, computed now that it is to be released (a file opened
            // alone and never released computes nothing it is not asked for).
            self.keep_host_results(id);
            if let Some(buffer) = self.release(id) {
                if buffer.capacity() > spare.capacity() {
                    spare = buffer;
                }
            }
        }
        spare
    }

    /// Releases file `id`'s bytes, index and the analyses that read them (Trace Viewer stores, Memory
    /// Profile, Memory Viewer), keeping its overview and its per-host results; the buffer its bytes
    /// were in, where it owned one.
    fn release(&mut self, id: u32) -> Option<Vec<u8>> {
        let at = self.files.iter().position(|f| f.id == id)?;
        let OpenFile { file, overview, .. } = self.files.remove(at);
        let hostnames = match &file.profile {
            Profile::XSpace(space) => space.hostnames.clone(),
            _ => Vec::new(),
        };
        self.memory_profiles.remove(&id);
        self.allocation_names.remove(&id);
        self.viewers.forget_file(id);
        self.trace_stores.remove(&id);
        self.trace_extras.remove(&id);
        self.residency.released.push(ReleasedFile { id, name: file.name.clone(), overview, hostnames });
        file.into_buffer()
    }

    /// Computes and keeps what a run's tools need of file `id` while its bytes are still held: its op
    /// metrics, steps and memory summary. A failure is not kept: the tool that needs the result reads
    /// the file again and reports it.
    fn keep_host_results(&mut self, id: u32) {
        if self.trace_of(id, "op tables").is_err() {
            return;
        }
        let _ = self.op_metrics(&super::Scope::file(id));
        let _ = self.host_step_db(id, "Overview Page");
        let _ = self.host_memory(id);
    }

    /// Reads released file `id` again from `source` (the file as first opened), releasing the trace
    /// held now. Nothing to do for a file the session holds.
    pub fn reread_stream(&mut self, id: u32, source: decode::stream::Source, progress: Progress) -> Result<(), EngineError> {
        let Some(at) = self.residency.released.iter().position(|r| r.id == id) else {
            return self.file(id).map(|_| ());
        };
        let buffer = self.release_streamed();
        let r = self.residency.released.remove(at);
        match decode::stream::decode_stream_into(&r.overview.path, source, buffer, progress) {
            Ok(file) => {
                self.files.push(OpenFile { id, file, overview: r.overview });
                Ok(())
            }
            Err(e) => {
                let error = EngineError::decode(&r.overview.path, &e);
                self.residency.released.push(r);
                Err(error)
            }
        }
    }

    /// The error for file `id` when the session does not hold its bytes.
    pub(super) fn missing(&self, id: u32) -> EngineError {
        match self.residency.released.iter().find(|r| r.id == id) {
            Some(r) => EngineError::NotResident { file: r.name.clone(), file_id: id },
            None => EngineError::UnknownFile { file_id: id },
        }
    }

    /// The overview of file `id`, held or released.
    pub fn overview(&self, id: u32) -> Result<&FileDetails, EngineError> {
        match self.get(id) {
            Some(f) => Ok(&f.overview),
            None => {
                self.residency.released.iter().find(|r| r.id == id).map(|r| &r.overview).ok_or(EngineError::UnknownFile { file_id: id })
            }
        }
    }

    /// File `id`'s name, held or released.
    pub(super) fn name_of(&self, id: u32) -> Option<&str> {
        match self.get(id) {
            Some(f) => Some(&f.file.name),
            None => self.residency.released.iter().find(|r| r.id == id).map(|r| r.name.as_str()),
        }
    }

    /// The host names trace `id` records, held or released.
    pub(super) fn hostnames(&self, id: u32, tool: &str) -> Result<Vec<String>, EngineError> {
        match self.residency.released.iter().find(|r| r.id == id) {
            Some(r) => Ok(r.hostnames.clone()),
            None => self.trace_of(id, tool).map(|(_, space)| space.hostnames.clone()),
        }
    }

    /// The steps of trace `id` (for the Overview Page and Input Pipeline of a run), computed once and
    /// kept until the file is closed.
    pub(super) fn host_step_db(&mut self, id: u32, tool: &str) -> Result<&StepDb, EngineError> {
        if !self.step_dbs.contains_key(&id) {
            let (_, space) = self.trace_of(id, tool)?;
            let db = steps::step_db(space).map_err(|e| self.analysis_error(id, tool, e.to_string()))?;
            self.step_dbs.insert(id, db);
        }
        self.step_dbs.get(&id).ok_or(EngineError::UnknownFile { file_id: id })
    }

    /// The files the session holds and those it released.
    pub fn residency(&self) -> ResidencyReport {
        let resident = self
            .files
            .iter()
            .map(|f| ResidentFile { file_id: f.id, path: f.overview.path.clone(), resident_bytes: held_bytes(&f.file) })
            .collect();
        #[cfg(target_arch = "wasm32")]
        let wasm_memory_bytes = Some(core::arch::wasm32::memory_size(0) as u64 * 65_536);
        #[cfg(not(target_arch = "wasm32"))]
        let wasm_memory_bytes = None;
        ResidencyReport { resident, released: self.residency.released.iter().map(|r| r.id).collect(), wasm_memory_bytes }
    }
}

/// The bytes file `file` holds: its decoded bytes (inflated), or as opened.
fn held_bytes(file: &decode::DecodedFile) -> u64 {
    match &file.profile {
        Profile::XSpace(space) => space.bytes().len() as u64,
        _ => file.source_bytes().len() as u64,
    }
}
