//! The thread-pool regions XProf adds to each line (`ThreadpoolLineMutator` in tsl's
//! `preprocess_xplane.h`): a `ThreadpoolListener::StartRegion` event that carries a consumer id (`_c`)
//! opens a region; every later `ThreadpoolListener::StopRegion` on the same line closes one, from the
//! last such start to the stop. The new `ThreadpoolListener::Region` event carries `_c` = the region id
//! and `_ct` = [`THREADPOOL_CONTEXT_TYPE`], so step grouping links it, as a consumer, to the producer
//! that scheduled the work; the trace viewer shows it as an event of the line.
//!
//! XProf's rule, kept exactly:
//! - a start without a `_c` stat of its own (metadata stats do not count) is skipped and leaves the
//!   previous start and id in place;
//! - the start is never cleared, so several stops after one start each close a region from that start;
//! - a stop before any start, or while the start's timestamp is 0, closes nothing;
//! - the region id is the `_c` value read as an integer (`int64` or `uint64`; 0 for any other kind).
//!
//! XProf looks the event names up as one metadata entry each; here every metadata entry with the name
//! counts (they differ only in a file that names two entries alike).

use crate::decode::xplane::{IdTable, Line, Plane, RawEvent, StatValue, XSpace};
use crate::decode::DecodeError;

/// The event that opens a region.
pub const START_REGION: &str = "ThreadpoolListener::StartRegion";
/// The event that closes one.
pub const STOP_REGION: &str = "ThreadpoolListener::StopRegion";
/// The name of the event XProf adds for each region.
pub const REGION: &str = "ThreadpoolListener::Region";
/// The stat a start carries its region id in, and the added event's consumer id (`_c`).
pub const CONSUMER_ID: &str = "_c";
/// The added event's consumer type stat (`_ct`).
pub const CONSUMER_TYPE: &str = "_ct";
/// `ContextType::kThreadpoolEvent`: the value of the added event's `_ct`.
pub const THREADPOOL_CONTEXT_TYPE: i64 = 15;

/// One added `ThreadpoolListener::Region` event, in the time of its line's events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    /// Absolute start (`line.timestamp_ns * 1000 + offset_ps` of the start event).
    pub start_ps: i64,
    /// Stop's timestamp minus the start's (XProf does not check the order).
    pub duration_ps: i64,
    /// The `_c` stat of the start event: the added event's `_c`.
    pub region_id: i64,
}

impl Region {
    /// The stats XProf gives the added event, in its order: `_c` then `_ct`.
    pub fn stats(&self) -> [(&'static str, i64); 2] {
        [(CONSUMER_ID, self.region_id), (CONSUMER_TYPE, THREADPOOL_CONTEXT_TYPE)]
    }
}

/// What an event is to the region finder, by its metadata id.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum Role {
    #[default]
    Other,
    Start,
    Stop,
}

/// Finds the regions of one plane's lines from their events, fed in file order, so that a caller who
/// walks the lines anyway (step grouping, the trace viewer's store) finds them in the same pass: the
/// events it must be fed are those [`RegionFinder::wants`] picks, with the stats [`RegionFinder::stats`]
/// selects.
pub struct RegionFinder {
    roles: IdTable<Role>,
    consumer_ids: IdTable<bool>,
    base_ps: i64,
    open: Option<(i64, i64)>,
    regions: Vec<Region>,
}

impl RegionFinder {
    /// A finder for `plane`; `None` when the plane names no start or no stop event (XProf then leaves
    /// the plane as it is).
    pub fn new(plane: &Plane) -> Option<Self> {
        let ids = |name| plane.event_metadata_ids(name);
        let (starts, stops) = (ids(START_REGION), ids(STOP_REGION));
        if starts.is_empty() || stops.is_empty() {
            return None;
        }
        let roles = IdTable::new(starts.into_iter().map(|id| (id, Role::Start)).chain(stops.into_iter().map(|id| (id, Role::Stop))));
        Some(RegionFinder { roles, consumer_ids: plane.stat_selection(&[CONSUMER_ID]), base_ps: 0, open: None, regions: Vec::new() })
    }

    /// Whether events of metadata `metadata_id` must be fed to [`RegionFinder::push`].
    pub fn wants(&self, metadata_id: i64) -> bool {
        self.roles.get(metadata_id) != Role::Other
    }

    /// The stats [`RegionFinder::push`] reads (those named `_c`): a scan feeding it selects them.
    pub fn stats(&self) -> &IdTable<bool> {
        &self.consumer_ids
    }

    /// Starts the next line: regions never span lines.
    pub fn start_line(&mut self, line: &Line) {
        self.base_ps = line.header.timestamp_ns.saturating_mul(1000);
        self.open = None;
    }

    /// Feeds the next event of the current line (others than those [`RegionFinder::wants`] are ignored).
    pub fn push(&mut self, plane: &Plane, event: &RawEvent<'_, '_>) -> Result<(), DecodeError> {
        let at_ps = self.base_ps.saturating_add(event.header.offset_ps);
        match self.roles.get(event.header.metadata_id) {
            Role::Other => {}
            Role::Start => {
                // XProf takes the event's first `_c` stat, whatever its value.
                if let Some(stat) = event.stats.iter().find(|s| self.consumer_ids.get(s.metadata_id)) {
                    let region_id = match plane.raw_stat_value(stat)? {
                        Some(StatValue::Int(v)) => v,
                        Some(StatValue::Uint(v)) => v as i64,
                        _ => 0,
                    };
                    self.open = Some((at_ps, region_id));
                }
            }
            Role::Stop => {
                if let Some((start_ps, region_id)) = self.open.filter(|&(start_ps, _)| start_ps != 0) {
                    self.regions.push(Region { start_ps, duration_ps: at_ps.wrapping_sub(start_ps), region_id });
                }
            }
        }
        Ok(())
    }

    /// The regions closed since the last call (those of the current line, if called at its end), in the
    /// order of their stops.
    pub fn take(&mut self) -> Vec<Region> {
        std::mem::take(&mut self.regions)
    }
}

/// The regions XProf adds to each line of `plane` (one list per line, in line order; all empty when
/// the plane has no region markers), reading only the start and stop events.
pub fn plane_regions(space: &XSpace, plane: &Plane) -> Result<Vec<Vec<Region>>, DecodeError> {
    let Some(mut finder) = RegionFinder::new(plane) else { return Ok(vec![Vec::new(); plane.lines.len()]) };
    let stats = finder.stats().clone();
    let wanted = IdTable::new(plane.meta.event_metadata.keys().map(|&id| (id, finder.wants(id))));
    plane
        .lines
        .iter()
        .map(|line| {
            finder.start_line(line);
            space.for_each_raw_event(line, &stats, |id| wanted.get(id), |_, ev| finder.push(plane, ev))?;
            Ok(finder.take())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::test_xspace::{self as tx, TestLine, TestPlane};
    use crate::proto::xplane as pb;
    use pb::x_stat::Value as V;

    /// A plane with start (1), stop (2) and other (3) events and the stat `_c` (id 7), one line per
    /// list of events, each line at 1 ns.
    fn space(lines: Vec<Vec<pb::XEvent>>) -> XSpace {
        let meta = pb::XPlane {
            name: "/host:CPU".into(),
            event_metadata: tx::event_metadata(&[(1, START_REGION), (2, STOP_REGION), (3, "work")]),
            stat_metadata: tx::stat_metadata(&[(7, CONSUMER_ID)]),
            ..Default::default()
        };
        let lines = lines
            .into_iter()
            .enumerate()
            .map(|(i, events)| TestLine { header: pb::XLine { id: i as i64, timestamp_ns: 1, ..Default::default() }, events })
            .collect();
        tx::index(&[TestPlane { meta, lines }])
    }

    fn ev(metadata_id: i64, offset_ps: i64, stats: Vec<pb::XStat>) -> pb::XEvent {
        tx::event(metadata_id, offset_ps, 0, stats)
    }

    #[test]
    fn every_stop_closes_a_region_from_the_last_start_with_an_id() {
        let s = space(vec![
            vec![
                ev(2, 5, vec![]), // a stop before any start: nothing
                ev(1, 10, vec![tx::stat(7, V::Int64Value(42))]),
                ev(3, 12, vec![]),
                ev(1, 15, vec![]), // no `_c`: skipped, 10 / 42 stay
                ev(2, 30, vec![]),
                ev(2, 40, vec![]), // the start is not cleared
                ev(1, 50, vec![tx::stat(7, V::Uint64Value(9))]),
                ev(2, 70, vec![]),
            ],
            vec![ev(2, 5, vec![])], // a new line starts with no region open
        ]);
        let r = plane_regions(&s, &s.planes[0]).unwrap();
        let region = |start_ps, duration_ps, region_id| Region { start_ps, duration_ps, region_id };
        assert_eq!(r[0], vec![region(1010, 20, 42), region(1010, 30, 42), region(1050, 20, 9)]);
        assert!(r[1].is_empty());
        assert_eq!(r[0][0].stats(), [("_c", 42), ("_ct", 15)]);
    }

    #[test]
    fn a_start_at_time_zero_opens_nothing() {
        let mut s = space(vec![vec![ev(1, 0, vec![tx::stat(7, V::Int64Value(1))]), ev(2, 10, vec![])]]);
        s.planes[0].lines[0].header.timestamp_ns = 0;
        assert_eq!(plane_regions(&s, &s.planes[0]).unwrap(), vec![Vec::new()]);
    }

    #[test]
    fn a_plane_without_markers_has_no_regions() {
        let mut s = space(vec![vec![ev(2, 1, vec![]), ev(2, 2, vec![])]]);
        s.planes[0].meta.event_metadata.retain(|_, m| m.name != START_REGION);
        assert!(RegionFinder::new(&s.planes[0]).is_none());
        assert_eq!(plane_regions(&s, &s.planes[0]).unwrap(), vec![Vec::new()]);
    }
}
