//! The Overview Page (XProf's `overview_page`): the run environment, the host's op figures, the
//! step-time breakdown and verdict of the Input Pipeline Analyzer, and XProf's recommendation. Plain
//! data; [`xprof_json`] writes XProf's JSON from it.
//!
//! Top device ops come from the device op table, folded into framework ops: host-only traces have
//! none (the table is empty, as in XProf); TPU and GPU traces have one (on a GPU, a trace whose
//! kernels Tidemark cannot cost leaves them out). Device traces' steps, which XProf takes from the
//! device, are not computed here (see [`crate::analysis::steps`]).

pub mod recommendation;
pub mod run_environment;
pub mod xprof_json;

use crate::analysis::device_ops::tf_ops::tf_metrics_db;
use crate::analysis::input_pipeline::InputPipeline;
use crate::analysis::kernel_stats::KernelStats;
use crate::analysis::op_metrics::{safe_divide, OpMetricsDb};
use crate::analysis::steps::StepDb;
pub use recommendation::Tip;
pub use run_environment::RunEnvironment;
use serde::{Deserialize, Serialize};

/// What the page says beyond the input pipeline analysis.
#[derive(Debug, Clone, PartialEq)]
pub struct OverviewPage {
    pub run_environment: RunEnvironment,
    /// Share (%) of the framework ops run on the host (all of them without a device op table;
    /// 0 where there are none, as in a JAX trace without TensorFlow ops).
    pub host_tf_op_percent: f64,
    /// Share (%) of the host ops' self time (idle excluded) spent in eager execution.
    pub host_op_time_eager_percent: f64,
    /// Share (%) of the framework ops run on the device.
    pub device_tf_op_percent: f64,
    /// Share (%) of the device ops' self time (idle excluded) spent in eager execution.
    pub device_op_time_eager_percent: f64,
    /// The device's ten framework ops with the most self time (none without a device op table).
    pub top_device_ops: Vec<TopOp>,
    /// Shares (%) of the device compute time in the steps' events spent in half and in single
    /// precision (0 without device compute).
    pub device_compute_16bit_percent: f64,
    pub device_compute_32bit_percent: f64,
    /// XProf's advice when under 10% of the device compute is in half precision (empty otherwise).
    pub precision_statement: String,
    /// XProf's utilisation figures (the TPU analysis's idle times and duty cycle, the device's FLOP
    /// rate and HBM bandwidth against its peaks), or why there is none.
    pub utilisation: Utilisation,
    /// On a TPU, the chips' idle time within their programs' span (ps), the duty cycle's complement;
    /// `None` elsewhere.
    pub tpu_idle_time_ps: Option<u64>,
    pub input: InputPipeline,
}

/// One utilisation figure of the page, or why it has none. XProf writes `0.0%` for every kind of
/// absence; the page says which one it is.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "percent", rename_all = "snake_case")]
pub enum Figure {
    Percent(f64),
    /// The trace has no device to measure.
    NoDevice,
    /// XProf does not compute it for this hardware (the idle times and duty cycle come from its TPU
    /// analysis only; the TPU's FLOP rate and bandwidth against its peaks from no open-source path).
    NotReported,
    /// XProf computes it for this hardware; Tidemark does not yet.
    NotComputed,
}

impl Figure {
    /// The percentage XProf writes: the figure, or 0 where there is none.
    pub fn xprof_percent(self) -> f64 {
        match self {
            Figure::Percent(p) => p,
            _ => 0.0,
        }
    }
}

/// The page's utilisation figures (XProf's analysis table properties).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Utilisation {
    pub host_idle_time_percent: Figure,
    pub device_idle_time_percent: Figure,
    pub device_duty_cycle_percent: Figure,
    /// XProf 2.24's "high confidence" duty cycle, which counts every custom call as busy: the duty
    /// cycle itself on traces without custom calls (the only kind verified against XProf).
    pub device_duty_cycle_high_confidence_percent: Figure,
    pub flop_rate_utilization_relative_to_roofline: Figure,
    pub memory_bw_utilization_relative_to_hw_limit: Figure,
}

impl Utilisation {
    /// What can be said for `hardware_type` (XProf's name): a CPU-only trace has no device, and XProf's
    /// idle times and duty cycle come from its TPU analysis ([`Utilisation::tpu_analysis`]); the FLOP
    /// rate and HBM bandwidth against the peaks are XProf's to compute on GPUs and not computed here.
    fn of(hardware_type: &str, host_ops: &OpMetricsDb, device_ops: Option<&OpMetricsDb>) -> Self {
        use Figure::{NoDevice, NotComputed, NotReported};
        let (host, device_idle, duty_cycle, device) = match hardware_type {
            "TPU" => {
                let (device_idle, duty_cycle) = match device_ops {
                    Some(d) => tpu_device_analysis(d),
                    None => (NotComputed, NotComputed),
                };
                // XProf's open-source TPU analysis has no peaks to measure against: it writes 0.
                (Figure::Percent(idle_time_percent(host_ops)), device_idle, duty_cycle, NotReported)
            }
            "GPU" => (NotReported, NotReported, NotReported, NotComputed),
            _ => (NotReported, NoDevice, NoDevice, NoDevice),
        };
        Utilisation {
            host_idle_time_percent: host,
            device_idle_time_percent: device_idle,
            device_duty_cycle_percent: duty_cycle,
            device_duty_cycle_high_confidence_percent: duty_cycle,
            flop_rate_utilization_relative_to_roofline: device,
            memory_bw_utilization_relative_to_hw_limit: device,
        }
    }
}

/// XProf's TPU analysis of the device db: the share (%) of its time without ops (its idle row), and the
/// duty cycle (%), the share of the chips' program span in which some core runs an op.
fn tpu_device_analysis(device_ops: &OpMetricsDb) -> (Figure, Figure) {
    let (busy, idle) = (device_ops.busy_time_ps as f64, device_ops.idle_time_ps as f64);
    (Figure::Percent(idle_time_percent(device_ops)), Figure::Percent(100.0 * safe_divide(busy, busy + idle)))
}

/// The share (%) of a db's time without ops (XProf's `IdleTimeRatio`: all of it when the db has no time).
fn idle_time_percent(db: &OpMetricsDb) -> f64 {
    100.0 * (1.0 - safe_divide(db.total_op_time_ps as f64, db.total_time_ps as f64))
}

impl OverviewPage {
    /// The page of the steps `db`, the host op table and, where there is one, the device op table
    /// (XProf's HLO-op db, before folding into framework ops).
    pub fn new(db: &StepDb, host_ops: &OpMetricsDb, device_ops: Option<&OpMetricsDb>, run_environment: RunEnvironment) -> Self {
        let device_tf = device_ops.map(|d| tf_metrics_db(d, false)).unwrap_or_default();
        let (host_run, host_eager) = runs_and_eager_share(host_ops);
        let (device_run, device_eager) = runs_and_eager_share(&device_tf);
        let percent = |x: u64| 100.0 * safe_divide(x as f64, (host_run + device_run) as f64);
        let (c16, c32) = (db.precision.compute_16bit_ps, db.precision.compute_32bit_ps);
        let compute_percent = |x: u64| 100.0 * safe_divide(x as f64, (c16 + c32) as f64);
        OverviewPage {
            device_compute_16bit_percent: compute_percent(c16),
            device_compute_32bit_percent: compute_percent(c32),
            precision_statement: precision_statement(c16, c32),
            input: InputPipeline::new(db, host_ops, run_environment.hardware_type),
            utilisation: Utilisation::of(run_environment.hardware_type, host_ops, device_ops),
            tpu_idle_time_ps: (run_environment.hardware_type == "TPU").then(|| device_ops.map(|d| d.idle_time_ps)).flatten(),
            run_environment,
            host_tf_op_percent: percent(host_run),
            host_op_time_eager_percent: host_eager,
            device_tf_op_percent: percent(device_run),
            device_op_time_eager_percent: device_eager,
            top_device_ops: top_ops(&device_tf),
        }
    }
}

impl OverviewPage {
    /// Marks the top ops some of whose GPU kernels are Tensor Core eligible, or use Tensor Cores.
    pub fn mark_tensor_cores(&mut self, kernels: &KernelStats) {
        for op in &mut self.top_device_ops {
            for r in kernels.reports.iter().filter(|r| r.key.op_name == op.name) {
                op.tensor_core_eligible |= r.key.is_op_tensor_core_eligible;
                op.using_tensor_core |= r.key.is_kernel_using_tensor_core;
            }
        }
    }
}

/// Below this share (%) of device compute in half precision, XProf suggests using more of it.
const LOW_PRECISION_PERCENT: f64 = 10.0;

/// XProf's precision statement for `c16` ps of half- and `c32` ps of single-precision compute.
fn precision_statement(c16: u64, c32: u64) -> String {
    let total = c16 + c32;
    if total == 0 {
        return String::new();
    }
    let percent_16bit = 100.0 * c16 as f64 / total as f64;
    if percent_16bit >= LOW_PRECISION_PERCENT {
        return String::new();
    }
    format!(
        "Only {}% of device computation is 16 bit. So you might want to replace more 32-bit Ops by 16-bit Ops to improve performance (if the reduced accuracy is acceptable).",
        crate::analysis::input_pipeline::one_digit(percent_16bit)
    )
}

/// One of the device's top framework ops.
#[derive(Debug, Clone, PartialEq)]
pub struct TopOp {
    pub name: String,
    pub category: String,
    /// Fractions of the device's op time.
    pub self_time_fraction: f64,
    pub cumulative_time_fraction: f64,
    /// GFLOP/s (normalised FLOPs per ns).
    pub flop_rate: f64,
    /// On a GPU: whether some kernel of the op could use Tensor Cores, and whether one did (from the
    /// kernel stats, see [`OverviewPage::mark_tensor_cores`]).
    pub tensor_core_eligible: bool,
    pub using_tensor_core: bool,
}

/// How many top ops the page shows.
const TOP_OPS: usize = 10;

fn top_ops(device_tf: &OpMetricsDb) -> Vec<TopOp> {
    let mut cumulative = 0.0;
    device_tf
        .sorted_by_self_time(Some(TOP_OPS))
        .into_iter()
        .map(|m| {
            let self_time_fraction = safe_divide(m.self_time_ps as f64, device_tf.total_time_ps as f64);
            cumulative += self_time_fraction;
            TopOp {
                name: m.name.clone(),
                category: m.category.clone(),
                self_time_fraction,
                cumulative_time_fraction: cumulative,
                flop_rate: safe_divide(m.flops_v2, m.time_ps as f64 / 1e3),
                tensor_core_eligible: false,
                using_tensor_core: false,
            }
        })
        .collect()
}

/// The ops run (XProf counts occurrences as the table has them: a host table's allocator events naming
/// an op included), and the share (%) of non-idle self time spent in eager execution.
fn runs_and_eager_share(db: &OpMetricsDb) -> (u64, f64) {
    let runs = db.metrics.iter().map(|o| o.occurrences).sum();
    let (mut busy_ps, mut eager_ps) = (0u64, 0u64);
    for o in db.metrics.iter().filter(|o| !o.is_idle()) {
        busy_ps += o.self_time_ps;
        if o.is_eager {
            eager_ps += o.self_time_ps;
        }
    }
    (runs, 100.0 * safe_divide(eager_ps as f64, busy_ps as f64))
}
