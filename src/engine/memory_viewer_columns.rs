//! The Memory Viewer's reply to the page, in columns: what the page draws and nothing else, each
//! buffer's text once, blocks and peak buffers as arrays of numbers. A large module has 100,000
//! blocks; as objects they crossed as 100,000 JSON objects, each repeating its buffer's name, shape,
//! op name and source (as the peak list and the indefinite allocations did again).
//!
//! [`ViewerColumns::of`] borrows every string and list from the engine's [`MemoryViewer`] (only the
//! number columns are built), so answering a request never deep-clones the analysis; the page reads
//! the same type back owned.

use crate::analysis::memory_viewer::{BufferBlock, Figures, GroupTotal, HeapObject, MemoryViewer, SourceInfo, Span};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::HashMap;

/// The text of one buffer (or of an allocation band, or of the small-buffer fold), once.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BufferText<'a> {
    /// The instruction with its shape index (`tuple.3{1}`); the category for an allocation band.
    pub name: Cow<'a, str>,
    pub shape: Cow<'a, str>,
    pub op_name: Cow<'a, str>,
    pub source: Option<Cow<'a, SourceInfo>>,
}

/// The peak buffers, one column per field; `text` and `group` index [`ViewerColumns::texts`] and
/// [`ViewerColumns::labels`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PeakColumns<'a> {
    /// `instr: <shape> # <op_name>`, as XProf labels a buffer.
    pub label: Vec<Cow<'a, str>>,
    pub text: Vec<u32>,
    /// -1 for the fold of the small buffers.
    pub logical_buffer_id: Vec<i64>,
    pub size_bytes: Vec<i64>,
    pub unpadded_bytes: Vec<i64>,
    /// Index into the labels, or -1 without a group.
    pub group: Vec<i32>,
    pub opcode: Vec<Cow<'a, str>>,
    /// The buffer's share of the peak heap ([`fraction_of_peak`]).
    pub peak_fraction: Vec<Option<f64>>,
    /// Size over unpadded size ([`expansion`]).
    pub expansion: Vec<Option<f64>>,
}

/// The allocation blocks, one column per field.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BlockColumns {
    pub text: Vec<u32>,
    /// -1 for an allocation's band.
    pub logical_buffer_id: Vec<i64>,
    pub offset_bytes: Vec<i64>,
    pub size_bytes: Vec<i64>,
    pub start_step: Vec<i64>,
    pub end_step: Vec<i64>,
    pub unpadded_bytes: Vec<i64>,
    /// Index into the labels.
    pub category: Vec<u32>,
    /// Size over unpadded size ([`expansion`]).
    pub expansion: Vec<Option<f64>>,
}

/// What the Memory Viewer page draws of one module and memory space.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ViewerColumns<'a> {
    pub module_name: Cow<'a, str>,
    pub memory_space: i64,
    pub memory_spaces: Cow<'a, [i64]>,
    pub figures: Cow<'a, Figures>,
    pub peak_position: usize,
    pub peak_by_group: Cow<'a, [GroupTotal]>,
    /// Each group's share of the peak heap ([`fraction_of_peak`]), in `peak_by_group`'s order.
    pub peak_by_group_fraction: Vec<Option<f64>>,
    pub notes: Cow<'a, [String]>,
    /// Heap size before each event and after the last; the instruction of each event.
    pub heap_bytes: Cow<'a, [i64]>,
    pub unpadded_heap_bytes: Cow<'a, [i64]>,
    pub instruction_names: Cow<'a, [String]>,
    /// Event-index lifetimes by logical buffer id (sorted by id).
    pub span_buffer_ids: Vec<i64>,
    pub span_starts: Vec<i64>,
    pub span_limits: Vec<i64>,
    /// Group and category names the columns refer to by index.
    pub labels: Vec<Cow<'a, str>>,
    pub texts: Vec<BufferText<'a>>,
    pub peak_buffers: PeakColumns<'a>,
    /// Indices into the peak buffers, largest first.
    pub peak_buffers_by_size: Cow<'a, [usize]>,
    pub blocks: BlockColumns,
}

/// The columns as the page holds them, read back from a reply.
pub type ViewerData = ViewerColumns<'static>;

/// A peak buffer read back from the columns.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PeakBuffer<'c> {
    pub index: usize,
    pub label: &'c str,
    pub logical_buffer_id: Option<i64>,
    pub size_bytes: i64,
    pub unpadded_bytes: i64,
    pub group: Option<&'c str>,
    pub opcode: &'c str,
    pub peak_fraction: Option<f64>,
    pub expansion: Option<f64>,
    pub text: &'c BufferText<'c>,
}

/// A block read back from the columns.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Block<'c> {
    pub logical_buffer_id: Option<i64>,
    pub offset_bytes: i64,
    pub size_bytes: i64,
    pub start_step: i64,
    pub end_step: i64,
    pub unpadded_bytes: i64,
    pub category: &'c str,
    pub expansion: Option<f64>,
    pub text: &'c BufferText<'c>,
}

/// Interns texts and labels while the columns are built.
#[derive(Default)]
struct Interner<'a> {
    texts: Vec<BufferText<'a>>,
    text_index: HashMap<(Option<i64>, &'a str), u32>,
    labels: Vec<Cow<'a, str>>,
    label_index: HashMap<&'a str, u32>,
}

impl<'a> Interner<'a> {
    fn label(&mut self, l: &'a str) -> u32 {
        let next = self.labels.len() as u32;
        *self.label_index.entry(l).or_insert_with(|| {
            self.labels.push(Cow::Borrowed(l));
            next
        })
    }

    /// The text of buffer `id` (by id and name: an allocation band has no id and is named by its
    /// category).
    fn text(&mut self, id: Option<i64>, name: &'a str, shape: &'a str, op_name: &'a str, source: Option<&'a SourceInfo>) -> u32 {
        let next = self.texts.len() as u32;
        *self.text_index.entry((id, name)).or_insert_with(|| {
            self.texts.push(BufferText {
                name: Cow::Borrowed(name),
                shape: Cow::Borrowed(shape),
                op_name: Cow::Borrowed(op_name),
                source: source.map(Cow::Borrowed),
            });
            next
        })
    }
}

impl<'a> ViewerColumns<'a> {
    /// The columns of `v`, borrowing its text.
    pub fn of(v: &'a MemoryViewer) -> Self {
        let mut i = Interner::default();
        let mut peak = PeakColumns::default();
        let peak_bytes = v.figures.peak_heap_bytes;
        for o in &v.peak_buffers {
            push_peak(&mut peak, &mut i, o, peak_bytes);
        }
        let mut blocks = BlockColumns::default();
        for b in &v.blocks {
            push_block(&mut blocks, &mut i, b);
        }
        let spans: Vec<(&i64, &Span)> = v.spans.iter().collect();
        ViewerColumns {
            module_name: Cow::Borrowed(&v.module_name),
            memory_space: v.options.memory_space,
            memory_spaces: Cow::Borrowed(&v.memory_spaces),
            figures: Cow::Borrowed(&v.figures),
            peak_position: v.peak_position,
            peak_by_group: Cow::Borrowed(&v.peak_by_group),
            peak_by_group_fraction: v.peak_by_group.iter().map(|g| fraction_of_peak(g.bytes, peak_bytes)).collect(),
            notes: Cow::Borrowed(&v.notes),
            heap_bytes: Cow::Borrowed(&v.heap_bytes),
            unpadded_heap_bytes: Cow::Borrowed(&v.unpadded_heap_bytes),
            instruction_names: Cow::Borrowed(&v.instruction_names),
            span_buffer_ids: spans.iter().map(|(id, _)| **id).collect(),
            span_starts: spans.iter().map(|(_, s)| s.start).collect(),
            span_limits: spans.iter().map(|(_, s)| s.limit).collect(),
            labels: i.labels,
            texts: i.texts,
            peak_buffers: peak,
            peak_buffers_by_size: Cow::Borrowed(&v.peak_buffers_by_size),
            blocks,
        }
    }

    pub fn peak_heap_bytes(&self) -> i64 {
        self.figures.peak_heap_bytes
    }

    pub fn peak_buffer_count(&self) -> usize {
        self.peak_buffers.size_bytes.len()
    }

    pub fn peak_buffer(&self, index: usize) -> Option<PeakBuffer<'_>> {
        let p = &self.peak_buffers;
        Some(PeakBuffer {
            index,
            label: p.label.get(index)?,
            logical_buffer_id: p.logical_buffer_id.get(index).copied().filter(|id| *id >= 0),
            size_bytes: *p.size_bytes.get(index)?,
            unpadded_bytes: *p.unpadded_bytes.get(index)?,
            group: p.group.get(index).and_then(|g| usize::try_from(*g).ok()).and_then(|g| self.labels.get(g)).map(|l| &**l),
            opcode: p.opcode.get(index)?,
            peak_fraction: *p.peak_fraction.get(index)?,
            expansion: *p.expansion.get(index)?,
            text: self.texts.get(*p.text.get(index)? as usize)?,
        })
    }

    /// The peak buffers in program order.
    pub fn peak_buffers(&self) -> impl Iterator<Item = PeakBuffer<'_>> {
        (0..self.peak_buffer_count()).filter_map(|i| self.peak_buffer(i))
    }

    pub fn block_count(&self) -> usize {
        self.blocks.size_bytes.len()
    }

    pub fn block(&self, index: usize) -> Option<Block<'_>> {
        let b = &self.blocks;
        Some(Block {
            logical_buffer_id: b.logical_buffer_id.get(index).copied().filter(|id| *id >= 0),
            offset_bytes: *b.offset_bytes.get(index)?,
            size_bytes: *b.size_bytes.get(index)?,
            start_step: *b.start_step.get(index)?,
            end_step: *b.end_step.get(index)?,
            unpadded_bytes: *b.unpadded_bytes.get(index)?,
            category: self.labels.get(*b.category.get(index)? as usize)?,
            expansion: *b.expansion.get(index)?,
            text: self.texts.get(*b.text.get(index)? as usize)?,
        })
    }

    /// The lifetime (first event, event where it ends) of buffer `id`.
    pub fn span(&self, id: i64) -> Option<(i64, i64)> {
        let i = self.span_buffer_ids.binary_search(&id).ok()?;
        Some((*self.span_starts.get(i)?, *self.span_limits.get(i)?))
    }
}

/// `bytes` as a fraction of the peak heap `peak_bytes`; `None` for an empty peak.
pub fn fraction_of_peak(bytes: i64, peak_bytes: i64) -> Option<f64> {
    (peak_bytes > 0).then(|| bytes as f64 / peak_bytes as f64)
}

/// How much layout padding and tiling grow a buffer: its size over its unpadded size; `None` when the
/// unpadded size is unknown (0).
pub fn expansion(size_bytes: i64, unpadded_bytes: i64) -> Option<f64> {
    (unpadded_bytes > 0).then(|| size_bytes as f64 / unpadded_bytes as f64)
}

fn push_peak<'a>(p: &mut PeakColumns<'a>, i: &mut Interner<'a>, o: &'a HeapObject, peak_bytes: i64) {
    p.label.push(Cow::Borrowed(&o.label));
    p.text.push(i.text(o.logical_buffer_id, &o.instruction_name, &o.shape, &o.op_name, o.source.as_ref()));
    p.logical_buffer_id.push(o.logical_buffer_id.unwrap_or(-1));
    p.size_bytes.push(o.size_bytes);
    p.unpadded_bytes.push(o.unpadded_bytes);
    p.group.push(o.group.as_deref().map_or(-1, |g| i.label(g) as i32));
    p.opcode.push(Cow::Borrowed(&o.opcode));
    p.peak_fraction.push(fraction_of_peak(o.size_bytes, peak_bytes));
    p.expansion.push(expansion(o.size_bytes, o.unpadded_bytes));
}

fn push_block<'a>(c: &mut BlockColumns, i: &mut Interner<'a>, b: &'a BufferBlock) {
    c.text.push(i.text(b.logical_buffer_id, &b.name, &b.shape, &b.op_name, b.source.as_ref()));
    c.logical_buffer_id.push(b.logical_buffer_id.unwrap_or(-1));
    c.offset_bytes.push(b.offset_bytes);
    c.size_bytes.push(b.size_bytes);
    c.start_step.push(b.start_step);
    c.end_step.push(b.end_step);
    c.unpadded_bytes.push(b.unpadded_bytes);
    c.category.push(i.label(&b.category));
    c.expansion.push(expansion(b.size_bytes, b.unpadded_bytes));
}

/// A Memory Viewer in a reply: the engine's analysis as it sends it, or the columns as the page reads
/// them back. Both travel as [`ViewerColumns`].
#[derive(Debug, Clone)]
pub enum ViewerReply {
    Engine(std::sync::Arc<MemoryViewer>),
    Page(std::sync::Arc<ViewerColumns<'static>>),
}

impl Serialize for ViewerReply {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ViewerReply::Engine(v) => ViewerColumns::of(v).serialize(s),
            ViewerReply::Page(c) => c.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for ViewerReply {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        ViewerColumns::deserialize(d).map(|c| ViewerReply::Page(std::sync::Arc::new(c)))
    }
}

/// Equal when they travel as the same columns.
impl PartialEq for ViewerReply {
    fn eq(&self, other: &Self) -> bool {
        fn with<R>(r: &ViewerReply, f: impl FnOnce(&ViewerColumns<'_>) -> R) -> R {
            match r {
                ViewerReply::Engine(v) => f(&ViewerColumns::of(v)),
                ViewerReply::Page(c) => f(c),
            }
        }
        with(self, |a| with(other, |b| a == b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::memory_viewer::{Figures, Options};
    use std::collections::BTreeMap;

    fn block(id: Option<i64>, name: &str, offset_bytes: i64) -> BufferBlock {
        BufferBlock {
            logical_buffer_id: id,
            name: name.into(),
            offset_bytes,
            size_bytes: 64,
            start_step: 1,
            end_step: 3,
            op_name: "jit(f)/add".into(),
            category: "Temporary".into(),
            source: None,
            shape: "f32[16]".into(),
            unpadded_bytes: 64,
            color: "c".into(),
        }
    }

    /// The wire form: blocks and peak buffers as columns, each buffer's text once, the page's
    /// accessors reading back what the engine had.
    #[test]
    fn blocks_travel_as_columns_with_their_text_once() {
        let peak = HeapObject {
            color_index: 0,
            label: "add.1: f32[16] # jit(f)/add".into(),
            logical_buffer_id: Some(7),
            size_bytes: 64,
            unpadded_bytes: 64,
            instruction_name: "add.1".into(),
            shape: "f32[16]".into(),
            op_name: "jit(f)/add".into(),
            group: Some("Temporary".into()),
            opcode: "add".into(),
            source: None,
        };
        let v = MemoryViewer {
            module_name: "m".into(),
            entry_computation_name: "e".into(),
            options: Options::default(),
            trace_index: Some(0),
            heap_bytes: vec![0, 64, 0],
            unpadded_heap_bytes: vec![0, 64, 0],
            instruction_names: vec!["add.1".into(), "".into(), "".into()],
            peak_heap_bytes: 64,
            peak_unpadded_heap_bytes: 64,
            peak_position: 1,
            peak_buffers: vec![peak],
            peak_buffers_by_size: vec![0],
            spans: BTreeMap::from([(7, Span { start: 1, limit: 3 })]),
            indefinite_allocations: Vec::new(),
            blocks: vec![block(None, "Temporary", 0), block(Some(7), "add.1", 0)],
            figures: Figures {
                peak_heap_bytes: 64,
                peak_unpadded_heap_bytes: 64,
                entry_parameters_bytes: 0,
                non_reusable_bytes: 0,
                maybe_live_out_bytes: 0,
                total_allocation_bytes: 64,
                indefinite_allocation_bytes: 0,
                temporary_allocation_bytes: 64,
                padding_overhead_bytes: 0,
                fragmentation: Some(0.0),
            },
            peak_by_group: Vec::new(),
            memory_spaces: vec![0],
            notes: Vec::new(),
        };
        let json = serde_json::to_value(ViewerColumns::of(&v)).unwrap();
        assert_eq!(
            json["blocks"],
            serde_json::json!({
                "text": [1, 0], "logical_buffer_id": [-1, 7], "offset_bytes": [0, 0], "size_bytes": [64, 64],
                "start_step": [1, 1], "end_step": [3, 3], "unpadded_bytes": [64, 64], "category": [0, 0],
                "expansion": [1.0, 1.0]
            })
        );
        assert_eq!(json["texts"].as_array().map(Vec::len), Some(2), "the peak buffer and its block share one text");
        assert_eq!(json["labels"], serde_json::json!(["Temporary"]));
        assert_eq!(json["peak_buffers"]["text"], serde_json::json!([0]));
        for absent in ["indefinite_allocations", "entry_computation_name", "trace_index", "color"] {
            assert!(!json.to_string().contains(absent), "{absent} is not sent");
        }
        let back: ViewerReply = serde_json::from_value(json).unwrap();
        assert_eq!(back, ViewerReply::Engine(std::sync::Arc::new(v.clone())));
        let ViewerReply::Page(c) = back else { panic!("read back as columns") };
        let b = c.block(1).unwrap();
        assert_eq!((b.logical_buffer_id, &*b.text.name, b.category, b.end_step), (Some(7), "add.1", "Temporary", 3));
        let p = c.peak_buffer(0).unwrap();
        assert_eq!((p.logical_buffer_id, p.group, &*p.text.shape, p.opcode), (Some(7), Some("Temporary"), "f32[16]", "add"));
        assert_eq!(c.span(7), Some((1, 3)));
        assert_eq!(c.block(2), None);
    }
}
