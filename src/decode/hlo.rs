//! XLA HloProtos: standalone dumps (`*.hlo.pb`, `*.hlo_proto.pb`) and the ones an XSpace carries in
//! `/host:metadata` as the `Hlo Proto` stat of each module's event metadata.

use super::sniff::Format;
use super::xplane::{StatValue, XSpace};
use super::DecodeError;
use crate::decode::xplane::names::{HLO_PROTO, METADATA_PLANE, PROGRAM_ID};
use crate::proto::hlo as pb;
use prost::bytes::{Buf, Bytes};
use prost::Message;

const FORMAT: Format = Format::HloProto;

/// A standalone HloProto file.
pub struct HloFile {
    pub proto: pb::HloProto,
}

impl HloFile {
    pub fn decode(bytes: &[u8]) -> Result<Self, DecodeError> {
        let proto = decode_proto(bytes)?;
        if proto.hlo_module.is_none() {
            return Err(DecodeError::Corrupt { format: FORMAT, detail: "it has no hlo_module".into() });
        }
        Ok(HloFile { proto })
    }
}

/// Decodes an HloProto. From shared [`Bytes`] (an XSpace's embedded module) its literals' bytes are
/// slices of `bytes`, not copies.
pub fn decode_proto(bytes: impl Buf + AsRef<[u8]>) -> Result<pb::HloProto, DecodeError> {
    // Validate the top level first so truncation is reported with its byte offset.
    let all = bytes.as_ref();
    for f in super::wire::Fields::new(all, 0..all.len()) {
        f.map_err(|e| DecodeError::from_wire(FORMAT, e))?;
    }
    pb::HloProto::decode(bytes).map_err(|e| DecodeError::from_prost(FORMAT, "HloProto", e))
}

/// One HLO module as an XSpace names it: `<module>(<program_id>)`.
pub struct EmbeddedModule<'a> {
    /// The event metadata name, e.g. `jit_train_step(14)`.
    pub name: &'a str,
    /// The event metadata id: XProf's program id for a module without a `program_id` stat.
    pub metadata_id: i64,
    pub program_id: Option<u64>,
    /// The serialized HloProto (shared: [`decode_proto`] of a clone copies none of it).
    pub proto_bytes: &'a Bytes,
}

/// The HLO modules carried by `space`, in the order XProf lists them (by metadata id).
pub fn embedded_modules(space: &XSpace) -> Vec<EmbeddedModule<'_>> {
    let Some(plane) = space.plane_named(METADATA_PLANE) else { return Vec::new() };
    let (Some(hlo_id), program_id_stat) = (plane.stat_id(HLO_PROTO), plane.stat_id(PROGRAM_ID)) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (&metadata_id, meta) in &plane.meta.event_metadata {
        // The bytes as decoded (a bytes stat is never a reference: `Plane::stat_value` gives them as
        // they are), shared with the decoded modules.
        let Some(proto_bytes) = meta.stats.iter().find(|s| s.metadata_id == hlo_id).and_then(|s| match &s.value {
            Some(crate::proto::xplane::x_stat::Value::BytesValue(b)) => Some(b),
            _ => None,
        }) else {
            continue;
        };
        let program_id = program_id_stat.and_then(|pid| {
            meta.stats.iter().find(|s| s.metadata_id == pid).and_then(|s| plane.stat_value(s)).and_then(|v| match v {
                StatValue::Uint(u) => Some(u),
                StatValue::Int(i) => u64::try_from(i).ok(),
                _ => None,
            })
        });
        out.push(EmbeddedModule { name: &meta.name, metadata_id, program_id, proto_bytes });
    }
    out
}

/// What the overview says about one module.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ModuleSummary {
    /// Display name: `<module>(<program_id>)` inside an XSpace, the module name in a dump.
    pub name: String,
    pub module_name: String,
    pub program_id: Option<u64>,
    pub has_buffer_assignment: bool,
    pub computation_count: usize,
    pub instruction_count: usize,
    pub logical_buffer_count: usize,
    pub allocation_count: usize,
    /// Sum of the sizes of the non-thread-local allocations in memory space 0, XProf's
    /// "total buffer allocation".
    pub total_allocation_bytes: u64,
}

pub fn summarize(name: &str, program_id: Option<u64>, proto: &pb::HloProto) -> ModuleSummary {
    // Borrowed: a clone of a large module doubled its decoded size at every open (the page's memory
    // keeps its high-water mark).
    let module = proto.hlo_module.as_ref();
    let ba = proto.buffer_assignment.as_ref();
    let has_buffer_assignment = ba.is_some_and(|b| !b.buffer_allocations.is_empty() || !b.logical_buffers.is_empty());
    let total_allocation_bytes = ba
        .map(|b| b.buffer_allocations.iter().filter(|a| a.color == 0 && !a.is_thread_local).map(|a| a.size.max(0) as u64).sum())
        .unwrap_or(0);
    ModuleSummary {
        name: name.to_string(),
        module_name: module.map(|m| m.name.clone()).unwrap_or_default(),
        program_id,
        has_buffer_assignment,
        computation_count: module.map_or(0, |m| m.computations.len()),
        instruction_count: module.map_or(0, |m| m.computations.iter().map(|c| c.instructions.len()).sum()),
        logical_buffer_count: ba.map_or(0, |b| b.logical_buffers.len()),
        allocation_count: ba.map_or(0, |b| b.buffer_allocations.len()),
        total_allocation_bytes,
    }
}
