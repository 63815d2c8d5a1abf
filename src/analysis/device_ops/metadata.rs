//! An HLO op's description as a TPU trace carries it on the event metadata of its `XLA Ops` events
//! (XProf's `SetOpMetadataFromHloEventMetadata`): name and expression, program and symbol ids,
//! category, framework op, FLOPs, bytes and their breakdown, source.

use crate::analysis::op_metrics::{MemoryAccessed, MemoryOperation, OpMetrics, SourceInfo};
use crate::decode::wire::{Fields, Value};
use crate::decode::xplane::names::{DEDUPLICATED_NAME, HLO_CATEGORY, PROGRAM_ID, SYMBOL_ID, TF_OP};
use crate::decode::xplane::{Plane, StatValue};
use crate::proto::xplane as pb;

/// Where an op's metrics are merged: per program, per symbol (XProf's `XEventsOpMetricsDbBuilder::OpKey`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OpKey {
    pub program_id: Option<u64>,
    pub symbol_id: Option<u64>,
}

/// The op key of events of metadata `meta`.
pub fn op_key(plane: &Plane, meta: &pb::XEventMetadata) -> OpKey {
    let mut key = OpKey::default();
    for s in &meta.stats {
        let Some(v) = plane.stat_value(s) else { continue };
        match plane.stat_name(s.metadata_id) {
            PROGRAM_ID => key.program_id = v.as_u64(),
            SYMBOL_ID => key.symbol_id = v.as_u64(),
            _ => {}
        }
    }
    key
}

/// Fills `m`'s descriptive fields, FLOPs and bytes (for one occurrence) from `meta`.
pub fn set_op_metadata(plane: &Plane, meta: &pb::XEventMetadata, m: &mut OpMetrics) {
    if meta.display_name.is_empty() {
        m.name = meta.name.clone();
    } else {
        m.name = meta.display_name.clone();
        m.long_name = meta.name.clone();
    }
    for s in &meta.stats {
        let Some(v) = plane.stat_value(s) else { continue };
        let text = || v.as_str().unwrap_or("").to_string();
        match plane.stat_name(s.metadata_id) {
            PROGRAM_ID => m.hlo_module_id = v.as_u64().unwrap_or(0),
            HLO_CATEGORY => m.category = text(),
            TF_OP => m.provenance = text(),
            "flops" => {
                m.flops = v.as_u64().unwrap_or(0);
                m.flops_v2 = m.flops as f64;
            }
            "model_flops" => {
                m.model_flops = v.as_u64().unwrap_or(0);
                m.model_flops_v2 = m.model_flops as f64;
            }
            "bytes_accessed" => m.bytes_accessed = v.as_u64().unwrap_or(0),
            "memory_access_breakdown" => {
                if let StatValue::Bytes(b) = v {
                    if let Some(breakdown) = memory_access_breakdown(b) {
                        m.memory_accessed_breakdown = breakdown;
                    }
                }
            }
            DEDUPLICATED_NAME => m.deduplicated_name = text(),
            "source" => set_source_top_line(&text(), m.source_info.get_or_insert_with(SourceInfo::default)),
            "source_stack" => m.source_info.get_or_insert_with(SourceInfo::default).stack_frame = text(),
            _ => {}
        }
    }
}

/// `file:line` into `info`; left as it is when the text is not in that form.
fn set_source_top_line(top_line: &str, info: &mut SourceInfo) {
    if let Some((file, line)) = top_line.split_once(':') {
        if let Ok(line) = line.trim().parse::<i32>() {
            info.file_name = file.to_string();
            info.line_number = line;
        }
    }
}

/// A serialized `MemoryAccessBreakdown` (`repeated MemoryAccessed memory_accessed = 1`, each
/// `operation_type = 1`, `memory_space = 2`, `bytes_accessed = 3`); `None` if it does not parse.
fn memory_access_breakdown(bytes: &[u8]) -> Option<Vec<MemoryAccessed>> {
    let mut out = Vec::new();
    for f in Fields::new(bytes, 0..bytes.len()) {
        let f = f.ok()?;
        let (1, Value::Len(r)) = (f.number, f.value) else { continue };
        let mut a = MemoryAccessed::default();
        for g in Fields::new(bytes, r) {
            match g.ok()? {
                crate::decode::wire::Field { number: 1, value: Value::Varint(v), .. } => {
                    a.operation_type = match v {
                        1 => MemoryOperation::Read,
                        2 => MemoryOperation::Write,
                        _ => MemoryOperation::Unknown,
                    }
                }
                crate::decode::wire::Field { number: 2, value: Value::Varint(v), .. } => a.memory_space = v,
                crate::decode::wire::Field { number: 3, value: Value::Varint(v), .. } => a.bytes_accessed = v,
                _ => {}
            }
        }
        out.push(a);
    }
    Some(out)
}
