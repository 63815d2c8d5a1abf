//! The CUDA memory snapshot tool: a PyTorch `snapshot.pickle` (`torch.cuda.memory._dump_snapshot`)
//! as PyTorch's own viewer shows it and more. Per device: the peak, the ring buffer's lost history,
//! any OOM explained, the active-memory timeline as stacked bands (a window of it asked of the
//! engine as it is panned and zoomed, so 100k+ events stay smooth), the allocator's state at a
//! chosen event and at the dump (segments with their blocks, fragmentation), the largest allocations
//! with their frames and the leak suspects. Every figure is the engine's
//! ([`crate::engine::torch_snapshot`]); this view lays them out and maps bytes and events to pixels.

mod segments;
mod summary;
mod tables;
mod timeline;
mod trace_memory;

use crate::analysis::torch_snapshot::{Axis, DeviceReport, FrameText, SnapshotReport};
use crate::engine::protocol::request;
use crate::engine::FileDetails;
use crate::ui::charts::viewport::Viewport;
use crate::ui::components::metric::{Bytes, Count, Text};
use crate::ui::state::AppState;
use crate::ui::use_engine::{use_engine, Reply};
use leptos::prelude::*;
use std::sync::Arc;

#[component]
pub fn TorchSnapshot(file_id: u32, details: FileDetails) -> impl IntoView {
    let state = expect_context::<AppState>();
    let fetch = use_engine("CUDA memory snapshot", move || Some(request::TorchSnapshot { file_id, state_at: None }));
    let name = details.path.clone();
    view! {
        <article class="torch-snapshot" data-file=name data-testid="torch-snapshot">
            {move || match fetch.reply.get() {
                Reply::Waiting => view! { <p class="muted loading" data-testid="torch-snapshot-loading">"Replaying the allocator's events…"</p> }.into_any(),
                Reply::Failed(e) => view! { <p class="error" data-testid="torch-snapshot-error">{e.detail()}</p> }.into_any(),
                Reply::Rejected(m) => view! { <p class="error" data-testid="torch-snapshot-error">{m}</p> }.into_any(),
                Reply::Ready((report, _)) => {
                    let devices = device_indices(&report);
                    view! {
                        <DevicePicker devices=devices.clone() />
                        {move || {
                            let picked = state.snapshot_device.get();
                            // A device from a link that this snapshot does not have: its first instead.
                            let d = if devices.contains(&picked) { picked } else { devices.first().copied().unwrap_or(0) };
                            let report = report.clone();
                            match report.devices.get(&d.to_string()).cloned() {
                                Some(r) => view! { <DeviceView file_id device=d r=Arc::new(r) /> }.into_any(),
                                None => view! { <p class="muted" data-testid="torch-snapshot-empty">"The snapshot holds no device trace."</p> }.into_any(),
                            }
                        }}
                    }.into_any()
                }
            }}
        </article>
    }
}

/// The report's devices, in numeric order (its keys are text).
fn device_indices(report: &SnapshotReport) -> Vec<usize> {
    let mut v: Vec<usize> = report.devices.keys().filter_map(|k| k.parse().ok()).collect();
    v.sort_unstable();
    v
}

/// The device picker, shown only when the snapshot traced several devices.
#[component]
fn DevicePicker(devices: Vec<usize>) -> impl IntoView {
    let state = expect_context::<AppState>();
    (devices.len() > 1).then(|| {
        view! {
            <div class="ts-controls" data-testid="ts-device-picker">
                <span class="muted">"Device"</span>
                <span class="segmented">
                    {devices.into_iter().map(|d| view! {
                        <button class="seg" data-device=d.to_string() aria-pressed=move || (state.snapshot_device.get() == d).to_string()
                            on:click=move |_| { state.snapshot_device.set(d); state.snapshot_event.set(None); }>
                            {format!("cuda:{d}")}
                        </button>
                    }).collect_view()}
                </span>
            </div>
        }
    })
}

/// One device: its figures, timeline, allocator states and tables.
#[component]
fn DeviceView(file_id: u32, device: usize, r: Arc<DeviceReport>) -> impl IntoView {
    let state = expect_context::<AppState>();
    let last_event = r.history.trace_events as i64 - 1;
    // The chosen event, kept inside the trace (a link may name one past it).
    let chosen = Signal::derive(move || state.snapshot_event.get().filter(|e| (-1..=last_event).contains(e)));
    let choose = Callback::new(move |e: i64| state.snapshot_event.set(Some(e.clamp(-1, last_event))));
    let shared = SharedWindow { axis: RwSignal::new(Axis::Event), window: RwSignal::new(None) };
    view! {
        <div data-testid="ts-device" data-device=device.to_string()>
            {summary::summary(&r)}
            <timeline::Timeline file_id device r=r.clone() chosen choose shared />
            <trace_memory::TraceMemoryPanel file_id device first_us=r.history.first_time_us.unwrap_or(0) chosen choose shared />
            <segments::ChosenState file_id device r=r.clone() chosen choose />
            <segments::StateSection file_id device event=last_event key="dump" title="Cached segments at the dump"
                note="The allocator's segments when the snapshot was taken, each block drawn at its place in its segment." />
            {tables::tables(&r, choose)}
        </div>
    }
}

/// The one time window the timeline and the Trace memory panel show: zooming or panning either
/// moves both. On the time axis the timeline's view is the window itself, so the two plots line up
/// pixel for pixel; on the event axis (not linear in time) the window is the span from its first
/// event's time to its last's, and zooming the panel puts the timeline on the time axis, the only
/// axis the two can share.
#[derive(Clone, Copy)]
struct SharedWindow {
    /// The timeline's axis.
    axis: RwSignal<Axis>,
    /// The window in µs since the epoch, `[start, end)`; `None`: the whole snapshot.
    window: RwSignal<Option<(f64, f64)>>,
}

impl SharedWindow {
    /// The view of `full` (the whole snapshot on the time axis) the window shows, kept inside it;
    /// a window already inside is taken exactly (refitting it moves its end by a rounding error,
    /// and both plots must agree to the bit to stay still).
    fn view_in(&self, full: Viewport, min_width: f64) -> Viewport {
        match self.window.get() {
            Some((x0, x1)) if full.x0 <= x0 && x1 <= full.x1 && x1 - x0 >= min_width => Viewport { x0, x1, ..full },
            Some((x0, x1)) => Viewport { x0, x1, ..full }.within(full, min_width, 0.0),
            None => full,
        }
    }

    /// Sets the window to view `v` of `full`, unless it is that already.
    fn show(&self, v: Viewport, full: Viewport) {
        let w = (v.x0 != full.x0 || v.x1 != full.x1).then_some((v.x0, v.x1));
        if self.window.get_untracked() != w {
            self.window.set(w);
        }
    }
}

/// A Python stack, innermost first: the library frames inside the call the user's code made are left
/// out unless `unfolded`; that call is marked.
fn python_frames(stack: &[FrameText], key: String, unfolded: bool) -> impl IntoView {
    view! {
        <ol class="ts-frames" data-testid="ts-python-frames" data-unfolded=unfolded.to_string()>
            {stack.iter().filter(|f| unfolded || !f.folded).map(|f| {
                let text = f.text();
                let title = match (f.library, f.folded) {
                    (true, true) => "Library code, inside the call below",
                    (true, false) if unfolded => "Library code: the call the code above it made",
                    (true, false) => "Library code (its inner frames folded)",
                    (false, _) => "",
                };
                view! {
                    <li class:lib=f.library class:folded=f.folded title=title>
                        <Text metric="frame" value=text key=key.clone() />
                        {f.library.then_some(" · library")}
                    </li>
                }
            }).collect_view()}
        </ol>
    }
}

/// How many frames of `stack` are folded.
fn folded_count(stack: &[FrameText]) -> usize {
    stack.iter().filter(|f| f.folded).count()
}

/// A byte figure with its label, as the page's cards show them.
fn card(label: &'static str, metric: &'static str, value: i64, key: &str) -> impl IntoView {
    view! {
        <div class="card"><div class="label">{label}</div><div class="value"><Bytes metric value key=key.to_string() /></div></div>
    }
}
