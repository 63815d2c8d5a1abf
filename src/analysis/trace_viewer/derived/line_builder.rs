//! XProf's builder of derived lines (`DerivedXLineBuilder`, `derived_timeline.cc`): a source event
//! either stretches the event last made at its nesting level, when it has the same name (and step),
//! or starts a new one there, closing that level and every deeper one.
//!
//! Rules, as XProf applies them:
//! - stretch only the last event of the level, when its name and group id are the event's, and its
//!   scope range id too where both have one; on a GPU plane always then, elsewhere only when the event has a group id or starts no later than the last
//!   event's end plus twice its duration;
//! - a new event closes the levels from its own down; closing level 0 also closes the lines that
//!   depend on this one (a new XLA module closes the name-scope and XLA-op lines);
//! - when closing, a stack of open events with the same span is made visible in a trace viewer by
//!   shortening each event 1 ns more than the one below it, where it repeats the span below (never
//!   shortening the top event below 1 ns).

/// One event of a derived line: its span, its name (an id the caller gives) and group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DerivedEvent {
    pub start_ps: i64,
    pub duration_ps: i64,
    pub name: u32,
    pub group_id: Option<i64>,
}

/// The event last made at one level, still open to stretching.
#[derive(Debug, Clone, Copy)]
struct Open {
    event: usize,
    name: u32,
    group_id: Option<i64>,
    /// The scope range id it was made with (XLA ops and modules of a GPU kernel that has one).
    scope_range_id: Option<i64>,
}

/// One derived line being built.
#[derive(Debug, Default)]
pub struct LineBuilder {
    pub events: Vec<DerivedEvent>,
    open: Vec<Option<Open>>,
    /// Lines (indices among the [`Lines`]) closed with this one's level 0.
    dependents: Vec<usize>,
}

/// The derived lines of one source, built together (some close others).
#[derive(Debug)]
pub struct Lines {
    pub lines: Vec<LineBuilder>,
    /// A GPU plane: an event with the same name always stretches the open one.
    always_stretch: bool,
}

impl Lines {
    /// `count` lines; `dependents` lists (line, the lines it closes at level 0).
    pub fn new(count: usize, dependents: &[(usize, &[usize])], always_stretch: bool) -> Self {
        let mut lines: Vec<LineBuilder> = (0..count).map(|_| LineBuilder::default()).collect();
        for &(line, deps) in dependents {
            lines[line].dependents = deps.to_vec();
        }
        Lines { lines, always_stretch }
    }

    /// XProf's `ExpandOrAddEvent`: one event at level 0.
    pub fn add(&mut self, line: usize, name: u32, start_ps: i64, duration_ps: i64, group_id: Option<i64>) {
        self.add_scoped(line, name, start_ps, duration_ps, group_id, None);
    }

    /// [`Lines::add`] with a scope range id: an event made with another one is not stretched.
    pub fn add_scoped(&mut self, line: usize, name: u32, start_ps: i64, duration_ps: i64, group_id: Option<i64>, scope: Option<i64>) {
        self.add_at_level(line, name, (start_ps, duration_ps), (group_id, scope), 0);
    }

    /// XProf's `ExpandOrAddEvents`: nested events, outermost first, then the deeper levels closed.
    pub fn add_nested(&mut self, line: usize, names: &[u32], start_ps: i64, duration_ps: i64, group_id: Option<i64>) {
        self.add_nested_scoped(line, names, &[], start_ps, duration_ps, group_id);
    }

    /// [`Lines::add_nested`] with each level's scope range id (`scopes` as long as `names`, else none).
    pub fn add_nested_scoped(
        &mut self,
        line: usize,
        names: &[u32],
        scopes: &[Option<i64>],
        start_ps: i64,
        duration_ps: i64,
        group_id: Option<i64>,
    ) {
        if names.is_empty() {
            return;
        }
        for (level, &name) in names.iter().enumerate() {
            let scope = scopes.get(level).copied().flatten();
            self.add_at_level(line, name, (start_ps, duration_ps), (group_id, scope), level);
        }
        self.close(line, names.len());
    }

    fn add_at_level(
        &mut self,
        line: usize,
        name: u32,
        (start_ps, duration_ps): (i64, i64),
        (group_id, scope): (Option<i64>, Option<i64>),
        level: usize,
    ) {
        let b = &mut self.lines[line];
        if b.open.len() <= level {
            b.open.resize(level + 1, None);
        }
        let same_scope = |o: &Open| scope.is_none() || o.scope_range_id.is_none() || o.scope_range_id == scope;
        if let Some(open) = b.open[level].filter(|o| o.name == name && o.group_id == group_id && same_scope(o)) {
            let last = &mut b.events[open.event];
            let within_gap = last.start_ps + 3 * last.duration_ps >= start_ps;
            if self.always_stretch || group_id.is_some() || within_gap {
                let end = (last.start_ps + last.duration_ps).max(start_ps.saturating_add(duration_ps));
                last.start_ps = last.start_ps.min(start_ps);
                last.duration_ps = end - last.start_ps;
                return;
            }
        }
        self.close(line, level);
        let b = &mut self.lines[line];
        b.events.push(DerivedEvent { start_ps, duration_ps, name, group_id });
        b.open[level] = Some(Open { event: b.events.len() - 1, name, group_id, scope_range_id: scope });
    }

    /// The event open at `level` of line `line` (the one last made or stretched there), if any: where
    /// XProf's `AddStatToLevelEvent` puts a stat.
    pub fn last_event(&self, line: usize, level: usize) -> Option<usize> {
        self.lines[line].open.get(level).copied().flatten().map(|o| o.event)
    }

    /// XProf's `ResetLastEvents`: closes `level` and deeper (at level 0, the dependent lines too).
    pub fn close(&mut self, line: usize, level: usize) {
        self.shorten_stack(line, level);
        let b = &mut self.lines[line];
        for o in b.open.iter_mut().skip(level) {
            *o = None;
        }
        if level == 0 {
            for d in b.dependents.clone() {
                self.close(d, 0);
            }
        }
    }

    /// XProf's `AdjustDurationForTraceViewer` on the open events from `level` down.
    fn shorten_stack(&mut self, line: usize, level: usize) {
        let b = &mut self.lines[line];
        let stack: Vec<usize> = b.open.iter().skip(level).map_while(|o| o.map(|o| o.event)).collect();
        if stack.len() < 2 {
            return;
        }
        let top = b.events[stack[stack.len() - 1]];
        let max_shrink_ns = top.duration_ps / 1000 - 1;
        let mut shrink_ns = 0;
        let mut below: Option<(i64, i64)> = None;
        for e in stack {
            let event = &mut b.events[e];
            let span = (event.start_ps, event.duration_ps);
            if shrink_ns < max_shrink_ns && below == Some(span) {
                shrink_ns += 1;
            }
            below = Some(span);
            if shrink_ns > 0 {
                event.duration_ps = (event.duration_ps - 1000 * shrink_ns).max(0);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spans(l: &LineBuilder) -> Vec<(i64, i64, u32)> {
        l.events.iter().map(|e| (e.start_ps, e.duration_ps, e.name)).collect()
    }

    #[test]
    fn same_name_stretches_and_a_new_name_closes_deeper_levels() {
        let mut lines = Lines::new(1, &[], true);
        lines.add_nested(0, &[1, 2], 0, 10_000, None);
        lines.add_nested(0, &[1, 3], 20_000, 5_000, None);
        // Level 0 stretched over both; level 1 has two events.
        assert_eq!(spans(&lines.lines[0]), vec![(0, 25_000, 1), (0, 10_000, 2), (20_000, 5_000, 3)]);
    }

    #[test]
    fn off_gpu_without_group_only_near_events_stretch() {
        let mut lines = Lines::new(1, &[], false);
        lines.add(0, 1, 0, 1_000, None);
        lines.add(0, 1, 3_000, 1_000, None); // starts at end + 2 × duration: stretched
        lines.add(0, 1, 20_000, 1_000, None); // too far: new
        assert_eq!(spans(&lines.lines[0]), vec![(0, 4_000, 1), (20_000, 1_000, 1)]);
    }

    #[test]
    fn stacks_of_one_span_are_shortened_and_dependents_closed() {
        let mut lines = Lines::new(2, &[(0, &[1])], true);
        lines.add_nested(1, &[5, 6, 7], 0, 10_000, None);
        lines.add(0, 1, 0, 10_000, None);
        lines.add(0, 2, 20_000, 1_000, None); // closes line 0's level 0, so line 1 too
        assert_eq!(spans(&lines.lines[1]), vec![(0, 10_000, 5), (0, 9_000, 6), (0, 8_000, 7)]);
    }
}
