//! Wheel, drag, the chart keys and double-click on a canvas that shows a [`Viewport`] of a fixed
//! extent: the event wiring the roofline chart and the allocation-block timeline share. The chart
//! keeps its hover and click handling and calls these from its own handlers, so a drag, a wheel turn
//! or a key moves every such chart the same way.

use super::frame_of;
use super::viewport::{key_nav, Frame, Margins, Viewport};
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
                self.view.set(self.clamp(f.drag(v0, px - sx, py - sy)));
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
        let Some(f) = self.frame() else { return };
        let (zx, zy) = match self.axes {
            ZoomAxes::Both => (true, true),
            ZoomAxes::ByModifier => {
                if ev.delta_x().abs() > ev.delta_y().abs() {
                    self.view.set(self.clamp(f.v.shift(ev.delta_x() * f.per_px().0, 0.0)));
                    return;
                }
                (!ev.alt_key(), !(ev.ctrl_key() || ev.shift_key()))
            }
        };
        self.view.set(self.clamp(f.wheel(f64::from(ev.offset_x()), f64::from(ev.offset_y()), ev.delta_y(), zx, zy)));
    }

    /// The chart keys: W/S zoom, A/D and the arrows pan, 0 or Esc resets.
    fn key(&self, ev: &web_sys::KeyboardEvent) {
        let Some(nav) = key_nav(&ev.key()) else { return };
        ev.prevent_default();
        let zoom_y = self.axes == ZoomAxes::Both || !ev.shift_key();
        self.view.set(self.clamp(self.view.get_untracked().key(nav, self.full, zoom_y)));
    }

    /// Back to the whole extent.
    fn reset(&self) {
        self.view.set(self.full);
    }
}
