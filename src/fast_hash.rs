//! A fast hasher for the analyses' hot maps (allocator addresses, interned strings, metadata ids),
//! looked up once or more per event over millions of events: there the standard SipHash costs more
//! than the rest of the lookup. The mixing is FxHash's (rustc), with the final rotation that spreads
//! aligned addresses over the low bits, started from a per-process secret ([`set_key`]) so that a
//! crafted file cannot flood a map with colliding keys. No analysis depends on map iteration order.

use std::collections::HashMap;
use std::hash::{BuildHasher, BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};

/// A `HashMap` with [`FxHasher`].
pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

#[derive(Clone, Copy)]
pub struct FxHasher {
    hash: u64,
}

/// The hasher's starting state: a secret of this process. FxHash is a bijection of each key word, so
/// with a known start a crafted file can pick addresses whose hashes all share their low bits and
/// make every map operation scan all the others (100,000 such addresses took 16 s to insert, a
/// million would take half an hour). Mixing an unknown key in first leaves nothing to aim at. 0 means
/// "not set yet".
static KEY: AtomicU64 = AtomicU64::new(0);

/// Sets the secret start. The web worker calls this at start-up with the browser's randomness: wasm32
/// has no other source (std's `RandomState` is constant there). Natively it is drawn from the OS.
#[cfg(target_arch = "wasm32")]
pub fn set_key(key: u64) {
    KEY.store(key | 1, Ordering::Relaxed);
}

fn key() -> u64 {
    match KEY.load(Ordering::Relaxed) {
        0 => {
            let key = std::collections::hash_map::RandomState::new().hash_one(0x7469_6465_6d61_726bu64) | 1;
            // Another thread may have set it meanwhile: keep the first one.
            let _ = KEY.compare_exchange(0, key, Ordering::Relaxed, Ordering::Relaxed);
            KEY.load(Ordering::Relaxed)
        }
        key => key,
    }
}

impl Default for FxHasher {
    #[inline]
    fn default() -> Self {
        FxHasher { hash: key() }
    }
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

    /// Addresses crafted so that, with a zero start, every hash has the same low 40 bits.
    #[test]
    fn crafted_collisions_do_not_collide() {
        fn inverse(a: u64) -> u64 {
            let mut x = a;
            for _ in 0..6 {
                x = x.wrapping_mul(2u64.wrapping_sub(a.wrapping_mul(x)));
            }
            x
        }
        let inv = inverse(super::SEED);
        let keys: Vec<u64> = (1..=50_000u64).map(|i| (i << 40).rotate_right(26).wrapping_mul(inv)).collect();
        let start = std::time::Instant::now();
        let mut m: FastMap<u64, usize> = FastMap::default();
        for (k, &x) in keys.iter().enumerate() {
            m.insert(x, k);
        }
        assert_eq!(m.len(), keys.len());
        // Unkeyed, this took seconds (quadratic); keyed, milliseconds.
        assert!(start.elapsed() < std::time::Duration::from_millis(500), "{:?}", start.elapsed());
    }

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
