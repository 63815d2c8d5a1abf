//! Two profiles, the way `pprof --diff_base BASE NEW` compares them: BASE's samples are subtracted
//! from NEW's, stack by stack; stacks that cancel out are dropped (pprof drops all-zero samples when
//! merging), so what remains is what grew or shrank.

use super::read::{self, StackKey, Values};
use super::{frames, tree, Frame, Options, TreeNode};
use crate::decode::pprof::PprofFile;
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiffReport {
    pub base_total_bytes: i64,
    pub new_total_bytes: i64,
    pub delta_bytes: i64,
    pub base_total_count: i64,
    pub new_total_count: i64,
    pub delta_count: i64,
    /// Stacks that changed: largest growth first, shrinkage last (`delta_bytes` descending), then
    /// by `delta_count` descending, then by key.
    pub stacks: Vec<DiffRow>,
    /// The tree of the deltas (NEW minus BASE), for a diff flame graph.
    pub tree: TreeNode,
    /// Reading problems, prefixed `base:` or `new:`.
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiffRow {
    pub kind: String,
    pub device: String,
    /// Root (outermost) first.
    pub frames: Vec<Frame>,
    pub site: String,
    pub base_bytes: i64,
    pub new_bytes: i64,
    pub delta_bytes: i64,
    pub base_count: i64,
    pub new_count: i64,
    pub delta_count: i64,
}

/// Compares `new` against `base`.
pub fn diff(base: &PprofFile, new: &PprofFile, options: &Options) -> DiffReport {
    let base = read::read(base, options);
    let new = read::read(new, options);
    let mut pairs: BTreeMap<&StackKey, (Values, Values)> = BTreeMap::new();
    for (k, &v) in &base.stacks {
        pairs.entry(k).or_default().0 = v;
    }
    for (k, &v) in &new.stacks {
        pairs.entry(k).or_default().1 = v;
    }
    let (base_total, new_total) = (base.total(), new.total());
    let changed: Vec<(&StackKey, Values, Values)> =
        pairs.into_iter().map(|(k, (b, n))| (k, b, n)).filter(|(_, b, n)| !n.sub(*b).is_zero()).collect();
    let mut stacks: Vec<DiffRow> = changed
        .iter()
        .map(|&(key, b, n)| DiffRow {
            kind: key.kind.clone(),
            device: key.device.clone(),
            frames: key.frames.clone(),
            site: frames::site(&key.frames),
            base_bytes: b.bytes,
            new_bytes: n.bytes,
            delta_bytes: n.sub(b).bytes,
            base_count: b.count,
            new_count: n.count,
            delta_count: n.sub(b).count,
        })
        .collect();
    stacks.sort_by_key(|r| (Reverse(r.delta_bytes), Reverse(r.delta_count)));
    let notes = base.notes.iter().map(|n| format!("base: {n}")).chain(new.notes.iter().map(|n| format!("new: {n}"))).collect();
    DiffReport {
        base_total_bytes: base_total.bytes,
        new_total_bytes: new_total.bytes,
        delta_bytes: new_total.sub(base_total).bytes,
        base_total_count: base_total.count,
        new_total_count: new_total.count,
        delta_count: new_total.sub(base_total).count,
        stacks,
        tree: tree::build(changed.iter().map(|&(k, b, n)| (k, n.sub(b)))),
        notes,
    }
}
