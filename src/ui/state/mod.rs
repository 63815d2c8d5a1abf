//! The page's state, shared through context: loaded files, the selected file and tool, display
//! preferences. The selected file and tool live in the URL hash so a reload or a shared link restores
//! the view. Engine results are not kept here: views ask for them through [`crate::ui::engine`], and
//! the worker keeps what is costly to compute.
//!
//! One module per job: [`files`] (the loaded files and what the main area shows), [`runs`] (the
//! runs and hosts the files make up) and [`url`] (the view in the URL hash); this one holds the
//! signals themselves and the display preferences.

mod files;
mod runs;
mod url;

use crate::units::{ByteUnit, TimeUnit};
use leptos::prelude::*;

pub use crate::engine::tool::{Tool, ToolGroup};
pub use files::{FileStatus, LoadedFile, Shown};
pub use url::HashView;

/// The colour scheme: the canvases read their colours from CSS, so they redraw when it changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Theme {
    Light,
    Dark,
}

/// The app's state; `Copy` because it only holds signal handles.
#[derive(Clone, Copy)]
pub struct AppState {
    pub files: RwSignal<Vec<LoadedFile>>,
    /// Path of the selected file.
    pub selected: RwSignal<Option<String>>,
    pub tool: RwSignal<Tool>,
    pub unit: RwSignal<ByteUnit>,
    /// The unit of time figures (the op tables).
    pub time_unit: RwSignal<TimeUnit>,
    pub theme: RwSignal<Theme>,
    /// Whether the bundled demo is what is loaded (kept in the URL so a shared link opens it).
    pub demo: RwSignal<bool>,
    /// Page-level problems not tied to a file (worker crashed, demo missing, ...).
    pub alerts: RwSignal<Vec<String>>,
    /// The Memory Viewer's module of the selected file (XProf's name), and its memory space; `None`:
    /// the file's largest module, in device memory.
    pub module: RwSignal<Option<String>>,
    pub memory_space: RwSignal<Option<i64>>,
    /// The Memory Profile's memory ID (`None`: the file's first) and selected breakdown row.
    pub memory_id: RwSignal<Option<String>>,
    pub breakdown_row: RwSignal<Option<usize>>,
    /// The Trace Viewer's time window and range selection, in ps (`None`: the whole trace, nothing
    /// selected).
    pub trace_window: RwSignal<Option<(i64, i64)>>,
    pub trace_range: RwSignal<Option<(i64, i64)>>,
    /// The host selector's "all hosts": the op tools, which combine a run's hosts, show the selected
    /// file's run combined ([`AppState::all_hosts_ids`]); the others show the selected file.
    pub all_hosts: RwSignal<bool>,
    /// The step picked in the Overview's step-time graph: every tool that places things in time
    /// follows it (the Memory Profile zooms to it, the Trace Viewer opens on it). Escape clears it.
    pub step: RwSignal<Option<StepPick>>,
    /// The op whose buffers the Memory Viewer highlights (the buffers that instruction defines), set
    /// by an op row's "show buffers" link.
    pub highlight_op: RwSignal<Option<String>>,
    /// The Trace Viewer's search, set by an op row's "show occurrences" link (the first match framed).
    pub trace_search: RwSignal<Option<String>>,
    /// The Trace Viewer's selected event (an index into the file's event store).
    pub trace_event: RwSignal<Option<u32>>,
    /// The baseline run's folder ([`AppState::runs`]) the Run comparison compares the selected run
    /// with; `None`: no baseline.
    pub baseline_run: RwSignal<Option<String>>,
    /// The op tables limited to the selected step ("this step only"; hash `ops=step`).
    pub step_ops: RwSignal<bool>,
    /// The Graph tool's centre (an instruction or computation of `module`; `None`: the entry root)
    /// and its width in hops.
    pub graph_node: RwSignal<Option<String>>,
    pub graph_width: RwSignal<u32>,
    /// What the Graph tool's node fill shows (hash `color=time|bytes`; XLA's categories when absent).
    pub graph_shade: RwSignal<GraphShade>,
    /// The CUDA memory snapshot's device (0 unless the picker chose another) and the event whose
    /// allocator state it shows (hash `device=`, `at=`; `None`: none chosen).
    pub snapshot_device: RwSignal<usize>,
    pub snapshot_event: RwSignal<Option<i64>>,
    /// The PyTorch Operator view's grouping: by operator and input shape, or by operator alone
    /// (hash `group=input-shape`).
    pub torch_ops_by_shape: RwSignal<bool>,
    /// An op to find in the op tools, set by the Graph tool's links back from a node: the next op
    /// table (HLO Op Stats, XLA ops, Roofline) or Op Profile drawn takes it as its filter, once.
    pub op_search: RwSignal<Option<String>>,
    /// Whether the first file to open picks the tool ([`crate::engine::first_screen::landing`]):
    /// until then no tool was chosen, by a link or shared URL that names one, or by the user.
    pub landing_pending: RwSignal<bool>,
    /// The file a URL hash just selected, with its per-file view (graph node, trace window, memory
    /// ID...) set beside it: the effect that forgets a file's view when another file is selected
    /// keeps that one (it runs after the hash was applied).
    pub hash_selection: StoredValue<Option<String>>,
}

/// What the Graph tool's node fill shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GraphShade {
    /// XLA's colours, by opcode category.
    #[default]
    Category,
    /// The op's share of the time (its op table row's self-time fraction).
    Time,
    /// The bytes of the buffers the instruction defines.
    Bytes,
}

impl GraphShade {
    /// Its name in the URL and in the canvas's `data-shade`.
    pub fn slug(self) -> &'static str {
        match self {
            GraphShade::Category => "category",
            GraphShade::Time => "time",
            GraphShade::Bytes => "bytes",
        }
    }

    pub fn from_slug(s: &str) -> Option<Self> {
        [GraphShade::Category, GraphShade::Time, GraphShade::Bytes].into_iter().find(|g| g.slug() == s)
    }
}

/// A selected step: its group id (what the Memory Profile calls its step id) and its span in the
/// trace's time, ps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepPick {
    pub group_id: i64,
    pub begin_ps: i64,
    pub end_ps: i64,
}

impl AppState {
    pub fn new() -> Self {
        AppState {
            files: RwSignal::new(Vec::new()),
            selected: RwSignal::new(None),
            tool: RwSignal::new(Tool::FileDetails),
            unit: RwSignal::new(ByteUnit::Auto),
            time_unit: RwSignal::new(TimeUnit::Auto),
            theme: RwSignal::new(Theme::Light),
            demo: RwSignal::new(false),
            alerts: RwSignal::new(Vec::new()),
            module: RwSignal::new(None),
            memory_space: RwSignal::new(None),
            memory_id: RwSignal::new(None),
            breakdown_row: RwSignal::new(None),
            trace_window: RwSignal::new(None),
            trace_range: RwSignal::new(None),
            all_hosts: RwSignal::new(false),
            step: RwSignal::new(None),
            highlight_op: RwSignal::new(None),
            trace_search: RwSignal::new(None),
            trace_event: RwSignal::new(None),
            baseline_run: RwSignal::new(None),
            step_ops: RwSignal::new(false),
            graph_node: RwSignal::new(None),
            graph_width: RwSignal::new(crate::analysis::graph_viewer::DEFAULT_WIDTH),
            graph_shade: RwSignal::new(GraphShade::Category),
            snapshot_device: RwSignal::new(0),
            snapshot_event: RwSignal::new(None),
            torch_ops_by_shape: RwSignal::new(false),
            op_search: RwSignal::new(None),
            landing_pending: RwSignal::new(true),
            hash_selection: StoredValue::new(None),
        }
    }

    /// The op a link asked the op tool being drawn to find ([`AppState::op_search`]), taken: the
    /// filter it starts with.
    pub fn take_op_search(&self) -> String {
        self.op_search.try_update(Option::take).flatten().unwrap_or_default()
    }

    /// Shows `tool`, chosen by the user or a link: the first screen no longer picks one.
    pub fn choose_tool(&self, tool: Tool) {
        self.landing_pending.set(false);
        self.tool.set(tool);
    }
}

impl Default for AppState {
    fn default() -> Self {
        Self::new()
    }
}
