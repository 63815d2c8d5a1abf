//! A series of snapshots (e.g. `memory1.prof … memory9.prof` saved in a loop): each stack's bytes
//! per snapshot and how steadily it grows, ranked so the leak is on top.

use super::read::{self, StackKey, Values};
use super::{frames, Frame, Options};
use crate::decode::pprof::PprofFile;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeriesReport {
    /// The snapshots in series order (see [`order_by_number`]).
    pub snapshots: Vec<SnapshotSummary>,
    /// Whether that order came from the numbers in the file names (else: the order given).
    pub ordered_by_number: bool,
    /// Suspects first (largest [`Growth::score`] first), then the rest by their last bytes
    /// (largest first), then by key. Stacks that are zero in every snapshot are left out.
    pub stacks: Vec<SeriesStack>,
    /// How many of `stacks` (the first ones) are suspects.
    pub suspect_count: usize,
    /// Reading problems, prefixed by the snapshot's name.
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SnapshotSummary {
    pub name: String,
    pub total_bytes: i64,
    pub total_count: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeriesStack {
    pub kind: String,
    pub device: String,
    /// Root (outermost) first.
    pub frames: Vec<Frame>,
    pub site: String,
    /// One entry per snapshot, in series order (0 where the stack is absent).
    pub bytes: Vec<i64>,
    pub count: Vec<i64>,
    pub growth: Growth,
    pub suspect: bool,
    /// One line, e.g. `grew in 8 of 8 steps, +220,000 B/step on average (40,000 B → 1,800,000 B),
    /// allocated at normal ← anotherfunc ← b2_pprof_docs_leak.py:20`.
    pub explanation: String,
}

/// How a stack's bytes evolve over the series. A *step* is one snapshot to the next.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Growth {
    pub steps: usize,
    /// `bytes[k] - bytes[k-1]` for each step.
    pub deltas_bytes: Vec<i64>,
    /// Monotonicity: steps with a positive / negative delta.
    pub grew_steps: usize,
    pub shrank_steps: usize,
    /// Last minus first.
    pub net_growth_bytes: i64,
    /// `net_growth_bytes / steps`.
    pub mean_growth_bytes_per_step: f64,
    /// Least-squares slope of bytes against snapshot index.
    pub slope_bytes_per_step: f64,
    /// Coefficient of determination of that fit (0 when bytes or steps do not vary): near 1 means
    /// steady growth, not one jump.
    pub r_squared: f64,
    /// Ranking of suspects: `net_growth_bytes × grew_steps / steps`, so a stack that grows a lot
    /// *and* in most steps comes first; 0 for non-suspects.
    pub score: f64,
}

impl Growth {
    /// A stack is a leak suspect when it ended larger than it started and grew in more than half
    /// of the steps: one-off jumps and stacks that go up and down (a cache, a batch) are not.
    pub(crate) fn of(bytes: &[i64]) -> Growth {
        let steps = bytes.len().saturating_sub(1);
        let deltas_bytes: Vec<i64> = bytes.windows(2).map(|w| w[1].saturating_sub(w[0])).collect();
        let grew_steps = deltas_bytes.iter().filter(|d| **d > 0).count();
        let shrank_steps = deltas_bytes.iter().filter(|d| **d < 0).count();
        let net_growth_bytes = match (bytes.first(), bytes.last()) {
            (Some(first), Some(last)) => last.saturating_sub(*first),
            _ => 0,
        };
        let (slope_bytes_per_step, r_squared) = fit(bytes);
        let per_step = |x: f64| if steps == 0 { 0.0 } else { x / steps as f64 };
        let suspect = net_growth_bytes > 0 && 2 * grew_steps > steps;
        Growth {
            steps,
            deltas_bytes,
            grew_steps,
            shrank_steps,
            net_growth_bytes,
            mean_growth_bytes_per_step: per_step(net_growth_bytes as f64),
            slope_bytes_per_step,
            r_squared,
            score: if suspect { per_step(net_growth_bytes as f64 * grew_steps as f64) } else { 0.0 },
        }
    }

    pub(crate) fn is_suspect(&self) -> bool {
        self.score > 0.0
    }

    /// One line for people; `count` is mentioned when bytes stay constant but the number of
    /// samples does not (e.g. executables compiled again for each new shape, 0 B on CPU).
    fn explain(&self, bytes: &[i64], count: &[i64], site: &str) -> String {
        let ends = |v: &[i64]| (v.first().copied().unwrap_or(0), v.last().copied().unwrap_or(0));
        let ((first, last), (first_count, last_count)) = (ends(bytes), ends(count));
        if self.grew_steps == 0 && self.shrank_steps == 0 {
            let counts = if first_count == last_count { String::new() } else { format!(", count {first_count} → {last_count}") };
            return format!("constant at {} B{counts}, allocated at {site}", crate::units::signed_count(last, false));
        }
        let mut s = format!("grew in {} of {} steps", self.grew_steps, self.steps);
        if self.shrank_steps > 0 {
            s += &format!(", shrank in {}", self.shrank_steps);
        }
        format!(
            "{s}, {} B/step on average ({} B → {} B), allocated at {site}",
            crate::units::signed_count(self.mean_growth_bytes_per_step.round() as i64, true),
            crate::units::signed_count(first, false),
            crate::units::signed_count(last, false)
        )
    }
}

/// Least-squares line through `(k, bytes[k])`: slope and R².
fn fit(bytes: &[i64]) -> (f64, f64) {
    let n = bytes.len() as f64;
    if bytes.len() < 2 {
        return (0.0, 0.0);
    }
    let mean_x = (n - 1.0) / 2.0;
    let mean_y = bytes.iter().map(|&b| b as f64).sum::<f64>() / n;
    let (mut sxx, mut sxy, mut syy) = (0.0, 0.0, 0.0);
    for (k, &b) in bytes.iter().enumerate() {
        let (dx, dy) = (k as f64 - mean_x, b as f64 - mean_y);
        sxx += dx * dx;
        sxy += dx * dy;
        syy += dy * dy;
    }
    let r_squared = if syy > 0.0 { sxy * sxy / (sxx * syy) } else { 0.0 };
    (sxy / sxx, r_squared)
}

/// The series order of `names`: by the last number in each file name's stem (`memory10.prof` after
/// `memory9.prof`, which a name sort gets wrong), when every name has one and no two share it;
/// else the order given. Returns indices into `names` and whether numbers were used.
pub fn order_by_number(names: &[&str]) -> (Vec<usize>, bool) {
    let given: Vec<usize> = (0..names.len()).collect();
    let Some(numbers) = names.iter().map(|n| file_number(n)).collect::<Option<Vec<u64>>>() else {
        return (given, false);
    };
    if numbers.iter().collect::<BTreeSet<_>>().len() != numbers.len() {
        return (given, false);
    }
    let mut order = given;
    order.sort_by_key(|&i| numbers[i]);
    (order, true)
}

/// The last run of digits in the file name before its first `.`: `memory12.prof.gz` → 12.
fn file_number(name: &str) -> Option<u64> {
    let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
    let stem = base.split('.').next().unwrap_or(base);
    let end = stem.rfind(|c: char| c.is_ascii_digit())? + 1;
    let start = stem[..end].rfind(|c: char| !c.is_ascii_digit()).map_or(0, |i| i + 1);
    stem[start..end].parse().ok()
}

/// Follows each stack through `snapshots` (name, profile), ordered by [`order_by_number`].
pub fn series(snapshots: &[(&str, &PprofFile)], options: &Options) -> SeriesReport {
    let names: Vec<&str> = snapshots.iter().map(|(n, _)| *n).collect();
    let (order, ordered_by_number) = order_by_number(&names);
    let read: Vec<(&str, read::Snapshot)> = order.iter().map(|&i| (names[i], read::read(snapshots[i].1, options))).collect();
    let keys: BTreeSet<&StackKey> = read.iter().flat_map(|(_, s)| s.stacks.keys()).collect();
    let mut stacks: Vec<SeriesStack> = keys
        .into_iter()
        .filter_map(|key| {
            let values: Vec<Values> = read.iter().map(|(_, s)| s.stacks.get(key).copied().unwrap_or_default()).collect();
            if values.iter().all(|v| v.is_zero()) {
                return None;
            }
            let bytes: Vec<i64> = values.iter().map(|v| v.bytes).collect();
            let count: Vec<i64> = values.iter().map(|v| v.count).collect();
            let growth = Growth::of(&bytes);
            let site = frames::site(&key.frames);
            Some(SeriesStack {
                kind: key.kind.clone(),
                device: key.device.clone(),
                frames: key.frames.clone(),
                explanation: growth.explain(&bytes, &count, &site),
                site,
                count,
                suspect: growth.is_suspect(),
                growth,
                bytes,
            })
        })
        .collect();
    stacks.sort_by(|a, b| b.growth.score.total_cmp(&a.growth.score).then_with(|| last_abs_bytes(b).cmp(&last_abs_bytes(a))));
    let snapshots = read
        .iter()
        .map(|(name, s)| {
            let total = s.total();
            SnapshotSummary { name: name.to_string(), total_bytes: total.bytes, total_count: total.count }
        })
        .collect();
    let notes = read.iter().flat_map(|(name, s)| s.notes.iter().map(move |n| format!("{name}: {n}"))).collect();
    SeriesReport { snapshots, ordered_by_number, suspect_count: stacks.iter().filter(|s| s.suspect).count(), stacks, notes }
}

fn last_abs_bytes(s: &SeriesStack) -> u64 {
    s.bytes.last().map_or(0, |b| b.unsigned_abs())
}
