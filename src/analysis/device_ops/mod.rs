//! The device op db: every HLO op the accelerators ran, with its time, occurrences, FLOPs and bytes,
//! summed over the cores (XProf's `device_op_metrics_db`), and the peaks of the device it ran on.
//! HLO op stats, Op Profile and the roofline read it.
//!
//! Built from TPU planes (the ops of their `XLA Ops` lines, described by their event metadata) and
//! from GPU planes (kernels of XLA ops, costed by XLA's GPU cost analysis, and kernels of framework
//! ops). A GPU kernel whose instruction's cost Tidemark cannot compute as XProf does is counted
//! without FLOPs and bytes (as XProf counts an op it has no cost for) and listed in
//! [`DeviceOps::uncosted`], which the op tables say in a note: the trace is never refused for it.

pub mod duty_cycle;
pub mod gpu;
pub mod gpu_perf;
pub mod metadata;
pub mod tf_ops;
pub mod tpu;

use crate::analysis::device_planes::{device_planes, DeviceKind};
use crate::analysis::gpu_cost::CostError;
use crate::analysis::op_metrics::{HardwareType, OpMetricsDb, OpMetricsDbBuilder, PerfEnv, TimeWindow};
use crate::analysis::xla_modules::XlaModules;
use crate::decode::xplane::{Plane, StatValue, XSpace};
use crate::decode::DecodeError;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DeviceOpsError {
    #[error(transparent)]
    Decode(#[from] DecodeError),
}

/// A GPU op whose FLOPs and bytes Tidemark cannot compute as XProf does (it is counted with none).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct UncostedOp {
    pub program_id: u64,
    pub instruction: String,
    pub reason: CostError,
}

/// The device op db of a trace and what it ran on.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeviceOps {
    pub hardware: HardwareType,
    /// The device's model as XProf names it (`TPU v6 Lite`, `AMD GPU - gfx942`); empty on a CPU-only trace.
    pub device_type: String,
    /// Device cores (one per device plane).
    pub core_count: u32,
    /// Whether any core has a non-empty `Steps` line (step-based tables need the step db).
    pub has_steps: bool,
    /// The peaks of the first device plane (XProf takes them from there); zero FLOP/s for a GPU plane
    /// that names no vendor (as in XProf).
    pub perf_env: PerfEnv,
    /// The ops of every core combined; empty (no rows, zero totals) on a CPU-only trace.
    pub db: OpMetricsDb,
    /// The GPU ops counted without FLOPs and bytes because Tidemark cannot compute XProf's, each once,
    /// in order.
    pub uncosted: Vec<UncostedOp>,
}

impl DeviceOps {
    /// What the op tables say of [`DeviceOps::uncosted`]: one line, `None` when every op is costed.
    pub fn cost_note(&self) -> Option<String> {
        let first = self.uncosted.first()?;
        let more = match self.uncosted.len() {
            1 => String::new(),
            n => format!(" and {} other op{}", n - 1, if n == 2 { "" } else { "s" }),
        };
        Some(format!(
            "FLOPs and bytes of HLO op `{}`{more} are shown as 0 (as XProf shows an op it cannot cost): {}",
            first.instruction, first.reason
        ))
    }
}

pub fn analyze(space: &XSpace, modules: &XlaModules) -> Result<DeviceOps, DeviceOpsError> {
    analyze_in(space, modules, None)
}

/// The device op db of the events that start inside `window` (all of them without one). A TPU's duty
/// cycle (busy and idle time) stays the whole trace's.
pub fn analyze_in(space: &XSpace, modules: &XlaModules, window: Option<TimeWindow>) -> Result<DeviceOps, DeviceOpsError> {
    let Some((kind, planes)) = device_planes(space) else {
        return Ok(DeviceOps { hardware: HardwareType::CpuOnly, ..DeviceOps::default() });
    };
    let mut combined = OpMetricsDbBuilder::new();
    if kind == DeviceKind::Gpu {
        let mut uncosted = Vec::new();
        for plane in &planes {
            combined.combine(&gpu::device_op_metrics_db(space, plane, modules, window, &mut uncosted)?, true);
        }
        uncosted.sort();
        uncosted.dedup();
        let capabilities = gpu_perf::GpuCapabilities::of(planes[0]);
        let db = combined.finish();
        return Ok(DeviceOps {
            hardware: HardwareType::Gpu,
            device_type: capabilities.model_name(),
            core_count: planes.len() as u32,
            has_steps: false,
            perf_env: capabilities.perf_env(planes[0]),
            db,
            uncosted,
        });
    }
    for plane in &planes {
        combined.combine(&tpu::core_op_metrics_db(space, plane, window)?, true);
    }
    // A chip is busy while any of its cores is (XProf sets this on the device db for TPUs only).
    let duty = duty_cycle::tpu_duty_cycle(space, &planes)?;
    let device_type =
        planes[0].stat(crate::decode::xplane::names::DEVICE_TYPE_STRING).and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
    let has_steps = planes.iter().flat_map(|p| &p.lines).any(|l| tpu::STEP_LINES.contains(&l.header.name.as_str()) && l.event_count > 0);
    Ok(DeviceOps {
        hardware: HardwareType::Tpu,
        device_type,
        core_count: planes.len() as u32,
        has_steps,
        perf_env: tpu_perf_env(planes[0]),
        db: OpMetricsDb { busy_time_ps: duty.busy_ps, idle_time_ps: duty.idle_ps, ..combined.finish() },
        uncosted: Vec::new(),
    })
}

/// A TPU's peaks from its plane's stats (XProf's `GetPerfEnvFromXPlane`): bandwidths indexed HBM,
/// SRAM read/write, CMEM read/write, VMEM read/write.
fn tpu_perf_env(plane: &Plane) -> PerfEnv {
    let number = |name: &str| match plane.stat(name) {
        Some(StatValue::Double(d)) => d,
        Some(v) => v.as_i64().unwrap_or(0) as f64,
        None => 0.0,
    };
    let peak_tera_flops_per_second = number("peak_teraflops_per_second");
    let bws: Vec<f64> = [
        "peak_hbm_bw_gigabytes_per_second",
        "peak_sram_rd_bw_gigabytes_per_second",
        "peak_sram_wr_bw_gigabytes_per_second",
        "peak_cmem_rd_bw_gigabytes_per_second",
        "peak_cmem_wr_bw_gigabytes_per_second",
        "peak_vmem_rd_bw_gigabytes_per_second",
        "peak_vmem_wr_bw_gigabytes_per_second",
    ]
    .iter()
    .map(|n| number(n))
    .collect();
    PerfEnv {
        peak_tera_flops_per_second,
        peak_hbm_bw_giga_bytes_per_second: bws[0],
        ridge_point: peak_tera_flops_per_second * 1e3 / bws[0],
        has_cmem: bws[3] > 0.0 || bws[4] > 0.0,
        has_merged_vmem: number("has_merged_vmem") != 0.0,
        has_megacore: number("has_megacore") != 0.0,
        peak_bws_giga_bytes_per_second: bws,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uncosted_ops_give_one_note_naming_the_first() {
        let op = |name: &str| UncostedOp { program_id: 1, instruction: name.into(), reason: CostError::Unsupported("all-reduce".into()) };
        let mut ops = DeviceOps::default();
        assert_eq!(ops.cost_note(), None);
        ops.uncosted = vec![op("all-reduce.1"), op("all-reduce.2")];
        assert_eq!(
            ops.cost_note().as_deref(),
            Some(
                "FLOPs and bytes of HLO op `all-reduce.1` and 1 other op are shown as 0 (as XProf shows an op it cannot cost): \
                 XProf's GPU cost of HLO opcode `all-reduce` is not modelled by Tidemark"
            )
        );
    }
}
