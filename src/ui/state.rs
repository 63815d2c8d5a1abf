//! The page's state, shared through context: loaded files, the selected file and tool, display
//! preferences. The selected file and tool live in the URL hash so a reload or a shared link restores
//! the view. Engine results are not kept here: views ask for them through [`crate::ui::engine`], and
//! the worker keeps what is costly to compute.

use crate::engine::FileDetails;
use crate::units::{ByteUnit, TimeUnit};
use leptos::prelude::*;
use std::sync::Arc;

pub use crate::engine::tool::{Tool, ToolGroup};

/// Where one file is in its journey from disk to overview.
#[derive(Debug, Clone, PartialEq)]
pub enum FileStatus {
    /// Reading from disk (`read` of `total` bytes), then decoding in the worker (`decoded` of `total`).
    Loading {
        read: u64,
        decoded: u64,
        total: u64,
    },
    Ready {
        file_id: u32,
        details: Arc<FileDetails>,
    },
    Failed {
        error: crate::engine::EngineError,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct LoadedFile {
    /// Page-local key, stable for the life of the page.
    pub key: u64,
    /// The path relative to what was opened (`run1/host.xplane.pb` in a dropped folder, the file
    /// name for a dropped file): what identifies the file, in the page and in the URL.
    pub path: String,
    pub status: FileStatus,
}

impl LoadedFile {
    /// How the file is labelled in lists: its base name, or, where another loaded file has the same
    /// base name, the shortest end of its path that no other loaded file shares
    /// (`run1/host.xplane.pb`).
    pub fn label(&self, all: &[LoadedFile]) -> String {
        let parts: Vec<&str> = self.path.split('/').collect();
        let others: Vec<&LoadedFile> = all.iter().filter(|o| o.key != self.key).collect();
        (1..=parts.len())
            .map(|k| parts[parts.len() - k..].join("/"))
            .find(|end| !others.iter().any(|o| o.path == *end || o.path.ends_with(&format!("/{end}"))))
            .unwrap_or_else(|| self.path.clone())
    }
}

/// What the main area shows for the selected file. It changes only when the selected file's state
/// changes kind (loading → ready), never with another file's progress, so a tool view is not rebuilt
/// (and does not ask the engine again) while other files load.
#[derive(Debug, Clone, PartialEq)]
pub enum Shown {
    /// No file is loaded: the landing page.
    Nothing,
    Ready {
        file_id: u32,
        details: Arc<FileDetails>,
    },
    Loading {
        path: String,
    },
    Failed,
    /// The selected path (from a link) is not loaded; `None`: nothing is selected.
    Missing {
        path: Option<String>,
    },
}

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
    /// An op to find in the op tools, set by the Graph tool's links back from a node: the next op
    /// table (HLO Op Stats, XLA ops, Roofline) or Op Profile drawn takes it as its filter, once.
    pub op_search: RwSignal<Option<String>>,
    /// Whether the first file to open picks the tool ([`crate::engine::first_screen::landing`]):
    /// until then no tool was chosen, by a link or shared URL that names one, or by the user.
    pub landing_pending: RwSignal<bool>,
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
            op_search: RwSignal::new(None),
            landing_pending: RwSignal::new(true),
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

    pub fn update_file(&self, key: u64, status: FileStatus) {
        self.files.update(|fs| {
            if let Some(f) = fs.iter_mut().find(|f| f.key == key) {
                f.status = status;
            }
        });
    }

    /// What the main area shows (see [`Shown`]); read it through a `Memo` so that it only notifies
    /// when it changes.
    pub fn shown(&self) -> Shown {
        let selected = self.selected.get();
        self.files.with(|fs| {
            if fs.is_empty() {
                return Shown::Nothing;
            }
            match selected.as_ref().and_then(|p| fs.iter().find(|f| &f.path == p)).map(|f| &f.status) {
                Some(FileStatus::Ready { file_id, details }) => Shown::Ready { file_id: *file_id, details: details.clone() },
                Some(FileStatus::Loading { .. }) => Shown::Loading { path: selected.unwrap_or_default() },
                Some(FileStatus::Failed { .. }) => Shown::Failed,
                None => Shown::Missing { path: selected },
            }
        })
    }

    /// The runs of the loaded files (the folders they lie in, [`crate::decode::log_dir::RunHost`]) as
    /// (run folder, run name), newest first: by name, which TensorBoard makes a timestamp, descending.
    pub fn runs(&self) -> Vec<(String, String)> {
        let mut runs: Vec<(String, String)> = self.files.with(|fs| {
            fs.iter()
                .map(|f| {
                    let rh = crate::decode::log_dir::run_host(&f.path);
                    (rh.run_dir, rh.run)
                })
                .collect()
        });
        runs.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| b.0.cmp(&a.0)));
        runs.dedup();
        runs
    }

    /// The files of run folder `run_dir` as (path, host), in path order (the order XProf combines
    /// hosts in).
    pub fn run_files(&self, run_dir: &str) -> Vec<(String, String)> {
        let mut files: Vec<(String, String)> = self.files.with(|fs| {
            fs.iter()
                .filter_map(|f| {
                    let rh = crate::decode::log_dir::run_host(&f.path);
                    (rh.run_dir == run_dir).then(|| (f.path.clone(), rh.host))
                })
                .collect()
        });
        files.sort();
        files
    }

    /// The engine ids of the ready files of the selected file's run, in path order: what "all
    /// hosts" combines.
    pub fn selected_run_ids(&self) -> Vec<u32> {
        self.run_ids(&self.selected_run_dir())
    }

    /// The run folder of the selected file.
    pub fn selected_run_dir(&self) -> String {
        self.selected.with(|p| p.as_deref().map(|p| crate::decode::log_dir::run_host(p).run_dir)).unwrap_or_default()
    }

    /// The engine ids of the ready files of run folder `run_dir`, in path order.
    pub fn run_ids(&self, run_dir: &str) -> Vec<u32> {
        let paths = self.run_files(run_dir);
        let ready = self.ready_files();
        paths.iter().filter_map(|(p, _)| ready.iter().find(|(_, rp)| rp == p).map(|(id, _)| *id)).collect()
    }

    /// With "all hosts" chosen and the selected file's run holding several ready hosts, their ids
    /// ([`AppState::selected_run_ids`]): what the op tools combine; else `None` (the selected file).
    pub fn all_hosts_ids(&self) -> Option<Vec<u32>> {
        if !self.all_hosts.get() {
            return None;
        }
        let ids = self.selected_run_ids();
        (ids.len() > 1).then_some(ids)
    }

    /// What the op tools of file `file_id` read: the run's hosts combined as XProf combines them
    /// ([`AppState::all_hosts_ids`]), else the file alone.
    pub fn op_file_ids(&self, file_id: u32) -> Vec<u32> {
        self.all_hosts_ids().unwrap_or_else(|| vec![file_id])
    }

    /// The loaded files' engine ids and paths, in list order.
    pub fn ready_files(&self) -> Vec<(u32, String)> {
        self.files.with(|fs| {
            fs.iter()
                .filter_map(|f| match f.status {
                    FileStatus::Ready { file_id, .. } => Some((file_id, f.path.clone())),
                    _ => None,
                })
                .collect()
        })
    }
}

impl Default for AppState {
    fn default() -> Self {
        Self::new()
    }
}

/// The view encoded in the URL hash:
/// `#tool=memory-viewer&file=<name>[&module=<name>][&space=<n>][&memory-id=<id>][&row=<n>]`
/// `[&window=<start_ps>_<end_ps>][&range=<from_ps>_<to_ps>][&step=<group id>&step-span=<begin_ps>_<end_ps>]`
/// `[&op=<name>][&search=<text>][&event=<n>][&hosts=all][&baseline=<run folder>][&ops=step][&node=<name>][&width=<n>][&demo]` (`hosts=all`: the host selector's
/// "all hosts", the run being the selected file's; `ops=step`: the op tables limited to the selected step).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HashView {
    pub tool: Option<Tool>,
    pub file: Option<String>,
    pub demo: bool,
    pub module: Option<String>,
    pub memory_space: Option<i64>,
    pub memory_id: Option<String>,
    pub row: Option<usize>,
    pub trace_window: Option<(i64, i64)>,
    pub trace_range: Option<(i64, i64)>,
    pub step: Option<StepPick>,
    pub highlight_op: Option<String>,
    pub trace_search: Option<String>,
    pub all_hosts: bool,
    pub trace_event: Option<u32>,
    pub baseline_run: Option<String>,
    pub step_ops: bool,
    /// The Graph tool's centre and width.
    pub graph_node: Option<String>,
    pub graph_width: Option<u32>,
}

/// `<a>_<b>`, two times in ps, `a < b`.
fn parse_span(s: &str) -> Option<(i64, i64)> {
    let (a, b) = s.split_once('_')?;
    let (a, b) = (a.parse().ok()?, b.parse().ok()?);
    (a < b).then_some((a, b))
}

impl HashView {
    pub fn parse(hash: &str) -> Self {
        let mut v = HashView::default();
        let (mut step, mut step_span) = (None, None);
        for part in hash.trim_start_matches('#').split('&').filter(|p| !p.is_empty()) {
            let (k, val) = part.split_once('=').unwrap_or((part, ""));
            let val = js_sys::decode_uri_component(val).ok().and_then(|s| s.as_string()).unwrap_or_default();
            match k {
                "tool" => v.tool = Tool::from_slug(&val),
                "file" if !val.is_empty() => v.file = Some(val),
                "demo" => v.demo = true,
                "module" if !val.is_empty() => v.module = Some(val),
                "space" => v.memory_space = val.parse().ok(),
                "memory-id" if !val.is_empty() => v.memory_id = Some(val),
                "row" => v.row = val.parse().ok(),
                "window" => v.trace_window = parse_span(&val),
                "range" => v.trace_range = parse_span(&val),
                "step" => step = val.parse::<i64>().ok(),
                "step-span" => step_span = parse_span(&val),
                "op" if !val.is_empty() => v.highlight_op = Some(val),
                "search" if !val.is_empty() => v.trace_search = Some(val),
                "hosts" => v.all_hosts = val == "all",
                "event" => v.trace_event = val.parse().ok(),
                "baseline" => v.baseline_run = Some(val),
                "ops" => v.step_ops = val == "step",
                "node" if !val.is_empty() => v.graph_node = Some(val),
                "width" => v.graph_width = val.parse().ok(),
                _ => {}
            }
        }
        v.step = step.zip(step_span).map(|(group_id, (begin_ps, end_ps))| StepPick { group_id, begin_ps, end_ps });
        v
    }

    pub fn to_hash(&self) -> String {
        let mut parts = Vec::new();
        if self.demo {
            parts.push("demo".to_string());
        }
        if let Some(t) = self.tool {
            parts.push(format!("tool={}", t.slug()));
        }
        if let Some(f) = &self.file {
            parts.push(format!("file={}", String::from(js_sys::encode_uri_component(f))));
        }
        if let Some(m) = &self.module {
            parts.push(format!("module={}", String::from(js_sys::encode_uri_component(m))));
        }
        if let Some(n) = self.memory_space {
            parts.push(format!("space={n}"));
        }
        if let Some(m) = &self.memory_id {
            parts.push(format!("memory-id={}", String::from(js_sys::encode_uri_component(m))));
        }
        if let Some(r) = self.row {
            parts.push(format!("row={r}"));
        }
        if let Some((a, b)) = self.trace_window {
            parts.push(format!("window={a}_{b}"));
        }
        if let Some((a, b)) = self.trace_range {
            parts.push(format!("range={a}_{b}"));
        }
        if let Some(s) = self.step {
            parts.push(format!("step={}&step-span={}_{}", s.group_id, s.begin_ps, s.end_ps));
        }
        if let Some(op) = &self.highlight_op {
            parts.push(format!("op={}", String::from(js_sys::encode_uri_component(op))));
        }
        if let Some(q) = &self.trace_search {
            parts.push(format!("search={}", String::from(js_sys::encode_uri_component(q))));
        }
        if self.all_hosts {
            parts.push("hosts=all".to_string());
        }
        if let Some(e) = self.trace_event {
            parts.push(format!("event={e}"));
        }
        if let Some(b) = &self.baseline_run {
            parts.push(format!("baseline={}", String::from(js_sys::encode_uri_component(b))));
        }
        if self.step_ops {
            parts.push("ops=step".to_string());
        }
        if let Some(n) = &self.graph_node {
            parts.push(format!("node={}", String::from(js_sys::encode_uri_component(n))));
        }
        if let Some(w) = self.graph_width {
            parts.push(format!("width={w}"));
        }
        format!("#{}", parts.join("&"))
    }
}
