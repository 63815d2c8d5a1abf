//! A Python pickle reader of our own, for data only: the opcodes that plain dicts, lists, tuples,
//! strings, bytes, numbers, booleans and `None` are written with, protocols 2 to 5. Nothing is ever
//! executed: the opcodes that import a name or call one (`GLOBAL`, `STACK_GLOBAL`, `REDUCE`, `BUILD`,
//! `NEWOBJ`, `INST`, `OBJ`, `EXT*`, persistent ids, out-of-band buffers) are refused with their name
//! and byte offset, and so is every opcode this reader does not know.
//!
//! The reader is a push machine over the bytes, as CPython's unpickler is, with two differences that
//! keep a file of gigabytes within memory:
//! - strings are interned ([`Heap::str`]): a snapshot repeats the same few thousand file and function
//!   names millions of times;
//! - a [`Consumer`] gives each new container a role from where it is being built (its parent's role
//!   and the key it will be stored under) and may take the items appended to a list as they arrive,
//!   turning them into its own columns; the reader then keeps nothing of them. A generic value tree of
//!   the whole file is never built;
//! - a [`Consumer`] may read a container it gave a role straight from the bytes ([`Consumer::read`],
//!   through a [`Cursor`]), never building it: a snapshot's millions of entry dicts and frame lists
//!   are each read once, in the order of their bytes, into a row of columns. When the bytes are not
//!   in the shape it reads, it gives up and the machine builds the container as usual, so what is read
//!   never depends on it.
//!
//! Hostile input is bounded: the stack and the marks have limits, lengths are checked against the
//! bytes left before anything is allocated, every allocation is paid for by input bytes read, and the
//! walk of a value into JSON ([`Heap::to_json`]) has a depth and a size limit (memo references can
//! make a value cyclic, or exponentially large when unfolded).

use crate::fast_hash::FastMap;

mod cursor;
mod memo;
pub use cursor::Cursor;
use memo::Memo;

/// The most values the machine's stack may hold. Pickle's writers batch `APPENDS`/`SETITEMS` by 1000,
/// so a real file's stack stays in the thousands; a deeper one is an attack (or a nesting bomb).
pub const MAX_STACK: usize = 1 << 20;
/// The most `MARK`s open at once (a real file nests a mark per container being filled).
pub const MAX_MARKS: usize = 1 << 12;
/// The deepest value [`Heap::to_json`] unfolds.
pub const MAX_JSON_DEPTH: usize = 64;
/// The most values [`Heap::to_json`] unfolds in all.
pub const MAX_JSON_VALUES: usize = 1 << 20;

/// A value on the machine's stack or inside a container. Containers are held in the [`Heap`] and
/// referred to by index, so a value is small and copied freely (as the memo's references are).
///
/// `repr(u64)`: an 8-byte tag and every payload at byte 8, so a value is copied as two aligned
/// words. With a one-byte tag the compiler copied the 15 bytes after it in two overlapping 8-byte
/// loads (bytes 1-8 and 8-15) through each local a value passed through, and the processor cannot
/// forward a load that straddles two earlier stores: every memo reference (most of a snapshot's
/// opcodes) stalled on it, three quarters of the reader's time.
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(u64)]
pub enum Value {
    None,
    Bool(bool),
    Int(i64),
    /// An integer that does not fit 64 bits: its value is not kept (no snapshot field needs one).
    BigInt,
    Float(f64),
    /// An interned string ([`Heap::str`]).
    Str(u32),
    /// A bytes (or bytearray) value ([`Heap::bytes`]).
    Bytes(u32),
    /// A container ([`Heap::object`]).
    Obj(u32),
    /// A container a [`Consumer`] read straight from the bytes ([`Consumer::read`]), never built:
    /// its role and whatever index the consumer gave it (a row, a frame stack's id), so a second
    /// reference to it can be resolved.
    Read(Role, u32),
}

/// A container's content.
#[derive(Debug, Clone, PartialEq)]
pub enum Object {
    List(Vec<Value>),
    Dict(Vec<(Value, Value)>),
    Tuple(Vec<Value>),
    /// A container a [`Consumer`] has taken into its own columns; `u32` is whatever index it gave it
    /// there (a frame stack's id, a row), so a second reference to it can be resolved.
    Taken(u32),
}

/// Where a new container is being built: its parent container's role, the key it will be stored
/// under (a dict's), and its index (a list's, counting the items already appended and those waiting
/// on the stack to be appended).
#[derive(Debug, Clone, Copy)]
pub struct Place {
    pub parent: Role,
    pub key: Option<Value>,
    pub index: usize,
}

/// What a [`Consumer`] calls a container; 0 ([`Role::NONE`]) is a container it has no interest in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Role(pub u16);

impl Role {
    pub const NONE: Role = Role(0);
}

/// What a file's reader does with the containers as they are built.
pub trait Consumer {
    /// The role of the top-level container (a list or a dict).
    fn top_role(&mut self, is_list: bool) -> Role;

    /// The role of a container (a list or a dict) created where it may go into any of `places`
    /// ([`Role::NONE`] when none of them interests the consumer).
    fn role(&mut self, heap: &Heap, places: &[Place], is_list: bool) -> Role;

    /// `item` is being appended to a list of role `list`, at `index`. Returns whether the consumer
    /// took it (the list then keeps nothing); an error stops the reading with its message.
    fn take(&mut self, heap: &mut Heap, list: Role, index: usize, item: Value) -> Result<bool, String>;

    /// A container of role `role` (not [`Role::NONE`]) begins (`cursor` is at the opcode after its
    /// `EMPTY_DICT`/`EMPTY_LIST`): the consumer may read it whole straight from the bytes, never
    /// built, and return the index it gives it (the machine then pushes [`Value::Read`]`(role,
    /// index)`, stores the memo puts read and goes on after what was read). `None`: the bytes are
    /// not in a shape it reads (or hold an error): nothing read is kept, the machine builds the
    /// container as usual and reports any error itself. What the consumer keeps of a read it gives
    /// up must be what it would make of the same bytes read the usual way (interned frames, say).
    fn read(&mut self, role: Role, cursor: &mut Cursor) -> Option<u32>;
}

/// The strings, bytes and containers the machine has built.
#[derive(Default)]
pub struct Heap {
    strings: Vec<Box<str>>,
    string_ids: FastMap<Box<str>, u32>,
    bytes: Vec<Box<[u8]>>,
    objects: Vec<Object>,
    roles: Vec<Role>,
    /// How many items a [`Consumer`] took from each list it took any from, by object id: a list's
    /// length counts them.
    taken_counts: FastMap<u32, usize>,
}

impl Heap {
    /// String `id` (every `Value::Str` holds a valid one).
    pub fn str(&self, id: u32) -> &str {
        &self.strings[id as usize]
    }

    /// How many strings are interned (their ids are `0..string_count()`).
    pub fn string_count(&self) -> usize {
        self.strings.len()
    }

    /// The interned strings, by id; the heap given up.
    pub fn into_strings(self) -> Vec<Box<str>> {
        self.strings
    }

    pub fn bytes(&self, id: u32) -> &[u8] {
        &self.bytes[id as usize]
    }

    pub fn object(&self, id: u32) -> &Object {
        &self.objects[id as usize]
    }

    /// The items a [`Consumer`] took from list `id` (the list does not hold them).
    fn taken_from(&self, id: u32) -> usize {
        self.taken_counts.get(&id).copied().unwrap_or(0)
    }

    pub fn role(&self, id: u32) -> Role {
        self.roles[id as usize]
    }

    /// Replaces container `id` by [`Object::Taken`]`(index)`, freeing its content.
    pub fn take(&mut self, id: u32, index: u32) {
        self.objects[id as usize] = Object::Taken(index);
    }

    /// `key`'s value in dict `v`, when `v` is a dict with a string key equal to `key`.
    pub fn get(&self, v: Value, key: &str) -> Option<Value> {
        let Value::Obj(id) = v else { return None };
        let Object::Dict(items) = self.object(id) else { return None };
        items.iter().find(|(k, _)| matches!(k, Value::Str(s) if self.str(*s) == key)).map(|(_, v)| *v)
    }

    /// The id of `s`, interned.
    pub fn intern(&mut self, s: &str) -> u32 {
        if let Some(id) = self.string_ids.get(s) {
            return *id;
        }
        let id = self.strings.len() as u32;
        self.strings.push(s.into());
        self.string_ids.insert(s.into(), id);
        id
    }

    /// `v` as JSON: dicts with string keys as objects (other keys written as text), lists and tuples
    /// as arrays, bytes as arrays of numbers. Bounded by [`MAX_JSON_DEPTH`] and [`MAX_JSON_VALUES`].
    pub fn to_json(&self, v: Value) -> Result<serde_json::Value, String> {
        let mut budget = MAX_JSON_VALUES;
        self.json_of(v, 0, &mut budget)
    }

    fn json_of(&self, v: Value, depth: usize, budget: &mut usize) -> Result<serde_json::Value, String> {
        use serde_json::Value as J;
        if depth > MAX_JSON_DEPTH {
            return Err(format!("a value is nested more than {MAX_JSON_DEPTH} deep (or refers to itself)"));
        }
        *budget = budget.checked_sub(1).ok_or_else(|| format!("a value unfolds to more than {MAX_JSON_VALUES} values"))?;
        Ok(match v {
            Value::None => J::Null,
            Value::Bool(b) => J::Bool(b),
            Value::Int(i) => J::from(i),
            Value::BigInt => J::String("<integer beyond 64 bits>".into()),
            Value::Float(f) => serde_json::Number::from_f64(f).map_or(J::Null, J::Number),
            Value::Str(s) => J::String(self.str(s).to_string()),
            Value::Bytes(b) => J::Array(self.bytes(b).iter().map(|x| J::from(*x)).collect()),
            Value::Obj(id) => match self.object(id) {
                Object::List(items) | Object::Tuple(items) => {
                    J::Array(items.iter().map(|x| self.json_of(*x, depth + 1, budget)).collect::<Result<_, _>>()?)
                }
                Object::Dict(items) => {
                    let mut map = serde_json::Map::new();
                    for (k, x) in items {
                        let key = match k {
                            Value::Str(s) => self.str(*s).to_string(),
                            other => self.json_of(*other, depth + 1, budget)?.to_string(),
                        };
                        map.insert(key, self.json_of(*x, depth + 1, budget)?);
                    }
                    J::Object(map)
                }
                Object::Taken(_) => return Err(ALREADY_READ.into()),
            },
            Value::Read(..) => return Err(ALREADY_READ.into()),
        })
    }

    fn new_object(&mut self, object: Object, role: Role) -> Value {
        let id = self.objects.len() as u32;
        self.objects.push(object);
        self.roles.push(role);
        Value::Obj(id)
    }
}

/// Why [`Heap::to_json`] cannot unfold a container a [`Consumer`] took or read.
const ALREADY_READ: &str = "a value refers to data already read into the snapshot's columns";

/// Why a pickle could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PickleError {
    /// The bytes end inside an opcode's argument, or before `STOP`.
    #[error("the pickle ends at byte {end} {what}")]
    Truncated { end: usize, what: String },
    /// An opcode that would import or call Python code: never executed.
    #[error("opcode {name} (0x{code:02x}) at byte {at} would {why}; Tidemark never runs a pickle's code, and a memory snapshot holds only plain data")]
    Refused { name: &'static str, code: u8, at: usize, why: String },
    /// An opcode this reader does not know (or an old text protocol's).
    #[error("opcode 0x{code:02x} at byte {at} is {what}")]
    Unsupported { code: u8, at: usize, what: String },
    /// Well-formed opcodes that do not make sense together (a `SETITEMS` without a dict, ...), or a
    /// limit passed.
    #[error("at byte {at}: {detail}")]
    Malformed { at: usize, detail: String },
}

/// Reads the pickle in `bytes` (one object, up to `STOP`), handing its containers to `consumer`;
/// returns the top-level value and the heap that holds what the consumer did not take.
pub fn read(bytes: &[u8], consumer: &mut dyn Consumer) -> Result<(Value, Heap), PickleError> {
    Machine {
        input: Input { bytes, pos: 0 },
        stack: Vec::new(),
        marks: Vec::new(),
        memo: Memo::default(),
        heap: Heap::default(),
        puts: Vec::new(),
    }
    .run(consumer)
}

struct Machine<'a> {
    input: Input<'a>,
    stack: Vec<Value>,
    /// The stack's length at each open `MARK` (CPython's metastack).
    marks: Vec<usize>,
    memo: Memo,
    heap: Heap,
    /// The memo puts of a [`Consumer::read`] under way, reused from read to read.
    puts: Vec<(u32, Value)>,
}

/// The pickle's bytes and the position of the next opcode: read by the machine, and by a
/// [`Cursor`] from a copy, which the machine adopts when the consumer's read succeeds.
#[derive(Clone, Copy)]
struct Input<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Input<'a> {
    /// The next `n` bytes, or a truncation naming `what` was being read.
    #[inline]
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], PickleError> {
        match self.pos.checked_add(n).filter(|e| *e <= self.bytes.len()) {
            Some(end) => {
                let out = &self.bytes[self.pos..end];
                self.pos = end;
                Ok(out)
            }
            None => Err(self.truncated(n, what)),
        }
    }

    #[cold]
    fn truncated(&self, n: usize, what: &str) -> PickleError {
        PickleError::Truncated {
            end: self.bytes.len(),
            what: format!("inside {what} at byte {} (it needs {n} more bytes)", self.pos.saturating_sub(1)),
        }
    }

    /// A little-endian unsigned length of `width` bytes.
    #[inline]
    fn length(&mut self, width: usize, what: &str) -> Result<usize, PickleError> {
        let b = self.take(width, what)?;
        let mut v = 0u64;
        for (i, x) in b.iter().enumerate() {
            v |= u64::from(*x) << (8 * i);
        }
        // A length past the file's end is caught by the `take` that follows.
        Ok(usize::try_from(v).unwrap_or(usize::MAX))
    }

    /// The value that opcode `code` (at byte `at`, its argument next) pushes when it is one that
    /// pushes a constant, a number, a string or bytes; `None` (nothing read) for any other. Inlined
    /// for what a snapshot's entries hold in every event (small numbers, `LONG1`), the rest apart.
    #[inline(always)]
    fn scalar(&mut self, code: u8, at: usize, heap: &mut Heap) -> Result<Option<Value>, PickleError> {
        Ok(Some(match code {
            b'N' => Value::None,
            0x88 => Value::Bool(true),
            0x89 => Value::Bool(false),
            b'J' => {
                let b = self.take(4, "BININT")?;
                Value::Int(i64::from(i32::from_le_bytes([b[0], b[1], b[2], b[3]])))
            }
            b'K' => Value::Int(i64::from(self.take(1, "BININT1")?[0])),
            b'M' => {
                let b = self.take(2, "BININT2")?;
                Value::Int(i64::from(u16::from_le_bytes([b[0], b[1]])))
            }
            0x8a => {
                let n = self.length(1, "LONG1")?;
                long(self.take(n, "LONG")?)
            }
            _ => return self.rare_scalar(code, at, heap),
        }))
    }

    /// [`Input::scalar`] of the opcodes a snapshot writes once each (a string's first time) or never.
    #[inline(never)]
    fn rare_scalar(&mut self, code: u8, at: usize, heap: &mut Heap) -> Result<Option<Value>, PickleError> {
        Ok(Some(match code {
            0x8b => {
                let n = self.length(4, "LONG4")?;
                long(self.take(n, "LONG")?)
            }
            b'G' => Value::Float(f64::from_be_bytes(self.take(8, "BINFLOAT")?.try_into().expect("8 bytes"))),
            0x8c | b'X' | 0x8d => {
                let (width, name) = match code {
                    0x8c => (1, "SHORT_BINUNICODE"),
                    b'X' => (4, "BINUNICODE"),
                    _ => (8, "BINUNICODE8"),
                };
                let n = self.length(width, name)?;
                let raw = self.take(n, name)?;
                let s = std::str::from_utf8(raw).map_err(|e| malformed(at, format!("{name} is not UTF-8: {e}")))?;
                Value::Str(heap.intern(s))
            }
            b'C' | b'B' | 0x8e | 0x96 => {
                let (width, name) = match code {
                    b'C' => (1, "SHORT_BINBYTES"),
                    b'B' => (4, "BINBYTES"),
                    0x8e => (8, "BINBYTES8"),
                    _ => (8, "BYTEARRAY8"),
                };
                let n = self.length(width, name)?;
                heap.bytes.push(self.take(n, name)?.into());
                Value::Bytes(heap.bytes.len() as u32 - 1)
            }
            _ => return Ok(None),
        }))
    }
}

/// What the refused opcodes would do, by opcode.
fn refused(code: u8) -> Option<(&'static str, &'static str)> {
    Some(match code {
        b'c' => ("GLOBAL", "import a Python name"),
        0x93 => ("STACK_GLOBAL", "import a Python name"),
        b'R' => ("REDUCE", "call a Python function"),
        b'b' => ("BUILD", "call an object's __setstate__"),
        0x81 => ("NEWOBJ", "construct a Python object"),
        0x92 => ("NEWOBJ_EX", "construct a Python object"),
        b'i' => ("INST", "import and construct a Python object"),
        b'o' => ("OBJ", "construct a Python object"),
        0x82 => ("EXT1", "import a registered Python name"),
        0x83 => ("EXT2", "import a registered Python name"),
        0x84 => ("EXT4", "import a registered Python name"),
        b'P' => ("PERSID", "ask the loader for a persistent object"),
        b'Q' => ("BINPERSID", "ask the loader for a persistent object"),
        0x97 => ("NEXT_BUFFER", "read an out-of-band buffer the loader supplies"),
        0x98 => ("READONLY_BUFFER", "read an out-of-band buffer the loader supplies"),
        _ => return None,
    })
}

/// Protocol 0 and 1's text opcodes, and the set opcodes, named for the refusal.
fn unsupported(code: u8) -> String {
    let name = match code {
        b'I' => "INT",
        b'L' => "LONG",
        b'S' => "STRING",
        b'T' => "BINSTRING",
        b'U' => "SHORT_BINSTRING",
        b'V' => "UNICODE",
        b'F' => "FLOAT",
        b'p' => "PUT",
        b'g' => "GET",
        b'l' => "LIST",
        b'd' => "DICT",
        0x8f => "EMPTY_SET",
        0x90 => "ADDITEMS",
        0x91 => "FROZENSET",
        _ => return "not a pickle opcode this reader knows (is the file a pickle?)".into(),
    };
    format!("{name}, which this reader does not read (protocol 0/1 text opcodes and sets are not used by memory snapshots; save with protocol 2 or later)")
}

impl<'a> Machine<'a> {
    fn run(mut self, consumer: &mut dyn Consumer) -> Result<(Value, Heap), PickleError> {
        loop {
            let at = self.input.pos;
            let code = *self
                .input
                .bytes
                .get(at)
                .ok_or_else(|| PickleError::Truncated { end: self.input.bytes.len(), what: "before its STOP opcode".into() })?;
            self.input.pos += 1;
            match code {
                0x80 => {
                    let p = self.input.take(1, "PROTO")?[0];
                    if p > 5 {
                        return Err(PickleError::Unsupported { code, at, what: format!("PROTO {p}: pickle protocols up to 5 are read") });
                    }
                }
                0x95 => {
                    self.input.take(8, "FRAME")?;
                }
                b'.' => {
                    let top = self.pop(at)?;
                    return Ok((top, self.heap));
                }
                b'(' => {
                    if self.marks.len() >= MAX_MARKS {
                        return Err(malformed(at, format!("more than {MAX_MARKS} MARKs open at once")));
                    }
                    self.marks.push(self.stack.len());
                }
                b'}' => self.new_container(consumer, false, at)?,
                b']' => self.new_container(consumer, true, at)?,
                b')' => {
                    let v = self.heap.new_object(Object::Tuple(Vec::new()), Role::NONE);
                    self.push(v, at)?
                }
                0x85..=0x87 => {
                    let n = usize::from(code - 0x84);
                    if self.stack.len() < n + self.marks.last().copied().unwrap_or(0) {
                        return Err(malformed(at, format!("TUPLE{n} needs {n} values on the stack")));
                    }
                    let items = self.stack.split_off(self.stack.len() - n);
                    let v = self.heap.new_object(Object::Tuple(items), Role::NONE);
                    self.push(v, at)?;
                }
                b't' => {
                    let items = self.pop_mark(at)?;
                    let v = self.heap.new_object(Object::Tuple(items), Role::NONE);
                    self.push(v, at)?;
                }
                b'a' => {
                    let first = self.above_mark(1, at)?;
                    self.append(consumer, first, at)?;
                }
                b'e' => {
                    let first = self.close_mark(at)?;
                    self.append(consumer, first, at)?;
                }
                b's' => {
                    let first = self.above_mark(2, at)?;
                    self.set_items(first, at)?;
                }
                b'u' => {
                    let first = self.close_mark(at)?;
                    self.set_items(first, at)?;
                }
                b'q' | b'r' => {
                    let key = if code == b'q' { self.input.length(1, "BINPUT")? } else { self.input.length(4, "LONG_BINPUT")? };
                    let v = self.top(at)?;
                    self.memo.put(key as u32, v);
                }
                0x94 => {
                    let v = self.top(at)?;
                    let key = self.memo.len as u32;
                    self.memo.put(key, v);
                }
                b'h' | b'j' => {
                    let key = if code == b'h' { self.input.length(1, "BINGET")? } else { self.input.length(4, "LONG_BINGET")? };
                    let v = u32::try_from(key)
                        .ok()
                        .and_then(|k| self.memo.get(k))
                        .ok_or_else(|| malformed(at, format!("memo key {key} was never stored")))?;
                    self.push(v, at)?;
                }
                b'0' => {
                    self.pop(at)?;
                }
                b'1' => {
                    let first = self.close_mark(at)?;
                    self.stack.truncate(first);
                }
                b'2' => {
                    let v = self.top(at)?;
                    self.push(v, at)?;
                }
                _ => match self.input.scalar(code, at, &mut self.heap)? {
                    Some(v) => self.push(v, at)?,
                    None => {
                        return Err(match refused(code) {
                            Some((name, why)) => PickleError::Refused { name, code, at, why: self.what_it_imports(code, why) },
                            None => PickleError::Unsupported { code, at, what: unsupported(code) },
                        })
                    }
                },
            }
        }
    }

    /// `why`, with the module and name a `GLOBAL` names (read, not imported).
    fn what_it_imports(&self, code: u8, why: &str) -> String {
        if code != b'c' {
            return why.to_string();
        }
        let Input { bytes, pos } = self.input;
        let rest = &bytes[pos..bytes.len().min(pos + 256)];
        let mut lines = rest.split(|b| *b == b'\n');
        match (lines.next(), lines.next()) {
            (Some(module), Some(name)) => format!("{why} ({}.{})", String::from_utf8_lossy(module), String::from_utf8_lossy(name)),
            _ => why.to_string(),
        }
    }

    fn push(&mut self, v: Value, at: usize) -> Result<(), PickleError> {
        if self.stack.len() >= MAX_STACK {
            return Err(malformed(at, format!("more than {MAX_STACK} values on the stack (a nesting bomb?)")));
        }
        self.stack.push(v);
        Ok(())
    }

    /// Pops a value above the last mark.
    fn pop(&mut self, at: usize) -> Result<Value, PickleError> {
        if self.stack.len() <= self.marks.last().copied().unwrap_or(0) {
            return Err(malformed(at, "a value is needed but the stack is empty (above its mark)".into()));
        }
        Ok(self.stack.pop().expect("checked non-empty"))
    }

    fn top(&self, at: usize) -> Result<Value, PickleError> {
        match self.stack.last() {
            Some(v) if self.stack.len() > self.marks.last().copied().unwrap_or(0) => Ok(*v),
            _ => Err(malformed(at, "a value is needed but the stack is empty (above its mark)".into())),
        }
    }

    fn pop_mark(&mut self, at: usize) -> Result<Vec<Value>, PickleError> {
        let m = self.close_mark(at)?;
        Ok(self.stack.split_off(m))
    }

    /// Closes the last `MARK`: the stack's index of the first value above it. The values stay on the
    /// stack for the opcode to read in place (a snapshot's every entry and frame list is a marked
    /// batch: moving each into a vector of its own was an allocation and a free apiece).
    fn close_mark(&mut self, at: usize) -> Result<usize, PickleError> {
        self.marks.pop().ok_or_else(|| malformed(at, "an opcode needs a MARK and none is open".into()))
    }

    /// The stack's index of the last `n` values, checked to lie above the last mark.
    fn above_mark(&self, n: usize, at: usize) -> Result<usize, PickleError> {
        let floor = self.marks.last().copied().unwrap_or(0);
        match self.stack.len().checked_sub(n) {
            Some(first) if first >= floor => Ok(first),
            _ => Err(malformed(at, "a value is needed but the stack is empty (above its mark)".into())),
        }
    }

    /// Creates a container, its role asked of the consumer from where it is built, unless the
    /// consumer reads it whole straight from the bytes ([`Consumer::read`]).
    fn new_container(&mut self, consumer: &mut dyn Consumer, is_list: bool, at: usize) -> Result<(), PickleError> {
        let role = if self.stack.is_empty() {
            consumer.top_role(is_list)
        } else {
            let (places, n) = self.places();
            consumer.role(&self.heap, &places[..n], is_list)
        };
        if role != Role::NONE {
            let mut cursor = Cursor::new(self.input, &self.memo, &mut self.heap, &mut self.puts);
            let read = consumer.read(role, &mut cursor);
            let pos = cursor.pos();
            if let Some(index) = read {
                self.input.pos = pos;
                for (key, v) in self.puts.drain(..) {
                    self.memo.put(key, v);
                }
                return self.push(Value::Read(role, index), at);
            }
            self.puts.clear();
        }
        let object = if is_list { Object::List(Vec::new()) } else { Object::Dict(Vec::new()) };
        let v = self.heap.new_object(object, role);
        self.push(v, at)
    }

    /// Where a value pushed now may go: into the list or dict at the top of the stack (for an
    /// `APPEND`/`SETITEM`), or into the one waiting below the last `MARK` (for an
    /// `APPENDS`/`SETITEMS`). Both can hold at once (a list's one-item batch is written with
    /// `APPEND` inside its parent's marked batch), so both are returned, the top's first.
    fn places(&self) -> ([Place; 3], usize) {
        let n = self.stack.len();
        let floor = self.marks.last().copied().unwrap_or(0);
        let container = |i: usize| match self.stack.get(i) {
            Some(Value::Obj(id)) => Some(*id),
            _ => None,
        };
        let place_in = |id: u32, waiting: usize| match self.heap.object(id) {
            Object::List(items) => {
                Some(Place { parent: self.heap.role(id), key: None, index: items.len() + self.heap.taken_from(id) + waiting })
            }
            Object::Dict(_) if waiting % 2 == 1 => Some(Place { parent: self.heap.role(id), key: Some(self.stack[n - 1]), index: 0 }),
            _ => None,
        };
        // At most three places, kept on the stack: this runs for every container of the file.
        let mut out = [Place { parent: Role::NONE, key: None, index: 0 }; 3];
        let mut len = 0;
        let mut push = |p: Place| {
            out[len] = p;
            len += 1;
        };
        if n > floor {
            if let Some(p) = container(n - 1).filter(|id| matches!(self.heap.object(*id), Object::List(_))).and_then(|id| place_in(id, 0)) {
                push(p);
            }
        }
        if n >= floor + 2 {
            if let Some(p) = container(n - 2).filter(|id| matches!(self.heap.object(*id), Object::Dict(_))).and_then(|id| place_in(id, 1)) {
                push(p);
            }
        }
        if floor >= 1 {
            if let Some(p) = container(floor - 1).and_then(|id| place_in(id, n - floor)) {
                push(p);
            }
        }
        (out, len)
    }

    /// `APPEND(S)`: the values from `first` to the stack's top go into the list just below them,
    /// then leave the stack.
    fn append(&mut self, consumer: &mut dyn Consumer, first: usize, at: usize) -> Result<(), PickleError> {
        let not_a_list = || malformed(at, "APPEND(S) onto a value that is not a list".into());
        let id = match first.checked_sub(1).filter(|i| *i >= self.marks.last().copied().unwrap_or(0)).map(|i| self.stack[i]) {
            Some(Value::Obj(id)) => id,
            Some(Value::Read(..)) => return Err(already_read(at, "APPEND(S)")),
            Some(_) => return Err(not_a_list()),
            None => return Err(malformed(at, "a value is needed but the stack is empty (above its mark)".into())),
        };
        let role = self.heap.role(id);
        let Object::List(existing) = &mut self.heap.objects[id as usize] else { return Err(not_a_list()) };
        if role == Role::NONE {
            // A list the consumer has no interest in: its items as they are.
            existing.extend_from_slice(&self.stack[first..]);
            self.stack.truncate(first);
            return Ok(());
        }
        let already = existing.len() + self.heap.taken_from(id);
        let mut taken_here = 0;
        for (index, i) in (already..).zip(first..self.stack.len()) {
            let item = self.stack[i];
            if consumer.take(&mut self.heap, role, index, item).map_err(|detail| malformed(at, detail))? {
                taken_here += 1;
            } else if let Object::List(existing) = &mut self.heap.objects[id as usize] {
                existing.push(item);
            }
        }
        if taken_here > 0 {
            *self.heap.taken_counts.entry(id).or_insert(0) += taken_here;
        }
        self.stack.truncate(first);
        Ok(())
    }

    /// `SETITEM(S)`: the keys and values from `first` to the stack's top go into the dict just below
    /// them, then leave the stack.
    fn set_items(&mut self, first: usize, at: usize) -> Result<(), PickleError> {
        let dict = match first.checked_sub(1).filter(|i| *i >= self.marks.last().copied().unwrap_or(0)).map(|i| self.stack[i]) {
            Some(Value::Obj(id)) => match &mut self.heap.objects[id as usize] {
                Object::Dict(d) => Some(d),
                _ => None,
            },
            Some(Value::Read(..)) => return Err(already_read(at, "SETITEM(S)")),
            Some(_) => None,
            None => return Err(malformed(at, "a value is needed but the stack is empty (above its mark)".into())),
        };
        let Some(d) = dict else { return Err(malformed(at, "SETITEM(S) onto a value that is not a dict".into())) };
        if (self.stack.len() - first) % 2 == 1 {
            return Err(malformed(at, "SETITEMS with a key and no value".into()));
        }
        d.extend(self.stack[first..].chunks_exact(2).map(|kv| (kv[0], kv[1])));
        self.stack.truncate(first);
        Ok(())
    }
}

/// `op` onto a container a [`Consumer`] read whole when it began ([`Consumer::read`]): a writer
/// fills a container once, right after making it; only a crafted file adds to it later.
fn already_read(at: usize, op: &str) -> PickleError {
    malformed(at, format!("{op} onto a container already read whole (a writer never adds to one after filling it)"))
}

fn malformed(at: usize, detail: String) -> PickleError {
    PickleError::Malformed { at, detail }
}

/// A little-endian two's-complement integer (`LONG1`/`LONG4`'s payload). Up to 8 bytes (a
/// snapshot's addresses and times, two an entry) inlined: its bytes gathered one by one (a copy of a
/// variable length was a call to `memcpy`) and the sign extended by a shift.
#[inline(always)]
fn long(b: &[u8]) -> Value {
    if b.is_empty() {
        return Value::Int(0);
    }
    if b.len() > 8 {
        return wide_long(b);
    }
    let mut v = 0u64;
    for (i, x) in b.iter().enumerate() {
        v |= u64::from(*x) << (8 * i);
    }
    let shift = 64 - 8 * b.len();
    Value::Int(((v << shift) as i64) >> shift)
}

/// [`long`] of more than 8 bytes: it fits 64 bits only if the extra bytes are sign extension.
#[inline(never)]
fn wide_long(b: &[u8]) -> Value {
    let negative = b[b.len() - 1] & 0x80 != 0;
    let (low, high) = b.split_at(8);
    let fill = if negative { 0xff } else { 0 };
    if high.iter().any(|x| *x != fill) {
        return Value::BigInt;
    }
    let v = i64::from_le_bytes(low.try_into().expect("8 bytes"));
    if (v < 0) != negative {
        return Value::BigInt;
    }
    Value::Int(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Takes nothing: the whole value stays in the heap.
    struct Keep;

    impl Consumer for Keep {
        fn top_role(&mut self, _: bool) -> Role {
            Role::NONE
        }
        fn role(&mut self, _: &Heap, _: &[Place], _: bool) -> Role {
            Role::NONE
        }
        fn take(&mut self, _: &mut Heap, _: Role, _: usize, _: Value) -> Result<bool, String> {
            Ok(false)
        }
        fn read(&mut self, _: Role, _: &mut Cursor) -> Option<u32> {
            None
        }
    }

    fn json(bytes: &[u8]) -> Result<serde_json::Value, PickleError> {
        let (top, heap) = read(bytes, &mut Keep)?;
        Ok(heap.to_json(top).expect("a plain value"))
    }

    /// Python's own `pickle.dumps(v, protocol=N)` of one value (every int width, big ints, floats,
    /// constants, tuples of 0–4, one-item dict and list, ASCII/non-ASCII/long strings, 300 strings
    /// for 4-byte memo keys, 1001 items for batched APPENDS, a shared list, nesting; bytes from
    /// protocol 3, a bytearray in 5), generated when this test was written, with `json.dumps` of the
    /// same value beside it (tuples and bytes as lists, integers beyond 64 bits as our marker).
    #[test]
    fn reads_python_pickles_of_every_protocol() {
        let cases: [(&[u8], &str); 4] = [
            (include_bytes!("../../tests/fixtures/pickle/p2.pickle"), include_str!("../../tests/fixtures/pickle/p2.json")),
            (include_bytes!("../../tests/fixtures/pickle/p3.pickle"), include_str!("../../tests/fixtures/pickle/p3.json")),
            (include_bytes!("../../tests/fixtures/pickle/p4.pickle"), include_str!("../../tests/fixtures/pickle/p4.json")),
            (include_bytes!("../../tests/fixtures/pickle/p5.pickle"), include_str!("../../tests/fixtures/pickle/p5.json")),
        ];
        for (protocol, (bytes, expected)) in (2..).zip(cases) {
            let expected: serde_json::Value = serde_json::from_str(expected).expect("json");
            assert_eq!(bytes[..2], [0x80, protocol], "protocol {protocol}");
            assert_eq!(json(bytes).unwrap_or_else(|e| panic!("protocol {protocol}: {e}")), expected, "protocol {protocol}");
        }
    }

    /// The memo as CPython's: `MEMOIZE` takes the count of stored keys, a `PUT` past the end is kept
    /// apart (and never sizes the vector), one at the end joins it, an overwrite does not count twice.
    #[test]
    fn memo_keys_dense_sparse_and_overwritten() {
        let mut m = Memo::default();
        m.put(0, Value::Int(0));
        m.put(4_000_000_000, Value::Int(9));
        assert_eq!((m.len, m.dense.len()), (2, 1));
        m.put(1, Value::Int(1));
        m.put(1, Value::Int(11));
        assert_eq!(m.len, 3);
        m.put(3, Value::Int(3));
        m.put(2, Value::Int(2));
        m.put(3, Value::Int(33));
        assert_eq!(m.len, 5);
        let got: Vec<_> = [0, 1, 2, 3, 4_000_000_000, 5].map(|k| m.get(k)).into();
        assert_eq!(got, [Some(Value::Int(0)), Some(Value::Int(11)), Some(Value::Int(2)), Some(Value::Int(33)), Some(Value::Int(9)), None]);
        // A PUT of MEMOIZE's own next key, then MEMOIZE: Python's `len(memo)` counts each key once.
        let p = [0x80, 4, b'K', 1, b'q', 0, 0x94, b'h', 1, b'.'];
        assert_eq!(json(&p).expect("reads"), serde_json::json!(1));
    }

    /// The opcodes Python's pickler writes only for objects too large for a test (8-byte lengths,
    /// `LONG4`), and the stack opcodes, by hand.
    #[test]
    fn reads_hand_written_opcodes() {
        let mut p = vec![0x80, 4, b']', 0x94, b'('];
        p.extend([0x8d, 2, 0, 0, 0, 0, 0, 0, 0, b'h', b'i']); // BINUNICODE8 "hi"
        p.extend([0x8e, 1, 0, 0, 0, 0, 0, 0, 0, 7]); // BINBYTES8 [7]
        p.extend([0x8b, 2, 0, 0, 0, 0x01, 0x02]); // LONG4 0x0201
        p.extend([0x8b, 0, 0, 0, 0]); // LONG4 of no bytes: 0
        p.extend([0x8a, 1, 0xff]); // LONG1 -1
        p.extend([b'K', 5, b'2', b'0']); // BININT1 5, DUP, POP
        p.extend([b'(', b'K', 9, b'1']); // MARK, 9, POP_MARK
        p.extend([b'N', b'q', 7, b'0', b'h', 7]); // None, BINPUT 7, POP, BINGET 7
        p.extend([b'r', 1, 0, 1, 0, b'j', 1, 0, 1, 0]); // LONG_BINPUT 65537 (of the None), LONG_BINGET 65537
        p.extend([b'h', 0]); // BINGET 0: the list itself
        p.extend([b'e', b')', b'a', b'.']); // APPENDS, EMPTY_TUPLE, APPEND, STOP
        let (top, heap) = read(&p, &mut Keep).expect("reads");
        let Value::Obj(id) = top else { panic!("a list") };
        let Object::List(items) = heap.object(id) else { panic!("a list") };
        assert_eq!(
            items[..7],
            [Value::Str(0), Value::Bytes(0), Value::Int(0x0201), Value::Int(0), Value::Int(-1), Value::Int(5), Value::None]
        );
        assert_eq!((heap.str(0), heap.bytes(0)), ("hi", &[7u8][..]));
        assert_eq!(items[7..9], [Value::None, Value::Obj(id)], "memo values and the list referring to itself");
        // A value that contains itself cannot be unfolded, and says so.
        assert!(heap.to_json(top).unwrap_err().contains("nested more than"));
    }

    #[test]
    fn refuses_code_with_the_opcode_and_offset() {
        // pickle.dumps(collections.OrderedDict(), protocol=2)
        let global = b"\x80\x02ccollections\nOrderedDict\nq\x00)Rq\x01.";
        let e = json(global).unwrap_err();
        assert!(matches!(e, PickleError::Refused { name: "GLOBAL", at: 2, .. }), "{e:?}");
        assert!(e.to_string().contains("collections.OrderedDict"), "{e}");
        // Each refused opcode, after a few harmless values on the stack.
        for code in [b'c', 0x93, b'R', b'b', 0x81, 0x92, b'i', b'o', 0x82, 0x83, 0x84, b'P', b'Q', 0x97, 0x98] {
            let bytes = [0x80, 4, b'N', b'N', code, 0, 0, 0, 0, b'.'];
            let e = json(&bytes).unwrap_err();
            assert!(matches!(e, PickleError::Refused { at: 4, .. }), "0x{code:02x}: {e:?}");
            assert!(e.to_string().contains("never runs a pickle's code"), "{e}");
        }
    }

    #[test]
    fn hostile_input_gives_clear_errors() {
        let valid = include_bytes!("../../tests/fixtures/pickle/p4.pickle");
        // Cut anywhere: an error naming the end, never a panic.
        for cut in 0..valid.len() {
            match json(&valid[..cut]) {
                Err(PickleError::Truncated { end, .. }) => assert_eq!(end, cut),
                other => panic!("cut at {cut}: {other:?}"),
            }
        }
        // A length far past the end is refused before anything is allocated.
        for bytes in [&b"\x80\x04\x8d\xff\xff\xff\xff\xff\xff\xff\x7f"[..], b"\x80\x04X\xff\xff\xff\xff", b"\x80\x04\x8b\xff\xff\xff\xff"] {
            assert!(matches!(json(bytes), Err(PickleError::Truncated { .. })), "{bytes:?}");
        }
        // Unknown opcodes and old text opcodes.
        assert!(matches!(json(b"\x80\x04\xff."), Err(PickleError::Unsupported { code: 0xff, at: 2, .. })));
        let e = json(b"(lp0\n.").unwrap_err();
        assert!(e.to_string().contains("protocol 0/1"), "{e}");
        assert!(matches!(json(b"\x80\x06N."), Err(PickleError::Unsupported { .. })), "protocol 6");
        // Structure that does not hold together.
        for bytes in
            [&b"\x80\x04a."[..], b"\x80\x04Ne.", b"\x80\x04}K\x01u.", b"\x80\x04NN\x86\x86.", b"\x80\x04h\x05.", b"\x80\x04\xc3\xa9"]
        {
            assert!(json(bytes).is_err(), "{bytes:?}");
        }
        assert!(matches!(json(b"\x80\x04\x8c\x02\xff\xfe."), Err(PickleError::Malformed { .. })), "invalid UTF-8");
        // A nesting bomb: a million lists opened, never closed, stops at the stack limit.
        let mut bomb = vec![0x80, 4];
        bomb.extend(std::iter::repeat_n(b']', MAX_STACK + 10));
        let e = json(&bomb).unwrap_err();
        assert!(e.to_string().contains("nesting bomb"), "{e}");
        let mut marks = vec![0x80, 4];
        marks.extend(std::iter::repeat_n(b'(', MAX_MARKS + 1));
        assert!(json(&marks).unwrap_err().to_string().contains("MARKs"));
        // Deep but within the stack: lists nested 10,000 deep read, and unfold only to the depth limit.
        let mut deep = vec![0x80, 4];
        deep.extend(std::iter::repeat_n(b']', 10_000));
        deep.extend(std::iter::repeat_n(b'a', 9_999));
        deep.push(b'.');
        let (top, heap) = read(&deep, &mut Keep).expect("reads");
        assert!(heap.to_json(top).is_err());
        // Shared lists doubling at each level unfold to 2^40 values: refused by the size limit.
        let mut wide = vec![0x80, 4, b']', 0x94];
        for k in 0..40u32 {
            wide.extend([b']', 0x94, b'(', b'j']);
            wide.extend(k.to_le_bytes());
            wide.push(b'j');
            wide.extend(k.to_le_bytes());
            wide.push(b'e');
            wide.push(b'0');
        }
        wide.extend([b'j', 40, 0, 0, 0, b'.']);
        let (top, heap) = read(&wide, &mut Keep).expect("reads");
        assert!(heap.to_json(top).unwrap_err().contains("more than"));
    }

    #[test]
    fn integers_of_every_width() {
        assert_eq!(long(&[]), Value::Int(0));
        assert_eq!(long(&[0x80]), Value::Int(-128));
        assert_eq!(long(&[0xff, 0x00]), Value::Int(255));
        assert_eq!(long(&[0xff; 8]), Value::Int(-1));
        assert_eq!(long(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]), Value::Int(i64::MAX));
        assert_eq!(long(&[0, 0, 0, 0, 0, 0, 0, 0x80, 0]), Value::BigInt, "2^63 needs 9 bytes");
        assert_eq!(long(&[0, 0, 0, 0, 0, 0, 0, 0x80, 0xff]), Value::Int(i64::MIN), "sign extension past 8 bytes");
        assert_eq!(long(&[0, 0, 0, 0, 0, 0, 0, 0, 1]), Value::BigInt);
    }
}
