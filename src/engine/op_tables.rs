//! The device op tables of opened files (HLO Op Stats, Roofline Model, Op Profile): each read from the
//! file's one op-metrics pass ([`Session::op_metrics`]), computed once per file and kept until the
//! file is closed. HLO Op Stats, Op Profile and the roofline also over a time window (a step): from the
//! op metrics of that window.

use super::op_metrics::FileOpMetrics;
use super::{EngineError, Session};
use crate::analysis::hlo_stats::{self, HloStats};
use crate::analysis::op_metrics::window::starts_in;
use crate::analysis::op_metrics::TimeWindow;
use crate::analysis::op_profile::{self, OpProfile};
use crate::analysis::roofline_model::{self, RooflineModel};
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

/// Windows whose op metrics are kept: the page asks for one step at a time, and going back and forth
/// between a few steps should not pass over the trace again.
const KEPT_WINDOWS: usize = 8;

/// A run (its file ids) over a window.
type RunWindow = (Vec<u32>, TimeWindow);

/// What has been computed so far, by the file ids of the run (one id for a file).
#[derive(Default)]
pub struct OpTablesCache {
    hlo_stats: HashMap<Vec<u32>, Arc<HloStats>>,
    roofline_models: HashMap<Vec<u32>, Arc<RooflineModel>>,
    op_profiles: HashMap<Vec<u32>, Arc<OpProfile>>,
    /// The op metrics of a run over a window, the most recently computed last.
    windowed: VecDeque<(RunWindow, Arc<FileOpMetrics>)>,
}

impl OpTablesCache {
    pub(super) fn forget_file(&mut self, file_id: u32) {
        self.hlo_stats.retain(|ids, _| !ids.contains(&file_id));
        self.roofline_models.retain(|ids, _| !ids.contains(&file_id));
        self.op_profiles.retain(|ids, _| !ids.contains(&file_id));
        self.windowed.retain(|((ids, _), _)| !ids.contains(&file_id));
    }

    /// The kept op metrics of the run `file_ids` over `window`.
    pub(super) fn windowed(&self, file_ids: &[u32], window: TimeWindow) -> Option<Arc<FileOpMetrics>> {
        self.windowed.iter().find(|((ids, w), _)| ids == file_ids && *w == window).map(|(_, m)| m.clone())
    }

    /// Keeps the op metrics of the run `file_ids` over `window`, forgetting the oldest entry of another
    /// window beyond [`KEPT_WINDOWS`]. Entries of the same window are never forgotten for each other:
    /// a run's hosts are kept one by one over one window, and a host released in the page must find
    /// its own entry when the request is asked again after another host was read back.
    pub(super) fn keep_windowed(&mut self, file_ids: &[u32], window: TimeWindow, metrics: Arc<FileOpMetrics>) {
        if self.windowed.len() >= KEPT_WINDOWS {
            if let Some(oldest) = self.windowed.iter().position(|((_, w), _)| *w != window) {
                self.windowed.remove(oldest);
            }
        }
        self.windowed.push_back(((file_ids.to_vec(), window), metrics));
    }
}

impl Session {
    /// HLO Op Stats of file `file_id` (empty for a CPU-only trace).
    pub fn hlo_stats(&mut self, file_id: u32) -> Result<Arc<HloStats>, EngineError> {
        self.run_hlo_stats(&[file_id])
    }

    /// HLO Op Stats of the run `file_ids`, its hosts combined.
    pub fn run_hlo_stats(&mut self, file_ids: &[u32]) -> Result<Arc<HloStats>, EngineError> {
        self.run_hlo_stats_in(file_ids, None)
    }

    /// HLO Op Stats of the run `file_ids` over the device ops that start inside `window` (XProf's table
    /// shape; XProf itself has no such limit). A window's table is computed from its kept op metrics.
    pub fn run_hlo_stats_in(&mut self, file_ids: &[u32], window: Option<TimeWindow>) -> Result<Arc<HloStats>, EngineError> {
        if window.is_some() {
            let ops = self.device_ops_in(file_ids, window, "HLO Op Stats")?;
            return Ok(Arc::new(hlo_stats::analyze(&ops)));
        }
        if let Some(h) = self.op_tables.hlo_stats.get(file_ids) {
            return Ok(h.clone());
        }
        let ops = self.device_ops_for(file_ids, "HLO Op Stats")?;
        let stats = Arc::new(hlo_stats::analyze(&ops));
        self.op_tables.hlo_stats.insert(file_ids.to_vec(), stats.clone());
        Ok(stats)
    }

    /// The Roofline Model of file `file_id` (empty for a CPU-only trace).
    pub fn roofline_model(&mut self, file_id: u32) -> Result<Arc<RooflineModel>, EngineError> {
        self.run_roofline_model(&[file_id])
    }

    /// The Roofline Model of the run `file_ids`, its hosts combined.
    pub fn run_roofline_model(&mut self, file_ids: &[u32]) -> Result<Arc<RooflineModel>, EngineError> {
        self.run_roofline_model_in(file_ids, None)
    }

    /// The Roofline Model of the run `file_ids` over the device ops that start inside `window` (XProf's
    /// model; XProf itself has no such limit): the model of a profile of that window alone. Its op and
    /// "Total" records come from the window's kept op metrics, with the device's peaks; its per-step
    /// records are those of the steps that start inside the window (for a selected step: that step
    /// alone, as in a profile of it); XProf's "Average" record (per complete step, TPU only) is zero
    /// over any window as over the whole trace, its complete-step db being empty on every trace
    /// Tidemark models (a TPU without step lines). A window's model is not kept: its op metrics are.
    pub fn run_roofline_model_in(&mut self, file_ids: &[u32], window: Option<TimeWindow>) -> Result<Arc<RooflineModel>, EngineError> {
        const TOOL: &str = "Roofline Model";
        if let Some(r) = window.is_none().then(|| self.op_tables.roofline_models.get(file_ids)).flatten() {
            return Ok(r.clone());
        }
        let ops = self.device_ops_in(file_ids, window, TOOL)?;
        let first = file_ids[0];
        // One record per step: the steps are the Overview Page's (computed once per run and kept;
        // none where it does not compute them, as it says).
        let step_numbers: Vec<i64> = if roofline_model::has_model(ops.hardware) {
            let steps = &self.run_overview_page(file_ids)?.input.steps;
            steps.iter().filter(|s| starts_in(window, s.begin_ps)).map(|s| s.group_id).collect()
        } else {
            Vec::new()
        };
        let model = roofline_model::analyze(&ops, &step_numbers).map_err(|e| self.unsupported(first, TOOL, e.to_string()))?;
        let model = Arc::new(model);
        if window.is_none() {
            self.op_tables.roofline_models.insert(file_ids.to_vec(), model.clone());
        }
        Ok(model)
    }

    /// The Op Profile of file `file_id` (an empty tree for a CPU-only trace).
    pub fn op_profile(&mut self, file_id: u32) -> Result<Arc<OpProfile>, EngineError> {
        self.run_op_profile(&[file_id])
    }

    /// The Op Profile of the run `file_ids`, its hosts combined.
    pub fn run_op_profile(&mut self, file_ids: &[u32]) -> Result<Arc<OpProfile>, EngineError> {
        self.run_op_profile_in(file_ids, None)
    }

    /// The Op Profile of the run `file_ids` over the device ops that start inside `window` (XProf's tree;
    /// XProf itself has no such limit). A window's tree is built from its kept op metrics.
    pub fn run_op_profile_in(&mut self, file_ids: &[u32], window: Option<TimeWindow>) -> Result<Arc<OpProfile>, EngineError> {
        if window.is_some() {
            let ops = self.device_ops_in(file_ids, window, "Op Profile")?;
            return Ok(Arc::new(op_profile::analyze(&ops, &self.run_op_metrics(file_ids)?.modules)));
        }
        if let Some(p) = self.op_tables.op_profiles.get(file_ids) {
            return Ok(p.clone());
        }
        let ops = self.device_ops_for(file_ids, "Op Profile")?;
        let profile = Arc::new(op_profile::analyze(&ops, &self.run_op_metrics(file_ids)?.modules));
        self.op_tables.op_profiles.insert(file_ids.to_vec(), profile.clone());
        Ok(profile)
    }
}
