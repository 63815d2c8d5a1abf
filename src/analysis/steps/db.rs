//! From step events to steps: non-overlapping time by type within each step's span
//! (`ToNonOverlappedEvents`, `ConvertStepEventsToStepDb`).

use super::events::{Span, StepEvents};
use super::{EventType, PrecisionStats, Step};
use std::collections::BTreeMap;

/// More steps than this and the first and last are dropped (XProf's `kDropIncomplteteStepThreshold`).
const DROP_EDGE_STEPS_ABOVE: usize = 5;

/// The steps, by group id, how many there were before the edge steps were dropped, and the device
/// compute time by precision of every group's events (XProf counts them all, steps left out included).
/// `has_device`: the events are a device's, whose steps must have device compute (else host compute).
pub fn steps(events: BTreeMap<i64, StepEvents>, has_device: bool) -> (Vec<Step>, usize, PrecisionStats) {
    let mut precision = PrecisionStats::default();
    let mut steps = Vec::new();
    for (group_id, mut e) in events {
        e.events = non_overlapped(&e.events);
        precision.add(&e.events);
        steps.extend(step(group_id, e, has_device));
    }
    let found = steps.len();
    if found > DROP_EDGE_STEPS_ABOVE {
        steps.pop();
        steps.remove(0);
    }
    (steps, found, precision)
}

impl PrecisionStats {
    fn add(&mut self, events: &[(EventType, Span)]) {
        for (t, s) in events {
            match t {
                EventType::DeviceCompute16 => self.compute_16bit_ps += s.duration_ps(),
                EventType::DeviceCompute32 => self.compute_32bit_ps += s.duration_ps(),
                _ => {}
            }
        }
    }
}

/// One step of non-overlapping events `e`, or `None` when it has no marker with a duration or no
/// compute (device compute with `has_device`, else host compute).
fn step(group_id: i64, e: StepEvents, has_device: bool) -> Option<Step> {
    // The longest marker (the first of the longest).
    let mut span = Span { begin_ps: 0, end_ps: 0 };
    for m in &e.markers {
        if m.duration_ps() > span.duration_ps() {
            span = *m;
        }
    }
    let mut type_ps: Vec<(EventType, u64)> = Vec::new();
    let mut covered_ps = 0u64;
    for &(t, s) in &e.events {
        let overlap = (s.end_ps.min(span.end_ps) - s.begin_ps.max(span.begin_ps)).max(0) as u64;
        add(&mut type_ps, t, overlap);
        covered_ps += overlap;
    }
    if covered_ps < span.duration_ps() {
        add(&mut type_ps, EventType::Unknown, span.duration_ps() - covered_ps);
    }
    let computes = |t: EventType| {
        if has_device {
            matches!(t, EventType::DeviceCompute16 | EventType::DeviceCompute32)
        } else {
            t == EventType::HostCompute
        }
    };
    if span.duration_ps() == 0 || !type_ps.iter().any(|(t, _)| computes(*t)) {
        return None;
    }
    type_ps.sort_unstable_by_key(|(t, _)| *t);
    let name = e.name.unwrap_or_else(|| group_id.to_string());
    Some(Step { group_id, name, begin_ps: span.begin_ps, duration_ps: span.duration_ps(), type_ps })
}

fn add(type_ps: &mut Vec<(EventType, u64)>, t: EventType, ps: u64) {
    match type_ps.iter_mut().find(|(x, _)| *x == t) {
        Some((_, v)) => *v += ps,
        None => type_ps.push((t, ps)),
    }
}

/// XProf's non-overlapping of typed spans: every stretch between two consecutive boundaries (starts
/// and ends, by time; at one time ends first, then higher types first) is labelled with the highest
/// type active, or unknown. Kept as XProf does it, quirks included: a type's count may go below zero
/// where an empty event ends before it starts.
fn non_overlapped(events: &[(EventType, Span)]) -> Vec<(EventType, Span)> {
    // (time, is start, type): sorted by time, ends before starts, higher types first.
    let mut bounds: Vec<(i64, bool, EventType)> = Vec::with_capacity(events.len() * 2);
    for &(t, s) in events {
        bounds.push((s.begin_ps, true, t));
        bounds.push((s.end_ps, false, t));
    }
    bounds.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)).then(b.2.cmp(&a.2)));
    let mut count = [0i64; EventType::ALL.len()];
    let index = |t: EventType| EventType::ALL.iter().position(|&x| x == t).unwrap_or(0);
    let mut top = EventType::Unknown;
    let mut out = Vec::with_capacity(bounds.len().saturating_sub(1));
    for w in bounds.windows(2) {
        let (_, is_start, t) = w[0];
        if is_start {
            count[index(t)] += 1;
            top = top.max(t);
        } else {
            count[index(t)] -= 1;
            if t == top && count[index(t)] == 0 {
                top = EventType::ALL[..index(t)].iter().rev().copied().find(|&x| count[index(x)] > 0).unwrap_or(EventType::Unknown);
            }
        }
        out.push((top, Span { begin_ps: w[0].0, end_ps: w[1].0 }));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use EventType::*;

    fn span(begin_ps: i64, end_ps: i64) -> Span {
        Span { begin_ps, end_ps }
    }

    fn step_events(marker: Option<Span>, events: &[(EventType, Span)]) -> StepEvents {
        StepEvents { markers: marker.into_iter().collect(), events: events.to_vec(), name: None }
    }

    #[test]
    fn overlapping_events_count_once_for_the_highest_type_and_gaps_are_unknown() {
        let mut e =
            step_events(Some(span(0, 100)), &[(HostCompute, span(0, 60)), (HostWaitInput, span(50, 70)), (HostCompute, span(90, 120))]);
        e.events = non_overlapped(&e.events);
        let s = step(7, e, false).expect("a step");
        assert_eq!((s.name.as_str(), s.begin_ps, s.duration_ps), ("7", 0, 100));
        assert_eq!(s.type_ps, vec![(Unknown, 20), (HostCompute, 60), (HostWaitInput, 20)]);
    }

    #[test]
    fn steps_without_a_marker_or_host_compute_are_left_out() {
        assert!(step(1, step_events(None, &[(HostCompute, span(0, 10))]), false).is_none());
        assert!(step(1, step_events(Some(span(0, 10)), &[(HostWaitInput, span(0, 10))]), false).is_none());
        assert!(step(1, step_events(Some(span(0, 10)), &[(HostCompute, span(0, 10))]), true).is_none());
        assert!(step(1, step_events(Some(span(0, 10)), &[(DeviceCompute16, span(0, 10))]), true).is_some());
        assert!(step(1, step_events(Some(span(5, 5)), &[(HostCompute, span(0, 10))]), false).is_none());
    }

    #[test]
    fn first_and_last_dropped_only_above_five_steps() {
        let events = |n: i64| -> BTreeMap<i64, StepEvents> {
            (0..n).map(|g| (g, step_events(Some(span(g * 10, g * 10 + 10)), &[(HostCompute, span(g * 10, g * 10 + 5))]))).collect()
        };
        let (five, found, _) = steps(events(5), false);
        assert_eq!((five.len(), found), (5, 5));
        let (six, found, _) = steps(events(6), false);
        assert_eq!((six.iter().map(|s| s.group_id).collect::<Vec<_>>(), found), (vec![1, 2, 3, 4], 6));
        let (one, _, _) = steps(events(1), false);
        assert_eq!(one.len(), 1);
    }
}
