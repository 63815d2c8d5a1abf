//! The PyTorch Profiler's views of a Kineto trace (`*.pt.trace.json[.gz]`), served from the file's
//! bytes: each view's payloads keyed by the plugin's file names, as the CLI's `--json` prints them,
//! and for the page the typed figures read from them ([`super::torch_page`]), in the worker: the page
//! only draws.
//!
//! A session keeps each trace's analysis ([`crate::analysis::torch::Analysed`]: its events in the plugin's order, op tree and
//! steps, a few seconds on a 1 GB trace) so that the views opened one after the other share it.

use super::torch_page::{KernelsPage, MemoryPage, OperatorsPage, OverviewPage, PayloadError};
use crate::analysis::torch::operators::OpGrouping;
use crate::analysis::torch::{kernels, memory, operators, overview, TorchProfile};
use crate::decode::kineto::{KinetoError, KinetoTrace};
use serde_json::{Map, Value};

/// The plugin's views that Tidemark computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TorchView {
    /// `overview`.
    Overview,
    /// `operation`, `operation_table`, grouped by name or by name and input shape.
    Operators(OpGrouping),
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

    /// The view's name in the engine's errors.
    fn tool(self) -> &'static str {
        match self {
            TorchView::Overview => "PyTorch Overview",
            TorchView::Operators(_) => "PyTorch Operators",
            TorchView::Kernels => "PyTorch Kernels",
            TorchView::Memory => "PyTorch Memory",
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
    payloads(&TorchProfile::new(trace), view)
}

/// [`torch_view`] of an analysed trace.
fn payloads(p: &TorchProfile, view: TorchView) -> Result<Value, TorchViewError> {
    let out = match view {
        TorchView::Overview => {
            let stats = kernels::KernelStats::new(p);
            let peaks = memory::MemorySnapshot::new(p).map(|m| m.peaks()).unwrap_or_default();
            let mut o = Map::new();
            o.insert("overview".into(), overview::overview(p, stats.as_ref(), &peaks));
            Some(Value::Object(o))
        }
        TorchView::Operators(grouping) => Some(operators::operator_view(p, grouping)),
        TorchView::Kernels => kernels::kernel_view(p),
        TorchView::Memory => memory::memory_view(p),
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
    /// The payloads did not read back into the page's figures: a fault of the engine, said plainly.
    #[error(transparent)]
    Payload(#[from] PayloadError),
}

impl super::Session {
    /// The plugin's Overview of the Kineto trace `file_id` (`overview`), as the page draws it.
    pub fn torch_overview(&mut self, file_id: u32) -> Result<OverviewPage, super::EngineError> {
        self.torch(file_id, TorchView::Overview, OverviewPage::from_payloads)
    }

    /// The plugin's Operator view of the Kineto trace `file_id` (`operation`, `operation_table`)
    /// grouped by `grouping`, as the page draws it.
    pub fn torch_operators(&mut self, file_id: u32, grouping: OpGrouping) -> Result<OperatorsPage, super::EngineError> {
        self.torch(file_id, TorchView::Operators(grouping), OperatorsPage::from_payloads)
    }

    /// The plugin's Kernel view of the Kineto trace `file_id` (`kernel`, `kernel_table`,
    /// `kernel_op_table`, `kernel_tc_pie`), as the page draws it.
    pub fn torch_kernels(&mut self, file_id: u32) -> Result<KernelsPage, super::EngineError> {
        self.torch(file_id, TorchView::Kernels, KernelsPage::from_payloads)
    }

    /// The plugin's Memory view of the Kineto trace `file_id` (`memory`, `memory_curve`,
    /// `memory_events`), as the page draws it.
    pub fn torch_memory(&mut self, file_id: u32) -> Result<MemoryPage, super::EngineError> {
        self.torch(file_id, TorchView::Memory, MemoryPage::from_payloads)
    }

    /// `view` of trace `file_id` read by `read`, from the trace's analysis kept by the session (made
    /// on the first view asked). A session holding one trace at a time keeps one trace's analysis:
    /// the one asked last.
    fn torch<T>(&mut self, file_id: u32, view: TorchView, read: fn(&Value) -> Result<T, PayloadError>) -> Result<T, super::EngineError> {
        if self.residency.hold_one_trace {
            self.torch_analyses.retain(|&id, _| id == file_id);
        }
        let kept = self.torch_analyses.remove(&file_id);
        let f = self.file(file_id)?;
        let crate::decode::Profile::Kineto(trace) = &f.file.profile else {
            return Err(super::EngineError::WrongFormat {
                file: f.file.name.clone(),
                tool: view.tool().into(),
                found: f.file.profile.format(),
                needs: "a PyTorch profiler trace (*.pt.trace.json[.gz] from torch.profiler)".into(),
            });
        };
        let p = match kept {
            Some(a) => TorchProfile::from_analysed(trace, a),
            None => TorchProfile::new(trace),
        };
        let out = payloads(&p, view).and_then(|v| Ok(read(&v)?));
        let out =
            out.map_err(|e| super::EngineError::Unsupported { file: f.file.name.clone(), tool: view.tool().into(), reason: e.to_string() });
        let analysed = p.into_analysed();
        self.torch_analyses.insert(file_id, analysed);
        out
    }
}
