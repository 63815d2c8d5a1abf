//! The requests a view asks, one type each, and the reply each is answered with ([`Ask`]). The page
//! asks `use_engine::<request::KernelStats>(..)` and gets the Kernel Stats view or an error: a
//! request read as another's reply does not compile. Each type travels as its [`RequestBody`]
//! variant (the Trace Viewer's all under [`RequestBody::Trace`]); the wire forms are pinned in
//! `tests/*_protocol.rs`.

use super::super::device_memory::{DeviceMemoryDiffView, DeviceMemoryProfileView, DeviceMemoryQuery, DeviceMemorySeriesView, Labels};
use super::super::framework_op_stats::FrameworkOpStatsView;
use super::super::graph_viewer::{GraphOverview as GraphOverviewView, GraphView};
use super::super::hlo_stats::HloStatsView;
use super::super::input_pipeline::InputPipelineView;
use super::super::kernel_stats::KernelStatsView;
use super::super::memory_across_hosts::MemoryAcrossHosts as MemoryAcrossHostsView;
use super::super::memory_profile::{MemoryProfileView, TimelineWindow};
use super::super::memory_viewer::ModuleEntry;
use super::super::memory_viewer_columns::ViewerReply;
use super::super::op_profile::{OpProfileGrouping, OpProfileView};
use super::super::overview_page::OverviewPageView;
use super::super::residency::ResidencyReport;
use super::super::roofline_model::RooflineModelView;
use super::super::run_comparison::RunComparison as RunComparisonView;
use super::super::trace_viewer::FlowQuery;
use super::super::{EngineError, Scope};
use super::{RequestBody, ResponseBody};
use crate::analysis::torch_snapshot::{AllocatorState, SnapshotReport};
use crate::analysis::trace_viewer::counters::{CounterQuery, CounterTracks, CounterWindow};
use crate::analysis::trace_viewer::details::EventDetails;
use crate::analysis::trace_viewer::flows::FlowReply;
use crate::analysis::trace_viewer::lod::{LodQuery, LodReply};
use crate::analysis::trace_viewer::store::TraceOutline as TraceOutlineView;
use crate::analysis::trace_viewer::summary::NameSummary;
use crate::analysis::xla_ops_cpu::XlaOpsCpu as XlaOpsCpuTable;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// A request that names its reply: `Reply` is what the asking view draws, read out of the reply's
/// body (and the bytes that came beside it, for the Trace Viewer's spans).
pub trait Ask: Into<RequestBody> + Clone + PartialEq + Send + Sync + 'static {
    type Reply: Clone + Send + Sync + 'static;
    /// The reply's payload; `None` when `body` is another request's reply (a bug the types leave to
    /// the worker's side alone).
    fn reply(body: ResponseBody, beside: Option<&[u8]>) -> Option<Self::Reply>;
}

/// Pairs request type `$req` (sent as `RequestBody::$variant`) with reply variant `ResponseBody::$resp`,
/// whose field `$field` the view reads as `$reply` through `$read`.
macro_rules! ask {
    ($req:ident as $variant:ident($wrap:expr) => $resp:ident { $field:ident } -> $reply:ty = $read:expr) => {
        impl From<$req> for RequestBody {
            fn from(r: $req) -> RequestBody {
                RequestBody::$variant($wrap(r))
            }
        }
        impl Ask for $req {
            type Reply = $reply;
            fn reply(body: ResponseBody, _beside: Option<&[u8]>) -> Option<$reply> {
                match body {
                    ResponseBody::$resp { $field, .. } => Some($read($field)),
                    _ => None,
                }
            }
        }
    };
    ($req:ident => $resp:ident { $field:ident } -> $reply:ty = $read:expr) => {
        ask!($req as $req(std::convert::identity) => $resp { $field } -> $reply = $read);
    };
}

/// Which files a device memory request reads: one profile, two as a diff, or several as a series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "snake_case")]
pub enum DeviceMemoryFiles {
    /// One JAX device memory profile: live bytes by function and by stack.
    Profile { file_id: u32 },
    /// `target` minus `base`, stack by stack (`pprof --diff_base`).
    Diff { base_file_id: u32, target_file_id: u32 },
    /// Each stack through the snapshots `file_ids`, with ranked leak suspects.
    Series { file_ids: Vec<u32> },
}

/// The device memory page: one profile, a diff or a series, as `files` says, under `query`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceMemory {
    pub files: DeviceMemoryFiles,
    pub query: DeviceMemoryQuery,
}

/// A device memory answer, of the mode asked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "snake_case")]
pub enum DeviceMemoryAnswer {
    Profile(Box<DeviceMemoryProfileView>),
    Diff(Box<DeviceMemoryDiffView>),
    Series(Box<DeviceMemorySeriesView>),
}
ask!(DeviceMemory => DeviceMemory { answer } -> DeviceMemoryAnswer = std::convert::identity);

impl DeviceMemoryAnswer {
    /// The labels of the files answered about (whatever the query filtered), for the page's filters.
    pub fn labels(&self) -> &Labels {
        match self {
            DeviceMemoryAnswer::Profile(v) => &v.labels,
            DeviceMemoryAnswer::Diff(v) => &v.labels,
            DeviceMemoryAnswer::Series(v) => &v.labels,
        }
    }
}

/// The Memory Profile of an opened trace: `memory_id`, or the first one when `None`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryProfile {
    pub file_id: u32,
    pub memory_id: Option<String>,
}
ask!(MemoryProfile => MemoryProfile { view } -> Arc<MemoryProfileView> = Arc::from);

/// Zoom: the full-resolution timeline of one memory ID between two times, at most `max_points`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryTimeline {
    pub file_id: u32,
    pub memory_id: String,
    pub start_ps: i64,
    pub end_ps: i64,
    pub max_points: usize,
}
ask!(MemoryTimeline => MemoryTimeline { window } -> Arc<TimelineWindow> = Arc::from);

/// The Memory Viewer page: the modules of the open files `file_ids` (its module selector) and module
/// `module` of file `file_id` (the file's largest when `None` or not one of its modules);
/// `memory_space` `None` picks device memory where present.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryViewer {
    pub file_ids: Vec<u32>,
    pub file_id: u32,
    pub module: Option<String>,
    pub memory_space: Option<i64>,
}

/// The Memory Viewer page as sent: the module selector's entries, and the module shown (`None` when
/// the file has none) with its Memory Viewer in columns or why it has none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryViewerPage {
    pub modules: Vec<ModuleEntry>,
    pub file_id: u32,
    pub module: Option<String>,
    pub viewer: Option<Result<ViewerReply, EngineError>>,
}
ask!(MemoryViewer => MemoryViewer { page } -> Arc<MemoryViewerPage> = Arc::from);

/// The Graph Viewer: the graph of `module` of file `file_id` (the file's largest when `None`) around
/// instruction or computation `node` (the entry root when `None`), `width` hops, laid out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphViewer {
    pub file_id: u32,
    pub module: Option<String>,
    pub node: Option<String>,
    pub width: u32,
}
ask!(GraphViewer => GraphViewer { view } -> Arc<GraphView> = Arc::from);

/// The Graph Viewer's overview of `module` of file `file_id` (the name a `GraphViewer` reply chose):
/// the whole module with each fusion one node, laid out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphOverview {
    pub file_id: u32,
    pub module: String,
}
ask!(GraphOverview => GraphOverview { overview } -> Arc<GraphOverviewView> = Arc::from);

/// The Framework Op Stats page of `scope` (a file, or a run's hosts combined: the host selector's
/// "all hosts"; over a step's window or the whole trace): XProf's table with the `IDLE` rows when
/// `include_idle`, else without them, and the self time by op type per side.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FrameworkOpStats {
    #[serde(flatten)]
    pub scope: Scope,
    pub include_idle: bool,
}
ask!(FrameworkOpStats => FrameworkOpStats { view } -> Arc<FrameworkOpStatsView> = Arc::from);

/// The HLO Op Stats page of `scope`: XProf's table as columns, and its summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HloStats {
    #[serde(flatten)]
    pub scope: Scope,
}
ask!(HloStats => HloStats { view } -> Arc<HloStatsView> = Arc::from);

/// The Kernel Stats page of `scope`: XProf's table as columns, and its summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelStats {
    #[serde(flatten)]
    pub scope: Scope,
}
ask!(KernelStats => KernelStats { view } -> Arc<KernelStatsView> = Arc::from);

/// The Roofline page of `scope`: the device's roofs and the records, with the infeed and outfeed ops
/// when `include_infeed_outfeed`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RooflineModel {
    #[serde(flatten)]
    pub scope: Scope,
    pub include_infeed_outfeed: bool,
}
ask!(RooflineModel => RooflineModel { view } -> Arc<RooflineModelView> = Arc::from);

/// The Op Profile page of `scope`: the tree grouped by `grouping`, with the idle node when
/// `include_idle`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpProfile {
    #[serde(flatten)]
    pub scope: Scope,
    pub grouping: OpProfileGrouping,
    pub include_idle: bool,
}
ask!(OpProfile => OpProfile { view } -> Arc<OpProfileView> = Arc::from);

/// The Input Pipeline page of the run `file_ids` (one file, or its hosts combined): the verdict, the
/// steps and their statistics, the host's input time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InputPipeline {
    pub file_ids: Vec<u32>,
}
ask!(InputPipeline => InputPipeline { view } -> Arc<InputPipelineView> = Arc::from);

/// The Overview page (XProf's `overview_page`) of the run `file_ids` (one file, or its hosts
/// combined): summary, steps, top ops, run environment, tips.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OverviewPage {
    pub file_ids: Vec<u32>,
}
ask!(OverviewPage => OverviewPage { view } -> Arc<OverviewPageView> = Arc::from);

/// Tidemark's "XLA ops on CPU" table of a trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct XlaOpsCpu {
    pub file_id: u32,
}
ask!(XlaOpsCpu => XlaOpsCpu { table } -> Arc<XlaOpsCpuTable> = Arc::from);

/// Memory across the hosts `file_ids` of a run: every allocator's peak, capacity and timeline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryAcrossHosts {
    pub file_ids: Vec<u32>,
}
ask!(MemoryAcrossHosts => MemoryAcrossHosts { view } -> Arc<MemoryAcrossHostsView> = Arc::from);

/// The run `current` (its hosts' file ids) against the run `baseline`: op times and allocator peaks
/// with their changes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunComparison {
    pub current: Vec<u32>,
    pub baseline: Vec<u32>,
}
ask!(RunComparison => RunComparison { comparison } -> Arc<RunComparisonView> = Arc::from);

/// Which files' bytes the engine holds, and the memory it has (see [`super::super::residency`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Residency {}
ask!(Residency => Residency { report } -> Arc<ResidencyReport> = Arc::from);

/// A Trace Viewer request: every one is about one trace, and travels as [`RequestBody::Trace`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "of", rename_all = "snake_case")]
pub enum Trace {
    Outline(TraceOutline),
    Spans(TraceSpans),
    EventDetails(TraceEventDetails),
    Search(TraceSearch),
    SearchMatch(TraceSearchMatch),
    RangeSummary(TraceRangeSummary),
    Export(TraceExport),
    Flows(TraceFlows),
    CounterTracks(TraceCounterTracks),
    Counters(TraceCounters),
}

/// The Trace Viewer's processes and threads (XProf's names and order), names and time span.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceOutline {
    pub file_id: u32,
}
ask!(TraceOutline as Trace(Trace::Outline) => TraceOutline { outline } -> Arc<TraceOutlineView> = Arc::from);

/// The spans to draw for a time window `width_px` pixels wide (level of detail), in columns that
/// travel beside the reply as one transferred `ArrayBuffer`, read without parsing JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceSpans {
    pub file_id: u32,
    pub query: LodQuery,
}

impl From<TraceSpans> for RequestBody {
    fn from(r: TraceSpans) -> RequestBody {
        RequestBody::Trace(Trace::Spans(r))
    }
}

impl Ask for TraceSpans {
    type Reply = Arc<LodReply>;
    fn reply(body: ResponseBody, beside: Option<&[u8]>) -> Option<Arc<LodReply>> {
        match body {
            ResponseBody::TraceSpans { .. } => LodReply::from_bytes(beside?).ok().map(Arc::new),
            _ => None,
        }
    }
}

/// One event in full (index from a span's `event` or a search match); `None` when there is no such
/// event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceEventDetails {
    pub file_id: u32,
    pub event: u32,
}
ask!(TraceEventDetails as Trace(Trace::EventDetails) => TraceEventDetails { details } -> Option<Arc<EventDetails>> = |d: Option<Box<EventDetails>>| d.map(Arc::from));

/// How many events' names contain `needle`, ignoring case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceSearch {
    pub file_id: u32,
    pub needle: String,
}
ask!(TraceSearch as Trace(Trace::Search) => TraceSearch { count } -> usize = std::convert::identity);

/// Match `index` of a search for `needle` (the engine keeps the last search's matches): its event and
/// start, `None` past the last match.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceSearchMatch {
    pub file_id: u32,
    pub needle: String,
    pub index: u32,
}
ask!(TraceSearchMatch as Trace(Trace::SearchMatch) => TraceSearchMatch { found } -> Option<(u32, i64)> = std::convert::identity);

/// The events starting in `[from_ps, to_ps)` on `threads` (all when `None`), by name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceRangeSummary {
    pub file_id: u32,
    pub from_ps: i64,
    pub to_ps: i64,
    pub threads: Option<Vec<u32>>,
}
ask!(TraceRangeSummary as Trace(Trace::RangeSummary) => TraceRangeSummary { rows } -> Arc<Vec<NameSummary>> = Arc::new);

/// XProf's trace_viewer JSON of the events overlapping `[start_ps, end_ps]`; the JSON travels beside
/// the reply as a transferred `ArrayBuffer` (the page saves it as a file, never parses it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceExport {
    pub file_id: u32,
    pub start_ps: i64,
    pub end_ps: i64,
}

impl From<TraceExport> for RequestBody {
    fn from(r: TraceExport) -> RequestBody {
        RequestBody::Trace(Trace::Export(r))
    }
}

/// The Trace Viewer's flow arrows: those of one event, or those meeting a window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceFlows {
    pub file_id: u32,
    pub query: FlowQuery,
}
ask!(TraceFlows as Trace(Trace::Flows) => TraceFlows { flows } -> Arc<FlowReply> = Arc::from);

/// The memory counter tracks (one per allocator).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceCounterTracks {
    pub file_id: u32,
}
ask!(TraceCounterTracks as Trace(Trace::CounterTracks) => TraceCounterTracks { tracks } -> Arc<CounterTracks> = Arc::from);

/// Allocators' heap and stack steps over a window, merged per pixel: one window per query.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceCounters {
    pub file_id: u32,
    pub queries: Vec<CounterQuery>,
}
ask!(TraceCounters as Trace(Trace::Counters) => TraceCounters { windows } -> Arc<Vec<CounterWindow>> = Arc::new);

/// The PyTorch Profiler's Overview of a Kineto trace (payload `overview`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TorchOverview {
    pub file_id: u32,
}
ask!(TorchOverview => TorchOverview { page } -> Arc<crate::engine::torch_page::OverviewPage> = Arc::from);

/// Its Operator view (payloads `operation`, `operation_table`), grouped by name or by name and input
/// shape (the plugin's `group_by`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TorchOperators {
    pub file_id: u32,
    #[serde(default)]
    pub group_by: crate::analysis::torch::operators::OpGrouping,
}
ask!(TorchOperators => TorchOperators { page } -> Arc<crate::engine::torch_page::OperatorsPage> = Arc::from);

/// Its Kernel view (`kernel`, `kernel_table`, `kernel_op_table`, `kernel_tc_pie`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TorchKernels {
    pub file_id: u32,
}
ask!(TorchKernels => TorchKernels { page } -> Arc<crate::engine::torch_page::KernelsPage> = Arc::from);

/// Its Memory view (`memory`, `memory_curve`, `memory_events`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TorchMemory {
    pub file_id: u32,
}
impl From<TorchMemory> for RequestBody {
    fn from(r: TorchMemory) -> RequestBody {
        RequestBody::TorchMemory(r)
    }
}

impl Ask for TorchMemory {
    type Reply = Arc<crate::engine::torch_page::MemoryPage>;
    /// The page, its curves and events put back from the bytes beside it
    /// ([`crate::engine::torch_page::MemoryPage::take_packed`]).
    fn reply(body: ResponseBody, beside: Option<&[u8]>) -> Option<Self::Reply> {
        match body {
            ResponseBody::TorchMemory { mut page } => {
                page.put_packed(beside?).ok()?;
                Some(Arc::from(page))
            }
            _ => None,
        }
    }
}

/// A PyTorch CUDA memory snapshot's report (every device: events, active-memory timeline and peak,
/// what was live there, segments, lost history, largest allocations, leak suspects, OOMs) and, with
/// `state_at`, the allocator's state after that event of that device.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TorchSnapshot {
    pub file_id: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state_at: Option<TorchSnapshotEvent>,
}

/// An event of a CUDA memory snapshot's device trace (-1: before the first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TorchSnapshotEvent {
    pub device: usize,
    pub event_index: i64,
}

impl From<TorchSnapshot> for RequestBody {
    fn from(r: TorchSnapshot) -> RequestBody {
        RequestBody::TorchSnapshot(r)
    }
}

impl Ask for TorchSnapshot {
    /// The report, and the allocator's state when one was asked for.
    type Reply = (Arc<SnapshotReport>, Option<Arc<AllocatorState>>);
    fn reply(body: ResponseBody, _beside: Option<&[u8]>) -> Option<Self::Reply> {
        match body {
            ResponseBody::TorchSnapshot { report, state } => Some((Arc::from(report), state.map(Arc::from))),
            _ => None,
        }
    }
}

/// The allocator's state on `device` of a CUDA memory snapshot after event `event_index` (-1: before
/// the first) alone, for the page's event picker: the report it already has is not sent again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TorchSnapshotState {
    pub file_id: u32,
    pub device: usize,
    pub event_index: i64,
}
ask!(TorchSnapshotState => TorchSnapshotState { state } -> Arc<AllocatorState> = Arc::from);

/// The active-memory timeline of a CUDA memory snapshot's device, as bands (one per allocation) in
/// `window` (axis units, both ends; `None`: the whole trace), cut into at most `columns` columns;
/// allocations under `1 / rows` of the window's highest stack are summed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TorchSnapshotTimeline {
    pub file_id: u32,
    pub device: usize,
    pub axis: crate::analysis::torch_snapshot::Axis,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<(i64, i64)>,
    pub columns: usize,
    pub rows: u32,
}
ask!(TorchSnapshotTimeline => TorchSnapshotTimeline { bands } -> Arc<crate::analysis::torch_snapshot::Bands> = Arc::from);

/// The `[memory]` curve of Kineto trace `trace_file_id`, recorded by the same run as the snapshot
/// `file_id`, on `device` and the snapshot's clock, each point with its matching snapshot event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TorchSnapshotTraceMemory {
    pub file_id: u32,
    pub trace_file_id: u32,
    pub device: usize,
}
ask!(TorchSnapshotTraceMemory => TorchSnapshotTraceMemory { memory } -> Arc<crate::analysis::torch_snapshot::TraceMemory> = Arc::from);

/// How each Kineto trace of `trace_file_ids` fits the snapshot `file_id`'s `device`, in that order:
/// whether the snapshot's run recorded it (some of its memory events are the snapshot's), and if
/// not why. The snapshot view offers only those that belong.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TorchSnapshotTraceFits {
    pub file_id: u32,
    pub device: usize,
    pub trace_file_ids: Vec<u32>,
}
ask!(TorchSnapshotTraceFits => TorchSnapshotTraceFits { fits } -> Arc<Vec<crate::analysis::torch_snapshot::TraceFit>> = Arc::new);

/// A PyTorch run: its ranks' Kineto traces (one file each), every rank's step split, operators and
/// kernels, and the run combined.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TorchRun {
    pub file_ids: Vec<u32>,
}
ask!(TorchRun => TorchRun { run } -> Arc<crate::analysis::torch::ranks::TorchRun> = Arc::from);
