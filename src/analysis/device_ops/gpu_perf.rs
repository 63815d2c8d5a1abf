//! A GPU's peaks from the capabilities its plane records (XProf's `GetDeviceCaps` and the GPU branch
//! of `GetPerfEnvFromXPlane`): peak FLOP/s from the cores, the clock and what one core does per cycle,
//! device-memory bandwidth as recorded, shared-memory (LDS) bandwidth from the cores and the clock.
//!
//! Per-cycle figures are known for AMD's CDNA GPUs (from AMD's architecture white papers, as XProf
//! tabulates them); other GPUs' peaks are not modelled (zero), see [`GpuCapabilities::knows_peaks`].

use crate::analysis::op_metrics::PerfEnv;
use crate::decode::xplane::{Plane, StatValue};

const AMD: &str = "AMD";

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

    /// The model as XProf names it (`AMD GPU - gfx942`); `GPU` for other vendors, whose names
    /// Tidemark does not derive.
    pub fn model_name(&self) -> String {
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

    /// Whether Tidemark knows this device's per-cycle compute and shared-memory figures.
    pub fn knows_peaks(&self) -> bool {
        self.vendor == AMD && amd_flops_per_core_cycle(self.amd_gfx_version()) > 0.0
    }

    /// The device's peaks; a peak recorded on the plane wins over the derived one.
    pub fn perf_env(&self, plane: &Plane) -> PerfEnv {
        let recorded = |name: &str| match plane.stat(name) {
            Some(StatValue::Double(d)) => d,
            _ => 0.0,
        };
        let (flops_per_cycle, lds_bytes_per_cycle) = if self.vendor == AMD {
            let gfx = self.amd_gfx_version();
            (amd_flops_per_core_cycle(gfx), amd_lds_bytes_per_core_cycle(gfx))
        } else {
            (0.0, 0.0)
        };
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
