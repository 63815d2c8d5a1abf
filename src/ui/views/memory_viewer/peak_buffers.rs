//! The table of the buffers live at the peak.

use crate::engine::memory_viewer_columns::{PeakBuffer, ViewerData};
use crate::ui::charts::plot::group_color;
use crate::ui::components::metric::{Bytes, Count};
use crate::ui::components::op_links::{show_graph, LinkButton};
use crate::ui::components::table::{Column, Table, TableSpec, TableState};
use crate::ui::state::AppState;
use leptos::prelude::*;
use std::collections::BTreeSet;
use std::sync::Arc;

/// A peak buffer's figures and text, owned, for a row of the page.
#[derive(Clone)]
pub(super) struct BufferRow {
    /// Its position in program order (its colour number).
    pub(super) color_index: usize,
    pub(super) logical_buffer_id: Option<i64>,
    pub(super) label: String,
    pub(super) instruction_name: String,
    pub(super) shape: String,
    pub(super) group: Option<String>,
    pub(super) size_bytes: i64,
    pub(super) unpadded_bytes: i64,
    /// Its share of the peak heap (the engine's).
    pub(super) peak_fraction: Option<f64>,
}

impl BufferRow {
    /// The defining instruction's own name: `instruction_name` without its shape index
    /// (`cudnn-conv.3{0}`), what the Graph tool centres on (HLO names hold no braces).
    fn instruction(&self) -> &str {
        self.instruction_name.split_once('{').map_or(self.instruction_name.as_str(), |(name, _)| name)
    }

    pub(super) fn of(o: PeakBuffer<'_>) -> Self {
        BufferRow {
            color_index: o.index,
            logical_buffer_id: o.logical_buffer_id,
            label: o.label.to_string(),
            instruction_name: o.text.name.to_string(),
            shape: o.text.shape.to_string(),
            group: o.group.map(str::to_string),
            size_bytes: o.size_bytes,
            unpadded_bytes: o.unpadded_bytes,
            peak_fraction: o.peak_fraction,
        }
    }
}

/// A buffer live at the peak, with its place in XProf's by-size order.
pub(super) struct PeakRow {
    /// 0 for the largest (XProf's `maxHeapBySize` order, ties as XProf breaks them).
    size_rank: usize,
    /// Padding bytes (size − unpadded); 0 for the folded small buffers.
    padding_bytes: i64,
    o: BufferRow,
}

/// The buffers live at the peak as bars, sortable by program order, size or padding.
#[component]
pub(super) fn PeakBuffers(
    viewer: Arc<ViewerData>,
    hovered: RwSignal<Option<i64>>,
    pinned: RwSignal<Option<i64>>,
    /// Buffers marked for an op's "show buffers" link.
    highlighted: Arc<BTreeSet<i64>>,
) -> impl IntoView {
    let count = viewer.peak_buffer_count();
    let largest = viewer.peak_buffers().map(|o| o.size_bytes).max().unwrap_or(0).max(1) as f64;
    let mut size_rank = vec![0; count];
    for (rank, &i) in viewer.peak_buffers_by_size.iter().enumerate() {
        if let Some(r) = size_rank.get_mut(i) {
            *r = rank;
        }
    }
    let rows: Arc<Vec<PeakRow>> = Arc::new(
        viewer
            .peak_buffers()
            .zip(size_rank)
            .map(|(o, size_rank)| PeakRow {
                size_rank,
                padding_bytes: if o.logical_buffer_id.is_some() { o.size_bytes - o.unpadded_bytes } else { 0 },
                o: BufferRow::of(o),
            })
            .collect(),
    );
    let state = expect_context::<AppState>();
    let module_name = viewer.module_name.to_string();
    let key = |r: &PeakRow| r.o.logical_buffer_id.map_or_else(|| "small".to_string(), |i| i.to_string());
    let columns = vec![
        Column::new("program", "#", |_: &PeakRow, i| view! { <span class="muted num">{i}</span> }.into_any())
            .right()
            .width("44px")
            .sort_key(|r| r.o.color_index),
        Column::new("name", "Buffer", move |r: &PeakRow, _| {
            let name = if r.o.logical_buffer_id.is_some() { r.o.instruction_name.clone() } else { r.o.label.clone() };
            // The defining instruction in the Graph tool (the module as the URL names it, else by its
            // module name).
            let graph = r.o.logical_buffer_id.is_some().then(|| {
                let (op, module) = (r.o.instruction().to_string(), state.module.get_untracked().unwrap_or_else(|| module_name.clone()));
                let title = format!("Graph: {module} around {op}, which defines this buffer");
                view! { <LinkButton testid="buffer-show-graph" label="graph" title go=move || show_graph(state, module.clone(), op.clone()) /> }
            });
            view! { <code class="br-name" title=r.o.label.clone()>{name}</code> {graph} }.into_any()
        })
        .sort_key(|r| r.o.instruction_name.clone()),
        Column::new("bar", "", move |r: &PeakRow, _| {
            let group = r.o.group.as_deref().unwrap_or("");
            let padded = r.o.size_bytes as f64 / largest * 100.0;
            let unpadded = if r.o.logical_buffer_id.is_some() { r.o.unpadded_bytes as f64 / largest * 100.0 } else { padded };
            view! {
                <div class="br-bar" title="darker: unpadded bytes; lighter: padding">
                    <div class="pad" style=format!("width:{padded:.2}%;background:{}", group_color(group, 1))></div>
                    <div class="fill" style=format!("width:{unpadded:.2}%;background:{}", group_color(group, 2))></div>
                </div>
            }
            .into_any()
        })
        .class("bar-col"),
        // Largest first is XProf's rank order, ties included.
        Column::new("size", "Size", move |r: &PeakRow, _| {
            view! { <Bytes metric="peak_buffer_bytes" value=r.o.size_bytes key=key(r) /> }.into_any()
        })
        .right()
        .width("90px")
        .sort_by(|a, b| b.size_rank.cmp(&a.size_rank)),
        Column::new("padding", "Padding", move |r: &PeakRow, _| {
            view! { <Bytes metric="peak_buffer_padding_bytes" value=r.padding_bytes key=key(r) /> }.into_any()
        })
        .right()
        .width("90px")
        .sort_key(|r| r.padding_bytes),
        Column::new("group", "Group", |r: &PeakRow, _| {
            let group = if r.o.logical_buffer_id.is_some() { r.o.group.as_deref().unwrap_or("").to_string() } else { "folded".to_string() };
            view! { <span class="muted">{group}</span> }.into_any()
        })
        .width("96px")
        .sort_key(|r| r.o.group.as_deref().unwrap_or("").to_string()),
    ];
    let id_of = {
        let rows = rows.clone();
        move |i: usize| rows.get(i).and_then(|r| r.o.logical_buffer_id)
    };
    let (sel_id, click_id, hover_id) = (id_of.clone(), id_of.clone(), id_of);
    let spec = TableSpec::new("peak-buffer-table compact", columns)
        .max_height(320.0)
        .row_attrs({
            let highlighted = highlighted.clone();
            move |r, _| {
                let marked = r.o.logical_buffer_id.is_some_and(|id| highlighted.contains(&id));
                vec![("data-testid", "peak-buffer".to_string()), ("data-buffer-id", key(r)), ("data-highlighted", marked.to_string())]
            }
        })
        .row_class(move |r| if r.o.logical_buffer_id.is_some_and(|id| highlighted.contains(&id)) { "highlighted" } else { "" })
        .selected(move |i| sel_id(i).is_some_and(|id| hovered.get() == Some(id) || pinned.get() == Some(id)))
        .on_hover(move |i| hovered.set(i.and_then(&hover_id)))
        .on_click(move |i| {
            if let Some(id) = click_id(i) {
                pinned.set(Some(id));
            }
        });
    view! {
        <section class="panel peak-buffers">
            <div class="panel-head">
                <h2>"Buffers at the peak"</h2>
                <span class="muted"><Count metric="peak_buffer_count" value=count as u64 />" buffers"</span>
            </div>
            <Table spec rows state=TableState::sorted("size", true) />
        </section>
    }
}
