//! Where each process header, thread lane and memory counter track sits in the tracks, from the
//! outline, which processes are collapsed and which process each allocator's counter track goes
//! under (after its threads: the host process of an XSpace, the process that wrote a Kineto trace's
//! `[memory]` events). The labels (DOM) and the canvas both place rows from this one layout.

use crate::analysis::trace_viewer::store::TraceOutline;
use crate::ui::charts::trace::{lane_height, Lane};

/// Height of a process's header row, in CSS px.
pub const HEADER_H: f64 = 24.0;
/// Height of a memory counter track, in CSS px.
pub const COUNTER_H: f64 = 44.0;

/// The tracks' rows, top to bottom.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Layout {
    /// (process index in the outline, top) of each header.
    pub headers: Vec<(usize, f64)>,
    /// The lanes of the expanded processes' threads, and (process, thread index in it) of each.
    pub lanes: Vec<Lane>,
    pub lane_thread: Vec<(usize, usize)>,
    /// `lane_of[thread]`: the lane of the engine's thread `thread`, if shown.
    pub lane_of: Vec<Option<usize>>,
    /// (counter track index, top) of each memory counter track shown.
    pub counters: Vec<(usize, f64)>,
    pub height: f64,
}

impl Layout {
    /// Lays out `outline`'s processes, whose pids are in `collapsed` folded to their header, with
    /// memory counter track `k` under the process of pid `counter_pids[k]`.
    pub fn new(outline: &TraceOutline, collapsed: &[u32], counter_pids: &[u32]) -> Layout {
        let thread_count = outline.processes.iter().flat_map(|p| &p.threads).map(|t| t.index as usize + 1).max().unwrap_or(0);
        let mut l = Layout { lane_of: vec![None; thread_count], ..Layout::default() };
        let mut y = 0.0;
        for (pi, p) in outline.processes.iter().enumerate() {
            l.headers.push((pi, y));
            y += HEADER_H;
            if collapsed.contains(&p.pid) {
                continue;
            }
            for (ti, t) in p.threads.iter().enumerate() {
                let h = lane_height(t.depth_count);
                l.lane_of[t.index as usize] = Some(l.lanes.len());
                l.lanes.push(Lane { thread: t.index, y, h });
                l.lane_thread.push((pi, ti));
                y += h;
            }
            for (k, _) in counter_pids.iter().enumerate().filter(|&(_, &pid)| pid == p.pid) {
                l.counters.push((k, y));
                y += COUNTER_H;
            }
        }
        l.height = y;
        l
    }

    /// The engine's indices of the threads shown.
    pub fn threads(&self) -> Vec<u32> {
        self.lanes.iter().map(|l| l.thread).collect()
    }

    /// The counter track at height `y` (from the top of all tracks), if any.
    pub fn counter_at(&self, y: f64) -> Option<usize> {
        self.counters.iter().find(|&&(_, top)| (top..top + COUNTER_H).contains(&y)).map(|&(k, _)| k)
    }
}
