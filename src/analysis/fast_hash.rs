//! A fast, deterministic hasher for the analyses' hot maps (allocator addresses, interned strings,
//! metadata ids), looked up once or more per event over millions of events: there the standard
//! SipHash costs more than the rest of the lookup. The keys come from the user's own file, so hash
//! flooding is no concern (a crafted file could at worst slow down its own analysis). The mixing is
//! FxHash's (rustc), with the final rotation that spreads aligned addresses over the low bits.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A `HashMap` with [`FxHasher`].
pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

#[derive(Default, Clone, Copy)]
pub struct FxHasher {
    hash: u64,
}

const SEED: u64 = 0xf135_7aea_2e62_a9c5;

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut last = [0u8; 8];
            last[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(last));
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.hash.rotate_left(26)
    }
}

#[cfg(test)]
mod tests {
    use super::FastMap;

    #[test]
    fn behaves_as_a_map() {
        let mut m: FastMap<u64, usize> = FastMap::default();
        for i in 0..10_000u64 {
            m.insert(i * 256, i as usize);
        }
        assert_eq!(m.len(), 10_000);
        assert_eq!(m.get(&(42 * 256)), Some(&42));
        let mut s: FastMap<Box<str>, u32> = FastMap::default();
        s.insert("conv2d/Conv2D".into(), 1);
        assert_eq!(s.get("conv2d/Conv2D"), Some(&1));
        assert_eq!(s.get("conv2d/Conv2"), None);
    }
}
