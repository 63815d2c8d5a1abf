//! Reading the host plane: its memory events collected line by line ([`Collector`]) while XProf's step
//! grouping walks every event, in one pass ([`scan_once`]) or on two threads ([`scan_in_parallel`]), as
//! [`super::Scan`] says.

use super::claims::{Claims, Work};
use super::collector::Collector;
use super::pending::{Pending, Steps};
use crate::analysis::memory_events::{self, MemoryEvent};
use crate::analysis::step_groups;
use crate::decode::xplane::{EventAt, Plane, RawEvent, StatValue, Want, XSpace};
use crate::decode::DecodeError;
use std::sync::{Mutex, OnceLock};

/// Each memory ID's profile up to its steps (in order of appearance), and the memory events' steps
/// (`None` when there were no memory events to give steps to).
pub(super) type Scanned = (Vec<Pending>, Option<Steps>);

pub(super) fn scan_once<'a>(space: &'a XSpace, plane: &'a Plane, reader: &memory_events::Reader<'a>) -> Result<Scanned, DecodeError> {
    let mut grouper = step_groups::Grouper::new(space, plane, |m| reader.wants(m));
    let mut lines = Vec::with_capacity(plane.lines.len());
    let mut event = MemoryEvent::default();
    let stats = plane.stat_selection(&step_groups::STATS);
    for (line_index, line) in plane.lines.iter().enumerate() {
        grouper.start_line(line);
        let mut collector = Collector::default();
        space.for_each_raw_event(
            line,
            &stats,
            |_| true,
            |event_index, ev| {
                grouper.push(ev)?;
                if reader.read_into(line, line_index, event_index, ev, &mut event)? {
                    collector.add(&event);
                }
                Ok(())
            },
        )?;
        lines.push(collector);
    }
    let pending = Pending::from_lines(lines);
    let groups = (!pending.is_empty()).then(|| Steps::Grouped(grouper.finish()));
    Ok((pending, groups))
}

/// The scan of a file grouped when it was recorded ([`step_groups::recorded_grouped`]): no grouping,
/// each memory event's step is its own `group_id` stat (XProf reads its integer field; a stat stored
/// otherwise reads 0, and the last of several wins).
pub(super) fn scan_recorded<'a>(space: &'a XSpace, plane: &'a Plane, reader: &memory_events::Reader<'a>) -> Result<Scanned, DecodeError> {
    let stats = plane.stat_selection(&[step_groups::GROUP_ID_STAT]);
    let (mut lines, mut steps) = (Vec::with_capacity(plane.lines.len()), Vec::new());
    let mut event = MemoryEvent::default();
    for (line_index, line) in plane.lines.iter().enumerate() {
        let mut collector = Collector::default();
        space.for_each_raw_event(
            line,
            &stats,
            |m| reader.wants(m),
            |event_index, ev| {
                if reader.read_into(line, line_index, event_index, ev, &mut event)? {
                    collector.add(&event);
                    let last = ev.stats.last().map(|s| match s.number() {
                        Some(StatValue::Int(v)) => v,
                        _ => 0,
                    });
                    steps.push(last);
                }
                Ok(())
            },
        )?;
        lines.push(collector);
    }
    Ok((Pending::from_lines(lines), Some(Steps::Recorded(steps))))
}

pub(super) fn scan_in_parallel<'a>(space: &'a XSpace, plane: &'a Plane, reader: &memory_events::Reader<'a>) -> Option<Scanned> {
    // Where each line's memory events are, noted by the grouping pass as it goes: a line read after
    // that is not walked again, only its memory events are read. This thread reads the noted lines
    // in file order, behind the grouping pass, and walks the largest line left when none is. Once
    // the grouping pass is through, both threads read what is left in stretches of a line's memory
    // events ([`Claims::split`]). So the work shares itself out, whichever pass is the longer on the
    // trace at hand, and neither thread is left reading a long line alone at the end.
    let noted: Vec<OnceLock<Vec<EventAt>>> = plane.lines.iter().map(|_| OnceLock::new()).collect();
    let claims = Mutex::new(Claims::new(plane));
    let claim = |f: &dyn Fn(&mut Claims) -> Option<Work>| claims.lock().ok().and_then(|mut c| f(&mut c));
    let no_stats = plane.stat_selection(&[]);
    // A stretch's events are collected as if it were a line of its own: stretches of a line, in
    // order, make up the line (ranks, summary, strings and time order all follow file order).
    let read = |(line_index, stretch): Work| {
        let line = &plane.lines[line_index];
        let noted = noted[line_index].get().map(|events| (events, stretch.unwrap_or(0..events.len())));
        // A line walked here has at most as many memory events as events.
        let expected = noted.as_ref().map_or(line.event_count, |(_, stretch)| stretch.len());
        let mut collector = Collector::expecting(expected);
        let mut event = MemoryEvent::default();
        let add = |event_index, ev: &RawEvent<'a, '_>| {
            if reader.read_into(line, line_index, event_index, ev, &mut event)? {
                collector.add(&event);
            }
            Ok(())
        };
        let start = match noted {
            Some((events, stretch)) => {
                space.for_each_event_at(line, &events[stretch.clone()], add)?;
                stretch.start
            }
            None => {
                space.for_each_raw_event(line, &no_stats, |m| reader.wants(m), add)?;
                0
            }
        };
        collector.shrink_to_fit();
        Ok::<_, DecodeError>(((line_index, start), collector))
    };
    let (noted, claims) = (&noted, &claims);
    std::thread::scope(|scope| {
        let (lines_read, lines_to_merge) = std::sync::mpsc::channel();
        let grouping = scope.spawn(move || {
            let mut grouper = step_groups::Grouper::new(space, plane, |m| reader.wants(m));
            let stats = plane.stat_selection(&step_groups::STATS);
            let plain = grouper.plain_tracked();
            let want = |m| if plain.get(m) { Want::Header } else { Want::Stats };
            for (line_index, line) in plane.lines.iter().enumerate() {
                grouper.start_line(line);
                // Not for a line the other thread is already reading.
                let note = claims.lock().is_ok_and(|c| !c.taken[line_index]);
                let mut events = Vec::new();
                space.for_each_raw_event(line, &stats, want, |event_index, ev| {
                    if note && reader.wants(ev.header.metadata_id) {
                        events.push(ev.at(event_index));
                    }
                    grouper.push(ev)
                })?;
                let _ = noted[line_index].set(events);
            }
            if let Ok(mut c) = claims.lock() {
                c.split(|line| noted[line].get().map_or(0, Vec::len));
            }
            let mine: Vec<_> = std::iter::from_fn(|| claim(&Claims::stretch)).map(read).collect::<Result<_, _>>()?;
            // The other thread merges the lines while this one finishes the grouping.
            let _ = lines_read.send(mine);
            Ok::<_, DecodeError>(grouper.finish())
        });
        let next = |c: &mut Claims| c.next(noted);
        let memory: Result<Vec<_>, DecodeError> = std::iter::from_fn(|| claim(&next)).map(read).collect();
        // The work that needs no steps is done while the grouping thread may still be running.
        let pending = lines_to_merge.recv().ok().zip(memory.ok()).filter(|_| !reader.saw_unexpected()).map(|(theirs, mut lines)| {
            lines.extend(theirs);
            lines.sort_by_key(|&(at, _)| at);
            Pending::from_lines(lines.into_iter().map(|(_, c)| c).collect())
        });
        let groups = grouping.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)).ok()?;
        Some((pending?, Some(Steps::Grouped(groups))))
    })
}
