//! The Input Pipeline Analyzer of an opened file: the analysis the Overview Page is built on, kept
//! with it, and what the Input Pipeline page draws from it ([`InputPipelineView`], in columns).

use super::{EngineError, Session};
use crate::analysis::input_pipeline::{InputPipeline, InputTimeBreakdown, Summary, CATEGORIES};
use crate::analysis::op_metrics::safe_divide;
use serde::{Deserialize, Serialize};

/// The Input Pipeline page's reply: the verdict, the steps as columns with their statistics, the
/// host's input time by kind and the input ops as columns. Every figure is the analysis's.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct InputPipelineView {
    /// XProf's hardware type name (`CPU_ONLY`, `GPU`, `TPU`).
    pub hardware_type: String,
    pub verdict: Verdict,
    pub steps: StepColumns,
    /// Statistics of the step time, ms.
    pub step_time_ms: Stats,
    /// Statistics of each of XProf's step-time categories ([`CATEGORIES`], in their order), ms.
    pub category_ms: Vec<Stats>,
    /// Each category's average as a fraction of the average step time (0 without step time).
    pub category_fraction: Vec<f64>,
    /// Statistics of the share of each step spent waiting for input, %.
    pub input_percent: Stats,
    /// The host's input time by kind, µs.
    pub input_time: InputTimeBreakdown,
    /// Each kind's share of the host's input time (fractions; 0 without input time).
    pub input_time_fraction: InputTimeFractions,
    pub input_ops: InputOpColumns,
    /// XProf's diagnostics (a missing step marker).
    pub warnings: Vec<String>,
    /// Steps found before the first and last were dropped.
    pub steps_found: usize,
    /// XProf takes this trace's steps from its devices in a way not computed here: there are no steps.
    pub device_steps_unsupported: bool,
}

/// Whether the program is input-bound, in XProf's words.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// `host` (highly input-bound), `both` (moderately or potentially), `device` (not), `unknown`
    /// (no step time).
    pub classification: String,
    pub statement: String,
    /// Share of all step time spent on input, %.
    pub input_percent: f64,
    /// Share of all step time no event covers ("All others"), %, and XProf's remark on it (empty
    /// when there is none).
    pub all_other_percent: f64,
    pub all_other_statement: String,
    /// XProf's advice on what to read next.
    pub next_step: String,
}

/// The steps, one entry per step in every column, in step order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StepColumns {
    pub names: Vec<String>,
    /// The step's group id (the Memory Profile's step id).
    pub group_ids: Vec<i64>,
    /// Where the step begins, ps from the trace's start.
    pub begin_ps: Vec<i64>,
    pub step_time_ms: Vec<f64>,
    /// One column per category of [`CATEGORIES`], in their order: each step's time in it, ms.
    pub category_ms: Vec<Vec<f64>>,
    /// The share of each step spent waiting for input, %.
    pub input_percent: Vec<f64>,
}

/// Sample statistics of a per-step figure.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    pub average: f64,
    /// `None` where XProf's is not a number (one step whose figure is 0).
    pub standard_deviation: Option<f64>,
    pub minimum: f64,
    pub maximum: f64,
}

impl From<&Summary> for Stats {
    fn from(s: &Summary) -> Self {
        let sd = s.standard_deviation;
        Stats { average: s.average, standard_deviation: (!sd.is_nan()).then_some(sd), minimum: s.minimum, maximum: s.maximum }
    }
}

/// The host's input time by kind ([`InputTimeBreakdown`]), each as a fraction of their sum.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct InputTimeFractions {
    pub demanded_file_read: f64,
    pub advanced_file_read: f64,
    pub preprocessing: f64,
    pub enqueue: f64,
    pub unclassified_non_enqueue: f64,
}

impl From<&InputTimeBreakdown> for InputTimeFractions {
    fn from(b: &InputTimeBreakdown) -> Self {
        let total = b.demanded_file_read_us + b.advanced_file_read_us + b.preprocessing_us + b.enqueue_us + b.unclassified_non_enqueue_us;
        InputTimeFractions {
            demanded_file_read: safe_divide(b.demanded_file_read_us, total),
            advanced_file_read: safe_divide(b.advanced_file_read_us, total),
            preprocessing: safe_divide(b.preprocessing_us, total),
            enqueue: safe_divide(b.enqueue_us, total),
            unclassified_non_enqueue: safe_divide(b.unclassified_non_enqueue_us, total),
        }
    }
}

/// The host's input ops, by self time, one entry per op in every column.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct InputOpColumns {
    pub names: Vec<String>,
    /// XProf's count (runs, plus the allocator events naming the op).
    pub occurrences: Vec<u64>,
    pub time_ms: Vec<f64>,
    /// Fractions of all input ops' self time.
    pub time_fraction: Vec<f64>,
    pub self_time_ms: Vec<f64>,
    pub self_time_fraction: Vec<f64>,
    /// XProf's category names (`Preprocessing`, `Enqueue`, ...).
    pub categories: Vec<String>,
}

impl InputPipelineView {
    /// The page's view of the analysis `a`.
    pub fn of(a: &InputPipeline) -> Self {
        let b = &a.bottleneck;
        let breakdowns: Vec<[f64; 9]> = a.steps.iter().map(|s| s.breakdown_ms()).collect();
        let input_percent: Vec<f64> = a.steps.iter().map(|s| 100.0 * safe_divide(s.input_ms(), s.step_time_ms)).collect();
        let ms = |ps: u64| ps as f64 / 1e9;
        InputPipelineView {
            hardware_type: a.hardware_type.to_string(),
            verdict: Verdict {
                classification: b.input_classification.to_string(),
                statement: b.input_statement.clone(),
                input_percent: b.input_percent,
                all_other_percent: b.all_other_percent,
                all_other_statement: b.all_other_statement.clone(),
                next_step: a.summary_next_step.clone(),
            },
            steps: StepColumns {
                names: a.steps.iter().map(|s| s.name.clone()).collect(),
                group_ids: a.steps.iter().map(|s| s.group_id).collect(),
                begin_ps: a.steps.iter().map(|s| s.begin_ps).collect(),
                step_time_ms: a.steps.iter().map(|s| s.step_time_ms).collect(),
                category_ms: (0..CATEGORIES.len()).map(|i| breakdowns.iter().map(|b| b[i]).collect()).collect(),
                input_percent: input_percent.clone(),
            },
            step_time_ms: Stats::from(&a.step_time_ms),
            category_ms: a.category_ms.iter().map(Stats::from).collect(),
            category_fraction: a.category_ms.iter().map(|c| safe_divide(c.average, a.step_time_ms.average)).collect(),
            input_percent: Stats::from(&Summary::of(input_percent.into_iter())),
            input_time: a.input_time.clone(),
            input_time_fraction: InputTimeFractions::from(&a.input_time),
            input_ops: InputOpColumns {
                names: a.input_ops.iter().map(|o| o.name.clone()).collect(),
                occurrences: a.input_ops.iter().map(|o| o.occurrences).collect(),
                time_ms: a.input_ops.iter().map(|o| ms(o.time_ps)).collect(),
                time_fraction: a.input_ops.iter().map(|o| o.time_fraction).collect(),
                self_time_ms: a.input_ops.iter().map(|o| ms(o.self_time_ps)).collect(),
                self_time_fraction: a.input_ops.iter().map(|o| o.self_time_fraction).collect(),
                categories: a.input_ops.iter().map(|o| o.category.label().to_string()).collect(),
            },
            warnings: a.warnings.clone(),
            steps_found: a.steps_found,
            device_steps_unsupported: a.device_steps_unsupported,
        }
    }
}

impl Session {
    /// The Input Pipeline Analyzer of the run `file_ids` (one file, or its hosts combined), computed
    /// with its Overview Page.
    pub fn input_pipeline(&mut self, file_ids: &[u32]) -> Result<&InputPipeline, EngineError> {
        Ok(&self.overview_page(file_ids)?.input)
    }

    /// What the Input Pipeline page draws for the run `file_ids` (one file, or its hosts combined).
    pub fn input_pipeline_view(&mut self, file_ids: &[u32]) -> Result<InputPipelineView, EngineError> {
        Ok(InputPipelineView::of(self.input_pipeline(file_ids)?))
    }
}
