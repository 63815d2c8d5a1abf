//! Reads a pprof profile into aggregated stacks: the one place that touches pprof ids, so corrupt
//! ids are handled (skipped and noted) once for every analysis.

use super::{frames, Frame, Options};
use crate::decode::pprof::PprofFile;
use prost::Message;
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
    deep_stacks: usize,
}

/// Frames kept of one stack: the outermost [`OUTER_FRAMES`] and the innermost [`INNER_FRAMES`], with
/// one frame saying how many were left out between them. Python's own recursion limit is 1000, real
/// JAX stacks are tens of frames deep; the bound keeps a crafted 1,000,000-frame sample from making a
/// million-level tree (recursion in every consumer) and from multiplying its names into memory.
pub const MAX_STACK_FRAMES: usize = OUTER_FRAMES + 1 + INNER_FRAMES;
const OUTER_FRAMES: usize = 256;
const INNER_FRAMES: usize = 255;
/// Longest function or file name kept in a frame (real ones are well under this).
const MAX_NAME_BYTES: usize = 512;
/// Frames are copies of the file's names, and one name can be shared by every frame of every sample:
/// reading stops (with a note) once the frames read would take more than this many bytes per byte of
/// the profile, plus [`FRAME_BUDGET_SLACK`]. Real profiles spell out 5–80 bytes of frames per byte
/// (their samples share stacks through location ids); the constant alone covers ~5,000 samples of
/// 50-frame stacks. A crafted file thus yields reports of at most a few hundred MB.
const FRAME_BUDGET_PER_BYTE: usize = 32;
const FRAME_BUDGET_SLACK: usize = 32 << 20;

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
    let budget = p.encoded_len().saturating_mul(FRAME_BUDGET_PER_BYTE).saturating_add(FRAME_BUDGET_SLACK);
    let (mut spent, mut stopped_at) = (0usize, None);
    for (i, s) in p.sample.iter().enumerate() {
        let label = |key: &str| s.label.iter().find(|l| profile.str(l.key) == key).map_or("", |l| profile.str(l.str)).to_string();
        let kind = label("kind");
        if options.kind.as_ref().is_some_and(|k| *k != kind) {
            continue;
        }
        // pprof lists locations leaf first, and a location's lines innermost (inlined callee) first.
        // A location without lines is one frame (its address). Count the frames first, so that only
        // the kept ones (see [`MAX_STACK_FRAMES`]) are made.
        let slots = |loc: &&crate::proto::pprof::Location| loc.line.len().max(1);
        let total: usize = s.location_id.iter().filter_map(|id| locations.get(id)).map(slots).sum();
        let omitted = total.saturating_sub(MAX_STACK_FRAMES);
        let in_outer_part = |k: usize| omitted > 0 && k >= total - OUTER_FRAMES;
        // Leaf-first: the innermost frames, then (if any are left out) the outermost ones.
        let (mut inner, mut outer) = (Vec::new(), Vec::new());
        let mut k = 0usize;
        for id in &s.location_id {
            let Some(loc) = locations.get(id) else {
                problems.missing_locations += 1;
                continue;
            };
            let n = slots(loc);
            if omitted > 0 && k >= INNER_FRAMES && !in_outer_part(k + n - 1) {
                k += n;
                continue;
            }
            // Whether frame `k` is kept, and on which side of the gap.
            let side = |k: usize| match (omitted == 0 || k < INNER_FRAMES, in_outer_part(k)) {
                (true, _) => Some(true),
                (false, true) => Some(false),
                (false, false) => None,
            };
            if loc.line.is_empty() {
                if let Some(is_inner) = side(k) {
                    let part = if is_inner { &mut inner } else { &mut outer };
                    part.push(Frame::new(&format!("0x{:x}", loc.address), "", 0));
                }
            }
            for (j, line) in loc.line.iter().enumerate() {
                let Some(is_inner) = side(k + j) else { continue };
                let part = if is_inner { &mut inner } else { &mut outer };
                match functions.get(&line.function_id) {
                    Some(f) => part.push(Frame::new(clip(profile.str(f.name)), clip(profile.str(f.filename)), line.line)),
                    None => problems.missing_functions += 1,
                }
            }
            k += n;
        }
        if omitted > 0 {
            problems.deep_stacks += 1;
            inner.push(Frame::new(&format!("… {omitted} frames left out …"), "", 0));
        }
        let mut stack = inner;
        stack.append(&mut outer);
        stack.reverse();
        spent = spent.saturating_add(stack.iter().map(|f| f.function.len() + f.file.len() + std::mem::size_of::<Frame>()).sum::<usize>());
        if spent > budget {
            stopped_at = Some(i);
            break;
        }
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
    note(problems.deep_stacks, &format!("stacks are deeper than {MAX_STACK_FRAMES} frames (their middle frames are left out)"));
    if let Some(i) = stopped_at {
        notes.push(format!(
            "only the first {i} of {} samples were read: their stacks repeat the profile's names so often that the rest would not fit in memory",
            p.sample.len()
        ));
    }
    Snapshot { stacks, notes }
}

/// `s` cut to at most [`MAX_NAME_BYTES`], on a character boundary.
fn clip(s: &str) -> &str {
    let mut end = s.len().min(MAX_NAME_BYTES);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}
