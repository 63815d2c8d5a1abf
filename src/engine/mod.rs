//! The engine: a session that owns decoded files and answers requests about them. Both front doors —
//! the CLI and the web worker — call this API and nothing below it.

pub mod bundle;
pub mod device_memory;
pub mod error;
pub mod file_details;
pub mod first_screen;
pub mod framework_op_stats;
pub mod graph_viewer;
pub mod hlo_stats;
pub mod input_pipeline;
pub mod kernel_stats;
pub mod memory_across_hosts;
pub mod memory_profile;
pub mod memory_viewer;
pub mod memory_viewer_columns;
pub mod op_metrics;
pub mod op_profile;
pub mod op_tables;
pub mod overview_page;
pub mod protocol;
#[cfg(not(target_arch = "wasm32"))]
pub mod read_input;
pub mod residency;
#[cfg(not(target_arch = "wasm32"))]
pub mod retain_memory;
pub mod roofline_model;
pub mod run_comparison;
pub mod run_op_metrics;
pub mod scope;
pub mod slim;
pub mod tool;
pub mod torch;
pub mod torch_page;
pub mod torch_run;
pub mod torch_snapshot;
pub mod trace_viewer;
pub mod warmup;
pub mod xla_ops_cpu;

use crate::decode::{self, DecodedFile, Progress};
pub use error::EngineError;
pub use file_details::FileDetails;
pub use scope::Scope;
use std::collections::HashMap;

/// An opened file: its decoded content and its overview.
pub struct OpenFile {
    pub id: u32,
    pub file: DecodedFile,
    pub overview: FileDetails,
}

/// Files opened so far. Ids are never reused within a session.
#[derive(Default)]
pub struct Session {
    files: Vec<OpenFile>,
    next_id: u32,
    /// Memory Profiles computed so far, by file id (see [`Session::cached_memory_profile`]).
    memory_profiles: HashMap<u32, crate::analysis::memory_profile::MemoryProfile>,
    /// Allocation names computed so far, by file id; `None` for a trace whose ops name its allocations
    /// (see [`Session::memory_profile_view`]).
    allocation_names: HashMap<u32, Option<crate::analysis::allocation_names::AllocationNames>>,
    viewers: memory_viewer::ViewerCache,
    /// Op metrics computed so far, by scope (see [`Session::op_metrics`]).
    op_metrics: scope::OpMetricsCache,
    /// Trace Viewer event stores built so far, by file id (see [`Session::trace_store`]).
    trace_stores: HashMap<u32, crate::analysis::trace_viewer::TraceStore>,
    /// Overview Pages (with their input pipeline analyses) computed so far, by the file ids of the run
    /// (one id for a file).
    overview_pages: HashMap<Vec<u32>, crate::analysis::overview_page::OverviewPage>,
    /// Device op tables read from the op metrics so far, by the run's file ids (see [`Session::hlo_stats`]).
    op_tables: op_tables::OpTablesCache,
    /// Whether [`Session::open`] leaves a trace's Memory Profile until it is asked for
    /// ([`Session::deferring_memory_profiles`]).
    defer_memory_profiles: bool,
    /// Whether [`Session::open`] leaves a trace's steps until a tool asks for them
    /// ([`Session::deferring_steps`]).
    defer_steps: bool,
    /// What the op tables' pass computes besides the device's ops ([`Session::leaving_out_host_ops`],
    /// [`Session::leaving_out_xla_ops_cpu`]).
    op_metrics_parts: op_metrics::Parts,
    /// The Trace Viewer's flow links and memory counter series found so far, by file id.
    trace_extras: HashMap<u32, trace_viewer::TraceExtras>,
    /// Which files' bytes are held ([`Session::holding_one_trace`]).
    residency: residency::Residency,
    /// Each trace's steps, by file id (see [`Session::host_step_db`]).
    step_dbs: HashMap<u32, crate::analysis::steps::StepDb>,
    /// Each trace's memory summary for Memory across hosts, by file id (see [`Session::host_memory`]).
    host_memory: HashMap<u32, memory_across_hosts::HostMemory>,
    /// Each Kineto trace's analysis, by file id, for its PyTorch views (see [`Session::torch_overview`]).
    torch_analyses: HashMap<u32, crate::analysis::torch::Analysed>,
}

impl Session {
    pub fn new() -> Self {
        Self::default()
    }

    /// A session whose [`Session::open`] does not compute a trace's Memory Profile, only when it is
    /// first asked for: for a caller that shows other tools (the command line's other commands),
    /// which then neither waits for it nor holds its events (every allocator event of the trace, as
    /// much memory as half the file) while it works. The overview then counts the allocator events
    /// itself, to the same figures.
    pub fn deferring_memory_profiles() -> Self {
        Session { defer_memory_profiles: true, ..Self::default() }
    }

    /// This session, with [`Session::open`] no longer finding a trace's steps: the overview then counts
    /// none (`steps` is `None`, not counted) and the Overview Page finds them when asked. For a caller
    /// that shows one tool other than the Overview Page or the Input Pipeline (the command line), to
    /// which the steps are pure cost: on a TF or JAX CPU trace, the step grouping's pass over the host
    /// plane is more than half of such a command's time. The page keeps them: its first screen opens
    /// on the Overview when the trace has steps.
    pub fn deferring_steps(mut self) -> Self {
        self.defer_steps = true;
        self
    }

    /// This session, with the op tables' one pass ([`Session::op_metrics`]) leaving out the host
    /// threads' framework ops (XProf's host op db, with its eager marking: on a TensorFlow trace most of
    /// the pass). For a caller that shows one table that never reads them (HLO op stats, Op Profile,
    /// Kernel Stats without a step, XLA ops on CPU: the command line); Framework Op Stats, the
    /// Overview Page and what reads its steps (the Roofline, a step's window) answer an error in such a
    /// session.
    pub fn leaving_out_host_ops(mut self) -> Self {
        self.op_metrics_parts.host_ops = false;
        self
    }

    /// This session, with the op tables' one pass leaving out the XLA ops on CPU (a pass of its own
    /// over the host threads). For a caller that shows one tool other than XLA ops on CPU and the
    /// Graph Viewer (the command line), which never reads them; XLA ops on CPU answers an error in
    /// such a session.
    pub fn leaving_out_xla_ops_cpu(mut self) -> Self {
        self.op_metrics_parts.xla_ops_cpu = false;
        self
    }

    /// Decodes and indexes `bytes` as file `path` (relative to what the user opened: a folder, a drop,
    /// a bundle; never reduced to its base name, which repeats across runs), and computes its overview.
    ///
    /// A trace with allocator events gets its Memory Profile computed here too: the overview's
    /// per-allocator counts come out of it, so the host plane (millions of events in a long trace) is
    /// read once for both, and the Memory Profile tab then opens at once. Should the analysis fail, the
    /// overview counts the events itself and the tab shows the analysis's error when asked.
    pub fn open(&mut self, path: &str, bytes: impl Into<decode::Input>, progress: Progress) -> Result<&OpenFile, EngineError> {
        let file = decode::decode(path, bytes, progress).map_err(|e| EngineError::decode(path, &e))?;
        self.admit(path, file)
    }

    /// [`Session::open`] for a file read as a stream ([`decode::stream`]): the page's way, which holds
    /// one copy of the file's (inflated) bytes, indexed as they arrive.
    ///
    /// A session [holding one trace](Session::holding_one_trace) first releases the trace it holds,
    /// keeping what a run's tools need of it (its buffer takes this file's bytes).
    pub fn open_stream(&mut self, path: &str, source: decode::stream::Source, progress: Progress) -> Result<&OpenFile, EngineError> {
        let buffer = self.release_streamed();
        let file = decode::stream::decode_stream_into(path, source, buffer, progress).map_err(|e| EngineError::decode(path, &e))?;
        let id = self.admit(path, file)?.id;
        self.residency.streamed.insert(id);
        self.file(id)
    }

    /// Gives the decoded `file` an id, its overview and (for a trace with allocator events) its Memory
    /// Profile. A trace's steps are found here too, for the overview's step count (what the first
    /// screen opens on): the Overview Page and the Input Pipeline then read them from the cache.
    fn admit(&mut self, path: &str, file: decode::DecodedFile) -> Result<&OpenFile, EngineError> {
        let memory = match &file.profile {
            decode::Profile::XSpace(space) if !self.defer_memory_profiles => crate::analysis::memory_profile::analyze(space).ok(),
            _ => None,
        };
        // A step analysis that fails is reported by the tools that need it, when asked; the
        // overview then counts no steps.
        let step_db = match &file.profile {
            decode::Profile::XSpace(space) if !self.defer_steps => crate::analysis::steps::step_db(space).ok(),
            _ => None,
        };
        let overview = file_details::of(path, &file, memory.as_ref(), step_db.as_ref())?;
        let id = self.next_id;
        self.next_id += 1;
        if let Some(m) = memory {
            self.memory_profiles.insert(id, m);
        }
        if let Some(db) = step_db {
            self.step_dbs.insert(id, db);
        }
        self.files.push(OpenFile { id, file, overview });
        Ok(self.files.last().expect("just pushed"))
    }

    pub fn get(&self, id: u32) -> Option<&OpenFile> {
        self.files.iter().find(|f| f.id == id)
    }

    /// File `id`, or the error every tool answers for a file id the session does not hold (unknown,
    /// or its bytes released: [`EngineError::NotResident`]).
    pub fn file(&self, id: u32) -> Result<&OpenFile, EngineError> {
        self.get(id).ok_or_else(|| self.missing(id))
    }

    /// The trace (XSpace) of file `id` for `tool`, or the error every trace tool answers: an unknown
    /// file id, or a file of another format.
    pub fn trace_of(&self, id: u32, tool: &str) -> Result<(&OpenFile, &crate::decode::xplane::XSpace), EngineError> {
        let f = self.file(id)?;
        match &f.file.profile {
            decode::Profile::XSpace(space) => Ok((f, space)),
            other => Err(EngineError::WrongFormat {
                file: f.file.name.clone(),
                tool: tool.into(),
                found: other.format(),
                needs: "an XProf trace (*.xplane.pb)".into(),
            }),
        }
    }

    /// An analysis of file `id` by `tool` failed on its content.
    pub fn analysis_error(&self, id: u32, tool: &str, message: String) -> EngineError {
        match self.name_of(id) {
            Some(file) => EngineError::Analysis { file: file.to_string(), tool: tool.into(), message },
            None => EngineError::UnknownFile { file_id: id },
        }
    }

    /// `tool` cannot answer for file `id` yet, for `reason`.
    pub fn unsupported(&self, id: u32, tool: &str, reason: String) -> EngineError {
        match self.name_of(id) {
            Some(file) => EngineError::Unsupported { file: file.to_string(), tool: tool.into(), reason },
            None => EngineError::UnknownFile { file_id: id },
        }
    }

    pub fn close(&mut self, id: u32) -> bool {
        let before = self.files.len() + self.residency.released.len();
        self.files.retain(|f| f.id != id);
        self.residency.released.retain(|r| r.id != id);
        self.residency.streamed.remove(&id);
        self.step_dbs.remove(&id);
        self.host_memory.remove(&id);
        self.memory_profiles.remove(&id);
        self.op_metrics.forget_file(id);
        self.allocation_names.remove(&id);
        self.overview_pages.retain(|ids, _| !ids.contains(&id));
        self.viewers.forget_file(id);
        self.trace_stores.remove(&id);
        self.op_tables.forget_file(id);
        self.trace_extras.remove(&id);
        self.torch_analyses.remove(&id);
        before != self.files.len() + self.residency.released.len()
    }

    pub fn files(&self) -> &[OpenFile] {
        &self.files
    }
}
