//! XProf's `memory_viewer` JSON (the proto3 JSON of its `PreprocessResult`): camelCase names, sizes
//! in MiB, 64-bit integers as strings, and fields at their default value left out. Tidemark's own
//! figures go under `"tidemark"`, which XProf's schema does not have.

use super::{BufferBlock, HeapObject, IndefiniteAllocation, MemoryViewer, SourceInfo};
use serde_json::{json, Map, Value};

const BYTES_PER_MIB: f64 = (1u64 << 20) as f64;

fn mib(bytes: i64) -> f64 {
    bytes as f64 / BYTES_PER_MIB
}

/// A JSON object that drops proto3 default values.
#[derive(Default)]
struct Object(Map<String, Value>);

impl Object {
    fn int(mut self, key: &str, v: i64) -> Self {
        if v != 0 {
            self.0.insert(key.into(), v.into());
        }
        self
    }

    /// An `int64` field, which proto3 JSON writes as a string.
    fn int64(mut self, key: &str, v: i64) -> Self {
        if v != 0 {
            self.0.insert(key.into(), v.to_string().into());
        }
        self
    }

    fn float(mut self, key: &str, v: f64) -> Self {
        if v != 0.0 {
            self.0.insert(key.into(), v.into());
        }
        self
    }

    fn text(mut self, key: &str, v: &str) -> Self {
        if !v.is_empty() {
            self.0.insert(key.into(), v.into());
        }
        self
    }

    fn list(mut self, key: &str, v: Vec<Value>) -> Self {
        if !v.is_empty() {
            self.0.insert(key.into(), v.into());
        }
        self
    }

    fn value(mut self, key: &str, v: Option<Value>) -> Self {
        if let Some(v) = v {
            self.0.insert(key.into(), v);
        }
        self
    }

    fn done(self) -> Value {
        Value::Object(self.0)
    }
}

/// `viewer` in XProf's schema, with Tidemark's figures under `"tidemark"`.
pub fn to_xprof_json(viewer: &MemoryViewer) -> Value {
    let f = &viewer.figures;
    let spans: Map<String, Value> =
        viewer.spans.iter().map(|(id, s)| (id.to_string(), Object::default().int("start", s.start).int("limit", s.limit).done())).collect();
    let by_size_objects = viewer.peak_buffers_by_size.iter().filter_map(|&i| viewer.peak_buffers.get(i)).map(heap_object).collect();
    let mut to_by_size = vec![0usize; viewer.peak_buffers.len()];
    for (rank, &i) in viewer.peak_buffers_by_size.iter().enumerate() {
        if let Some(slot) = to_by_size.get_mut(i) {
            *slot = rank;
        }
    }
    let floats = |v: &[i64]| v.iter().map(|&b| mib(b).into()).collect::<Vec<Value>>();
    let mut out = Object::default()
        .list("heapSizes", floats(&viewer.heap_bytes))
        .list("unpaddedHeapSizes", floats(&viewer.unpadded_heap_bytes))
        .list("hloInstructionNames", viewer.instruction_names.iter().map(|n| n.as_str().into()).collect())
        .list("maxHeap", viewer.peak_buffers.iter().map(heap_object).collect())
        .list("maxHeapBySize", by_size_objects)
        .value("logicalBufferSpans", (!spans.is_empty()).then_some(Value::Object(spans)))
        .list("maxHeapToBySize", to_by_size.into_iter().map(Value::from).collect())
        .list("bySizeToMaxHeap", viewer.peak_buffers_by_size.iter().map(|&i| i.into()).collect())
        .text("moduleName", &viewer.module_name)
        .text("entryComputationName", &viewer.entry_computation_name)
        .float("peakHeapMib", mib(f.peak_heap_bytes))
        .float("peakUnpaddedHeapMib", mib(f.peak_unpadded_heap_bytes))
        .int("peakHeapSizePosition", viewer.peak_position as i64)
        .float("entryComputationParametersMib", mib(f.entry_parameters_bytes))
        .float("nonReusableMib", mib(f.non_reusable_bytes))
        .float("maybeLiveOutMib", mib(f.maybe_live_out_bytes))
        .float("totalBufferAllocationMib", mib(f.total_allocation_bytes))
        .float("indefiniteBufferAllocationMib", mib(f.indefinite_allocation_bytes))
        .list("indefiniteLifetimes", viewer.indefinite_allocations.iter().map(indefinite).collect())
        .list("bufferBlocks", viewer.blocks.iter().map(block).collect());
    out.0.insert("tidemark".into(), tidemark(viewer));
    out.done()
}

fn tidemark(viewer: &MemoryViewer) -> Value {
    let f = &viewer.figures;
    json!({
        "memorySpace": viewer.options.memory_space,
        "memorySpaces": viewer.memory_spaces,
        "traceIndex": viewer.trace_index,
        "paddingOverheadBytes": f.padding_overhead_bytes,
        "fragmentation": f.fragmentation,
        "peakByGroup": viewer.peak_by_group.iter().map(|g| json!({"group": g.group, "bytes": g.bytes, "bufferCount": g.buffer_count})).collect::<Vec<_>>(),
        "notes": viewer.notes,
    })
}

fn heap_object(o: &HeapObject) -> Value {
    // `numbered` is a oneof member, which proto3 JSON always writes once set.
    let mut v = Object::default();
    v.0.insert("numbered".into(), o.color_index.into());
    v.text("label", &o.label)
        .int("logicalBufferId", o.logical_buffer_id.unwrap_or(-1))
        .float("logicalBufferSizeMib", mib(o.size_bytes))
        .float("unpaddedShapeMib", mib(o.unpadded_bytes))
        .text("instructionName", &o.instruction_name)
        .text("shapeString", &o.shape)
        .text("tfOpName", &o.op_name)
        .text("groupName", o.group.as_deref().unwrap_or(""))
        .text("opCode", &o.opcode)
        .value("sourceInfo", o.source.as_ref().map(source))
        .done()
}

fn source(s: &SourceInfo) -> Value {
    Object::default().text("fileName", &s.file_name).int("lineNumber", i64::from(s.line_number)).text("stackFrame", &s.stack_frame).done()
}

fn indefinite(a: &IndefiniteAllocation) -> Value {
    let buffers = a
        .logical_buffers
        .iter()
        .map(|b| {
            Object::default()
                .int64("id", b.id)
                .text("shape", &b.shape)
                .float("sizeMib", mib(b.size_bytes))
                .text("hloName", &b.hlo_name)
                .list("shapeIndex", b.shape_index.iter().map(|i| i.to_string().into()).collect())
                .done()
        })
        .collect();
    Object::default()
        .int64("id", a.index)
        .float("sizeMib", mib(a.size_bytes))
        .list("attributes", a.attributes.iter().map(|s| s.as_ref().into()).collect())
        .list("logicalBuffers", buffers)
        .text("commonShape", &a.common_shape)
        .done()
}

fn block(b: &BufferBlock) -> Value {
    Object::default()
        .int("logicalBufferId", b.logical_buffer_id.unwrap_or(-1))
        .text("name", &b.name)
        .float("offset", b.offset_bytes as f64)
        .float("size", b.size_bytes as f64)
        .int("startStep", b.start_step)
        .int("endStep", b.end_step)
        .text("tfOpName", &b.op_name)
        .text("category", &b.category)
        .value("sourceInfo", b.source.as_ref().map(source))
        .text("shapeString", &b.shape)
        .float("unpaddedSize", b.unpadded_bytes as f64)
        .text("color", &b.color)
        .done()
}
