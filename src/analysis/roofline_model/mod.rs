//! The Roofline Model: every HLO op's FLOP rate, memory bandwidths and operational intensity against
//! the device's peaks, plus a whole-program row (XProf's `roofline_model` tool,
//! `ConvertOpStatsToRooflineModel`). XProf emits the records twice, with infeed/outfeed ops included
//! and excluded; both are here, in that order.
//!
//! Records are for the whole profile ("Total"), for the average complete step ("Average", TPU only)
//! and one program record per step of the step db (labelled by its number). XProf's per-step op dbs
//! hold a TPU core's XLA ops and are empty on a GPU, so a GPU's per-step records are all zero but
//! for their one occurrence. A TPU's steps (from its step line) are not computed: such a trace gives
//! [`RooflineError::StepsNotSupported`] rather than a table without them. On a GPU the on-chip
//! memory is the shared memory / L1 (XProf files it as merged VMEM, peaks from the device's
//! capabilities) and XProf prints a table of its own ([`xprof_json::to_xprof_json`]). A GPU plane that
//! names no vendor has zero peak FLOP/s and shared-memory bandwidth, as in XProf.

pub mod xprof_json;

use crate::analysis::device_ops::DeviceOps;
use crate::analysis::op_metrics::builder::add_memory_accessed;
use crate::analysis::op_metrics::roofline::{giga_to_gibi, roofline_metrics};
use crate::analysis::op_metrics::{ps_to_us, safe_divide, HardwareType, OpMetrics, OpMetricsDb, RooflineMetrics, SourceInfo};
use crate::analysis::steps::NO_STEP_MARKER;
use std::borrow::Cow;

/// At most this many op records per db (XProf's `kMaxNumRecords`).
const MAX_RECORDS: usize = 1000;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RooflineError {
    #[error("the device has steps; Tidemark's roofline model has no per-step records of a TPU yet")]
    StepsNotSupported,
}

/// Which span a record covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordSpan {
    /// The whole profile ("Total").
    Total,
    /// The average complete step ("Average").
    AverageStep,
    /// The step of this number (its step group).
    Step(i64),
}

impl RecordSpan {
    /// XProf's step column: `Total`, `Average` or the step's number.
    pub fn label(self) -> Cow<'static, str> {
        match self {
            RecordSpan::Total => "Total".into(),
            RecordSpan::AverageStep => "Average".into(),
            RecordSpan::Step(n) => n.to_string().into(),
        }
    }
}

/// One row: an op, or (rank 0) the program.
#[derive(Debug, Clone, PartialEq)]
pub struct RooflineRecord {
    pub span: RecordSpan,
    pub rank: u64,
    pub category: String,
    pub name: String,
    pub hlo_module_id: u64,
    pub occurrences: u64,
    pub total_time_us: f64,
    pub avg_time_us: f64,
    pub total_self_time_us: f64,
    pub avg_self_time_us: f64,
    pub self_time_fraction: f64,
    pub cumulative_self_time_fraction: f64,
    pub dma_stall_fraction: f64,
    pub rates: RooflineMetrics,
    pub total_time_per_core_us: f64,
    /// Time as a fraction of the span's total.
    pub total_time_fraction: f64,
    pub optimal_flop_rate: f64,
    /// The higher of the compute and the memory utilisation.
    pub roofline_efficiency: f64,
    pub compute_efficiency: f64,
    pub max_mem_bw_utilization: f64,
    pub include_infeed_outfeed: bool,
    pub source_info: Option<SourceInfo>,
}

/// The roofline model of a trace: the device's peaks and the records.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RooflineModel {
    pub device_type: String,
    pub megacore: bool,
    pub has_cmem: bool,
    pub has_merged_vmem: bool,
    /// GFLOP/s.
    pub peak_flop_rate: f64,
    /// GiB/s.
    pub peak_hbm_bw: f64,
    pub peak_cmem_read_bw: f64,
    pub peak_cmem_write_bw: f64,
    pub peak_vmem_read_bw: f64,
    pub peak_vmem_write_bw: f64,
    /// Normalized over measured op time (the DVFS scaling); 0 without ops.
    pub time_scale_multiplier: f64,
    pub records: Vec<RooflineRecord>,
    pub warnings: Vec<String>,
    /// Why some ops show no FLOPs or bytes: Tidemark cannot compute XProf's cost of them (see
    /// [`crate::analysis::device_ops::DeviceOps::cost_note`]); `None` when every op is costed.
    pub cost_note: Option<String>,
}

impl RooflineModel {
    /// FLOP per byte at peak compute and the peak bandwidth `bw_gib` (GiB/s): GFLOP/s over GB/s.
    pub fn ridge_point(&self, bw_gib: f64) -> f64 {
        safe_divide(self.peak_flop_rate, bw_gib * ((1u64 << 30) as f64 / 1e9))
    }
}

/// Ops that only contain other ops (their time is their children's).
fn may_have_inner_ops(category: &str) -> bool {
    matches!(category, "call" | "conditional" | "while" | "megacore fusion")
}

fn is_infeed_or_outfeed(category: &str) -> bool {
    category.contains("infeed") || category.contains("outfeed")
}

/// Whether a trace of `hardware` has a roofline model (and so needs its step numbers).
pub fn has_model(hardware: HardwareType) -> bool {
    matches!(hardware, HardwareType::Tpu | HardwareType::Gpu)
}

/// The roofline model of `ops`, with one record per step of `step_numbers` (the step db's steps by
/// number, in order).
pub fn analyze(ops: &DeviceOps, step_numbers: &[i64]) -> Result<RooflineModel, RooflineError> {
    if !has_model(ops.hardware) {
        return Ok(RooflineModel::default());
    }
    if ops.has_steps {
        return Err(RooflineError::StepsNotSupported);
    }
    let env = &ops.perf_env;
    let mut model = RooflineModel {
        device_type: ops.device_type.clone(),
        time_scale_multiplier: safe_divide(ops.db.normalized_total_op_time_ps as f64, ops.db.total_op_time_ps as f64),
        peak_flop_rate: env.peak_tera_flops_per_second * 1e3,
        peak_hbm_bw: giga_to_gibi(env.peak_bw_giga_bytes_per_second(0)),
        cost_note: ops.cost_note(),
        ..RooflineModel::default()
    };
    model.megacore = env.has_megacore;
    model.has_cmem = env.has_cmem;
    model.has_merged_vmem = env.has_merged_vmem;
    if ops.hardware == HardwareType::Gpu {
        // Shared memory / L1 stands in for VMEM: SRAM read and write peaks.
        model.has_merged_vmem = true;
        model.peak_vmem_read_bw = giga_to_gibi(env.peak_bw_giga_bytes_per_second(1));
        model.peak_vmem_write_bw = giga_to_gibi(env.peak_bw_giga_bytes_per_second(2));
    } else if model.has_cmem {
        model.peak_cmem_read_bw = giga_to_gibi(env.peak_bw_giga_bytes_per_second(3));
        model.peak_cmem_write_bw = giga_to_gibi(env.peak_bw_giga_bytes_per_second(4));
    } else if model.has_merged_vmem {
        model.peak_vmem_read_bw = giga_to_gibi(env.peak_bw_giga_bytes_per_second(5));
        model.peak_vmem_write_bw = giga_to_gibi(env.peak_bw_giga_bytes_per_second(6));
    }
    // The complete-step db (a TPU's; it has no steps here) and a GPU step's op db are empty.
    let empty = OpMetricsDb::default();
    for include_infeed_outfeed in [true, false] {
        let mut records = op_records(ops, &model, include_infeed_outfeed);
        // XProf's TPU tables carry an average-step program row even without steps; its GPU tables do not.
        if ops.hardware == HardwareType::Tpu {
            records.push(program_record(ops, &model, &empty, RecordSpan::AverageStep, include_infeed_outfeed));
        }
        for &n in step_numbers {
            records.push(program_record(ops, &model, &empty, RecordSpan::Step(n), include_infeed_outfeed));
        }
        model.records.extend(records);
    }
    if step_numbers.is_empty() {
        model.warnings.push(NO_STEP_MARKER.to_string());
    }
    Ok(model)
}

/// The program row of `db` and one row per op, longest self time first.
fn op_records(ops: &DeviceOps, model: &RooflineModel, include_infeed_outfeed: bool) -> Vec<RooflineRecord> {
    let db = &ops.db;
    let mut records = vec![program_record(ops, model, db, RecordSpan::Total, include_infeed_outfeed)];
    let infeed_outfeed_ps: u64 =
        if include_infeed_outfeed { 0 } else { db.metrics.iter().filter(|m| is_infeed_or_outfeed(&m.category)).map(|m| m.time_ps).sum() };
    let total_time_ps = db.total_time_ps.wrapping_sub(infeed_outfeed_ps);
    let total_time_us = ps_to_us(total_time_ps);
    let mut cumulative = 0.0;
    for m in db.sorted_by_self_time(Some(MAX_RECORDS)) {
        if m.occurrences == 0 || (!include_infeed_outfeed && is_infeed_or_outfeed(&m.category)) {
            continue;
        }
        let mut r = record(ops, model, m, RecordSpan::Total, total_time_ps, include_infeed_outfeed);
        r.rank = records.len() as u64;
        r.self_time_fraction = safe_divide(r.total_self_time_us, total_time_us);
        cumulative += r.self_time_fraction;
        r.cumulative_self_time_fraction = cumulative;
        records.push(r);
    }
    records
}

/// The whole program as one op: the innermost ops' FLOPs and bytes over the db's total time.
fn program_record(
    ops: &DeviceOps,
    model: &RooflineModel,
    db: &OpMetricsDb,
    span: RecordSpan,
    include_infeed_outfeed: bool,
) -> RooflineRecord {
    let mut program = OpMetrics { name: "Program".into(), category: "Program".into(), occurrences: 1, ..OpMetrics::default() };
    let mut infeed_outfeed_ps = 0u64;
    for m in db.metrics.iter().filter(|m| !may_have_inner_ops(&m.category)) {
        if !include_infeed_outfeed && is_infeed_or_outfeed(&m.category) {
            infeed_outfeed_ps = infeed_outfeed_ps.wrapping_add(m.time_ps);
            continue;
        }
        program.flops = program.flops.wrapping_add(m.flops);
        program.flops_v2 += m.flops_v2;
        program.model_flops = program.model_flops.wrapping_add(m.model_flops);
        program.model_flops_v2 += m.model_flops_v2;
        program.bytes_accessed = program.bytes_accessed.wrapping_add(m.bytes_accessed);
        add_memory_accessed(&m.memory_accessed_breakdown, &mut program.memory_accessed_breakdown);
    }
    program.time_ps = db.total_time_ps.wrapping_sub(infeed_outfeed_ps);
    record(ops, model, &program, span, program.time_ps, include_infeed_outfeed)
}

/// One record of `m` in a span of `total_time_ps` (XProf's `ConvertOpMetricsToRooflineModelRecord`);
/// rank and self-time shares are the caller's.
fn record(
    ops: &DeviceOps,
    model: &RooflineModel,
    m: &OpMetrics,
    span: RecordSpan,
    total_time_ps: u64,
    include_infeed_outfeed: bool,
) -> RooflineRecord {
    let occurrences = m.occurrences as f64;
    let (mut total_time_us, mut total_self_time_us) = (ps_to_us(m.time_ps), ps_to_us(m.self_time_ps));
    let (avg_time_us, avg_self_time_us) = (safe_divide(total_time_us, occurrences), safe_divide(total_self_time_us, occurrences));
    if span == RecordSpan::AverageStep {
        // Per step: divided by the number of complete steps (none here, so 0 as XProf's SafeDivide gives).
        (total_time_us, total_self_time_us) = (safe_divide(total_time_us, 0.0), safe_divide(total_self_time_us, 0.0));
    }
    let rates = roofline_metrics(m, &ops.perf_env, ops.hardware, false);
    let utilization = |enabled: bool, bw: f64, peak: f64| if enabled { safe_divide(bw, peak) } else { 0.0 };
    let max_mem_bw_utilization = [
        utilization(model.has_cmem, rates.cmem_write_bw, model.peak_cmem_write_bw),
        utilization(model.has_cmem, rates.cmem_read_bw, model.peak_cmem_read_bw),
        safe_divide(rates.hbm_bw, model.peak_hbm_bw),
        utilization(model.has_merged_vmem, rates.vmem_write_bw, model.peak_vmem_write_bw),
        utilization(model.has_merged_vmem, rates.vmem_read_bw, model.peak_vmem_read_bw),
    ]
    .into_iter()
    .fold(0.0, f64::max);
    let compute_efficiency = safe_divide(rates.measured_flop_rate, model.peak_flop_rate);
    let roofline_efficiency = max_mem_bw_utilization.max(compute_efficiency);
    RooflineRecord {
        span,
        rank: 0,
        category: m.category.clone(),
        name: m.name.clone(),
        hlo_module_id: m.hlo_module_id,
        occurrences: m.occurrences,
        total_time_us,
        avg_time_us,
        total_self_time_us,
        avg_self_time_us,
        self_time_fraction: 0.0,
        cumulative_self_time_fraction: 0.0,
        dma_stall_fraction: safe_divide(m.dma_stall_ps as f64, m.time_ps as f64),
        total_time_per_core_us: safe_divide(total_time_us, f64::from(ops.core_count)),
        total_time_fraction: safe_divide(m.time_ps as f64, total_time_ps as f64),
        optimal_flop_rate: safe_divide(rates.measured_flop_rate, roofline_efficiency),
        roofline_efficiency,
        compute_efficiency,
        max_mem_bw_utilization,
        include_infeed_outfeed,
        source_info: m.source_info.clone(),
        rates,
    }
}
