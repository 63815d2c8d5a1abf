//! The device op tables of opened files (Kernel Stats, HLO Op Stats), each computed once per file and
//! kept until the file is closed; what they share (the trace's HLO modules, the device op db) is
//! computed once too.

use super::Session;
use crate::analysis::device_ops::{self, DeviceOps};
use crate::analysis::hlo_stats::{self, HloStats};
use crate::analysis::kernel_stats::{self, KernelStats};
use crate::analysis::roofline_model::{self, RooflineModel};
use crate::analysis::xla_modules::XlaModules;
use crate::decode::{xplane::XSpace, Profile};
use std::collections::HashMap;
use std::sync::Arc;

/// Why a file has no op tables, in words for the user.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OpTablesError {
    #[error("no open file has id {0}")]
    NoSuchFile(u32),
    #[error("{0}: the op tables read XProf traces (*.xplane.pb); this file is another kind of profile")]
    NotATrace(String),
    #[error("{file}: {message}")]
    Unreadable { file: String, message: String },
}

/// What has been computed so far, by file id.
#[derive(Default)]
pub struct OpTablesCache {
    modules: HashMap<u32, Arc<XlaModules>>,
    kernel_stats: HashMap<u32, Arc<KernelStats>>,
    device_ops: HashMap<u32, Arc<DeviceOps>>,
    hlo_stats: HashMap<u32, Arc<HloStats>>,
    roofline_models: HashMap<u32, Arc<RooflineModel>>,
}

impl OpTablesCache {
    pub(super) fn forget_file(&mut self, file_id: u32) {
        self.modules.remove(&file_id);
        self.kernel_stats.remove(&file_id);
        self.device_ops.remove(&file_id);
        self.hlo_stats.remove(&file_id);
        self.roofline_models.remove(&file_id);
    }
}

impl Session {
    /// The trace of file `file_id`, with its name.
    fn trace(&self, file_id: u32) -> Result<(&str, &XSpace), OpTablesError> {
        let f = self.get(file_id).ok_or(OpTablesError::NoSuchFile(file_id))?;
        match &f.file.profile {
            Profile::XSpace(space) => Ok((&f.file.name, space)),
            _ => Err(OpTablesError::NotATrace(f.file.name.clone())),
        }
    }

    /// The HLO modules of file `file_id`, indexed once.
    fn xla_modules(&mut self, file_id: u32) -> Result<Arc<XlaModules>, OpTablesError> {
        if let Some(m) = self.op_tables.modules.get(&file_id) {
            return Ok(m.clone());
        }
        let modules = Arc::new(XlaModules::from_space(self.trace(file_id)?.1));
        self.op_tables.modules.insert(file_id, modules.clone());
        Ok(modules)
    }

    /// GPU Kernel Stats of file `file_id` (empty for a trace without GPU kernels).
    pub fn kernel_stats(&mut self, file_id: u32) -> Result<Arc<KernelStats>, OpTablesError> {
        if let Some(k) = self.op_tables.kernel_stats.get(&file_id) {
            return Ok(k.clone());
        }
        let modules = self.xla_modules(file_id)?;
        let (name, space) = self.trace(file_id)?;
        let stats = kernel_stats::analyze(space, &modules)
            .map_err(|e| OpTablesError::Unreadable { file: name.to_string(), message: e.to_string() })?;
        let stats = Arc::new(stats);
        self.op_tables.kernel_stats.insert(file_id, stats.clone());
        Ok(stats)
    }

    /// The device op db of file `file_id`: every HLO op the accelerators ran, over all cores.
    pub fn device_ops(&mut self, file_id: u32) -> Result<Arc<DeviceOps>, OpTablesError> {
        if let Some(d) = self.op_tables.device_ops.get(&file_id) {
            return Ok(d.clone());
        }
        let (name, space) = self.trace(file_id)?;
        let ops =
            Arc::new(device_ops::analyze(space).map_err(|e| OpTablesError::Unreadable { file: name.to_string(), message: e.to_string() })?);
        self.op_tables.device_ops.insert(file_id, ops.clone());
        Ok(ops)
    }

    /// HLO Op Stats of file `file_id` (empty for a CPU-only trace).
    pub fn hlo_stats(&mut self, file_id: u32) -> Result<Arc<HloStats>, OpTablesError> {
        if let Some(h) = self.op_tables.hlo_stats.get(&file_id) {
            return Ok(h.clone());
        }
        let ops = self.device_ops(file_id)?;
        let stats = Arc::new(hlo_stats::analyze(&ops));
        self.op_tables.hlo_stats.insert(file_id, stats.clone());
        Ok(stats)
    }

    /// The Roofline Model of file `file_id` (empty for a CPU-only trace).
    pub fn roofline_model(&mut self, file_id: u32) -> Result<Arc<RooflineModel>, OpTablesError> {
        if let Some(r) = self.op_tables.roofline_models.get(&file_id) {
            return Ok(r.clone());
        }
        let ops = self.device_ops(file_id)?;
        let model = roofline_model::analyze(&ops).map_err(|e| OpTablesError::Unreadable {
            file: self.get(file_id).map(|f| f.file.name.clone()).unwrap_or_default(),
            message: e.to_string(),
        })?;
        let model = Arc::new(model);
        self.op_tables.roofline_models.insert(file_id, model.clone());
        Ok(model)
    }
}
