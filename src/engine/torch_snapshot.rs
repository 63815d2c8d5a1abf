//! PyTorch CUDA memory snapshots of opened files: the per-device report, the allocator's state at
//! a chosen event and a window of the active-memory timeline as bands
//! ([`crate::analysis::torch_snapshot`]). Each is one pass (or two) over the file's columns, so
//! nothing is cached.

use super::{EngineError, Session};
use crate::analysis::torch_snapshot::{self as ts, AllocatorState, Axis, Bands, SnapshotReport, TraceFit, TraceMemory};
use crate::decode::kineto::KinetoTrace;
use crate::decode::pickle_snapshot::TorchSnapshot;
use crate::decode::Profile;

const TOOL: &str = "CUDA memory snapshot";

impl Session {
    /// The snapshot of file `file_id`, or why there is none.
    fn torch_snapshot_of(&self, file_id: u32) -> Result<&TorchSnapshot, EngineError> {
        let f = self.file(file_id)?;
        match &f.file.profile {
            Profile::TorchSnapshot(s) => Ok(s),
            other => Err(EngineError::WrongFormat {
                file: f.file.name.clone(),
                tool: TOOL.into(),
                found: other.format(),
                needs: "a PyTorch CUDA memory snapshot (snapshot.pickle from torch.cuda.memory._dump_snapshot)".into(),
            }),
        }
    }

    /// Every device's report: the trace's events, active-memory peak and what was live there, the
    /// segments at the dump, lost history, largest allocations, leak suspects and OOMs.
    pub fn torch_snapshot(&self, file_id: u32) -> Result<SnapshotReport, EngineError> {
        Ok(ts::analyze(self.torch_snapshot_of(file_id)?))
    }

    /// The allocator's state on `device` after event `event_index` (-1: before the first).
    pub fn torch_snapshot_state(&self, file_id: u32, device: usize, event_index: i64) -> Result<AllocatorState, EngineError> {
        let s = self.torch_snapshot_of(file_id)?;
        ts::state_at(s, device, event_index).ok_or_else(|| {
            let events = s.devices.get(device).map(|d| d.len());
            let why = match events {
                None => format!("the snapshot has no device {device} (it has {})", s.devices.len()),
                Some(n) => format!(
                    "event {event_index} is not in device {device}'s trace (events 0 to {}, or -1 for before the first)",
                    n as i64 - 1
                ),
            };
            self.analysis_error(file_id, TOOL, why)
        })
    }

    /// The active-memory timeline of `device` in `window` (on `axis`; `None`: the whole trace) as
    /// bands, at most `columns` columns, allocations under `1 / rows` of its highest stack summed.
    pub fn torch_snapshot_timeline(
        &self,
        file_id: u32,
        device: usize,
        axis: Axis,
        window: Option<(i64, i64)>,
        columns: usize,
        rows: u32,
    ) -> Result<Bands, EngineError> {
        let s = self.torch_snapshot_of(file_id)?;
        ts::bands(s, device, axis, window, columns, rows)
            .ok_or_else(|| self.analysis_error(file_id, TOOL, format!("the snapshot has no device {device} (it has {})", s.devices.len())))
    }

    /// The `[memory]` curve of Kineto trace `trace_file_id` beside snapshot `file_id`'s `device`, on
    /// the snapshot's clock, each point with its matching snapshot event.
    pub fn torch_snapshot_trace_memory(&self, file_id: u32, trace_file_id: u32, device: usize) -> Result<TraceMemory, EngineError> {
        let s = self.torch_snapshot_of(file_id)?;
        let trace = self.kineto_of(trace_file_id)?;
        ts::trace_memory(trace, s, device).map_err(|e| {
            let of = if matches!(e, ts::TraceMemoryError::NoBaseTime) { trace_file_id } else { file_id };
            self.analysis_error(of, TOOL, e.to_string())
        })
    }

    /// How each of the Kineto traces `trace_file_ids` fits snapshot `file_id`'s `device`, in their
    /// order: whether it is the snapshot's run, and if not why ([`ts::TraceMemory::fit`]). The
    /// snapshot view offers only those that belong.
    pub fn torch_snapshot_trace_fits(&self, file_id: u32, device: usize, trace_file_ids: &[u32]) -> Result<Vec<TraceFit>, EngineError> {
        let s = self.torch_snapshot_of(file_id)?;
        trace_file_ids
            .iter()
            .map(|&id| ts::trace_fit(self.kineto_of(id)?, s, device).map_err(|e| self.analysis_error(file_id, TOOL, e.to_string())))
            .collect()
    }

    /// The Kineto trace of file `trace_file_id`, or why it is not one.
    fn kineto_of(&self, trace_file_id: u32) -> Result<&KinetoTrace, EngineError> {
        let f = self.file(trace_file_id)?;
        match &f.file.profile {
            Profile::Kineto(trace) => Ok(trace),
            other => Err(EngineError::WrongFormat {
                file: f.file.name.clone(),
                tool: TOOL.into(),
                found: other.format(),
                needs: "a PyTorch profiler trace (*.pt.trace.json[.gz] from torch.profiler) of the snapshot's run".into(),
            }),
        }
    }
}
