//! A minimal protobuf wire-format scanner that reports absolute byte offsets.
//!
//! Why not only prost: to index an XSpace lazily we need the *byte ranges* of planes, lines and events
//! without decoding them, and to say precisely where a truncated file ends ("truncated at byte N").
//! The scanner never allocates; lengths are checked against the bytes actually present, so a hostile
//! length prefix cannot make anything allocate.

use std::ops::Range;

/// A field's payload as it appears on the wire.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Varint(u64),
    Fixed64(u64),
    /// A length-delimited payload: its absolute byte range in the buffer.
    Len(Range<usize>),
    Fixed32(u32),
}

/// One field occurrence inside a message.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    pub number: u32,
    pub value: Value,
    /// Absolute offset of the field's tag.
    pub at: usize,
}

/// Why a byte range is not a well-formed protobuf message.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WireError {
    /// A field or varint runs past the end of the data: `needed_end` is where it would end.
    #[error("a field at byte {at} needs bytes up to {needed_end}, but the data ends at byte {end}")]
    Truncated { at: usize, needed_end: u64, end: usize },
    #[error("malformed protobuf at byte {at}: {what}")]
    Malformed { at: usize, what: &'static str },
}

/// Iterates the fields of the message stored in `buf[range]`; offsets are absolute in `buf`.
pub struct Fields<'a> {
    buf: &'a [u8],
    pos: usize,
    end: usize,
    failed: bool,
}

impl<'a> Fields<'a> {
    pub fn new(buf: &'a [u8], range: Range<usize>) -> Self {
        let end = range.end.min(buf.len());
        Fields { buf, pos: range.start.min(end), end, failed: false }
    }

    /// One-byte varints (field keys, small lengths and ids: most of a trace) take the inlined fast path.
    #[inline(always)]
    fn varint(&mut self) -> Result<u64, WireError> {
        if let Some(&b) = self.buf[..self.end].get(self.pos) {
            if b < 0x80 {
                self.pos += 1;
                return Ok(u64::from(b));
            }
        }
        self.varint_slow()
    }

    #[inline(never)]
    fn varint_slow(&mut self) -> Result<u64, WireError> {
        let start = self.pos;
        let mut v: u64 = 0;
        for i in 0..10 {
            if self.pos >= self.end {
                return Err(WireError::Truncated { at: start, needed_end: self.end as u64 + 1, end: self.end });
            }
            let b = self.buf[self.pos];
            self.pos += 1;
            v |= u64::from(b & 0x7f) << (7 * i);
            if b < 0x80 {
                return Ok(v);
            }
        }
        Err(WireError::Malformed { at: start, what: "varint longer than 10 bytes" })
    }

    #[inline(always)]
    fn take(&mut self, at: usize, n: u64) -> Result<Range<usize>, WireError> {
        // A length prefix can be any 64-bit number: add without overflowing (a wrapped sum would pass
        // the check and make an inverted range).
        let needed_end = (self.pos as u64).saturating_add(n);
        if needed_end > self.end as u64 {
            return Err(WireError::Truncated { at, needed_end, end: self.end });
        }
        let r = self.pos..needed_end as usize;
        self.pos = r.end;
        Ok(r)
    }

    #[inline(always)]
    fn next_field(&mut self) -> Result<Field, WireError> {
        let at = self.pos;
        let key = self.varint()?;
        let number = (key >> 3) as u32;
        if number == 0 || key >> 3 > u64::from(u32::MAX >> 3) {
            return Err(WireError::Malformed { at, what: "invalid field number" });
        }
        let value = match key & 7 {
            0 => Value::Varint(self.varint()?),
            1 => {
                let r = self.take(at, 8)?;
                Value::Fixed64(u64::from_le_bytes(self.buf[r].try_into().expect("8 bytes")))
            }
            2 => {
                let n = self.varint()?;
                Value::Len(self.take(at, n)?)
            }
            5 => {
                let r = self.take(at, 4)?;
                Value::Fixed32(u32::from_le_bytes(self.buf[r].try_into().expect("4 bytes")))
            }
            _ => return Err(WireError::Malformed { at, what: "unsupported wire type" }),
        };
        Ok(Field { number, value, at })
    }
}

impl Iterator for Fields<'_> {
    type Item = Result<Field, WireError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.pos >= self.end {
            return None;
        }
        let r = self.next_field();
        self.failed = r.is_err();
        Some(r)
    }
}

impl Fields<'_> {
    /// Where the next field starts (absolute): after a successful `next`, the end of that field.
    pub fn position(&self) -> usize {
        self.pos
    }
}

/// Reads the varint at `buf[*pos..]`, where `buf` ends where the enclosing message does, and moves
/// `pos` past it; `None` if it runs past the end or is longer than 10 bytes. The hot loops over
/// millions of events use it and, on `None`, re-read the message with [`Fields`] for the precise error.
#[inline(always)]
pub fn varint_at(buf: &[u8], pos: &mut usize) -> Option<u64> {
    let p = *pos;
    let b = *buf.get(p)?;
    if b < 0x80 {
        *pos = p + 1;
        return Some(u64::from(b));
    }
    varint_multi(buf, pos)
}

/// [`varint_at`] for a varint that must end by `end`, read from `buf` as a whole: a value at the end
/// of a small message (a stat's value, an event's last field) is still decoded from one 8-byte
/// word read past `end` where `buf` goes on, rather than byte by byte. `None` (and `pos` unchanged) if
/// it runs past `end`.
#[inline(always)]
pub fn varint_in(buf: &[u8], pos: &mut usize, end: usize) -> Option<u64> {
    let p = *pos;
    if p >= end {
        return None;
    }
    let b = *buf.get(p)?;
    if b < 0x80 {
        *pos = p + 1;
        return Some(u64::from(b));
    }
    let mut q = p;
    let v = varint_multi(buf, &mut q)?;
    (q <= end).then(|| {
        *pos = q;
        v
    })
}

/// The multi-byte case of [`varint_at`]: times, sizes and addresses, 3 to 8 bytes long. With 8 bytes
/// at hand they are decoded from one little-endian word without a loop (the byte holding the end bit
/// found with `trailing_zeros`, the 7-bit groups packed by three mask-and-shift steps).
#[inline(always)]
fn varint_multi(buf: &[u8], pos: &mut usize) -> Option<u64> {
    let p = *pos;
    let rest = buf.get(p..)?;
    if let Some(word) = rest.get(..8) {
        let w = u64::from_le_bytes(word.try_into().expect("8 bytes"));
        let stops = !w & 0x8080_8080_8080_8080;
        if stops != 0 {
            let len = (stops.trailing_zeros() / 8 + 1) as usize;
            let mut x = if len == 8 { w } else { w & ((1u64 << (8 * len)) - 1) };
            x &= 0x7f7f_7f7f_7f7f_7f7f;
            x = (x & 0x007f_007f_007f_007f) | ((x & 0x7f00_7f00_7f00_7f00) >> 1);
            x = (x & 0x0000_3fff_0000_3fff) | ((x & 0x3fff_0000_3fff_0000) >> 2);
            x = (x & 0x0000_0000_0fff_ffff) | ((x & 0x0fff_ffff_0000_0000) >> 4);
            *pos = p + len;
            return Some(x);
        }
    }
    let mut v = 0u64;
    for (i, &b) in rest.iter().take(10).enumerate() {
        v |= u64::from(b & 0x7f) << (7 * i);
        if b < 0x80 {
            *pos = p + i + 1;
            return Some(v);
        }
    }
    None
}

/// Appends `v` as a varint: the writing side, for the few places that assemble messages by hand (a
/// slim copy of a trace, the worker's warm-up trace, test and benchmark traces): our XSpace and XPlane
/// types leave their bulky children out, so those are appended as raw fields.
pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Appends field `number` with the length-delimited `payload`.
pub fn put_len_field(out: &mut Vec<u8>, number: u32, payload: &[u8]) {
    put_varint(out, u64::from(number) << 3 | 2);
    put_varint(out, payload.len() as u64);
    out.extend_from_slice(payload);
}

/// The byte ranges of every occurrence of length-delimited field `number` in `buf[range]`.
pub fn len_fields(buf: &[u8], range: Range<usize>, number: u32) -> Result<Vec<Range<usize>>, WireError> {
    let mut out = Vec::new();
    for f in Fields::new(buf, range) {
        let f = f?;
        if f.number == number {
            match f.value {
                Value::Len(r) => out.push(r),
                _ => return Err(WireError::Malformed { at: f.at, what: "expected a length-delimited field" }),
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scans_fields_with_absolute_offsets() {
        // field 1 varint 150; field 2 "hi"
        let buf = [0u8, 0x08, 0x96, 0x01, 0x12, 0x02, b'h', b'i'];
        let fields: Vec<_> = Fields::new(&buf, 1..buf.len()).collect::<Result<_, _>>().unwrap();
        assert_eq!(fields[0], Field { number: 1, value: Value::Varint(150), at: 1 });
        assert_eq!(fields[1], Field { number: 2, value: Value::Len(6..8), at: 4 });
    }

    #[test]
    fn reports_truncation_point() {
        let buf = [0x12, 0x05, b'h', b'i'];
        let err = Fields::new(&buf, 0..4).next().unwrap().unwrap_err();
        assert_eq!(err, WireError::Truncated { at: 0, needed_end: 7, end: 4 });
    }

    #[test]
    fn huge_length_prefixes_are_truncation() {
        // Found by the `sniff` fuzz target: a length of 2^64 − 1 overflowed `pos + len`.
        let mut buf = vec![0x61, 0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
        buf.extend([0u8; 8]);
        for start in [0, 1] {
            for f in Fields::new(&buf, start..buf.len()) {
                if let Err(e) = f {
                    assert!(matches!(e, WireError::Truncated { needed_end: u64::MAX, .. } | WireError::Malformed { .. }), "{e:?}");
                }
            }
        }
        assert!(matches!(Fields::new(&buf, 1..buf.len()).next(), Some(Err(WireError::Truncated { needed_end: u64::MAX, .. }))));
    }

    #[test]
    fn fast_varints_equal_the_scanner() {
        let mut values: Vec<u64> =
            vec![0, 1, 127, 128, 300, 16_383, 16_384, u64::from(u32::MAX), (1 << 56) - 1, 1 << 56, (1 << 63) + 5, u64::MAX];
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..10_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            values.push(x >> (x % 64));
        }
        for v in values {
            let mut buf = vec![0x08];
            let mut n = v;
            while n >= 0x80 {
                buf.push((n as u8) | 0x80);
                n >>= 7;
            }
            buf.push(n as u8);
            let len = buf.len();
            // Alone (the slow path) and followed by more bytes (the one-word path).
            for tail in [0usize, 9] {
                let mut b = buf.clone();
                b.extend(std::iter::repeat_n(0xffu8, tail));
                let mut pos = 1;
                assert_eq!(varint_at(&b, &mut pos), Some(v), "{v}");
                assert_eq!(pos, len);
                assert_eq!(Fields::new(&b, 0..len).next(), Some(Ok(Field { number: 1, value: Value::Varint(v), at: 0 })));
            }
            // Cut short.
            let mut pos = 1;
            assert_eq!(varint_at(&buf[..len - 1], &mut pos), None);
        }
        let mut pos = 0;
        assert_eq!(varint_at(&[0xff; 16], &mut pos), None, "longer than 10 bytes");
    }

    #[test]
    fn varints_encode_like_protobuf() {
        let mut v = Vec::new();
        put_varint(&mut v, 300);
        assert_eq!(v, [0xac, 0x02]);
        put_len_field(&mut v, 2, b"hi");
        assert_eq!(Fields::new(&v, 2..v.len()).next(), Some(Ok(Field { number: 2, value: Value::Len(4..6), at: 2 })));
    }

    #[test]
    fn rejects_bad_wire_type() {
        let buf = [0x0f, 0x00];
        assert!(matches!(Fields::new(&buf, 0..2).next().unwrap(), Err(WireError::Malformed { .. })));
    }
}
