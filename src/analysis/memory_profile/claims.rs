//! Which lines of the host plane each of [`super::scan`]'s two threads reads, so that every line is
//! read once and neither thread is left alone with a long line at the end.

use crate::decode::xplane::Plane;
use std::ops::Range;
use std::sync::OnceLock;

/// What one thread reads at a time in [`scan_in_parallel`](super::scan::scan_in_parallel): a line, or a stretch of the memory events
/// noted on it (indices into its notes).
pub(super) type Work = (usize, Option<Range<usize>>);

/// Memory events in a stretch ([`Claims::split`]): a few hundred microseconds of reading, so that the
/// last stretch taken leaves the other thread waiting for little.
pub(super) const STRETCH: usize = 2048;

/// Which lines of the host plane have had their memory events taken for reading ([`scan_in_parallel`](super::scan::scan_in_parallel)),
/// with three ways through them, each passing every line once at most.
pub(super) struct Claims {
    pub(super) taken: Vec<bool>,
    /// Lines by size, largest first, and the next one to look at.
    by_size: Vec<usize>,
    next_largest: usize,
    /// The next line, in file order, to look at among those the grouping pass has noted.
    next_noted: usize,
    /// Once every line is noted ([`Claims::split`]), what is left, in stretches.
    stretches: Option<std::vec::IntoIter<Work>>,
}

impl Claims {
    pub(super) fn new(plane: &Plane) -> Self {
        let mut by_size: Vec<usize> = (0..plane.lines.len()).collect();
        by_size.sort_by_key(|&i| std::cmp::Reverse(plane.lines[i].range().len()));
        Claims { taken: vec![false; by_size.len()], by_size, next_largest: 0, next_noted: 0, stretches: None }
    }

    fn take(&mut self, line: usize) -> Option<usize> {
        (!std::mem::replace(&mut self.taken[line], true)).then_some(line)
    }

    /// Once every line is noted (with `memory_events` each): the lines not taken yet, cut into
    /// stretches of [`STRETCH`] memory events, the lines with the most first.
    pub(super) fn split(&mut self, memory_events: impl Fn(usize) -> usize) {
        let mut left: Vec<usize> = std::iter::from_fn(|| self.largest()).collect();
        left.sort_by_key(|&line| std::cmp::Reverse(memory_events(line)));
        let stretches = left.into_iter().flat_map(|line| {
            let n = memory_events(line);
            (0..n.div_ceil(STRETCH)).map(move |k| (line, Some(k * STRETCH..n.min((k + 1) * STRETCH))))
        });
        self.stretches = Some(stretches.collect::<Vec<_>>().into_iter());
    }

    /// The next stretch, once [`Claims::split`] has cut them.
    pub(super) fn stretch(&mut self) -> Option<Work> {
        self.stretches.as_mut()?.next()
    }

    /// What the thread that is not grouping reads next: a noted line in file order while the
    /// grouping pass goes on, else the largest line left; then the stretches.
    pub(super) fn next<T>(&mut self, noted: &[OnceLock<T>]) -> Option<Work> {
        if self.stretches.is_some() {
            return self.stretch();
        }
        self.noted(noted).or_else(|| self.largest()).map(|line| (line, None))
    }

    /// The largest line not yet taken.
    fn largest(&mut self) -> Option<usize> {
        while let Some(&line) = self.by_size.get(self.next_largest) {
            self.next_largest += 1;
            if let Some(line) = self.take(line) {
                return Some(line);
            }
        }
        None
    }

    /// The first line not yet taken among those noted so far (the grouping pass notes them in order).
    fn noted<T>(&mut self, noted: &[OnceLock<T>]) -> Option<usize> {
        while noted.get(self.next_noted).is_some_and(|n| n.get().is_some()) {
            self.next_noted += 1;
            if let Some(line) = self.take(self.next_noted - 1) {
                return Some(line);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each line is taken once: noted lines in file order while the grouping pass goes on, else the
    /// largest left; once all are noted, the rest in stretches, the lines with the most memory events
    /// first.
    #[test]
    fn lines_are_claimed_once_each() {
        // Line sizes 5, 50, 20, 40, 30 bytes, with 9, 0, 1, 3, 7 memory events (STRETCH + 1 on line 4).
        let memory_events = [9, 0, 1, 3, STRETCH + 1];
        let mut c = Claims { taken: vec![false; 5], by_size: vec![1, 3, 4, 2, 0], next_largest: 0, next_noted: 0, stretches: None };
        let noted: Vec<OnceLock<()>> = (0..5).map(|_| OnceLock::new()).collect();
        assert_eq!(c.next(&noted), Some((1, None)), "none noted: the largest");
        let _ = noted[0].set(());
        let _ = noted[1].set(());
        assert_eq!(c.next(&noted), Some((0, None)), "noted, in file order");
        assert_eq!(c.next(&noted), Some((3, None)), "line 1 was taken, line 2 not noted yet: the largest left");
        (2..5).for_each(|l| {
            let _ = noted[l].set(());
        });
        c.split(|l| memory_events[l]);
        let rest: Vec<Work> = std::iter::from_fn(|| c.next(&noted)).collect();
        assert_eq!(rest, [(4, Some(0..STRETCH)), (4, Some(STRETCH..STRETCH + 1)), (2, Some(0..1))]);
    }
}
