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

/// Figures written per `insertAdjacentHTML` call.
const SLICE: usize = 256;
/// Time spent writing per frame, in ms: half of a 60 Hz frame, the rest left to style and paint.
const BUDGET_MS: f64 = 8.0;

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

/// Writes figures `from..` of `count` into `ul` for [`BUDGET_MS`], then again in the next animation
/// frame until all are there; stops if the list has left the page.
fn write_from(ul: web_sys::HtmlElement, from: usize, count: usize, each: EachFigure) {
    if !ul.is_connected() {
        return;
    }
    let start_ms = now_ms();
    let mut next = from;
    let mut html = String::new();
    while next < count && now_ms() - start_ms < BUDGET_MS {
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
