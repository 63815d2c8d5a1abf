//! The Memory Profile tool: per memory ID, the summary, the memory timeline (XProf's sampled points,
//! zoomable into the full-resolution timeline), the breakdown of what was live at the peak, and leak
//! hints. Every number is the engine's ([`crate::engine::memory_profile`]); this view only lays them
//! out, sorts and filters rows, and maps times to pixels.

use crate::analysis::memory_events::Activity;
use crate::analysis::memory_profile::LiveOpGroup;
use crate::decode::Format;
use crate::engine::memory_profile::{AllocatorView, BreakdownEntry, MemoryProfileView, TimelineEvent, TimelineWindow};
use crate::engine::protocol::{RequestBody, ResponseBody};
use crate::engine::FileOverview;
use crate::ui::charts::timeline::{self, Scene};
use crate::ui::charts::viewport::{key_nav, Viewport};
use crate::ui::charts::{now_ms, observe_width, prepare, Palette};
use crate::ui::components::metric::{Bytes, Count, Text};
use crate::ui::components::table::{Column, Table, TableSpec};
use crate::ui::engine_client;
use crate::ui::state::AppState;
use crate::units::count as fmt_count;
use leptos::prelude::*;
use std::sync::Arc;

/// XProf's page hides breakdown rows requesting less than this (0.001 GiB); we show all by default.
const SMALL_ROW_BYTES: f64 = 0.001 * 1024.0 * 1024.0 * 1024.0;
/// CSS height of the timeline canvas.
const CHART_HEIGHT: f64 = 300.0;
/// The narrowest zoom, so a zoomed view always spans some time.
const MIN_SPAN_PS: i64 = 1_000;

#[derive(Clone)]
enum Load {
    Loading,
    Ready(Arc<MemoryProfileView>),
    Failed(String),
}

fn ms(ps: i64) -> String {
    format!("{:.3} ms", ps as f64 / 1e9)
}

fn percent(f: f64) -> String {
    format!("{:.2} %", f * 100.0)
}

#[component]
pub fn MemoryProfile(file_id: u32, overview: FileOverview) -> impl IntoView {
    // In the URL hash (with the selected row), so a reload, a shared link or a bundle restores them.
    let memory_id = expect_context::<AppState>().memory_id;
    let load = RwSignal::new(Load::Loading);
    let elapsed_ms = RwSignal::new(None::<f64>);
    let generation = RwSignal::new(0u64);
    let name = overview.name.clone();
    let article_name = name.clone();

    // One request per memory ID; the worker keeps the analysis, so only the first one computes it.
    let label = name.clone();
    Effect::new(move |_| {
        let id = memory_id.get();
        let g = generation.get_untracked() + 1;
        generation.set(g);
        let t0 = now_ms();
        engine_client::request(RequestBody::MemoryProfile { file_id, memory_id: id }, label.clone(), move |body| {
            if generation.try_get_untracked() != Some(g) {
                return; // a newer request is on its way
            }
            elapsed_ms.try_set(Some(now_ms() - t0));
            let next = match body {
                ResponseBody::MemoryProfile { view } => Load::Ready(Arc::new(*view)),
                // A memory ID from a link that this file does not have: show the file's first instead.
                ResponseBody::Failed { .. } if memory_id.get_untracked().is_some() => {
                    memory_id.set(None);
                    return;
                }
                ResponseBody::Failed { error } => Load::Failed(error.message),
                ResponseBody::Rejected { message } => Load::Failed(message),
                _ => return,
            };
            load.try_set(next);
        });
    });

    let format = overview.format;
    let hlo_modules = overview.hlo_modules.iter().filter(|m| m.has_buffer_assignment).count();
    view! {
        <article class="memprof" data-file=article_name data-testid="memory-profile">
            {move || match load.get() {
                Load::Loading => view! { <p class="muted loading" data-testid="memory-profile-loading">"Analysing allocator events…"</p> }.into_any(),
                Load::Failed(message) => view! { <NotAnInput message format /> }.into_any(),
                Load::Ready(v) => match v.allocator.clone() {
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
        Format::XSpace => "The Overview tab shows what was decoded from this file.",
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

#[component]
fn AllocatorPanel(
    file_id: u32,
    name: String,
    memory_ids: Vec<String>,
    a: Arc<AllocatorView>,
    memory_id: RwSignal<Option<String>>,
    elapsed_ms: RwSignal<Option<f64>>,
) -> impl IntoView {
    let selected_row = expect_context::<AppState>().breakdown_row;
    let current = a.memory_id.clone();
    let s = &a.summary;
    let c = a.counts;

    view! {
        <header class="mp-head">
            <label class="field">
                "Memory ID"
                <select
                    data-testid="memory-id-select"
                    prop:value=current.clone()
                    on:change=move |ev| {
                        selected_row.set(None);
                        memory_id.set(Some(event_target_value(&ev)));
                    }
                >
                    {memory_ids.into_iter().map(|id| view! { <option value=id.clone() selected=id == current>{id.clone()}</option> }).collect_view()}
                </select>
            </label>
            <span class="muted">
                <Count metric="snapshot_count" value=a.snapshot_count as u64 /> " events · peak in step "
                <Text metric="peak_step_id" value=s.peak_step_id.to_string() />
            </span>
            <span class="spacer"></span>
            {move || elapsed_ms.get().map(|t| view! {
                <span class="muted" title="Time from the page's request to the worker's reply; the first request includes the analysis, later ones reuse it.">
                    "engine reply " <Text metric="memory_profile_reply_ms" value=format!("{t:.1}") shown=format!("{t:.0} ms") />
                </span>
            })}
        </header>

        <div class="summary-cards" data-testid="memory-summary">
            <div class="card"><div class="label">"Allocations"</div><div class="value"><Count metric="allocations" value=c.allocations /></div>{(c.allocations != c.sampled_allocations).then(|| view! { <div class="sub" title="XProf's page counts only its 1,000 sampled points">"XProf: " <Count metric="xprof_sampled_allocations" value=c.sampled_allocations /> " (sampled)"</div> })}</div>
            <div class="card"><div class="label">"Deallocations"</div><div class="value"><Count metric="deallocations" value=c.deallocations /></div>{(c.deallocations != c.sampled_deallocations).then(|| view! { <div class="sub" title="XProf's page counts only its 1,000 sampled points">"XProf: " <Count metric="xprof_sampled_deallocations" value=c.sampled_deallocations /> " (sampled)"</div> })}</div>
            {(!a.zero_bytes).then(|| view! {
                <div class="card"><div class="label">"Peak heap"</div><div class="value"><Bytes metric="peak_heap_bytes" value=s.peak_stats.heap_allocated_bytes /></div></div>
                <div class="card"><div class="label">"Peak stack"</div><div class="value"><Bytes metric="peak_stack_bytes" value=s.peak_stats.stack_reserved_bytes /></div></div>
                <div class="card"><div class="label">"Peak time"</div><div class="value"><Text metric="peak_time_ps" value=s.peak_stats_time_ps.to_string() shown=ms(s.peak_stats_time_ps) /></div></div>
                <div class="card"><div class="label">"Capacity"</div><div class="value"><Bytes metric="memory_capacity_bytes" value=s.memory_capacity_bytes /></div></div>
                <div class="card"><div class="label">"Peak fragmentation"</div><div class="value"><Text metric="fragmentation_at_peak" value=s.peak_stats.fragmentation.to_string() shown=percent(s.peak_stats.fragmentation) /></div></div>
                <div class="card"><div class="label">"Lifetime peak"</div><div class="value"><Bytes metric="peak_bytes_usage_lifetime" value=s.peak_bytes_usage_lifetime /></div></div>
            })}
        </div>

        {if a.zero_bytes {
            view! { <ZeroBytes a=a.clone() /> }.into_any()
        } else {
            view! {
                <TimelineChart file_id a=a.clone() selected_row />
                <Breakdown name a=a.clone() selected_row />
                <LeakHintsSection a=a.clone() />
            }.into_any()
        }}
    }
}

/// Events with every byte count zero: counts are real, sizes are not recorded.
#[component]
fn ZeroBytes(a: Arc<AllocatorView>) -> impl IntoView {
    view! {
        <div class="mp-empty" data-testid="memory-profile-empty" data-reason="zero_bytes">
            <p>
                <strong>"The allocator " <code>{a.memory_id.clone()}</code> " recorded its events without sizes"</strong>
                ": every byte count in them is zero, so there is no timeline or peak to show — only the counts above."
            </p>
            <p class="muted">
                "TensorFlow's default CPU allocator does this. Profile again with " <code>"TF_CPU_ALLOCATOR_USE_BFC=true"</code>
                " set before TensorFlow starts, or on a GPU, to get real sizes."
            </p>
        </div>
    }
}

/// Zooming: the visible range `v` kept inside the profile and at least [`MIN_SPAN_PS`] wide, or
/// `None` for the whole profile.
fn zoomed(full: (i64, i64), v: Viewport) -> Option<(i64, i64)> {
    let v = v.within(Viewport::x_range(full.0 as f64, full.1 as f64), MIN_SPAN_PS as f64, 0.0);
    let range = (v.x0.round() as i64, v.x1.round() as i64);
    (range != full).then_some(range)
}

#[component]
fn TimelineChart(file_id: u32, a: Arc<AllocatorView>, selected_row: RwSignal<Option<usize>>) -> impl IntoView {
    let state = expect_context::<AppState>();
    let full = (a.first_time_ps, a.last_time_ps.max(a.first_time_ps + MIN_SPAN_PS));
    let zoom = RwSignal::new(None::<(i64, i64)>);
    let window = RwSignal::new(None::<Arc<TimelineWindow>>);
    let hover = RwSignal::new(None::<usize>);
    let pointer = RwSignal::new((0.0f64, 0.0f64));
    let drag = RwSignal::new(None::<(f64, f64)>);
    let show_free = RwSignal::new(false);
    let width = RwSignal::new(0.0f64);
    let canvas_ref = NodeRef::<leptos::html::Canvas>::new();
    let wrap_ref = NodeRef::<leptos::html::Div>::new();

    let range = move || zoom.get().unwrap_or(full);
    // The events on screen: the zoomed window once it arrived, else XProf's sampled timeline.
    let sampled = StoredValue::new(a.clone());
    let with_events = move |f: &mut dyn FnMut(&[TimelineEvent])| match (zoom.get(), window.get()) {
        (Some(z), Some(w)) if (w.start_ps, w.end_ps) == z => f(&w.events),
        _ => sampled.with_value(|a| f(&a.timeline)),
    };
    let frame = move || timeline::frame(width.get(), CHART_HEIGHT, range().0, range().1);

    // Follow the container's width, as every chart does.
    Effect::new(move |_| {
        if let Some(el) = wrap_ref.get() {
            observe_width(&el, move |w| width.set(w));
        }
    });

    // Zoomed: ask for the full-resolution events of the range (about two per pixel).
    let memory_id = a.memory_id.clone();
    Effect::new(move |_| {
        hover.set(None);
        let Some((start_ps, end_ps)) = zoom.get() else { return };
        let max_points = (width.get_untracked() * 2.0).max(500.0) as usize;
        let body = RequestBody::MemoryTimeline { file_id, memory_id: memory_id.clone(), start_ps, end_ps, max_points };
        engine_client::request(body, memory_id.clone(), move |reply| {
            if let ResponseBody::MemoryTimeline { window: w } = reply {
                if zoom.try_get_untracked() == Some(Some((w.start_ps, w.end_ps))) {
                    window.try_set(Some(Arc::from(w)));
                }
            }
        });
    });

    // Draw whenever anything shown changes (theme included: colours come from CSS).
    let a3 = a.clone();
    Effect::new(move |_| {
        let _theme = state.theme.get();
        let unit = state.unit.get();
        let f = frame();
        let Some(canvas) = canvas_ref.get() else { return };
        if f.w <= 0.0 {
            return;
        }
        let Some(ctx) = prepare(&canvas, f.w, f.h) else { return };
        let lifetimes = selected_row.get().and_then(|i| a3.breakdown.get(i)).map(|r| r.lifetimes.as_slice()).unwrap_or(&[]);
        let palette = Palette::read();
        let (hover, drag, show_free) = (hover.get(), drag.get(), show_free.get());
        with_events(&mut |events| {
            let scene = Scene {
                events,
                peak_time_ps: a3.summary.peak_stats_time_ps,
                peak_bytes: a3.summary.peak_stats.peak_bytes_in_use,
                lifetimes,
                hover,
                drag,
                show_free,
                unit,
            };
            timeline::draw(&ctx, &f, &scene, &palette);
        });
    });

    let on_move = move |e: web_sys::MouseEvent| {
        let (x, y) = (f64::from(e.offset_x()), f64::from(e.offset_y()));
        pointer.set((x, y));
        let f = frame();
        if let Some((x0, _)) = drag.get_untracked() {
            drag.set(Some((x0, x)));
        }
        let mut found = None;
        if f.in_plot(x, y) {
            with_events(&mut |events| found = timeline::event_at(events, timeline::time_at(&f, x)));
        }
        if hover.get_untracked() != found {
            hover.set(found);
        }
    };
    let on_down = move |e: web_sys::MouseEvent| {
        let (x, y) = (f64::from(e.offset_x()), f64::from(e.offset_y()));
        if e.button() == 0 && frame().in_plot(x, y) {
            drag.set(Some((x, x)));
        }
    };
    let on_up = move |_: web_sys::MouseEvent| {
        if let Some((x0, x1)) = drag.get_untracked() {
            drag.set(None);
            if (x1 - x0).abs() >= 5.0 {
                let f = frame();
                let (t0, t1) = (timeline::time_at(&f, x0.min(x1)), timeline::time_at(&f, x0.max(x1)));
                zoom.set(zoomed(full, Viewport::x_range(t0 as f64, t1 as f64)));
            }
        }
    };
    let on_wheel = move |e: web_sys::WheelEvent| {
        let f = frame();
        let x = f64::from(e.offset_x());
        if e.delta_y() == 0.0 || !f.in_plot(x, f64::from(e.offset_y())) {
            return;
        }
        e.prevent_default();
        zoom.set(zoomed(full, f.wheel(x, f64::from(e.offset_y()), e.delta_y(), true, false)));
    };
    let on_key = move |e: web_sys::KeyboardEvent| {
        let Some(nav) = key_nav(&e.key()) else { return };
        e.prevent_default();
        let f = frame();
        zoom.set(zoomed(full, f.v.key(nav, Viewport::x_range(full.0 as f64, full.1 as f64), false)));
    };

    // Hover details, from the hovered event.
    let a4 = a.clone();
    let tooltip = move || {
        let i = hover.get()?;
        let mut event = None;
        with_events(&mut |events| event = events.get(i).cloned());
        let e = event?;
        let (x, y) = pointer.get();
        let left = if x + 300.0 > width.get() { x - 300.0 } else { x + 14.0 };
        let m = &e.activity;
        let st = e.point.stats;
        let is_peak =
            e.point.time_offset_ps == a4.summary.peak_stats_time_ps && st.in_use_bytes() == a4.summary.peak_stats.peak_bytes_in_use;
        Some(view! {
            <div class="mp-tooltip" data-testid="timeline-tooltip" style=format!("left:{left:.0}px;top:{:.0}px", (y + 14.0).min(CHART_HEIGHT - 40.0))>
                <div class="tt-head">
                    <Text metric="hover_activity" value=format!("{:?}", m.activity).to_lowercase() shown=if m.activity == Activity::Allocation { "Allocation" } else { "Deallocation" }.to_string() />
                    " at " <Text metric="hover_time_ps" value=e.point.time_offset_ps.to_string() shown=ms(e.point.time_offset_ps) />
                    {is_peak.then_some(" · peak")}
                </div>
                <div class="tt-op"><Text metric="hover_op" value=m.tf_op_name.clone() shown=if m.tf_op_name.is_empty() { "(no op)".to_string() } else { m.tf_op_name.clone() } /></div>
                <dl>
                    <dt>"Size"</dt><dd><Bytes metric="hover_allocation_bytes" value=m.allocation_bytes /> " (requested " <Bytes metric="hover_requested_bytes" value=m.requested_bytes /> ")"</dd>
                    <dt>"Shape"</dt><dd><Text metric="hover_shape" value=m.tensor_shape.clone() /> " " <Text metric="hover_dtype" value=m.data_type.clone() /></dd>
                    <dt>"Region"</dt><dd><Text metric="hover_region" value=m.region_type.clone() /></dd>
                    <dt>"Step"</dt><dd><Text metric="hover_step" value=m.step_id.to_string() /></dd>
                    <dt>"Heap"</dt><dd><Bytes metric="hover_heap_bytes" value=st.heap_allocated_bytes /> " + stack " <Bytes metric="hover_stack_bytes" value=st.stack_reserved_bytes /></dd>
                    <dt>"Free"</dt><dd><Bytes metric="hover_free_bytes" value=st.free_memory_bytes /> " · frag. " <Text metric="hover_fragmentation" value=st.fragmentation.to_string() shown=percent(st.fragmentation) /></dd>
                </dl>
            </div>
        })
    };

    let a5 = a.clone();
    let status = move || {
        let points = {
            let mut n = 0;
            with_events(&mut |events| n = events.len());
            n
        };
        match (zoom.get(), window.get()) {
            (Some(z), Some(w)) if (w.start_ps, w.end_ps) == z => {
                let full_res = w.events.len() == w.event_count;
                view! {
                    <span data-testid="timeline-status" data-zoomed="true" data-full-resolution=full_res.to_string()>
                        {format!("{:.1}–{:.1} ms · ", z.0 as f64 / 1e9, z.1 as f64 / 1e9)} <Count metric="timeline_window_events" value=w.event_count as u64 /> " events"
                        {if full_res { ", full resolution".to_string() } else { format!(", {} points drawn (max filter)", fmt_count(points as u64)) }}
                    </span>
                }.into_any()
            }
            (Some(z), _) => view! { <span data-testid="timeline-status" data-zoomed="loading">{format!("{:.1}–{:.1} ms · loading full resolution…", z.0 as f64 / 1e9, z.1 as f64 / 1e9)}</span> }.into_any(),
            (None, _) => view! {
                <span data-testid="timeline-status" data-zoomed="false">
                    "XProf's " <Count metric="timeline_points" value=points as u64 /> " sampled points of " {fmt_count(a5.snapshot_count as u64)} " events"
                </span>
            }.into_any(),
        }
    };

    view! {
        <section class="mp-timeline">
            <h2>"Memory timeline"</h2>
            <div class="mp-chart-bar">
                <span class="legend">
                    <span class="sw heap"></span>"Heap"
                    <span class="sw stack"></span>"Stack"
                    <label title="Free memory of the allocator; often far larger than what is in use, so it is off by default">
                        <input type="checkbox" data-testid="show-free" prop:checked=move || show_free.get() on:change=move |ev| show_free.set(event_target_checked(&ev)) />
                        <span class="sw free"></span>"Free"
                    </label>
                    <span class="sw frag"></span>"Fragmentation (right axis)"
                    <span class="sw peak"></span>"Peak"
                    {move || selected_row.get().map(|_| view! { <span class="sw life"></span>"Selected row's lifetimes" })}
                </span>
                <span class="spacer"></span>
                <span class="muted">{status}</span>
                <button class="btn" data-testid="zoom-reset" disabled=move || zoom.get().is_none() on:click=move |_| zoom.set(None)>"Reset zoom"</button>
            </div>
            <div class="mp-chart" node_ref=wrap_ref>
                <canvas
                    node_ref=canvas_ref
                    data-testid="timeline-canvas"
                    // The visible range and plot edges, so tests (and scripts) can aim at a time.
                    data-start-ps=move || range().0.to_string()
                    data-end-ps=move || range().1.to_string()
                    data-plot-left=move || frame().plot_left().to_string()
                    data-plot-right=move || frame().plot_right().to_string()
                    tabindex="0"
                    aria-label="Memory timeline. Drag or scroll to zoom, W/S zoom, A/D pan, double-click or 0 resets."
                    style=move || format!("width:{}px;height:{CHART_HEIGHT}px", width.get())
                    on:mousemove=on_move
                    on:mousedown=on_down
                    on:mouseup=on_up
                    on:mouseleave=move |_| { hover.set(None); drag.set(None); }
                    on:wheel=on_wheel
                    on:dblclick=move |_| zoom.set(None)
                    on:keydown=on_key
                ></canvas>
                {tooltip}
            </div>
            <p class="hint muted">"Drag or scroll to zoom into the full-resolution timeline · W/S zoom, A/D pan · double-click or 0 resets · click a row below to draw its lifetime"</p>
        </section>
    }
}

/// The rows live at the peak, as XProf orders them until a column is sorted; a click on a row draws
/// its allocation's lifetimes on the timeline.
#[component]
fn Breakdown(name: String, a: Arc<AllocatorView>, selected_row: RwSignal<Option<usize>>) -> impl IntoView {
    let hide_small = RwSignal::new(false);
    let text = |metric: &'static str, value: &str, k: usize| view! { <Text metric value=value.to_string() key=k.to_string() /> };
    let columns: Vec<Column<BreakdownEntry>> = vec![
        Column::new("op", "Op name", |r: &BreakdownEntry, k| {
            let op = &r.metadata.tf_op_name;
            let shown = if op.is_empty() { "(no op)".to_string() } else { op.clone() };
            view! { <span class:muted=op.is_empty() title=op.clone()><Text metric="row_op" value=op.clone() key=k.to_string() shown /></span> }.into_any()
        })
        .class("op")
        .sort_key(|r| r.metadata.tf_op_name.clone())
        .csv("op_name", |r| r.metadata.tf_op_name.clone()),
        Column::new("allocation_bytes", "Allocation size", |r: &BreakdownEntry, k| view! { <Bytes metric="row_allocation_bytes" value=r.metadata.allocation_bytes key=k.to_string() /> }.into_any())
            .right()
            .width("130px")
            .sort_key(|r| r.metadata.allocation_bytes)
            .csv("allocation_bytes", |r| r.metadata.allocation_bytes.to_string()),
        Column::new("requested_bytes", "Requested size", |r: &BreakdownEntry, k| view! { <Bytes metric="row_requested_bytes" value=r.metadata.requested_bytes key=k.to_string() /> }.into_any())
            .right()
            .width("130px")
            .sort_key(|r| r.metadata.requested_bytes)
            .csv("requested_bytes", |r| r.metadata.requested_bytes.to_string()),
        Column::new("occurrences", "Occurrences", |r: &BreakdownEntry, k| view! { <Count metric="row_occurrences" value=r.occurrences key=k.to_string() /> }.into_any())
            .right()
            .width("115px")
            .sort_key(|r| r.occurrences)
            .csv("occurrences", |r| r.occurrences.to_string()),
        Column::new("freed_before_peak", "Freed before peak", |r: &BreakdownEntry, k| {
            view! { <span class:muted=r.freed_before_peak == 0><Count metric="row_freed_before_peak" value=r.freed_before_peak key=k.to_string() /></span> }.into_any()
        })
        .right()
        .width("150px")
        .sort_key(|r| r.freed_before_peak)
        .csv("freed_before_peak", |r| r.freed_before_peak.to_string()),
        Column::new("region", "Region", move |r: &BreakdownEntry, k| view! { <span title=r.metadata.region_type.clone()>{text("row_region", &r.metadata.region_type, k)}</span> }.into_any())
            .width("110px")
            .sort_key(|r| r.metadata.region_type.clone())
            .csv("region_type", |r| r.metadata.region_type.clone()),
        Column::new("data_type", "Data type", move |r: &BreakdownEntry, k| view! { <span title=r.metadata.data_type.clone()>{text("row_data_type", &r.metadata.data_type, k)}</span> }.into_any())
            .width("100px")
            .sort_key(|r| r.metadata.data_type.clone())
            .csv("data_type", |r| r.metadata.data_type.clone()),
        Column::new("shape", "Shape", move |r: &BreakdownEntry, k| view! { <code title=r.metadata.tensor_shape.clone()>{text("row_shape", &r.metadata.tensor_shape, k)}</code> }.into_any())
            .width("140px")
            .sort_key(|r| r.metadata.tensor_shape.clone())
            .csv("shape", |r| r.metadata.tensor_shape.clone()),
    ];
    let export_name =
        format!("{}.{}.breakdown.csv", name.trim_end_matches(".gz").trim_end_matches(".pb").trim_end_matches(".xplane"), a.memory_id);
    let spec = TableSpec::new("mp-table", columns)
        .testid("breakdown")
        .filter("Filter op, region, type, shape", "breakdown-filter", |r: &BreakdownEntry| r.metadata.strings().to_vec())
        .keep(move |r: &BreakdownEntry| !hide_small.get() || r.metadata.requested_bytes as f64 >= SMALL_ROW_BYTES)
        .counts("breakdown-count", "breakdown_rows_shown", "breakdown_rows")
        .csv(export_name, "export-csv")
        .row_attrs(|_, i| vec![("data-row", i.to_string())])
        .row_class(|r: &BreakdownEntry| if r.lifetimes.is_empty() { "" } else { "selectable" })
        .row_title(|r: &BreakdownEntry| {
            if r.lifetimes.is_empty() {
                "A computed row: no single allocation to draw"
            } else {
                "Click to draw this allocation's lifetime on the timeline"
            }
            .to_string()
        })
        .pick(selected_row);
    view! {
        <section class="mp-breakdown">
            <h2>"Live at the peak"</h2>
            <Table spec rows=Arc::new(a.breakdown.clone())>
                <label class="field" title="XProf's page hides rows requesting less than 0.001 GiB">
                    <input type="checkbox" data-testid="hide-small" prop:checked=move || hide_small.get() on:change=move |ev| hide_small.set(event_target_checked(&ev)) />
                    "Hide rows under 0.001 GiB requested (as XProf)"
                </label>
            </Table>
            <p class="hint muted">
                <strong>"Freed before peak"</strong>
                " is Tidemark's: allocations XProf lists as live at the peak although a deallocation before the peak freed them. XProf replays only the peak's step, and steps overlap in time (input pipeline, next step), so it misses those frees; the other columns are XProf's."
            </p>
        </section>
    }
}

#[component]
fn LeakHintsSection(a: Arc<AllocatorView>) -> impl IntoView {
    let h = a.leaks.clone();
    let c = a.counts;
    let first_step = h.step_floors.first().map(|f| f.step_id);
    let last_step = h.step_floors.last().map(|f| f.step_id);
    let steps = h.step_floors.len();
    let columns = vec![
        Column::new("op", "Op", |g: &LiveOpGroup, _| {
            view! { <code title=g.tf_op_name.clone()>{if g.tf_op_name.is_empty() { "(no op)".to_string() } else { g.tf_op_name.clone() }}</code> }.into_any()
        })
        .class("op")
        .sort_key(|g| g.tf_op_name.clone()),
        Column::new("allocations", "Allocations", |g: &LiveOpGroup, _| {
            view! { <Count metric="live_at_end_allocations" value=g.allocations key=g.tf_op_name.clone() /> }.into_any()
        })
        .right()
        .width("110px")
        .sort_key(|g| g.allocations),
        Column::new("bytes", "Bytes", |g: &LiveOpGroup, _| {
            view! { <Bytes metric="live_at_end_op_bytes" value=g.allocation_bytes key=g.tf_op_name.clone() /> }.into_any()
        })
        .right()
        .width("110px")
        .sort_key(|g| g.allocation_bytes),
    ];
    let live_ops = TableSpec::new("mp-live", columns)
        .filter("Filter ops", "live-at-end-filter", |g: &LiveOpGroup| vec![g.tf_op_name.as_str()])
        .max_height(320.0);
    view! {
        <section class="mp-leaks" data-testid="leak-hints">
            <h2>"Leak hints"</h2>
            <p>
                "In the profiled window: " <Count metric="allocations" value=c.allocations key="window" /> " allocations ("
                <Bytes metric="window_allocated_bytes" value=h.allocated_bytes /> ") and " <Count metric="deallocations" value=c.deallocations key="window" />
                " deallocations (" <Bytes metric="window_deallocated_bytes" value=h.deallocated_bytes /> ")"
                {(h.unmatched_deallocations > 0).then(|| view! {
                    "; " <Count metric="unmatched_deallocations" value=h.unmatched_deallocations /> " deallocations free memory allocated before the window"
                })}
                "."
            </p>
            {if h.heap_grows_every_step {
                view! {
                    <p class="notes" data-testid="heap-grows">
                        "Heap grows step over step: the lowest usage of each of the " {steps} " steps ("
                        {first_step} "–" {last_step} ") is above the previous step's, "
                        <Bytes metric="floor_growth_bytes" value=h.floor_growth_bytes /> " from first to last. Memory retained every step is a leak or a cache still warming up."
                    </p>
                }.into_any()
            } else {
                view! {
                    <p class="muted" data-testid="heap-steady">
                        "Lowest usage per step does not rise every step (" {steps} " steps; first to last "
                        <Bytes metric="floor_growth_bytes" value=h.floor_growth_bytes /> ")."
                    </p>
                }.into_any()
            }}
            <p>
                "Still live at the end of the window: " <Bytes metric="live_at_end_bytes" value=h.live_at_end_bytes /> " in "
                <Count metric="live_at_end_groups" value=h.live_at_end.len() as u64 /> " op(s):"
            </p>
            <Table spec=live_ops rows=Arc::new(h.live_at_end.clone()) />
        </section>
    }
}
