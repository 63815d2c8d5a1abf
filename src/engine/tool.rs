//! The tools, by one name each: the page's navigation and URL, the first screen, the CLI's reasons
//! and the engine's requests all say [`Tool`]. Its [`Tool::slug`] is the CLI subcommand's name and
//! the URL's `tool=`; the names links carried before each tool was named after XProf's are still
//! read ([`Tool::from_slug`]), so an old shared link opens what it opened then.

use crate::decode::Format;

/// Every tool: the page draws each, the CLI has a subcommand of each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    /// XProf's overview page.
    OverviewPage,
    InputPipeline,
    OpProfile,
    FrameworkOpStats,
    HloStats,
    KernelStats,
    RooflineModel,
    /// Tidemark's own: the XLA ops a CPU trace's host threads ran.
    XlaOpsCpu,
    /// An HLO module's graph around one instruction (XProf's graph viewer).
    GraphViewer,
    TraceViewer,
    /// What a file is: format, planes, allocators, HLO modules (the file inspector).
    FileDetails,
    MemoryProfile,
    MemoryViewer,
    DeviceMemory,
    /// Every allocator of every host of the run, closest to its capacity first.
    MemoryAcrossHosts,
    /// The selected run against the baseline run: op times and allocator peaks with their changes.
    RunComparison,
    /// A PyTorch CUDA memory snapshot: its timeline, allocator state, segments and leak suspects.
    TorchSnapshot,
    /// The PyTorch Profiler's Overview of a Kineto trace: step time by category, GPU summary,
    /// recommendations.
    TorchOverview,
    /// The PyTorch Profiler's Operator view: aten ops by name, host and device time.
    TorchOperators,
    /// The PyTorch Profiler's Kernel view: kernels by name and by the op that launched them.
    TorchKernels,
    /// The PyTorch Profiler's Memory view: allocated and reserved bytes over time, per op, per event.
    TorchMemory,
    /// A PyTorch run's ranks (the plugin's distributed view): each rank's step time split side by
    /// side, and the operators and kernels of the ranks combined or of one rank.
    TorchRanks,
}

impl Tool {
    /// Every tool; within a navigation group, in this order.
    pub const ALL: [Tool; 22] = [
        Tool::OverviewPage,
        Tool::InputPipeline,
        Tool::OpProfile,
        Tool::FrameworkOpStats,
        Tool::HloStats,
        Tool::KernelStats,
        Tool::RooflineModel,
        Tool::XlaOpsCpu,
        Tool::GraphViewer,
        Tool::TorchOverview,
        Tool::TorchRanks,
        Tool::TorchOperators,
        Tool::TorchKernels,
        Tool::RunComparison,
        Tool::TraceViewer,
        Tool::FileDetails,
        Tool::MemoryProfile,
        Tool::MemoryViewer,
        Tool::DeviceMemory,
        Tool::MemoryAcrossHosts,
        Tool::TorchSnapshot,
        Tool::TorchMemory,
    ];

    /// The tool's one name with dashes: its CLI subcommand and the page URL's `tool=`.
    pub fn slug(self) -> &'static str {
        match self {
            Tool::OverviewPage => "overview-page",
            Tool::InputPipeline => "input-pipeline-analyzer",
            Tool::OpProfile => "op-profile",
            Tool::FrameworkOpStats => "framework-op-stats",
            Tool::HloStats => "hlo-stats",
            Tool::KernelStats => "kernel-stats",
            Tool::RooflineModel => "roofline-model",
            Tool::XlaOpsCpu => "xla-ops-cpu",
            Tool::GraphViewer => "graph-viewer",
            Tool::TraceViewer => "trace-viewer",
            Tool::FileDetails => "file-details",
            Tool::MemoryProfile => "memory-profile",
            Tool::MemoryViewer => "memory-viewer",
            Tool::DeviceMemory => "device-memory",
            Tool::MemoryAcrossHosts => "memory-across-hosts",
            Tool::RunComparison => "run-comparison",
            Tool::TorchSnapshot => "torch-snapshot",
            Tool::TorchOverview => "torch-overview",
            Tool::TorchOperators => "torch-operators",
            Tool::TorchKernels => "torch-kernels",
            Tool::TorchMemory => "torch-memory",
            Tool::TorchRanks => "torch-ranks",
        }
    }

    /// The tool's name as the page's navigation shows it.
    pub fn title(self) -> &'static str {
        match self {
            Tool::OverviewPage => "Overview",
            Tool::InputPipeline => "Input pipeline",
            Tool::OpProfile => "Op Profile",
            Tool::FrameworkOpStats => "Framework ops",
            Tool::HloStats => "HLO ops",
            Tool::KernelStats => "Kernels",
            Tool::RooflineModel => "Roofline",
            Tool::XlaOpsCpu => "XLA ops (CPU)",
            Tool::GraphViewer => "Graph",
            Tool::TraceViewer => "Trace Viewer",
            Tool::FileDetails => "File details",
            Tool::MemoryProfile => "Memory Profile",
            Tool::MemoryViewer => "Memory Viewer",
            Tool::DeviceMemory => "Device memory",
            Tool::MemoryAcrossHosts => "Across hosts",
            Tool::RunComparison => "Run comparison",
            Tool::TorchSnapshot => "CUDA memory snapshot",
            // The plugin's names of its views; they share the navigation only with the Trace Viewer
            // and File details ([`Suite`]), so no XProf tool of the same name stands beside them.
            Tool::TorchOverview => "Overview",
            Tool::TorchOperators => "Operators",
            Tool::TorchKernels => "Kernels",
            Tool::TorchMemory => "Memory",
            Tool::TorchRanks => "Ranks",
        }
    }

    /// The tool a slug names: its own, or the one it had before (`overview`, `hlo-op-stats`,
    /// `input-pipeline`, `roofline`, `graph`), which links made then still carry.
    pub fn from_slug(slug: &str) -> Option<Tool> {
        let slug = match slug {
            "overview" => "overview-page",
            "input-pipeline" => "input-pipeline-analyzer",
            "hlo-op-stats" => "hlo-stats",
            "roofline" => "roofline-model",
            "graph" => "graph-viewer",
            s => s,
        };
        Tool::ALL.into_iter().find(|t| t.slug() == slug)
    }

    /// The question the tool answers, which places it in the page's navigation.
    pub fn group(self) -> ToolGroup {
        match self {
            Tool::OverviewPage | Tool::InputPipeline | Tool::TorchOverview | Tool::TorchRanks => ToolGroup::Steps,
            Tool::OpProfile
            | Tool::FrameworkOpStats
            | Tool::HloStats
            | Tool::KernelStats
            | Tool::RooflineModel
            | Tool::XlaOpsCpu
            | Tool::GraphViewer
            | Tool::RunComparison
            | Tool::TorchOperators
            | Tool::TorchKernels => ToolGroup::Ops,
            Tool::TraceViewer => ToolGroup::Trace,
            Tool::MemoryProfile
            | Tool::MemoryViewer
            | Tool::DeviceMemory
            | Tool::MemoryAcrossHosts
            | Tool::TorchSnapshot
            | Tool::TorchMemory => ToolGroup::Memory,
            Tool::FileDetails => ToolGroup::File,
        }
    }

    /// Which suite's navigation lists the tool: XProf's tools read XProf's files, the PyTorch
    /// Profiler's views a Kineto trace, the snapshot report a CUDA memory snapshot; the Trace Viewer
    /// and the run comparison read both kinds of trace, and every file has its details.
    pub fn in_suite(self, suite: Suite) -> bool {
        match self {
            Tool::FileDetails => true,
            Tool::TraceViewer | Tool::RunComparison => suite != Suite::CudaSnapshot,
            Tool::TorchOverview | Tool::TorchOperators | Tool::TorchKernels | Tool::TorchMemory | Tool::TorchRanks => {
                suite == Suite::PyTorch
            }
            Tool::TorchSnapshot => suite == Suite::CudaSnapshot,
            _ => suite == Suite::XProf,
        }
    }

    /// The page's tools of `suite` in the order the navigation lists them: by group, then in
    /// [`Tool::ALL`] order. The number keys and `[`/`]` follow this order, so what a key does matches
    /// what the user sees.
    pub fn in_nav_order(suite: Suite) -> Vec<Tool> {
        ToolGroup::ALL.into_iter().flat_map(|g| Tool::ALL.into_iter().filter(move |t| t.in_suite(suite) && t.group() == g)).collect()
    }

    /// The page's tool `step` places away from this one in `suite`'s navigation order, wrapping
    /// around; from a tool the suite does not list, its first.
    pub fn step(self, step: isize, suite: Suite) -> Tool {
        let order = Self::in_nav_order(suite);
        match order.iter().position(|t| *t == self) {
            Some(at) => order[(at as isize + step).rem_euclid(order.len() as isize) as usize],
            None => order[0],
        }
    }
}

/// The tools a kind of file has: XProf's (traces, HLO dumps, pprof profiles), the PyTorch
/// Profiler's (a Kineto trace), or the CUDA memory snapshot's. The navigation shows the selected
/// file's suite alone, so a PyTorch user never meets XProf's tools, empty for their trace, and the
/// reverse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Suite {
    XProf,
    PyTorch,
    CudaSnapshot,
}

impl Suite {
    /// The suite of a file of `format`.
    pub fn of(format: Format) -> Suite {
        match format {
            Format::Kineto => Suite::PyTorch,
            Format::TorchSnapshot => Suite::CudaSnapshot,
            Format::XSpace | Format::HloProto | Format::Pprof => Suite::XProf,
        }
    }
}

/// The navigation's sections, in the order an investigation usually goes: where the step time went,
/// which ops, when (the trace), memory, then the file itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolGroup {
    Steps,
    Ops,
    Trace,
    Memory,
    File,
}

impl ToolGroup {
    pub const ALL: [ToolGroup; 5] = [ToolGroup::Steps, ToolGroup::Ops, ToolGroup::Trace, ToolGroup::Memory, ToolGroup::File];

    pub fn title(self) -> &'static str {
        match self {
            ToolGroup::Steps => "Steps",
            ToolGroup::Ops => "Ops",
            ToolGroup::Trace => "Trace",
            ToolGroup::Memory => "Memory",
            ToolGroup::File => "File",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_slug_names_its_tool_and_old_links_still_open() {
        for t in Tool::ALL {
            assert_eq!(Tool::from_slug(t.slug()), Some(t));
        }
        assert_eq!(Tool::from_slug("overview"), Some(Tool::OverviewPage));
        assert_eq!(Tool::from_slug("hlo-op-stats"), Some(Tool::HloStats));
        assert_eq!(Tool::from_slug("roofline"), Some(Tool::RooflineModel));
        assert_eq!(Tool::from_slug("graph"), Some(Tool::GraphViewer));
        assert_eq!(Tool::from_slug("input-pipeline"), Some(Tool::InputPipeline));
        assert_eq!(Tool::from_slug("nope"), None);
        assert_eq!(Tool::from_slug("torch-overview"), Some(Tool::TorchOverview));
    }

    #[test]
    fn the_navigation_lists_the_selected_files_suite_alone() {
        use Tool::*;
        assert_eq!(
            Tool::in_nav_order(Suite::of(Format::Kineto)),
            [TorchOverview, TorchRanks, TorchOperators, TorchKernels, RunComparison, TraceViewer, TorchMemory, FileDetails]
        );
        for f in [Format::XSpace, Format::HloProto, Format::Pprof] {
            let xprof = Tool::in_nav_order(Suite::of(f));
            assert_eq!(xprof.first(), Some(&OverviewPage));
            assert!(xprof.contains(&TraceViewer) && xprof.contains(&DeviceMemory) && xprof.contains(&FileDetails));
            assert!(!xprof.iter().any(|t| t.in_suite(Suite::PyTorch) && ![TraceViewer, RunComparison, FileDetails].contains(t)));
        }
        // A snapshot: its view and its details.
        assert_eq!(Tool::in_nav_order(Suite::CudaSnapshot), [TorchSnapshot, FileDetails]);
        // Keys step within the suite and wrap; a tool of another suite steps to the suite's first.
        assert_eq!(TorchOverview.step(-1, Suite::PyTorch), FileDetails);
        assert_eq!(TorchKernels.step(1, Suite::PyTorch), RunComparison);
        assert_eq!(OverviewPage.step(1, Suite::PyTorch), TorchOverview);
        assert_eq!(TorchOverview.step(1, Suite::PyTorch), TorchRanks);
    }
}
