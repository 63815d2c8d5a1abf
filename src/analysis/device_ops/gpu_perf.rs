//! A GPU's peaks from the capabilities its plane records (XProf's `GetDeviceCaps` and the GPU branch
//! of `GetPerfEnvFromXPlane`): peak FLOP/s from the cores, the clock and what one core does per cycle,
//! device-memory bandwidth as recorded, shared-memory (LDS) bandwidth from the cores and the clock.
//!
//! Per-cycle figures are known for NVIDIA GPUs (by compute capability, from NVIDIA's architecture
//! white papers, as XProf tabulates them) and AMD's CDNA GPUs (from AMD's white papers). A plane that
//! names no vendor (older TensorFlow recorded none) gets zero peaks, as in XProf: see
//! [`GpuCapabilities::knows_peaks`].

use crate::analysis::op_metrics::PerfEnv;
use crate::decode::xplane::{Plane, StatValue};

/// The `device_vendor` an AMD GPU's plane records.
pub const AMD: &str = "AMD";
/// The `device_vendor` an NVIDIA GPU's plane records.
pub const NVIDIA: &str = "Nvidia";

/// What a GPU plane says about its device.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GpuCapabilities {
    pub vendor: String,
    pub device_name: String,
    pub clock_rate_ghz: f64,
    pub core_count: u64,
    /// Device-memory bandwidth, bytes per second.
    pub memory_bandwidth: u64,
    pub compute_capability: (i64, i64),
}

impl GpuCapabilities {
    pub fn of(plane: &Plane) -> Self {
        let int = |name: &str| plane.stat(name).and_then(|v| v.as_i64()).unwrap_or(0);
        let text = |name: &str| plane.stat(name).and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
        GpuCapabilities {
            vendor: text("device_vendor"),
            device_name: text("gpu_device_name"),
            clock_rate_ghz: int("clock_rate") as f64 / 1e6,
            core_count: int("core_count").max(0) as u64,
            memory_bandwidth: int("memory_bandwidth").max(0) as u64,
            compute_capability: (int("compute_cap_major"), int("compute_cap_minor")),
        }
    }

    /// The AMD architecture (`gfx942`): the device name when it is one, else from the compute
    /// capability.
    fn amd_gfx_version(&self) -> &str {
        let well_formed = self.device_name.strip_prefix("gfx").is_some_and(|s| s.len() >= 3 && s.chars().all(|c| c.is_ascii_hexdigit()));
        if well_formed {
            return &self.device_name;
        }
        match self.compute_capability {
            (9, 4) => "gfx942",
            (9, 5) => "gfx950",
            _ => "",
        }
    }

    /// The model as XProf names it (`AMD GPU - gfx942`, `Nvidia GPU (Volta)`); `GPU` when the plane
    /// names no known vendor.
    pub fn model_name(&self) -> String {
        if self.vendor == NVIDIA {
            return nvidia_model_name(self.compute_capability).into();
        }
        if self.vendor != AMD {
            return "GPU".into();
        }
        let gfx = self.amd_gfx_version();
        if !gfx.is_empty() {
            return format!("AMD GPU - {gfx}");
        }
        match self.compute_capability.0 {
            9 => "AMD GPU - gfx-9XX series".into(),
            10 => "AMD GPU - gfx-10XX series".into(),
            11 => "AMD GPU - gfx-11XX series".into(),
            _ => "AMD GPU".into(),
        }
    }

    /// Whether this device's per-cycle compute and shared-memory figures are known (when not, XProf
    /// and Tidemark give zero peak FLOP/s and shared-memory bandwidth).
    pub fn knows_peaks(&self) -> bool {
        self.per_core_cycle().0 > 0.0
    }

    /// FLOPs and shared-memory bytes one core does per cycle (zeros for an unknown vendor or
    /// architecture).
    fn per_core_cycle(&self) -> (f64, f64) {
        match self.vendor.as_str() {
            AMD => {
                let gfx = self.amd_gfx_version();
                (amd_flops_per_core_cycle(gfx), amd_lds_bytes_per_core_cycle(gfx))
            }
            NVIDIA => (nvidia_flops_per_sm_cycle(self.compute_capability), nvidia_shared_bytes_per_sm_cycle(self.compute_capability.0)),
            _ => (0.0, 0.0),
        }
    }

    /// The device's peaks; a peak recorded on the plane wins over the derived one.
    pub fn perf_env(&self, plane: &Plane) -> PerfEnv {
        let recorded = |name: &str| match plane.stat(name) {
            Some(StatValue::Double(d)) => d,
            _ => 0.0,
        };
        let (flops_per_cycle, lds_bytes_per_cycle) = self.per_core_cycle();
        let mut peak_tera_flops_per_second = recorded("peak_teraflops_per_second");
        if peak_tera_flops_per_second <= 0.0 {
            peak_tera_flops_per_second = self.core_count as f64 * (flops_per_cycle * self.clock_rate_ghz / 1e3);
        }
        let hbm = self.memory_bandwidth as f64 / 1e9;
        let shared = self.core_count as f64 * (lds_bytes_per_cycle * self.clock_rate_ghz * 1e9 / 1e9);
        let on_chip = |name: &str| {
            let v = recorded(name);
            if v <= 0.0 {
                shared
            } else {
                v
            }
        };
        let bws = vec![hbm, on_chip("peak_sram_rd_bw_gigabytes_per_second"), on_chip("peak_sram_wr_bw_gigabytes_per_second")];
        PerfEnv {
            peak_tera_flops_per_second,
            peak_hbm_bw_giga_bytes_per_second: hbm,
            ridge_point: peak_tera_flops_per_second * 1e3 / hbm,
            peak_bws_giga_bytes_per_second: bws,
            ..PerfEnv::default()
        }
    }
}

/// The most FLOPs one compute unit does per cycle in FP32 or FP16, vector or matrix units; 0 for an
/// unknown architecture.
fn amd_flops_per_core_cycle(gfx: &str) -> f64 {
    match gfx {
        "gfx908" | "gfx90a" => 1024.0,
        "gfx942" => 2048.0,
        "gfx950" => 4096.0,
        _ => 0.0,
    }
}

/// Bytes one compute unit's LDS moves per cycle.
fn amd_lds_bytes_per_core_cycle(gfx: &str) -> f64 {
    match gfx {
        "gfx908" | "gfx90a" | "gfx942" => 128.0,
        "gfx950" => 256.0,
        _ => 0.0,
    }
}

/// The most FLOPs one NVIDIA SM does per cycle in FP32 or FP16, CUDA cores or Tensor Cores, by
/// compute capability (major, minor). A capability not listed takes the nearest older one listed, one
/// older than all of them the oldest (as XProf backs off).
fn nvidia_flops_per_sm_cycle((major, minor): (i64, i64)) -> f64 {
    // (capability × 1000 + minor × 10, max FLOPs per SM per cycle), newest first.
    const TABLE: [(i64, f64); 12] = [
        (10_000, 8192.0),
        (9_000, 4096.0),
        (8_090, 1024.0),
        (8_060, 1024.0),
        (8_000, 2048.0),
        (7_050, 1024.0),
        (7_000, 1024.0),
        (6_010, 256.0),
        (6_000, 256.0),
        (5_000, 256.0),
        (3_000, 384.0),
        (2_000, 64.0),
    ];
    let cap = major * 1000 + minor * 10;
    TABLE.iter().find(|(c, _)| *c <= cap).unwrap_or(&TABLE[TABLE.len() - 1]).1
}

/// Bytes one NVIDIA SM's shared memory moves per cycle: 32 banks of 4 bytes per 2 cycles up to
/// compute capability 2, of 8 bytes per cycle after.
fn nvidia_shared_bytes_per_sm_cycle(major: i64) -> f64 {
    if major <= 2 {
        32.0 * 4.0 / 2.0
    } else {
        32.0 * 8.0
    }
}

/// XProf's name of an NVIDIA GPU's architecture.
fn nvidia_model_name((major, minor): (i64, i64)) -> &'static str {
    match (major, minor) {
        (2, _) => "Nvidia GPU (Fermi)",
        (3, _) => "Nvidia GPU (Kepler)",
        (5, _) => "Nvidia GPU (Maxwell)",
        (6, _) => "Nvidia GPU (Pascal)",
        (7, m) if m < 5 => "Nvidia GPU (Volta)",
        (7, _) => "Nvidia GPU (Turing)",
        (8, m) if m < 9 => "Nvidia GPU (Ampere)",
        (8, _) => "Nvidia GPU (Ada Lovelace)",
        (9, _) => "Nvidia GPU (Hopper)",
        (10, _) => "Nvidia GPU (Blackwell)",
        _ => "Nvidia GPU",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nvidia(cap: (i64, i64)) -> GpuCapabilities {
        GpuCapabilities {
            vendor: NVIDIA.into(),
            clock_rate_ghz: 1.53,
            core_count: 80,
            memory_bandwidth: 898_048_000_000,
            compute_capability: cap,
            ..GpuCapabilities::default()
        }
    }

    /// A V100 (compute capability 7.0, 80 SMs at 1.53 GHz): 1024 FLOPs per SM per cycle on its Tensor
    /// Cores, 256 shared-memory bytes per SM per cycle.
    #[test]
    fn nvidia_peaks_follow_the_compute_capability() {
        let v100 = nvidia((7, 0));
        assert!(v100.knows_peaks());
        assert_eq!(v100.model_name(), "Nvidia GPU (Volta)");
        assert_eq!(v100.per_core_cycle(), (1024.0, 256.0));
        // A capability between two listed takes the older; one older than all, the oldest.
        assert_eq!(nvidia((7, 2)).per_core_cycle().0, 1024.0);
        assert_eq!(nvidia((8, 7)).per_core_cycle().0, 1024.0);
        assert_eq!(nvidia((12, 0)).per_core_cycle().0, 8192.0);
        assert_eq!(nvidia((1, 0)).per_core_cycle(), (64.0, 64.0));
    }

    /// A plane that names no vendor (the V100 TensorFlow trace's) has zero per-cycle figures.
    #[test]
    fn no_vendor_no_peaks() {
        let unnamed = GpuCapabilities { vendor: String::new(), ..nvidia((7, 0)) };
        assert!(!unnamed.knows_peaks());
        assert_eq!(unnamed.model_name(), "GPU");
    }
}
