//! The trace viewer's event store: every shown event of a trace in columns, built once per file.
//!
//! Per event: start and duration (ps), name (an id into the interned names), nesting depth on its
//! thread, and where it lies in the file (its line and its position there), so that its stats are read
//! from the file's bytes when asked for ([`super::details`]) instead of being copied: 30 bytes an event
//! against the 35–50 an event takes in the file. Events are grouped by thread (processes and threads
//! in XProf's order, [`super::layout`]) and sorted on each thread by start, longer first on ties (XProf's
//! track order). The thread-pool regions XProf adds ([`crate::analysis::preprocess::threadpool`]) are
//! events of their lines here too.

use super::event_text::PlaneText;
use super::layout::{self, Process};
use crate::analysis::preprocess::threadpool::{self, Region, RegionFinder};
use crate::decode::xplane::{IdTable, XSpace};
use crate::decode::DecodeError;
use crate::fast_hash::FastMap;
use std::ops::Range;

/// Marks [`TraceStore::source`]'s position of an added region: the low bits index the line's regions.
const ADDED: u32 = 1 << 31;

/// Where an event's data lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// Event `index` of line `line` of plane `plane`.
    File { plane: usize, line: usize, index: u32 },
    /// A region XProf adds to that line.
    Region(Region),
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
}

/// One process of the store.
#[derive(Debug, Clone, PartialEq)]
pub struct StoreProcess {
    pub pid: u32,
    pub name: String,
    /// Index of its first thread in [`TraceStore::threads`]; its threads are contiguous.
    pub threads: Range<usize>,
}

/// Every shown event of a trace, in columns (see the module doc).
#[derive(Debug, Default)]
pub struct TraceStore {
    pub processes: Vec<StoreProcess>,
    pub threads: Vec<StoreThread>,
    names: Vec<String>,
    start_ps: Vec<i64>,
    duration_ps: Vec<i64>,
    name: Vec<u32>,
    depth: Vec<u16>,
    /// Index into `lines`.
    line: Vec<u32>,
    /// Position among the line's events, or [`ADDED`] | index into the line's regions.
    position: Vec<u32>,
    /// (plane, line in plane) of each line with events.
    lines: Vec<(u32, u32)>,
    /// The regions added to each line of `lines`.
    regions: Vec<Vec<Region>>,
}

impl TraceStore {
    /// Reads every shown event of `space` once.
    pub fn build(space: &XSpace) -> Result<Self, DecodeError> {
        let layout = layout::processes(space);
        let mut store = TraceStore::default();
        let total: usize = layout
            .iter()
            .flat_map(|p| p.threads.iter().flat_map(move |t| t.lines.iter().map(move |&l| space.planes[p.plane].lines[l].event_count)))
            .sum();
        store.start_ps.reserve_exact(total);
        store.duration_ps.reserve_exact(total);
        store.name.reserve_exact(total);
        store.line.reserve_exact(total);
        store.position.reserve_exact(total);
        let mut interned: FastMap<String, u32> = FastMap::default();
        for process in &layout {
            store.add_process(space, process, &mut interned)?;
        }
        store.depth = store.threads.iter().flat_map(|t| nesting_depths(&store.start_ps, &store.duration_ps, t.events.clone())).collect();
        for col in [&mut store.start_ps, &mut store.duration_ps] {
            col.shrink_to_fit();
        }
        store.name.shrink_to_fit();
        store.line.shrink_to_fit();
        store.position.shrink_to_fit();
        for t in &mut store.threads {
            t.depth_count = store.depth[t.events.start as usize..t.events.end as usize].iter().max().map_or(0, |&d| d + 1);
        }
        Ok(store)
    }

    fn add_process(&mut self, space: &XSpace, process: &Process, interned: &mut FastMap<String, u32>) -> Result<(), DecodeError> {
        let plane = &space.planes[process.plane];
        let text = PlaneText::new(plane);
        let mut finder = RegionFinder::new(plane);
        let mut select = text.step_name_stats().clone();
        if let Some(f) = &finder {
            select = IdTable::new(plane.meta.stat_metadata.keys().map(|&id| (id, select.get(id) || f.stats().get(id))));
        }
        // The name of each metadata's events, interned once.
        let mut intern = |names: &mut Vec<String>, s: String| -> u32 {
            *interned.entry(s).or_insert_with_key(|k| {
                names.push(k.clone());
                names.len() as u32 - 1
            })
        };
        let metadata_names = IdTable::new(
            plane.meta.event_metadata.keys().map(|&id| (id, intern(&mut self.names, text.metadata_name(id)) + 1)).collect::<Vec<_>>(),
        );
        let region_name = intern(&mut self.names, threadpool::REGION.to_string());
        let empty_name = intern(&mut self.names, String::new());
        let first_thread = self.threads.len();
        for thread in &process.threads {
            let begin = self.start_ps.len();
            for &l in &thread.lines {
                let line = &plane.lines[l];
                let line_ref = self.lines.len() as u32;
                self.lines.push((process.plane as u32, l as u32));
                if let Some(f) = finder.as_mut() {
                    f.start_line(line);
                }
                let base_ps = line.header.timestamp_ns.saturating_mul(1000);
                let (names, starts, durations, name_col, line_col, position) =
                    (&mut self.names, &mut self.start_ps, &mut self.duration_ps, &mut self.name, &mut self.line, &mut self.position);
                space.for_each_raw_event(
                    line,
                    &select,
                    |id| !text.is_internal(id),
                    |index, ev| {
                        let h = &ev.header;
                        if let Some(f) = finder.as_mut() {
                            f.push(plane, ev)?;
                        }
                        let name = if ev.stats.iter().any(|s| text.step_name_stats().get(s.metadata_id)) {
                            intern(names, text.name(h.metadata_id, ev.stats)?)
                        } else {
                            match metadata_names.get(h.metadata_id) {
                                0 => empty_name,
                                n => n - 1,
                            }
                        };
                        starts.push(base_ps.saturating_add(h.offset_ps));
                        durations.push(h.duration_ps);
                        name_col.push(name);
                        line_col.push(line_ref);
                        position.push(u32::try_from(index).ok().filter(|&i| i < ADDED).ok_or_else(too_many)?);
                        Ok(())
                    },
                )?;
                let regions = finder.as_mut().map(|f| f.take()).unwrap_or_default();
                for (k, r) in regions.iter().enumerate() {
                    self.start_ps.push(r.start_ps);
                    self.duration_ps.push(r.duration_ps);
                    self.name.push(region_name);
                    self.line.push(line_ref);
                    self.position.push(ADDED | u32::try_from(k).ok().filter(|&k| k < ADDED).ok_or_else(too_many)?);
                }
                self.regions.push(regions);
            }
            let end = self.start_ps.len();
            let events = u32::try_from(begin).map_err(|_| too_many())?..u32::try_from(end).map_err(|_| too_many())?;
            self.sort_thread(begin..end);
            let max_duration_ps = self.duration_ps[begin..end].iter().copied().max().unwrap_or(0).max(0);
            self.threads.push(StoreThread {
                pid: process.pid,
                tid: thread.tid,
                name: thread.name.clone(),
                events,
                max_duration_ps,
                depth_count: 0,
            });
        }
        self.processes.push(StoreProcess { pid: process.pid, name: process.name.clone(), threads: first_thread..self.threads.len() });
        Ok(())
    }

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
        permute(&mut self.line[range.clone()], &order);
        permute(&mut self.position[range], &order);
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

    pub fn duration_ps(&self) -> &[i64] {
        &self.duration_ps
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

    /// Where an event's data lies.
    pub fn source(&self, event: u32) -> Source {
        let (plane, line) = self.lines[self.line[event as usize] as usize];
        let position = self.position[event as usize];
        if position & ADDED != 0 {
            Source::Region(self.regions[self.line[event as usize] as usize][(position & !ADDED) as usize])
        } else {
            Source::File { plane: plane as usize, line: line as usize, index: position }
        }
    }

    /// Bytes the store holds (columns, names, tables), for the memory budget.
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        let columns = self.start_ps.capacity() * size_of::<i64>()
            + self.duration_ps.capacity() * size_of::<i64>()
            + self.name.capacity() * size_of::<u32>()
            + self.depth.capacity() * size_of::<u16>()
            + self.line.capacity() * size_of::<u32>()
            + self.position.capacity() * size_of::<u32>();
        let names: usize = self.names.iter().map(|n| n.capacity() + size_of::<String>()).sum();
        let threads: usize = self.threads.iter().map(|t| t.name.capacity() + size_of::<StoreThread>()).sum();
        let regions: usize = self.regions.iter().map(|r| r.capacity() * size_of::<Region>() + size_of::<Vec<Region>>()).sum();
        columns + names + threads + regions + self.lines.capacity() * size_of::<(u32, u32)>()
    }
}

fn too_many() -> DecodeError {
    DecodeError::Corrupt { format: crate::decode::Format::XSpace, detail: "more than 2^31 events on one line or in one trace".into() }
}

/// The nesting depth of each event of a thread sorted by start (longer first on ties): the number of
/// earlier events of the thread still running when it starts, among those that enclose each other.
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
        let ends = self.start_ps.iter().zip(&self.duration_ps).map(|(&s, &d)| s.saturating_add(d.max(0)));
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
