//! A TPU's duty cycle (XProf's `DutyCycleTracker` and `DutyCycleCombiner`): the time some core of a
//! chip runs an op, and the time it does not, within the span of the chip's programs.
//!
//! Per core, the span runs from the first to the last event of its op and module lines; the busy time
//! is the union of its op events, less those that wait on the host (infeed, outfeed, host send and
//! receive) or only hold other ops (a megacore fusion). Cores of one chip (by the `core_details`
//! stat's local chip id) are unioned, busy spans and span alike; a core without chip details counts
//! as a chip of its own. Busy and idle time add up over chips.

use crate::decode::wire::{Field, Fields, Value};
use crate::decode::xplane::names::{HLO_CATEGORY, SPARSE_CORE_MODULES_LINE, SPARSE_CORE_OPS_LINE, XLA_MODULES_LINE, XLA_OPS_LINE};
use crate::decode::xplane::{Plane, StatValue, XSpace};
use crate::decode::DecodeError;
use std::collections::{BTreeMap, HashMap};

/// HLO categories of ops during which the core waits (XProf's `IsOffDutyOp`).
const OFF_DUTY_CATEGORIES: &[&str] =
    &["infeed", "outfeed", "host send", "host send-done", "host recv", "host recv-done", "megacore fusion"];

/// Busy and idle time of the chips, ps.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DutyCycle {
    pub busy_ps: u64,
    pub idle_ps: u64,
}

/// One core's or chip's span and busy intervals.
#[derive(Debug, Default)]
struct Tracker {
    span: Option<(u64, u64)>,
    busy: Vec<(u64, u64)>,
}

impl Tracker {
    fn add(&mut self, begin_ps: u64, end_ps: u64, busy: bool) {
        let (b, e) = self.span.unwrap_or((begin_ps, end_ps));
        self.span = Some((b.min(begin_ps), e.max(end_ps)));
        if busy {
            self.busy.push((begin_ps, end_ps));
        }
    }

    fn union(&mut self, other: Tracker) {
        if let Some((b, e)) = other.span {
            self.add(b, e, false);
        }
        self.busy.extend(other.busy);
    }

    fn duty_cycle(mut self) -> DutyCycle {
        self.busy.sort_unstable();
        let (mut busy_ps, mut open) = (0u64, None::<(u64, u64)>);
        for (b, e) in self.busy {
            open = match open {
                Some((ob, oe)) if b <= oe => Some((ob, oe.max(e))),
                Some((ob, oe)) => {
                    busy_ps = busy_ps.saturating_add(oe - ob);
                    Some((b, e))
                }
                None => Some((b, e)),
            };
        }
        if let Some((ob, oe)) = open {
            busy_ps = busy_ps.saturating_add(oe - ob);
        }
        let span_ps = self.span.map_or(0, |(b, e)| e - b);
        DutyCycle { busy_ps, idle_ps: span_ps.saturating_sub(busy_ps) }
    }
}

/// The duty cycle of the TPU cores `planes`.
pub fn tpu_duty_cycle(space: &XSpace, planes: &[&Plane]) -> Result<DutyCycle, DecodeError> {
    let mut chips: BTreeMap<u64, Tracker> = BTreeMap::new();
    let mut total = DutyCycle::default();
    for plane in planes {
        let core = core_tracker(space, plane)?;
        match local_chip_id(plane) {
            Some(chip) => chips.entry(chip).or_default().union(core),
            None => {
                let d = core.duty_cycle();
                total.busy_ps = total.busy_ps.saturating_add(d.busy_ps);
                total.idle_ps = total.idle_ps.saturating_add(d.idle_ps);
            }
        }
    }
    for chip in chips.into_values() {
        let d = chip.duty_cycle();
        total.busy_ps = total.busy_ps.saturating_add(d.busy_ps);
        total.idle_ps = total.idle_ps.saturating_add(d.idle_ps);
    }
    Ok(total)
}

fn core_tracker(space: &XSpace, plane: &Plane) -> Result<Tracker, DecodeError> {
    let selection = plane.stat_selection(&[HLO_CATEGORY]);
    let mut tracker = Tracker::default();
    // Whether an event metadata's category is off duty, read once per metadata id (the core's
    // thousands of events share a few hundred).
    let mut off_duty_metadata: HashMap<i64, bool> = HashMap::new();
    for line in &plane.lines {
        let name = line.header.name.as_str();
        if ![XLA_OPS_LINE, XLA_MODULES_LINE, SPARSE_CORE_OPS_LINE, SPARSE_CORE_MODULES_LINE].contains(&name) {
            continue;
        }
        let line_start_ps = (line.header.timestamp_ns as u64).wrapping_mul(1000);
        space.for_each_raw_event(
            line,
            &selection,
            |_| true,
            |_, raw| {
                let begin_ps = line_start_ps.wrapping_add(raw.header.offset_ps as u64);
                let end_ps = begin_ps.saturating_add(raw.header.duration_ps as u64);
                let busy = match name {
                    XLA_OPS_LINE => !is_off_duty(plane, raw.header.metadata_id, raw.stats, &mut off_duty_metadata)?,
                    SPARSE_CORE_OPS_LINE => true,
                    _ => false,
                };
                tracker.add(begin_ps, end_ps, busy);
                Ok(())
            },
        )?;
    }
    Ok(tracker)
}

/// Whether an op event's HLO category (its own stat, else its metadata's, kept in `by_metadata`) is
/// off duty.
fn is_off_duty(
    plane: &Plane,
    metadata_id: i64,
    stats: &[crate::decode::xplane::RawStat<'_>],
    by_metadata: &mut HashMap<i64, bool>,
) -> Result<bool, DecodeError> {
    for s in stats {
        if let Some(StatValue::Str(c)) = plane.raw_stat_value(s)? {
            return Ok(OFF_DUTY_CATEGORIES.contains(&c.as_ref()));
        }
    }
    Ok(*by_metadata.entry(metadata_id).or_insert_with(|| metadata_off_duty(plane, metadata_id)))
}

/// Whether the HLO category of event metadata `metadata_id` is off duty.
fn metadata_off_duty(plane: &Plane, metadata_id: i64) -> bool {
    let Some(meta) = plane.meta.event_metadata.get(&metadata_id) else { return false };
    let category = meta
        .stats
        .iter()
        .filter(|s| plane.stat_name(s.metadata_id) == HLO_CATEGORY)
        .find_map(|s| plane.stat_value(s).and_then(|v| v.as_str().map(str::to_string)));
    category.is_some_and(|c| OFF_DUTY_CATEGORIES.contains(&c.as_str()))
}

/// The `local_chip_id` (field 4) of the plane's serialized `CoreDetails`; `None` without one or when it
/// does not parse.
fn local_chip_id(plane: &Plane) -> Option<u64> {
    let Some(StatValue::Bytes(b)) = plane.stat("core_details") else { return None };
    let mut chip = 0;
    for f in Fields::new(b, 0..b.len()) {
        if let Field { number: 4, value: Value::Varint(v), .. } = f.ok()? {
            chip = v;
        }
    }
    Some(chip)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::test_xspace::{self as tx, TestLine, TestPlane};
    use crate::proto::xplane as pb;
    use pb::x_stat::Value as V;

    /// Event metadata: 1 a fusion, 2 an infeed (off duty), 3 a module. Stats: 8 `hlo_category`,
    /// 9 `core_details`.
    fn core(name: &str, chip: Option<u64>, ops: Vec<pb::XEvent>, modules: Vec<pb::XEvent>) -> TestPlane {
        let mut event_metadata = tx::event_metadata(&[(1, "fusion.1"), (2, "infeed.1"), (3, "jit_f")]);
        for (id, category) in [(1, "loop fusion"), (2, "infeed")] {
            event_metadata.get_mut(&id).unwrap().stats = vec![tx::stat(8, V::StrValue(category.into()))];
        }
        let stats = chip
            .map(|c| {
                let mut details = Vec::new();
                crate::decode::wire::put_varint(&mut details, 4 << 3);
                crate::decode::wire::put_varint(&mut details, c);
                vec![tx::stat(9, V::BytesValue(details.into()))]
            })
            .unwrap_or_default();
        let meta = pb::XPlane {
            name: name.into(),
            event_metadata,
            stat_metadata: tx::stat_metadata(&[(8, "hlo_category"), (9, "core_details")]),
            stats,
            ..Default::default()
        };
        let line = |id, name: &str, events| TestLine { header: pb::XLine { id, name: name.into(), ..Default::default() }, events };
        TestPlane { meta, lines: vec![line(1, XLA_MODULES_LINE, modules), line(2, XLA_OPS_LINE, ops)] }
    }

    fn duty(planes: &[TestPlane]) -> DutyCycle {
        let s = tx::index(planes);
        let refs: Vec<&Plane> = s.planes.iter().collect();
        tpu_duty_cycle(&s, &refs).unwrap()
    }

    #[test]
    fn off_duty_ops_are_idle_within_the_modules_span() {
        let ops = vec![tx::event(1, 10, 20, vec![]), tx::event(1, 20, 20, vec![]), tx::event(2, 60, 30, vec![])];
        // Span 0..100 (the module); busy 10..40 (overlapping fusions once); the infeed is idle.
        assert_eq!(duty(&[core("/device:TPU:0", None, ops, vec![tx::event(3, 0, 100, vec![])])]), DutyCycle { busy_ps: 30, idle_ps: 70 });
    }

    #[test]
    fn cores_of_one_chip_are_unioned_and_chips_add_up() {
        let module = |b, d| vec![tx::event(3, b, d, vec![])];
        let planes = [
            core("/device:TPU:0", Some(0), vec![tx::event(1, 10, 20, vec![])], module(0, 50)),
            core("/device:TPU:1", Some(0), vec![tx::event(1, 20, 20, vec![])], module(20, 60)),
            core("/device:TPU:2", Some(1), vec![tx::event(1, 0, 5, vec![])], module(0, 10)),
        ];
        // Chip 0: span 0..80, busy 10..40; chip 1: span 0..10, busy 0..5.
        assert_eq!(duty(&planes), DutyCycle { busy_ps: 30 + 5, idle_ps: 50 + 5 });
    }
}
