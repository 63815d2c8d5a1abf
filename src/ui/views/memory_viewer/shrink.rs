//! "What to shrink": at the peak, bytes per group and the largest buffers.

use super::peak_buffers::BufferRow;
use super::TOP_BUFFERS;
use crate::analysis::memory_viewer::GroupTotal;
use crate::engine::memory_viewer_columns::ViewerData;
use crate::ui::charts::plot::group_color;
use crate::ui::components::metric::{Bytes, Count};
use crate::ui::components::table::{Column, Table, TableSpec};
use leptos::prelude::*;
use std::sync::Arc;

pub(super) fn share(part: i64, whole: i64) -> String {
    if whole <= 0 {
        return "—".into();
    }
    format!("{:.1} %", part as f64 * 100.0 / whole as f64)
}

/// The OOM answer: at the peak, bytes per group and the largest buffers.
#[component]
pub(super) fn Shrink(viewer: Arc<ViewerData>, hovered: RwSignal<Option<i64>>, pinned: RwSignal<Option<i64>>) -> impl IntoView {
    let peak = viewer.peak_heap_bytes();
    let mut groups = viewer.peak_by_group.to_vec();
    groups.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.group.cmp(&b.group)));
    let top: Vec<BufferRow> = viewer
        .peak_buffers_by_size
        .iter()
        .filter_map(|&i| viewer.peak_buffer(i))
        .filter(|o| o.logical_buffer_id.is_some())
        .take(TOP_BUFFERS)
        .map(BufferRow::of)
        .collect();
    let headline = match (groups.first(), top.first()) {
        (Some(g), Some(b)) => format!(
            "{} buffers hold {} of the peak; the largest buffer is {} ({}).",
            g.group,
            share(g.bytes, peak),
            b.instruction_name,
            crate::units::bytes(b.size_bytes)
        ),
        (Some(g), None) => format!("{} buffers hold {} of the peak.", g.group, share(g.bytes, peak)),
        _ => "Nothing is live at the peak.".into(),
    };
    let stack = groups.clone();
    view! {
        <section class="panel shrink" data-testid="oom">
            <div class="panel-head"><h2>"What to shrink"</h2><span class="muted">"at the peak"</span></div>
            <p class="headline">{headline}</p>
            <div class="stack-bar" aria-hidden="true">
                {stack.iter().map(|g| view! { <div style=format!("flex:{} 0 0;background:{}", g.bytes.max(0), group_color(&g.group, 0)) title=g.group.to_string()></div> }).collect_view()}
            </div>
            <Table spec=group_table(peak) rows=Arc::new(groups) />
            {(!top.is_empty()).then(|| view! { <h3>"Largest buffers"</h3> })}
            <ol class="top-buffers">
                {top.into_iter().map(|o| {
                    let id = o.logical_buffer_id;
                    let key = id.unwrap_or(-1).to_string();
                    view! {
                        <li on:mouseenter=move |_| hovered.set(id) on:mouseleave=move |_| hovered.set(None) on:click=move |_| pinned.set(id)>
                            <div class="tb-line"><code class="tb-name">{o.instruction_name.clone()}</code><Bytes metric="top_buffer_bytes" value=o.size_bytes key=key.clone() /></div>
                            <div class="muted tb-sub"><code>{o.shape.clone()}</code>{format!(" · {} · {} of peak", o.group.as_deref().unwrap_or(""), share(o.size_bytes, peak))}</div>
                        </li>
                    }
                }).collect_view()}
            </ol>
        </section>
    }
}

/// Bytes per allocation group at the peak, with their share of it.
pub(super) fn group_table(peak: i64) -> TableSpec<GroupTotal> {
    let columns = vec![
        Column::new("group", "Group", |g: &GroupTotal, _| {
            view! { <i class="swatch" style=format!("background:{}", group_color(&g.group, 0))></i>{g.group.to_string()} }.into_any()
        })
        .sort_key(|g| g.group.to_string()),
        Column::new("bytes", "Bytes", |g: &GroupTotal, _| {
            view! { <Bytes metric="peak_group_bytes" value=g.bytes key=g.group.to_string() /> }.into_any()
        })
        .right()
        .width("80px")
        .sort_key(|g| g.bytes),
        Column::new("share", "Share", move |g: &GroupTotal, _| view! { <span class="num">{share(g.bytes, peak)}</span> }.into_any())
            .right()
            .width("60px"),
        Column::new("buffers", "Buffers", |g: &GroupTotal, _| {
            view! { <Count metric="peak_group_buffers" value=g.buffer_count as u64 key=g.group.to_string() /> }.into_any()
        })
        .right()
        .width("72px")
        .sort_key(|g| g.buffer_count),
    ];
    TableSpec::new("compact", columns).max_height(240.0)
}
