//! An op's rates and what bounds it, from its summed FLOPs, bytes and time and the device's peaks
//! (XProf's `SetRooflineMetrics`): the columns framework op stats, HLO op stats and the roofline model
//! share. Rates use total time (self plus children), as the FLOPs and bytes include the children's.

use super::{memory_space, safe_divide, MemoryOperation, OpMetrics};
use serde::{Deserialize, Serialize};

/// The device's peak rates (XProf's `PerfEnv`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PerfEnv {
    /// Peak compute of one core, TFLOP/s.
    pub peak_tera_flops_per_second: f64,
    /// Peak off-chip bandwidth, GB/s (used when [`PerfEnv::peak_bws_giga_bytes_per_second`] lacks an entry).
    pub peak_hbm_bw_giga_bytes_per_second: f64,
    /// Peak bandwidths, GB/s, indexed by XProf's `MemBwType`: 0 HBM, 1 SRAM read, 2 SRAM write
    /// (GPU: shared memory / L1), 3 CMEM read, 4 CMEM write, 5 VMEM read, 6 VMEM write.
    pub peak_bws_giga_bytes_per_second: Vec<f64>,
    /// Minimum operational intensity at peak compute, FLOP/byte.
    pub ridge_point: f64,
    pub has_cmem: bool,
    pub has_merged_vmem: bool,
    pub has_megacore: bool,
}

impl PerfEnv {
    /// The peak bandwidth of `MemBwType` `index`, GB/s (XProf's `GetMemoryPeakBandwidth`).
    pub fn peak_bw_giga_bytes_per_second(&self, index: usize) -> f64 {
        self.peak_bws_giga_bytes_per_second.get(index).copied().unwrap_or(self.peak_hbm_bw_giga_bytes_per_second)
    }
}

/// The machine the trace ran on (XProf's `HardwareType`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum HardwareType {
    #[default]
    Unknown,
    CpuOnly,
    Gpu,
    Tpu,
}

impl HardwareType {
    /// XProf's enum name (`CPU_ONLY`, ...), as its pages print it.
    pub fn xprof_name(self) -> &'static str {
        match self {
            HardwareType::Unknown => "UNKNOWN_HARDWARE",
            HardwareType::CpuOnly => "CPU_ONLY",
            HardwareType::Gpu => "GPU",
            HardwareType::Tpu => "TPU",
        }
    }
}

/// The rate columns of one op row.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RooflineMetrics {
    /// `flops_v2` per ns of total time: GFLOP/s.
    pub measured_flop_rate: f64,
    /// `model_flops_v2` per ns: GFLOP/s.
    pub model_flop_rate: f64,
    /// All bytes accessed per ns, in GiB/s.
    pub measured_memory_bw: f64,
    /// FLOPs per byte accessed.
    pub operational_intensity: f64,
    pub hbm_bw: f64,
    pub cmem_read_bw: f64,
    pub cmem_write_bw: f64,
    pub vmem_read_bw: f64,
    pub vmem_write_bw: f64,
    pub hbm_operational_intensity: f64,
    pub cmem_read_operational_intensity: f64,
    pub cmem_write_operational_intensity: f64,
    pub vmem_read_operational_intensity: f64,
    pub vmem_write_operational_intensity: f64,
    /// The resource with the highest utilisation: `Compute`, `HBM`, `CMEM Read`, `CMEM Write`,
    /// `VMEM Read`, `VMEM Write`, `Shm/L1`; `Unknown` when none is used.
    pub bound_by: &'static str,
    pub bottleneck_operational_intensity: f64,
}

/// GB/s → GiB/s (XProf's `GigaToGibi`).
pub fn giga_to_gibi(giga: f64) -> f64 {
    giga / ((1u64 << 30) as f64 / 1e9)
}

/// Bytes per ns as GiB/s (XProf's `GibibytesPerSecond`).
fn gibibytes_per_second(bytes: f64, ns: f64) -> f64 {
    giga_to_gibi(safe_divide(bytes, ns))
}

fn ps_to_ns(ps: u64) -> f64 {
    ps as f64 / 1e3
}

/// XProf's `SetRooflineMetrics` for one row. `apply_time_scale_factor`: the on-chip bandwidths use the
/// row's normalised time (the roofline model does; the op tables do not).
pub fn roofline_metrics(m: &OpMetrics, perf_env: &PerfEnv, hardware: HardwareType, apply_time_scale_factor: bool) -> RooflineMetrics {
    let time_ns = ps_to_ns(m.time_ps);
    let mut r = RooflineMetrics {
        measured_flop_rate: safe_divide(m.flops_v2, time_ns),
        model_flop_rate: safe_divide(m.model_flops_v2, time_ns),
        measured_memory_bw: giga_to_gibi(safe_divide(m.bytes_accessed as f64, time_ns)),
        operational_intensity: safe_divide(m.flops_v2, m.bytes_accessed as f64),
        bound_by: "Unknown",
        ..RooflineMetrics::default()
    };
    let (mut hbm, mut cmem_rd, mut cmem_wr, mut vmem_rd, mut vmem_wr) = (0u64, 0u64, 0u64, 0u64, 0u64);
    for a in &m.memory_accessed_breakdown {
        let slot = match (a.memory_space, a.operation_type) {
            (memory_space::HBM, _) => &mut hbm,
            (memory_space::CMEM, MemoryOperation::Read) => &mut cmem_rd,
            (memory_space::CMEM, MemoryOperation::Write) => &mut cmem_wr,
            (memory_space::VMEM, MemoryOperation::Read) => &mut vmem_rd,
            (memory_space::VMEM, MemoryOperation::Write) => &mut vmem_wr,
            _ => continue,
        };
        *slot = slot.wrapping_add(a.bytes_accessed);
    }
    if m.memory_accessed_breakdown.is_empty() {
        // Profiles without a breakdown: every byte counts as HBM.
        hbm = m.bytes_accessed;
    }
    let device_ns = if apply_time_scale_factor { ps_to_ns(m.normalized_time_ps) } else { time_ns };
    r.hbm_bw = gibibytes_per_second(hbm as f64, time_ns);
    r.cmem_read_bw = gibibytes_per_second(cmem_rd as f64, device_ns);
    r.cmem_write_bw = gibibytes_per_second(cmem_wr as f64, device_ns);
    r.vmem_read_bw = gibibytes_per_second(vmem_rd as f64, device_ns);
    r.vmem_write_bw = gibibytes_per_second(vmem_wr as f64, device_ns);
    r.hbm_operational_intensity = safe_divide(m.flops_v2, hbm as f64);
    r.cmem_read_operational_intensity = safe_divide(m.flops_v2, cmem_rd as f64);
    r.cmem_write_operational_intensity = safe_divide(m.flops_v2, cmem_wr as f64);
    r.vmem_read_operational_intensity = safe_divide(m.flops_v2, vmem_rd as f64);
    r.vmem_write_operational_intensity = safe_divide(m.flops_v2, vmem_wr as f64);

    // The resource whose utilisation is highest bounds the op; the first wins a tie.
    let mut best = (0.0, "Unknown", 0.0);
    let mut consider = |name: &'static str, utilization: f64, intensity: f64| {
        if best.0 < utilization {
            best = (utilization, name, intensity);
        }
    };
    consider("Compute", safe_divide(r.measured_flop_rate, perf_env.peak_tera_flops_per_second * 1e3), r.operational_intensity);
    consider("HBM", safe_divide(r.hbm_bw, giga_to_gibi(perf_env.peak_bw_giga_bytes_per_second(0))), r.hbm_operational_intensity);
    if hardware == HardwareType::Tpu {
        let on_chip = [
            (cmem_rd, 3, "CMEM Read", r.cmem_read_bw, r.cmem_read_operational_intensity),
            (cmem_wr, 4, "CMEM Write", r.cmem_write_bw, r.cmem_write_operational_intensity),
            (vmem_rd, 5, "VMEM Read", r.vmem_read_bw, r.vmem_read_operational_intensity),
            (vmem_wr, 6, "VMEM Write", r.vmem_write_bw, r.vmem_write_operational_intensity),
        ];
        for (bytes, index, name, bw, intensity) in on_chip {
            let peak = perf_env.peak_bw_giga_bytes_per_second(index);
            if bytes != 0 && peak != 0.0 {
                consider(name, safe_divide(bw, giga_to_gibi(peak)), intensity);
            }
        }
    }
    if hardware == HardwareType::Gpu {
        let peak = perf_env.peak_bw_giga_bytes_per_second(2);
        if peak != 0.0 {
            consider("Shm/L1", safe_divide(r.hbm_bw, giga_to_gibi(peak)), r.hbm_operational_intensity);
        }
    }
    (_, r.bound_by, r.bottleneck_operational_intensity) = best;
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_rows_are_unknown_bound_with_zero_rates() {
        let m = OpMetrics { time_ps: 5_000_000, occurrences: 1, ..OpMetrics::default() };
        let r = roofline_metrics(&m, &PerfEnv::default(), HardwareType::CpuOnly, false);
        assert_eq!((r.measured_flop_rate, r.measured_memory_bw, r.operational_intensity, r.bound_by), (0.0, 0.0, 0.0, "Unknown"));
    }

    #[test]
    fn the_most_utilised_resource_bounds() {
        // 1e9 FLOPs and 1e8 bytes in 1 ms: 1000 GFLOP/s, 100 GB/s.
        let m =
            OpMetrics { time_ps: 1_000_000_000, flops_v2: 1e9, model_flops_v2: 1e9, bytes_accessed: 100_000_000, ..OpMetrics::default() };
        let env = |tflops: f64, hbm_gbs: f64| PerfEnv {
            peak_tera_flops_per_second: tflops,
            peak_hbm_bw_giga_bytes_per_second: hbm_gbs,
            ..PerfEnv::default()
        };
        let compute = roofline_metrics(&m, &env(2.0, 1000.0), HardwareType::Gpu, false);
        assert_eq!((compute.bound_by, compute.measured_flop_rate, compute.operational_intensity), ("Compute", 1000.0, 10.0));
        let hbm = roofline_metrics(&m, &env(100.0, 150.0), HardwareType::Gpu, false);
        assert_eq!(hbm.bound_by, "HBM");
        assert!((hbm.measured_memory_bw - 100.0 / 1.073741824).abs() < 1e-9);
    }
}
