//! The allocator's state at an event: its figures (reserved, allocated, pending free, free and how
//! fragmented) and its segments drawn as bars, one per segment at one scale, each block at its place
//! in its segment; hovering a block names it. The state at the dump is the one after the last event;
//! the chosen event's is asked as the user picks it on the timeline or types it.

use super::*;
use crate::analysis::torch_snapshot::{AllocatorState, SegmentState};
use crate::ui::charts::plot::redraw;
use crate::ui::charts::{font, prepare, Palette};
use crate::ui::components::metric::Percent;

/// One segment's row: its height and the gap below it, and the room left of the bars for its size.
const ROW_H: f64 = 14.0;
const ROW_GAP: f64 = 3.0;
const LABEL_W: f64 = 76.0;
/// The scroll box's height limit: a state of many segments scrolls.
const MAX_H: f64 = 320.0;

/// The state after `event` (-1: before the first) of `device`, under `title`; its figures keyed `key`.
#[component]
pub(super) fn StateSection(
    file_id: u32,
    device: usize,
    event: i64,
    key: &'static str,
    title: &'static str,
    note: &'static str,
) -> impl IntoView {
    let fetch = use_engine("CUDA memory snapshot state", move || Some(request::TorchSnapshotState { file_id, device, event_index: event }));
    view! {
        <section class="ts-state-section" data-testid=format!("ts-state-{key}")>
            <h2>{title}</h2>
            <p class="hint muted">{note}</p>
            {move || state_reply(fetch.reply.get(), key)}
        </section>
    }
}

/// The chosen event's state: an event box (with the peak and the dump a click away) and the state.
#[component]
pub(super) fn ChosenState(
    file_id: u32,
    device: usize,
    r: Arc<DeviceReport>,
    chosen: Signal<Option<i64>>,
    choose: Callback<i64>,
) -> impl IntoView {
    let last = r.history.trace_events as i64 - 1;
    let peak = r.peak_with_prior_event_index;
    let fetch = use_engine("CUDA memory snapshot state", move || {
        chosen.get().map(|event_index| request::TorchSnapshotState { file_id, device, event_index })
    });
    view! {
        <section class="ts-state-section" data-testid="ts-state-chosen" data-event=move || chosen.get().map(|e| e.to_string())>
            <h2>"Allocator state at an event"</h2>
            <div class="ts-controls">
                <label class="field">"Event "
                    <input type="number" data-testid="ts-event-input" min="-1" max=last.to_string()
                        prop:value=move || chosen.get().map(|e| e.to_string()).unwrap_or_default()
                        on:change=move |ev| {
                            if let Ok(e) = event_target_value(&ev).trim().parse::<i64>() {
                                choose.run(e);
                            }
                        } />
                </label>
                <span class="muted small">"−1 (before the first) to " {crate::units::count(last.max(0) as u64)}</span>
                <button class="btn" data-testid="ts-at-peak" on:click=move |_| choose.run(peak)>"The peak"</button>
                <button class="btn" data-testid="ts-at-start" on:click=move |_| choose.run(-1)>"Before the trace"</button>
                <span class="muted small">"or click a point of the timeline"</span>
            </div>
            {move || match chosen.get() {
                None => view! { <p class="muted" data-testid="ts-state-none">"No event chosen."</p> }.into_any(),
                Some(_) => state_reply(fetch.reply.get(), "chosen").into_any(),
            }}
        </section>
    }
}

fn state_reply(reply: Reply<Arc<AllocatorState>>, key: &'static str) -> impl IntoView {
    match reply {
        Reply::Waiting => view! { <p class="muted">"Undoing the trace back to the event…"</p> }.into_any(),
        Reply::Failed(e) => view! { <p class="error" data-testid="ts-state-error">{e.detail()}</p> }.into_any(),
        Reply::Rejected(m) => view! { <p class="error" data-testid="ts-state-error">{m}</p> }.into_any(),
        Reply::Ready(s) => view! { <StateView s key /> }.into_any(),
    }
}

#[component]
fn StateView(s: Arc<AllocatorState>, key: &'static str) -> impl IntoView {
    let k = || key.to_string();
    let blocks: usize = s.segments.iter().map(|g| g.blocks.len()).sum();
    view! {
        <div class="summary-cards" data-testid="ts-state" data-key=key data-event=s.event_index.to_string()>
            <div class="card"><div class="label">"After event"</div><div class="value"><Text metric="state_event_index" value=s.event_index.to_string() key=k() /></div></div>
            {card("Reserved", "state_reserved_bytes", s.reserved_bytes, key)}
            {card("Allocated", "state_allocated_bytes", s.allocated_bytes, key)}
            <div class="card" title="Freed by the program, waiting for the streams that used them"><div class="label">"Pending free"</div>
                <div class="value"><Bytes metric="state_pending_free_bytes" value=s.pending_free_bytes key=k() /></div>
                <div class="muted small"><Count metric="state_pending_free_blocks" value=s.pending_free_blocks key=k() /> " blocks"</div>
            </div>
            <div class="card" title="Reserved but in no active block"><div class="label">"Free in the cache"</div>
                <div class="value"><Bytes metric="state_free_bytes" value=s.free_bytes key=k() /></div>
                <div class="muted small">"largest piece " <Bytes metric="state_largest_free_bytes" value=s.largest_free_bytes key=k() /></div>
            </div>
            <div class="card" title="1 − largest free piece / free bytes: how little of the free space one allocation could use"><div class="label">"Fragmentation"</div>
                <div class="value"><Percent metric="state_fragmentation" value=s.fragmentation key=k() /></div>
            </div>
            <div class="card"><div class="label">"Segments · blocks"</div><div class="value">
                <Count metric="state_segments" value=s.segments.len() as u64 key=k() /> " · " <Count metric="state_blocks" value=blocks as u64 key=k() />
            </div></div>
        </div>
        <SegmentBars s key />
    }
}

/// The block under a point: segment and block indices.
type Hit = (usize, usize);

/// Every segment as a bar (one scale, the largest segment the full width), its blocks drawn where
/// they lie in it.
#[component]
fn SegmentBars(s: Arc<AllocatorState>, key: &'static str) -> impl IntoView {
    let canvas = NodeRef::<leptos::html::Canvas>::new();
    let hover = RwSignal::new(None::<(Hit, f64, f64)>);
    let unit = expect_context::<AppState>().unit;
    let height = s.segments.len() as f64 * (ROW_H + ROW_GAP) + ROW_GAP;
    let widest = s.segments.iter().map(|g| g.total_size).max().unwrap_or(1).max(1) as f64;
    let d = s.clone();
    redraw(canvas, move |c| {
        let (u, h) = (unit.get(), hover.get().map(|(h, _, _)| h));
        let w = f64::from(c.client_width());
        let Some(ctx) = prepare(c, w, height) else { return false };
        let p = Palette::read();
        let pending = p.var("--ts-pending");
        let scale = (w - LABEL_W - 8.0).max(1.0) / widest;
        ctx.set_font(&font(11));
        ctx.set_text_baseline("middle");
        ctx.set_text_align("right");
        for (i, g) in d.segments.iter().enumerate() {
            let y = ROW_GAP + i as f64 * (ROW_H + ROW_GAP);
            let bw = (g.total_size as f64 * scale).max(1.0);
            ctx.set_fill_style_str(&p.fg_2);
            let _ = ctx.fill_text(&u.format(g.total_size), LABEL_W - 6.0, y + ROW_H / 2.0);
            ctx.set_fill_style_str(&p.bg_3);
            ctx.fill_rect(LABEL_W, y, bw, ROW_H);
            for (j, b) in g.blocks.iter().enumerate() {
                let x = LABEL_W + (b.address.saturating_sub(g.address)) as f64 * scale;
                let is_pending = b.state == "active_pending_free";
                ctx.set_fill_style_str(if is_pending { &pending } else { &p.accent });
                // Neighbouring blocks stay apart by a pixel where they are wide enough to spare one.
                let bw = b.size as f64 * scale;
                ctx.fill_rect(x, y, if bw > 3.0 { bw - 1.0 } else { bw.max(1.0) }, ROW_H);
                if h == Some((i, j)) {
                    ctx.set_stroke_style_str(&p.fg);
                    ctx.stroke_rect(x + 0.5, y + 0.5, (b.size as f64 * scale).max(1.0) - 1.0, ROW_H - 1.0);
                }
            }
            ctx.set_stroke_style_str(&p.border);
            ctx.stroke_rect(LABEL_W + 0.5, y + 0.5, bw - 1.0, ROW_H - 1.0);
        }
        true
    });
    let d = s.clone();
    let on_move = move |ev: web_sys::MouseEvent| {
        let (px, py) = (f64::from(ev.offset_x()), f64::from(ev.offset_y()));
        let w = canvas.get_untracked().map_or(0.0, |c| f64::from(c.client_width()));
        let found = hit(&d.segments, (w - LABEL_W - 8.0).max(1.0) / widest, px, py);
        if hover.get_untracked().map(|(h, _, _)| h) != found || found.is_some() {
            hover.set(found.map(|h| (h, px, py)));
        }
    };
    let d = s.clone();
    let card = move || {
        let ((i, j), px, py) = hover.get()?;
        let g = d.segments.get(i)?;
        let b = g.blocks.get(j)?;
        let key = format!("{key}|{}", b.address);
        let left = if px > 520.0 { px - 330.0 } else { px + 14.0 };
        Some(view! {
            <div class="hover-card" data-testid="ts-block-card" style=format!("left:{left:.0}px;top:{:.0}px", py + 14.0)>
                <table>
                    <tr><td>"Block"</td><td><Bytes metric="block_bytes" value=b.size key=key.clone() /></td></tr>
                    <tr><td>"State"</td><td><Text metric="block_state" value=b.state.clone() key=key.clone() /></td></tr>
                    <tr><td>"Offset"</td><td><Bytes metric="block_offset_bytes" value=b.address.saturating_sub(g.address) key=key.clone() /> " of " <Bytes metric="block_segment_bytes" value=g.total_size key=key.clone() /></td></tr>
                    <tr><td>"Address"</td><td><code>{format!("{:#x}", b.address)}</code></td></tr>
                    <tr><td>"Frame"</td><td class="wrap"><code>{if b.frame.is_empty() { "(no Python frame)".to_string() } else { b.frame.clone() }}</code></td></tr>
                </table>
            </div>
        })
    };
    view! {
        <div class="ts-segments" style=format!("max-height:{MAX_H}px")>
            <div class="chart-wrap">
                <canvas node_ref=canvas class="ts-segments-canvas" data-testid="ts-segments" data-key=key data-segments=s.segments.len().to_string()
                    aria-label="Segments: one bar each, blocks at their place; hover a block for its details"
                    style=format!("height:{height}px")
                    on:mousemove=on_move on:mouseleave=move |_| hover.set(None)></canvas>
                {card}
            </div>
        </div>
        <p class="legend small muted">
            <span class="sw ts-alloc"></span>"allocated" <span class="sw ts-pending"></span>"pending free" <span class="sw ts-free"></span>"cached, free"
        </p>
    }
}

/// The block of `segments` at (`px`, `py`), bars scaled by `scale` px per byte.
fn hit(segments: &[SegmentState], scale: f64, px: f64, py: f64) -> Option<Hit> {
    let row = ((py - ROW_GAP) / (ROW_H + ROW_GAP)).floor();
    if row < 0.0 || py - ROW_GAP - row * (ROW_H + ROW_GAP) > ROW_H {
        return None;
    }
    let i = row as usize;
    let g = segments.get(i)?;
    let offset = ((px - LABEL_W) / scale) as i64;
    // The block that holds the point, else the nearest within a pixel (thin blocks stay pointable).
    let slack = (1.5 / scale) as i64;
    g.blocks
        .iter()
        .position(|b| (b.address - g.address) <= offset && offset < (b.address - g.address).saturating_add(b.size))
        .or_else(|| g.blocks.iter().position(|b| ((b.address - g.address) - offset).abs() <= slack))
        .map(|j| (i, j))
}
