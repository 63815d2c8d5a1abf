//! A chart's figures as its canvas's fallback content: one `<li data-metric data-key data-value>` per
//! figure, what screen readers read and the tests query. A step chart of a long run has tens of
//! thousands of them (3,950 steps × 4 series on the 298 MB TensorFlow trace). Built as Leptos nodes
//! they cost the page's thread 270 ms in one task: a template clone, three attributes and a text per
//! item, each a call out of wasm with its strings, then the style of every node at the next layout.
//! Here they are written as HTML text, a few slices per animation frame (so each frame styles only
//! what it added), none in the task that built the view; the list says `data-complete` once it holds
//! every figure.

use super::now_ms;
use crate::engine::bundle::escape_html;
use leptos::prelude::*;
use std::fmt::Write;
use std::rc::Rc;

/// Figures written per `insertAdjacentHTML` call: small enough that the budget is kept to within a
/// slice's time (256 took 10 ms on a loaded machine).
const SLICE: usize = 64;
/// Time spent writing per frame, in ms, shared by every list of the page (the Input Pipeline's charts
/// write theirs in the same frames): the frame then styles and lays out what was added, which took
/// about twice as long again (8 ms of writing made frames of 50-65 ms on a loaded machine).
const BUDGET_MS: f64 = 4.0;
/// A budget that ended this long ago (ms) belongs to an earlier frame: the writes of one frame run
/// close together (a chart's draw between them at most), the next frame's start at least half a
/// 60 Hz frame later. Taking the next frame for the same one only delays the writing by a frame.
const NEW_FRAME_MS: f64 = 8.0;

thread_local! {
    /// When the current frame's writing budget ends (page time, ms).
    static BUDGET_END_MS: std::cell::Cell<f64> = const { std::cell::Cell::new(f64::NEG_INFINITY) };
}

/// One figure of the list.
pub struct Figure<'a> {
    pub metric: &'a str,
    pub key: &'a str,
    pub value: &'a str,
    /// What the item says.
    pub text: &'a str,
}

impl Figure<'_> {
    /// The figure's `<li>`, appended to `html`.
    fn write(&self, html: &mut String) {
        let (metric, key, value, text) = (escape_html(self.metric), escape_html(self.key), escape_html(self.value), escape_html(self.text));
        let _ = write!(html, r#"<li data-metric="{metric}" data-key="{key}" data-value="{value}">{text}</li>"#);
    }
}

/// What gives figure `i` of a list: `each(i, write)` calls `write` once with it.
pub type EachFigure = Rc<dyn Fn(usize, &mut dyn FnMut(Figure))>;

/// A `<ul>` of `count` figures given by `each`, written from the next animation frame on.
pub fn figure_list(count: usize, each: EachFigure) -> impl IntoView {
    let list = NodeRef::<leptos::html::Ul>::new();
    Effect::new(move |_| {
        if let Some(ul) = list.get() {
            let each = each.clone();
            request_animation_frame(move || write_from(ul.into(), 0, count, each));
        }
    });
    view! { <ul node_ref=list data-figures=count.to_string()></ul> }
}

/// Writes figures `from..` of `count` into `ul` while the frame's [`BUDGET_MS`] (what other lists
/// wrote in this frame included) lasts, then again in the next animation frame until all are there;
/// stops if the list has left the page.
fn write_from(ul: web_sys::HtmlElement, from: usize, count: usize, each: EachFigure) {
    if !ul.is_connected() {
        return;
    }
    let start_ms = now_ms();
    let budget_end_ms = BUDGET_END_MS.with(|end| {
        if start_ms > end.get() + NEW_FRAME_MS {
            end.set(start_ms + BUDGET_MS);
        }
        end.get()
    });
    let mut next = from;
    let mut html = String::new();
    while next < count && now_ms() < budget_end_ms {
        html.clear();
        for i in next..(next + SLICE).min(count) {
            each(i, &mut |f| f.write(&mut html));
        }
        if ul.insert_adjacent_html("beforeend", &html).is_err() {
            return;
        }
        next = (next + SLICE).min(count);
    }
    if next >= count {
        let _ = ul.set_attribute("data-complete", "true");
    } else {
        request_animation_frame(move || write_from(ul, next, count, each));
    }
}
