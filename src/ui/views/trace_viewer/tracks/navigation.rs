//! Moving about the tracks: a drag pans the window, a Shift-drag selects a range, a click selects the
//! event under it, the wheel and the chart keys zoom and pan, ↑/↓ scroll the tracks and 0 or Esc
//! shows the whole trace again. The window's moves are the shared chart ones
//! ([`crate::ui::charts::pan_zoom`], on a time axis: x only), kept inside the trace and stored in
//! the URL state.

use super::hit::{self, Hover};
use super::requests::Replies;
use super::TrackView;
use crate::ui::charts::pan_zoom::{drag_view, key_view, wheel_view, ZoomAxes};
use crate::ui::charts::viewport::{key_nav, KeyNav, Viewport};
use crate::ui::state::AppState;
use crate::ui::views::trace_viewer::clamp_window;
use leptos::prelude::*;

/// A press moves less than this (px) to count as a click.
const CLICK_SLOP_PX: f64 = 3.0;
/// Pixels one ↑/↓ press scrolls the tracks.
const KEY_SCROLL_PX: f64 = 80.0;
/// The tracks zoom and pan in time only: their rows scroll instead.
const AXES: ZoomAxes = ZoomAxes::X;

/// A press on the canvas: where, whether it selects a range (Shift), and the window it started on.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Press {
    x: f64,
    y: f64,
    range: bool,
    start: Viewport,
}

/// The pointer on the canvas: the press under way, the range being dragged out (px) and the counter
/// step hovered. The drawing shows the last two.
#[derive(Clone, Copy)]
pub(super) struct Pointer {
    press: RwSignal<Option<Press>>,
    pub drag_px: RwSignal<Option<(f64, f64)>>,
    pub hover: RwSignal<Option<Hover>>,
}

impl Pointer {
    pub fn new() -> Self {
        Pointer { press: RwSignal::new(None), drag_px: RwSignal::new(None), hover: RwSignal::new(None) }
    }

    /// The pointer left the canvas: no press, range or hover goes on.
    pub fn leave(&self) {
        self.press.set(None);
        self.drag_px.set(None);
        if self.hover.get_untracked().is_some() {
            self.hover.set(None);
        }
    }
}

/// The canvas's handlers, with what they read and write.
#[derive(Clone, Copy)]
pub(super) struct Navigation {
    pub tv: TrackView,
    pub replies: Replies,
    pub pointer: Pointer,
    /// The tracks' scroll box, which ↑/↓ scroll.
    pub scroll_ref: NodeRef<leptos::html::Div>,
    pub state: AppState,
}

/// Where a mouse event is on the canvas, in CSS px.
fn offset(e: &web_sys::MouseEvent) -> (f64, f64) {
    (f64::from(e.offset_x()), f64::from(e.offset_y()))
}

impl Navigation {
    /// Shows `v`, kept inside the trace (the whole trace is stored as no window).
    fn set_window(&self, v: Viewport) {
        self.state.trace_window.set(clamp_window(self.tv.full, v));
    }

    /// Mouse down: a press starts (left button only).
    pub fn press(&self, e: &web_sys::MouseEvent) {
        if e.button() != 0 {
            return;
        }
        let (x, y) = offset(e);
        self.pointer.press.set(Some(Press { x, y, range: e.shift_key(), start: self.tv.frame().v }));
    }

    /// Mouse move: drags out the range or pans once past the click slop; with no press, hovers the
    /// counter track under the pointer.
    pub fn pointer_move(&self, e: &web_sys::MouseEvent) {
        let (x, y) = offset(e);
        let Some(p) = self.pointer.press.get_untracked() else {
            let now = hit::counter_at(self.tv, &self.tv.frame(), x, y);
            if now != self.pointer.hover.get_untracked() {
                self.pointer.hover.set(now);
            }
            return;
        };
        if p.range {
            self.pointer.drag_px.set(Some((p.x, x)));
        } else if (x - p.x).abs() >= CLICK_SLOP_PX {
            let f = self.tv.frame();
            self.set_window(drag_view(&f, p.start, x - p.x, 0.0, AXES));
        }
    }

    /// Mouse up: a click selects the event under it (or none); a Shift-drag selects its range.
    pub fn release(&self, e: &web_sys::MouseEvent) {
        let Some(p) = self.pointer.press.get_untracked() else { return };
        self.pointer.press.set(None);
        self.pointer.drag_px.set(None);
        let (x, y) = offset(e);
        let f = self.tv.frame();
        if (x - p.x).abs() < CLICK_SLOP_PX {
            self.tv.selected_event.set(hit::event_at(self.tv, self.replies, &f, x, y));
        } else if p.range {
            self.state.trace_range.set(hit::range_between(&f, p.x, x));
        }
    }

    /// A wheel turn zooms the time around the pointer; a sideways one pans it.
    pub fn wheel(&self, e: &web_sys::WheelEvent) {
        let f = self.tv.frame();
        e.prevent_default();
        if let Some(v) = wheel_view(&f, e, AXES) {
            self.set_window(v);
        }
    }

    /// The chart keys: W/S zoom and A/D pan the time, ↑/↓ scroll the tracks, 0 or Esc shows the
    /// whole trace with no range selected.
    pub fn key(&self, e: &web_sys::KeyboardEvent) {
        let Some(nav) = key_nav(&e.key()) else { return };
        e.prevent_default();
        let (a, b) = self.tv.full;
        match nav {
            KeyNav::PanY(share) => {
                if let Some(el) = self.scroll_ref.get_untracked() {
                    el.set_scroll_top(el.scroll_top() - (share.signum() * KEY_SCROLL_PX) as i32);
                }
            }
            KeyNav::Reset => {
                self.state.trace_window.set(None);
                self.state.trace_range.set(None);
            }
            nav => self.set_window(key_view(self.tv.frame().v, nav, Viewport::x_range(a as f64, b as f64), AXES, e.shift_key())),
        }
    }
}
