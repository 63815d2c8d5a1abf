//! The op metrics of a run's hosts combined, as XProf combines the op stats of several hosts for
//! "all hosts" (`CombineAllOpStats`): every op tool of a run reads them as a single file's tools read
//! [`FileOpMetrics`] (the scope's op metrics, [`super::Session::op_metrics`]).

use super::op_metrics::FileOpMetrics;
use crate::analysis::device_ops::DeviceOps;
use crate::analysis::kernel_stats::KernelStats;
use crate::analysis::op_metrics::{HardwareType, OpMetricsDbBuilder, PerfEnv};
use crate::analysis::overview_page::RunEnvironment;
use std::sync::Arc;

/// XProf's order of hardware types (`UNKNOWN_HARDWARE < CPU_ONLY < GPU < TPU`).
fn rank(h: HardwareType) -> u8 {
    match h {
        HardwareType::Unknown => 0,
        HardwareType::CpuOnly => 1,
        HardwareType::Gpu => 2,
        HardwareType::Tpu => 3,
    }
}

/// The peaks of several hosts (XProf's `CombinePerfEnv`): the last host's peak compute and ridge point
/// that are set, the first host's bandwidths that are; nothing else (XProf leaves the rest unset).
fn combine_perf_env<'a>(envs: impl Iterator<Item = &'a PerfEnv>) -> PerfEnv {
    let mut dst = PerfEnv::default();
    for src in envs {
        if src.peak_tera_flops_per_second > 0.0 {
            dst.peak_tera_flops_per_second = src.peak_tera_flops_per_second;
        }
        if !src.peak_bws_giga_bytes_per_second.is_empty() && dst.peak_bws_giga_bytes_per_second.is_empty() {
            dst.peak_bws_giga_bytes_per_second.clone_from(&src.peak_bws_giga_bytes_per_second);
        }
        if src.ridge_point > 0.0 {
            dst.ridge_point = src.ridge_point;
        }
    }
    dst
}

/// The hosts' op metrics combined: host and device dbs added row by row (host rows without adding
/// core counts), kernel reports appended and the longest kept, modules merged (the first host's of a
/// program id wins), run and perf environments combined. A host whose device side Tidemark cannot read
/// makes the run's device side that host's reason.
pub(super) fn combine(hosts: &[(Arc<FileOpMetrics>, Vec<String>)]) -> FileOpMetrics {
    let mut host = OpMetricsDbBuilder::new();
    let host_ops = hosts.iter().all(|(m, _)| m.host.is_some());
    let mut modules = hosts[0].0.modules.clone();
    let mut reports = Vec::new();
    for (m, _) in hosts {
        if let Some(h) = &m.host {
            host.combine(h, false);
        }
        modules.merge(&m.modules);
        reports.extend(m.kernel_stats.reports.iter().cloned());
    }
    let device = match hosts.iter().find_map(|(m, _)| m.device.as_ref().err()) {
        Some(e) => Err(e.clone()),
        None => Ok(Arc::new(combine_device(hosts.iter().filter_map(|(m, _)| m.device.as_ref().ok())))),
    };
    let run_environment = RunEnvironment::combined(hosts.iter().map(|(m, names)| (&m.run_environment, names.as_slice())));
    // XLA ops on CPU is a per-host view (Tidemark's own, not combined by XProf): a run has none.
    FileOpMetrics::new(
        host_ops.then(|| host.finish()),
        modules,
        device,
        KernelStats::longest(reports),
        run_environment,
        Some(Arc::default()),
    )
}

/// The hosts' device op dbs combined (XProf's combined `device_op_metrics_db`, core counts added).
fn combine_device<'a>(parts: impl Iterator<Item = &'a Arc<DeviceOps>>) -> DeviceOps {
    let parts: Vec<&Arc<DeviceOps>> = parts.collect();
    let mut db = OpMetricsDbBuilder::new();
    for d in &parts {
        db.combine(&d.db, true);
    }
    let with_device = parts.iter().filter(|d| d.hardware != HardwareType::CpuOnly);
    DeviceOps {
        hardware: parts.iter().map(|d| d.hardware).max_by_key(|h| rank(*h)).unwrap_or_default(),
        device_type: with_device.clone().next_back().map(|d| d.device_type.clone()).unwrap_or_default(),
        core_count: parts.iter().map(|d| d.core_count).sum(),
        has_steps: parts.iter().any(|d| d.has_steps),
        perf_env: combine_perf_env(with_device.map(|d| &d.perf_env)),
        db: db.finish(),
        uncosted: {
            let mut uncosted: Vec<_> = parts.iter().flat_map(|d| d.uncosted.iter().cloned()).collect();
            uncosted.sort();
            uncosted.dedup();
            uncosted
        },
    }
}
