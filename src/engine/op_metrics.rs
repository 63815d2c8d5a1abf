//! The op metrics of an opened file, built once and kept: every op table (framework op stats, HLO op
//! stats, Op Profile, the roofline, Kernel Stats, the Overview Page and the input-pipeline op table)
//! reads the same dbs, so the host threads and the device planes are read once per file however many
//! tables the user opens. Limited to a time window (a step), the same passes read only the events that
//! start inside it; a run's hosts are combined ([`super::scope`] keys and keeps them all).

use super::overview_page::step_end_ps;
use super::{EngineError, Scope, Session};
use crate::analysis::device_ops::{self, tf_ops::tf_metrics_db, DeviceOps, DeviceOpsError};
use crate::analysis::framework_op_stats::{self, FrameworkOpStats};
use crate::analysis::kernel_stats::{self, KernelStats};
use crate::analysis::op_metrics::host::host_op_metrics_db_in;
use crate::analysis::op_metrics::{HardwareType, OpMetricsDb, PerfEnv, TimeWindow};
use crate::analysis::overview_page::RunEnvironment;
use crate::analysis::xla_modules::{every_decoded_module, first_of_each_program, XlaModules};
use crate::analysis::xla_ops_cpu::{self, XlaOpsCpu};
use crate::decode::xplane::XSpace;
use crate::decode::DecodeError;
use std::collections::HashMap;
use std::sync::Arc;

/// One file's op metrics.
#[derive(Debug, Clone)]
pub struct FileOpMetrics {
    /// Framework ops timed on the host threads; `None` in a session that leaves them out
    /// ([`Session::leaving_out_host_ops`]).
    pub host: Option<OpMetricsDb>,
    /// The trace's HLO modules, by program id.
    pub modules: XlaModules,
    /// HLO ops timed on the devices (GPU kernels, TPU `XLA Ops`), or why Tidemark cannot read them (then
    /// the device-side tables answer that reason and framework op stats stay host-only). A db with an
    /// op Tidemark cannot cost ([`DeviceOps::uncosted`]) still gives framework op stats their device
    /// rows; the tables built on FLOPs and bytes refuse it.
    pub device: Result<Arc<DeviceOps>, DeviceOpsError>,
    /// The device db regrouped by framework op (XProf's `CreateTfMetricsDbFromDeviceOpMetricsDb`), with
    /// its `IDLE` row; empty where there is no device db.
    pub device_framework_ops: OpMetricsDb,
    /// GPU Kernel Stats (empty without GPU kernels).
    pub kernel_stats: Arc<KernelStats>,
    /// Fraction of each framework op's kernel time on Tensor Cores (from the kernel stats), by op name.
    pub tensor_core_utilization: HashMap<String, f64>,
    pub hardware: HardwareType,
    /// What XProf's run environment calls the device: `CPU` without devices, `GPU` on GPUs (XProf names
    /// the model; only "GPU" in it matters to the op tables), the `device_type_string` stat on TPUs.
    pub device_type: String,
    /// The device's peaks (from the device db; default where there is none).
    pub perf_env: PerfEnv,
    pub run_environment: RunEnvironment,
    /// The XLA ops the host threads ran (Tidemark's "XLA ops on CPU"; empty without such events);
    /// `None` in a session that leaves them out ([`Session::leaving_out_xla_ops_cpu`]).
    pub xla_ops_cpu: Option<Arc<XlaOpsCpu>>,
}

/// The parts of the op tables' pass a session may leave out, for a caller that shows a tool which
/// does not read them (the command line: [`Session::leaving_out_host_ops`],
/// [`Session::leaving_out_xla_ops_cpu`]); the page computes both, since any tool may be asked next.
#[derive(Debug, Clone, Copy)]
pub(super) struct Parts {
    pub host_ops: bool,
    pub xla_ops_cpu: bool,
}

impl Default for Parts {
    fn default() -> Self {
        Parts { host_ops: true, xla_ops_cpu: true }
    }
}

impl Session {
    /// The steps of the run `file_ids` (its Overview Page's) as windows the op tables can be limited to:
    /// (group id, name, span as the page's step selection places it), in step order; a step of no
    /// duration has no window and is left out.
    pub fn run_step_windows(&mut self, file_ids: &[u32]) -> Result<Vec<(i64, String, TimeWindow)>, EngineError> {
        let steps = &self.overview_page(file_ids)?.input.steps;
        Ok(steps.iter().filter_map(|s| Some((s.group_id, s.name.clone(), TimeWindow::new(s.begin_ps, step_end_ps(s)).ok()?))).collect())
    }

    /// The device op db of `scope` for `tool`: every HLO op the accelerators ran, over all cores; or why
    /// there is none: a malformed trace (the error names the scope's first file).
    pub fn device_ops(&mut self, scope: &Scope, tool: &str) -> Result<Arc<DeviceOps>, EngineError> {
        let first = scope.first()?;
        match &self.op_metrics(scope)?.device {
            Ok(ops) => Ok(ops.clone()),
            Err(e @ DeviceOpsError::Decode(_)) => Err(self.analysis_error(first, tool, e.to_string())),
        }
    }

    /// Framework op stats of `scope` (XProf's `framework_op_stats` tool; XProf has no window): host
    /// rows, and device rows where the device db exists.
    pub fn framework_op_stats(&mut self, scope: &Scope) -> Result<FrameworkOpStats, EngineError> {
        let m = self.op_metrics(scope)?;
        Ok(framework_op_stats::framework_op_stats(&framework_op_stats::Inputs {
            host: self.host_ops(&m, scope, "Framework Op Stats")?,
            device: &m.device_framework_ops,
            tensor_core_utilization: &m.tensor_core_utilization,
            perf_env: &m.perf_env,
            hardware: m.hardware,
            device_type: &m.device_type,
        }))
    }

    /// GPU Kernel Stats of `scope` (empty for a trace without GPU kernels): its hosts' kernels, the
    /// longest kept.
    pub fn kernel_stats(&mut self, scope: &Scope) -> Result<Arc<KernelStats>, EngineError> {
        Ok(self.op_metrics(scope)?.kernel_stats.clone())
    }

    /// The host threads' framework ops of `m` (the op metrics of `scope`), for `tool`; an error where
    /// this session left them out, which only a caller that asked it to and then shows them meets.
    pub(super) fn host_ops<'m>(&self, m: &'m FileOpMetrics, scope: &Scope, tool: &str) -> Result<&'m OpMetricsDb, EngineError> {
        m.host.as_ref().ok_or_else(|| self.unsupported(scope.file_ids[0], tool, "this session leaves out the host's framework ops".into()))
    }
}

/// The one op-metrics pass over `space`, with the optional `parts`.
pub(super) fn file_op_metrics(space: &XSpace, parts: Parts) -> Result<FileOpMetrics, DecodeError> {
    // Each HLO module decoded once for both readers (decoding them was a fifth of a small trace's time).
    let every_module = every_decoded_module(space);
    let run_environment = RunEnvironment::with_modules(space, every_module.iter().map(|(_, _, proto)| proto));
    let modules = XlaModules::from_decoded(first_of_each_program(every_module));
    let xla_ops_cpu = if parts.xla_ops_cpu { Some(Arc::new(xla_ops_cpu::analyze(space, &modules)?)) } else { None };
    timed_passes(space, modules, run_environment, xla_ops_cpu, None, parts.host_ops)
}

/// The passes that time events, over those that start inside `window` (all without one): the host
/// threads' framework ops, the devices' HLO ops and the GPU kernels; the rest is given.
fn timed_passes(
    space: &XSpace,
    modules: XlaModules,
    run_environment: RunEnvironment,
    xla_ops_cpu: Option<Arc<XlaOpsCpu>>,
    window: Option<TimeWindow>,
    host_ops: bool,
) -> Result<FileOpMetrics, DecodeError> {
    let kernel_stats = kernel_stats::analyze(space, &modules, window)?;
    let device = device_ops::analyze_in(space, &modules, window).map(Arc::new);
    let host = if host_ops { Some(host_op_metrics_db_in(space, window)?) } else { None };
    Ok(FileOpMetrics::new(host, modules, device, kernel_stats, run_environment, xla_ops_cpu))
}

impl FileOpMetrics {
    /// The op metrics of a file or run from its dbs: the hardware from the run environment, and what
    /// derives from the device db (its framework-op db and peaks, where there are devices) and the
    /// kernel stats (Tensor Core use per op).
    pub(super) fn new(
        host: Option<OpMetricsDb>,
        modules: XlaModules,
        device: Result<Arc<DeviceOps>, DeviceOpsError>,
        kernel_stats: KernelStats,
        run_environment: RunEnvironment,
        xla_ops_cpu: Option<Arc<XlaOpsCpu>>,
    ) -> Self {
        let hardware = match run_environment.hardware_type {
            "GPU" => HardwareType::Gpu,
            "TPU" => HardwareType::Tpu,
            _ => HardwareType::CpuOnly,
        };
        let (device_framework_ops, perf_env) = device_side(&device);
        FileOpMetrics {
            host,
            tensor_core_utilization: tensor_core_utilization(&kernel_stats),
            modules,
            device,
            device_framework_ops,
            kernel_stats: Arc::new(kernel_stats),
            hardware,
            device_type: run_environment.device_type.clone(),
            perf_env,
            run_environment,
            xla_ops_cpu,
        }
    }
}

impl FileOpMetrics {
    /// This file's op metrics over the events of `space` (this file's trace) that start inside `window`:
    /// the host and device dbs and the kernel stats passed again over the window, with what derives
    /// from them (the device's framework ops, the Tensor Core share of each op: the window's kernels');
    /// the modules, run environment and XLA ops on CPU stay the whole trace's.
    pub(super) fn in_window(&self, space: &XSpace, window: TimeWindow) -> Result<FileOpMetrics, DecodeError> {
        let host_ops = self.host.is_some();
        timed_passes(space, self.modules.clone(), self.run_environment.clone(), self.xla_ops_cpu.clone(), Some(window), host_ops)
    }
}

/// What derives from the device db: its framework-op db (with `IDLE`) and the device's peaks; empty
/// and default without devices.
fn device_side(device: &Result<Arc<DeviceOps>, DeviceOpsError>) -> (OpMetricsDb, PerfEnv) {
    match device {
        Ok(d) if d.hardware != HardwareType::CpuOnly => (tf_metrics_db(&d.db, true), d.perf_env.clone()),
        _ => (OpMetricsDb::default(), PerfEnv::default()),
    }
}

/// Per op name, the share of its kernels' time spent in kernels that use Tensor Cores (XProf's
/// `tensor_core_utilization` of a framework op).
fn tensor_core_utilization(stats: &KernelStats) -> HashMap<String, f64> {
    let mut by_op: HashMap<String, (u64, u64)> = HashMap::new();
    for r in &stats.reports {
        let e = by_op.entry(r.key.op_name.clone()).or_default();
        e.1 += r.total_duration_ns;
        if r.key.is_kernel_using_tensor_core {
            e.0 += r.total_duration_ns;
        }
    }
    by_op.into_iter().filter(|(_, (_, total))| *total > 0).map(|(op, (tc, total))| (op, tc as f64 / total as f64)).collect()
}
