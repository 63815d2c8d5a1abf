//! "XLA ops on CPU" of an opened trace (Tidemark's own table, see [`crate::analysis::xla_ops_cpu`]):
//! built in the file's one op-metrics pass and kept with it.

use super::{EngineError, Session};
use crate::analysis::xla_ops_cpu::XlaOpsCpu;
use std::sync::Arc;

impl Session {
    /// The XLA ops the host threads of `file_id` ran, one row per (module, HLO op).
    pub fn xla_ops_cpu(&mut self, file_id: u32) -> Result<Arc<XlaOpsCpu>, EngineError> {
        let m = self.op_metrics(&super::Scope::file(file_id))?;
        m.xla_ops_cpu
            .clone()
            .ok_or_else(|| self.unsupported(file_id, "XLA ops on CPU", "this session leaves out the XLA ops on CPU".into()))
    }
}
