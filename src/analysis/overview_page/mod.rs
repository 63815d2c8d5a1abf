//! The Overview Page (XProf's `overview_page`): the run environment, the host's op figures, the
//! step-time breakdown and verdict of the Input Pipeline Analyzer, and XProf's recommendation. Plain
//! data; [`xprof_json`] writes XProf's JSON from it.
//!
//! Top device ops need a device op table: host-only traces have none (the table is empty, as in
//! XProf), and device traces are not covered here (their steps come from the device).

pub mod run_environment;
pub mod xprof_json;

use crate::analysis::input_pipeline::InputPipeline;
use crate::analysis::op_metrics::{safe_divide, OpMetricsDb};
use crate::analysis::steps::StepDb;
pub use run_environment::RunEnvironment;

/// What the page says beyond the input pipeline analysis.
#[derive(Debug, Clone, PartialEq)]
pub struct OverviewPage {
    pub run_environment: RunEnvironment,
    /// Share (%) of the framework ops run on the host (all of them without a device op table;
    /// 0 where there are none, as in a JAX trace without TensorFlow ops).
    pub host_tf_op_percent: f64,
    /// Share (%) of the host ops' self time (idle excluded) spent in eager execution.
    pub host_op_time_eager_percent: f64,
    pub input: InputPipeline,
}

impl OverviewPage {
    pub fn new(db: &StepDb, host_ops: &OpMetricsDb, run_environment: RunEnvironment) -> Self {
        // XProf counts occurrences as its host op table has them (allocator events naming an op
        // included).
        let host_ops_run: u64 = host_ops.metrics.iter().map(|o| o.occurrences).sum();
        let (mut busy_ps, mut eager_ps) = (0u64, 0u64);
        for o in host_ops.metrics.iter().filter(|o| !o.is_idle()) {
            busy_ps += o.self_time_ps;
            if o.is_eager {
                eager_ps += o.self_time_ps;
            }
        }
        let percent = |x: u64, total: u64| 100.0 * safe_divide(x as f64, total as f64);
        OverviewPage {
            input: InputPipeline::new(db, host_ops, run_environment.hardware_type),
            run_environment,
            host_tf_op_percent: percent(host_ops_run, host_ops_run),
            host_op_time_eager_percent: percent(eager_ps, busy_ps),
        }
    }
}
