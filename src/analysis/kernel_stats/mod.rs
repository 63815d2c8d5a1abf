//! GPU Kernel Stats: every kernel the device planes ran, grouped by (kernel, launch parameters, op),
//! with occurrences and durations; XProf's `kernel_stats` tool.
//!
//! A kernel is a device event with a `kernel_details` stat and a non-zero duration (in whole ns, as
//! XProf truncates it) on a line that is not derived. Its op is the name part of the framework op of
//! the HLO instruction that launched it (`hlo_op` + `program_id` stats looked up in the trace's HLO
//! modules), else of its `tf_op` stat, else none.
//!
//! Limited to a [`TimeWindow`] (a step; Tidemark's own, XProf's table covers the whole trace), only
//! the kernels that *start* inside it (their line's start plus their offset) are counted, whatever
//! their end: the tables of windows that cut the trace add up, row by row, to the whole trace's.

pub mod launch;
pub mod tensor_core;
pub mod xprof_json;

use crate::analysis::device_ops::gpu_perf::GpuCapabilities;
use crate::analysis::device_planes::device_planes;
use crate::analysis::gpu_events::{self, GpuEventStats};
use crate::analysis::op_metrics::{parse_tf_op_fullname, TimeWindow};
use crate::analysis::xla_modules::XlaModules;
use crate::decode::xplane::{Plane, XSpace};
use crate::decode::DecodeError;
use launch::LaunchParams;
use std::collections::HashMap;

/// At most this many kernels are reported (the longest in total), as in XProf.
pub const MAX_KERNELS: usize = 1000;

/// Whole ns as µs, as XProf writes the duration columns.
pub fn ns_to_us(ns: u64) -> f64 {
    ns as f64 / 1e3
}

/// What identifies a kernel row: two launches with equal keys are one row.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KernelKey {
    pub name: String,
    pub grid_dim: [u32; 3],
    pub block_dim: [u32; 3],
    pub registers_per_thread: u32,
    pub static_shmem_bytes: u32,
    pub dynamic_shmem_bytes: u32,
    pub is_kernel_using_tensor_core: bool,
    pub is_op_tensor_core_eligible: bool,
    pub op_name: String,
}

/// One row of Kernel Stats.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelReport {
    pub key: KernelKey,
    /// Theoretical occupancy of the first launch seen (not part of the key, as in XProf).
    pub occupancy_pct: f64,
    pub occurrences: u64,
    pub total_duration_ns: u64,
    pub min_duration_ns: u64,
    pub max_duration_ns: u64,
}

impl KernelReport {
    /// Mean duration in whole ns (XProf divides integers).
    pub fn avg_duration_ns(&self) -> u64 {
        self.total_duration_ns / self.occurrences.max(1)
    }

    pub fn shmem_bytes(&self) -> u64 {
        u64::from(self.key.static_shmem_bytes) + u64::from(self.key.dynamic_shmem_bytes)
    }
}

/// Kernel Stats of a trace: rows by total duration, longest first; equal totals by key
/// ([`KernelKey`]'s field order: name, grid, block, registers, shared memory, Tensor Core flags, op).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KernelStats {
    pub reports: Vec<KernelReport>,
}

/// Kernel Stats of the kernels of `space` that start inside `window` (all of them without one).
pub fn analyze(space: &XSpace, modules: &XlaModules, window: Option<TimeWindow>) -> Result<KernelStats, DecodeError> {
    let mut rows: HashMap<KernelKey, KernelReport> = HashMap::new();
    for plane in device_planes(space).map(|(_, p)| p).unwrap_or_default() {
        for_each_kernel(space, plane, modules, window, |key, params, duration_ns| {
            let row = rows.entry(key).or_insert_with_key(|key| KernelReport {
                key: key.clone(),
                occupancy_pct: params.occupancy_pct,
                occurrences: 0,
                total_duration_ns: 0,
                min_duration_ns: u64::MAX,
                max_duration_ns: 0,
            });
            row.occurrences += 1;
            row.total_duration_ns += duration_ns;
            row.min_duration_ns = row.min_duration_ns.min(duration_ns);
            row.max_duration_ns = row.max_duration_ns.max(duration_ns);
        })?;
    }
    Ok(KernelStats::longest(rows.into_values().collect()))
}

impl KernelStats {
    /// `reports` longest first (equal totals by key), the [`MAX_KERNELS`] longest kept (XProf's
    /// `SortAndKeepTopKDurationKernelReportsInDb`, also how it combines the reports of several hosts,
    /// which it appends without merging equal kernels).
    pub fn longest(mut reports: Vec<KernelReport>) -> Self {
        reports.sort_by(|a, b| b.total_duration_ns.cmp(&a.total_duration_ns).then_with(|| a.key.cmp(&b.key)));
        reports.truncate(MAX_KERNELS);
        KernelStats { reports }
    }
}

/// Calls `visit` with the key, launch parameters and duration (ns) of every kernel of `plane` that
/// starts inside `window`.
fn for_each_kernel(
    space: &XSpace,
    plane: &Plane,
    modules: &XlaModules,
    window: Option<TimeWindow>,
    mut visit: impl FnMut(KernelKey, LaunchParams, u64),
) -> Result<(), DecodeError> {
    let vendor = GpuCapabilities::of(plane).vendor;
    gpu_events::for_each_event(space, plane, window, |event, stats| {
        let duration_ns = u64::try_from(event.header.duration_ps / 1000).unwrap_or(0);
        if duration_ns == 0 || !stats.is_kernel() {
            return;
        }
        let params = launch::parse(&stats.kernel_details);
        let name = plane.event_name(event.header.metadata_id);
        visit(key(&stats, name, &vendor, &params, modules), params, duration_ns);
    })
}

/// The row key of a kernel of a device of `vendor`: the op and its Tensor Core eligibility from the
/// `tf_op` stat first, then from the HLO instruction, which wins where the trace's modules have it.
fn key(stats: &GpuEventStats, name: &str, vendor: &str, params: &LaunchParams, modules: &XlaModules) -> KernelKey {
    let uses_tensor_core = tensor_core::is_kernel_using_tensor_core(vendor, name);
    let (mut op_name, mut eligible) = (String::new(), false);
    if !stats.tf_op.is_empty() {
        op_name = parse_tf_op_fullname(&stats.tf_op).name.to_string();
        eligible = tensor_core::is_einsum_tensor_core_eligible(&stats.equation)
            || tensor_core::is_op_tensor_core_eligible(&op_name)
            || uses_tensor_core;
    }
    let instruction = stats.program_id.filter(|_| !stats.hlo_op.is_empty()).and_then(|p| modules.instruction(p, &stats.hlo_op));
    if let Some(instruction) = instruction {
        op_name = parse_tf_op_fullname(&instruction.tf_op_name).name.to_string();
        eligible |= tensor_core::is_op_tensor_core_eligible(&op_name);
    }
    KernelKey {
        name: name.to_string(),
        grid_dim: params.grid_dim,
        block_dim: params.block_dim,
        registers_per_thread: params.registers_per_thread,
        static_shmem_bytes: params.static_shmem_bytes,
        dynamic_shmem_bytes: params.dynamic_shmem_bytes,
        is_kernel_using_tensor_core: uses_tensor_core,
        is_op_tensor_core_eligible: eligible,
        op_name,
    }
}
