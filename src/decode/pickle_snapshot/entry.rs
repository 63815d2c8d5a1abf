//! A trace entry (one allocator event) read into a row of its device's columns. Nearly every entry
//! is read straight from the bytes as the pickle begins it ([`Reader::read_entry`]): its dict and
//! its frame list are never built, so a snapshot of millions of events costs no object, no copy of
//! an item and no second pass over them, only the memo's slots. An entry written in any other shape
//! (one whose frames are not all dicts written before it: the first time a frame appears, say) is
//! built by the machine and read from its dict ([`Reader::row`]); both end in [`Reader::row_of`].

use super::{Reader, ENTRY, FRAMES, MAX_STACKS_BY_OBJECTS};
use crate::decode::pickle::{Cursor, Heap, Object, Value};
use std::collections::VecDeque;

/// The fields of a trace entry the reader keeps; `Other` for every other string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(super) enum EntryKey {
    Other,
    Action,
    Addr,
    DeviceFree,
    Size,
    Stream,
    TimeUs,
    Frames,
    CompileContext,
    UserMetadata,
}

impl EntryKey {
    const COUNT: usize = EntryKey::UserMetadata as usize + 1;

    fn of(key: &str) -> EntryKey {
        match key {
            "action" => EntryKey::Action,
            "addr" => EntryKey::Addr,
            "device_free" => EntryKey::DeviceFree,
            "size" => EntryKey::Size,
            "stream" => EntryKey::Stream,
            "time_us" => EntryKey::TimeUs,
            "frames" => EntryKey::Frames,
            "compile_context" => EntryKey::CompileContext,
            "user_metadata" => EntryKey::UserMetadata,
            _ => EntryKey::Other,
        }
    }
}

/// An entry's value of each field ([`EntryKey`]); a key given twice keeps its first value.
type Fields = [Option<Value>; EntryKey::COUNT];

/// A trace entry's fields, as its device's columns keep them.
#[derive(Debug, Clone, Copy)]
pub(super) struct Row {
    pub action: u32,
    pub addr: i64,
    pub size: i64,
    pub stream: i64,
    pub time_us: i64,
    pub stack: u32,
    pub compile_context: u32,
    pub user_metadata: u32,
}

/// Rows of entries read from the bytes ([`Reader::read_entry`]), by the index each was given
/// ([`Value::Read`]), until the `APPENDS` of their device's list takes them (a batch of a thousand
/// later, in the file's order; any order and any device are taken alike).
#[derive(Default)]
pub(super) struct PendingRows {
    /// The index of `rows[0]`.
    first: u32,
    /// `None` once taken; the taken rows at the front are dropped.
    rows: VecDeque<Option<Row>>,
}

impl PendingRows {
    /// The index the next row will have (`None` past `u32::MAX` rows: such entries are built).
    fn next_index(&self) -> Option<u32> {
        self.first.checked_add(u32::try_from(self.rows.len()).ok()?)
    }

    fn push(&mut self, row: Row) {
        self.rows.push_back(Some(row));
    }

    /// Row `index`, once: `None` when it was taken before (an entry listed twice).
    pub(super) fn take(&mut self, index: u32) -> Option<Row> {
        let row = self.rows.get_mut(index.checked_sub(self.first)? as usize)?.take();
        while let Some(None) = self.rows.front() {
            self.rows.pop_front();
            self.first += 1;
        }
        row
    }
}

impl Reader {
    /// Names the strings interned since the last call ([`Reader::entry_key`]).
    fn learn_entry_keys(&mut self, heap: &Heap) {
        for id in self.entry_key.len()..heap.string_count() {
            self.entry_key.push(EntryKey::of(heap.str(id as u32)));
        }
    }

    /// The field string `key` names.
    fn entry_key(&mut self, heap: &Heap, key: u32) -> EntryKey {
        if key as usize >= self.entry_key.len() {
            self.learn_entry_keys(heap);
        }
        self.entry_key[key as usize]
    }

    /// Reads the entry dict that begins at `c` (after its `EMPTY_DICT`) as a writer writes it: its
    /// memo put, then one `MARK`, keys and values, `SETITEMS`, the value of `frames` a list of memo
    /// references to frame dicts (or `None`); returns the index of its row ([`PendingRows`]).
    /// `None` for any other shape: the machine builds the dict, read by [`Reader::row`].
    pub(super) fn read_entry(&mut self, c: &mut Cursor) -> Option<u32> {
        let index = self.pending.next_index()?;
        let own = c.put_key()?;
        c.put(own, Value::Read(ENTRY, index));
        if !c.opcode(b'(') {
            return None;
        }
        let mut fields: Fields = [None; EntryKey::COUNT];
        while !c.opcode(b'u') {
            let Value::Str(key) = c.value()? else { return None };
            let slot = self.entry_key(c.heap(), key) as usize;
            let v = if slot == EntryKey::Frames as usize && c.opcode(b']') {
                // A second frame list would be read for nothing (the first value is kept).
                if fields[slot].is_some() {
                    return None;
                }
                Value::Read(FRAMES, self.read_frames(c)?)
            } else {
                c.value()?
            };
            fields[slot].get_or_insert(v);
        }
        // A writer fills an entry once and goes on to its list's next item, or ends the batch: the
        // dict is then complete. Anything else may add to it later, which the machine follows.
        if !matches!(c.peek(), Some(b'}' | b'e' | b'a')) {
            return None;
        }
        let row = self.row_of(c.heap(), &fields).ok()?;
        self.pending.push(row);
        Some(index)
    }

    /// Reads a frame list that begins at `c` (after its `EMPTY_LIST`): its memo put, then batches of
    /// memo references to frame dicts (`MARK` … `APPENDS`, or one and `APPEND`); returns its stack.
    fn read_frames(&mut self, c: &mut Cursor) -> Option<u32> {
        let own = c.put_key()?;
        let first = c.appended_refs();
        let stack = match first {
            // The usual list: one batch.
            Some(refs) if !c.more_items() => self.stack_of_refs(c, refs)?,
            _ => {
                let mut objects = std::mem::take(&mut self.scratch);
                objects.clear();
                let mut complete = first.is_none_or(|refs| c.objects_of(refs, &mut objects).is_some());
                while complete && c.more_items() {
                    complete = match c.appended_refs() {
                        Some(refs) => c.objects_of(refs, &mut objects).is_some(),
                        None => c.memo_object().map(|o| objects.push(o)).is_some() && c.opcode(b'a'),
                    };
                }
                let stack = if complete { self.stack_of_objects(c.heap(), &objects).ok() } else { None };
                self.scratch = objects;
                stack?
            }
        };
        c.put(own, Value::Read(FRAMES, stack));
        Some(stack)
    }

    /// The stack of a frame list written as one batch of memo references `refs`, looked up by those
    /// bytes: PyTorch writes a stack's list anew for every entry, but as the same references to the
    /// same shared frame dicts, so one lookup an entry replaces a memo lookup a frame. The bytes
    /// mean the same frames while no memo key is given another value (never, in a writer's file):
    /// the lookup is emptied when one is. Keyed by [`refs_hash`], the bytes compared on a hit; two
    /// lists of one hash share no slot (the second is read by its frames every time).
    fn stack_of_refs(&mut self, c: &mut Cursor, refs: &[u8]) -> Option<u32> {
        if self.refs_rebinds != c.memo_rebinds() {
            self.stack_of_refs.clear();
            self.refs_rebinds = c.memo_rebinds();
        }
        let hash = refs_hash(refs);
        let known = self.stack_of_refs.get(&hash);
        if let Some((_, stack)) = known.filter(|(bytes, _)| **bytes == *refs) {
            return Some(*stack);
        }
        let vacant = known.is_none();
        let mut objects = std::mem::take(&mut self.scratch);
        objects.clear();
        let stack = c.objects_of(refs, &mut objects).and_then(|()| self.stack_of_objects(c.heap(), &objects).ok());
        self.scratch = objects;
        let stack = stack?;
        // Bounded as the lookup by object ids is.
        if vacant && self.stack_of_refs.len() < MAX_STACKS_BY_OBJECTS {
            self.stack_of_refs.insert(hash, (refs.into(), stack));
        }
        Some(stack)
    }

    /// Entry dict `id`'s row.
    pub(super) fn row(&mut self, heap: &mut Heap, id: u32) -> Result<Row, String> {
        let Object::Dict(items) = heap.object(id) else { return Err("an entry is not a dict (or is listed twice)".into()) };
        // Each key read by its string id: a snapshot's keys are the same few memoised strings, so a
        // field is found by one index, never by comparing text.
        self.learn_entry_keys(heap);
        let mut fields: Fields = [None; EntryKey::COUNT];
        for (k, v) in items {
            if let Value::Str(k) = k {
                fields[self.entry_key[*k as usize] as usize].get_or_insert(*v);
            }
        }
        self.row_of(heap, &fields)
    }

    /// The row of an entry's `fields`.
    fn row_of(&mut self, heap: &mut Heap, fields: &Fields) -> Result<Row, String> {
        let field = |k: EntryKey| fields[k as usize];
        let action = match field(EntryKey::Action) {
            Some(Value::Str(s)) => s,
            _ => return Err("an entry has no `action`".into()),
        };
        let addr = match int_value(field(EntryKey::Addr), "addr")? {
            Some(a) => a,
            None => int_value(field(EntryKey::DeviceFree), "device_free")?.unwrap_or(0),
        };
        let size = int_value(field(EntryKey::Size), "size")?.unwrap_or(0);
        let stream = int_value(field(EntryKey::Stream), "stream")?.unwrap_or(0);
        let time_us = int_value(field(EntryKey::TimeUs), "time_us")?.unwrap_or(0);
        let stack = self.stack(heap, field(EntryKey::Frames))?;
        let compile_context = string_value(heap, field(EntryKey::CompileContext), "compile_context")?;
        let user_metadata = string_value(heap, field(EntryKey::UserMetadata), "user_metadata")?;
        Ok(Row { action, addr, size, stream, time_us, stack, compile_context, user_metadata })
    }
}

/// `v`, the value of `key`, as an integer (absent or `None`: `None`).
pub(super) fn int_value(v: Option<Value>, key: &str) -> Result<Option<i64>, String> {
    match v {
        None | Some(Value::None) => Ok(None),
        Some(Value::Int(i)) => Ok(Some(i)),
        Some(Value::Bool(b)) => Ok(Some(i64::from(b))),
        Some(Value::BigInt) => Err(format!("`{key}` does not fit 64 bits")),
        Some(_) => Err(format!("`{key}` is not an integer")),
    }
}

/// `v`, the value of `key`, as an interned string (absent or `None`: the empty string).
pub(super) fn string_value(heap: &mut Heap, v: Option<Value>, key: &str) -> Result<u32, String> {
    match v {
        Some(Value::Str(s)) => Ok(s),
        None | Some(Value::None) => Ok(heap.intern("")),
        Some(_) => Err(format!("`{key}` is not a string")),
    }
}

/// A hash of a frame list's bytes ([`Reader::stack_of_refs`]) in four independent lanes of eight
/// bytes: one chain of multiplies over the whole list (the map's own hasher) was most of a lookup.
/// Unkeyed: the map hashes it again with its secret, and a crafted collision only costs the second
/// list its lookup ([`Reader::stack_of_refs`]), never a wrong stack.
fn refs_hash(bytes: &[u8]) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let word = |b: &[u8]| {
        let mut w = [0u8; 8];
        w[..b.len()].copy_from_slice(b);
        u64::from_le_bytes(w)
    };
    let mut lanes = [1u64, 2, 3, 4];
    let mut chunks = bytes.chunks_exact(32);
    for chunk in &mut chunks {
        for (lane, w) in lanes.iter_mut().zip(chunk.chunks_exact(8)) {
            *lane = (*lane ^ word(w)).wrapping_mul(K).rotate_left(31);
        }
    }
    for (lane, w) in lanes.iter_mut().zip(chunks.remainder().chunks(8)) {
        *lane = (*lane ^ word(w)).wrapping_mul(K).rotate_left(31);
    }
    lanes.iter().fold(bytes.len() as u64, |h, lane| (h ^ lane).wrapping_mul(K).rotate_left(29))
}
