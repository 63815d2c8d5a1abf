//! The Trace Viewer of an opened trace: an XSpace, or a PyTorch profiler (Kineto) trace
//! ([`crate::analysis::trace_viewer::kineto`]). Its event store ([`TraceStore`]) is built the first
//! time the tool asks for it and kept until the file is closed; every query after that (level of
//! detail, search, range summary) is answered from the store's columns, and an event's details and the
//! JSON export read the file's bytes (an XSpace's, which the session keeps anyway) or the Kineto
//! trace's decoded timeline.

use super::{EngineError, Session};
use crate::analysis::trace_viewer::counters::{self, CounterQuery, CounterSeries, CounterTracks, CounterWindow};
use crate::analysis::trace_viewer::details::{self, EventDetails};
use crate::analysis::trace_viewer::export;
use crate::analysis::trace_viewer::flows::{FlowIndex, FlowReply};
use crate::analysis::trace_viewer::kineto::{self, Layout};
use crate::analysis::trace_viewer::lod::{self, LodQuery, LodReply};
use crate::analysis::trace_viewer::op_args;
use crate::analysis::trace_viewer::store::TraceOutline;
use crate::analysis::trace_viewer::summary::{self, NameSummary, SearchResult};
use crate::analysis::trace_viewer::TraceStore;
use crate::decode::kineto::KinetoTrace;
use crate::decode::xplane::XSpace;
use crate::decode::Profile;

/// The tool's name in errors.
const TOOL: &str = "Trace Viewer";

/// Most arrows one flow reply carries (its `total` counts them all).
pub const MAX_FLOW_ARROWS: usize = 20_000;

/// What the Trace Viewer finds in a file beside its event store, each on first use.
#[derive(Debug, Default)]
pub struct TraceExtras {
    flows: Option<FlowIndex>,
    counters: Option<CounterSeries>,
    /// The last search's text and matches ([`Session::trace_search_match`]).
    search: Option<(String, SearchResult)>,
}

/// The flows the page asks for: those of one event, or those meeting a window.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FlowQuery {
    pub start_ps: i64,
    pub end_ps: i64,
    /// Indices into the store's threads; `None` for all.
    pub threads: Option<Vec<u32>>,
    /// The selected event: its links alone, wherever they lie.
    pub event: Option<u32>,
    /// Most arrows to send (at most [`MAX_FLOW_ARROWS`]).
    pub limit: u32,
}

/// The trace of a file the Trace Viewer shows.
#[derive(Clone, Copy)]
enum TraceFile<'a> {
    XSpace(&'a XSpace),
    Kineto(&'a KinetoTrace),
}

impl Session {
    /// The trace of file `file_id`, or why there is none: an unknown file id, or a file of another format.
    fn trace_file(&self, file_id: u32) -> Result<TraceFile<'_>, EngineError> {
        let f = self.file(file_id)?;
        match &f.file.profile {
            Profile::XSpace(space) => Ok(TraceFile::XSpace(space)),
            Profile::Kineto(trace) => Ok(TraceFile::Kineto(trace)),
            other => Err(EngineError::WrongFormat {
                file: f.file.name.clone(),
                tool: TOOL.into(),
                found: other.format(),
                needs: "an XProf trace (*.xplane.pb) or a PyTorch profiler trace (*.pt.trace.json[.gz])".into(),
            }),
        }
    }

    fn file_error(&self, file_id: u32, message: String) -> EngineError {
        self.analysis_error(file_id, TOOL, message)
    }

    /// The event store of file `file_id`, built on first use.
    pub fn trace_store(&mut self, file_id: u32) -> Result<&TraceStore, EngineError> {
        if !self.trace_stores.contains_key(&file_id) {
            let store = match self.trace_file(file_id)? {
                TraceFile::XSpace(space) => TraceStore::build(space).map_err(|e| self.file_error(file_id, e.to_string()))?,
                TraceFile::Kineto(trace) => kineto::store(&trace.timeline, &Layout::of(&trace.timeline)),
            };
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
        let store = &self.trace_stores[&file_id];
        match self.trace_file(file_id)? {
            TraceFile::XSpace(space) => details::details(space, store, event).map_err(|e| self.file_error(file_id, e.to_string())),
            TraceFile::Kineto(trace) => Ok(kineto::details(&trace.timeline, store, event)),
        }
    }

    /// The events whose names, or the ops they ran for (`tf_op`, `hlo_op`), contain `needle`
    /// (ignoring case), or are exactly the op of a `needle` written `="name"`: a TensorFlow op's
    /// occurrences are events named by its type ([`op_args`]). A Kineto trace's events are searched
    /// by name.
    pub fn trace_search(&mut self, file_id: u32, needle: &str) -> Result<SearchResult, EngineError> {
        self.trace_store(file_id)?;
        let store = &self.trace_stores[&file_id];
        match self.trace_file(file_id)? {
            TraceFile::XSpace(space) => op_args::search(store, space, needle).map_err(|e| self.file_error(file_id, e.to_string())),
            TraceFile::Kineto(_) => Ok(op_args::search_names(store, needle)),
        }
    }

    /// How many events `needle` finds ([`Session::trace_search`]); the matches are kept for
    /// [`Session::trace_search_match`], which the page asks as it steps through them (a name in
    /// most of a trace's events has millions of matches: too many to send to the page).
    pub fn trace_search_count(&mut self, file_id: u32, needle: &str) -> Result<usize, EngineError> {
        Ok(self.kept_search(file_id, needle)?.count)
    }

    /// Match `index` of `needle` (its event and start), in the order of [`Session::trace_search`];
    /// `None` past the last.
    pub fn trace_search_match(&mut self, file_id: u32, needle: &str, index: u32) -> Result<Option<(u32, i64)>, EngineError> {
        let found = self.kept_search(file_id, needle)?;
        let i = index as usize;
        Ok(found.event.get(i).zip(found.start_ps.get(i)).map(|(&e, &s)| (e, s)))
    }

    /// The matches of `needle`, searched unless they were the last search's.
    fn kept_search(&mut self, file_id: u32, needle: &str) -> Result<&SearchResult, EngineError> {
        if self.trace_extras.get(&file_id).and_then(|x| x.search.as_ref()).is_none_or(|(kept, _)| kept != needle) {
            let found = self.trace_search(file_id, needle)?;
            self.trace_extras.entry(file_id).or_default().search = Some((needle.to_string(), found));
        }
        Ok(&self.trace_extras[&file_id].search.as_ref().expect("kept above").1)
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
    /// (the page's "export visible range"), to `out`; returns the number of events written. An XSpace
    /// needs no event store: its events are read from the file as they are written. A Kineto trace's
    /// events are written as the trace wrote them ([`kineto::write_json`]), from its store (built here
    /// if the session holds none).
    pub fn trace_export_json(
        &self,
        file_id: u32,
        range_ps: Option<(i64, i64)>,
        out: &mut impl std::io::Write,
    ) -> Result<usize, EngineError> {
        match self.trace_file(file_id)? {
            TraceFile::XSpace(space) => export::write_json(space, range_ps, out).map_err(|e| self.file_error(file_id, e.to_string())),
            TraceFile::Kineto(trace) => {
                let layout = Layout::of(&trace.timeline);
                let built;
                let store = match self.trace_stores.get(&file_id) {
                    Some(store) => store,
                    None => {
                        built = kineto::store(&trace.timeline, &layout);
                        &built
                    }
                };
                kineto::write_json(&trace.timeline, store, &layout, range_ps, out)
                    .map_err(|e| self.file_error(file_id, format!("cannot write the JSON: {e}")))
            }
        }
    }

    /// The links of file `file_id`'s trace, found on first use.
    pub fn trace_flow_index(&mut self, file_id: u32) -> Result<&FlowIndex, EngineError> {
        if self.trace_extras.get(&file_id).is_none_or(|x| x.flows.is_none()) {
            self.trace_store(file_id)?;
            let store = &self.trace_stores[&file_id];
            let index = match self.trace_file(file_id)? {
                TraceFile::XSpace(space) => FlowIndex::build(space, store).map_err(|e| self.file_error(file_id, e.to_string()))?,
                TraceFile::Kineto(trace) => kineto::flows(&trace.timeline, store, &Layout::of(&trace.timeline)),
            };
            self.trace_extras.entry(file_id).or_default().flows = Some(index);
        }
        Ok(self.trace_extras[&file_id].flows.as_ref().expect("just built"))
    }

    /// The flow arrows `q` asks for.
    pub fn trace_flows(&mut self, file_id: u32, q: &FlowQuery) -> Result<FlowReply, EngineError> {
        self.trace_flow_index(file_id)?;
        let (store, index) = (&self.trace_stores[&file_id], self.trace_extras[&file_id].flows.as_ref().expect("built above"));
        let limit = (q.limit as usize).min(MAX_FLOW_ARROWS);
        Ok(match q.event {
            Some(event) => index.of_event(store, event, limit),
            None => index.window(store, q.start_ps, q.end_ps, q.threads.as_deref(), limit),
        })
    }

    /// Every allocator's memory events of file `file_id` in trace time, read on first use.
    fn trace_counter_series(&mut self, file_id: u32) -> Result<&CounterSeries, EngineError> {
        if self.trace_extras.get(&file_id).is_none_or(|x| x.counters.is_none()) {
            let series = match self.trace_file(file_id)? {
                TraceFile::XSpace(space) => CounterSeries::of(space).map_err(|e| self.file_error(file_id, e.to_string()))?,
                TraceFile::Kineto(trace) => kineto::counters(trace, &Layout::of(&trace.timeline)),
            };
            self.trace_extras.entry(file_id).or_default().counters = Some(series);
        }
        Ok(self.trace_extras[&file_id].counters.as_ref().expect("just built"))
    }

    /// The memory counter tracks of file `file_id` (one per allocator).
    pub fn trace_counter_tracks(&mut self, file_id: u32) -> Result<CounterTracks, EngineError> {
        Ok(self.trace_counter_series(file_id)?.tracks())
    }

    /// One allocator's steps over a window ([`counters::window`]).
    pub fn trace_counters(&mut self, file_id: u32, q: &CounterQuery) -> Result<CounterWindow, EngineError> {
        let file = self.file(file_id)?.file.name.clone();
        let series = self.trace_counter_series(file_id)?;
        match series.allocator(&q.memory_id) {
            Some(a) => Ok(counters::window(a, q)),
            None => Err(EngineError::UnknownMemoryId {
                file,
                memory_id: q.memory_id.clone(),
                known: series.memory_ids().map(str::to_string).collect(),
            }),
        }
    }
}
