//! Columns packed as little-endian bytes: how the Trace Viewer's spans cross from the engine's
//! worker to the page, as one transferred buffer that the page copies and reads back, where JSON
//! would be parsed number by number on the page's thread.

/// What was wrong with packed bytes read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackError(pub &'static str);

impl std::fmt::Display for PackError {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "the engine's packed reply is damaged: {}", self.0)
    }
}

/// A number as it is packed.
pub trait Packed: Copy {
    const BYTES: usize;
    fn put(self, out: &mut Vec<u8>);
    fn get(bytes: &[u8]) -> Self;
}

macro_rules! packed {
    ($($t:ty),*) => {$(
        impl Packed for $t {
            const BYTES: usize = std::mem::size_of::<$t>();
            fn put(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            fn get(bytes: &[u8]) -> Self {
                <$t>::from_le_bytes(bytes.try_into().expect("a slice of BYTES"))
            }
        }
    )*};
}
packed!(u16, u32, u64, i64);

/// Appends `column`'s values to `out`.
pub fn put_column<T: Packed>(out: &mut Vec<u8>, column: &[T]) {
    column.iter().for_each(|v| v.put(out));
}

/// Reads packed values front to back.
pub struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Reader(bytes)
    }

    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.0.len()
    }

    pub fn value<T: Packed>(&mut self) -> Result<T, PackError> {
        Ok(self.column::<T>(1)?[0])
    }

    /// The next `n` values.
    pub fn column<T: Packed>(&mut self, n: usize) -> Result<Vec<T>, PackError> {
        let len = n.checked_mul(T::BYTES).filter(|&len| len <= self.0.len()).ok_or(PackError("cut short"))?;
        let (head, rest) = self.0.split_at(len);
        self.0 = rest;
        Ok(head.chunks_exact(T::BYTES).map(T::get).collect())
    }

    /// Fails unless every byte was read.
    pub fn finish(self) -> Result<(), PackError> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(PackError("bytes left over"))
        }
    }
}
