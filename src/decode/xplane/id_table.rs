//! Values by metadata id, for the lookups a scan makes per event or stat.

use crate::fast_hash::FastMap;

/// Values by metadata id, looked up once per event or stat over millions of them: a vector indexed by
/// id when the ids are small (profilers number metadata 1, 2, 3, ...), else a map. An id not given
/// reads as `T::default()`.
#[derive(Debug, Clone)]
pub enum IdTable<T> {
    Dense(Vec<T>),
    Sparse(FastMap<i64, T>),
}

impl IdTable<bool> {
    /// Whether any id is picked.
    pub fn any(&self) -> bool {
        match self {
            IdTable::Dense(v) => v.iter().any(|&b| b),
            IdTable::Sparse(m) => m.values().any(|&b| b),
        }
    }
}

impl<T: Copy + Default> IdTable<T> {
    /// From (id, value) pairs; a repeated id keeps its last value.
    pub fn new(entries: impl IntoIterator<Item = (i64, T)>) -> Self {
        let entries: Vec<(i64, T)> = entries.into_iter().collect();
        let dense_len = entries.len().saturating_mul(4).saturating_add(1024);
        if entries.iter().all(|&(id, _)| usize::try_from(id).is_ok_and(|i| i < dense_len)) {
            let len = entries.iter().map(|&(id, _)| id as usize + 1).max().unwrap_or(0);
            let mut v = vec![T::default(); len];
            for (id, x) in entries {
                v[id as usize] = x;
            }
            IdTable::Dense(v)
        } else {
            IdTable::Sparse(entries.into_iter().collect())
        }
    }

    #[inline(always)]
    pub fn get(&self, id: i64) -> T {
        match self {
            IdTable::Dense(v) => usize::try_from(id).ok().and_then(|i| v.get(i)).copied().unwrap_or_default(),
            IdTable::Sparse(m) => m.get(&id).copied().unwrap_or_default(),
        }
    }
}
