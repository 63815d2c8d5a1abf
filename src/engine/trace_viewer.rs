//! The Trace Viewer of an opened trace. Its event store ([`TraceStore`]) is built the first time the
//! tool asks for it and kept until the file is closed; every query after that (level of detail, search,
//! range summary) is answered from the store's columns, and an event's details and the JSON export read
//! the file's bytes, which the session keeps anyway.

use super::{EngineError, Session};
use crate::analysis::trace_viewer::details::{self, EventDetails};
use crate::analysis::trace_viewer::export;
use crate::analysis::trace_viewer::lod::{self, LodQuery, LodReply};
use crate::analysis::trace_viewer::op_args;
use crate::analysis::trace_viewer::store::TraceOutline;
use crate::analysis::trace_viewer::summary::{self, NameSummary, SearchResult};
use crate::analysis::trace_viewer::TraceStore;
use crate::decode::xplane::XSpace;

/// The tool's name in errors.
const TOOL: &str = "Trace Viewer";

impl Session {
    /// The XSpace of file `file_id`, or why there is none.
    fn trace_space(&self, file_id: u32) -> Result<&XSpace, EngineError> {
        self.trace_of(file_id, TOOL).map(|(_, space)| space)
    }

    fn file_error(&self, file_id: u32, message: String) -> EngineError {
        self.analysis_error(file_id, TOOL, message)
    }

    /// The event store of file `file_id`, built on first use.
    pub fn trace_store(&mut self, file_id: u32) -> Result<&TraceStore, EngineError> {
        if !self.trace_stores.contains_key(&file_id) {
            let store = TraceStore::build(self.trace_space(file_id)?).map_err(|e| self.file_error(file_id, e.to_string()))?;
            self.trace_stores.insert(file_id, store);
        }
        Ok(&self.trace_stores[&file_id])
    }

    /// Processes, threads, names and time span of file `file_id`'s trace.
    pub fn trace_outline(&mut self, file_id: u32) -> Result<TraceOutline, EngineError> {
        Ok(self.trace_store(file_id)?.outline())
    }

    /// The spans to draw for a window ([`lod::query`]).
    pub fn trace_spans(&mut self, file_id: u32, query: &LodQuery) -> Result<LodReply, EngineError> {
        Ok(lod::query(self.trace_store(file_id)?, query))
    }

    /// One event in full; `None` for an event index out of range.
    pub fn trace_event_details(&mut self, file_id: u32, event: u32) -> Result<Option<EventDetails>, EngineError> {
        self.trace_store(file_id)?;
        let (space, store) = (self.trace_space(file_id)?, &self.trace_stores[&file_id]);
        details::details(space, store, event).map_err(|e| self.file_error(file_id, e.to_string()))
    }

    /// The events whose names, or the ops they ran for (`tf_op`, `hlo_op`), contain `needle`
    /// (ignoring case): a TensorFlow op's occurrences are events named by its type ([`op_args`]).
    pub fn trace_search(&mut self, file_id: u32, needle: &str) -> Result<SearchResult, EngineError> {
        self.trace_store(file_id)?;
        let (space, store) = (self.trace_space(file_id)?, &self.trace_stores[&file_id]);
        op_args::search(store, space, needle).map_err(|e| self.file_error(file_id, e.to_string()))
    }

    /// The events starting in `[from_ps, to_ps)` on `threads` (all when `None`), by name.
    pub fn trace_range_summary(
        &mut self,
        file_id: u32,
        from_ps: i64,
        to_ps: i64,
        threads: Option<&[u32]>,
    ) -> Result<Vec<NameSummary>, EngineError> {
        Ok(summary::range_summary(self.trace_store(file_id)?, from_ps, to_ps, threads))
    }

    /// Writes XProf's trace_viewer JSON of the whole trace, or of the events that overlap `range_ps`
    /// (the page's "export visible range"), to `out`; returns the number of events written. Needs no
    /// event store: the events are read from the file as they are written.
    pub fn trace_export_json(
        &self,
        file_id: u32,
        range_ps: Option<(i64, i64)>,
        out: &mut impl std::io::Write,
    ) -> Result<usize, EngineError> {
        export::write_json(self.trace_space(file_id)?, range_ps, out).map_err(|e| self.file_error(file_id, e.to_string()))
    }
}
