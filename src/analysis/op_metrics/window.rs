//! A stretch of the trace's time the op tables can be limited to (Tidemark's own: XProf's tables always
//! cover the whole trace). The page's step selection sends the step's span; the CLI's `--step N` reads
//! it off the step database.
//!
//! An occurrence counts when its event *starts* inside the window, whatever its end: the tables of
//! back-to-back steps then add up to the table over all of them, each occurrence counted once. The
//! passes read only the events that start inside, so nesting, self time and the span of each thread or
//! core (and so idle time) are those of the window's events alone.

use serde::{Deserialize, Serialize};

/// A half-open window `[begin_ps, end_ps)` in the trace's time (ps: a line's start plus the event's
/// offset, the clock of the step database and the Trace Viewer). Never empty: a request with
/// `end_ps <= begin_ps` is refused when it is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "WindowFields")]
pub struct TimeWindow {
    begin_ps: i64,
    end_ps: i64,
}

/// The wire form before it is checked.
#[derive(Deserialize)]
struct WindowFields {
    begin_ps: i64,
    end_ps: i64,
}

impl TryFrom<WindowFields> for TimeWindow {
    type Error = String;

    fn try_from(w: WindowFields) -> Result<Self, String> {
        TimeWindow::new(w.begin_ps, w.end_ps)
    }
}

impl TimeWindow {
    /// The window `[begin_ps, end_ps)`, or why there is none (it would be empty).
    pub fn new(begin_ps: i64, end_ps: i64) -> Result<Self, String> {
        if begin_ps < end_ps {
            Ok(TimeWindow { begin_ps, end_ps })
        } else {
            Err(format!("an empty time window: it ends at {end_ps} ps, not after its start at {begin_ps} ps"))
        }
    }

    pub fn begin_ps(&self) -> i64 {
        self.begin_ps
    }

    pub fn end_ps(&self) -> i64 {
        self.end_ps
    }

    pub fn duration_ps(&self) -> u64 {
        self.end_ps.abs_diff(self.begin_ps)
    }

    pub fn duration_ms(&self) -> f64 {
        self.duration_ps() as f64 / 1e9
    }

    /// Whether an event starting at `begin_ps` lies in the window.
    pub fn contains(&self, begin_ps: i64) -> bool {
        self.begin_ps <= begin_ps && begin_ps < self.end_ps
    }
}

/// Whether an event starting at `begin_ps` is read: every event without a window.
pub fn starts_in(window: Option<TimeWindow>, begin_ps: i64) -> bool {
    window.is_none_or(|w| w.contains(begin_ps))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_open_and_never_empty() {
        let w = TimeWindow::new(10, 20).unwrap();
        assert!(w.contains(10) && w.contains(19) && !w.contains(20) && !w.contains(9));
        assert_eq!(w.duration_ps(), 10);
        assert!(starts_in(None, i64::MIN) && !starts_in(Some(w), 25));
        assert!(TimeWindow::new(5, 5).is_err() && TimeWindow::new(6, 5).is_err());
    }

    #[test]
    fn an_empty_window_is_refused_on_reading() {
        assert_eq!(serde_json::from_str::<TimeWindow>(r#"{"begin_ps":1,"end_ps":3}"#).unwrap(), TimeWindow::new(1, 3).unwrap());
        let err = serde_json::from_str::<TimeWindow>(r#"{"begin_ps":3,"end_ps":1}"#).unwrap_err().to_string();
        assert!(err.contains("empty time window"), "{err}");
    }
}
