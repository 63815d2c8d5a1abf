//! Reads a pprof profile into aggregated stacks: the one place that touches pprof ids, so corrupt
//! ids are handled (skipped and noted) once for every analysis.

use super::{frames, Frame, Options};
use crate::decode::pprof::PprofFile;
use std::collections::{BTreeMap, HashMap};

/// Identity of a stack across samples and files.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct StackKey {
    /// The `kind` label (`buffer`, `executable`); "" when absent.
    pub kind: String,
    /// The `device` label (`cpu:0`, `cuda:0`); "" when absent (executables have none).
    pub device: String,
    /// Root (outermost frame) first.
    pub frames: Vec<Frame>,
}

/// Summed sample values. Signed, because a diff subtracts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Values {
    pub bytes: i64,
    pub count: i64,
}

impl Values {
    pub fn add(&mut self, other: Values) {
        self.bytes = self.bytes.saturating_add(other.bytes);
        self.count = self.count.saturating_add(other.count);
    }

    pub fn sub(self, other: Values) -> Values {
        Values { bytes: self.bytes.saturating_sub(other.bytes), count: self.count.saturating_sub(other.count) }
    }

    pub fn is_zero(self) -> bool {
        self.bytes == 0 && self.count == 0
    }
}

/// A profile's samples aggregated by stack, plus what could not be read.
pub(super) struct Snapshot {
    pub stacks: BTreeMap<StackKey, Values>,
    pub notes: Vec<String>,
}

impl Snapshot {
    pub fn total(&self) -> Values {
        self.stacks.values().fold(Values::default(), |mut t, &v| {
            t.add(v);
            t
        })
    }
}

/// Problems met while reading, counted so a corrupt file yields one note per kind of problem.
#[derive(Default)]
struct Problems {
    missing_locations: usize,
    missing_functions: usize,
    missing_values: usize,
}

/// Aggregates `profile`'s samples by [`StackKey`]. Values come from the column whose unit is
/// `bytes` and the one whose unit is `count` (JAX: `space/bytes`, `allocations/count`); without a
/// count column each sample counts as one. A sample with a missing value reads it as 0.
pub(super) fn read(profile: &PprofFile, options: &Options) -> Snapshot {
    let p = &profile.proto;
    let functions: HashMap<u64, _> = p.function.iter().rev().map(|f| (f.id, f)).collect();
    let locations: HashMap<u64, _> = p.location.iter().rev().map(|l| (l.id, l)).collect();
    let bytes_column = profile.bytes_column();
    let count_column = p.sample_type.iter().position(|t| profile.str(t.unit) == "count");
    let mut problems = Problems::default();
    let mut stacks: BTreeMap<StackKey, Values> = BTreeMap::new();
    for s in &p.sample {
        let label = |key: &str| {
            s.label.iter().find(|l| profile.str(l.key) == key).map_or("", |l| profile.str(l.str)).to_string()
        };
        let kind = label("kind");
        if options.kind.as_ref().is_some_and(|k| *k != kind) {
            continue;
        }
        // pprof lists locations leaf first, and a location's lines innermost (inlined callee) first.
        let mut stack = Vec::new();
        for id in &s.location_id {
            let Some(loc) = locations.get(id) else {
                problems.missing_locations += 1;
                continue;
            };
            if loc.line.is_empty() {
                stack.push(Frame::new(&format!("0x{:x}", loc.address), "", 0));
            }
            for line in &loc.line {
                match functions.get(&line.function_id) {
                    Some(f) => stack.push(Frame::new(profile.str(f.name), profile.str(f.filename), line.line)),
                    None => problems.missing_functions += 1,
                }
            }
        }
        stack.reverse();
        if options.fold_library_frames {
            stack = frames::fold(stack);
        }
        let mut value = |column: Option<usize>, default: i64| match column {
            None => default,
            Some(c) => s.value.get(c).copied().unwrap_or_else(|| {
                problems.missing_values += 1;
                0
            }),
        };
        let values = Values { bytes: value(bytes_column, 0), count: value(count_column, 1) };
        stacks.entry(StackKey { kind, device: label("device"), frames: stack }).or_default().add(values);
    }
    let mut notes = Vec::new();
    if bytes_column.is_none() {
        notes.push("the profile has no sample type in bytes; all sizes read as 0".to_string());
    }
    let mut note = |n: usize, what: &str| {
        if n > 0 {
            notes.push(format!("{n} {what}"));
        }
    };
    note(problems.missing_locations, "stack entries name a location id that does not exist (frames skipped)");
    note(problems.missing_functions, "frames name a function id that does not exist (frames skipped)");
    note(problems.missing_values, "sample values are missing (read as 0)");
    Snapshot { stacks, notes }
}
