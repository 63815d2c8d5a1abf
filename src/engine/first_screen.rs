//! The first screen after a drop, and why a tool has nothing to show.
//!
//! Both are pure functions of what a file's overview already records (its steps, allocator events,
//! HLO modules, device planes, and compiles that never finished), so the page, which follows them,
//! and the CLI, which prints them (`inspect`'s "opens on", each tool's reason), say the same thing.

use super::file_details::FileDetails;
use super::tool::{Suite, Tool};
use crate::decode::xplane::names::{GPU_PLANE_PREFIX, TPU_PLANE_PREFIX};
use crate::decode::Format;

/// The tool a file opens on, the answer an XProf user expects first (a PyTorch user: a Kineto trace
/// on the PyTorch Profiler's Overview): a JAX device memory profile on
/// Device memory; an HLO dump on the Memory Viewer (at its largest module, the viewer's default); a
/// trace opened `with_others` (several files, a log folder) on its run's Overview; a trace alone on
/// its Overview when it has steps, else on the tool with the most to say — the Memory Profile when
/// it has allocator events, the Op Profile when its devices ran ops, else the Trace Viewer.
pub fn landing(overview: &FileDetails, with_others: bool) -> Tool {
    match overview.format {
        Format::Pprof => Tool::DeviceMemory,
        // The PyTorch Profiler opens a trace on its Overview too.
        Format::Kineto => Tool::TorchOverview,
        Format::TorchSnapshot => Tool::TorchSnapshot,
        Format::HloProto => Tool::MemoryViewer,
        Format::XSpace if with_others || overview.steps.is_some_and(|n| n > 0) => Tool::OverviewPage,
        Format::XSpace if has_allocator_events(overview) => Tool::MemoryProfile,
        Format::XSpace if device_events(overview) > 0 => Tool::OpProfile,
        Format::XSpace => Tool::TraceViewer,
    }
}

/// Why a tool of a trace has nothing (or not the program's module) to show: read from the trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EmptyReason {
    /// The trace holds no allocator event; `on_device`: it has device planes (a GPU or TPU run).
    NoAllocatorEvents { on_device: bool },
    /// The trace holds no HLO module.
    NoHloProtos,
    /// The trace's step database is empty: no step marker.
    NoSteps,
    /// No `/device:` plane: a CPU-only trace.
    NoDevicePlanes,
    /// Device planes without a single event.
    NoDeviceEvents,
    /// Modules that began compiling in the trace and of which it holds no compiled module.
    UnfinishedCompile { modules: Vec<String> },
}

impl EmptyReason {
    /// A stable name for the reason (the page's `data-value`).
    pub fn kind(&self) -> &'static str {
        match self {
            EmptyReason::NoAllocatorEvents { .. } => "no_allocator_events",
            EmptyReason::NoHloProtos => "no_hlo_protos",
            EmptyReason::NoSteps => "no_steps",
            EmptyReason::NoDevicePlanes => "no_device_planes",
            EmptyReason::NoDeviceEvents => "no_device_events",
            EmptyReason::UnfinishedCompile { .. } => "unfinished_compile",
        }
    }

    /// The one sentence the page and the CLI give: what the trace lacks, and what to do.
    pub fn sentence(&self) -> String {
        match self {
            EmptyReason::NoAllocatorEvents { on_device: false } => "No allocator events in this trace: JAX on CPU records none \
                (TensorFlow on CPU only with TF_CPU_ALLOCATOR_USE_BFC=true), so profile the program on a GPU or TPU to see its memory over time."
                .into(),
            EmptyReason::NoAllocatorEvents { on_device: true } => "No allocator events in this trace, though it ran on a device: a GPU run \
                records none with XLA_PYTHON_CLIENT_ALLOCATOR=platform, so profile again with JAX's default allocator (unset the variable)."
                .into(),
            EmptyReason::NoHloProtos => "No HLO modules in this trace: the profiler records them with ProfileOptions.enable_hlo_proto \
                (TensorFlow only for XLA-compiled functions), so profile again with it on, or open an XLA dump (--xla_dump_hlo_as_proto)."
                .into(),
            EmptyReason::NoSteps => "No steps in this trace: it has no step marker (no jax.profiler.StepTraceAnnotation, no TensorFlow \
                step marker such as Keras fit's), so wrap each training step in StepTraceAnnotation(\"train\", step_num=i) to see step time."
                .into(),
            EmptyReason::NoDevicePlanes => "This is a CPU-only trace (no /device: plane), so no device op ran: the host's XLA ops are under \
                XLA ops (CPU); profile on a GPU or TPU for this tool."
                .into(),
            EmptyReason::NoDeviceEvents => "The trace's device planes recorded no event: nothing ran on the device while the profiler was \
                on, so profile around the steps you want to see."
                .into(),
            EmptyReason::UnfinishedCompile { modules } => format!(
                "{} began compiling in this trace but the trace holds no compiled module of {}: the compilation failed (a program too \
                 large for the device fails with RESOURCE_EXHAUSTED while the compiler autotunes) or had not finished when the profile \
                 ended, so look for the error in the program's output and profile a smaller size to see its memory.",
                modules.join(", "),
                if modules.len() == 1 { "it" } else { "them" }
            ),
        }
    }
}

/// Why `tool` has nothing to show for this file, or `None` when it has something (or the tool does
/// not read this kind of file, which its own error says: Device memory, and the PyTorch tools, which
/// are not XProf's). A trace whose program never finished compiling says so on every trace tool: it
/// is why the program's module, memory and ops are missing.
pub fn empty_reason(tool: Tool, overview: &FileDetails) -> Option<EmptyReason> {
    if overview.format != Format::XSpace || tool == Tool::DeviceMemory || !tool.in_suite(Suite::XProf) {
        return None;
    }
    if !overview.unfinished_compiles.is_empty() {
        return Some(EmptyReason::UnfinishedCompile { modules: overview.unfinished_compiles.clone() });
    }
    let device_planes = overview.planes.iter().filter(|p| is_device_plane(&p.name)).count();
    let no_device_ops = || match device_planes {
        0 => Some(EmptyReason::NoDevicePlanes),
        _ if device_events(overview) == 0 => Some(EmptyReason::NoDeviceEvents),
        _ => None,
    };
    match tool {
        Tool::MemoryProfile | Tool::MemoryAcrossHosts if !has_allocator_events(overview) => {
            Some(EmptyReason::NoAllocatorEvents { on_device: device_planes > 0 })
        }
        Tool::MemoryViewer if overview.hlo_modules.is_empty() => Some(EmptyReason::NoHloProtos),
        Tool::OverviewPage | Tool::InputPipeline if overview.steps == Some(0) => Some(EmptyReason::NoSteps),
        Tool::OpProfile | Tool::HloStats | Tool::KernelStats | Tool::RooflineModel => no_device_ops(),
        _ => None,
    }
}

fn is_device_plane(name: &str) -> bool {
    name.starts_with(GPU_PLANE_PREFIX) || name.starts_with(TPU_PLANE_PREFIX)
}

/// Events on the trace's GPU and TPU planes.
fn device_events(overview: &FileDetails) -> usize {
    overview.planes.iter().filter(|p| is_device_plane(&p.name)).map(|p| p.event_count).sum()
}

fn has_allocator_events(overview: &FileDetails) -> bool {
    overview.allocators.iter().any(|a| a.allocations + a.deallocations > 0)
}
