//! The op metrics of an opened file, built once and kept: every op table (framework op stats, HLO op
//! stats, Op Profile, the roofline, the input-pipeline op table) reads the same dbs, so the host
//! threads are replayed once per file however many tables the user opens.

use super::{OpenError, Session};
use crate::analysis::framework_op_stats::{self, FrameworkOpStats};
use crate::analysis::op_metrics::host::host_op_metrics_db;
use crate::analysis::op_metrics::{HardwareType, OpMetricsDb, PerfEnv};
use crate::decode::xplane::XSpace;
use crate::decode::Profile;
use std::collections::HashMap;
use std::sync::Arc;

/// One file's op metrics.
#[derive(Debug, Clone, Default)]
pub struct FileOpMetrics {
    /// Framework ops timed on the host threads.
    pub host: OpMetricsDb,
    /// HLO ops timed on the devices (GPU kernels, TPU `XLA Ops`); empty on CPU-only traces and until the
    /// device side fills it.
    pub device: OpMetricsDb,
    /// [`FileOpMetrics::device`] regrouped by framework op (XProf's `CreateTfMetricsDbFromDeviceOpMetricsDb`),
    /// with its `IDLE` row; empty where `device` is.
    pub device_framework_ops: OpMetricsDb,
    /// Fraction of each device framework op's kernel time on Tensor Cores (GPU kernel stats), by op name.
    pub tensor_core_utilization: HashMap<String, f64>,
    pub hardware: HardwareType,
    /// What XProf's run environment calls the device: `CPU` without devices, `GPU` on GPUs (XProf names
    /// the model; only "GPU" in it matters to the op tables), the `device_type_string` stat on TPUs.
    pub device_type: String,
    pub perf_env: PerfEnv,
}

/// Op metrics computed so far, by file id.
pub(super) type OpMetricsCache = HashMap<u32, Arc<FileOpMetrics>>;

impl Session {
    /// The op metrics of `file_id`, computed on first use and kept until the file is closed.
    pub fn op_metrics(&mut self, file_id: u32) -> Result<Arc<FileOpMetrics>, OpenError> {
        if let Some(m) = self.op_metrics.get(&file_id) {
            return Ok(m.clone());
        }
        let f = self.get(file_id).ok_or_else(|| OpenError { file: format!("#{file_id}"), message: "no such open file".into() })?;
        let err = |message: String| OpenError { file: f.file.name.clone(), message };
        let metrics = match &f.file.profile {
            Profile::XSpace(space) => Arc::new(file_op_metrics(space).map_err(|e| err(e.to_string()))?),
            other => return Err(err(format!("this file is {}; the op tables need an XProf trace (*.xplane.pb)", other.format()))),
        };
        self.op_metrics.insert(file_id, metrics.clone());
        Ok(metrics)
    }

    /// Framework op stats of `file_id` (XProf's `framework_op_stats` tool).
    pub fn framework_op_stats(&mut self, file_id: u32) -> Result<FrameworkOpStats, OpenError> {
        let m = self.op_metrics(file_id)?;
        Ok(framework_op_stats::framework_op_stats(&framework_op_stats::Inputs {
            host: &m.host,
            device: &m.device_framework_ops,
            tensor_core_utilization: &m.tensor_core_utilization,
            perf_env: &m.perf_env,
            hardware: m.hardware,
            device_type: &m.device_type,
        }))
    }
}

fn file_op_metrics(space: &XSpace) -> Result<FileOpMetrics, crate::decode::DecodeError> {
    let (hardware, device_type) = device_kind(space);
    Ok(FileOpMetrics { host: host_op_metrics_db(space)?, hardware, device_type, ..FileOpMetrics::default() })
}

/// The kind of device the trace ran on, as XProf's run environment decides it: GPU planes first, then
/// TPU planes, else CPU only.
fn device_kind(space: &XSpace) -> (HardwareType, String) {
    if space.planes.iter().any(|p| p.name().starts_with("/device:GPU:")) {
        return (HardwareType::Gpu, "GPU".into());
    }
    if let Some(tpu) = space.planes.iter().find(|p| p.name().starts_with("/device:TPU:")) {
        let name = tpu.stat("device_type_string").and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
        return (HardwareType::Tpu, name);
    }
    (HardwareType::CpuOnly, "CPU".into())
}
