//! The Kernel Stats tool (XProf's GPU Kernel Stats): every kernel the GPUs ran, grouped by kernel,
//! launch shape and op, with registers, shared memory, occupancy, Tensor Core eligibility and use,
//! and durations. Every number is the engine's ([`crate::engine::kernel_stats`]).

mod table;

use super::op_page;
use crate::engine::kernel_stats::KernelStatsView;
use crate::engine::protocol::request;
use crate::engine::FileDetails;
use crate::ui::components::metric::{Count, Duration, Percent};
use crate::ui::components::step_window::{op_scope, StepWindowChip};
use crate::ui::components::table::TableState;
use crate::ui::state::AppState;
use crate::ui::use_engine::use_engine;
use leptos::prelude::*;
use std::sync::Arc;

#[component]
pub fn KernelStats(file_id: u32, details: FileDetails) -> impl IntoView {
    let state = expect_context::<AppState>();
    let fetch = use_engine("Kernel stats", move || Some(request::KernelStats { scope: op_scope(state, file_id) }));
    let csv_name = op_page::csv_name(&details, "kernel_stats");
    op_page::frame(
        "kernel-stats",
        &details,
        fetch,
        view! { <StepWindowChip /> }.into_any(),
        ("Reading the GPU kernels…", "kernel-error"),
        move |v| view! { <Page v csv_name=csv_name.clone() /> }.into_any(),
    )
}

/// The reply laid out: the summary line and the table.
#[component]
fn Page(v: Arc<KernelStatsView>, csv_name: String) -> impl IntoView {
    let n = v.columns.kernel_name.len();
    if n == 0 {
        return view! {
            <div class="fos-empty" data-testid="kernel-empty">
                <p><strong>"No GPU kernels in this trace."</strong></p>
                <p class="muted">"Kernel stats list the kernels of a GPU trace's device planes; CPU and TPU traces have none (XProf's table is empty too)."</p>
            </div>
        }
        .into_any();
    }
    view! {
        <div class="fos-summary" data-testid="kernel-summary">
            <span><Count metric="kernel_rows" value=n as u64 /> " kernels"</span>
            <span><Duration metric="total_kernel_time_us" value_us=v.total_duration_us /> " kernel time"</span>
            <span><Percent metric="tensor_core_fraction" value=v.tensor_core_fraction /> " of it on Tensor Cores"</span>
            <span><Percent metric="eligible_fraction" value=v.eligible_fraction /> " in Tensor Core eligible ops"</span>
            <span title="Kernel time of ops that could use Tensor Cores in kernels that do not">
                <Percent metric="eligible_unused_fraction" value=v.eligible_unused_fraction /> " eligible but not using them"
            </span>
        </div>
        <table::KernelTable v state=TableState::new() csv_name />
    }
    .into_any()
}
