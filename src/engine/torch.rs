//! The PyTorch Profiler's views of a Kineto trace (`*.pt.trace.json[.gz]`), served from the file's
//! bytes: each view's payloads keyed by the plugin's file names, as the CLI's `--json` prints them.

use crate::analysis::torch::{kernels, memory, operators, overview, TorchProfile};
use crate::decode::kineto::{KinetoError, KinetoTrace};
use serde_json::{Map, Value};

/// The plugin's views that Tidemark computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TorchView {
    /// `overview`.
    Overview,
    /// `operation`, `operation_table`.
    Operators,
    /// `kernel`, `kernel_table`, `kernel_op_table`, `kernel_tc_pie`.
    Kernels,
    /// `memory`, `memory_curve`, `memory_events`.
    Memory,
}

impl TorchView {
    /// What the view needs that the trace lacks, in words; `None` where the view has content.
    fn missing(self) -> &'static str {
        match self {
            TorchView::Kernels => "the trace has no GPU kernels (a CPU-only run, or CUDA activities were not recorded)",
            TorchView::Memory => "the trace has no [memory] events: record with torch.profiler.profile(profile_memory=True)",
            _ => "",
        }
    }
}

/// Reads a Kineto trace (plain or gzipped) and computes `view`: one JSON object holding the view's
/// payloads, each equal to what the plugin serves for it.
pub fn torch_view(bytes: &[u8], view: TorchView) -> Result<Value, TorchViewError> {
    let trace = KinetoTrace::decode(bytes)?;
    view_of(&trace, view)
}

/// [`torch_view`] of a decoded trace.
pub fn view_of(trace: &KinetoTrace, view: TorchView) -> Result<Value, TorchViewError> {
    let p = TorchProfile::new(trace);
    let out = match view {
        TorchView::Overview => {
            let stats = kernels::KernelStats::new(&p);
            let peaks = memory::MemorySnapshot::new(&p).map(|m| m.peaks()).unwrap_or_default();
            let mut o = Map::new();
            o.insert("overview".into(), overview::overview(&p, stats.as_ref(), &peaks));
            Some(Value::Object(o))
        }
        TorchView::Operators => Some(operators::operator_view(&p)),
        TorchView::Kernels => kernels::kernel_view(&p),
        TorchView::Memory => memory::memory_view(&p),
    };
    out.ok_or(TorchViewError::Empty(view.missing()))
}

/// Why a view could not be served.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TorchViewError {
    #[error(transparent)]
    Decode(#[from] KinetoError),
    #[error("{0}")]
    Empty(&'static str),
}

impl super::Session {
    /// The plugin's Overview of the Kineto trace `file_id` (`overview`).
    pub fn torch_overview(&self, file_id: u32) -> Result<Value, super::EngineError> {
        self.torch(file_id, TorchView::Overview, "PyTorch Overview")
    }

    /// The plugin's Operator view of the Kineto trace `file_id` (`operation`, `operation_table`).
    pub fn torch_operators(&self, file_id: u32) -> Result<Value, super::EngineError> {
        self.torch(file_id, TorchView::Operators, "PyTorch Operators")
    }

    /// The plugin's Kernel view of the Kineto trace `file_id` (`kernel`, `kernel_table`,
    /// `kernel_op_table`, `kernel_tc_pie`).
    pub fn torch_kernels(&self, file_id: u32) -> Result<Value, super::EngineError> {
        self.torch(file_id, TorchView::Kernels, "PyTorch Kernels")
    }

    /// The plugin's Memory view of the Kineto trace `file_id` (`memory`, `memory_curve`,
    /// `memory_events`).
    pub fn torch_memory(&self, file_id: u32) -> Result<Value, super::EngineError> {
        self.torch(file_id, TorchView::Memory, "PyTorch Memory")
    }

    fn torch(&self, file_id: u32, view: TorchView, tool: &str) -> Result<Value, super::EngineError> {
        let f = self.file(file_id)?;
        let crate::decode::Profile::Kineto(trace) = &f.file.profile else {
            return Err(super::EngineError::WrongFormat {
                file: f.file.name.clone(),
                tool: tool.into(),
                found: f.file.profile.format(),
                needs: "a PyTorch profiler trace (*.pt.trace.json[.gz] from torch.profiler)".into(),
            });
        };
        view_of(trace, view).map_err(|e| super::EngineError::Unsupported {
            file: f.file.name.clone(),
            tool: tool.into(),
            reason: e.to_string(),
        })
    }
}
