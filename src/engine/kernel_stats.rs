//! What the Kernel Stats page draws: XProf's `kernel_stats` table as columns (rows by index, longest
//! total duration first) and the figures of its summary line (kernel time, and the shares of it on
//! Tensor Cores and in ops that could use them), over the whole trace or a step's window.

use super::{EngineError, Scope, Session};
use crate::analysis::kernel_stats::{ns_to_us as us, KernelStats};
use crate::analysis::op_metrics::safe_divide;
use serde::{Deserialize, Serialize};

/// XProf's Kernel Stats table, column by column: entry `i` of every vector is row `i`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KernelStatsColumns {
    pub kernel_name: Vec<String>,
    pub registers_per_thread: Vec<u32>,
    /// Static plus dynamic shared memory per block.
    pub shmem_bytes: Vec<u64>,
    pub block_dim: Vec<[u32; 3]>,
    pub grid_dim: Vec<[u32; 3]>,
    /// Theoretical occupancy, percent (as XProf's column).
    pub occupancy_pct: Vec<f64>,
    pub op_tensor_core_eligible: Vec<bool>,
    pub kernel_uses_tensor_core: Vec<bool>,
    /// The framework op that launched the kernel; empty when the trace does not say.
    pub op_name: Vec<String>,
    pub occurrences: Vec<u64>,
    /// µs, from whole ns as XProf keeps them (the average is XProf's integer division).
    pub total_duration_us: Vec<f64>,
    pub avg_duration_us: Vec<f64>,
    pub min_duration_us: Vec<f64>,
    pub max_duration_us: Vec<f64>,
}

/// The page's reply: the table and its summary.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KernelStatsView {
    pub columns: KernelStatsColumns,
    /// Σ kernel time of the rows, µs.
    pub total_duration_us: f64,
    /// Of that, the share in kernels using Tensor Cores.
    pub tensor_core_fraction: f64,
    /// Of that, the share in kernels of ops that are Tensor Core eligible.
    pub eligible_fraction: f64,
    /// Of that, the share in kernels of eligible ops that do not use Tensor Cores (the opportunity).
    pub eligible_unused_fraction: f64,
}

impl KernelStatsView {
    /// The rows of `stats` as columns, with the summary.
    pub fn of(stats: &KernelStats) -> KernelStatsView {
        let mut c = KernelStatsColumns::default();
        let (mut total_ns, mut tensor_core_ns, mut eligible_ns, mut unused_ns) = (0u64, 0u64, 0u64, 0u64);
        for r in &stats.reports {
            let k = &r.key;
            c.kernel_name.push(k.name.clone());
            c.registers_per_thread.push(k.registers_per_thread);
            c.shmem_bytes.push(r.shmem_bytes());
            c.block_dim.push(k.block_dim);
            c.grid_dim.push(k.grid_dim);
            c.occupancy_pct.push(r.occupancy_pct);
            c.op_tensor_core_eligible.push(k.is_op_tensor_core_eligible);
            c.kernel_uses_tensor_core.push(k.is_kernel_using_tensor_core);
            c.op_name.push(k.op_name.clone());
            c.occurrences.push(r.occurrences);
            c.total_duration_us.push(us(r.total_duration_ns));
            c.avg_duration_us.push(us(r.avg_duration_ns()));
            c.min_duration_us.push(us(r.min_duration_ns));
            c.max_duration_us.push(us(r.max_duration_ns));
            total_ns += r.total_duration_ns;
            if k.is_kernel_using_tensor_core {
                tensor_core_ns += r.total_duration_ns;
            }
            if k.is_op_tensor_core_eligible {
                eligible_ns += r.total_duration_ns;
                if !k.is_kernel_using_tensor_core {
                    unused_ns += r.total_duration_ns;
                }
            }
        }
        let share = |ns: u64| safe_divide(ns as f64, total_ns as f64);
        KernelStatsView {
            columns: c,
            total_duration_us: us(total_ns),
            tensor_core_fraction: share(tensor_core_ns),
            eligible_fraction: share(eligible_ns),
            eligible_unused_fraction: share(unused_ns),
        }
    }
}

impl Session {
    /// The Kernel Stats page of `scope`: its hosts' kernels (no rows for a trace without GPU kernels).
    pub fn kernel_stats_view(&mut self, scope: &Scope) -> Result<KernelStatsView, EngineError> {
        Ok(KernelStatsView::of(&*self.kernel_stats(scope)?))
    }
}
