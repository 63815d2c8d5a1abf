//! What the Memory Viewer's charts share: their margins, redrawing, and the allocation groups'
//! colours. Canvas sizing, theme colours, the viewport and the axes are every chart's (`super`).

use super::viewport::Margins;
use super::{now_ms, observe_width};
use crate::ui::state::AppState;
use leptos::prelude::*;
use web_sys::HtmlCanvasElement;

/// Room for the axes of the Memory Viewer's charts. The working-space chart and the block timeline
/// share it, so their x axes line up when they share a viewport.
pub const MARGINS: Margins = Margins { left: 72.0, right: 12.0, top: 8.0, bottom: 20.0 };

/// Redraws a chart with `draw` whenever a signal `draw` reads changes, the theme switches (colours
/// come from CSS) or the canvas's width changes (it follows its CSS box), and records how long the
/// frame took in `data-draw-ms` for the page's timings and the tests. `draw` answers whether it drew.
/// A canvas without width (hidden) is not drawn.
pub fn redraw(canvas: NodeRef<leptos::html::Canvas>, draw: impl Fn(&HtmlCanvasElement) -> bool + 'static) {
    let state = expect_context::<AppState>();
    let width = RwSignal::new(0.0f64);
    Effect::new(move |_| {
        if let Some(c) = canvas.get() {
            observe_width(&c, move |w| {
                if width.get_untracked() != w {
                    width.set(w);
                }
            });
        }
    });
    Effect::new(move |_| {
        state.theme.track();
        // Drawn once the observer has reported the canvas's width: its first report comes after the
        // page's layout, so the chart reads its size from a laid-out page. Drawn when the view is
        // built, reading the size forced a layout of the whole new page inside the task that built it
        // (90 ms of the Framework Op Stats reply's task on a 298 MB trace).
        if width.get() <= 0.0 {
            return;
        }
        let Some(c) = canvas.get() else { return };
        let start = now_ms();
        if draw(&c) {
            let _ = c.set_attribute("data-draw-ms", &format!("{:.3}", now_ms() - start));
        }
    });
}

/// The colour of an allocation group (XProf's category names), the same in every chart and legend.
/// Mid-tone hues that read on both themes; `shade` 0–2 varies lightness so neighbouring blocks of one
/// group stay apart.
pub fn group_color(group: &str, shade: usize) -> &'static str {
    const COLORS: [[&str; 3]; 6] = [
        ["#4e79a7", "#6b93c0", "#3b6390"], // Temporary
        ["#f28e2b", "#f6a85a", "#d9761a"], // Parameter
        ["#59a14f", "#76b96c", "#45873c"], // Output
        ["#b07aa1", "#c495b7", "#956386"], // Thread-local
        ["#9c755f", "#b38f7a", "#82604c"], // Constant
        ["#76b7b2", "#93cbc6", "#5c9c97"], // anything else
    ];
    COLORS[group_index(group)][shade % 3]
}

/// The groups in legend order.
pub const GROUPS: [&str; 5] = ["Temporary", "Parameter", "Output", "Thread-local", "Constant"];

pub fn group_index(group: &str) -> usize {
    GROUPS.iter().position(|g| *g == group).unwrap_or(GROUPS.len())
}
