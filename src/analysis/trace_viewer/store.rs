//! The trace viewer's event store: every shown event of a trace in columns, built once per file.
//!
//! Per event: start (ps), duration (ps; 4 bytes, the few events longer than 2^32 − 1 ps ≈ 4.3 ms kept
//! aside), name (an id into the interned names), nesting depth on its thread, and its place in its
//! thread's lines in file order, so that its stats are read from the file's bytes when asked for
//! ([`super::details`]) instead of being copied: 22 bytes an event, where the file takes 17–50. Events
//! are grouped by thread (processes and threads in XProf's order, [`super::layout`]) and sorted on each
//! thread by start, longer first on ties (XProf's track order). The thread-pool regions XProf adds
//! ([`crate::analysis::preprocess::threadpool`]) are events of their lines here too, and the lines
//! XProf derives ([`super::derived`], kept beside the columns) are threads of their own.

use super::derived::DerivedTimeline;
use super::event_text::PlaneText;
use super::layout::{self, Process};
use crate::analysis::preprocess::threadpool::{self, Region, RegionFinder};
use crate::decode::xplane::{IdTable, XSpace};
use crate::decode::DecodeError;
use crate::fast_hash::FastMap;
use std::ops::Range;

/// A duration too long (or negative) for the 4-byte column: look it up in [`TraceStore::long_durations`].
const LONG: u32 = u32::MAX;

/// Where an event's data lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// Event `index` of line `line` of plane `plane`.
    File { plane: usize, line: usize, index: u32 },
    /// A region XProf adds to that line.
    Region(Region),
    /// Event `index` of derived line `line` of plane `plane` ([`TraceStore::derived`]).
    Derived { plane: usize, line: usize, index: u32 },
    /// Event `index` of the columns the store was given ([`TraceStore::from_events`]: a Kineto
    /// trace's timeline).
    Given { index: u32 },
}

/// One line of a thread: its events then its added regions take consecutive places (from `first`) in
/// the thread's file order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Segment {
    plane: u32,
    line: u32,
    first: u32,
    events: u32,
    /// Index into [`TraceStore::regions`].
    regions: u32,
    /// `line` is a derived line of the plane (its index in [`super::derived::DerivedPlane::lines`]).
    derived: bool,
}

/// One thread of the store: its place in the layout and its events' range in the columns.
#[derive(Debug, Clone, PartialEq)]
pub struct StoreThread {
    pub pid: u32,
    pub tid: u32,
    pub name: String,
    /// The thread's events in the columns, sorted by start.
    pub events: Range<u32>,
    /// The longest event's duration: an event that overlaps a time starts at most this long before it.
    pub max_duration_ps: i64,
    /// Deepest nesting level + 1 (0 for a thread without events).
    pub depth_count: u16,
    segments: Vec<Segment>,
}

/// One process of the store.
#[derive(Debug, Clone, PartialEq)]
pub struct StoreProcess {
    pub pid: u32,
    pub name: String,
    /// Its threads in [`TraceStore::threads`]; they are contiguous.
    pub threads: Range<usize>,
}

/// Every shown event of a trace, in columns (see the module doc).
#[derive(Debug, Default)]
pub struct TraceStore {
    pub processes: Vec<StoreProcess>,
    pub threads: Vec<StoreThread>,
    names: Vec<String>,
    start_ps: Vec<i64>,
    /// [`LONG`] for a duration kept in `long_durations`.
    duration_ps: Vec<u32>,
    long_durations: FastMap<u32, i64>,
    name: Vec<u32>,
    depth: Vec<u16>,
    /// Place in the thread's file order ([`Segment`]).
    place: Vec<u32>,
    /// The regions added to each line with any.
    regions: Vec<Vec<Region>>,
    derived: DerivedTimeline,
    /// Built by [`TraceStore::from_events`]: `place` holds each event's index in the given columns.
    given: bool,
}

/// A thread given to [`TraceStore::from_events`]: its events by index into the given columns.
#[derive(Debug, Clone, PartialEq)]
pub struct GivenThread {
    pub tid: u32,
    pub name: String,
    pub events: Vec<u32>,
}

/// A process given to [`TraceStore::from_events`], its threads in display order.
#[derive(Debug, Clone, PartialEq)]
pub struct GivenProcess {
    pub pid: u32,
    pub name: String,
    pub threads: Vec<GivenThread>,
}

/// The columns while they are being built: durations at full width until the events are sorted.
#[derive(Default)]
struct Building {
    start_ps: Vec<i64>,
    duration_ps: Vec<i64>,
    name: Vec<u32>,
    place: Vec<u32>,
}

impl TraceStore {
    /// Reads every shown event of `space` once.
    pub fn build(space: &XSpace) -> Result<Self, DecodeError> {
        let derived = DerivedTimeline::build(space)?;
        let layout = layout::processes(space, &derived);
        let mut store = TraceStore::default();
        let total: usize = layout
            .iter()
            .flat_map(|p| p.threads.iter().flat_map(move |t| t.lines.iter().map(move |&l| space.planes[p.plane].lines[l].event_count)))
            .sum::<usize>()
            + derived.planes.iter().flat_map(|p| &p.lines).map(|l| l.events.len()).sum::<usize>();
        store.derived = derived;
        let mut b = Building {
            start_ps: Vec::with_capacity(total),
            duration_ps: Vec::with_capacity(total),
            name: Vec::with_capacity(total),
            place: Vec::with_capacity(total),
        };
        let mut interned: FastMap<String, u32> = FastMap::default();
        for process in &layout {
            store.add_process(space, process, &mut interned, &mut b)?;
        }
        store.finish(b);
        Ok(store)
    }

    /// A store of events given as columns (start, duration, name id into `names`), shown on the
    /// threads of `processes` (in display order); [`TraceStore::source`] answers an event's index in
    /// the columns ([`Source::Given`]). Each thread's events are sorted as [`TraceStore::build`] sorts
    /// them.
    pub fn from_events(processes: &[GivenProcess], names: Vec<String>, start_ps: &[i64], duration_ps: &[i64], name: &[u32]) -> Self {
        let total = processes.iter().flat_map(|p| &p.threads).map(|t| t.events.len()).sum();
        let mut b = Building {
            start_ps: Vec::with_capacity(total),
            duration_ps: Vec::with_capacity(total),
            name: Vec::with_capacity(total),
            place: Vec::with_capacity(total),
        };
        let mut store = TraceStore { names, given: true, ..TraceStore::default() };
        for p in processes {
            let first_thread = store.threads.len();
            for t in &p.threads {
                let begin = b.start_ps.len();
                for &e in &t.events {
                    let i = e as usize;
                    b.start_ps.push(start_ps[i]);
                    b.duration_ps.push(duration_ps[i]);
                    b.name.push(name[i]);
                    b.place.push(e);
                }
                let end = b.start_ps.len();
                b.sort_thread(begin..end);
                store.threads.push(StoreThread {
                    pid: p.pid,
                    tid: t.tid,
                    name: t.name.clone(),
                    events: begin as u32..end as u32,
                    max_duration_ps: b.duration_ps[begin..end].iter().copied().max().unwrap_or(0).max(0),
                    depth_count: 0,
                    segments: Vec::new(),
                });
            }
            store.processes.push(StoreProcess { pid: p.pid, name: p.name.clone(), threads: first_thread..store.threads.len() });
        }
        store.finish(b);
        store
    }

    /// Takes the built columns: nesting depths, durations at 4 bytes, spare capacity dropped.
    fn finish(&mut self, b: Building) {
        let Building { mut start_ps, duration_ps, mut name, mut place } = b;
        self.depth = self.threads.iter().flat_map(|t| nesting_depths(&start_ps, &duration_ps, t.events.clone())).collect();
        for t in &mut self.threads {
            t.depth_count = self.depth[t.events.start as usize..t.events.end as usize].iter().max().map_or(0, |&d| d + 1);
        }
        self.duration_ps = duration_ps
            .iter()
            .enumerate()
            .map(|(i, &d)| match u32::try_from(d).ok().filter(|&d| d != LONG) {
                Some(d) => d,
                None => {
                    self.long_durations.insert(i as u32, d);
                    LONG
                }
            })
            .collect();
        start_ps.shrink_to_fit();
        name.shrink_to_fit();
        place.shrink_to_fit();
        (self.start_ps, self.name, self.place) = (start_ps, name, place);
    }

    fn add_process(
        &mut self,
        space: &XSpace,
        process: &Process,
        interned: &mut FastMap<String, u32>,
        b: &mut Building,
    ) -> Result<(), DecodeError> {
        let plane = &space.planes[process.plane];
        let text = PlaneText::new(plane);
        let mut finder = RegionFinder::new(plane);
        let mut select = text.step_name_stats().clone();
        if let Some(f) = &finder {
            select = IdTable::new(plane.meta.stat_metadata.keys().map(|&id| (id, select.get(id) || f.stats().get(id))));
        }
        let mut intern = |names: &mut Vec<String>, s: String| -> u32 {
            *interned.entry(s).or_insert_with_key(|k| {
                names.push(k.clone());
                names.len() as u32 - 1
            })
        };
        // The name of each metadata's events, interned once (0: no metadata).
        let metadata_names = IdTable::new(
            plane.meta.event_metadata.keys().map(|&id| (id, intern(&mut self.names, text.metadata_name(id)) + 1)).collect::<Vec<_>>(),
        );
        let region_name = intern(&mut self.names, threadpool::REGION.to_string());
        let empty_name = intern(&mut self.names, String::new());
        let first_thread = self.threads.len();
        for thread in &process.threads {
            let begin = b.start_ps.len();
            let mut segments = Vec::with_capacity(thread.lines.len());
            for &l in &thread.lines {
                let line = &plane.lines[l];
                let first = (b.start_ps.len() - begin) as u32;
                if let Some(f) = finder.as_mut() {
                    f.start_line(line);
                }
                let base_ps = line.header.timestamp_ns.saturating_mul(1000);
                let names = &mut self.names;
                let mut events = 0u32;
                // The line's events grouping names after their step (`train 3`), by index.
                let mut step_names =
                    self.derived.plane(process.plane).map(|d| d.step_names_of_line(l)).unwrap_or_default().iter().peekable();
                space.for_each_raw_event(
                    line,
                    &select,
                    |id| !text.is_internal(id),
                    |index, ev| {
                        let h = &ev.header;
                        if let Some(f) = finder.as_mut() {
                            f.push(plane, ev)?;
                        }
                        let name = if let Some((_, step)) = step_names.next_if(|((_, i), _)| *i == index) {
                            intern(names, step.clone())
                        } else if ev.stats.iter().any(|s| text.step_name_stats().get(s.metadata_id)) {
                            intern(names, text.name(h.metadata_id, ev.stats)?)
                        } else {
                            match metadata_names.get(h.metadata_id) {
                                0 => empty_name,
                                n => n - 1,
                            }
                        };
                        b.start_ps.push(base_ps.saturating_add(h.offset_ps));
                        b.duration_ps.push(h.duration_ps);
                        b.name.push(name);
                        b.place.push(first.checked_add(u32::try_from(index).map_err(|_| too_many())?).ok_or_else(too_many)?);
                        events += 1;
                        Ok(())
                    },
                )?;
                // Places count every event of the line, shown or not (an internal one keeps its place).
                let events = u32::try_from(line.event_count).map_err(|_| too_many())?.max(events);
                let regions = finder.as_mut().map(|f| f.take()).unwrap_or_default();
                for (k, r) in regions.iter().enumerate() {
                    b.start_ps.push(r.start_ps);
                    b.duration_ps.push(r.duration_ps);
                    b.name.push(region_name);
                    b.place.push(first.checked_add(events).and_then(|p| p.checked_add(k as u32)).ok_or_else(too_many)?);
                }
                segments.push(Segment {
                    plane: process.plane as u32,
                    line: l as u32,
                    first,
                    events,
                    regions: self.regions.len() as u32,
                    derived: false,
                });
                self.regions.push(regions);
            }
            let derived_lines = self.derived.plane(process.plane).map(|d| (d, d.lines.as_slice()));
            for &k in &thread.derived {
                let Some((d, lines)) = derived_lines else { break };
                let first = (b.start_ps.len() - begin) as u32;
                for (i, e) in lines[k].events.iter().enumerate() {
                    b.start_ps.push(e.start_ps);
                    b.duration_ps.push(e.duration_ps);
                    b.name.push(intern(&mut self.names, d.text(k, i).map(|t| t.name).unwrap_or_default()));
                    b.place.push(first.checked_add(i as u32).ok_or_else(too_many)?);
                }
                let events = u32::try_from(lines[k].events.len()).map_err(|_| too_many())?;
                let regions = self.regions.len() as u32;
                segments.push(Segment { plane: process.plane as u32, line: k as u32, first, events, regions, derived: true });
                self.regions.push(Vec::new());
            }
            let end = b.start_ps.len();
            let events = u32::try_from(begin).map_err(|_| too_many())?..u32::try_from(end).map_err(|_| too_many())?;
            b.sort_thread(begin..end);
            let max_duration_ps = b.duration_ps[begin..end].iter().copied().max().unwrap_or(0).max(0);
            self.threads.push(StoreThread {
                pid: process.pid,
                tid: thread.tid,
                name: thread.name.clone(),
                events,
                max_duration_ps,
                depth_count: 0,
                segments,
            });
        }
        self.processes.push(StoreProcess { pid: process.pid, name: process.name.clone(), threads: first_thread..self.threads.len() });
        Ok(())
    }

    pub fn event_count(&self) -> usize {
        self.start_ps.len()
    }

    pub fn names(&self) -> &[String] {
        &self.names
    }

    pub fn name_of(&self, event: u32) -> &str {
        &self.names[self.name[event as usize] as usize]
    }

    pub fn start_ps(&self) -> &[i64] {
        &self.start_ps
    }

    /// The duration of event `event` (an index into the columns).
    #[inline]
    pub fn duration_ps(&self, event: usize) -> i64 {
        match self.duration_ps[event] {
            LONG => self.long_durations.get(&(event as u32)).copied().unwrap_or(i64::from(LONG)),
            d => i64::from(d),
        }
    }

    /// The interned name id of each event.
    pub fn name_ids(&self) -> &[u32] {
        &self.name
    }

    pub fn depth(&self) -> &[u16] {
        &self.depth
    }

    /// The thread an event belongs to.
    pub fn thread_of(&self, event: u32) -> Option<&StoreThread> {
        let i = self.threads.partition_point(|t| t.events.end <= event);
        self.threads.get(i).filter(|t| t.events.contains(&event))
    }

    /// Where an event's data lies; `None` for an index out of range.
    pub fn source(&self, event: u32) -> Option<Source> {
        let thread = self.thread_of(event)?;
        let place = self.place[event as usize];
        if self.given {
            return Some(Source::Given { index: place });
        }
        let seg = thread.segments[thread.segments.partition_point(|s| s.first <= place).checked_sub(1)?];
        let offset = place - seg.first;
        Some(if seg.derived {
            Source::Derived { plane: seg.plane as usize, line: seg.line as usize, index: offset }
        } else if offset < seg.events {
            Source::File { plane: seg.plane as usize, line: seg.line as usize, index: offset }
        } else {
            Source::Region(*self.regions[seg.regions as usize].get((offset - seg.events) as usize)?)
        })
    }

    /// Bytes the store holds (columns, names, tables), for the memory budget.
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        let columns = self.start_ps.capacity() * size_of::<i64>()
            + self.duration_ps.capacity() * size_of::<u32>()
            + self.long_durations.capacity() * (size_of::<(u32, i64)>() + 1)
            + self.name.capacity() * size_of::<u32>()
            + self.depth.capacity() * size_of::<u16>()
            + self.place.capacity() * size_of::<u32>();
        let names: usize = self.names.iter().map(|n| n.capacity() + size_of::<String>()).sum();
        let threads: usize =
            self.threads.iter().map(|t| t.name.capacity() + t.segments.capacity() * size_of::<Segment>() + size_of::<StoreThread>()).sum();
        let regions: usize = self.regions.iter().map(|r| r.capacity() * size_of::<Region>() + size_of::<Vec<Region>>()).sum();
        columns + names + threads + regions + self.derived.heap_bytes()
    }

    /// The lines XProf derives, whose events the store holds ([`Source::Derived`]).
    pub fn derived(&self) -> &DerivedTimeline {
        &self.derived
    }
}

impl Building {
    /// Sorts one thread's events by start, longer first on ties, file order after that.
    fn sort_thread(&mut self, range: Range<usize>) {
        let (s, d) = (&self.start_ps[range.clone()], &self.duration_ps[range.clone()]);
        if s.windows(2).zip(d.windows(2)).all(|(s, d)| (s[0], -d[0]) <= (s[1], -d[1])) {
            return;
        }
        let mut order: Vec<u32> = (0..range.len() as u32).collect();
        order.sort_by_key(|&i| (s[i as usize], std::cmp::Reverse(d[i as usize])));
        fn permute<T: Copy>(col: &mut [T], order: &[u32]) {
            let sorted: Vec<T> = order.iter().map(|&i| col[i as usize]).collect();
            col.copy_from_slice(&sorted);
        }
        permute(&mut self.start_ps[range.clone()], &order);
        permute(&mut self.duration_ps[range.clone()], &order);
        permute(&mut self.name[range.clone()], &order);
        permute(&mut self.place[range], &order);
    }
}

fn too_many() -> DecodeError {
    DecodeError::Corrupt { format: crate::decode::Format::XSpace, detail: "more than 2^32 events on one thread".into() }
}

/// The nesting depth of each event of a thread sorted by start (longer first on ties): the number of
/// earlier events of the thread still running when it starts.
fn nesting_depths(start_ps: &[i64], duration_ps: &[i64], events: Range<u32>) -> Vec<u16> {
    let mut open_ends: Vec<i64> = Vec::new();
    events
        .map(|e| {
            let (s, d) = (start_ps[e as usize], duration_ps[e as usize]);
            while open_ends.last().is_some_and(|&end| end <= s) {
                open_ends.pop();
            }
            let depth = open_ends.len().min(u16::MAX as usize) as u16;
            open_ends.push(s.saturating_add(d.max(0)));
            depth
        })
        .collect()
}

/// What the page needs before drawing: processes and threads in XProf's order, the names table the
/// spans refer to, and the time span.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TraceOutline {
    pub processes: Vec<OutlineProcess>,
    pub names: Vec<String>,
    /// Earliest start and latest end over all events (0, 0 without events).
    pub start_ps: i64,
    pub end_ps: i64,
    pub event_count: u64,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct OutlineProcess {
    pub pid: u32,
    pub name: String,
    pub threads: Vec<OutlineThread>,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct OutlineThread {
    /// Index into [`TraceStore::threads`]: what queries name it by.
    pub index: u32,
    pub tid: u32,
    pub name: String,
    pub event_count: u32,
    pub depth_count: u16,
}

impl TraceStore {
    /// The store's outline ([`TraceOutline`]).
    pub fn outline(&self) -> TraceOutline {
        let ends = self.start_ps.iter().enumerate().map(|(i, &s)| s.saturating_add(self.duration_ps(i).max(0)));
        TraceOutline {
            processes: self
                .processes
                .iter()
                .map(|p| OutlineProcess {
                    pid: p.pid,
                    name: p.name.clone(),
                    threads: p
                        .threads
                        .clone()
                        .map(|i| {
                            let t = &self.threads[i];
                            OutlineThread {
                                index: i as u32,
                                tid: t.tid,
                                name: t.name.clone(),
                                event_count: t.events.len() as u32,
                                depth_count: t.depth_count,
                            }
                        })
                        .collect(),
                })
                .collect(),
            names: self.names.clone(),
            start_ps: self.start_ps.iter().copied().min().unwrap_or(0),
            end_ps: ends.max().unwrap_or(0),
            event_count: self.event_count() as u64,
        }
    }
}
