//! The chart's pointer, wheel and keys: hovering finds the event under the pointer, a click pins
//! it (for its link into the trace), a drag zooms to the times it spans, and the wheel and the chart
//! keys zoom and pan in time (the shared chart keys, x only: [`crate::ui::charts::pan_zoom`]).

use super::super::*;
use super::zoom::zoomed;
use super::Chart;
use crate::ui::charts::pan_zoom::{key_view, ZoomAxes};

/// A drag shorter than this (px) is a click.
const CLICK_SLOP_PX: f64 = 5.0;

/// Where a mouse event is on the canvas, in CSS px.
fn offset(e: &web_sys::MouseEvent) -> (f64, f64) {
    (f64::from(e.offset_x()), f64::from(e.offset_y()))
}

/// Mouse move: the drag follows, and the event under the pointer (in the plot) is hovered.
pub(super) fn pointer_move(c: Chart, e: &web_sys::MouseEvent) {
    let (x, y) = offset(e);
    c.pointer.set((x, y));
    let f = c.frame();
    if let Some((x0, _)) = c.drag.get_untracked() {
        c.drag.set(Some((x0, x)));
    }
    let mut found = None;
    if f.in_plot(x, y) {
        c.with_events(&mut |events| found = timeline::event_at(events, timeline::time_at(&f, x)));
    }
    if c.hover.get_untracked() != found {
        c.hover.set(found);
    }
}

/// Mouse down in the plot: a drag starts.
pub(super) fn press(c: Chart, e: &web_sys::MouseEvent) {
    let (x, y) = offset(e);
    if e.button() == 0 && c.frame().in_plot(x, y) {
        c.drag.set(Some((x, x)));
    }
}

/// Mouse up: a click pins the hovered event's time (or none); a drag zooms to the times it spans.
pub(super) fn release(c: Chart) {
    let Some((x0, x1)) = c.drag.get_untracked() else { return };
    c.drag.set(None);
    if (x1 - x0).abs() < CLICK_SLOP_PX {
        let mut time = None;
        if let Some(i) = c.hover.get_untracked() {
            c.with_events(&mut |events| time = events.get(i).map(|e| (e.point.time_offset_ps, e.point.trace_time_ps)));
        }
        c.pinned_ps.set(time);
    } else {
        let f = c.frame();
        let (t0, t1) = (timeline::time_at(&f, x0.min(x1)), timeline::time_at(&f, x0.max(x1)));
        c.zoom.set(zoomed(c.full, Viewport::x_range(t0 as f64, t1 as f64)));
    }
}

/// A wheel turn over the plot zooms the time around the pointer.
pub(super) fn wheel(c: Chart, e: &web_sys::WheelEvent) {
    let f = c.frame();
    let (x, y) = (f64::from(e.offset_x()), f64::from(e.offset_y()));
    if e.delta_y() == 0.0 || !f.in_plot(x, y) {
        return;
    }
    e.prevent_default();
    c.zoom.set(zoomed(c.full, f.wheel(x, y, e.delta_y(), true, false)));
}

/// The chart keys, in time only: W/S zoom, A/D pan, 0 or Esc shows the whole profile.
pub(super) fn key(c: Chart, e: &web_sys::KeyboardEvent) {
    let Some(nav) = key_nav(&e.key()) else { return };
    e.prevent_default();
    let full = Viewport::x_range(c.full.0 as f64, c.full.1 as f64);
    c.zoom.set(zoomed(c.full, key_view(c.frame().v, nav, full, ZoomAxes::X, e.shift_key())));
}
