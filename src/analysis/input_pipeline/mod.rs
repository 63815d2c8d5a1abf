//! The Input Pipeline Analyzer (XProf's `input_pipeline_analyzer`, generic hardware): each step's time
//! by category, their statistics, whether the program is input-bound, and where the host's input
//! time goes. Plain data; [`xprof_json`] writes XProf's JSON from it.

pub mod input_ops;
pub mod summary;
pub mod xprof_json;

use crate::analysis::op_metrics::{safe_divide, OpMetricsDb};
use crate::analysis::steps::{EventType, Step, StepDb, NO_STEP_MARKER};
pub use input_ops::{InputOp, InputOpCategory};
pub use summary::Summary;

/// Picoseconds per millisecond.
const PS_PER_MS: f64 = 1e9;

/// One step's time by category, in ms (XProf's `PerGenericStepDetails`). Kernel launch and
/// compilation are never measured in the steps XProf builds from these traces (host steps have no
/// device to launch on, and a device's steps leave the host out), so they are 0.
#[derive(Debug, Clone, PartialEq)]
pub struct StepRow {
    pub name: String,
    pub group_id: i64,
    pub begin_ps: i64,
    pub step_time_ms: f64,
    /// Half and single precision together.
    pub device_compute_ms: f64,
    pub device_to_device_ms: f64,
    pub device_collectives_ms: f64,
    pub host_compute_ms: f64,
    pub host_wait_input_ms: f64,
    pub host_to_device_ms: f64,
    /// Copies from the device to the host ("Output").
    pub output_ms: f64,
    /// Time no event covers ("All others").
    pub unknown_ms: f64,
}

impl StepRow {
    fn new(s: &Step) -> Self {
        let ms = |t: EventType| s.ps(t) as f64 / PS_PER_MS;
        StepRow {
            name: s.name.clone(),
            group_id: s.group_id,
            begin_ps: s.begin_ps,
            step_time_ms: s.duration_ps as f64 / PS_PER_MS,
            device_compute_ms: ms(EventType::DeviceCompute16) + ms(EventType::DeviceCompute32),
            device_to_device_ms: ms(EventType::DeviceToDevice),
            device_collectives_ms: ms(EventType::DeviceCollectives),
            host_compute_ms: ms(EventType::HostCompute),
            host_wait_input_ms: ms(EventType::HostWaitInput),
            host_to_device_ms: ms(EventType::HostToDevice),
            output_ms: ms(EventType::DeviceToHost),
            unknown_ms: ms(EventType::Unknown),
        }
    }

    /// "Input": waiting for input plus sending it to the device.
    pub fn input_ms(&self) -> f64 {
        self.host_wait_input_ms + self.host_to_device_ms
    }

    /// The step's time in each of XProf's [`CATEGORIES`], in their order, ms.
    pub fn breakdown_ms(&self) -> [f64; 9] {
        [
            self.device_compute_ms,
            self.device_to_device_ms,
            self.device_collectives_ms,
            self.host_compute_ms,
            0.0,
            self.input_ms(),
            self.output_ms,
            0.0,
            self.unknown_ms,
        ]
    }
}

/// One of XProf's categories of step time on generic hardware: its step-table column id and label,
/// its name in the step tooltip and the stem of its statistics' keys (`<key>_avg`, `<key>_sdv`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Category {
    pub id: &'static str,
    pub label: &'static str,
    pub tooltip: &'static str,
    pub key: &'static str,
}

/// XProf's categories of a step's time (`GenericStepTimeBreakdown`), in its column order.
pub const CATEGORIES: [Category; 9] = [
    Category { id: "deviceComputeTimeMs", label: "Device compute", tooltip: "Device compute", key: "device_compute_time_ms" },
    Category { id: "deviceToDeviceTimeMs", label: "Device to device", tooltip: "Device to device", key: "device_to_device_time_ms" },
    Category {
        id: "deviceCollectivesTimeMs",
        label: "Device collective communication",
        tooltip: "Device collectives",
        key: "device_collectives_time_ms",
    },
    Category { id: "hostComputeTimeMs", label: "Host compute", tooltip: "Host compute", key: "host_compute_time_ms" },
    Category { id: "kernelLaunchTimeMs", label: "Kernel launch", tooltip: "Kernel launch", key: "kernel_launch_time_ms" },
    Category { id: "infeedTimeMs", label: "Input", tooltip: "Input", key: "infeed_time_ms" },
    Category { id: "outfeedTimeMs", label: "Output", tooltip: "Output", key: "outfeed_time_ms" },
    Category { id: "compileTimeMs", label: "Compilation", tooltip: "Compilation", key: "compile_time_ms" },
    Category { id: "otherTimeMs", label: "All others", tooltip: "All others", key: "other_time_ms" },
];

/// How bound the program is by each kind of time (XProf's `BottleneckAnalysis`).
#[derive(Debug, Clone, PartialEq)]
pub struct Bottleneck {
    /// "host" (highly input-bound), "both" (moderately or potentially), "device" (not), "unknown"
    /// (no steps).
    pub input_classification: &'static str,
    pub input_statement: String,
    pub input_percent: f64,
    /// Share of "All others" time, and XProf's statement about it (empty unless ≥ 3% and not already
    /// the reason for the input verdict).
    pub all_other_percent: f64,
    pub all_other_classification: &'static str,
    pub all_other_statement: String,
}

/// Thresholds (% of step time) of XProf's verdicts.
const HIGHLY_INPUT_BOUND: f64 = 20.0;
const MODERATELY_INPUT_BOUND: f64 = 5.0;
const MODERATELY_ALL_OTHER: f64 = 3.0;
const HIGHLY_ALL_OTHER: f64 = 15.0;
const ALL_OTHERS_PYTHON: &str =
    " % of the total step time sampled is spent on 'All Others' time. This could be due to Python execution overhead.";

impl Bottleneck {
    fn new(steps: &[StepRow]) -> Self {
        let (mut step, mut input, mut unknown) = (0.0, 0.0, 0.0);
        for s in steps {
            step += s.step_time_ms;
            input += s.input_ms();
            unknown += s.unknown_ms;
        }
        if step == 0.0 {
            return Bottleneck {
                input_classification: "unknown",
                input_statement: NO_STEP_TIME.to_string(),
                input_percent: 0.0,
                all_other_percent: 0.0,
                all_other_classification: "no",
                all_other_statement: String::new(),
            };
        }
        let input_percent = 100.0 * input / step;
        let all_other_percent = 100.0 * unknown / step;
        let (input_classification, input_statement, all_other_reported) = if input_percent >= HIGHLY_INPUT_BOUND {
            ("host", format!("Your program is HIGHLY input-bound because {}% of the total step time sampled is waiting for input. Therefore, you should first focus on reducing the input time.", one_digit(input_percent)), false)
        } else if input_percent >= MODERATELY_INPUT_BOUND {
            ("both", format!("Your program is MODERATELY input-bound because {}% of the total step time sampled is waiting for input. Therefore, you would need to reduce both the input time and other time.", one_digit(input_percent)), false)
        } else if all_other_percent >= MODERATELY_ALL_OTHER {
            ("both", format!("Your program is POTENTIALLY input-bound because {}% of the total step time sampled is spent on 'All Others' time (which could be due to I/O or Python execution or both).", one_digit(all_other_percent)), true)
        } else {
            ("device", format!("Your program is NOT input-bound because only {}% of the total step time sampled is waiting for input. Therefore, you should focus on reducing other time.", one_digit(input_percent)), false)
        };
        let (all_other_classification, all_other_statement) = if all_other_reported {
            ("no", String::new())
        } else if all_other_percent >= HIGHLY_ALL_OTHER {
            ("high", format!("{}{ALL_OTHERS_PYTHON}", one_digit(all_other_percent)))
        } else if all_other_percent >= MODERATELY_ALL_OTHER {
            ("moderate", format!("{}{ALL_OTHERS_PYTHON}", one_digit(all_other_percent)))
        } else {
            ("no", String::new())
        };
        Bottleneck {
            input_classification,
            input_statement,
            input_percent,
            all_other_percent,
            all_other_classification,
            all_other_statement,
        }
    }
}

/// XProf's statement when no step was found.
pub const NO_STEP_TIME: &str = "No step time measured. Therefore we cannot tell where the performance bottleneck is.";

/// XProf's `%.1f`.
pub fn one_digit(x: f64) -> String {
    c_fixed(x, 1)
}

/// C's `%.Nf`, including its `nan`/`-nan` (the sign of a NaN shows) and `inf`.
pub fn c_fixed(x: f64, digits: usize) -> String {
    if x.is_nan() {
        return if x.is_sign_negative() { "-nan" } else { "nan" }.to_string();
    }
    if x.is_infinite() {
        return if x < 0.0 { "-inf" } else { "inf" }.to_string();
    }
    format!("{x:.digits$}")
}

/// The host's input time by category, µs (XProf's `InputTimeBreakdown`).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct InputTimeBreakdown {
    pub enqueue_us: f64,
    pub demanded_file_read_us: f64,
    pub advanced_file_read_us: f64,
    pub preprocessing_us: f64,
    pub unclassified_non_enqueue_us: f64,
}

impl InputTimeBreakdown {
    /// tf.data in use: time reading files or preprocessing.
    pub fn tf_data_used(&self) -> bool {
        self.demanded_file_read_us > 0.0 || self.advanced_file_read_us > 0.0 || self.preprocessing_us > 0.0
    }
}

/// The whole analysis.
#[derive(Debug, Clone, PartialEq)]
pub struct InputPipeline {
    pub steps: Vec<StepRow>,
    pub step_time_ms: Summary,
    /// The statistics of each of [`CATEGORIES`], in their order.
    pub category_ms: [Summary; 9],
    pub bottleneck: Bottleneck,
    /// The host's input ops, by self time.
    pub input_ops: Vec<InputOp>,
    pub input_time: InputTimeBreakdown,
    pub summary_next_step: String,
    /// XProf's warnings about the steps (none found).
    pub warnings: Vec<String>,
    /// Steps found before the first and last were dropped.
    pub steps_found: usize,
    /// XProf takes this trace's steps from its devices in a way not computed here
    /// ([`crate::analysis::steps::StepDb::device_steps_unsupported`]): there are no steps.
    pub device_steps_unsupported: bool,
    /// XProf's hardware type name (`CPU_ONLY`, `GPU`, `TPU`).
    pub hardware_type: &'static str,
}

impl InputPipeline {
    /// The analysis of the steps `db` and the host op table `host_ops`, on hardware `hardware_type`
    /// ([`crate::analysis::overview_page::RunEnvironment::hardware_type`]).
    pub fn new(db: &StepDb, host_ops: &OpMetricsDb, hardware_type: &'static str) -> Self {
        let steps: Vec<StepRow> = db.steps.iter().map(StepRow::new).collect();
        let summary = |f: fn(&StepRow) -> f64| Summary::of(steps.iter().map(f));
        // A step of several hosts lasts as long as its slowest host (XProf's slowest core).
        let step_time_ms = if db.slowest_host_step_ps.is_empty() {
            summary(|s| s.step_time_ms)
        } else {
            Summary::of(db.slowest_host_step_ps.iter().map(|&ps| ps as f64 / PS_PER_MS))
        };
        // The share of a step spent sending input to the device (XProf first asks the host op table
        // for TPU infeed timing, which host-only traces do not have).
        let host_to_device_ratio =
            if step_time_ms.average > 0.0 { safe_divide(summary(|s| s.host_to_device_ms).average, step_time_ms.average) } else { 0.0 };
        let input_ops = input_ops::input_ops(host_ops);
        let input_time = input_ops::input_time(&input_ops, host_to_device_ratio);
        let bottleneck = Bottleneck::new(&steps);
        let summary_next_step = match bottleneck.input_classification {
            "host" | "both" if input_time.tf_data_used() => "Look at Section 3 for the breakdown of input time on the host.".to_string(),
            "host" | "both" => "Consider using <a href=\"https://www.tensorflow.org/guide/data\" target=\"_blank\">the tf.data API</a> to enable profiler's host-side analysis for input pipeline. Profiler currently does not support custom input pipeline (please ignore Section 3 below).".to_string(),
            _ => "You may skip the rest of this page.".to_string(),
        };
        let warnings = if steps.is_empty() { vec![NO_STEP_MARKER.to_string()] } else { Vec::new() };
        InputPipeline {
            step_time_ms,
            category_ms: std::array::from_fn(|i| Summary::of(steps.iter().map(|s| s.breakdown_ms()[i]))),
            steps,
            bottleneck,
            input_ops,
            input_time,
            summary_next_step,
            warnings,
            steps_found: db.steps_found,
            device_steps_unsupported: db.device_steps_unsupported,
            hardware_type,
        }
    }
}
