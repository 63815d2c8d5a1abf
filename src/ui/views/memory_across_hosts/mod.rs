//! Memory across hosts: every allocator of every host of the selected run in one table, closest to
//! its capacity first, each with a small timeline; the timelines share one time axis (the run's,
//! from its earliest host start) and one crosshair, and the table shows every row's bytes at the
//! crosshair's time. A row opens that host's Memory Profile on that allocator. Every figure is the
//! engine's ([`crate::engine::memory_across_hosts`]); this view lays them out and maps times to pixels.

use crate::engine::memory_across_hosts::{HostAllocator, MemoryAcrossHosts};
use crate::engine::protocol::request;
use crate::engine::FileDetails;
use crate::ui::charts::axis::{decimals, x_axis, Style};
use crate::ui::charts::viewport::{Frame, Margins, Viewport};
use crate::ui::charts::{observe_width, prepare, Palette};
use crate::ui::components::metric::{Bytes, Count, Duration, Percent, Text};
use crate::ui::state::{AppState, Tool};
use crate::ui::use_engine::{use_engine, Reply};
use leptos::prelude::*;
use std::sync::Arc;

/// CSS height of one row's timeline, and of the shared axis above them.
const ROW_H: f64 = 34.0;
const AXIS_H: f64 = 22.0;

#[component]
pub fn MemoryAcrossHostsView(file_id: u32, details: FileDetails) -> impl IntoView {
    let state = expect_context::<AppState>();
    let fetch = use_engine("Memory across hosts", move || {
        // The selected file's run: every ready host (one file alone is a run of one host).
        let ids = state.selected_run_ids();
        Some(request::MemoryAcrossHosts { file_ids: if ids.is_empty() { vec![file_id] } else { ids } })
    });
    let data_state = move || match fetch.reply.get() {
        Reply::Waiting => "loading",
        Reply::Ready(_) => "ready",
        Reply::Failed(_) | Reply::Rejected(_) => "failed",
    };
    view! {
        <article class="hostmem" data-file=details.path.clone() data-testid="memory-across-hosts" data-state=data_state>
            {move || match fetch.reply.get() {
                Reply::Waiting => view! { <p class="muted loading">"Reading every host's allocator events…"</p> }.into_any(),
                Reply::Failed(error) => view! { <p class="fos-empty" data-testid="hostmem-error">{error.detail()}</p> }.into_any(),
                Reply::Rejected(message) => view! { <p class="fos-empty" data-testid="hostmem-error">{message}</p> }.into_any(),
                Reply::Ready(v) => view! { <Page v /> }.into_any(),
            }}
        </article>
    }
}

/// The run's time axis in seconds from its origin, and a row's timeline on it.
fn frame(v: &MemoryAcrossHosts, width: f64, height: f64, bottom: f64) -> Frame {
    let (x0, x1) = (v.start_ps as f64 / 1e12, v.end_ps as f64 / 1e12);
    let x1 = if x1 > x0 { x1 } else { x0 + 1e-6 };
    Frame { v: Viewport { x0, x1, y0: 0.0, y1: 1.0 }, w: width, h: height, m: Margins { left: 4.0, right: 4.0, top: 3.0, bottom } }
}

/// The bytes of `a` at `time_ps`: its last timeline point at or before it; `None` outside its events
/// (before the first, or after the last: the host's profile had ended).
fn bytes_at(a: &HostAllocator, time_ps: i64) -> Option<i64> {
    if a.timeline.last().is_none_or(|p| time_ps > p.0) {
        return None;
    }
    let i = a.timeline.partition_point(|p| p.0 <= time_ps);
    i.checked_sub(1).map(|i| a.timeline[i].1)
}

/// The table and its timelines.
#[component]
fn Page(v: Arc<MemoryAcrossHosts>) -> impl IntoView {
    let state = expect_context::<AppState>();
    if v.allocators.is_empty() {
        return view! {
            <div class="fos-empty" data-testid="hostmem-empty">
                <p><strong>"No allocator events on any host of this run."</strong></p>
                <p class="muted">"Allocator events come from TensorFlow's and JAX's host traces recorded with memory tracing; HLO modules and pprof files have none."</p>
            </div>
        }
        .into_any();
    }
    // The crosshair's time, ps on the run's axis, shared by every row; and the timelines' width.
    let cursor = RwSignal::new(None::<i64>);
    let width = RwSignal::new(0.0f64);
    let hosts = {
        let mut h: Vec<&str> = v.allocators.iter().map(|a| a.path.as_str()).collect();
        h.sort_unstable();
        h.dedup();
        h.len() as u64
    };
    let axis_wrap = NodeRef::<leptos::html::Div>::new();
    let axis = NodeRef::<leptos::html::Canvas>::new();
    Effect::new(move |_| {
        if let Some(el) = axis_wrap.get() {
            observe_width(&el, move |w| width.set(w));
        }
    });
    {
        let v = v.clone();
        Effect::new(move |_| {
            let _theme = state.theme.get();
            let Some(c) = axis.get() else { return };
            let w = width.get();
            let Some(ctx) = prepare(&c, w, AXIS_H) else { return };
            let f = frame(&v, w, AXIS_H, AXIS_H - 4.0);
            x_axis(&ctx, &f, &Palette::read(), Style::default(), |t, step| format!("{t:.*} s", decimals(step)));
        });
    }
    let on_move = {
        let v = v.clone();
        move |ev: web_sys::MouseEvent| {
            let f = frame(&v, width.get_untracked(), ROW_H, 3.0);
            let t = f.dx(f64::from(ev.offset_x())).clamp(f.v.x0, f.v.x1);
            cursor.set(Some((t * 1e12).round() as i64));
        }
    };
    let readout = move || {
        cursor
            .get()
            .map(|t| view! { <span class="muted">" · cursor at " <Duration metric="cursor_time_us" value_us=t as f64 / 1e6 /></span> })
    };
    let rows = v
        .allocators
        .iter()
        .cloned()
        .map(|a| view! { <Row a=Arc::new(a) v=v.clone() cursor width on_move=on_move.clone() /> })
        .collect_view();
    let without = (!v.without_memory.is_empty()).then(|| {
        view! { <p class="muted" data-testid="hostmem-without">"No allocator events: " {v.without_memory.join(", ")}</p> }
    });
    view! {
        <div class="fos-summary">
            <span><Count metric="allocators" value=v.allocators.len() as u64 /> " allocators on " <Count metric="hosts" value=hosts /> " hosts"</span>
            <span class="muted">"closest to capacity first; times from the run's earliest host start"</span>
            {readout}
        </div>
        {without}
        <table class="hostmem-table" on:mouseleave=move |_| cursor.set(None)>
            <thead>
                <tr>
                    <th>"Host"</th>
                    <th class="hostmem-allocator">"Allocator"</th>
                    <th class="r">"Peak"</th>
                    <th class="r">"Capacity"</th>
                    <th class="r">"Peak / capacity"</th>
                    <th class="r">"Time of peak"</th>
                    <th class="r" title="Bytes in use at the crosshair's time">"At cursor"</th>
                    <th class="hostmem-spark">
                        <div node_ref=axis_wrap class="hostmem-axis">
                            <canvas node_ref=axis role="img" aria-label="The run's time axis"></canvas>
                        </div>
                    </th>
                </tr>
            </thead>
            <tbody>{rows}</tbody>
        </table>
    }
    .into_any()
}

/// Modules named under an allocator's peak (the largest).
const PEAK_MODULES: usize = 3;

/// One allocator: its figures, and its timeline scaled to its own peak with the shared crosshair.
#[component]
fn Row(
    a: Arc<HostAllocator>,
    v: Arc<MemoryAcrossHosts>,
    cursor: RwSignal<Option<i64>>,
    width: RwSignal<f64>,
    on_move: impl Fn(web_sys::MouseEvent) + Clone + Send + Sync + 'static,
) -> impl IntoView {
    let state = expect_context::<AppState>();
    let canvas = NodeRef::<leptos::html::Canvas>::new();
    let key = format!("{}|{}", a.host, a.memory_id);
    {
        let a = a.clone();
        Effect::new(move |_| {
            let _theme = state.theme.get();
            let at = cursor.get();
            let Some(c) = canvas.get() else { return };
            draw_row(&c, &v, &a, width.get(), at);
        });
    }
    let open = {
        let (path, memory_id) = (a.path.clone(), a.memory_id.clone());
        move |_| {
            state.all_hosts.set(false);
            state.selected.set(Some(path.clone()));
            state.tool.set(Tool::MemoryProfile);
            // Choosing another file forgets its memory ID (an effect): name this one after it has run.
            let memory_id = memory_id.clone();
            request_animation_frame(move || state.memory_id.set(Some(memory_id)));
        }
    };
    let at_cursor = {
        let (a, key) = (a.clone(), key.clone());
        move || match cursor.get().and_then(|t| bytes_at(&a, t)) {
            Some(b) => view! { <Bytes metric="bytes_at_cursor" value=b key=key.clone() /> }.into_any(),
            None => view! { <span class="muted">"–"</span> }.into_any(),
        }
    };
    let capacity = match a.capacity_bytes {
        Some(c) => view! { <Bytes metric="capacity_bytes" value=c key=key.clone() /> }.into_any(),
        None => view! { <span class="muted" data-metric="capacity_bytes" data-key=key.clone() data-value="" title="The allocator reports no free bytes: no limit in the trace">"—"</span> }.into_any(),
    };
    let fraction = match a.peak_fraction {
        Some(f) => view! { <Percent metric="peak_fraction" value=f key=key.clone() /> }.into_any(),
        None => view! { <span class="muted" data-metric="peak_fraction" data-key=key.clone() data-value="">"—"</span> }.into_any(),
    };
    // The peak by module, where the host's allocations are named (JAX's): who holds the peak.
    let peak_modules = (!a.peak_by_module.is_empty()).then(|| {
        let parts = a
            .peak_by_module
            .iter()
            .take(PEAK_MODULES)
            .enumerate()
            .map(|(i, (m, b))| {
                let label = if m.is_empty() { "no module".to_string() } else { m.clone() };
                view! { {(i > 0).then_some(" · ")} {label} " " <Bytes metric="host_peak_module_bytes" value=*b key=format!("{key}|{m}") /> }
            })
            .collect_view();
        let more = a.peak_by_module.len().saturating_sub(PEAK_MODULES);
        // One line, ellipsized in a narrow cell; the tooltip has every module, in the page's unit.
        let modules = a.peak_by_module.clone();
        let title = move || {
            let unit = state.unit.get();
            let parts: Vec<String> =
                modules.iter().map(|(m, b)| format!("{} {}", if m.is_empty() { "no module" } else { m }, unit.format(*b))).collect();
            format!("peak: {}", parts.join(" · "))
        };
        view! { <div class="muted small hostmem-modules" data-testid="hostmem-peak-modules" title=title>"peak: " {parts} {(more > 0).then(|| format!(" · {more} more"))}</div> }
    });
    view! {
        <tr class="hostmem-row" data-host=a.host.clone() data-memory-id=a.memory_id.clone() data-file=a.path.clone() on:click=open title="Open this host's Memory Profile on this allocator">
            <td><Text metric="host" value=a.host.clone() key=key.clone() /></td>
            <td class="mono"><Text metric="memory_id" value=a.memory_id.clone() key=key.clone() />{peak_modules}</td>
            <td class="r"><Bytes metric="peak_bytes" value=a.peak_bytes key=key.clone() /></td>
            <td class="r">{capacity}</td>
            <td class="r">{fraction}</td>
            <td class="r"><Duration metric="peak_time_us" value_us=a.peak_time_ps as f64 / 1e6 key=key.clone() /></td>
            <td class="r">{at_cursor}</td>
            <td class="hostmem-spark">
                <canvas node_ref=canvas role="img" aria-label=format!("{} on {}: bytes in use through the run", a.memory_id, a.host) on:mousemove=on_move></canvas>
            </td>
        </tr>
    }
}

/// `a`'s timeline as a filled step line scaled to its peak, its peak marked, the crosshair at `at`.
fn draw_row(canvas: &web_sys::HtmlCanvasElement, v: &MemoryAcrossHosts, a: &HostAllocator, width: f64, at: Option<i64>) {
    let Some(ctx) = prepare(canvas, width, ROW_H) else { return };
    let pal = Palette::read();
    let f = frame(v, width, ROW_H, 3.0);
    let f = Frame { v: Viewport { y1: a.peak_bytes.max(1) as f64, ..f.v }, ..f };
    let x = |ps: i64| f.sx(ps as f64 / 1e12);
    let accent = pal.var(if a.peak_fraction.is_some_and(|p| p >= 0.9) { "--error-fg" } else { "--accent" });
    ctx.set_fill_style_str(&pal.border);
    ctx.fill_rect(f.plot_left(), f.plot_bottom().round(), f.plot_w(), 1.0);
    if let Some(first) = a.timeline.first() {
        ctx.begin_path();
        ctx.move_to(x(first.0), f.sy(0.0));
        let mut last_y = f.sy(0.0);
        for p in &a.timeline {
            ctx.line_to(x(p.0), last_y);
            last_y = f.sy(p.1 as f64);
            ctx.line_to(x(p.0), last_y);
        }
        let end = a.timeline.last().map_or(first.0, |p| p.0);
        ctx.line_to(x(end), f.sy(0.0));
        ctx.close_path();
        ctx.set_global_alpha(0.35);
        ctx.set_fill_style_str(&accent);
        ctx.fill();
        ctx.set_global_alpha(1.0);
        ctx.set_stroke_style_str(&accent);
        ctx.set_line_width(1.0);
        ctx.stroke();
        ctx.set_fill_style_str(&pal.fg);
        ctx.begin_path();
        let _ = ctx.arc(x(a.peak_time_ps), f.sy(a.peak_bytes as f64), 2.5, 0.0, std::f64::consts::TAU);
        ctx.fill();
    }
    if let Some(t) = at {
        ctx.set_fill_style_str(&pal.fg);
        ctx.fill_rect(x(t).round(), 0.0, 1.0, ROW_H);
    }
}
