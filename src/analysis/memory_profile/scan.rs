//! Reading the host plane: its memory events collected line by line ([`Collector`]) and XProf's step
//! grouping of every event, in one pass ([`scan_once`]) or grouping first and then the memory events on
//! two threads ([`scan_in_parallel`]), as [`super::Scan`] says.

use super::collector::Collector;
use super::pending::{Pending, Steps};
use crate::analysis::memory_events::{self, MemoryEvent};
use crate::analysis::step_groups;
use crate::decode::xplane::{Plane, StatValue, Want, XSpace};
use crate::decode::DecodeError;
use std::sync::atomic::{AtomicUsize, Ordering};

/// What a scan of the host plane gives.
pub(super) struct Scanned {
    /// Each memory ID's profile up to its steps, in order of appearance.
    pub(super) pending: Vec<Pending>,
    /// The memory events' steps (`None` when there were no memory events to give steps to).
    pub(super) steps: Option<Steps>,
    /// The lines holding memory events, in order ([`super::MemoryProfile::lines_with_events`]).
    pub(super) lines_with_events: Vec<usize>,
}

/// Each memory ID's profile up to its steps from every line's memory events, in line order, and the
/// lines that hold any.
fn assemble(lines: Vec<Collector>) -> (Vec<Pending>, Vec<usize>) {
    let with_events = lines.iter().enumerate().filter(|(_, c)| c.count > 0).map(|(i, _)| i).collect();
    (Pending::from_lines(lines), with_events)
}

pub(super) fn scan_once<'a>(space: &'a XSpace, plane: &'a Plane, reader: &memory_events::Reader<'a>) -> Result<Scanned, DecodeError> {
    let mut grouper = step_groups::Grouper::new(space, plane, |m| reader.wants(m));
    let mut lines = Vec::with_capacity(plane.lines.len());
    let mut event = MemoryEvent::default();
    let stats = plane.stat_selection(&step_groups::STATS);
    for (line_index, line) in plane.lines.iter().enumerate() {
        grouper.start_line(line);
        let mut collector = Collector::on_line(line);
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
    let (pending, lines_with_events) = assemble(lines);
    let steps = (!pending.is_empty()).then(|| Steps::Grouped(grouper.finish()));
    Ok(Scanned { pending, steps, lines_with_events })
}

/// The scan of a file grouped when it was recorded ([`step_groups::recorded_grouped`]): no grouping,
/// each memory event's step is its own `group_id` stat (XProf reads its integer field; a stat stored
/// otherwise reads 0, and the last of several wins).
pub(super) fn scan_recorded<'a>(space: &'a XSpace, plane: &'a Plane, reader: &memory_events::Reader<'a>) -> Result<Scanned, DecodeError> {
    let stats = plane.stat_selection(&[crate::decode::xplane::names::GROUP_ID]);
    let (mut lines, mut steps) = (Vec::with_capacity(plane.lines.len()), Vec::new());
    let mut event = MemoryEvent::default();
    for (line_index, line) in plane.lines.iter().enumerate() {
        let mut collector = Collector::on_line(line);
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
    let (pending, lines_with_events) = assemble(lines);
    Ok(Scanned { pending, steps: Some(Steps::Recorded(steps)), lines_with_events })
}

pub(super) fn scan_in_parallel<'a>(space: &'a XSpace, plane: &'a Plane, reader: &memory_events::Reader<'a>) -> Option<Scanned> {
    // The grouping first, whole: its pass and the graph it builds are the largest things the analysis
    // holds, and the memory events' snapshots the next, so they are never held together (on a long
    // trace, both at once came to most of the file's size again). Its pass skips the memory events'
    // own stats, which the memory pass checks ([`memory_events::Reader::watching`]).
    let groups = {
        let mut grouper = step_groups::Grouper::new(space, plane, |m| reader.wants(m));
        let stats = plane.stat_selection(&step_groups::STATS);
        let plain = grouper.plain_tracked();
        let want = |m| if plain.get(m) { Want::Header } else { Want::Stats };
        for line in &plane.lines {
            grouper.start_line(line);
            space.for_each_raw_event(line, &stats, want, |_, ev| grouper.push(ev)).ok()?;
        }
        grouper.finish()
    };
    // Then the memory events, the lines shared by two threads, the largest first: each thread takes
    // the next line left, so neither is left reading a long line alone at the end.
    let mut by_size: Vec<usize> = (0..plane.lines.len()).collect();
    by_size.sort_by_key(|&i| std::cmp::Reverse(plane.lines[i].range().len()));
    let next = AtomicUsize::new(0);
    let no_stats = plane.stat_selection(&[]);
    let read = || -> Result<Vec<(usize, Collector<'a>)>, DecodeError> {
        let mut read = Vec::new();
        while let Some(&line_index) = by_size.get(next.fetch_add(1, Ordering::Relaxed)) {
            let line = &plane.lines[line_index];
            let mut collector = Collector::expecting(line, line.event_count);
            let mut event = MemoryEvent::default();
            space.for_each_raw_event(
                line,
                &no_stats,
                |m| reader.wants(m),
                |event_index, ev| {
                    if reader.read_into(line, line_index, event_index, ev, &mut event)? {
                        collector.add(&event);
                    }
                    Ok(())
                },
            )?;
            collector.shrink_to_fit();
            read.push((line_index, collector));
        }
        Ok(read)
    };
    let (theirs, mine) = std::thread::scope(|scope| {
        let other = scope.spawn(read);
        let mine = read();
        (other.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)), mine)
    });
    let mut lines = theirs.ok()?;
    lines.extend(mine.ok()?);
    if reader.saw_unexpected() {
        return None;
    }
    lines.sort_by_key(|&(line_index, _)| line_index);
    let (pending, lines_with_events) = assemble(lines.into_iter().map(|(_, c)| c).collect());
    Some(Scanned { pending, steps: Some(Steps::Grouped(groups)), lines_with_events })
}
