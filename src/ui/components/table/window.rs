//! Which rows of a virtualised table are in the DOM: the rows on screen plus a margin, rounded out to
//! whole blocks so that scrolling changes the window (and so the DOM) only when it crosses a block.
//! A new table first draws only the rows its box shows ([`rows_on_first_paint`]) and adds the margin
//! after the first frame, so the task that lays out a tool's reply and the frame that paints it
//! handle as few nodes as they can.
//! Plain maths with no web dependency (`tests/ui_geometry.rs` runs it natively).

use std::ops::Range;

/// Height of every body row in CSS pixels; the stylesheet gives rows exactly this height
/// (`.vtable tbody td`), so a row's position is its index times this.
pub const ROW_H_PX: f64 = 24.0;
/// Rows are added and removed in blocks of this many.
const BLOCK_ROWS: usize = 32;
/// At least this many rows above and below the visible ones are kept, so a fast scroll shows rows.
const MARGIN_ROWS: usize = 32;

/// The rows to render out of `n`, for a body scrolled by `scroll_top_px` in a box `view_h_px` tall.
pub fn rows_in_dom(n: usize, scroll_top_px: f64, view_h_px: f64) -> Range<usize> {
    let top = (scroll_top_px.max(0.0) / ROW_H_PX).floor() as usize;
    let bottom = ((scroll_top_px.max(0.0) + view_h_px.max(0.0)) / ROW_H_PX).ceil() as usize;
    let first = top.saturating_sub(MARGIN_ROWS) / BLOCK_ROWS * BLOCK_ROWS;
    let last = (bottom + MARGIN_ROWS).div_ceil(BLOCK_ROWS) * BLOCK_ROWS;
    first.min(n)..last.min(n)
}

/// The rows a table draws in the task that creates it, out of `n`, for a box `view_h_px` tall
/// scrolled to the top: only those on screen; [`rows_in_dom`]'s margin follows after the first frame.
pub fn rows_on_first_paint(n: usize, view_h_px: f64) -> Range<usize> {
    0..((view_h_px.max(0.0) / ROW_H_PX).ceil() as usize).min(n)
}
