//! PyTorch CUDA caching-allocator memory snapshots (`torch.cuda.memory._dump_snapshot`'s
//! `snapshot.pickle`), read by our own pickle reader ([`super::pickle`]) straight into columns.
//!
//! The file is one dict: `segments` (the allocator's cached segments at the dump, each with its
//! blocks), `device_traces` (per device, the ring buffer of allocator events: `alloc`,
//! `free_requested`, `free_completed`, `segment_alloc`, `segment_free`, `segment_map`,
//! `segment_unmap`, `snapshot`, `oom`), `allocator_settings` and `external_annotations`. A trace
//! entry is read into a row as the pickle begins it ([`entry`]) and taken into its device's columns
//! when the pickle appends it to its list, so only the columns are kept, never the entries' dicts;
//! every stack of frames is interned once ([`TorchSnapshot::stack`]).

mod entry;

use super::pickle::{self, Consumer, Cursor, Heap, Object, Place, Role, Value};
use super::sniff::Format;
use super::DecodeError;
use crate::fast_hash::FastMap;
use entry::{int_value, string_value};

const FORMAT: Format = Format::TorchSnapshot;

/// One frame of a stack: a Python frame (`filename` ends in `.py`) or a C++ one (`line` 0).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Frame {
    /// Interned strings ([`TorchSnapshot::str`]).
    pub name: u32,
    pub filename: u32,
    pub line: i64,
}

/// A device's trace, one column per field, one row per event in the file's order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeviceTrace {
    /// The event's `action`, interned.
    pub action: Vec<u32>,
    /// `addr`; for an `oom` entry, `device_free` (the bytes the device had free), which it has
    /// instead of an address.
    pub addr: Vec<i64>,
    /// `size`: for `alloc`/`free_*` the bytes requested (not rounded to the allocator's blocks).
    pub size: Vec<i64>,
    pub stream: Vec<i64>,
    /// `time_us` (microseconds since the epoch), 0 where the writer recorded none.
    pub time_us: Vec<i64>,
    /// The stack of frames ([`TorchSnapshot::stack`]).
    pub stack: Vec<u32>,
    /// `compile_context` and `user_metadata`, interned (the empty string where absent).
    pub compile_context: Vec<u32>,
    pub user_metadata: Vec<u32>,
}

impl DeviceTrace {
    pub fn len(&self) -> usize {
        self.action.len()
    }

    pub fn is_empty(&self) -> bool {
        self.action.is_empty()
    }
}

/// A block of a segment at the dump.
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    pub address: i64,
    pub size: i64,
    pub requested_size: i64,
    /// `active_allocated`, `active_pending_free` or `inactive`, interned.
    pub state: u32,
    pub stack: u32,
}

/// A segment (one `cudaMalloc`, or an expandable segment's mapped range) at the dump.
#[derive(Debug, Clone, PartialEq)]
pub struct Segment {
    pub device: i64,
    pub address: i64,
    pub total_size: i64,
    pub allocated_size: i64,
    pub active_size: i64,
    pub requested_size: i64,
    pub stream: i64,
    /// `large` or `small`, interned.
    pub segment_type: u32,
    pub segment_pool_id: (i64, i64),
    pub is_expandable: bool,
    pub stack: u32,
    pub blocks: Vec<Block>,
}

/// A decoded snapshot.
#[derive(Debug, Clone, Default)]
pub struct TorchSnapshot {
    strings: Vec<Box<str>>,
    pub frames: Vec<Frame>,
    /// The frames of each stack, innermost first (as the file lists them), by stack id.
    stacks: Vec<Box<[u32]>>,
    pub segments: Vec<Segment>,
    /// By device index (the position in `device_traces`).
    pub devices: Vec<DeviceTrace>,
    /// `allocator_settings` and `external_annotations` as they were, in JSON (null where absent).
    pub allocator_settings: serde_json::Value,
    pub external_annotations: serde_json::Value,
}

impl TorchSnapshot {
    /// Decodes a snapshot's pickle.
    pub fn decode(bytes: &[u8]) -> Result<Self, DecodeError> {
        let mut reader = Reader::default();
        let (top, heap) = pickle::read(bytes, &mut reader).map_err(|e| match e {
            pickle::PickleError::Truncated { end, .. } => DecodeError::Truncated { format: FORMAT, end: end as u64, detail: e.to_string() },
            other => DecodeError::Corrupt { format: FORMAT, detail: other.to_string() },
        })?;
        reader.finish(top, heap).map_err(|detail| DecodeError::Corrupt { format: FORMAT, detail })
    }

    /// String `id` (every id in the snapshot's columns is valid).
    pub fn str(&self, id: u32) -> &str {
        &self.strings[id as usize]
    }

    /// How many strings the snapshot holds (their ids are `0..string_count()`).
    pub fn string_count(&self) -> usize {
        self.strings.len()
    }

    /// The id of string `s`, if the snapshot holds it.
    pub fn find_str(&self, s: &str) -> Option<u32> {
        self.strings.iter().position(|x| &**x == s).map(|i| i as u32)
    }

    /// The frames of stack `id`, innermost first.
    pub fn stack(&self, id: u32) -> &[u32] {
        &self.stacks[id as usize]
    }

    pub fn stack_count(&self) -> usize {
        self.stacks.len()
    }

    pub fn event_count(&self) -> usize {
        self.devices.iter().map(DeviceTrace::len).sum()
    }
}

/// The consumer's roles: which lists it takes items from.
const ROOT: Role = Role(1);
const DEVICE_TRACES: Role = Role(2);
const SEGMENTS: Role = Role(3);
/// A dict made where it goes into a device's list of entries: read from the bytes
/// ([`Reader::read_entry`]).
const ENTRY: Role = Role(4);
/// A frame list read from the bytes inside an entry ([`Value::Read`]`(FRAMES, stack)`).
const FRAMES: Role = Role(5);
/// `TRACE + d`: device `d`'s list of entries.
const TRACE: u16 = 16;
/// The most devices a snapshot may list (a machine has a few dozen at most): a file listing more is
/// refused before their columns are made.
pub const MAX_DEVICES: usize = 4096;

/// The most frame lists [`Reader::stack_of_objects`] and [`Reader::stack_of_refs`] remember (a few
/// tens of MB at most).
const MAX_STACKS_BY_OBJECTS: usize = 1 << 18;

#[derive(Default)]
struct Reader {
    frames: Vec<Frame>,
    frame_ids: FastMap<Frame, u32>,
    /// Frame dicts already read, by object id (a snapshot's pickle shares each frame's dict).
    frame_of_object: FastMap<u32, u32>,
    stacks: Vec<Box<[u32]>>,
    stack_ids: FastMap<Box<[u32]>, u32>,
    /// Stacks already read, by their frame dicts' object ids.
    stack_of_objects: FastMap<Box<[u32]>, u32>,
    /// Stacks already read, by the hash of their frame list's reference bytes, with those bytes
    /// ([`Reader::stack_of_refs`]); and the memo's rebinds when they were.
    stack_of_refs: FastMap<u64, (Box<[u8]>, u32)>,
    refs_rebinds: u64,
    /// A frame list's object ids, reused from list to list.
    scratch: Vec<u32>,
    /// The entry field each interned string names, by string id ([`Reader::learn_entry_keys`]).
    entry_key: Vec<entry::EntryKey>,
    /// Rows of entries read from the bytes, until their lists take them.
    pending: entry::PendingRows,
    segments: Vec<Segment>,
    devices: Vec<DeviceTrace>,
    /// Whether the top-level dict is being read (or was).
    saw_root: bool,
}

impl Consumer for Reader {
    fn top_role(&mut self, is_list: bool) -> Role {
        if is_list {
            return Role::NONE;
        }
        self.saw_root = true;
        ROOT
    }

    fn role(&mut self, heap: &Heap, places: &[Place], is_list: bool) -> Role {
        if !is_list {
            let in_trace = places.iter().any(|p| (TRACE..TRACE + MAX_DEVICES as u16).contains(&p.parent.0));
            return if in_trace { ENTRY } else { Role::NONE };
        }
        for p in places {
            match (p.parent, p.key) {
                (ROOT, Some(Value::Str(k))) if heap.str(k) == "device_traces" => return DEVICE_TRACES,
                (ROOT, Some(Value::Str(k))) if heap.str(k) == "segments" => return SEGMENTS,
                (DEVICE_TRACES, None) if p.index < MAX_DEVICES => return Role(TRACE + p.index as u16),
                _ => {}
            }
        }
        Role::NONE
    }

    fn take(&mut self, heap: &mut Heap, list: Role, index: usize, item: Value) -> Result<bool, String> {
        match list {
            SEGMENTS => {
                let s = self.segment(heap, item).map_err(|e| format!("segment {index}: {e}"))?;
                self.segments.push(s);
                take_object(heap, item);
                Ok(true)
            }
            Role(r) if (TRACE..TRACE + MAX_DEVICES as u16).contains(&r) => {
                let device = usize::from(r - TRACE);
                self.entry(heap, device, item).map_err(|e| format!("device_traces[{device}][{index}]: {e}"))?;
                take_object(heap, item);
                Ok(true)
            }
            // A device's list, its entries already taken; any left (a list whose place was
            // ambiguous when it was begun) are taken now.
            DEVICE_TRACES => {
                if index >= MAX_DEVICES {
                    return Err(format!("device_traces lists more than {MAX_DEVICES} devices"));
                }
                self.device(index);
                let Value::Obj(id) = item else { return Err(format!("device_traces[{index}] is not a list")) };
                if let Object::List(items) = heap.object(id).clone() {
                    for (i, e) in items.into_iter().enumerate() {
                        self.entry(heap, index, e).map_err(|err| format!("device_traces[{index}][{i}]: {err}"))?;
                        take_object(heap, e);
                    }
                    heap.take(id, index as u32);
                }
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    fn read(&mut self, role: Role, cursor: &mut Cursor) -> Option<u32> {
        if role == ENTRY {
            self.read_entry(cursor)
        } else {
            None
        }
    }
}

/// Frees a container the reader has read into its columns.
fn take_object(heap: &mut Heap, v: Value) {
    if let Value::Obj(id) = v {
        heap.take(id, 0);
    }
}

fn int(heap: &Heap, d: Value, key: &str) -> Result<Option<i64>, String> {
    int_value(heap.get(d, key), key)
}

fn string(heap: &mut Heap, d: Value, key: &str) -> Result<u32, String> {
    let v = heap.get(d, key);
    string_value(heap, v, key)
}

impl Reader {
    fn device(&mut self, d: usize) -> &mut DeviceTrace {
        if self.devices.len() <= d {
            self.devices.resize_with(d + 1, DeviceTrace::default);
        }
        &mut self.devices[d]
    }

    /// Appends entry `e` to device `device`'s columns: the row read from the bytes when the pickle
    /// began it, or one read now from the dict the machine built.
    fn entry(&mut self, heap: &mut Heap, device: usize, e: Value) -> Result<(), String> {
        let row = match e {
            Value::Read(ENTRY, index) => self.pending.take(index).ok_or("an entry is listed twice")?,
            Value::Obj(id) => self.row(heap, id)?,
            _ => return Err("an entry is not a dict".into()),
        };
        let t = self.device(device);
        t.action.push(row.action);
        t.addr.push(row.addr);
        t.size.push(row.size);
        t.stream.push(row.stream);
        t.time_us.push(row.time_us);
        t.stack.push(row.stack);
        t.compile_context.push(row.compile_context);
        t.user_metadata.push(row.user_metadata);
        Ok(())
    }

    /// The id of the stack a `frames` list holds; the list is then taken (it is kept as its id, for
    /// another entry that refers to the same list).
    fn stack(&mut self, heap: &mut Heap, frames: Option<Value>) -> Result<u32, String> {
        let id = match frames {
            None | Some(Value::None) => return Ok(self.intern_stack(Box::new([]))),
            Some(Value::Read(FRAMES, stack)) => return Ok(stack),
            Some(Value::Obj(id)) => id,
            Some(_) => return Err("`frames` is not a list".into()),
        };
        let items = match heap.object(id) {
            Object::Taken(stack) => return Ok(*stack),
            Object::List(items) | Object::Tuple(items) => items,
            Object::Dict(_) => return Err("`frames` is not a list".into()),
        };
        let mut objects = std::mem::take(&mut self.scratch);
        objects.clear();
        let stack = items
            .iter()
            .map(|f| match f {
                Value::Obj(o) => Ok(*o),
                _ => Err("a frame is not a dict".to_string()),
            })
            .try_for_each(|o| o.map(|o| objects.push(o)))
            .and_then(|()| self.stack_of_objects(heap, &objects));
        self.scratch = objects;
        let stack = stack?;
        heap.take(id, stack);
        Ok(stack)
    }

    /// The stack of the frame dicts `objects` (object ids). PyTorch pickles each entry's list anew
    /// but shares the frame dicts between them, so a stack is first looked up by its frames' object
    /// ids: one lookup an entry instead of one a frame.
    fn stack_of_objects(&mut self, heap: &mut Heap, objects: &[u32]) -> Result<u32, String> {
        if let Some(stack) = self.stack_of_objects.get(objects) {
            return Ok(*stack);
        }
        let frames = objects.iter().map(|&o| self.frame(heap, Value::Obj(o))).collect::<Result<Box<[u32]>, _>>()?;
        let stack = self.intern_stack(frames);
        // Bounded: a writer that shared no frame dict would make every list's ids new.
        if self.stack_of_objects.len() < MAX_STACKS_BY_OBJECTS {
            self.stack_of_objects.insert(objects.into(), stack);
        }
        Ok(stack)
    }

    fn intern_stack(&mut self, frames: Box<[u32]>) -> u32 {
        if let Some(id) = self.stack_ids.get(&frames) {
            return *id;
        }
        let id = self.stacks.len() as u32;
        self.stacks.push(frames.clone());
        self.stack_ids.insert(frames, id);
        id
    }

    fn frame(&mut self, heap: &mut Heap, f: Value) -> Result<u32, String> {
        let Value::Obj(id) = f else { return Err("a frame is not a dict".into()) };
        if let Some(frame) = self.frame_of_object.get(&id) {
            return Ok(*frame);
        }
        if !matches!(heap.object(id), Object::Dict(_)) {
            return Err("a frame is not a dict".into());
        }
        let frame =
            Frame { name: string(heap, f, "name")?, filename: string(heap, f, "filename")?, line: int(heap, f, "line")?.unwrap_or(0) };
        let next = self.frames.len() as u32;
        let fid = *self.frame_ids.entry(frame.clone()).or_insert(next);
        if fid == next {
            self.frames.push(frame);
        }
        self.frame_of_object.insert(id, fid);
        Ok(fid)
    }

    fn segment(&mut self, heap: &mut Heap, s: Value) -> Result<Segment, String> {
        if !matches!(s, Value::Obj(id) if matches!(heap.object(id), Object::Dict(_))) {
            return Err("not a dict".into());
        }
        let address = int(heap, s, "address")?.unwrap_or(0);
        let pool = match heap.get(s, "segment_pool_id") {
            Some(Value::Obj(id)) => match heap.object(id) {
                Object::Tuple(v) | Object::List(v) => match v.as_slice() {
                    [Value::Int(a), Value::Int(b)] => (*a, *b),
                    _ => (0, 0),
                },
                _ => (0, 0),
            },
            _ => (0, 0),
        };
        let blocks = match heap.get(s, "blocks") {
            Some(Value::Obj(id)) => match heap.object(id) {
                Object::List(v) => v.clone(),
                _ => return Err("`blocks` is not a list".into()),
            },
            _ => Vec::new(),
        };
        let mut out = Vec::with_capacity(blocks.len());
        // Older snapshots give blocks no address: they lie one after another from the segment's.
        let mut next_address = address;
        for b in blocks {
            let size = int(heap, b, "size")?.unwrap_or(0);
            let block = Block {
                address: int(heap, b, "address")?.unwrap_or(next_address),
                size,
                requested_size: int(heap, b, "requested_size")?.unwrap_or(size),
                state: string(heap, b, "state")?,
                stack: {
                    let frames = heap.get(b, "frames");
                    self.stack(heap, frames)?
                },
            };
            next_address = block.address.saturating_add(size);
            take_object(heap, b);
            out.push(block);
        }
        Ok(Segment {
            device: int(heap, s, "device")?.unwrap_or(0),
            address,
            total_size: int(heap, s, "total_size")?.unwrap_or(0),
            allocated_size: int(heap, s, "allocated_size")?.unwrap_or(0),
            active_size: int(heap, s, "active_size")?.unwrap_or(0),
            requested_size: int(heap, s, "requested_size")?.unwrap_or(0),
            stream: int(heap, s, "stream")?.unwrap_or(0),
            segment_type: string(heap, s, "segment_type")?,
            segment_pool_id: pool,
            is_expandable: matches!(heap.get(s, "is_expandable"), Some(Value::Bool(true))),
            stack: {
                let frames = heap.get(s, "frames");
                self.stack(heap, frames)?
            },
            blocks: out,
        })
    }

    fn finish(mut self, top: Value, mut heap: Heap) -> Result<TorchSnapshot, String> {
        if !self.saw_root || !matches!(top, Value::Obj(id) if heap.role(id) == ROOT) {
            return Err("the pickle does not hold a dict (a memory snapshot is one, with `segments` and `device_traces`)".into());
        }
        let has = |k: &str| heap.get(top, k).is_some();
        if !has("segments") && !has("device_traces") {
            return Err("the pickled dict has neither `segments` nor `device_traces`: it is not a CUDA memory snapshot".into());
        }
        // A device whose list was written without entries still counts.
        if let Some(Value::Obj(id)) = heap.get(top, "device_traces") {
            if let Object::List(items) = heap.object(id) {
                let n = items.len();
                if n > MAX_DEVICES {
                    return Err(format!("device_traces lists more than {MAX_DEVICES} devices"));
                }
                if n > 0 {
                    self.device(n - 1);
                }
            }
        }
        let json = |heap: &Heap, k: &str| heap.get(top, k).map_or(Ok(serde_json::Value::Null), |v| heap.to_json(v));
        let allocator_settings = json(&heap, "allocator_settings").map_err(|e| format!("allocator_settings: {e}"))?;
        let external_annotations = json(&heap, "external_annotations").map_err(|e| format!("external_annotations: {e}"))?;
        heap.intern("");
        Ok(TorchSnapshot {
            strings: heap.into_strings(),
            frames: self.frames,
            stacks: self.stacks,
            segments: self.segments,
            devices: self.devices,
            allocator_settings,
            external_annotations,
        })
    }
}

#[cfg(test)]
mod tests;
