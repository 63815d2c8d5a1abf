//! The one narrow, versioned envelope between the page and the engine's web worker. Requests carry a
//! sequence number; the page drops replies to requests it no longer waits for. File bytes travel beside
//! the JSON envelope as a transferred `ArrayBuffer`, never inside it.

pub mod request;

use super::framework_op_stats::FrameworkOpStatsView;
use super::graph_viewer::{GraphOverview, GraphView};
use super::hlo_stats::HloStatsView;
use super::input_pipeline::InputPipelineView;
use super::kernel_stats::KernelStatsView;
use super::memory_across_hosts::MemoryAcrossHosts as MemoryAcrossHostsView;
use super::memory_profile::{MemoryProfileView, TimelineWindow};
use super::memory_viewer_columns::ViewerReply;
use super::op_profile::OpProfileView;
use super::overview_page::OverviewPageView;
use super::roofline_model::RooflineModelView;
use super::run_comparison::RunComparison;
use super::{EngineError, FileDetails, Session};
use crate::analysis::graph_viewer::GraphOptions;
use crate::analysis::trace_viewer::counters::{CounterTracks, CounterWindow};
use crate::analysis::trace_viewer::details::EventDetails;
use crate::analysis::trace_viewer::flows::FlowReply;
use crate::analysis::trace_viewer::lod::LodQuery;
use crate::analysis::trace_viewer::store::TraceOutline;
use crate::analysis::trace_viewer::summary::NameSummary;
use crate::analysis::xla_ops_cpu::XlaOpsCpu;
use request::{DeviceMemoryAnswer, DeviceMemoryFiles, MemoryViewerPage, Trace};
use serde::{Deserialize, Serialize};

/// Bumped whenever a message changes shape.
pub const VERSION: u32 = 16;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    pub v: u32,
    pub seq: u64,
    pub body: RequestBody,
}

/// What the page asks: a file's life (open, close, its bytes back) and one variant per tool, each
/// holding its typed request ([`request`]), whose [`request::Ask`] names the reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum RequestBody {
    /// Decode the bytes sent alongside as file `path` (relative to what the user opened).
    Open {
        path: String,
    },
    Close {
        file_id: u32,
    },
    /// The file's bytes as the user opened it, for an offline bundle. They travel back beside the
    /// reply as a transferred `ArrayBuffer` (see [`source_bytes`]).
    /// With `slim`, an XSpace comes back without the lines no memory tool reads ([`super::slim`]).
    Source {
        file_id: u32,
        #[serde(default)]
        slim: bool,
    },
    DeviceMemory(request::DeviceMemory),
    MemoryProfile(request::MemoryProfile),
    MemoryTimeline(request::MemoryTimeline),
    MemoryViewer(request::MemoryViewer),
    GraphViewer(request::GraphViewer),
    GraphOverview(request::GraphOverview),
    /// Every Trace Viewer request, by what it asks of the trace.
    Trace(Trace),
    FrameworkOpStats(request::FrameworkOpStats),
    HloStats(request::HloStats),
    KernelStats(request::KernelStats),
    RooflineModel(request::RooflineModel),
    OpProfile(request::OpProfile),
    InputPipeline(request::InputPipeline),
    OverviewPage(request::OverviewPage),
    XlaOpsCpu(request::XlaOpsCpu),
    MemoryAcrossHosts(request::MemoryAcrossHosts),
    RunComparison(request::RunComparison),
    Residency(request::Residency),
    TorchOverview(request::TorchOverview),
    TorchOperators(request::TorchOperators),
    TorchKernels(request::TorchKernels),
    TorchMemory(request::TorchMemory),
    TorchSnapshot(request::TorchSnapshot),
    TorchSnapshotState(request::TorchSnapshotState),
    TorchSnapshotTimeline(request::TorchSnapshotTimeline),
    TorchSnapshotTraceMemory(request::TorchSnapshotTraceMemory),
    TorchRun(request::TorchRun),
    TorchSnapshotTraceFits(request::TorchSnapshotTraceFits),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Response {
    pub v: u32,
    pub seq: u64,
    pub body: ResponseBody,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ResponseBody {
    /// The worker is ready to take requests (sent once, with `seq` 0, before any request is read).
    Ready,
    Progress {
        done: u64,
        total: u64,
    },
    Opened {
        file_id: u32,
        overview: Box<FileDetails>,
    },
    /// The request could not be answered; every tool's failures are one [`EngineError`].
    Failed {
        error: EngineError,
    },
    Closed {
        file_id: u32,
    },
    /// `slim` says whether the bytes are a slim copy (false when nothing could be dropped).
    Source {
        file_id: u32,
        name: String,
        slim: bool,
    },
    DeviceMemory {
        answer: DeviceMemoryAnswer,
    },
    MemoryProfile {
        view: Box<MemoryProfileView>,
    },
    MemoryTimeline {
        window: Box<TimelineWindow>,
    },
    MemoryViewer {
        page: Box<MemoryViewerPage>,
    },
    GraphViewer {
        view: Box<GraphView>,
    },
    GraphOverview {
        overview: Box<GraphOverview>,
    },
    TraceOutline {
        outline: Box<TraceOutline>,
    },
    /// The query answered; its spans come beside the reply, packed ([`crate::analysis::trace_viewer::lod::LodReply::to_bytes`]).
    TraceSpans {
        file_id: u32,
        query: LodQuery,
    },
    /// `None`: no event of that index.
    TraceEventDetails {
        details: Option<Box<EventDetails>>,
    },
    /// How many events match (each is asked for with `TraceSearchMatch`).
    TraceSearch {
        count: usize,
    },
    TraceRangeSummary {
        rows: Vec<NameSummary>,
    },
    /// The range asked for; its JSON comes beside the reply.
    TraceExport {
        file_id: u32,
        start_ps: i64,
        end_ps: i64,
    },
    FrameworkOpStats {
        view: Box<FrameworkOpStatsView>,
    },
    HloStats {
        view: Box<HloStatsView>,
    },
    KernelStats {
        view: Box<KernelStatsView>,
    },
    RooflineModel {
        view: Box<RooflineModelView>,
    },
    OpProfile {
        view: Box<OpProfileView>,
    },
    InputPipeline {
        view: Box<InputPipelineView>,
    },
    OverviewPage {
        view: Box<OverviewPageView>,
    },
    /// The request itself could not be understood (wrong version, bad JSON).
    Rejected {
        message: String,
    },
    XlaOpsCpu {
        table: Box<XlaOpsCpu>,
    },
    MemoryAcrossHosts {
        view: Box<MemoryAcrossHostsView>,
    },
    TraceFlows {
        flows: Box<FlowReply>,
    },
    TraceCounterTracks {
        tracks: Box<CounterTracks>,
    },
    TraceCounters {
        windows: Vec<CounterWindow>,
    },
    RunComparison {
        comparison: Box<RunComparison>,
    },
    /// How much of a file sent as a stream has been read, before [`ResponseBody::Progress`] counts
    /// its decoding.
    Read {
        done: u64,
        total: u64,
    },
    Residency {
        report: Box<super::residency::ResidencyReport>,
    },
    /// The match's event and start; `None` past the last match.
    TraceSearchMatch {
        index: u32,
        found: Option<(u32, i64)>,
    },
    /// The PyTorch Profiler views of a Kineto trace, each as the figures the page draws (read in the
    /// engine from the TensorBoard plugin's payloads that `tidemark torch-* --json` prints).
    TorchOverview {
        page: Box<super::torch_page::OverviewPage>,
    },
    TorchOperators {
        page: Box<super::torch_page::OperatorsPage>,
    },
    TorchKernels {
        page: Box<super::torch_page::KernelsPage>,
    },
    /// Its curves and events come beside it, packed ([`super::torch_page::MemoryPage::take_packed`]).
    TorchMemory {
        page: Box<super::torch_page::MemoryPage>,
    },
    TorchSnapshot {
        report: Box<crate::analysis::torch_snapshot::SnapshotReport>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        state: Option<Box<crate::analysis::torch_snapshot::AllocatorState>>,
    },
    TorchSnapshotState {
        state: Box<crate::analysis::torch_snapshot::AllocatorState>,
    },
    TorchSnapshotTimeline {
        bands: Box<crate::analysis::torch_snapshot::Bands>,
    },
    TorchSnapshotTraceMemory {
        memory: Box<crate::analysis::torch_snapshot::TraceMemory>,
    },
    TorchRun {
        run: Box<crate::analysis::torch::ranks::TorchRun>,
    },
    TorchSnapshotTraceFits {
        fits: Vec<crate::analysis::torch_snapshot::TraceFit>,
    },
}

/// A reply and the bytes that travel beside it (a `TraceSpans` reply's spans packed, a `TraceExport`
/// reply's JSON; a `Source` reply's file is borrowed from the session instead, see [`source_bytes`]).
pub struct Answered {
    pub response: Response,
    pub beside: Option<Vec<u8>>,
}

/// Answers `request` (JSON) against `session`; `bytes` are the file for `Open`. Progress is reported
/// through `emit` before the final response is returned.
pub fn answer(session: &mut Session, request: &str, bytes: Option<Vec<u8>>, emit: &mut dyn FnMut(Response)) -> Answered {
    let req = match parse(request) {
        Ok(r) => r,
        Err(rejected) => return Answered { response: *rejected, beside: None },
    };
    let seq = req.seq;
    let mut beside = None;
    let body = match req.body {
        RequestBody::Open { path } => {
            let mut progress = in_percents(|done, total| emit(Response { v: VERSION, seq, body: ResponseBody::Progress { done, total } }));
            return Answered { response: opened(session.open(&path, bytes.unwrap_or_default(), &mut progress), seq), beside: None };
        }
        body => dispatch(session, body, &mut beside).unwrap_or_else(|error| ResponseBody::Failed { error }),
    };
    Answered { response: Response { v: VERSION, seq, body }, beside }
}

/// [`answer`] without the bytes that travel beside the reply.
pub fn handle(session: &mut Session, request: &str, bytes: Option<Vec<u8>>, emit: &mut dyn FnMut(Response)) -> Response {
    answer(session, request, bytes, emit).response
}

/// [`answer`], reading again, through `reread`, each released file the request needs (the page holds
/// one trace's bytes at a time, see [`super::residency`]): one at a time, each at most once (a request
/// that needs two released files at once, which no tool does, is answered with the second's
/// [`EngineError::NotResident`]).
pub fn answer_rereading(
    session: &mut Session,
    request: &str,
    bytes: Option<Vec<u8>>,
    emit: &mut dyn FnMut(Response),
    reread: &mut dyn FnMut(&mut Session, u32) -> Result<(), EngineError>,
) -> Answered {
    let mut bytes = bytes;
    let mut read_again = Vec::new();
    loop {
        let answered = answer(session, request, bytes.take(), emit);
        let ResponseBody::Failed { error: EngineError::NotResident { file_id, .. } } = &answered.response.body else { return answered };
        let file_id = *file_id;
        if read_again.contains(&file_id) {
            return answered;
        }
        read_again.push(file_id);
        if let Err(error) = reread(session, file_id) {
            let response = Response { body: ResponseBody::Failed { error }, ..answered.response };
            return Answered { response, beside: None };
        }
    }
}

/// The reply to every request but `Open`: one arm a request, each failure an [`EngineError`].
fn dispatch(s: &mut Session, body: RequestBody, beside: &mut Option<Vec<u8>>) -> Result<ResponseBody, EngineError> {
    Ok(match body {
        RequestBody::Open { .. } => unreachable!("answered by `answer`"),
        RequestBody::Close { file_id } => {
            s.close(file_id);
            ResponseBody::Closed { file_id }
        }
        RequestBody::Source { file_id, slim } => {
            let f = s.file(file_id)?;
            ResponseBody::Source { file_id, name: f.file.name.clone(), slim: slim && super::slim::possible(&f.file) }
        }
        RequestBody::DeviceMemory(r) => ResponseBody::DeviceMemory {
            answer: match r.files {
                DeviceMemoryFiles::Profile { file_id } => {
                    DeviceMemoryAnswer::Profile(Box::new(s.device_memory_profile(file_id, &r.query)?))
                }
                DeviceMemoryFiles::Diff { base_file_id, target_file_id } => {
                    DeviceMemoryAnswer::Diff(Box::new(s.device_memory_diff(base_file_id, target_file_id, &r.query)?))
                }
                DeviceMemoryFiles::Series { file_ids } => {
                    DeviceMemoryAnswer::Series(Box::new(s.device_memory_series(&file_ids, &r.query)?))
                }
            },
        },
        RequestBody::MemoryProfile(r) => {
            ResponseBody::MemoryProfile { view: Box::new(s.memory_profile_view(r.file_id, r.memory_id.as_deref())?) }
        }
        RequestBody::MemoryTimeline(r) => ResponseBody::MemoryTimeline {
            window: Box::new(s.memory_timeline_window(r.file_id, &r.memory_id, r.start_ps, r.end_ps, r.max_points)?),
        },
        RequestBody::MemoryViewer(r) => {
            let page = s.memory_viewer_page(&r.file_ids, r.file_id, r.module.as_deref(), r.memory_space)?;
            let (module, viewer) = match page.shown {
                Some((name, viewer)) => (Some(name), Some(viewer.map(ViewerReply::Engine))),
                None => (None, None),
            };
            ResponseBody::MemoryViewer { page: Box::new(MemoryViewerPage { modules: page.modules, file_id: r.file_id, module, viewer }) }
        }
        RequestBody::GraphViewer(r) => ResponseBody::GraphViewer {
            view: Box::new(s.graph_viewer_view(r.file_id, r.module.as_deref(), &GraphOptions { node: r.node, width: r.width })?),
        },
        RequestBody::GraphOverview(r) => ResponseBody::GraphOverview { overview: Box::new(s.graph_overview(r.file_id, &r.module)?) },
        RequestBody::Trace(t) => trace(s, t, beside)?,
        RequestBody::FrameworkOpStats(r) => {
            ResponseBody::FrameworkOpStats { view: Box::new(s.framework_op_stats_view(&r.scope, r.include_idle)?) }
        }
        RequestBody::HloStats(r) => ResponseBody::HloStats { view: Box::new(s.hlo_stats_view(&r.scope)?) },
        RequestBody::KernelStats(r) => ResponseBody::KernelStats { view: Box::new(s.kernel_stats_view(&r.scope)?) },
        RequestBody::RooflineModel(r) => {
            ResponseBody::RooflineModel { view: Box::new(s.roofline_model_view(&r.scope, r.include_infeed_outfeed)?) }
        }
        RequestBody::OpProfile(r) => ResponseBody::OpProfile { view: Box::new(s.op_profile_view(&r.scope, r.grouping, r.include_idle)?) },
        RequestBody::InputPipeline(r) => ResponseBody::InputPipeline { view: Box::new(s.input_pipeline_view(&r.file_ids)?) },
        RequestBody::OverviewPage(r) => ResponseBody::OverviewPage { view: Box::new(s.overview_page_view(&r.file_ids)?) },
        RequestBody::XlaOpsCpu(r) => ResponseBody::XlaOpsCpu { table: Box::new(XlaOpsCpu::clone(&*s.xla_ops_cpu(r.file_id)?)) },
        RequestBody::MemoryAcrossHosts(r) => ResponseBody::MemoryAcrossHosts { view: Box::new(s.memory_across_hosts(&r.file_ids)?) },
        RequestBody::RunComparison(r) => ResponseBody::RunComparison { comparison: Box::new(s.run_comparison(&r.current, &r.baseline)?) },
        RequestBody::Residency(_) => ResponseBody::Residency { report: Box::new(s.residency()) },
        RequestBody::TorchOverview(r) => ResponseBody::TorchOverview { page: Box::new(s.torch_overview(r.file_id)?) },
        RequestBody::TorchOperators(r) => ResponseBody::TorchOperators { page: Box::new(s.torch_operators(r.file_id, r.group_by)?) },
        RequestBody::TorchKernels(r) => ResponseBody::TorchKernels { page: Box::new(s.torch_kernels(r.file_id)?) },
        RequestBody::TorchMemory(r) => {
            let mut page = Box::new(s.torch_memory(r.file_id)?);
            *beside = Some(page.take_packed());
            ResponseBody::TorchMemory { page }
        }
        RequestBody::TorchRun(r) => ResponseBody::TorchRun { run: Box::new(s.torch_run(&r.file_ids)?) },
        RequestBody::TorchSnapshot(r) => {
            let state = r.state_at.map(|at| s.torch_snapshot_state(r.file_id, at.device, at.event_index)).transpose()?;
            ResponseBody::TorchSnapshot { report: Box::new(s.torch_snapshot(r.file_id)?), state: state.map(Box::new) }
        }
        RequestBody::TorchSnapshotState(r) => {
            ResponseBody::TorchSnapshotState { state: Box::new(s.torch_snapshot_state(r.file_id, r.device, r.event_index)?) }
        }
        RequestBody::TorchSnapshotTimeline(r) => ResponseBody::TorchSnapshotTimeline {
            bands: Box::new(s.torch_snapshot_timeline(r.file_id, r.device, r.axis, r.window, r.columns, r.rows)?),
        },
        RequestBody::TorchSnapshotTraceMemory(r) => ResponseBody::TorchSnapshotTraceMemory {
            memory: Box::new(s.torch_snapshot_trace_memory(r.file_id, r.trace_file_id, r.device)?),
        },
        RequestBody::TorchSnapshotTraceFits(r) => {
            ResponseBody::TorchSnapshotTraceFits { fits: s.torch_snapshot_trace_fits(r.file_id, r.device, &r.trace_file_ids)? }
        }
    })
}

/// A Trace Viewer request's reply; the spans and an export's JSON go into `beside`.
fn trace(s: &mut Session, t: Trace, beside: &mut Option<Vec<u8>>) -> Result<ResponseBody, EngineError> {
    Ok(match t {
        Trace::Outline(r) => ResponseBody::TraceOutline { outline: Box::new(s.trace_outline(r.file_id)?) },
        Trace::Spans(r) => {
            *beside = Some(s.trace_spans(r.file_id, &r.query)?.to_bytes());
            ResponseBody::TraceSpans { file_id: r.file_id, query: r.query }
        }
        Trace::EventDetails(r) => ResponseBody::TraceEventDetails { details: s.trace_event_details(r.file_id, r.event)?.map(Box::new) },
        Trace::Search(r) => ResponseBody::TraceSearch { count: s.trace_search_count(r.file_id, &r.needle)? },
        Trace::SearchMatch(r) => {
            ResponseBody::TraceSearchMatch { index: r.index, found: s.trace_search_match(r.file_id, &r.needle, r.index)? }
        }
        Trace::RangeSummary(r) => {
            ResponseBody::TraceRangeSummary { rows: s.trace_range_summary(r.file_id, r.from_ps, r.to_ps, r.threads.as_deref())? }
        }
        Trace::Export(r) => {
            let mut json = Vec::new();
            s.trace_export_json(r.file_id, Some((r.start_ps, r.end_ps)), &mut json)?;
            *beside = Some(json);
            ResponseBody::TraceExport { file_id: r.file_id, start_ps: r.start_ps, end_ps: r.end_ps }
        }
        Trace::Flows(r) => ResponseBody::TraceFlows { flows: Box::new(s.trace_flows(r.file_id, &r.query)?) },
        Trace::CounterTracks(r) => ResponseBody::TraceCounterTracks { tracks: Box::new(s.trace_counter_tracks(r.file_id)?) },
        Trace::Counters(r) => {
            ResponseBody::TraceCounters { windows: r.queries.iter().map(|q| s.trace_counters(r.file_id, q)).collect::<Result<_, _>>()? }
        }
    })
}

/// The request in `request` (JSON), or the rejection it gets: not JSON, or of another version.
fn parse(request: &str) -> Result<Request, Box<Response>> {
    let req: Request = serde_json::from_str(request).map_err(|e| {
        // A request whose body cannot be read is still answered under its own sequence number where
        // the envelope has one, so the page fails that request instead of waiting on it.
        #[derive(Deserialize)]
        struct Envelope {
            seq: u64,
        }
        let seq = serde_json::from_str::<Envelope>(request).map_or(0, |e| e.seq);
        Response { v: VERSION, seq, body: ResponseBody::Rejected { message: format!("bad request: {e}") } }
    })?;
    if req.v != VERSION {
        let message = format!("protocol version {} is not {VERSION}; reload the page", req.v);
        return Err(Box::new(Response { v: VERSION, seq: req.seq, body: ResponseBody::Rejected { message } }));
    }
    Ok(req)
}

/// `report(done, total)` called only when the whole percentage changes.
fn in_percents(mut report: impl FnMut(u64, u64)) -> impl FnMut(u64, u64) {
    let mut last_pct = u64::MAX;
    move |done, total| {
        let pct = done.saturating_mul(100).checked_div(total).unwrap_or(100);
        if pct != last_pct {
            last_pct = pct;
            report(done, total);
        }
    }
}

fn opened(result: Result<&super::OpenFile, EngineError>, seq: u64) -> Response {
    let body = match result {
        Ok(f) => ResponseBody::Opened { file_id: f.id, overview: Box::new(f.overview.clone()) },
        Err(error) => ResponseBody::Failed { error },
    };
    Response { v: VERSION, seq, body }
}

/// Answers an `Open` request (JSON) whose file comes as a stream: `size_bytes` read from `reader`
/// (`last4` its last four bytes, when known). Reading is reported as [`ResponseBody::Read`], then
/// decoding as [`ResponseBody::Progress`], through `emit`.
pub fn handle_open_stream(
    session: &mut Session,
    request: &str,
    size_bytes: u64,
    last4: Option<[u8; 4]>,
    reader: &mut dyn std::io::Read,
    emit: &mut dyn FnMut(Response),
) -> Response {
    let req = match parse(request) {
        Ok(r) => r,
        Err(rejected) => return *rejected,
    };
    let seq = req.seq;
    let RequestBody::Open { path } = req.body else {
        return Response { v: VERSION, seq, body: ResponseBody::Rejected { message: "only an open request comes with a file".into() } };
    };
    let emit = std::cell::RefCell::new(emit);
    let send = |body| (emit.borrow_mut())(Response { v: VERSION, seq, body });
    let mut reading = ReadCount {
        inner: reader,
        done: 0,
        report: in_percents(|done, total| send(ResponseBody::Read { done, total })),
        total: size_bytes,
    };
    let source = crate::decode::stream::Source { size_bytes, last4, reader: &mut reading };
    let mut progress = in_percents(|done, total| send(ResponseBody::Progress { done, total }));
    opened(session.open_stream(&path, source, &mut progress), seq)
}

/// A reader that reports how much of `total` it has read.
struct ReadCount<'a, F> {
    inner: &'a mut dyn std::io::Read,
    done: u64,
    total: u64,
    report: F,
}

impl<F: FnMut(u64, u64)> std::io::Read for ReadCount<'_, F> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.done += n as u64;
        (self.report)(self.done, self.total);
        Ok(n)
    }
}

/// The bytes that travel beside a `Source` reply: its file (or its slim copy), borrowed from the
/// session rather than copied (a file may be 2 GB).
pub fn source_bytes<'s>(session: &'s Session, response: &Response) -> Option<std::borrow::Cow<'s, [u8]>> {
    let &ResponseBody::Source { file_id, slim, .. } = &response.body else { return None };
    let f = session.get(file_id)?;
    if slim {
        super::slim::of(&f.file).map(std::borrow::Cow::Owned)
    } else {
        Some(std::borrow::Cow::Borrowed(f.file.source_bytes()))
    }
}
