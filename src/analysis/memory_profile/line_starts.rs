//! Where an allocator's events' lines start in the trace. The profile's times are XProf's, each event's
//! raw offset from its line's start, and the host lines need not start together (on the MI300X traces
//! they do not): each snapshot keeps an index into this table, so its time in the trace, where the
//! Trace Viewer places the same event, is its line's start plus its offset.

/// The distinct line starts of one allocator's events, and the peak event's.
#[derive(Debug, Clone, PartialEq, Default)]
pub(super) struct LineStarts {
    /// In order of first use (one entry where the lines start together).
    starts_ps: Vec<i64>,
    /// The summary's peak event's entry; `None` when no event is the peak (every one's heap + stack
    /// was below zero).
    peak: Option<usize>,
}

impl LineStarts {
    /// The entry of a line starting at `start_ps`, added if new. Few lines hold one allocator's events,
    /// and fewer distinct starts, so a search is enough.
    pub(super) fn index_of(&mut self, start_ps: i64) -> usize {
        self.starts_ps.iter().position(|&s| s == start_ps).unwrap_or_else(|| {
            self.starts_ps.push(start_ps);
            self.starts_ps.len() - 1
        })
    }

    /// The peak event is on a line of entry `index`.
    pub(super) fn set_peak(&mut self, index: usize) {
        self.peak = Some(index);
    }

    /// The time in the trace of an event `offset_ps` after the start of entry `index`.
    pub(super) fn trace_time_ps(&self, index: usize, offset_ps: i64) -> i64 {
        self.starts_ps[index].saturating_add(offset_ps)
    }

    /// The time in the trace of the peak event, whose offset is `peak_offset_ps`.
    pub(super) fn peak_trace_time_ps(&self, peak_offset_ps: i64) -> Option<i64> {
        self.peak.map(|k| self.trace_time_ps(k, peak_offset_ps))
    }
}
