//! Draws the chart whenever anything shown changes (theme included: colours come from CSS), in the
//! next animation frame: the first draw then is not part of the frame that lays out the new view
//! (its width arrives from the resize observer, during that frame's layout), and hovering draws once
//! per frame.

use super::super::*;
use super::Chart;

/// Draws `c` on the canvas of `canvas_ref` as it changes.
pub(super) fn draw(c: Chart, canvas_ref: NodeRef<leptos::html::Canvas>) {
    let state = expect_context::<AppState>();
    let next_draw = std::rc::Rc::new(std::cell::RefCell::new(None));
    Effect::new(move |_| {
        let _theme = state.theme.get();
        let f = c.frame();
        let Some(canvas) = canvas_ref.get() else { return };
        if f.w <= 0.0 {
            return;
        }
        // What the frame draws with; the events are read then, so track them here.
        c.with_events(&mut |_| ());
        let shown = (canvas, f, state.unit.get(), c.selected_row.get(), c.hover.get(), c.drag.get(), c.show_free.get());
        let a = c.a.get_value();
        draw_next_frame(&next_draw, shown, move |(canvas, f, unit, selected, hover, drag, show_free)| {
            // The chart may have left the page (its signals disposed) since the frame was asked for.
            if c.zoom.try_get_untracked().is_none() || !canvas.is_connected() {
                return;
            }
            let Some(ctx) = prepare(&canvas, f.w, f.h) else { return };
            let lifetimes = selected.and_then(|i| a.breakdown.get(i)).map(|r| r.lifetimes.as_slice()).unwrap_or(&[]);
            let palette = Palette::read();
            c.with_events(&mut |events| {
                let scene = Scene {
                    events,
                    peak_time_ps: a.summary.peak_stats_time_ps,
                    peak_bytes: a.summary.peak_stats.peak_bytes_in_use,
                    lifetimes,
                    hover,
                    drag,
                    show_free,
                    unit,
                };
                timeline::draw(&ctx, &f, &scene, &palette);
            });
        });
    });
}
