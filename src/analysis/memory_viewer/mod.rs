//! The Memory Viewer: what an XLA module's buffer assignment keeps live, when, and where — computed
//! from an HloProto's buffer assignment exactly as XProf does (docs/formats.md §3), plus figures
//! XProf does not show (padding overhead, fragmentation, totals by group at the peak).
//!
//! Pipeline: [`assignment`] indexes the proto, [`heap_simulation`] replays the chosen trace,
//! [`peak`] lists the buffers live at the peak, [`blocks`] lays out the allocation blocks, and
//! [`xprof_json`] writes XProf's own JSON schema. [`modules`] finds the modules inside a decoded file.
//!
//! XProf 2.24.2 (the version that wrote the fixtures) differs from its published source in ways we
//! follow, inferred from its outputs and checked on every fixture module:
//! - thread-local allocations are not "indefinite" (see [`assignment::Allocation::is_indefinite`]);
//! - a SHARE_WITH that revives released memory is a new allocation of the sharing buffer (see
//!   [`heap_simulation`]);
//! - `bufferBlocks` exist (the published source only draws a Graphviz timeline); see [`blocks`].
//!
//! Where we differ from XProf on purpose:
//! - XProf iterates its allocations in hash order, so with several candidate allocations the chosen
//!   trace and the block order can change between runs; we always go by allocation index.
//! - XProf sorts the by-size list with an unstable sort; ours keeps program order among equal sizes.
//! - Block `offset` is the allocation's y position plus the buffer's offset. XProf draws its timeline
//!   at the buffer's offset alone, stacking every allocation's buffers onto the first one; with a
//!   single simulated allocation (every fixture) the two agree.
//! - A module without buffer assignment, or a memory space without allocations, is an error naming
//!   the problem; XProf returns an empty page.

pub mod assignment;
pub mod blocks;
pub mod heap_simulation;
pub mod modules;
pub mod peak;
pub mod shape;
pub mod source;
pub mod xprof_json;

use crate::proto::hlo::HloProto;
use assignment::{summarize_skips, Assignment};
pub use heap_simulation::Span;
use serde::{Deserialize, Serialize};
pub use source::SourceInfo;
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

/// A name the analysis takes from a fixed vocabulary (groups, categories, colours): borrowed when
/// computed, owned when read back from JSON on the page's side of the worker boundary.
pub type Label = Cow<'static, str>;

/// What to analyze.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Options {
    /// The memory space (XLA "color"); 0 is device memory.
    pub memory_space: i64,
    /// Buffers smaller than this fold into one "small" entry at the peak.
    pub small_buffer_bytes: i64,
}

/// XProf's defaults: memory space 0, buffers under 16 KiB folded.
impl Default for Options {
    fn default() -> Self {
        Options { memory_space: 0, small_buffer_bytes: 16 * 1024 }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum MemoryViewerError {
    #[error("the HloProto has no module")]
    NoModule,
    #[error("module `{module}` has no buffer assignment, so there is nothing for the Memory Viewer to show. XLA writes it only after optimizations: use the `*after_optimizations*.hlo.pb` dump (XLA_FLAGS=--xla_dump_hlo_as_proto) or a profile (*.xplane.pb) of a compiled program")]
    NoBufferAssignment { module: String },
    #[error("memory space {memory_space} has no allocations in this module; its memory spaces are {present:?}")]
    NoSuchMemorySpace { memory_space: i64, present: Vec<i64> },
    #[error("no module `{module}`; the modules are: {}", known.join(", "))]
    UnknownModule { module: String, known: Vec<String> },
    #[error("`{module}` names several modules; choose one of: {}", candidates.join(", "))]
    AmbiguousModule { module: String, candidates: Vec<String> },
    #[error("the heap-simulator trace cannot be replayed: {0}")]
    Trace(String),
    #[error("{0}")]
    Module(String),
}

/// The Memory Viewer of one module and memory space. All sizes in bytes; heap figures include the
/// indefinite allocations, as XProf's do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryViewer {
    pub module_name: String,
    pub entry_computation_name: String,
    pub options: Options,
    /// The heap-simulator trace replayed; `None` when the memory space has none (only indefinite
    /// allocations then, and an empty timeline).
    pub trace_index: Option<usize>,
    /// Heap size before each event of the trace, and after the last one.
    pub heap_bytes: Vec<i64>,
    pub unpadded_heap_bytes: Vec<i64>,
    /// The instruction of each event ("" for the final point).
    pub instruction_names: Vec<String>,
    pub peak_heap_bytes: i64,
    pub peak_unpadded_heap_bytes: i64,
    /// Index of the event that first reached the peak.
    pub peak_position: usize,
    /// Buffers live at the peak, in program order (indefinite first, small ones folded last).
    pub peak_buffers: Vec<HeapObject>,
    /// Indices into `peak_buffers`, largest first; program order among equal sizes.
    pub peak_buffers_by_size: Vec<usize>,
    /// Event-index lifetime of each buffer the trace allocates.
    #[serde(with = "span_pairs")]
    pub spans: BTreeMap<i64, Span>,
    pub indefinite_allocations: Vec<IndefiniteAllocation>,
    pub blocks: Vec<BufferBlock>,
    pub figures: Figures,
    /// Bytes live at the peak per group (Parameter, Output, Temporary, ...), before the small fold:
    /// what to cut when a program runs out of memory. Sums to `peak_heap_bytes`.
    pub peak_by_group: Vec<GroupTotal>,
    /// Memory spaces that have allocations in this module, ascending.
    pub memory_spaces: Vec<i64>,
    /// What was skipped or looks odd in the input.
    pub notes: Vec<String>,
}

/// Spans as `[id, span]` pairs: JSON object keys are strings, which serde cannot read back as integers
/// inside the worker protocol's tagged enums.
mod span_pairs {
    use super::Span;
    use serde::{Deserialize, Deserializer, Serializer};
    use std::collections::BTreeMap;

    pub fn serialize<S: Serializer>(spans: &BTreeMap<i64, Span>, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(spans)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeMap<i64, Span>, D::Error> {
        Ok(Vec::<(i64, Span)>::deserialize(d)?.into_iter().collect())
    }
}

/// A buffer live at the peak, or the fold of the small ones (`logical_buffer_id` `None`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeapObject {
    /// Colour number: its position in `peak_buffers`.
    pub color_index: i32,
    /// `instr: <shape with layout> # <op_name>`.
    pub label: String,
    pub logical_buffer_id: Option<i64>,
    pub size_bytes: i64,
    pub unpadded_bytes: i64,
    /// The instruction with its shape index, e.g. `tuple.3{1}`.
    pub instruction_name: String,
    pub shape: String,
    pub op_name: String,
    pub group: Option<Label>,
    pub opcode: String,
    pub source: Option<SourceInfo>,
}

/// An allocation live for the whole program (parameter, constant or maybe-live-out).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndefiniteAllocation {
    pub index: i64,
    pub size_bytes: i64,
    /// XProf's words: "entry computation parameter", "may-be live out", "reusable".
    pub attributes: Vec<Label>,
    pub logical_buffers: Vec<AssignedBuffer>,
    /// The shape all its buffers share, or "".
    pub common_shape: String,
}

/// A logical buffer as assigned to an allocation; the name fields are empty when the buffer or its
/// instruction is unknown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AssignedBuffer {
    pub id: i64,
    pub size_bytes: i64,
    pub hlo_name: String,
    pub shape_index: Vec<i64>,
    pub shape: String,
}

/// One rectangle of the allocation-block layout; `logical_buffer_id` `None` is an allocation's band.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BufferBlock {
    pub logical_buffer_id: Option<i64>,
    pub name: String,
    /// y: the allocation's position plus the buffer's offset in it.
    pub offset_bytes: i64,
    pub size_bytes: i64,
    /// x: first event index, and the event index where the lifetime ends.
    pub start_step: i64,
    pub end_step: i64,
    pub op_name: String,
    pub category: Label,
    pub source: Option<SourceInfo>,
    pub shape: String,
    pub unpadded_bytes: i64,
    pub color: Label,
}

/// The page's headline figures. The first seven are XProf's; the rest are Tidemark's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figures {
    pub peak_heap_bytes: i64,
    pub peak_unpadded_heap_bytes: i64,
    pub entry_parameters_bytes: i64,
    /// Thread-local and tuple allocations.
    pub non_reusable_bytes: i64,
    pub maybe_live_out_bytes: i64,
    /// All allocations of the memory space except thread-local ones.
    pub total_allocation_bytes: i64,
    pub indefinite_allocation_bytes: i64,
    /// Total allocation − indefinite allocation: what the heap simulator packs temporaries into.
    pub temporary_allocation_bytes: i64,
    /// Peak − unpadded peak: bytes spent on layout padding and tiling at the peak.
    pub padding_overhead_bytes: i64,
    /// (total allocation − peak) / (total allocation − indefinite): the share of the temporary
    /// allocation left unused at the peak. `None` when there is no temporary allocation.
    pub fragmentation: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupTotal {
    pub group: Label,
    pub bytes: i64,
    pub buffer_count: usize,
}

/// Computes the Memory Viewer of `proto` for `options.memory_space`.
pub fn analyze(proto: &HloProto, options: Options) -> Result<MemoryViewer, MemoryViewerError> {
    let module = proto.hlo_module.as_ref().ok_or(MemoryViewerError::NoModule)?;
    let has_assignment =
        proto.buffer_assignment.as_ref().is_some_and(|b| !b.buffer_allocations.is_empty() || !b.logical_buffers.is_empty());
    if !has_assignment {
        return Err(MemoryViewerError::NoBufferAssignment { module: module.name.clone() });
    }
    let assignment = Assignment::new(proto);
    let color = options.memory_space;
    let memory_spaces: Vec<i64> = assignment.allocations.values().map(|a| a.proto.color).collect::<BTreeSet<i64>>().into_iter().collect();
    if !memory_spaces.contains(&color) {
        return Err(MemoryViewerError::NoSuchMemorySpace { memory_space: color, present: memory_spaces });
    }
    check_output_size(&assignment, color, proto)?;
    let trace_index = assignment.trace_for(color);
    let replay = match trace_index {
        Some(i) => heap_simulation::replay(&assignment, i)?,
        None => heap_simulation::Replay::default(),
    };
    let peak = peak::snapshot(&assignment, color, &replay, options.small_buffer_bytes);
    let blocks = blocks::blocks(&assignment, color, &replay, &peak);
    let indefinite = peak.indefinite_bytes;
    let add = |v: &[i64]| v.iter().map(|b| b.saturating_add(indefinite)).collect::<Vec<_>>();
    let figures =
        figures(&assignment, color, replay.peak_bytes.saturating_add(indefinite), replay.peak_unpadded_bytes.saturating_add(indefinite));

    let mut notes = assignment.skip_notes();
    if replay.skipped_events > 0 {
        notes.extend(summarize_skips(&[format!("{} heap-simulator events name unknown buffers", replay.skipped_events)]));
    }
    if trace_index.is_none() {
        notes.push(format!("memory space {color} has no heap-simulator trace: only the allocations live for the whole program are shown"));
    }
    Ok(MemoryViewer {
        module_name: module.name.clone(),
        entry_computation_name: module.entry_computation_name.clone(),
        options,
        trace_index,
        heap_bytes: add(&replay.heap_bytes),
        unpadded_heap_bytes: add(&replay.unpadded_heap_bytes),
        instruction_names: replay.instruction_names,
        peak_heap_bytes: figures.peak_heap_bytes,
        peak_unpadded_heap_bytes: figures.peak_unpadded_heap_bytes,
        peak_position: replay.peak_position,
        peak_buffers: peak.objects,
        peak_buffers_by_size: peak.by_size,
        spans: replay.spans,
        indefinite_allocations: indefinite_allocations(&assignment, color),
        blocks,
        figures,
        peak_by_group: peak.by_group,
        memory_spaces,
        notes,
    })
}

/// Output text (labels, shapes, source stacks) allowed per byte of the proto, plus a constant. Each
/// buffer copies its instruction's text, so a crafted module of many buffers sharing one instruction
/// with a huge shape or stack would otherwise multiply into memory. Real modules need a few bytes per
/// byte.
const OUTPUT_BYTES_PER_PROTO_BYTE: usize = 64;
const OUTPUT_BYTES_SLACK: usize = 256 << 20;

/// Refuses a module whose text output would exceed its budget, before building any of it.
fn check_output_size(assignment: &Assignment, color: i64, proto: &HloProto) -> Result<(), MemoryViewerError> {
    use prost::Message;
    let mut instruction_text: std::collections::HashMap<i64, usize> = std::collections::HashMap::new();
    let mut shape_text: std::collections::HashMap<*const crate::proto::hlo::ShapeProto, usize> = std::collections::HashMap::new();
    let mut total = 0usize;
    for allocation in assignment.allocations_of(color) {
        for assigned in &allocation.proto.assigned {
            let Some(buffer) = assignment.buffer(assigned.logical_buffer_id) else { continue };
            let text = *instruction_text.entry(buffer.instruction.id).or_insert_with(|| {
                let source = peak::buffer_source(assignment, buffer).map_or(0, |s| s.file_name.len() + s.stack_frame.len());
                buffer.instruction.name.len() + buffer.instruction.opcode.len() + buffer.op_name().len() + source
            });
            let shape = *shape_text.entry(buffer.shape).or_insert_with(|| buffer.shape_text().len());
            // A buffer can be in the peak list, the blocks and an indefinite allocation, each with its
            // own copy of the text (and the shape twice in a label).
            total = total.saturating_add(3 * (text + 2 * shape + 128));
        }
    }
    let budget = proto.encoded_len().saturating_mul(OUTPUT_BYTES_PER_PROTO_BYTE).saturating_add(OUTPUT_BYTES_SLACK);
    if total > budget {
        let module = proto.hlo_module.as_ref().map_or("", |m| m.name.as_str());
        return Err(MemoryViewerError::Module(format!(
            "module `{module}` is too large for the Memory Viewer: the labels, shapes and source stacks of its buffers would take {} (more than {} for a {} module). Only a malformed HloProto does this (many buffers repeating one huge shape or stack)",
            crate::units::bytes(total as i64),
            crate::units::bytes(budget as i64),
            crate::units::bytes(proto.encoded_len() as i64)
        )));
    }
    Ok(())
}

fn figures(assignment: &Assignment, color: i64, peak_heap_bytes: i64, peak_unpadded_heap_bytes: i64) -> Figures {
    let sum = |keep: &dyn Fn(&assignment::Allocation) -> bool| {
        assignment.allocations_of(color).filter(|a| keep(a)).map(|a| a.proto.size).fold(0i64, i64::saturating_add)
    };
    let total_allocation_bytes = sum(&|a| !a.proto.is_thread_local);
    let indefinite_allocation_bytes = sum(&|a| a.is_indefinite());
    // Saturating: a malformed file can carry sizes near i64's limits.
    let temporary_bytes = total_allocation_bytes.saturating_sub(indefinite_allocation_bytes);
    Figures {
        peak_heap_bytes,
        peak_unpadded_heap_bytes,
        entry_parameters_bytes: sum(&|a| a.proto.is_entry_computation_parameter),
        non_reusable_bytes: sum(&|a| !a.is_reusable()),
        maybe_live_out_bytes: sum(&|a| a.proto.maybe_live_out),
        total_allocation_bytes,
        indefinite_allocation_bytes,
        temporary_allocation_bytes: temporary_bytes,
        padding_overhead_bytes: peak_heap_bytes.saturating_sub(peak_unpadded_heap_bytes),
        fragmentation: (temporary_bytes > 0)
            .then(|| total_allocation_bytes.saturating_sub(peak_heap_bytes) as f64 / temporary_bytes as f64),
    }
}

fn indefinite_allocations(assignment: &Assignment, color: i64) -> Vec<IndefiniteAllocation> {
    assignment
        .allocations_of(color)
        .filter(|a| a.is_indefinite())
        .map(|a| {
            let p = a.proto;
            let mut attributes = Vec::new();
            if p.is_entry_computation_parameter {
                attributes.push("entry computation parameter".into());
            }
            if p.maybe_live_out {
                attributes.push("may-be live out".into());
            }
            if a.is_reusable() {
                attributes.push("reusable".into());
            }
            let logical_buffers: Vec<AssignedBuffer> = p
                .assigned
                .iter()
                .map(|assigned| {
                    let buffer = assignment.buffer(assigned.logical_buffer_id);
                    AssignedBuffer {
                        id: assigned.logical_buffer_id,
                        size_bytes: assigned.size,
                        hlo_name: buffer.map(|b| b.instruction.name.clone()).unwrap_or_default(),
                        shape_index: buffer.map(|b| b.shape_index().to_vec()).unwrap_or_default(),
                        shape: buffer.map(|b| b.shape_text()).unwrap_or_default(),
                    }
                })
                .collect();
            let common_shape = match logical_buffers.split_first() {
                Some((first, rest)) if rest.iter().all(|b| b.shape == first.shape) => first.shape.clone(),
                _ => String::new(),
            };
            IndefiniteAllocation { index: p.index, size_bytes: p.size, attributes, logical_buffers, common_shape }
        })
        .collect()
}
