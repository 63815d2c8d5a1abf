//! The one narrow, versioned envelope between the page and the engine's web worker. Requests carry a
//! sequence number; the page drops replies to requests it no longer waits for. File bytes travel beside
//! the JSON envelope as a transferred `ArrayBuffer`, never inside it.

use super::device_memory::{DeviceMemoryDiffView, DeviceMemoryProfileView, DeviceMemoryQuery, DeviceMemorySeriesView};
use super::framework_op_stats::FrameworkOpStatsView;
use super::graph_viewer::GraphView;
use super::hlo_op_stats::HloOpStatsView;
use super::input_pipeline::InputPipelineView;
use super::kernel_stats::KernelStatsView;
use super::memory_across_hosts::RunMemoryOverview;
use super::memory_profile::{MemoryProfileView, TimelineWindow};
use super::memory_viewer::ModuleEntry;
use super::memory_viewer_columns::ViewerReply;
use super::op_profile::{OpProfileGrouping, OpProfileView};
use super::overview_page::OverviewPageView;
use super::roofline::RooflineView;
use super::run_comparison::RunComparison;
use super::trace_viewer::FlowQuery;
use super::{EngineError, FileOverview, Session};
use crate::analysis::graph_viewer::GraphOptions;
use crate::analysis::op_metrics::TimeWindow;
use crate::analysis::trace_viewer::counters::{CounterQuery, CounterTracks, CounterWindow};
use crate::analysis::trace_viewer::details::EventDetails;
use crate::analysis::trace_viewer::flows::FlowReply;
use crate::analysis::trace_viewer::lod::LodQuery;
use crate::analysis::trace_viewer::store::TraceOutline;
use crate::analysis::trace_viewer::summary::NameSummary;
use crate::analysis::xla_ops_cpu::XlaOpsCpu;
use serde::{Deserialize, Serialize};

/// Bumped whenever a message changes shape.
pub const VERSION: u32 = 12;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    pub v: u32,
    pub seq: u64,
    pub body: RequestBody,
}

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
    /// One JAX device memory profile: live bytes by function and by stack.
    DeviceMemoryProfile {
        file_id: u32,
        query: DeviceMemoryQuery,
    },
    /// `target` minus `base`, stack by stack (`pprof --diff_base`).
    DeviceMemoryDiff {
        base_file_id: u32,
        target_file_id: u32,
        query: DeviceMemoryQuery,
    },
    /// Each stack through the snapshots `file_ids`, with ranked leak suspects.
    DeviceMemorySeries {
        file_ids: Vec<u32>,
        query: DeviceMemoryQuery,
    },
    /// The Memory Profile of an opened trace: `memory_id`, or the first one when `None`.
    MemoryProfile {
        file_id: u32,
        memory_id: Option<String>,
    },
    /// Zoom: the full-resolution timeline of one memory ID between two times, at most `max_points`.
    MemoryTimeline {
        file_id: u32,
        memory_id: String,
        start_ps: i64,
        end_ps: i64,
        max_points: usize,
    },
    /// The Memory Viewer page: the modules of the open files `file_ids` (its module selector) and
    /// module `module` of file `file_id` (the file's largest when `None` or not one of its modules);
    /// `memory_space` `None` picks device memory where present.
    MemoryViewer {
        file_ids: Vec<u32>,
        file_id: u32,
        module: Option<String>,
        memory_space: Option<i64>,
    },
    /// The Graph Viewer: the graph of `module` of file `file_id` (the file's largest when `None`)
    /// around instruction or computation `node` (the entry root when `None`), `width` hops, laid out.
    GraphViewer {
        file_id: u32,
        module: Option<String>,
        node: Option<String>,
        width: u32,
    },
    /// The Trace Viewer's processes and threads (XProf's names and order), names and time span.
    TraceOutline {
        file_id: u32,
    },
    /// The spans to draw for a time window `width_px` pixels wide (level of detail), in columns that
    /// travel beside the reply as one transferred `ArrayBuffer` (see [`source_bytes`]).
    TraceSpans {
        file_id: u32,
        query: LodQuery,
    },
    /// One event in full (index from a span's `event` or a search match).
    TraceEventDetails {
        file_id: u32,
        event: u32,
    },
    /// How many events' names contain `needle`, ignoring case.
    TraceSearch {
        file_id: u32,
        needle: String,
    },
    /// The events starting in `[from_ps, to_ps)` on `threads` (all when `None`), by name.
    TraceRangeSummary {
        file_id: u32,
        from_ps: i64,
        to_ps: i64,
        threads: Option<Vec<u32>>,
    },
    /// XProf's trace_viewer JSON of the events overlapping `[start_ps, end_ps]`; the JSON travels back
    /// beside the reply as a transferred `ArrayBuffer` (see [`source_bytes`]).
    TraceExport {
        file_id: u32,
        start_ps: i64,
        end_ps: i64,
    },
    /// The Framework Op Stats page: XProf's table with the `IDLE` rows when `include_idle`, else
    /// without them, and the self time by op type per side.
    FrameworkOpStats {
        file_id: u32,
        include_idle: bool,
        /// Only the events that start inside this window (a step; Tidemark's own, XProf has no such
        /// limit); absent: the whole trace.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        window: Option<TimeWindow>,
    },
    /// The HLO Op Stats page: XProf's table as columns, and its summary.
    HloOpStats {
        file_id: u32,
        /// Only the events that start inside this window (a step; Tidemark's own, XProf has no such
        /// limit); absent: the whole trace.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        window: Option<TimeWindow>,
    },
    /// The Kernel Stats page: XProf's table as columns, and its summary.
    KernelStats {
        file_id: u32,
        /// Only the kernels that start inside this window (as for `FrameworkOpStats`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        window: Option<TimeWindow>,
    },
    /// The Roofline page: the device's roofs and the whole-profile records, with the infeed and
    /// outfeed ops when `include_infeed_outfeed`.
    RooflineModel {
        file_id: u32,
        include_infeed_outfeed: bool,
        /// Only the device ops that start inside this window (as for `FrameworkOpStats`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        window: Option<TimeWindow>,
    },
    /// The Op Profile page: the tree grouped by `grouping`, with the idle node when `include_idle`.
    OpProfile {
        file_id: u32,
        grouping: OpProfileGrouping,
        include_idle: bool,
        /// Only the device ops that start inside this window (as for `FrameworkOpStats`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        window: Option<TimeWindow>,
    },
    /// The Framework Op Stats page of a run's hosts `file_ids` combined (the host selector's "all
    /// hosts"), answered as `FrameworkOpStats`.
    RunFrameworkOpStats {
        file_ids: Vec<u32>,
        include_idle: bool,
        /// Only the events that start inside this window (a step; Tidemark's own, XProf has no such
        /// limit); absent: the whole trace.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        window: Option<TimeWindow>,
    },
    /// The Input Pipeline page: the verdict, the steps and their statistics, the host's input time.
    InputPipeline {
        file_id: u32,
    },
    /// The Overview page (XProf's `overview_page`): summary, steps, top ops, run environment, tips.
    OverviewPage {
        file_id: u32,
    },
    /// Tidemark's "XLA ops on CPU" table of a trace.
    XlaOpsCpu {
        file_id: u32,
    },
    /// The HLO Op Stats page of a run's hosts `file_ids` combined (the host selector's "all hosts"),
    /// answered as `HloOpStats`; so are the `Run*` op requests below, each as its one-file request.
    RunHloOpStats {
        file_ids: Vec<u32>,
        /// Only the events that start inside this window (a step; Tidemark's own, XProf has no such
        /// limit); absent: the whole trace.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        window: Option<TimeWindow>,
    },
    RunKernelStats {
        file_ids: Vec<u32>,
        /// Only the kernels that start inside this window (as for `FrameworkOpStats`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        window: Option<TimeWindow>,
    },
    RunRooflineModel {
        file_ids: Vec<u32>,
        include_infeed_outfeed: bool,
        /// Only the device ops that start inside this window (as for `FrameworkOpStats`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        window: Option<TimeWindow>,
    },
    RunOpProfile {
        file_ids: Vec<u32>,
        grouping: OpProfileGrouping,
        include_idle: bool,
        /// Only the device ops that start inside this window (as for `FrameworkOpStats`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        window: Option<TimeWindow>,
    },
    RunInputPipeline {
        file_ids: Vec<u32>,
    },
    RunOverviewPage {
        file_ids: Vec<u32>,
    },
    /// Memory across the hosts `file_ids` of a run: every allocator's peak, capacity and timeline.
    RunMemoryOverview {
        file_ids: Vec<u32>,
    },
    /// The Trace Viewer's flow arrows: those of one event, or those meeting a window.
    TraceFlows {
        file_id: u32,
        query: FlowQuery,
    },
    /// The memory counter tracks (one per allocator).
    TraceCounterTracks {
        file_id: u32,
    },
    /// Allocators' heap and stack steps over a window, merged per pixel: one window per query.
    TraceCounters {
        file_id: u32,
        queries: Vec<CounterQuery>,
    },
    /// The run `current` (its hosts' file ids) against the run `baseline`: op times and allocator
    /// peaks with their changes.
    CompareRuns {
        current: Vec<u32>,
        baseline: Vec<u32>,
    },
    /// Which files' bytes the engine holds, and the memory it has (see [`super::residency`]).
    Residency,
    /// Match `index` of a Trace Viewer search for `needle` (the engine keeps the last search's matches).
    TraceSearchMatch {
        file_id: u32,
        needle: String,
        index: u32,
    },
    /// A PyTorch CUDA memory snapshot's report (every device: events, active-memory timeline and
    /// peak, what was live there, segments, lost history, largest allocations, leak suspects, OOMs)
    /// and, with `state_at`, the allocator's state after that event of that device.
    TorchSnapshot {
        file_id: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        state_at: Option<TorchSnapshotEvent>,
    },
}

/// An event of a CUDA memory snapshot's device trace (-1: before the first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TorchSnapshotEvent {
    pub device: usize,
    pub event_index: i64,
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
    Progress {
        done: u64,
        total: u64,
    },
    Opened {
        file_id: u32,
        overview: Box<FileOverview>,
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
    DeviceMemoryProfile {
        view: Box<DeviceMemoryProfileView>,
    },
    DeviceMemoryDiff {
        view: Box<DeviceMemoryDiffView>,
    },
    DeviceMemorySeries {
        view: Box<DeviceMemorySeriesView>,
    },
    MemoryProfile {
        view: Box<MemoryProfileView>,
    },
    MemoryTimeline {
        window: Box<TimelineWindow>,
    },
    /// `module`: the module shown (`None` when the file has none), and its Memory Viewer in columns
    /// or why it has none.
    MemoryViewer {
        modules: Vec<ModuleEntry>,
        file_id: u32,
        module: Option<String>,
        viewer: Option<Result<ViewerReply, EngineError>>,
    },
    GraphViewer {
        view: Box<GraphView>,
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
    HloOpStats {
        view: Box<HloOpStatsView>,
    },
    KernelStats {
        view: Box<KernelStatsView>,
    },
    RooflineModel {
        view: Box<RooflineView>,
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
    RunMemoryOverview {
        view: Box<RunMemoryOverview>,
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
    CompareRuns {
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
    TorchSnapshot {
        report: Box<crate::analysis::torch_snapshot::SnapshotReport>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        state: Option<Box<crate::analysis::torch_snapshot::AllocatorState>>,
    },
}

/// Answers `request` (JSON) against `session`; `bytes` are the file for `Open`. Progress is reported
/// through `emit` before the final response is returned.
pub fn handle(session: &mut Session, request: &str, bytes: Option<Vec<u8>>, emit: &mut dyn FnMut(Response)) -> Response {
    let req = match parse(request) {
        Ok(r) => r,
        Err(rejected) => return *rejected,
    };
    let seq = req.seq;
    let reply = |body| Response { v: VERSION, seq, body };
    match req.body {
        RequestBody::Open { path } => {
            let mut progress = in_percents(|done, total| emit(Response { v: VERSION, seq, body: ResponseBody::Progress { done, total } }));
            opened(session.open(&path, bytes.unwrap_or_default(), &mut progress), seq)
        }
        RequestBody::Source { file_id, slim } => match session.file(file_id) {
            Ok(f) => {
                let slim = slim && super::slim::possible(&f.file);
                reply(ResponseBody::Source { file_id, name: f.file.name.clone(), slim })
            }
            Err(error) => reply(ResponseBody::Failed { error }),
        },
        RequestBody::Close { file_id } => {
            session.close(file_id);
            reply(ResponseBody::Closed { file_id })
        }
        RequestBody::DeviceMemoryProfile { file_id, query } => match session.device_memory_profile(file_id, &query) {
            Ok(view) => reply(ResponseBody::DeviceMemoryProfile { view: Box::new(view) }),
            Err(error) => reply(ResponseBody::Failed { error }),
        },
        RequestBody::DeviceMemoryDiff { base_file_id, target_file_id, query } => {
            match session.device_memory_diff(base_file_id, target_file_id, &query) {
                Ok(view) => reply(ResponseBody::DeviceMemoryDiff { view: Box::new(view) }),
                Err(error) => reply(ResponseBody::Failed { error }),
            }
        }
        RequestBody::DeviceMemorySeries { file_ids, query } => match session.device_memory_series(&file_ids, &query) {
            Ok(view) => reply(ResponseBody::DeviceMemorySeries { view: Box::new(view) }),
            Err(error) => reply(ResponseBody::Failed { error }),
        },
        RequestBody::MemoryProfile { file_id, memory_id } => match session.memory_profile_view(file_id, memory_id.as_deref()) {
            Ok(view) => reply(ResponseBody::MemoryProfile { view: Box::new(view) }),
            Err(error) => reply(ResponseBody::Failed { error }),
        },
        RequestBody::MemoryTimeline { file_id, memory_id, start_ps, end_ps, max_points } => {
            match session.memory_timeline_window(file_id, &memory_id, start_ps, end_ps, max_points) {
                Ok(window) => reply(ResponseBody::MemoryTimeline { window: Box::new(window) }),
                Err(error) => reply(ResponseBody::Failed { error }),
            }
        }
        RequestBody::MemoryViewer { file_ids, file_id, module, memory_space } => {
            match session.memory_viewer_page(&file_ids, file_id, module.as_deref(), memory_space) {
                Ok(page) => {
                    let (module, viewer) = match page.shown {
                        Some((name, viewer)) => (Some(name), Some(viewer.map(ViewerReply::Engine))),
                        None => (None, None),
                    };
                    reply(ResponseBody::MemoryViewer { modules: page.modules, file_id, module, viewer })
                }
                Err(error) => reply(ResponseBody::Failed { error }),
            }
        }
        RequestBody::GraphViewer { file_id, module, node, width } => {
            match session.graph_view(file_id, module.as_deref(), &GraphOptions { node, width }) {
                Ok(view) => reply(ResponseBody::GraphViewer { view: Box::new(view) }),
                Err(error) => reply(ResponseBody::Failed { error }),
            }
        }
        RequestBody::TraceOutline { file_id } => match session.trace_outline(file_id) {
            Ok(outline) => reply(ResponseBody::TraceOutline { outline: Box::new(outline) }),
            Err(error) => reply(ResponseBody::Failed { error }),
        },
        // The spans are packed by `source_bytes` as the reply is posted (a buffer the page reads
        // without parsing); here the event store is built, so a failure is a `Failed` reply.
        RequestBody::TraceSpans { file_id, query } => match session.trace_store(file_id) {
            Ok(_) => reply(ResponseBody::TraceSpans { file_id, query }),
            Err(error) => reply(ResponseBody::Failed { error }),
        },
        RequestBody::TraceEventDetails { file_id, event } => match session.trace_event_details(file_id, event) {
            Ok(details) => reply(ResponseBody::TraceEventDetails { details: details.map(Box::new) }),
            Err(error) => reply(ResponseBody::Failed { error }),
        },
        RequestBody::TraceSearch { file_id, needle } => match session.trace_search_count(file_id, &needle) {
            Ok(count) => reply(ResponseBody::TraceSearch { count }),
            Err(error) => reply(ResponseBody::Failed { error }),
        },
        RequestBody::TraceRangeSummary { file_id, from_ps, to_ps, threads } => {
            match session.trace_range_summary(file_id, from_ps, to_ps, threads.as_deref()) {
                Ok(rows) => reply(ResponseBody::TraceRangeSummary { rows }),
                Err(error) => reply(ResponseBody::Failed { error }),
            }
        }
        // The JSON itself is written by `source_bytes` as the reply is posted; here the file is
        // checked to be a trace, so a failure is a `Failed` reply rather than missing bytes.
        RequestBody::TraceExport { file_id, start_ps, end_ps } => match session.trace_store(file_id) {
            Ok(_) => reply(ResponseBody::TraceExport { file_id, start_ps, end_ps }),
            Err(error) => reply(ResponseBody::Failed { error }),
        },
        RequestBody::FrameworkOpStats { file_id, include_idle, window } => {
            match session.run_framework_op_stats_view_in(&[file_id], include_idle, window) {
                Ok(view) => reply(ResponseBody::FrameworkOpStats { view: Box::new(view) }),
                Err(error) => reply(ResponseBody::Failed { error }),
            }
        }
        RequestBody::HloOpStats { file_id, window } => match session.run_hlo_op_stats_view_in(&[file_id], window) {
            Ok(view) => reply(ResponseBody::HloOpStats { view: Box::new(view) }),
            Err(error) => reply(ResponseBody::Failed { error }),
        },
        RequestBody::KernelStats { file_id, window } => match session.run_kernel_stats_view_in(&[file_id], window) {
            Ok(view) => reply(ResponseBody::KernelStats { view: Box::new(view) }),
            Err(error) => reply(ResponseBody::Failed { error }),
        },
        RequestBody::RooflineModel { file_id, include_infeed_outfeed, window } => {
            match session.run_roofline_view_in(&[file_id], include_infeed_outfeed, window) {
                Ok(view) => reply(ResponseBody::RooflineModel { view: Box::new(view) }),
                Err(error) => reply(ResponseBody::Failed { error }),
            }
        }
        RequestBody::OpProfile { file_id, grouping, include_idle, window } => {
            match session.run_op_profile_view_in(&[file_id], grouping, include_idle, window) {
                Ok(view) => reply(ResponseBody::OpProfile { view: Box::new(view) }),
                Err(error) => reply(ResponseBody::Failed { error }),
            }
        }
        RequestBody::RunFrameworkOpStats { file_ids, include_idle, window } => {
            match session.run_framework_op_stats_view_in(&file_ids, include_idle, window) {
                Ok(view) => reply(ResponseBody::FrameworkOpStats { view: Box::new(view) }),
                Err(error) => reply(ResponseBody::Failed { error }),
            }
        }
        RequestBody::InputPipeline { file_id } => match session.input_pipeline_view(file_id) {
            Ok(view) => reply(ResponseBody::InputPipeline { view: Box::new(view) }),
            Err(error) => reply(ResponseBody::Failed { error }),
        },
        RequestBody::OverviewPage { file_id } => match session.overview_page_view(file_id) {
            Ok(view) => reply(ResponseBody::OverviewPage { view: Box::new(view) }),
            Err(error) => reply(ResponseBody::Failed { error }),
        },
        RequestBody::XlaOpsCpu { file_id } => match session.xla_ops_cpu(file_id) {
            Ok(table) => reply(ResponseBody::XlaOpsCpu { table: Box::new(XlaOpsCpu::clone(&table)) }),
            Err(error) => reply(ResponseBody::Failed { error }),
        },
        RequestBody::RunHloOpStats { file_ids, window } => match session.run_hlo_op_stats_view_in(&file_ids, window) {
            Ok(view) => reply(ResponseBody::HloOpStats { view: Box::new(view) }),
            Err(error) => reply(ResponseBody::Failed { error }),
        },
        RequestBody::RunKernelStats { file_ids, window } => match session.run_kernel_stats_view_in(&file_ids, window) {
            Ok(view) => reply(ResponseBody::KernelStats { view: Box::new(view) }),
            Err(error) => reply(ResponseBody::Failed { error }),
        },
        RequestBody::RunRooflineModel { file_ids, include_infeed_outfeed, window } => {
            match session.run_roofline_view_in(&file_ids, include_infeed_outfeed, window) {
                Ok(view) => reply(ResponseBody::RooflineModel { view: Box::new(view) }),
                Err(error) => reply(ResponseBody::Failed { error }),
            }
        }
        RequestBody::RunOpProfile { file_ids, grouping, include_idle, window } => {
            match session.run_op_profile_view_in(&file_ids, grouping, include_idle, window) {
                Ok(view) => reply(ResponseBody::OpProfile { view: Box::new(view) }),
                Err(error) => reply(ResponseBody::Failed { error }),
            }
        }
        RequestBody::RunInputPipeline { file_ids } => match session.run_input_pipeline_view(&file_ids) {
            Ok(view) => reply(ResponseBody::InputPipeline { view: Box::new(view) }),
            Err(error) => reply(ResponseBody::Failed { error }),
        },
        RequestBody::RunOverviewPage { file_ids } => match session.run_overview_page_view(&file_ids) {
            Ok(view) => reply(ResponseBody::OverviewPage { view: Box::new(view) }),
            Err(error) => reply(ResponseBody::Failed { error }),
        },
        RequestBody::RunMemoryOverview { file_ids } => match session.run_memory_overview(&file_ids) {
            Ok(view) => reply(ResponseBody::RunMemoryOverview { view: Box::new(view) }),
            Err(error) => reply(ResponseBody::Failed { error }),
        },
        RequestBody::TraceFlows { file_id, query } => match session.trace_flows(file_id, &query) {
            Ok(flows) => reply(ResponseBody::TraceFlows { flows: Box::new(flows) }),
            Err(error) => reply(ResponseBody::Failed { error }),
        },
        RequestBody::TraceCounterTracks { file_id } => match session.trace_counter_tracks(file_id) {
            Ok(tracks) => reply(ResponseBody::TraceCounterTracks { tracks: Box::new(tracks) }),
            Err(error) => reply(ResponseBody::Failed { error }),
        },
        RequestBody::TraceCounters { file_id, queries } => {
            match queries.iter().map(|q| session.trace_counters(file_id, q)).collect::<Result<Vec<_>, _>>() {
                Ok(windows) => reply(ResponseBody::TraceCounters { windows }),
                Err(error) => reply(ResponseBody::Failed { error }),
            }
        }
        RequestBody::CompareRuns { current, baseline } => match session.compare_runs(&current, &baseline) {
            Ok(comparison) => reply(ResponseBody::CompareRuns { comparison: Box::new(comparison) }),
            Err(error) => reply(ResponseBody::Failed { error }),
        },
        RequestBody::Residency => reply(ResponseBody::Residency { report: Box::new(session.residency()) }),
        RequestBody::TraceSearchMatch { file_id, needle, index } => match session.trace_search_match(file_id, &needle, index) {
            Ok(found) => reply(ResponseBody::TraceSearchMatch { index, found }),
            Err(error) => reply(ResponseBody::Failed { error }),
        },
        RequestBody::TorchSnapshot { file_id, state_at } => {
            let state = state_at.map(|at| session.torch_snapshot_state(file_id, at.device, at.event_index)).transpose();
            match (session.torch_snapshot(file_id), state) {
                (Ok(report), Ok(state)) => reply(ResponseBody::TorchSnapshot { report: Box::new(report), state: state.map(Box::new) }),
                (Err(error), _) | (_, Err(error)) => reply(ResponseBody::Failed { error }),
            }
        }
    }
}

/// The request in `request` (JSON), or the rejection it gets: not JSON, or of another version.
fn parse(request: &str) -> Result<Request, Box<Response>> {
    let req: Request = serde_json::from_str(request).map_err(|e| Response {
        v: VERSION,
        seq: 0,
        body: ResponseBody::Rejected { message: format!("bad request: {e}") },
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

/// The bytes that travel beside `response`: a `Source` reply carries its file (or its slim copy), a
/// `TraceExport` reply the range's trace JSON, a `TraceSpans` reply its spans packed.
pub fn source_bytes<'s>(session: &'s Session, response: &Response) -> Option<std::borrow::Cow<'s, [u8]>> {
    match &response.body {
        ResponseBody::TraceSpans { file_id, query } => session.trace_spans_bytes(*file_id, query).map(std::borrow::Cow::Owned),
        &ResponseBody::TraceExport { file_id, start_ps, end_ps } => {
            let mut json = Vec::new();
            session.trace_export_json(file_id, Some((start_ps, end_ps)), &mut json).ok()?;
            Some(std::borrow::Cow::Owned(json))
        }
        &ResponseBody::Source { file_id, slim, .. } => session.get(file_id).and_then(|f| {
            if slim {
                super::slim::of(&f.file).map(std::borrow::Cow::Owned)
            } else {
                Some(std::borrow::Cow::Borrowed(f.file.source_bytes()))
            }
        }),
        _ => None,
    }
}
