//! The profile's string table: op names, regions, dtypes and shapes, each stored once.

use super::{dtype, StrId};
use crate::fast_hash::{FastMap, FxHasher};
use std::borrow::Cow;
use std::hash::{BuildHasher, BuildHasherDefault};

/// Gives each distinct string one [`StrId`], in order of first use (so the table is deterministic).
/// Dtype names have their own ids (a dtype name may also appear as, say, a shape: harmless).
pub(super) struct Interner<'a> {
    /// By a hash of the string: looked up once per new event string, and the match then checked
    /// against `strings` inline ([`same_bytes`]), where a map of the strings themselves compares
    /// keys through the C library's `memcmp`. A string whose hash another already has goes to
    /// `collided`.
    ids: FastMap<u64, StrId>,
    collided: FastMap<Box<str>, StrId>,
    dtypes: FastMap<i64, StrId>,
    /// `dtypes` for the small dtype numbers (TensorFlow's are below 128), looked up once per event:
    /// [`NO_ID`] until first met.
    small_dtypes: [StrId; 128],
    pub(super) strings: Vec<String>,
    /// Per field (op, region, shape), the string of the last event that borrowed it from the file, and
    /// its id. Events in a row often repeat them, and comparing with the copy in the file just read is
    /// cheaper than a table lookup, whose own copies a long scan keeps pushing out of the cache.
    recent: [Option<(&'a str, StrId)>; 3],
}

/// "No id yet" in [`Interner::small_dtypes`].
const NO_ID: StrId = StrId::MAX;

impl Default for Interner<'_> {
    fn default() -> Self {
        Interner {
            ids: FastMap::default(),
            collided: FastMap::default(),
            dtypes: FastMap::default(),
            small_dtypes: [NO_ID; 128],
            strings: Vec::new(),
            recent: [None; 3],
        }
    }
}

impl<'a> Interner<'a> {
    /// [`Interner::id`] of a string of field `field` (see [`Interner::recent`]). A `Cow`, not a `str`:
    /// only a string borrowed from the file lives long enough to be remembered.
    #[inline]
    #[allow(clippy::ptr_arg)]
    pub(super) fn field_id(&mut self, field: usize, s: &Cow<'a, str>) -> StrId {
        match (s, self.recent[field]) {
            (Cow::Borrowed(s), Some((last, id))) if same_bytes(last.as_bytes(), s.as_bytes()) => id,
            (Cow::Borrowed(s), _) => {
                let id = self.id(s);
                self.recent[field] = Some((s, id));
                id
            }
            (Cow::Owned(s), _) => self.id(s),
        }
    }

    pub(super) fn id(&mut self, s: &str) -> StrId {
        let hash = BuildHasherDefault::<FxHasher>::default().hash_one(s);
        match self.ids.get(&hash) {
            Some(&id) if same_bytes(self.strings[id as usize].as_bytes(), s.as_bytes()) => id,
            Some(_) => match self.collided.get(s) {
                Some(&id) => id,
                None => {
                    let id = self.push(s.to_string());
                    self.collided.insert(s.into(), id);
                    id
                }
            },
            None => {
                let id = self.push(s.to_string());
                self.ids.insert(hash, id);
                id
            }
        }
    }

    /// The id of a dtype's XProf name (names are made once per distinct dtype, not per event).
    #[inline]
    pub(super) fn dtype(&mut self, dtype: i64) -> StrId {
        let small = usize::try_from(dtype).ok().filter(|&d| d < self.small_dtypes.len());
        if let Some(&id) = small.map(|d| &self.small_dtypes[d]).filter(|&&id| id != NO_ID) {
            return id;
        }
        let id = match self.dtypes.get(&dtype) {
            Some(&id) => id,
            None => {
                let id = self.push(dtype::name(dtype));
                self.dtypes.insert(dtype, id);
                id
            }
        };
        if let Some(d) = small {
            self.small_dtypes[d] = id;
        }
        id
    }

    /// Adds the strings of `other` (another line's table) that are new, in its order; returns the id
    /// here of each of its ids.
    pub(super) fn merge(&mut self, other: Interner) -> Vec<StrId> {
        let mut dtype_of: Vec<Option<i64>> = vec![None; other.strings.len()];
        for (&dtype, &id) in &other.dtypes {
            dtype_of[id as usize] = Some(dtype);
        }
        other
            .strings
            .into_iter()
            .zip(dtype_of)
            .map(|(s, dtype)| match dtype {
                Some(d) => self.dtype(d),
                None => self.id(&s),
            })
            .collect()
    }

    fn push(&mut self, s: String) -> StrId {
        self.strings.push(s);
        (self.strings.len() - 1) as StrId
    }
}

/// `a == b`, word by word inline: op names and shapes are a few dozen bytes, for which a call to the
/// C library's `memcmp` costs more than the comparison.
#[inline(always)]
pub(super) fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let (mut x, mut y) = (a.chunks_exact(8), b.chunks_exact(8));
    let word = |c: &[u8]| u64::from_ne_bytes(c.try_into().expect("8 bytes"));
    (&mut x).zip(&mut y).all(|(p, q)| word(p) == word(q)) && x.remainder().iter().zip(y.remainder()).all(|(p, q)| p == q)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ids in order of first use, the same string always the same id, even when another string has
    /// its hash (forced here: a real collision of the keyed 64-bit hash cannot be picked).
    #[test]
    fn interner_ids_survive_hash_collisions() {
        let mut t = Interner::default();
        assert_eq!((t.id("conv"), t.id("relu"), t.id("conv")), (0, 1, 0));
        let hash_of_pool = BuildHasherDefault::<FxHasher>::default().hash_one("pool");
        t.ids.insert(hash_of_pool, 0); // "pool" now collides with "conv"
        assert_eq!((t.id("pool"), t.id("pool"), t.id("conv"), t.id("relu")), (2, 2, 0, 1));
        assert_eq!(t.strings, ["conv", "relu", "pool"]);
    }
}
