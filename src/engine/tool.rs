//! The tools, by one name each: the page's navigation and URL, the first screen, the CLI's reasons
//! and the engine's requests all say [`Tool`]. Its [`Tool::slug`] is the CLI subcommand's name and
//! the URL's `tool=`; the names links carried before each tool was named after XProf's are still
//! read ([`Tool::from_slug`]), so an old shared link opens what it opened then.

/// Every tool, whether or not the page draws it yet.
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
    /// A PyTorch CUDA memory snapshot's report (`tidemark torch-snapshot`; the page has no view of it yet).
    TorchSnapshot,
}

impl Tool {
    /// Every tool; within a navigation group, in this order.
    pub const ALL: [Tool; 17] = [
        Tool::OverviewPage,
        Tool::InputPipeline,
        Tool::OpProfile,
        Tool::FrameworkOpStats,
        Tool::HloStats,
        Tool::KernelStats,
        Tool::RooflineModel,
        Tool::XlaOpsCpu,
        Tool::GraphViewer,
        Tool::TraceViewer,
        Tool::FileDetails,
        Tool::MemoryProfile,
        Tool::MemoryViewer,
        Tool::DeviceMemory,
        Tool::MemoryAcrossHosts,
        Tool::RunComparison,
        Tool::TorchSnapshot,
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

    /// Whether the page has a view of the tool (every tool has one now).
    pub fn on_page(self) -> bool {
        true
    }

    /// The question the tool answers, which places it in the page's navigation.
    pub fn group(self) -> ToolGroup {
        match self {
            Tool::OverviewPage | Tool::InputPipeline => ToolGroup::Steps,
            Tool::OpProfile
            | Tool::FrameworkOpStats
            | Tool::HloStats
            | Tool::KernelStats
            | Tool::RooflineModel
            | Tool::XlaOpsCpu
            | Tool::GraphViewer
            | Tool::RunComparison => ToolGroup::Ops,
            Tool::TraceViewer => ToolGroup::Trace,
            Tool::MemoryProfile | Tool::MemoryViewer | Tool::DeviceMemory | Tool::MemoryAcrossHosts | Tool::TorchSnapshot => {
                ToolGroup::Memory
            }
            Tool::FileDetails => ToolGroup::File,
        }
    }

    /// The page's tools in the order the navigation lists them: by group, then in [`Tool::ALL`]
    /// order. The number keys and `[`/`]` follow this order, so what a key does matches what the
    /// user sees.
    pub fn in_nav_order() -> Vec<Tool> {
        ToolGroup::ALL.into_iter().flat_map(|g| Tool::ALL.into_iter().filter(move |t| t.on_page() && t.group() == g)).collect()
    }

    /// The page's tool `step` places away from this one in navigation order, wrapping around.
    pub fn step(self, step: isize) -> Tool {
        let order = Self::in_nav_order();
        let at = order.iter().position(|t| *t == self).unwrap_or(0) as isize;
        order[(at + step).rem_euclid(order.len() as isize) as usize]
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
        assert!(Tool::in_nav_order().contains(&Tool::TorchSnapshot));
    }
}
