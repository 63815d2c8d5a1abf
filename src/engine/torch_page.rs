//! What the page draws of the PyTorch Profiler's views: each view's payloads (the plugin's JSON, as
//! `tidemark torch-* --json` prints them) read once into typed figures, tables as columns, by the
//! engine in its worker ([`super::torch`]), which sends the figures as the view's reply. The analysis
//! writes the plugin's payloads directly (its rounding and its sums live there), so the page's
//! figures are read from them rather than computed again: what the page shows is what the plugin
//! shows, and the page never picks JSON apart nor spends its thread reading it.
//!
//! Units are the plugin's, named in every field: durations in µs (memory times in ms), memory in KB
//! (1024 bytes) and MB (1024² bytes), percentages out of 100.

use crate::analysis::torch::operators::OpGrouping;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Why a payload could not be read: a view answered in another shape than the plugin's.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("the {payload} payload is not the plugin's shape: {reason}")]
pub struct PayloadError {
    pub payload: &'static str,
    pub reason: String,
}

fn read<T: for<'de> Deserialize<'de>>(payloads: &Value, payload: &'static str) -> Result<T, PayloadError> {
    let v = payloads.get(payload).ok_or_else(|| PayloadError { payload, reason: "missing".into() })?;
    T::deserialize(v).map_err(|e| PayloadError { payload, reason: e.to_string() })
}

fn shape(payload: &'static str, reason: impl Into<String>) -> PayloadError {
    PayloadError { payload, reason: reason.into() }
}

/// A table cell as the plugin writes it: a number, a string or null.
fn num(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// A Google-Charts table (`{columns: [{name}], rows: [[..]]}`) with cells read by column name.
#[derive(Deserialize)]
struct DataTable {
    columns: Vec<Column>,
    rows: Vec<Vec<Value>>,
}

#[derive(Deserialize)]
struct Column {
    #[serde(default)]
    name: Option<String>,
}

impl DataTable {
    /// The index of column `name`.
    fn at(&self, payload: &'static str, name: &str) -> Result<usize, PayloadError> {
        self.columns.iter().position(|c| c.name.as_deref() == Some(name)).ok_or_else(|| shape(payload, format!("no column {name:?}")))
    }

    fn has(&self, name: &str) -> bool {
        self.columns.iter().any(|c| c.name.as_deref() == Some(name))
    }

    fn nums(&self, payload: &'static str, name: &str) -> Result<Vec<f64>, PayloadError> {
        let i = self.at(payload, name)?;
        self.rows.iter().map(|r| r.get(i).and_then(num).ok_or_else(|| shape(payload, format!("{name:?} is not a number")))).collect()
    }

    fn opt_nums(&self, payload: &'static str, name: &str) -> Result<Option<Vec<f64>>, PayloadError> {
        if self.has(name) {
            self.nums(payload, name).map(Some)
        } else {
            Ok(None)
        }
    }

    fn texts(&self, payload: &'static str, name: &str) -> Result<Vec<String>, PayloadError> {
        let i = self.at(payload, name)?;
        Ok(self.rows.iter().map(|r| r.get(i).map(text).unwrap_or_default()).collect())
    }

    fn flags(&self, payload: &'static str, name: &str) -> Result<Vec<bool>, PayloadError> {
        Ok(self.texts(payload, name)?.iter().map(|s| s == "Yes").collect())
    }

    fn counts(&self, payload: &'static str, name: &str) -> Result<Vec<u64>, PayloadError> {
        Ok(self.nums(payload, name)?.into_iter().map(|v| v as u64).collect())
    }
}

/// The plugin's step-time categories, in its order (the stack's order, bottom first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum StepCategory {
    Kernel,
    Memcpy,
    Memset,
    Communication,
    Runtime,
    DataLoader,
    CpuExec,
    Other,
}

impl StepCategory {
    pub const ALL: [StepCategory; 8] = [
        StepCategory::Kernel,
        StepCategory::Memcpy,
        StepCategory::Memset,
        StepCategory::Communication,
        StepCategory::Runtime,
        StepCategory::DataLoader,
        StepCategory::CpuExec,
        StepCategory::Other,
    ];

    /// The plugin's name of the category.
    pub fn label(self) -> &'static str {
        match self {
            StepCategory::Kernel => "Kernel",
            StepCategory::Memcpy => "Memcpy",
            StepCategory::Memset => "Memset",
            StepCategory::Communication => "Communication",
            StepCategory::Runtime => "Runtime",
            StepCategory::DataLoader => "DataLoader",
            StepCategory::CpuExec => "CPU Exec",
            StepCategory::Other => "Other",
        }
    }

    /// A stable name for the page's `data-metric`s.
    pub fn id(self) -> &'static str {
        match self {
            StepCategory::Kernel => "kernel",
            StepCategory::Memcpy => "memcpy",
            StepCategory::Memset => "memset",
            StepCategory::Communication => "communication",
            StepCategory::Runtime => "runtime",
            StepCategory::DataLoader => "dataloader",
            StepCategory::CpuExec => "cpu_exec",
            StepCategory::Other => "other",
        }
    }

    fn of(label: &str) -> Option<StepCategory> {
        StepCategory::ALL.into_iter().find(|c| c.label() == label)
    }
}

/// One step's time per shown category (in [`OverviewPage::categories`]' order), µs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepTimes {
    /// The step's number (`ProfilerStep#N`'s N).
    pub name: String,
    pub times_us: Vec<f64>,
    /// The step's duration: the categories share all of it (`Other` is what none claimed).
    pub total_us: f64,
}

/// A category's average over the steps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CategoryShare {
    pub category: StepCategory,
    /// Rounded to the µs, as the plugin shows it.
    pub time_us: f64,
    /// Its share of the average step time, out of 100 (two decimals).
    pub percent: f64,
}

/// One figure of a GPU's summary: a text (name, memory, compute capability) or a percentage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuFigure {
    pub title: String,
    pub text: String,
    /// The figure out of 100, when it is a percentage.
    pub percent: Option<f64>,
}

/// A GPU's summary (`GPU Summary`): its name and figures, in the plugin's order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuSummary {
    /// The GPU's id (`0` of `GPU 0:`).
    pub gpu: String,
    pub figures: Vec<GpuFigure>,
}

/// The Overview (`overview`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OverviewPage {
    /// The categories the run has (Communication only with collectives, the GPU ones only on a
    /// GPU), in the stack's order.
    pub categories: Vec<StepCategory>,
    pub steps: Vec<StepTimes>,
    /// The average step time, rounded to the µs.
    pub average_step_us: f64,
    pub average: Vec<CategoryShare>,
    pub gpus: Vec<GpuSummary>,
    /// Each recommendation as the plugin writes it: HTML with links to PyTorch's documentation.
    pub recommendations: Vec<String>,
    /// Number of workers, device type.
    pub environment: Vec<(String, String)>,
}

#[derive(Deserialize)]
struct OverviewPayload {
    steps: DataTable,
    performance: Vec<Performance>,
    recommendations: String,
    environments: Vec<TitleValue>,
    #[serde(default)]
    gpu_metrics: Option<GpuMetrics>,
}

#[derive(Deserialize)]
struct Performance {
    value: f64,
    #[serde(default)]
    children: Vec<Child>,
}

#[derive(Deserialize)]
struct Child {
    name: String,
    value: f64,
    extra: f64,
}

#[derive(Deserialize)]
struct TitleValue {
    title: String,
    value: Value,
}

#[derive(Deserialize)]
struct GpuMetrics {
    data: Vec<TitleValue>,
}

impl GpuFigure {
    /// A stable name for the page's `data-metric`.
    pub fn metric(&self) -> &'static str {
        gpu_metric(&self.title)
    }
}

/// The metric name of a GPU summary figure.
fn gpu_metric(title: &str) -> &'static str {
    match title {
        "Name" => "gpu_name",
        "Memory" => "gpu_memory",
        "Compute Capability" => "gpu_compute_capability",
        "GPU Utilization" => "gpu_utilization_pct",
        "Est. SM Efficiency" => "sm_efficiency_pct",
        "Est. Achieved Occupancy" => "achieved_occupancy_pct",
        "Kernel Time using Tensor Cores" => "tensor_core_kernel_time_pct",
        _ => "gpu_figure",
    }
}

impl OverviewPage {
    /// The Overview of `torch-overview`'s payloads.
    pub fn from_payloads(payloads: &Value) -> Result<OverviewPage, PayloadError> {
        const P: &str = "overview";
        let o: OverviewPayload = read(payloads, P)?;
        // Columns: Step, then (category, its tooltip) pairs.
        let mut categories = Vec::new();
        let mut cells = Vec::new();
        for (i, c) in o.steps.columns.iter().enumerate().skip(1) {
            if let Some(cat) = c.name.as_deref().and_then(StepCategory::of) {
                categories.push(cat);
                cells.push(i);
            }
        }
        let steps = o
            .steps
            .rows
            .iter()
            .map(|r| {
                let times_us = cells
                    .iter()
                    .map(|&i| r.get(i).and_then(num).ok_or_else(|| shape(P, "a step time is not a number")))
                    .collect::<Result<Vec<f64>, _>>()?;
                Ok(StepTimes { name: r.first().map(text).unwrap_or_default(), total_us: times_us.iter().sum(), times_us })
            })
            .collect::<Result<Vec<_>, PayloadError>>()?;
        let perf = o.performance.first().ok_or_else(|| shape(P, "no average step time"))?;
        let average = perf
            .children
            .iter()
            .map(|c| {
                let category = StepCategory::of(&c.name).ok_or_else(|| shape(P, format!("unknown category {:?}", c.name)))?;
                Ok(CategoryShare { category, time_us: c.value, percent: c.extra })
            })
            .collect::<Result<Vec<_>, PayloadError>>()?;
        let mut gpus: Vec<GpuSummary> = Vec::new();
        for d in o.gpu_metrics.map(|g| g.data).unwrap_or_default() {
            if let Some(gpu) = d.title.strip_prefix("GPU ").and_then(|t| t.strip_suffix(':')) {
                gpus.push(GpuSummary { gpu: gpu.to_string(), figures: Vec::new() });
                continue;
            }
            let Some(g) = gpus.last_mut().filter(|_| d.title != "<hr/>") else { continue };
            let text = text(&d.value);
            let percent = text.strip_suffix(" %").and_then(|v| v.parse().ok());
            g.figures.push(GpuFigure { title: d.title, text, percent });
        }
        let recommendations = o
            .recommendations
            .split("<li>")
            .skip(1)
            .filter_map(|item| item.split("</li>").next())
            .filter(|item| *item != "N/A")
            .map(str::to_string)
            .collect();
        Ok(OverviewPage {
            categories,
            steps,
            average_step_us: perf.value,
            average,
            gpus,
            recommendations,
            environment: o.environments.into_iter().map(|e| (e.title, text(&e.value))).collect(),
        })
    }
}

/// The operators by name, or by name and input shape (`operation_table`), as columns, in the
/// plugin's order (device self time, or host self time without a GPU, longest first). Times in µs,
/// rounded to the µs.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct OperatorColumns {
    pub name: Vec<String>,
    /// The inputs' shapes as the plugin writes them; empty when grouped by name alone.
    pub input_shape: Vec<String>,
    pub calls: Vec<u64>,
    /// Empty without GPU activity (the plugin leaves the device columns out).
    pub device_self_us: Vec<f64>,
    pub device_total_us: Vec<f64>,
    pub host_self_us: Vec<f64>,
    pub host_total_us: Vec<f64>,
    pub tc_eligible: Vec<bool>,
    /// Time of self kernels on Tensor Cores over time of self kernels, out of 100.
    pub tc_self_pct: Vec<f64>,
    pub tc_total_pct: Vec<f64>,
}

/// A slice of one of the plugin's pies: its name, its value and its share of the pie.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Slice {
    pub name: String,
    pub value: f64,
    pub fraction: f64,
}

/// A pie's rows (`name`, `value` columns) as slices, in the pie's order.
fn slices(payload: &'static str, pie: &DataTable) -> Result<Vec<Slice>, PayloadError> {
    let values = pie.nums(payload, "value")?;
    let total: f64 = values.iter().sum();
    Ok(pie
        .texts(payload, "name")?
        .into_iter()
        .zip(values)
        .map(|(name, value)| Slice { name, value, fraction: if total > 0.0 { value / total } else { 0.0 } })
        .collect())
}

/// Which time a top-operator pie shares out: the plugin's four, in its order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TopTime {
    DeviceSelf,
    DeviceTotal,
    HostSelf,
    HostTotal,
}

impl TopTime {
    pub const ALL: [TopTime; 4] = [TopTime::DeviceSelf, TopTime::DeviceTotal, TopTime::HostSelf, TopTime::HostTotal];

    /// The pie's key in the `operation` payload.
    pub fn metric(self) -> &'static str {
        match self {
            TopTime::DeviceSelf => "device_self_time",
            TopTime::DeviceTotal => "device_total_time",
            TopTime::HostSelf => "host_self_time",
            TopTime::HostTotal => "host_total_time",
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            TopTime::DeviceSelf => "Device self time",
            TopTime::DeviceTotal => "Device total time",
            TopTime::HostSelf => "Host self time",
            TopTime::HostTotal => "Host total time",
        }
    }
}

/// One of the plugin's top-operator pies.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TopOps {
    pub time: TopTime,
    /// Operators with time, longest first, µs (by name: an op of several input shapes is a slice
    /// per shape, as in the plugin's pie).
    pub ops: Vec<Slice>,
}

/// The Operator view (`operation`, `operation_table`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OperatorsPage {
    pub grouping: OpGrouping,
    pub ops: OperatorColumns,
    pub has_device: bool,
    /// The four charts of the plugin, those with time.
    pub top: Vec<TopOps>,
}

#[derive(Deserialize)]
struct OperationTable {
    data: Vec<OpRow>,
}

#[derive(Deserialize)]
struct OpRow {
    name: String,
    #[serde(default)]
    input_shape: Option<String>,
    calls: u64,
    #[serde(default)]
    device_self_duration: Option<f64>,
    #[serde(default)]
    device_total_duration: Option<f64>,
    host_self_duration: f64,
    host_total_duration: f64,
    tc_eligible: String,
    tc_self_ratio: f64,
    tc_total_ratio: f64,
}

impl OperatorsPage {
    /// The Operator view of `torch-operators`' payloads.
    pub fn from_payloads(payloads: &Value) -> Result<OperatorsPage, PayloadError> {
        let t: OperationTable = read(payloads, "operation_table")?;
        let has_device = t.data.iter().all(|r| r.device_self_duration.is_some());
        let grouping = if t.data.iter().any(|r| r.input_shape.is_some()) { OpGrouping::InputShape } else { OpGrouping::Name };
        let mut c = OperatorColumns::default();
        for r in t.data {
            c.name.push(r.name);
            if grouping == OpGrouping::InputShape {
                c.input_shape.push(r.input_shape.unwrap_or_default());
            }
            c.calls.push(r.calls);
            if has_device {
                c.device_self_us.push(r.device_self_duration.unwrap_or(0.0));
                c.device_total_us.push(r.device_total_duration.unwrap_or(0.0));
            }
            c.host_self_us.push(r.host_self_duration);
            c.host_total_us.push(r.host_total_duration);
            c.tc_eligible.push(r.tc_eligible == "Yes");
            c.tc_self_pct.push(r.tc_self_ratio);
            c.tc_total_pct.push(r.tc_total_ratio);
        }
        let pies = payloads.get("operation").ok_or_else(|| shape("operation", "missing"))?;
        let mut top = Vec::new();
        for time in TopTime::ALL {
            let Some(pie) = pies.get(time.metric()).filter(|p| !p.is_null()) else { continue };
            let table = DataTable::deserialize(pie).map_err(|e| shape("operation", e.to_string()))?;
            top.push(TopOps { time, ops: slices("operation", &table)? });
        }
        Ok(OperatorsPage { grouping, ops: c, has_device, top })
    }
}

/// What both kernel tables give of each row's kernels, as columns: Tensor Cores use, calls and
/// durations (µs, rounded), launch figures.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct KernelTimes {
    pub tc_used: Vec<bool>,
    pub calls: Vec<u64>,
    pub total_us: Vec<f64>,
    pub mean_us: Vec<f64>,
    pub max_us: Vec<f64>,
    pub min_us: Vec<f64>,
    /// Mean blocks per SM (weighted by duration); `None` when the trace records none.
    pub blocks_per_sm: Option<Vec<f64>>,
    /// Mean estimated achieved occupancy, out of 100; `None` when the trace records none.
    pub occupancy_pct: Option<Vec<f64>>,
}

/// Kernels by name (`kernel_table`), as columns, longest total first.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct KernelColumns {
    pub name: Vec<String>,
    pub times: KernelTimes,
}

/// Kernels by name, launching operator and launch shape (`kernel_op_table`), as columns.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct KernelOpColumns {
    pub name: Vec<String>,
    pub op: Vec<String>,
    pub grid: Vec<String>,
    pub block: Vec<String>,
    pub registers_per_thread: Vec<u64>,
    pub shared_memory_bytes: Vec<u64>,
    pub op_tc_eligible: Vec<bool>,
    pub times: KernelTimes,
}

/// The Kernel view (`kernel_table`, `kernel_op_table`, `kernel_tc_pie`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelsPage {
    pub kernels: KernelColumns,
    pub by_op: KernelOpColumns,
    /// Kernel time on Tensor Cores over all kernel time (a fraction).
    pub tensor_core_fraction: f64,
    /// The plugin's pies: kernel time by kernel name (µs, longest first), and on Tensor Cores or not
    /// (fractions).
    pub time_by_kernel: Vec<Slice>,
    pub tensor_cores: Vec<Slice>,
}

#[derive(Deserialize)]
struct TablePayload {
    data: DataTable,
}

#[derive(Deserialize)]
struct PiePayload {
    total: DataTable,
}

const BLOCKS: &str = "Mean Blocks Per SM";
const OCCUPANCY: &str = "Mean Est. Achieved Occupancy (%)";

impl KernelTimes {
    /// The columns of table `t` (payload `p`) both kernel tables have; `tc` names its Tensor Cores
    /// column.
    fn read(t: &DataTable, p: &'static str, tc: &str) -> Result<KernelTimes, PayloadError> {
        Ok(KernelTimes {
            tc_used: t.flags(p, tc)?,
            calls: t.counts(p, "Calls")?,
            total_us: t.nums(p, "Total Duration (us)")?,
            mean_us: t.nums(p, "Mean Duration (us)")?,
            max_us: t.nums(p, "Max Duration (us)")?,
            min_us: t.nums(p, "Min Duration (us)")?,
            blocks_per_sm: t.opt_nums(p, BLOCKS)?,
            occupancy_pct: t.opt_nums(p, OCCUPANCY)?,
        })
    }
}

impl KernelsPage {
    /// The Kernel view of `torch-kernels`' payloads.
    pub fn from_payloads(payloads: &Value) -> Result<KernelsPage, PayloadError> {
        const K: &str = "kernel_table";
        let t = read::<TablePayload>(payloads, K)?.data;
        let kernels = KernelColumns { name: t.texts(K, "Name")?, times: KernelTimes::read(&t, K, "Tensor Cores Used")? };
        const O: &str = "kernel_op_table";
        let t = read::<TablePayload>(payloads, O)?.data;
        let by_op = KernelOpColumns {
            name: t.texts(O, "Name")?,
            op: t.texts(O, "Operator")?,
            grid: t.texts(O, "Grid")?,
            block: t.texts(O, "Block")?,
            registers_per_thread: t.counts(O, "Register Per Thread")?,
            shared_memory_bytes: t.counts(O, "Shared Memory")?,
            op_tc_eligible: t.flags(O, "Op is Tensor Cores eligible")?,
            times: KernelTimes::read(&t, O, "Kernel Uses Tensor Cores")?,
        };
        const T: &str = "kernel_tc_pie";
        let tensor_cores = slices(T, &read::<PiePayload>(payloads, T)?.total)?;
        let tensor_core_fraction = tensor_cores
            .iter()
            .find(|s| s.name == "Using Tensor Cores")
            .map(|s| s.value)
            .ok_or_else(|| shape(T, "no \"Using Tensor Cores\" slice"))?;
        let time_by_kernel = slices("kernel", &read::<PiePayload>(payloads, "kernel")?.total)?;
        Ok(KernelsPage { kernels, by_op, tensor_core_fraction, time_by_kernel, tensor_cores })
    }
}

/// One device's memory over time (`memory_curve`), as columns: time since the profiler started (ms)
/// and the allocator's allocated and reserved memory then (MB), drawn as steps.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct MemoryCurve {
    pub time_ms: Vec<f64>,
    pub allocated_mb: Vec<f64>,
    pub reserved_mb: Vec<f64>,
}

/// One device's memory by operator (`memory`), as columns; sizes in KB.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct MemoryOpColumns {
    pub name: Vec<String>,
    pub calls: Vec<u64>,
    pub size_increase_kb: Vec<f64>,
    pub self_size_increase_kb: Vec<f64>,
    pub allocation_count: Vec<u64>,
    pub self_allocation_count: Vec<u64>,
    pub allocation_size_kb: Vec<f64>,
    pub self_allocation_size_kb: Vec<f64>,
}

/// One device's allocations (`memory_events`), as columns: each allocation with its free, then
/// those never freed (no release), then frees of memory allocated before the trace (no allocation).
/// Times since the profiler started in µs, as the page's durations are (the plugin's ms × 1000).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct MemoryEventColumns {
    /// Each operator's name once, in the order of its first event: an operator allocates many
    /// times (a 1 GB trace's 365,000 events name some hundreds), and a string per event was most of
    /// the time the page's thread spent reading the reply.
    pub names: Vec<String>,
    /// Each event's operator, an index into `names`.
    pub op: Vec<u32>,
    pub size_kb: Vec<f64>,
    pub allocation_us: Vec<Option<f64>>,
    pub release_us: Vec<Option<f64>>,
    pub duration_us: Vec<Option<f64>>,
}

impl MemoryEventColumns {
    /// Event `i`'s operator.
    pub fn op_name(&self, i: usize) -> &str {
        &self.names[self.op[i] as usize]
    }

    /// Each name's index in `names`, which holds each once, in the order first seen.
    fn intern(texts: Vec<String>) -> Result<(Vec<String>, Vec<u32>), PayloadError> {
        let mut at = std::collections::HashMap::<String, u32>::new();
        let mut names = Vec::new();
        let op = texts
            .into_iter()
            .map(|t| {
                if let Some(&i) = at.get(&t) {
                    return Ok(i);
                }
                let i = u32::try_from(names.len()).map_err(|_| shape("memory_events", "too many operators"))?;
                names.push(t.clone());
                at.insert(t, i);
                Ok(i)
            })
            .collect::<Result<_, PayloadError>>()?;
        Ok((names, op))
    }
}

/// A device's Memory view.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct MemoryDevice {
    /// The plugin's name: `CPU`, `GPU0`, ...
    pub name: String,
    /// The highest allocated memory, MB (one decimal, as the plugin writes it).
    pub peak_mb: Option<f64>,
    pub curve: MemoryCurve,
    pub ops: MemoryOpColumns,
    pub events: MemoryEventColumns,
}

/// The Memory view (`memory`, `memory_curve`, `memory_events`), per device.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryPage {
    /// In the plugin's order (by name); the first GPU is its default.
    pub devices: Vec<MemoryDevice>,
    pub default_device: String,
}

/// A payload whose rows are per device (`{metadata, columns, rows: {device: [[..]]}}`).
#[derive(Deserialize)]
struct DeviceTables {
    #[serde(default)]
    metadata: Value,
    columns: Vec<Column>,
    rows: std::collections::BTreeMap<String, Vec<Vec<Value>>>,
}

impl DeviceTables {
    fn table(&self, device: &str) -> DataTable {
        DataTable {
            columns: self.columns.iter().map(|c| Column { name: c.name.clone() }).collect(),
            rows: self.rows.get(device).cloned().unwrap_or_default(),
        }
    }
}

/// Appends `values` to `out` as little-endian f64s, after their count.
fn pack_f64s(out: &mut Vec<u8>, values: impl ExactSizeIterator<Item = f64>) {
    out.extend_from_slice(&(values.len() as u64).to_le_bytes());
    for v in values {
        out.extend_from_slice(&v.to_le_bytes());
    }
}

/// Reads what [`pack_f64s`] and [`MemoryPage::take_packed`] wrote, in order.
struct Unpack<'b> {
    bytes: &'b [u8],
}

impl Unpack<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], PayloadError> {
        if self.bytes.len() < n {
            return Err(shape("memory (packed)", "cut short"));
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    fn count(&mut self) -> Result<usize, PayloadError> {
        let b = self.take(8)?;
        usize::try_from(u64::from_le_bytes(b.try_into().expect("8 bytes"))).map_err(|_| shape("memory (packed)", "a count too large"))
    }

    fn f64s(&mut self) -> Result<Vec<f64>, PayloadError> {
        let n = self.count()?;
        let b = self.take(n.checked_mul(8).ok_or_else(|| shape("memory (packed)", "a count too large"))?)?;
        Ok(b.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes"))).collect())
    }

    fn u32s(&mut self) -> Result<Vec<u32>, PayloadError> {
        let n = self.count()?;
        let b = self.take(n.checked_mul(4).ok_or_else(|| shape("memory (packed)", "a count too large"))?)?;
        Ok(b.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes"))).collect())
    }

    /// f64s where NaN stands for none (the payloads' numbers are never NaN).
    fn opt_f64s(&mut self) -> Result<Vec<Option<f64>>, PayloadError> {
        Ok(self.f64s()?.into_iter().map(|v| (!v.is_nan()).then_some(v)).collect())
    }

    fn texts(&mut self) -> Result<Vec<String>, PayloadError> {
        let n = self.count()?;
        (0..n)
            .map(|_| {
                let len = self.count()?;
                String::from_utf8(self.take(len)?.to_vec()).map_err(|_| shape("memory (packed)", "a name is not UTF-8"))
            })
            .collect()
    }
}

impl MemoryPage {
    /// Moves each device's curve and events (all but a few kilobytes of the view: a 1 GB trace's
    /// are some 17 MB as JSON) out of the page, packed as bytes: they travel beside the reply, which
    /// the page's thread then reads without parsing them ([`MemoryPage::put_packed`]).
    pub fn take_packed(&mut self) -> Vec<u8> {
        let mut out = Vec::new();
        for d in &mut self.devices {
            let MemoryCurve { time_ms, allocated_mb, reserved_mb } = std::mem::take(&mut d.curve);
            for column in [time_ms, allocated_mb, reserved_mb] {
                pack_f64s(&mut out, column.into_iter());
            }
            let e = std::mem::take(&mut d.events);
            pack_f64s(&mut out, e.size_kb.into_iter());
            for column in [e.allocation_us, e.release_us, e.duration_us] {
                pack_f64s(&mut out, column.into_iter().map(|v| v.unwrap_or(f64::NAN)));
            }
            out.extend_from_slice(&(e.names.len() as u64).to_le_bytes());
            for name in e.names {
                out.extend_from_slice(&(name.len() as u64).to_le_bytes());
                out.extend_from_slice(name.as_bytes());
            }
            out.extend_from_slice(&(e.op.len() as u64).to_le_bytes());
            for op in e.op {
                out.extend_from_slice(&op.to_le_bytes());
            }
        }
        out
    }

    /// Puts back what [`MemoryPage::take_packed`] took.
    pub fn put_packed(&mut self, bytes: &[u8]) -> Result<(), PayloadError> {
        let mut r = Unpack { bytes };
        for d in &mut self.devices {
            d.curve = MemoryCurve { time_ms: r.f64s()?, allocated_mb: r.f64s()?, reserved_mb: r.f64s()? };
            let size_kb = r.f64s()?;
            let (allocation_us, release_us, duration_us) = (r.opt_f64s()?, r.opt_f64s()?, r.opt_f64s()?);
            let (names, op) = (r.texts()?, r.u32s()?);
            if op.iter().any(|&i| i as usize >= names.len()) {
                return Err(shape("memory (packed)", "an event's operator is not among the names"));
            }
            d.events = MemoryEventColumns { names, op, size_kb, allocation_us, release_us, duration_us };
        }
        if !r.bytes.is_empty() {
            return Err(shape("memory (packed)", "bytes left over"));
        }
        Ok(())
    }

    /// The Memory view of `torch-memory`'s payloads.
    pub fn from_payloads(payloads: &Value) -> Result<MemoryPage, PayloadError> {
        let (m, c, e): (DeviceTables, DeviceTables, DeviceTables) =
            (read(payloads, "memory")?, read(payloads, "memory_curve")?, read(payloads, "memory_events")?);
        let mut names: Vec<&String> = m.rows.keys().chain(c.rows.keys()).chain(e.rows.keys()).collect();
        names.sort();
        names.dedup();
        let devices = names
            .into_iter()
            .map(|name| {
                const M: &str = "memory";
                let t = m.table(name);
                let ops = MemoryOpColumns {
                    name: t.texts(M, "Operator Name")?,
                    calls: t.counts(M, "Calls")?,
                    size_increase_kb: t.nums(M, "Size Increase (KB)")?,
                    self_size_increase_kb: t.nums(M, "Self Size Increase (KB)")?,
                    allocation_count: t.counts(M, "Allocation Count")?,
                    self_allocation_count: t.counts(M, "Self Allocation Count")?,
                    allocation_size_kb: t.nums(M, "Allocation Size (KB)")?,
                    self_allocation_size_kb: t.nums(M, "Self Allocation Size (KB)")?,
                };
                const C: &str = "memory_curve";
                let t = c.table(name);
                let curve = MemoryCurve {
                    time_ms: t.nums(C, "Time (ms)")?,
                    allocated_mb: t.nums(C, "Allocated (MB)")?,
                    reserved_mb: t.nums(C, "Reserved (MB)")?,
                };
                const E: &str = "memory_events";
                let t = e.table(name);
                let opt = |col: &str| -> Result<Vec<Option<f64>>, PayloadError> {
                    let i = t.at(E, col)?;
                    Ok(t.rows.iter().map(|r| r.get(i).and_then(num).map(|ms| ms * 1000.0)).collect())
                };
                let (names, op) = MemoryEventColumns::intern(t.texts(E, "Operator")?)?;
                let events = MemoryEventColumns {
                    names,
                    op,
                    size_kb: t.nums(E, "Size (KB)")?,
                    allocation_us: opt("Allocation Time (ms)")?,
                    release_us: opt("Release Time (ms)")?,
                    duration_us: opt("Duration (ms)")?,
                };
                let peak_mb = c.metadata["peaks"][name.as_str()]
                    .as_str()
                    .and_then(|s| s.strip_prefix("Peak Memory Usage: "))
                    .and_then(|s| s.strip_suffix("MB"))
                    .and_then(|s| s.parse().ok());
                Ok(MemoryDevice { name: name.clone(), peak_mb, curve, ops, events })
            })
            .collect::<Result<Vec<_>, PayloadError>>()?;
        let default_device = c.metadata["default_device"]
            .as_str()
            .map_or_else(|| devices.first().map(|d| d.name.clone()).unwrap_or_default(), str::to_string);
        Ok(MemoryPage { devices, default_device })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_overview_reads_steps_gpus_and_recommendations() {
        let payloads = json!({"overview": {
            "steps": {"columns": [{"type": "string", "name": "Step"}, {"type": "number", "name": "Kernel"}, {"role": "tooltip"}, {"type": "number", "name": "Other"}, {"role": "tooltip"}],
                      "rows": [["2", 10.5, "t", 4, "t"]]},
            "performance": [{"name": "Average Step Time", "value": 15, "extra": 100, "children": [{"name": "Kernel", "value": 11, "extra": 72.41}, {"name": "Other", "value": 4, "extra": 27.59}]}],
            "recommendations": "<ul><li>Use <a href=\"x\">AMP</a>.</li><li>Second.</li></ul>",
            "environments": [{"title": "Device Type", "value": "GPU"}],
            "gpu_metrics": {"data": [{"title": "GPU 0:", "value": ""}, {"title": "Name", "value": "H200"}, {"title": "GPU Utilization", "value": "95.3 %"}], "tooltip": ""},
        }});
        let o = OverviewPage::from_payloads(&payloads).unwrap();
        assert_eq!(o.categories, [StepCategory::Kernel, StepCategory::Other]);
        assert_eq!(o.steps, [StepTimes { name: "2".into(), times_us: vec![10.5, 4.0], total_us: 14.5 }]);
        assert_eq!(o.average_step_us, 15.0);
        assert_eq!(o.average[0], CategoryShare { category: StepCategory::Kernel, time_us: 11.0, percent: 72.41 });
        assert_eq!(o.recommendations, ["Use <a href=\"x\">AMP</a>.", "Second."]);
        assert_eq!(o.gpus[0].gpu, "0");
        assert_eq!(o.gpus[0].figures[1].percent, Some(95.3));
        assert_eq!(o.gpus[0].figures[1].metric(), "gpu_utilization_pct");
        let none = json!({"overview": {"steps": {"columns": [], "rows": []}, "performance": [{"value": 0}], "recommendations": "<ul><li>N/A</li></ul>", "environments": []}});
        assert!(OverviewPage::from_payloads(&none).unwrap().recommendations.is_empty());
    }

    #[test]
    fn a_payload_of_another_shape_is_an_error_not_a_panic() {
        let pie = DataTable {
            columns: vec![Column { name: Some("name".into()) }, Column { name: Some("value".into()) }],
            rows: vec![vec![json!("a"), json!(3)], vec![json!("b"), json!(1)]],
        };
        assert_eq!(slices("p", &pie).unwrap()[1], Slice { name: "b".into(), value: 1.0, fraction: 0.25 });
        let e = KernelsPage::from_payloads(&json!({"kernel_table": {"data": {"columns": [], "rows": []}}})).unwrap_err();
        assert_eq!(e.payload, "kernel_table");
        assert!(OverviewPage::from_payloads(&json!({})).is_err());
        assert!(MemoryPage::from_payloads(&json!({"memory": 3})).is_err());
    }

    #[test]
    fn memory_devices_take_their_curve_ops_events_and_peak() {
        let cols = |names: &[&str]| names.iter().map(|n| json!({"name": n})).collect::<Vec<_>>();
        let payloads = json!({
            "memory": {"metadata": {}, "columns": cols(&["Operator Name", "Calls", "Size Increase (KB)", "Self Size Increase (KB)", "Allocation Count", "Self Allocation Count", "Allocation Size (KB)", "Self Allocation Size (KB)"]),
                       "rows": {"GPU0": [["aten::empty", 2, 1.5, 1.5, 2, 2, 3.0, 3.0]]}},
            "memory_curve": {"metadata": {"default_device": "GPU0", "peaks": {"GPU0": "Peak Memory Usage: 871.5MB"}},
                             "columns": cols(&["Time (ms)", "Allocated (MB)", "Reserved (MB)"]), "rows": {"GPU0": [[0.5, 1.0, 2.0]], "CPU": [[0.1, 0.0, 0.0]]}},
            "memory_events": {"metadata": {}, "columns": cols(&["Operator", "Size (KB)", "Allocation Time (ms)", "Release Time (ms)", "Duration (ms)"]),
                              "rows": {"GPU0": [["aten::empty", 1.5, 0.5, null, null]]}},
        });
        let m = MemoryPage::from_payloads(&payloads).unwrap();
        assert_eq!(m.devices.iter().map(|d| d.name.as_str()).collect::<Vec<_>>(), ["CPU", "GPU0"]);
        assert_eq!(m.default_device, "GPU0");
        let gpu = &m.devices[1];
        assert_eq!(gpu.peak_mb, Some(871.5));
        assert_eq!(gpu.ops.calls, [2]);
        assert_eq!(gpu.events.release_us, [None]);
        assert_eq!((gpu.events.names.as_slice(), gpu.events.op_name(0)), (["aten::empty".to_string()].as_slice(), "aten::empty"));
        assert_eq!(gpu.events.allocation_us, [Some(500.0)]);
        assert_eq!(gpu.curve.reserved_mb, [2.0]);
        assert!(m.devices[0].ops.name.is_empty());
    }

    #[test]
    fn packed_events_name_each_operator_once_and_an_index_past_the_names_is_an_error() {
        let (names, op) = MemoryEventColumns::intern(["a", "b", "a", "a"].map(String::from).to_vec()).unwrap();
        assert_eq!((names.as_slice(), op.as_slice()), (["a".to_string(), "b".to_string()].as_slice(), [0, 1, 0, 0].as_slice()));
        let events = MemoryEventColumns {
            names,
            op,
            size_kb: vec![1.0; 4],
            allocation_us: vec![None; 4],
            release_us: vec![Some(2.0); 4],
            duration_us: vec![None; 4],
        };
        let page = MemoryPage {
            devices: vec![MemoryDevice { name: "GPU0".into(), events, ..MemoryDevice::default() }],
            default_device: "GPU0".into(),
        };
        let mut bare = page.clone();
        let mut packed = bare.take_packed();
        assert!(bare.devices[0].events.op.is_empty());
        let mut read = bare.clone();
        read.put_packed(&packed).unwrap();
        assert_eq!(read, page);
        // The last event's operator, its index the bytes' last four, made 2 (there are two names).
        let n = packed.len();
        packed[n - 4..].copy_from_slice(&2u32.to_le_bytes());
        assert!(bare.put_packed(&packed).is_err());
    }
}
