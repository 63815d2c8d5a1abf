//! The page's pure geometry, run natively: the chart viewport (data ↔ pixels, zoom, pan, clamping,
//! keys) and the table's window of rows in the DOM. Both modules live under `src/ui` (compiled only
//! for wasm) but use no web API, so they are included here by path.

#[path = "../src/ui/charts/viewport.rs"]
#[allow(dead_code)]
mod viewport;
#[path = "../src/ui/components/table/window.rs"]
mod window;

use viewport::{key_nav, Frame, KeyNav, Margins, Viewport};
use window::{rows_in_dom, rows_on_first_paint, ROW_H_PX};

const M: Margins = Margins { left: 72.0, right: 12.0, top: 8.0, bottom: 20.0 };

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

fn frame() -> Frame {
    Frame { v: Viewport { x0: 100.0, x1: 300.0, y0: 0.0, y1: 1024.0 }, w: 484.0, h: 228.0, m: M }
}

#[test]
fn pixels_and_data_map_both_ways_inside_the_margins() {
    let f = frame();
    assert_eq!((f.plot_left(), f.plot_right(), f.plot_top(), f.plot_bottom()), (72.0, 472.0, 8.0, 208.0));
    assert!(close(f.sx(100.0), 72.0) && close(f.sx(300.0), 472.0) && close(f.sx(200.0), 272.0));
    assert!(close(f.sy(0.0), 208.0) && close(f.sy(1024.0), 8.0));
    for px in [72.0, 100.5, 333.0, 472.0] {
        assert!(close(f.sx(f.dx(px)), px), "{px}");
    }
    for py in [8.0, 99.0, 208.0] {
        assert!(close(f.sy(f.dy(py)), py), "{py}");
    }
    assert_eq!(f.per_px(), (0.5, 5.12));
    assert!(f.in_plot(72.0, 8.0) && f.in_plot(472.0, 208.0) && !f.in_plot(71.0, 50.0) && !f.in_plot(100.0, 209.0));
}

#[test]
fn zoom_keeps_the_point_under_the_pointer_and_wheel_direction_is_the_usual_one() {
    let f = frame();
    let (px, py) = (150.0, 60.0);
    let (x, y) = (f.dx(px), f.dy(py));
    let zoomed_in = f.wheel(px, py, -400.0, true, true);
    assert!(zoomed_in.width() < f.v.width() && zoomed_in.height() < f.v.height());
    let g = f.with(zoomed_in);
    assert!(close(g.sx(x), px) && close(g.sy(y), py));
    let zoomed_out = f.wheel(px, py, 400.0, true, false);
    assert!(zoomed_out.width() > f.v.width());
    assert_eq!((zoomed_out.y0, zoomed_out.y1), (f.v.y0, f.v.y1), "y left alone");
}

#[test]
fn a_drag_moves_the_grabbed_point_with_the_pointer() {
    let f = frame();
    let grabbed = (f.dx(200.0), f.dy(100.0));
    let g = f.with(f.drag(f.v, -40.0, 25.0));
    assert!(close(g.sx(grabbed.0), 160.0) && close(g.sy(grabbed.1), 125.0));
}

#[test]
fn within_keeps_the_window_inside_the_data_and_at_least_the_minimum_size() {
    let full = Viewport { x0: 0.0, x1: 1000.0, y0: 0.0, y1: 64.0 };
    // Panned past the right edge: moved back, same width.
    let v = Viewport { x0: 950.0, x1: 1150.0, y0: 0.0, y1: 64.0 }.within(full, 1.0, 16.0);
    assert_eq!(v, Viewport { x0: 800.0, x1: 1000.0, y0: 0.0, y1: 64.0 });
    // Zoomed in too far: widened to the minimum; zoomed out too far: the whole extent.
    let v = Viewport { x0: 10.0, x1: 10.2, y0: 4.0, y1: 5.0 }.within(full, 1.0, 16.0);
    assert!(close(v.width(), 1.0) && close(v.height(), 16.0) && v.x0 >= 0.0 && v.y0 >= 0.0);
    assert_eq!(Viewport { x0: -500.0, x1: 3000.0, y0: -1.0, y1: 99.0 }.within(full, 1.0, 16.0), full);
}

#[test]
fn keys_zoom_around_the_centre_pan_by_a_share_and_reset() {
    let full = Viewport { x0: 0.0, x1: 1000.0, y0: 0.0, y1: 100.0 };
    let v = Viewport { x0: 200.0, x1: 400.0, y0: 0.0, y1: 100.0 };
    let w = v.key(key_nav("w").unwrap(), full, false);
    assert!(w.width() < v.width() && close((w.x0 + w.x1) / 2.0, 300.0) && w.height() == v.height());
    let s = v.key(key_nav("S").unwrap(), full, true);
    assert!(s.width() > v.width() && s.height() > v.height());
    let a = v.key(key_nav("a").unwrap(), full, false);
    assert!(a.x0 < v.x0 && close(a.width(), v.width()));
    let d = v.key(key_nav("ArrowRight").unwrap(), full, false);
    assert!(d.x0 > v.x0 && close(d.width(), v.width()));
    assert_eq!(v.key(key_nav("Escape").unwrap(), full, false), full);
    assert_eq!(key_nav("0"), Some(KeyNav::Reset));
    assert_eq!(key_nav("q"), None);
}

#[test]
fn the_dom_holds_the_visible_rows_and_a_margin_in_whole_blocks() {
    let view_px = 560.0;
    let visible = (view_px / ROW_H_PX).ceil() as usize;
    // Few rows: all of them.
    assert_eq!(rows_in_dom(30, 0.0, view_px), 0..30);
    assert_eq!(rows_in_dom(0, 0.0, view_px), 0..0);
    // Many rows at the top, in the middle, at the end: the visible ones and a bounded window.
    let n = 12_000;
    for top_row in [0usize, 37, 5_000, n - visible] {
        let r = rows_in_dom(n, top_row as f64 * ROW_H_PX, view_px);
        assert!(r.start <= top_row && r.end >= (top_row + visible).min(n), "{top_row}: {r:?}");
        assert!(r.len() <= visible + 3 * 32, "{top_row}: {} rows", r.len());
        assert_eq!(r.start % 32, 0);
    }
    assert_eq!(rows_in_dom(n, (n * 24) as f64, view_px).end, n);
    // Scrolling within a block leaves the window as it is (no DOM change).
    assert_eq!(rows_in_dom(n, 5_000.0 * ROW_H_PX, view_px), rows_in_dom(n, 5_000.0 * ROW_H_PX + 3.0, view_px));
}

#[test]
fn a_new_table_first_draws_only_its_visible_rows_then_the_margin() {
    let view_px = 560.0;
    let visible = (view_px / ROW_H_PX).ceil() as usize;
    assert_eq!(rows_on_first_paint(12_000, view_px), 0..visible);
    assert_eq!(rows_on_first_paint(10, view_px), 0..10);
    assert_eq!(rows_on_first_paint(0, view_px), 0..0);
    // The window that follows holds every row drawn first, so nothing drawn is taken away.
    let first = rows_on_first_paint(12_000, view_px);
    let then = rows_in_dom(12_000, 0.0, view_px);
    assert!(then.start <= first.start && then.end > first.end, "{first:?} then {then:?}");
}
