//! One profile: totals by kind and device, per-function flat/cumulative values, the stacks, the tree.

use super::read::{self, StackKey, Values};
use super::{frames, tree, Frame, Options, TreeNode};
use crate::decode::pprof::PprofFile;
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProfileReport {
    pub total_bytes: i64,
    pub total_count: i64,
    /// By kind, then device (both ascending).
    pub by_kind: Vec<KindTotal>,
    /// Largest `flat_bytes` first, then `cum_bytes`, then by function and file.
    pub functions: Vec<FunctionRow>,
    /// One row per distinct stack key; largest `|bytes|` first, then `count`, then by key.
    pub stacks: Vec<StackRow>,
    pub tree: TreeNode,
    /// What could not be read (corrupt ids, missing values); empty for a sound file.
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KindTotal {
    pub kind: String,
    pub device: String,
    pub bytes: i64,
    pub count: i64,
}

/// A function (name and file) over all stacks: `flat` where it is the leaf (it allocated),
/// `cum` where it is anywhere on the stack (counted once per stack, even if recursive).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FunctionRow {
    pub function: String,
    pub file: String,
    pub library: bool,
    pub flat_bytes: i64,
    pub flat_count: i64,
    pub cum_bytes: i64,
    pub cum_count: i64,
}

/// A distinct stack with its summed values.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StackRow {
    pub kind: String,
    pub device: String,
    /// Root (outermost) first.
    pub frames: Vec<Frame>,
    /// See [`frames::site`].
    pub site: String,
    pub bytes: i64,
    pub count: i64,
}

impl StackRow {
    pub(super) fn new(key: &StackKey, values: Values) -> Self {
        StackRow {
            kind: key.kind.clone(),
            device: key.device.clone(),
            frames: key.frames.clone(),
            site: frames::site(&key.frames),
            bytes: values.bytes,
            count: values.count,
        }
    }
}

/// Analyzes one device memory profile.
pub fn analyze(profile: &PprofFile, options: &Options) -> ProfileReport {
    let snapshot = read::read(profile, options);
    let mut by_kind: BTreeMap<(&str, &str), Values> = BTreeMap::new();
    let mut functions: BTreeMap<(&str, &str), (bool, Values, Values)> = BTreeMap::new();
    for (key, &values) in &snapshot.stacks {
        by_kind.entry((&key.kind, &key.device)).or_default().add(values);
        let mut seen = BTreeSet::new();
        for f in &key.frames {
            if seen.insert((&f.function, &f.file)) {
                let entry = functions.entry((&f.function, &f.file)).or_insert((f.library, Values::default(), Values::default()));
                entry.2.add(values);
            }
        }
        if let Some(leaf) = key.frames.last() {
            if let Some(entry) = functions.get_mut(&(leaf.function.as_str(), leaf.file.as_str())) {
                entry.1.add(values);
            }
        }
    }
    let by_kind = by_kind
        .into_iter()
        .map(|((kind, device), v)| KindTotal { kind: kind.into(), device: device.into(), bytes: v.bytes, count: v.count })
        .collect();
    let mut functions: Vec<FunctionRow> = functions
        .into_iter()
        .map(|((function, file), (library, flat, cum))| FunctionRow {
            function: function.into(),
            file: file.into(),
            library,
            flat_bytes: flat.bytes,
            flat_count: flat.count,
            cum_bytes: cum.bytes,
            cum_count: cum.count,
        })
        .collect();
    functions.sort_by_key(|f| (Reverse(f.flat_bytes), Reverse(f.cum_bytes)));
    let mut stacks: Vec<StackRow> = snapshot.stacks.iter().map(|(k, &v)| StackRow::new(k, v)).collect();
    stacks.sort_by_key(|s| (Reverse(s.bytes.unsigned_abs()), Reverse(s.count.unsigned_abs())));
    let total = snapshot.total();
    ProfileReport {
        total_bytes: total.bytes,
        total_count: total.count,
        by_kind,
        functions,
        stacks,
        tree: tree::build(snapshot.stacks.iter().map(|(k, &v)| (k, v))),
        notes: snapshot.notes,
    }
}
