//! What the Roofline page draws: the device's roofs (peak compute and each memory's peak bandwidth
//! with its ridge point, as XProf's `roofline_model` properties give them) and the whole-profile
//! records of one infeed/outfeed setting as columns, the program first, then the ops by self time;
//! over the whole trace or a step's window (then "whole profile" is the window's).

use super::{EngineError, Scope, Session};
use crate::analysis::roofline_model::{RecordSpan, RooflineModel};
use crate::analysis::xla_modules::XlaModules;
use serde::{Deserialize, Serialize};

/// One memory roof: FLOP/s grow with intensity at the memory's peak bandwidth up to the compute
/// roof, which they meet at the ridge point.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MemoryRoof {
    /// As XProf's chart names it: `HBM`, `VMEM Read`, `CMEM Write`, ...
    pub name: String,
    /// XProf's property holding the peak (`peak_hbm_bw`), the metric the page names the figure by.
    pub peak_metric: String,
    /// GiB/s.
    pub peak_bw_gib_per_s: f64,
    /// FLOP/byte where this roof meets the compute roof.
    pub ridge_point: f64,
}

/// The records of one span and infeed/outfeed setting, column by column: entry `i` of every vector
/// is row `i`; row 0 is the program as a whole (rank 0).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RooflineColumns {
    pub rank: Vec<u64>,
    pub category: Vec<String>,
    pub name: Vec<String>,
    pub program_id: Vec<u64>,
    /// The op's module as the Memory Viewer names it (`jit_f(14)`), where the trace holds that module
    /// and the op is one of its instructions.
    pub memory_viewer_module: Vec<Option<String>>,
    pub occurrences: Vec<u64>,
    pub total_time_us: Vec<f64>,
    pub avg_time_us: Vec<f64>,
    pub total_self_time_us: Vec<f64>,
    pub self_time_fraction: Vec<f64>,
    /// Of the span's total time.
    pub total_time_fraction: Vec<f64>,
    /// GFLOP/s (XProf's "Normalized FLOP Rate"), the chart's y.
    pub measured_flop_rate: Vec<f64>,
    pub model_flop_rate: Vec<f64>,
    /// GiB/s.
    pub measured_memory_bw: Vec<f64>,
    pub hbm_bw: Vec<f64>,
    /// FLOP/byte over all bytes.
    pub operational_intensity: Vec<f64>,
    /// FLOP/byte over the bytes of the bounding memory: the chart's x, as in XProf's chart.
    pub bottleneck_operational_intensity: Vec<f64>,
    pub bound_by: Vec<String>,
    pub roofline_efficiency: Vec<f64>,
    pub compute_efficiency: Vec<f64>,
    pub max_mem_bw_utilization: Vec<f64>,
}

/// The page's reply.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RooflineModelView {
    pub device_type: String,
    /// GFLOP/s: the compute roof.
    pub peak_flop_rate: f64,
    /// The memory roofs XProf's chart draws: VMEM or CMEM read and write where the device has them,
    /// then HBM; none for a trace without device ops.
    pub roofs: Vec<MemoryRoof>,
    pub include_infeed_outfeed: bool,
    pub records: RooflineColumns,
    /// XProf's diagnostics (no step marker, ...).
    pub warnings: Vec<String>,
    /// Why some ops show no FLOPs or bytes (Tidemark cannot compute XProf's cost of them); `None` when
    /// every op is costed.
    pub cost_note: Option<String>,
}

impl RooflineModelView {
    /// The whole-profile records of `model` with infeed/outfeed ops when `include_infeed_outfeed`;
    /// `modules` names each op's module.
    pub fn of(model: &RooflineModel, include_infeed_outfeed: bool, modules: &XlaModules) -> RooflineModelView {
        let mut c = RooflineColumns::default();
        let records = model.records.iter().filter(|r| r.span == RecordSpan::Total && r.include_infeed_outfeed == include_infeed_outfeed);
        for r in records {
            c.rank.push(r.rank);
            c.category.push(r.category.clone());
            c.name.push(r.name.clone());
            c.program_id.push(r.hlo_module_id);
            c.memory_viewer_module.push(modules.xprof_name_holding(r.hlo_module_id, &r.name).map(str::to_string));
            c.occurrences.push(r.occurrences);
            c.total_time_us.push(r.total_time_us);
            c.avg_time_us.push(r.avg_time_us);
            c.total_self_time_us.push(r.total_self_time_us);
            c.self_time_fraction.push(r.self_time_fraction);
            c.total_time_fraction.push(r.total_time_fraction);
            c.measured_flop_rate.push(r.rates.measured_flop_rate);
            c.model_flop_rate.push(r.rates.model_flop_rate);
            c.measured_memory_bw.push(r.rates.measured_memory_bw);
            c.hbm_bw.push(r.rates.hbm_bw);
            c.operational_intensity.push(r.rates.operational_intensity);
            c.bottleneck_operational_intensity.push(r.rates.bottleneck_operational_intensity);
            c.bound_by.push(r.rates.bound_by.to_string());
            c.roofline_efficiency.push(r.roofline_efficiency);
            c.compute_efficiency.push(r.compute_efficiency);
            c.max_mem_bw_utilization.push(r.max_mem_bw_utilization);
        }
        let roof = |name: &str, metric: &str, bw: f64| MemoryRoof {
            name: name.into(),
            peak_metric: metric.into(),
            peak_bw_gib_per_s: bw,
            ridge_point: model.ridge_point(bw),
        };
        let mut roofs = Vec::new();
        if model.has_merged_vmem {
            roofs.push(roof("VMEM Read", "peak_vmem_read_bw", model.peak_vmem_read_bw));
            roofs.push(roof("VMEM Write", "peak_vmem_write_bw", model.peak_vmem_write_bw));
        }
        if model.has_cmem {
            roofs.push(roof("CMEM Read", "peak_cmem_read_bw", model.peak_cmem_read_bw));
            roofs.push(roof("CMEM Write", "peak_cmem_write_bw", model.peak_cmem_write_bw));
        }
        if model.peak_hbm_bw > 0.0 {
            roofs.push(roof("HBM", "peak_hbm_bw", model.peak_hbm_bw));
        }
        RooflineModelView {
            device_type: model.device_type.clone(),
            peak_flop_rate: model.peak_flop_rate,
            roofs,
            include_infeed_outfeed,
            records: c,
            warnings: model.warnings.clone(),
            cost_note: model.cost_note.clone(),
        }
    }
}

impl Session {
    /// The Roofline page of `scope`: its roofs and the records with or without infeed/outfeed ops, each
    /// row naming its module (the modules are the whole trace's, whatever the window).
    pub fn roofline_model_view(&mut self, scope: &Scope, include_infeed_outfeed: bool) -> Result<RooflineModelView, EngineError> {
        let model = self.roofline_model(scope)?;
        let metrics = self.op_metrics(&Scope::run(&scope.file_ids))?;
        Ok(RooflineModelView::of(&model, include_infeed_outfeed, &metrics.modules))
    }
}
