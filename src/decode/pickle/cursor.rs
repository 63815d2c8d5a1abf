//! A [`Consumer`](super::Consumer)'s read of a container straight from the bytes
//! ([`Consumer::read`](super::Consumer::read)): the opcodes one by one, with the values they push,
//! without the machine's stack, its objects or its checks of where a value goes. What it reads is
//! kept only if the consumer reads the whole container: until then the machine's memo is untouched
//! (its puts wait in [`Cursor::put`]'s list) and its position is not moved.
//!
//! Only what a writer writes inside a plain container is read here: constants, numbers, strings,
//! memo references and puts. Anything else (a container other than those the consumer reads
//! itself, an opcode that would run code, a damaged byte) makes the read give up, and the machine
//! reads those bytes and reports what is wrong, as it does for any file.

use super::{Heap, Input, Memo, Value};

/// Where a consumer's read is, in the bytes ([`Consumer::read`](super::Consumer::read)).
pub struct Cursor<'m, 'a> {
    input: Input<'a>,
    memo: &'m Memo,
    heap: &'m mut Heap,
    /// The memo puts read so far, stored when the read succeeds. Each is of a key the memo does not
    /// hold and that was not put before in this read, so no reference read here can need one (a
    /// reference to a key not stored makes the read give up) and none replaces another.
    puts: &'m mut Vec<(u32, Value)>,
}

/// `FRAME`: a protocol 4 writer's hint of the next frame's length, between any two opcodes.
const FRAME: u8 = 0x95;

impl<'m, 'a> Cursor<'m, 'a> {
    pub(super) fn new(input: Input<'a>, memo: &'m Memo, heap: &'m mut Heap, puts: &'m mut Vec<(u32, Value)>) -> Self {
        Cursor { input, memo, heap, puts }
    }

    /// The position after what was read.
    pub(super) fn pos(&self) -> usize {
        self.input.pos
    }

    pub fn heap(&mut self) -> &mut Heap {
        self.heap
    }

    /// The next opcode, not consumed (`FRAME`s before it are); `None` at the end of the bytes.
    #[inline]
    pub fn peek(&mut self) -> Option<u8> {
        loop {
            let code = *self.input.bytes.get(self.input.pos)?;
            if code != FRAME {
                return Some(code);
            }
            self.input.pos += 1;
            self.input.take(8, "FRAME").ok()?;
        }
    }

    /// Consumes the next opcode if it is `code`.
    #[inline]
    pub fn opcode(&mut self, code: u8) -> bool {
        let next = self.peek() == Some(code);
        self.input.pos += usize::from(next);
        next
    }

    /// The key of the memo put that comes next (`MEMOIZE`, `BINPUT`, `LONG_BINPUT`), consumed, for
    /// the value [`Cursor::put`] is then given: `Some(None)` when no put comes next, `None` when it
    /// puts a key already stored (which a writer never does; the machine reads such bytes).
    #[inline(always)]
    pub fn put_key(&mut self) -> Option<Option<u32>> {
        match self.peek() {
            Some(0x94 | b'q' | b'r') => self.stored_put_key(),
            _ => Some(None),
        }
    }

    /// [`Cursor::put_key`] when a put comes next.
    fn stored_put_key(&mut self) -> Option<Option<u32>> {
        let code = self.peek();
        let mut input = self.input;
        input.pos += 1;
        let key = match code {
            Some(0x94) => (self.memo.len + self.puts.len()) as u32,
            Some(b'q') => input.length(1, "BINPUT").ok()? as u32,
            Some(b'r') => input.length(4, "LONG_BINPUT").ok()? as u32,
            _ => return Some(None),
        };
        if self.memo.holds(key) || self.puts.iter().any(|(k, _)| *k == key) {
            return None;
        }
        self.input = input;
        Some(Some(key))
    }

    /// Stores `v` under `key` (from [`Cursor::put_key`]) when the read succeeds.
    pub fn put(&mut self, key: Option<u32>, v: Value) {
        if let Some(key) = key {
            self.puts.push((key, v));
        }
    }

    /// The next value when it is a constant, a number, a string, bytes or a memo reference (with the
    /// memo put that follows a value written the first time); `None` for anything else. Always
    /// inlined: called, its value came back through memory, and the caller waited on it.
    #[inline(always)]
    pub fn value(&mut self) -> Option<Value> {
        let code = self.peek()?;
        let at = self.input.pos;
        self.input.pos += 1;
        match code {
            // (A writer puts nothing after a reference; a put there makes the next read give up.)
            b'h' => self.memo.get(u32::from(self.input.take(1, "BINGET").ok()?[0])),
            b'j' => self.memo.get(self.input.length(4, "LONG_BINGET").ok()? as u32),
            _ => {
                let v = self.input.scalar(code, at, self.heap).ok()??;
                let key = self.put_key()?;
                self.put(key, v);
                Some(v)
            }
        }
    }

    /// The memo references of a batch of a list's items that comes next: `MARK`, `BINGET`s and
    /// `LONG_BINGET`s only, `APPENDS`. Consumed, and their bytes returned (without the `MARK` and
    /// the `APPENDS`), which stand for the same values while [`Cursor::memo_rebinds`] is unchanged;
    /// `None` (nothing consumed) for anything else.
    #[inline]
    pub fn appended_refs(&mut self) -> Option<&'a [u8]> {
        let bytes = self.input.bytes;
        let first = self.input.pos + 1;
        if bytes.get(self.input.pos) != Some(&b'(') {
            return None;
        }
        let mut end = first;
        loop {
            match bytes.get(end) {
                Some(b'j') => end += 5,
                Some(b'h') => end += 2,
                _ => break,
            }
        }
        if bytes.get(end) != Some(&b'e') {
            return None;
        }
        self.input.pos = end + 1;
        Some(&bytes[first..end])
    }

    /// The containers the memo references `refs` ([`Cursor::appended_refs`]) refer to, appended to
    /// `out`; `None` when one refers to anything else.
    pub fn objects_of(&self, refs: &[u8], out: &mut Vec<u32>) -> Option<()> {
        let mut rest = refs;
        while let Some((&code, tail)) = rest.split_first() {
            let (key, len) = match (code, tail) {
                (b'j', [a, b, c, d, ..]) => (u32::from_le_bytes([*a, *b, *c, *d]), 4),
                (b'h', [k, ..]) => (u32::from(*k), 1),
                _ => return None,
            };
            let Some(Value::Obj(id)) = self.memo.get(key) else { return None };
            out.push(id);
            rest = &tail[len..];
        }
        Some(())
    }

    /// How many memo puts so far replaced a key's value (a writer's never do).
    pub fn memo_rebinds(&self) -> u64 {
        self.memo.rebinds
    }

    /// Whether a list's items go on at the next opcode: another batch (`MARK`), or one item
    /// appended (a memo reference, then `APPEND`).
    pub fn more_items(&mut self) -> bool {
        let code = self.peek();
        let after = |len: usize| self.input.bytes.get(self.input.pos + len) == Some(&b'a');
        match code {
            Some(b'(') => true,
            Some(b'h') => after(2),
            Some(b'j') => after(5),
            _ => false,
        }
    }

    /// The container that a memo reference coming next refers to, consumed; `None` (nothing
    /// consumed) when the next opcode is not a memo reference to a container the machine built.
    #[inline]
    pub fn memo_object(&mut self) -> Option<u32> {
        let (key, len) = match self.input.bytes[self.input.pos..] {
            [b'j', a, b, c, d, ..] => (u32::from_le_bytes([a, b, c, d]), 5),
            [b'h', k, ..] => (u32::from(k), 2),
            [FRAME, ..] => {
                self.peek()?;
                return self.memo_object();
            }
            _ => return None,
        };
        let Some(Value::Obj(id)) = self.memo.get(key) else { return None };
        self.input.pos += len;
        Some(id)
    }
}
