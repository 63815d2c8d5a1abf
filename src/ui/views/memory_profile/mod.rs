//! The Memory Profile tool: per memory ID, the summary, the memory timeline (XProf's sampled points,
//! zoomable into the full-resolution timeline), the breakdown of what was live at the peak, and leak
//! hints. Every number is the engine's ([`crate::engine::memory_profile`]); this view only lays them
//! out, sorts and filters rows, and maps times to pixels.

mod breakdown;
mod floor;
mod leaks;
mod named;
mod panel;
mod timeline_chart;

use crate::analysis::memory_events::Activity;
use crate::analysis::memory_profile::LiveOpGroup;
use crate::decode::Format;
use crate::engine::memory_profile::{AllocatorView, BreakdownEntry, TimelineEvent};
use crate::engine::protocol::request;
use crate::engine::EngineError;
use crate::engine::FileDetails;
use crate::ui::charts::timeline::{self, Scene};
use crate::ui::charts::viewport::{key_nav, Viewport};
use crate::ui::charts::{draw_next_frame, observe_width, prepare, Palette};
use crate::ui::components::metric::{Bytes, Count, Percent, Text};
use crate::ui::components::table::{Column, Table, TableSpec};
use crate::ui::state::AppState;
use crate::ui::use_engine::{use_engine, Reply};
use crate::units::count as fmt_count;
use leptos::prelude::*;
use panel::AllocatorPanel;
use std::sync::Arc;

/// XProf's page hides breakdown rows requesting less than this (0.001 GiB); we show all by default.
const SMALL_ROW_BYTES: f64 = 0.001 * 1024.0 * 1024.0 * 1024.0;
/// CSS height of the timeline canvas.
const CHART_HEIGHT: f64 = 300.0;
/// The narrowest zoom, so a zoomed view always spans some time.
const MIN_SPAN_PS: i64 = 1_000;

fn ms(ps: i64) -> String {
    format!("{:.3} ms", ps as f64 / 1e9)
}

fn percent(f: f64) -> String {
    format!("{:.2} %", f * 100.0)
}

#[component]
pub fn MemoryProfile(file_id: u32, details: FileDetails) -> impl IntoView {
    // In the URL hash (with the selected row), so a reload, a shared link or a bundle restores them.
    let memory_id = expect_context::<AppState>().memory_id;
    let name = details.path.clone();
    let article_name = name.clone();

    // One request per memory ID; the worker keeps the analysis, so only the first one computes it.
    let fetch = use_engine("Memory Profile", move || Some(request::MemoryProfile { file_id, memory_id: memory_id.get() }));
    // A memory ID from a link that this file does not have: show the file's first instead.
    Effect::new(move |_| {
        if let Reply::Failed(EngineError::UnknownMemoryId { .. }) = fetch.reply.get() {
            memory_id.set(None);
        }
    });
    let elapsed_ms = fetch.elapsed_ms;

    let format = details.format;
    let hlo_modules = details.hlo_modules.iter().filter(|m| m.has_buffer_assignment).count();
    view! {
        <article class="memprof" data-file=article_name data-testid="memory-profile">
            {move || match fetch.reply.get() {
                Reply::Waiting | Reply::Failed(EngineError::UnknownMemoryId { .. }) => {
                    view! { <p class="muted loading" data-testid="memory-profile-loading">"Analysing allocator events…"</p> }.into_any()
                }
                Reply::Failed(error) => view! { <NotAnInput message=error.detail() format /> }.into_any(),
                Reply::Rejected(message) => view! { <NotAnInput message format /> }.into_any(),
                Reply::Ready(v) => match v.allocator.clone() {
                    None => view! { <NoEvents hlo_modules /> }.into_any(),
                    Some(a) => view! {
                        <AllocatorPanel file_id name=name.clone() memory_ids=v.memory_ids.clone() a=Arc::new(a) memory_id elapsed_ms />
                    }.into_any(),
                },
            }}
        </article>
    }
}

/// The file is not a trace (or the engine refused): say why and where its content is shown.
#[component]
fn NotAnInput(message: String, format: Format) -> impl IntoView {
    let instead = match format {
        Format::HloProto => "HLO modules are shown by the Memory Viewer tab.",
        Format::Pprof => "JAX device memory profiles (pprof) are shown by the Device memory tab.",
        Format::TorchSnapshot => "The CUDA memory snapshot tab draws this file.",
        Format::XSpace | Format::Kineto => "The File details tab shows what was decoded from this file.",
    };
    view! {
        <div class="mp-empty" data-testid="memory-profile-empty" data-reason="not_a_trace">
            <p>{message}</p>
            <p class="muted">{instead}</p>
        </div>
    }
}

/// A trace without allocator events: nothing to draw, and what to use instead.
#[component]
fn NoEvents(hlo_modules: usize) -> impl IntoView {
    view! {
        <div class="mp-empty" data-testid="memory-profile-empty" data-reason="no_events">
            <p>
                <strong>"This trace has no allocator events"</strong> " (" <code>"MemoryAllocation"</code> " / "
                <code>"MemoryDeallocation"</code> " on " <code>"/host:CPU"</code> "), so there is no memory timeline to draw."
            </p>
            <ul>
                <li>
                    "JAX never records them. Use the " <strong>"Memory Viewer"</strong> " on the program's HLO modules (the "
                    <code>"*.hlo_proto.pb"</code> " files written beside the trace)"
                    {(hlo_modules > 0).then(|| format!("; this file itself holds {hlo_modules} module(s) with buffer assignment"))}
                    ", or the " <strong>"Device memory"</strong> " tab on " <code>"jax.profiler.save_device_memory_profile"</code> " output."
                </li>
                <li>
                    "TensorFlow records them only from a BFC allocator: profile on a GPU, or on CPU with "
                    <code>"TF_CPU_ALLOCATOR_USE_BFC=true"</code> " set before TensorFlow starts."
                </li>
            </ul>
        </div>
    }
}
