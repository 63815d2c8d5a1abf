//! Wheel, drag, the chart keys and double-click on a canvas that shows a [`Viewport`] of a fixed
//! extent: the event wiring the roofline chart and the allocation-block timeline share. The chart
//! keeps its hover and click handling and calls these from its own handlers, so a drag, a wheel turn
//! or a key moves every such chart the same way. A view that keeps its window elsewhere (the Trace
//! Viewer's time axis, stored in the URL state, and its own presses for clicks and ranges) asks
//! [`wheel_view`], [`key_view`] and [`drag_view`] for the same moves.

use super::frame_of;
use super::viewport::{key_nav, Frame, KeyNav, Margins, Viewport};
use leptos::attr::{tabindex, Attribute};
use leptos::ev::{self, on};
use leptos::prelude::*;
use leptos::tachys::html::node_ref::node_ref;

/// Which axes the wheel and W/S zoom.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ZoomAxes {
    /// Both, always.
    Both,
    /// Both unless a modifier narrows it: with Ctrl or Shift the wheel zooms x only (a trackpad
    /// pinch arrives as Ctrl+wheel), with Alt y only, and Shift+W/S zoom x only; a sideways wheel
    /// turn pans x.
    ByModifier,
    /// x only, as on a time axis whose rows scroll instead: the wheel and W/S zoom x, a sideways
    /// wheel turn and a drag pan x.
    X,
}

impl ZoomAxes {
    /// Whether W/S zoom y too (`shift`: whether Shift is held).
    fn key_zooms_y(self, shift: bool) -> bool {
        match self {
            ZoomAxes::Both => true,
            ZoomAxes::ByModifier => !shift,
            ZoomAxes::X => false,
        }
    }
}

/// What the wheel turn `ev` makes of the view of `f` with `axes` (not yet clamped); `None` when it
/// asks for nothing (no turn along an axis that zooms).
pub fn wheel_view(f: &Frame, ev: &web_sys::WheelEvent, axes: ZoomAxes) -> Option<Viewport> {
    let (px, py, dx, dy) = (f64::from(ev.offset_x()), f64::from(ev.offset_y()), ev.delta_x(), ev.delta_y());
    let (zx, zy) = match axes {
        ZoomAxes::Both => (true, true),
        // Sideways turns pan; a time axis ignores the modifiers.
        ZoomAxes::ByModifier | ZoomAxes::X if dx.abs() > dy.abs() => return Some(f.v.shift(dx * f.per_px().0, 0.0)),
        ZoomAxes::ByModifier => (!ev.alt_key(), !(ev.ctrl_key() || ev.shift_key())),
        ZoomAxes::X if dy == 0.0 => return None,
        ZoomAxes::X => (true, false),
    };
    Some(f.wheel(px, py, dy, zx, zy))
}

/// What the chart key `nav` makes of `v` with `axes` (`shift`: whether Shift is held); `full` is
/// where Reset goes. Not yet clamped.
pub fn key_view(v: Viewport, nav: KeyNav, full: Viewport, axes: ZoomAxes, shift: bool) -> Viewport {
    v.key(nav, full, axes.key_zooms_y(shift))
}

/// The view `start` of `f` dragged `dpx`, `dpy` pixels, along the axes `axes` pans.
pub fn drag_view(f: &Frame, start: Viewport, dpx: f64, dpy: f64, axes: ZoomAxes) -> Viewport {
    f.drag(start, dpx, if axes == ZoomAxes::X { 0.0 } else { dpy })
}

/// The pan and zoom state of one canvas: its view, the extent the view stays within, and the drag
/// under way. `Copy`, so each handler takes its own.
#[derive(Clone, Copy)]
pub struct PanZoom {
    canvas: NodeRef<leptos::html::Canvas>,
    view: RwSignal<Viewport>,
    full: Viewport,
    /// The least width and height the view may zoom to, in data units.
    min_size: (f64, f64),
    margins: Margins,
    axes: ZoomAxes,
    /// Where the pointer went down, and the view then.
    drag: StoredValue<Option<(f64, f64, Viewport)>>,
}

impl PanZoom {
    /// Pan and zoom of `view` on `canvas`, within `full`, at any size, both axes zoomed.
    pub fn new(canvas: NodeRef<leptos::html::Canvas>, view: RwSignal<Viewport>, full: Viewport, margins: Margins) -> Self {
        PanZoom { canvas, view, full, min_size: (0.0, 0.0), margins, axes: ZoomAxes::Both, drag: StoredValue::new(None) }
    }

    /// No zooming in past `width` × `height` (data units).
    pub fn min_size(self, width: f64, height: f64) -> Self {
        PanZoom { min_size: (width, height), ..self }
    }

    pub fn axes(self, axes: ZoomAxes) -> Self {
        PanZoom { axes, ..self }
    }

    /// `v` kept inside the extent and no smaller than the least size.
    fn clamp(&self, v: Viewport) -> Viewport {
        v.within(self.full, self.min_size.0, self.min_size.1)
    }

    /// The canvas's frame at the current view (`None` before it is mounted).
    fn frame(&self) -> Option<Frame> {
        self.canvas.get_untracked().map(|c| frame_of(&c, self.view.get_untracked(), self.margins))
    }

    /// Mouse down: a drag starts at the pointer.
    pub fn press(&self, ev: &web_sys::MouseEvent) {
        self.drag.set_value(Some((f64::from(ev.offset_x()), f64::from(ev.offset_y()), self.view.get_untracked())));
    }

    /// Mouse move: pans while a drag is under way (`None`); else the frame and the pointer's place in
    /// the canvas, for the chart's hover.
    pub fn hover(&self, ev: &web_sys::MouseEvent) -> Option<(Frame, f64, f64)> {
        let f = self.frame()?;
        let (px, py) = (f64::from(ev.offset_x()), f64::from(ev.offset_y()));
        match self.drag.get_value() {
            Some((sx, sy, v0)) => {
                self.view.set(self.clamp(drag_view(&f, v0, px - sx, py - sy, self.axes)));
                None
            }
            None => Some((f, px, py)),
        }
    }

    /// Mouse up or leave: the drag ends; returns where it started (a chart tells a click from it).
    pub fn release(&self) -> Option<(f64, f64)> {
        let start = self.drag.get_value().map(|(x, y, _)| (x, y));
        self.drag.set_value(None);
        start
    }

    /// The canvas's attributes for pan and zoom (`<canvas {..pz.attributes()}>`): its node ref,
    /// focusable (for the keys), and the handlers of the wheel, the chart keys and double-click. The
    /// chart's own mouse handlers call [`PanZoom::press`], [`PanZoom::hover`] and [`PanZoom::release`].
    pub fn attributes(self) -> impl Attribute {
        (
            node_ref(self.canvas),
            tabindex("0"),
            on(ev::wheel, move |e| self.wheel(&e)),
            on(ev::keydown, move |e| self.key(&e)),
            on(ev::dblclick, move |_| self.reset()),
        )
    }

    /// A wheel turn zooms around the pointer (or, sideways, pans).
    fn wheel(&self, ev: &web_sys::WheelEvent) {
        ev.prevent_default();
        if let Some(v) = self.frame().and_then(|f| wheel_view(&f, ev, self.axes)) {
            self.view.set(self.clamp(v));
        }
    }

    /// The chart keys: W/S zoom, A/D and the arrows pan, 0 or Esc resets.
    fn key(&self, ev: &web_sys::KeyboardEvent) {
        let Some(nav) = key_nav(&ev.key()) else { return };
        ev.prevent_default();
        self.view.set(self.clamp(key_view(self.view.get_untracked(), nav, self.full, self.axes, ev.shift_key())));
    }

    /// Back to the whole extent.
    fn reset(&self) {
        self.view.set(self.full);
    }
}
