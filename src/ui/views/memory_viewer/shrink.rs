//! "What to shrink": at the peak, bytes per group and the largest buffers.

use super::peak_buffers::BufferRow;
use super::TOP_BUFFERS;
use crate::analysis::memory_viewer::GroupTotal;
use crate::engine::memory_viewer_columns::ViewerData;
use crate::ui::charts::plot::group_color;
use crate::ui::components::metric::{Bytes, Count, Text};
use crate::ui::components::table::{Column, Table, TableSpec};
use leptos::prelude::*;
use std::sync::Arc;

/// A share of the peak (the engine's fraction) as a figure keyed by `key`; "—" for an empty peak.
fn share(metric: &'static str, fraction: Option<f64>, key: String) -> AnyView {
    match fraction {
        Some(f) => view! { <Text metric key value=f.to_string() shown=format!("{:.1} %", f * 100.0) /> }.into_any(),
        None => view! { <span class="muted">"—"</span> }.into_any(),
    }
}

/// A group's bytes at the peak with its share of the peak: a row of the group table.
#[derive(Clone)]
pub(super) struct GroupShare {
    total: GroupTotal,
    fraction: Option<f64>,
}

/// The OOM answer: at the peak, bytes per group and the largest buffers.
#[component]
pub(super) fn Shrink(viewer: Arc<ViewerData>, hovered: RwSignal<Option<i64>>, pinned: RwSignal<Option<i64>>) -> impl IntoView {
    let mut groups: Vec<GroupShare> = viewer
        .peak_by_group
        .iter()
        .zip(&viewer.peak_by_group_fraction)
        .map(|(total, fraction)| GroupShare { total: total.clone(), fraction: *fraction })
        .collect();
    groups.sort_by(|a, b| b.total.bytes.cmp(&a.total.bytes).then_with(|| a.total.group.cmp(&b.total.group)));
    let top: Vec<BufferRow> = viewer
        .peak_buffers_by_size
        .iter()
        .filter_map(|&i| viewer.peak_buffer(i))
        .filter(|o| o.logical_buffer_id.is_some())
        .take(TOP_BUFFERS)
        .map(BufferRow::of)
        .collect();
    let headline = match (groups.first(), top.first()) {
        (Some(g), largest) => {
            let group = g.total.group.to_string();
            let largest =
                largest.map(|b| format!("; the largest buffer is {} ({})", b.instruction_name, crate::units::bytes(b.size_bytes)));
            view! { {format!("{group} buffers hold ")} {share("headline_group_peak_fraction", g.fraction, group.clone())} " of the peak" {largest} "." }.into_any()
        }
        _ => "Nothing is live at the peak.".into_any(),
    };
    let stack = groups.clone();
    view! {
        <section class="panel shrink" data-testid="oom">
            <div class="panel-head"><h2>"What to shrink"</h2><span class="muted">"at the peak"</span></div>
            <p class="headline">{headline}</p>
            <div class="stack-bar" aria-hidden="true">
                {stack.iter().map(|g| view! { <div style=format!("flex:{} 0 0;background:{}", g.total.bytes.max(0), group_color(&g.total.group, 0)) title=g.total.group.to_string()></div> }).collect_view()}
            </div>
            <Table spec=group_table() rows=Arc::new(groups) />
            {(!top.is_empty()).then(|| view! { <h3>"Largest buffers"</h3> })}
            <ol class="top-buffers">
                {top.into_iter().map(|o| {
                    let id = o.logical_buffer_id;
                    let key = id.unwrap_or(-1).to_string();
                    view! {
                        <li on:mouseenter=move |_| hovered.set(id) on:mouseleave=move |_| hovered.set(None) on:click=move |_| pinned.set(id)>
                            <div class="tb-line"><code class="tb-name">{o.instruction_name.clone()}</code><Bytes metric="top_buffer_bytes" value=o.size_bytes key=key.clone() /></div>
                            <div class="muted tb-sub"><code>{o.shape.clone()}</code>{format!(" · {} · ", o.group.as_deref().unwrap_or(""))}{share("top_buffer_peak_fraction", o.peak_fraction, key.clone())}" of peak"</div>
                        </li>
                    }
                }).collect_view()}
            </ol>
        </section>
    }
}

/// Bytes per allocation group at the peak, with their share of it.
pub(super) fn group_table() -> TableSpec<GroupShare> {
    let columns = vec![
        Column::new("group", "Group", |g: &GroupShare, _| {
            view! { <i class="swatch" style=format!("background:{}", group_color(&g.total.group, 0))></i>{g.total.group.to_string()} }
                .into_any()
        })
        .sort_key(|g| g.total.group.to_string()),
        Column::new("bytes", "Bytes", |g: &GroupShare, _| {
            view! { <Bytes metric="peak_group_bytes" value=g.total.bytes key=g.total.group.to_string() /> }.into_any()
        })
        .right()
        .width("80px")
        .sort_key(|g| g.total.bytes),
        Column::new("share", "Share", |g: &GroupShare, _| {
            view! { <span class="num">{share("peak_group_fraction", g.fraction, g.total.group.to_string())}</span> }.into_any()
        })
        .right()
        .width("60px"),
        Column::new("buffers", "Buffers", |g: &GroupShare, _| {
            view! { <Count metric="peak_group_buffers" value=g.total.buffer_count as u64 key=g.total.group.to_string() /> }.into_any()
        })
        .right()
        .width("72px")
        .sort_key(|g| g.total.buffer_count),
    ];
    TableSpec::new("compact", columns).max_height(240.0)
}
