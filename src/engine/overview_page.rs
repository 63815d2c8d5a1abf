//! The Overview Page of an opened file. Its steps need every host event read and grouped, so it is
//! computed once per file or run and kept ([`Session::overview_page`]); the Input Pipeline Analyzer
//! is part of it ([`Session::input_pipeline`]). Its op figures come from the file's one op-metrics
//! pass ([`Session::op_metrics`]). [`OverviewPageView`] is what the page draws.

use super::{EngineError, Scope, Session};
use crate::analysis::input_pipeline::{StepRow, CATEGORIES};
use crate::analysis::op_metrics::HardwareType;
use crate::analysis::overview_page::recommendation::tips;
use crate::analysis::overview_page::{OverviewPage, Tip, Utilisation};
use crate::analysis::steps;
use serde::{Deserialize, Serialize};

/// The tool's name in errors.
const TOOL: &str = "Overview Page";

impl Session {
    fn compute_overview_page(&mut self, file_ids: &[u32]) -> Result<OverviewPage, EngineError> {
        let m = self.op_metrics(&Scope::run(file_ids))?;
        // Where some host has devices, the hosts without any (coordinators) have no steps of the run
        // (XProf's `IsCoordinator`).
        let mut has_device = Vec::with_capacity(file_ids.len());
        for &id in file_ids {
            has_device.push(self.op_metrics(&Scope::file(id))?.hardware != HardwareType::CpuOnly);
        }
        let any_device = has_device.contains(&true);
        let mut dbs = Vec::with_capacity(file_ids.len());
        for (&id, &device) in file_ids.iter().zip(&has_device) {
            if any_device && !device {
                continue;
            }
            dbs.push(self.host_step_db(id, TOOL)?.clone());
        }
        let db = steps::intersection::combine(&dbs);
        let device = m.device.as_ref().ok();
        let host = self.host_ops(&m, &Scope::run(file_ids), TOOL)?;
        let mut page = OverviewPage::new(&db, host, device.map(|d| &d.db), m.run_environment.clone());
        page.mark_tensor_cores(&m.kernel_stats);
        Ok(page)
    }

    /// The Overview Page of the run `file_ids` (one file, or several hosts combined as XProf combines
    /// them: op tables added up, steps intersected), kept until one of its files is closed.
    pub fn overview_page(&mut self, file_ids: &[u32]) -> Result<&OverviewPage, EngineError> {
        if !self.overview_pages.contains_key(file_ids) {
            let page = self.compute_overview_page(file_ids)?;
            self.overview_pages.insert(file_ids.to_vec(), page);
        }
        Ok(&self.overview_pages[file_ids])
    }
}

/// What the Overview page draws: the summary, the steps as columns, the top device ops, the run
/// environment and XProf's recommendation. Figures XProf writes as text (`%.1f`) travel as numbers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OverviewPageView {
    /// XProf's hardware type name (`CPU_ONLY`, `GPU`, `TPU`).
    pub hardware_type: String,
    pub device_type: String,
    pub device_core_count: usize,
    pub host_count: u32,
    pub task_count: u32,
    pub is_training: bool,
    pub steps: StepColumns,
    /// Steps found before the first and last were dropped.
    pub steps_found: usize,
    /// The trace has GPU or TPU planes, whose steps XProf takes from the device: the steps here are
    /// the host's alone, without device time.
    pub device_steps_unsupported: bool,
    /// Step time statistics, ms; `None` without steps.
    pub step_time_ms: Option<StepTimeStats>,
    pub utilisation: Utilisation,
    pub host_tf_op_percent: f64,
    pub device_tf_op_percent: f64,
    pub host_op_time_eager_percent: f64,
    pub device_op_time_eager_percent: f64,
    pub top_device_ops: Vec<TopOpRow>,
    /// Why there are no top device ops where there are none (no device, or a device db Tidemark does
    /// not build yet).
    pub top_ops_missing: Option<String>,
    /// XProf's input classification (`host`, `both`, `device`, `unknown`) and its statement ("No step
    /// time measured…" without steps).
    pub bottleneck: String,
    pub statement: String,
    pub all_other_statement: String,
    pub summary_next_step: String,
    pub tips: Vec<Tip>,
    /// XProf's diagnostics (no step marker).
    pub warnings: Vec<String>,
    /// On a TPU, the idle time of the high-confidence duty cycle (ps, XProf's
    /// `idle_time_high_confidence_ps`); `None` elsewhere.
    pub idle_time_high_confidence_ps: Option<u64>,
}

/// XProf's step time statistics; a deviation XProf cannot compute (one step) is `None`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct StepTimeStats {
    pub average: f64,
    pub standard_deviation: Option<f64>,
    pub minimum: f64,
    pub maximum: f64,
}

/// The steps as columns, one entry per step; `categories` are the step-time graph's stacks in XProf's
/// order, only those measured (a host-only trace has no device compute to stack).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StepColumns {
    pub names: Vec<String>,
    pub group_ids: Vec<i64>,
    /// The step's span in the trace's time (ps), as the Trace Viewer and the Memory Profile place it.
    pub begin_ps: Vec<i64>,
    pub end_ps: Vec<i64>,
    pub step_time_ms: Vec<f64>,
    pub categories: Vec<StepCategory>,
}

/// One stack of the step-time graph: XProf's column id and label, and each step's time in it (ms).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StepCategory {
    pub id: String,
    pub label: String,
    pub ms: Vec<f64>,
}

/// One of the device's top framework ops; fractions of the device's op time.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TopOpRow {
    pub name: String,
    pub category: String,
    pub self_time_fraction: f64,
    pub cumulative_time_fraction: f64,
    pub flop_rate_gflops: f64,
}

/// Where step `s` ends in the trace's time: back from ms to the step's whole ps (exact: durations are
/// far below 2^53 ps). The page's step selection and the op tables' `--step` both end a step here.
pub(crate) fn step_end_ps(s: &StepRow) -> i64 {
    s.begin_ps.saturating_add((s.step_time_ms * PS_PER_MS).round() as i64)
}

impl StepColumns {
    fn of(steps: &[StepRow]) -> Self {
        let column = |f: fn(&StepRow) -> f64| steps.iter().map(f).collect::<Vec<f64>>();
        StepColumns {
            names: steps.iter().map(|s| s.name.clone()).collect(),
            group_ids: steps.iter().map(|s| s.group_id).collect(),
            begin_ps: steps.iter().map(|s| s.begin_ps).collect(),
            end_ps: steps.iter().map(step_end_ps).collect(),
            step_time_ms: column(|s| s.step_time_ms),
            // XProf's stacks in its order ([`CATEGORIES`]), those with time in some step: a host-only
            // trace has no device compute to stack, a GPU trace's device steps no host compute.
            categories: CATEGORIES
                .iter()
                .enumerate()
                .map(|(k, c)| StepCategory {
                    id: c.id.into(),
                    label: c.label.into(),
                    ms: steps.iter().map(|s| s.breakdown_ms()[k]).collect(),
                })
                .filter(|c| c.ms.iter().any(|&ms| ms != 0.0))
                .collect(),
        }
    }
}

/// Picoseconds per millisecond.
const PS_PER_MS: f64 = 1e9;

impl Session {
    /// The Overview page of the run `file_ids` (one file, or its hosts combined: the page's "all
    /// hosts"), from its kept analysis.
    pub fn overview_page_view(&mut self, file_ids: &[u32]) -> Result<OverviewPageView, EngineError> {
        let top_ops_missing = match &self.op_metrics(&Scope::run(file_ids))?.device {
            Err(e) => Some(e.to_string()),
            Ok(_) => None,
        };
        let o = self.overview_page(file_ids)?;
        let (r, a) = (&o.run_environment, &o.input);
        let top_ops_missing = if r.hardware_type == "CPU_ONLY" {
            Some("the trace has no device (a CPU-only run): XProf lists the device's ops only".to_string())
        } else {
            top_ops_missing
        };
        let s = a.step_time_ms;
        Ok(OverviewPageView {
            hardware_type: r.hardware_type.to_string(),
            device_type: r.device_type.clone(),
            device_core_count: r.device_core_count,
            host_count: r.host_count,
            task_count: r.task_count,
            is_training: r.is_training,
            steps: StepColumns::of(&a.steps),
            steps_found: a.steps_found,
            device_steps_unsupported: a.device_steps_unsupported,
            step_time_ms: (s.count > 0).then(|| StepTimeStats {
                average: s.average,
                standard_deviation: Some(s.standard_deviation).filter(|d| d.is_finite()),
                minimum: s.minimum,
                maximum: s.maximum,
            }),
            utilisation: o.utilisation,
            host_tf_op_percent: o.host_tf_op_percent,
            device_tf_op_percent: o.device_tf_op_percent,
            host_op_time_eager_percent: o.host_op_time_eager_percent,
            device_op_time_eager_percent: o.device_op_time_eager_percent,
            top_device_ops: o
                .top_device_ops
                .iter()
                .map(|t| TopOpRow {
                    name: t.name.clone(),
                    category: t.category.clone(),
                    self_time_fraction: t.self_time_fraction,
                    cumulative_time_fraction: t.cumulative_time_fraction,
                    flop_rate_gflops: t.flop_rate,
                })
                .collect(),
            top_ops_missing,
            bottleneck: a.bottleneck.input_classification.to_string(),
            statement: a.bottleneck.input_statement.clone(),
            all_other_statement: a.bottleneck.all_other_statement.clone(),
            summary_next_step: a.summary_next_step.clone(),
            tips: tips(r.hardware_type),
            warnings: a.warnings.clone(),
            idle_time_high_confidence_ps: o.tpu_idle_time_ps,
        })
    }
}
