//! The steps of several hosts combined, as XProf combines them for a run's "all hosts"
//! (`StepIntersection` and `CombineStepDatabase`): each host's steps are aligned with the steps of the
//! host whose steps span the least time (the chief) by the offset under which their time spans overlap
//! most, only the steps every host has are kept, and step `i` of the run is step `i` of that stretch
//! on every host.
//!
//! What the tools read of a combined step then follows XProf's step table: its row (name, time, the
//! time of each type) is the first host's (XProf reads core 0 of the combined step, which is the first
//! host's), while the step time statistics take each step's time from its slowest host.

use super::{PrecisionStats, Step, StepDb};

/// A host's steps as placed against the chief's: the first step of each that match, and how many
/// follow in both (XProf's `StepsAlignment`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Alignment {
    first_own: usize,
    first_chief: usize,
    len: usize,
}

/// A step's time span as `[begin, end)` in ps; empty for a step of no duration.
fn span(s: &Step) -> (i64, i64) {
    (s.begin_ps, s.begin_ps.saturating_add(s.duration_ps as i64))
}

/// The time the steps of `steps` cover, from the first begin to the last end (0 without steps).
fn total_span_ps(steps: &[Step]) -> u64 {
    let spans = steps.iter().filter(|s| s.duration_ps > 0).map(span);
    let (min, max) = spans.fold((i64::MAX, i64::MIN), |(lo, hi), (b, e)| (lo.min(b), hi.max(e)));
    if min < max {
        (max - min) as u64
    } else {
        0
    }
}

/// How `own` lines up with `chief`: the offset `k = chief index − own index` with the largest total
/// overlap of the two sequences' spans, walked in step (XProf's `CalculateSimilarities`). Offsets are
/// tried 0, 1, …, then −1, −2, …; the first of the largest wins, so with no overlap at all both start at
/// their first step.
fn align(own: &[Step], chief: &[Step]) -> Alignment {
    if own.is_empty() || chief.is_empty() {
        return Alignment { first_own: 0, first_chief: 0, len: 0 };
    }
    let shift = own.len() - 1;
    let mut overlap = vec![0u64; own.len() + chief.len() - 1];
    let (mut i, mut j) = (0, 0);
    while i < own.len() && j < chief.len() {
        if own[i].duration_ps == 0 {
            i += 1;
            continue;
        }
        if chief[j].duration_ps == 0 {
            j += 1;
            continue;
        }
        let ((ob, oe), (cb, ce)) = (span(&own[i]), span(&chief[j]));
        let (start, end) = (ob.max(cb), oe.min(ce));
        if start < end {
            overlap[j + shift - i] += (end - start) as u64;
        }
        match oe.cmp(&ce) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                i += 1;
                j += 1;
            }
        }
    }
    let offsets = (0..chief.len() as i64).chain((1..own.len() as i64).map(|k| -k));
    let mut best: Option<(i64, u64)> = None;
    for k in offsets {
        let score = overlap[(k + shift as i64) as usize];
        if best.is_none_or(|(_, s)| score > s) {
            best = Some((k, score));
        }
    }
    let k = best.map_or(0, |(k, _)| k);
    let (first_own, first_chief) = if k >= 0 { (0, k as usize) } else { ((-k) as usize, 0) };
    Alignment { first_own, first_chief, len: (own.len() - first_own).min(chief.len() - first_chief) }
}

/// The steps of hosts `dbs` (in the run's host order, coordinators left out) combined into one step
/// db: see the module comment. One host's db is returned as it is; no host gives no steps.
pub fn combine(dbs: &[StepDb]) -> StepDb {
    match dbs {
        [] => return StepDb::default(),
        [one] => return one.clone(),
        _ => {}
    }
    let device_steps_unsupported = dbs.iter().any(|d| d.device_steps_unsupported);
    // The chief: the host whose steps span the least time (the first of equals).
    let Some(chief) = (0..dbs.len()).min_by_key(|&h| (total_span_ps(&dbs[h].steps), h)) else {
        return StepDb::default();
    };
    if dbs[chief].steps.is_empty() {
        return StepDb { device_steps_unsupported, ..StepDb::default() };
    }
    let alignments: Vec<Alignment> =
        dbs.iter()
            .enumerate()
            .map(|(h, db)| {
                if h == chief {
                    Alignment { first_own: 0, first_chief: 0, len: db.steps.len() }
                } else {
                    align(&db.steps, &dbs[chief].steps)
                }
            })
            .collect();
    let begin = alignments.iter().map(|a| a.first_chief).max().unwrap_or(0);
    let end = alignments.iter().map(|a| a.first_chief + a.len).min().unwrap_or(0);
    if begin > end {
        return StepDb { device_steps_unsupported, ..StepDb::default() };
    }
    let first_of = |h: usize| alignments[h].first_own + (begin - alignments[h].first_chief);
    let mut steps = Vec::with_capacity(end - begin);
    let mut slowest_host_step_ps = Vec::with_capacity(end - begin);
    for i in 0..end - begin {
        let mut step = dbs[0].steps[first_of(0) + i].clone();
        // XProf names a step without a name by its number, which is now its index in the run.
        if step.name == step.group_id.to_string() {
            step.name = i.to_string();
        }
        slowest_host_step_ps.push((0..dbs.len()).map(|h| dbs[h].steps[first_of(h) + i].duration_ps).max().unwrap_or(0));
        steps.push(step);
    }
    // XProf adds up the hosts' device compute by precision.
    let precision = dbs.iter().fold(PrecisionStats::default(), |acc, db| PrecisionStats {
        compute_16bit_ps: acc.compute_16bit_ps + db.precision.compute_16bit_ps,
        compute_32bit_ps: acc.compute_32bit_ps + db.precision.compute_32bit_ps,
    });
    StepDb { steps_found: steps.len(), steps, device_steps_unsupported, slowest_host_step_ps, precision }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn steps(spans: &[(i64, u64)]) -> StepDb {
        let steps: Vec<Step> = spans
            .iter()
            .enumerate()
            .map(|(i, &(begin_ps, duration_ps))| Step {
                group_id: i as i64,
                name: format!("train {i}"),
                begin_ps,
                duration_ps,
                type_ps: Vec::new(),
            })
            .collect();
        StepDb { steps_found: steps.len(), steps, ..StepDb::default() }
    }

    #[test]
    fn aligns_by_overlap_and_keeps_the_common_steps() {
        // Host 1's steps 1.. overlap host 0's steps 0..; host 0 spans less time, so it is the chief.
        let a = steps(&[(100, 100), (200, 100), (300, 100)]);
        let b = steps(&[(0, 100), (100, 110), (210, 100), (310, 100)]);
        let run = combine(&[a, b]);
        assert_eq!(run.steps.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["train 0", "train 1", "train 2"]);
        assert_eq!(run.slowest_host_step_ps, [110, 100, 100]);
    }

    #[test]
    fn without_overlap_steps_pair_from_the_first() {
        let a = steps(&[(0, 10), (10, 10)]);
        let b = steps(&[(1000, 50), (1050, 50), (1100, 50)]);
        let run = combine(&[a, b]);
        assert_eq!(run.steps.len(), 2);
        assert_eq!(run.slowest_host_step_ps, [50, 50]);
    }

    #[test]
    fn a_host_without_steps_leaves_none() {
        let run = combine(&[steps(&[(0, 10)]), steps(&[])]);
        assert!(run.steps.is_empty());
    }
}
