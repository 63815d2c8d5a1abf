//! The PyTorch Profiler's views of a Kineto trace (`*.pt.trace.json[.gz]`), as the TensorBoard
//! plugin shows them: the Overview, the Operator, Kernel and Memory views. Each asks its request and
//! draws the figures it answers ([`crate::engine::torch_page`], read by the engine from the plugin's
//! payloads, [`crate::engine::torch`]); every figure is the plugin's.

pub mod kernels;
pub mod memory;
mod memory_chart;
pub mod operators;
pub mod overview;

use super::op_page;
use crate::engine::protocol::request::Ask;
use crate::engine::torch_page::Slice;
use crate::engine::FileDetails;
use crate::ui::charts::pie::{PieChart, PieSlice};
use crate::ui::state::AppState;
use crate::ui::use_engine::use_engine;
use leptos::prelude::*;
use std::sync::Arc;

/// A view's page: `request` (asked again when it changes; its `label` for the engine's log), its
/// figures drawn by `page`, in the op pages' frame (`testid`, the time unit, the answer's time, why
/// there is none).
pub fn torch_page<R, T>(
    (testid, label, waiting): (&'static str, &'static str, &'static str),
    details: &FileDetails,
    request: impl Fn() -> R + Send + Sync + 'static,
    page: impl Fn(Arc<T>) -> AnyView + Send + Sync + 'static,
) -> impl IntoView
where
    R: Ask<Reply = Arc<T>>,
    T: Send + Sync + 'static,
{
    let fetch = use_engine(label, move || Some(request()));
    op_page::frame(testid, details, fetch, ().into_any(), (waiting, "torch-error"), page)
}

/// A pie of the plugin's `slices` (a hover card and a legend of the largest), each slice's share as
/// `metric` and its value as `value_metric`, keyed by name; `value_text` writes a value.
pub fn pie(
    title: &'static str,
    testid: &'static str,
    (metric, value_metric): (&'static str, Option<&'static str>),
    slices: &[Slice],
    value_text: Arc<dyn Fn(f64) -> String + Send + Sync>,
) -> impl IntoView {
    let slices: Vec<PieSlice> = slices.iter().map(|s| PieSlice { label: s.name.clone(), value: s.value, fraction: s.fraction }).collect();
    view! { <PieChart title slices=Arc::new(slices) testid metric value_text value_metric /> }
}

/// A duration in µs written in the page's time unit, for the pies' hover cards.
pub fn time_text() -> Arc<dyn Fn(f64) -> String + Send + Sync> {
    let state = expect_context::<AppState>();
    Arc::new(move |us| state.time_unit.get().format(us))
}
