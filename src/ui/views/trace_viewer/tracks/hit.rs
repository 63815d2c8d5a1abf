//! What lies under the pointer on the tracks' canvas: the event of a span (a click selects it), the
//! counter track's step (hovering shows it) and the times a Shift-drag spans (the range selected).
//! The same layout and scene as the drawing, so what is hit is what is drawn there.

use super::drawing::scene;
use super::requests::Replies;
use super::TrackView;
use crate::ui::charts::trace;
use crate::ui::charts::viewport::Frame;
use leptos::prelude::*;

/// The counter track under the pointer and the time there, with the pointer's place on the canvas
/// (where the tooltip goes).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Hover {
    /// The counter track's index in the trace's counter tracks.
    pub track: usize,
    pub t_ps: i64,
    pub x: f64,
    pub y: f64,
}

/// The event of the span drawn at (`x`, `y`) in frame `f`, if any.
pub(super) fn event_at(tv: TrackView, replies: Replies, f: &Frame, x: f64, y: f64) -> Option<u32> {
    let reply = replies.shown.get_untracked();
    let outline = tv.outline.get_value();
    tv.layout.with_untracked(|l| {
        trace::span_at(f, &scene(l, &reply, &outline.names, tv.scroll_top.get_untracked()), x, y).map(|(t, i)| reply.threads[t].event[i])
    })
}

/// The counter track at (`x`, `y`) in frame `f`, if the pointer is over one.
pub(super) fn counter_at(tv: TrackView, f: &Frame, x: f64, y: f64) -> Option<Hover> {
    let track = tv.layout.with_untracked(|l| l.counter_at(y + tv.scroll_top.get_untracked()))?;
    Some(Hover { track, t_ps: f.dx(x).round() as i64, x, y })
}

/// The times between the pixel columns `x0` and `x1` of frame `f` (either way round), as a range to
/// select: `None` when it rounds to nothing.
pub(super) fn range_between(f: &Frame, x0: f64, x1: f64) -> Option<(i64, i64)> {
    let (a, b) = (f.dx(x0.min(x1)).round() as i64, f.dx(x0.max(x1)).round() as i64);
    (b > a).then_some((a, b))
}
