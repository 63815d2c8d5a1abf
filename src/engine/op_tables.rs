//! The device op tables of opened files (HLO Op Stats, Roofline Model, Op Profile): each read from the
//! file's one op-metrics pass ([`Session::op_metrics`]), computed once per file and kept until the
//! file is closed. HLO Op Stats, Op Profile and the roofline also over a time window (a step): from the
//! op metrics of that window ([`Scope`]).

use super::{EngineError, Scope, Session};
use crate::analysis::hlo_stats::{self, HloStats};
use crate::analysis::op_metrics::window::starts_in;
use crate::analysis::op_profile::{self, OpProfile};
use crate::analysis::roofline_model::{self, RooflineModel};
use std::collections::HashMap;
use std::sync::Arc;

/// The whole-trace tables computed so far, by the file ids of the run (one id for a file). A window's
/// table is not kept: its op metrics are ([`super::scope`]).
#[derive(Default)]
pub struct OpTablesCache {
    hlo_stats: HashMap<Vec<u32>, Arc<HloStats>>,
    roofline_models: HashMap<Vec<u32>, Arc<RooflineModel>>,
    op_profiles: HashMap<Vec<u32>, Arc<OpProfile>>,
}

impl OpTablesCache {
    pub(super) fn forget_file(&mut self, file_id: u32) {
        self.hlo_stats.retain(|ids, _| !ids.contains(&file_id));
        self.roofline_models.retain(|ids, _| !ids.contains(&file_id));
        self.op_profiles.retain(|ids, _| !ids.contains(&file_id));
    }
}

/// `table` of `scope` from `cache` (by `scope`'s files, for the whole trace), or computed by `compute`
/// and kept there when `scope` has no window.
fn kept<T>(
    session: &mut Session,
    scope: &Scope,
    cache: fn(&mut OpTablesCache) -> &mut HashMap<Vec<u32>, Arc<T>>,
    compute: impl FnOnce(&mut Session) -> Result<T, EngineError>,
) -> Result<Arc<T>, EngineError> {
    if scope.window.is_none() {
        if let Some(t) = cache(&mut session.op_tables).get(&scope.file_ids) {
            return Ok(t.clone());
        }
    }
    let table = Arc::new(compute(session)?);
    if scope.window.is_none() {
        cache(&mut session.op_tables).insert(scope.file_ids.clone(), table.clone());
    }
    Ok(table)
}

impl Session {
    /// HLO Op Stats of `scope` (empty for a CPU-only trace; XProf's table shape, XProf itself has no
    /// window).
    pub fn hlo_stats(&mut self, scope: &Scope) -> Result<Arc<HloStats>, EngineError> {
        kept(
            self,
            scope,
            |c| &mut c.hlo_stats,
            |s| {
                let ops = s.device_ops(scope, "HLO Op Stats")?;
                Ok(hlo_stats::analyze(&ops))
            },
        )
    }

    /// The Roofline Model of `scope` (XProf's model; over a window, the model of a profile of that
    /// window alone, XProf itself has no window). Its op and "Total" records come from the scope's op
    /// metrics, with the device's peaks; its per-step records are those of the steps that start inside
    /// the window (for a selected step: that step alone, as in a profile of it); XProf's "Average" record
    /// (per complete step, TPU only) is zero over any window as over the whole trace, its complete-step
    /// db being empty on every trace Tidemark models (a TPU without step lines).
    pub fn roofline_model(&mut self, scope: &Scope) -> Result<Arc<RooflineModel>, EngineError> {
        const TOOL: &str = "Roofline Model";
        kept(
            self,
            scope,
            |c| &mut c.roofline_models,
            |s| {
                let ops = s.device_ops(scope, TOOL)?;
                // One record per step: the steps are the Overview Page's (computed once per run and kept;
                // none where it does not compute them, as it says).
                let step_numbers: Vec<i64> = if roofline_model::has_model(ops.hardware) {
                    let steps = &s.overview_page(&scope.file_ids)?.input.steps;
                    steps.iter().filter(|st| starts_in(scope.window, st.begin_ps)).map(|st| st.group_id).collect()
                } else {
                    Vec::new()
                };
                roofline_model::analyze(&ops, &step_numbers).map_err(|e| s.unsupported(scope.file_ids[0], TOOL, e.to_string()))
            },
        )
    }

    /// The Op Profile of `scope` (an empty tree for a CPU-only trace; XProf's tree, XProf itself has no
    /// window), its ops joined with the whole run's modules.
    pub fn op_profile(&mut self, scope: &Scope) -> Result<Arc<OpProfile>, EngineError> {
        kept(
            self,
            scope,
            |c| &mut c.op_profiles,
            |s| {
                let ops = s.device_ops(scope, "Op Profile")?;
                Ok(op_profile::analyze(&ops, &s.op_metrics(&Scope::run(&scope.file_ids))?.modules))
            },
        )
    }
}
