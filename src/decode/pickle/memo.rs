//! The pickle's memo: values stored by key. Writers number their keys 0, 1, 2, … (`MEMOIZE` always,
//! the `PUT`s of protocols 2 and 3 in practice), so keys are kept in a vector indexed by key, in a
//! [`Slot`] of 8 bytes: a snapshot stores an entry and a frame list for every event, millions of
//! them, and a hash map took two to three times what a 16-byte value a key did, which was still
//! half the reader's memory besides the columns. A key past the vector's end (a sparse `PUT`) goes
//! to a map, so a hostile key never sizes the vector.

use super::{Role, Value};
use crate::fast_hash::FastMap;

#[derive(Default)]
pub(super) struct Memo {
    pub(super) dense: Vec<Slot>,
    sparse: FastMap<u32, Value>,
    /// The numbers stored in the vector (a writer memoizes none: only a crafted file does), by key.
    numbers: FastMap<u32, Value>,
    /// How many keys hold a value: `MEMOIZE`'s next key, as CPython's `len(memo)`.
    pub(super) len: usize,
    /// How many puts replaced a key's value (a writer never does): what a run of references
    /// meant ([`Cursor::memo_rebinds`](super::Cursor::memo_rebinds)) holds while this is unchanged.
    pub(super) rebinds: u64,
}

/// A value in 8 bytes: its kind in the low byte, a role in the next two, its 32-bit payload (a
/// string, bytes, object or row id) in the high four; a number is in [`Memo::numbers`].
#[derive(Clone, Copy, PartialEq)]
pub(super) struct Slot(u64);

const EMPTY: u8 = 0;
const NONE: u8 = 1;
const FALSE: u8 = 2;
const TRUE: u8 = 3;
const BIG_INT: u8 = 4;
const STR: u8 = 5;
const BYTES: u8 = 6;
const OBJ: u8 = 7;
const READ: u8 = 8;
const NUMBER: u8 = 9;

impl Slot {
    const EMPTY: Slot = Slot(EMPTY as u64);

    fn new(kind: u8, role: Role, payload: u32) -> Slot {
        Slot(u64::from(kind) | u64::from(role.0) << 8 | u64::from(payload) << 32)
    }

    fn kind(self) -> u8 {
        self.0 as u8
    }

    fn payload(self) -> u32 {
        (self.0 >> 32) as u32
    }
}

impl Memo {
    pub(super) fn put(&mut self, key: u32, v: Value) {
        let slot = self.slot(key, v);
        let k = key as usize;
        let new = if k < self.dense.len() {
            std::mem::replace(&mut self.dense[k], slot) == Slot::EMPTY
        } else if k == self.dense.len() {
            self.dense.push(slot);
            // (The map is empty in every file a writer numbered: no lookup then.)
            self.sparse.is_empty() || self.sparse.remove(&key).is_none()
        } else {
            self.sparse.insert(key, v).is_none()
        };
        self.len += usize::from(new);
        self.rebinds += u64::from(!new);
    }

    /// Inlined for what a snapshot's references are (strings, frame dicts, entries and frame lists
    /// read), the rest apart: called, the lookup's value came back through memory and each
    /// reference waited on it.
    #[inline(always)]
    pub(super) fn get(&self, key: u32) -> Option<Value> {
        let slot = self.dense.get(key as usize).copied().unwrap_or(Slot::EMPTY);
        let payload = slot.payload();
        match slot.kind() {
            STR => Some(Value::Str(payload)),
            OBJ => Some(Value::Obj(payload)),
            READ => Some(Value::Read(Role((slot.0 >> 8) as u16), payload)),
            _ => self.get_rare(key, slot),
        }
    }

    #[inline(never)]
    fn get_rare(&self, key: u32, slot: Slot) -> Option<Value> {
        Some(match slot.kind() {
            NONE => Value::None,
            FALSE => Value::Bool(false),
            TRUE => Value::Bool(true),
            BIG_INT => Value::BigInt,
            BYTES => Value::Bytes(slot.payload()),
            NUMBER => return self.numbers.get(&key).copied(),
            _ => return self.sparse.get(&key).copied(),
        })
    }

    /// Whether `key` holds a value.
    #[inline]
    pub(super) fn holds(&self, key: u32) -> bool {
        match self.dense.get(key as usize) {
            Some(slot) => *slot != Slot::EMPTY,
            None => !self.sparse.is_empty() && self.sparse.contains_key(&key),
        }
    }

    /// `v` as a slot for `key` (a number kept apart).
    fn slot(&mut self, key: u32, v: Value) -> Slot {
        let none = Role::NONE;
        match v {
            Value::None => Slot::new(NONE, none, 0),
            Value::Bool(b) => Slot::new(if b { TRUE } else { FALSE }, none, 0),
            Value::BigInt => Slot::new(BIG_INT, none, 0),
            Value::Str(s) => Slot::new(STR, none, s),
            Value::Bytes(b) => Slot::new(BYTES, none, b),
            Value::Obj(o) => Slot::new(OBJ, none, o),
            Value::Read(role, i) => Slot::new(READ, role, i),
            Value::Int(_) | Value::Float(_) => {
                self.numbers.insert(key, v);
                Slot::new(NUMBER, none, 0)
            }
        }
    }
}
