//! The details card of the hovered or pinned buffer.

use super::TimelineData;
use crate::engine::memory_viewer_columns::ViewerData;
use crate::ui::charts::plot::group_color;
use crate::ui::components::metric::{Bytes, Count, Text};
use leptos::prelude::*;

/// A buffer as the details card shows it, from the peak list or from the block layout.
pub(super) struct BufferInfo {
    id: i64,
    name: String,
    group: String,
    size: i64,
    unpadded: i64,
    /// Size over unpadded size (the engine's).
    expansion: Option<f64>,
    shape: String,
    op_name: String,
    opcode: String,
    source: Option<String>,
    span: Option<(i64, i64)>,
}

impl BufferInfo {
    pub(super) fn find(v: &ViewerData, t: &TimelineData, id: i64) -> Option<BufferInfo> {
        let span = v.span(id);
        let source = |s: &crate::analysis::memory_viewer::SourceInfo| format!("{}:{}", s.file_name, s.line_number);
        if let Some(o) = v.peak_buffers().find(|o| o.logical_buffer_id == Some(id)) {
            return Some(BufferInfo {
                id,
                name: o.text.name.to_string(),
                group: o.group.unwrap_or("").to_string(),
                size: o.size_bytes,
                unpadded: o.unpadded_bytes,
                expansion: o.expansion,
                shape: o.text.shape.to_string(),
                op_name: o.text.op_name.to_string(),
                opcode: o.opcode.to_string(),
                source: o.text.source.as_deref().map(source),
                span,
            });
        }
        let b = v.block(t.block_of(id)?)?;
        Some(BufferInfo {
            id,
            name: b.text.name.to_string(),
            group: b.category.to_string(),
            size: b.size_bytes,
            unpadded: b.unpadded_bytes,
            expansion: b.expansion,
            shape: b.text.shape.to_string(),
            op_name: b.text.op_name.to_string(),
            opcode: String::new(),
            source: b.text.source.as_deref().map(source),
            span,
        })
    }
}

#[component]
pub(super) fn BufferDetails(b: BufferInfo, pinned: bool) -> impl IntoView {
    let key = b.id.to_string();
    view! {
        <section class="panel details" data-testid="buffer-details" data-buffer-id=key.clone()>
            <div class="panel-head"><h2>"Buffer"</h2>{pinned.then(|| view! { <span class="muted">"pinned (click another to change)"</span> })}</div>
            <div class="details-name"><code><Text metric="buffer_name" value=b.name.clone() /></code></div>
            <table class="kv">
                <tr><td>"Group"</td><td><i class="swatch" style=format!("background:{}", group_color(&b.group, 0))></i><Text metric="buffer_group" value=b.group.clone() /></td></tr>
                <tr><td>"Size"</td><td><Bytes metric="buffer_size_bytes" value=b.size /></td></tr>
                <tr><td>"Unpadded size"</td><td><Bytes metric="buffer_unpadded_bytes" value=b.unpadded /></td></tr>
                <tr><td>"Expansion"</td><td>{match b.expansion {
                    Some(x) => view! { <Text metric="buffer_expansion" value=format!("{x}") shown=format!("×{x:.2}") /> }.into_any(),
                    None => view! { <span class="muted">"—"</span> }.into_any(),
                }}</td></tr>
                <tr><td>"Extra memory (padding)"</td><td><Bytes metric="buffer_padding_bytes" value=b.size - b.unpadded /></td></tr>
                <tr><td>"Shape"</td><td><code class="wrap"><Text metric="buffer_shape" value=b.shape.clone() /></code></td></tr>
                <tr><td>"Op name"</td><td class="wrap"><Text metric="buffer_op_name" value=b.op_name.clone() /></td></tr>
                <tr><td>"Allocation type"</td><td><Text metric="buffer_allocation_type" value=b.group.clone() />{(!b.opcode.is_empty()).then(|| view! { <span class="muted">{format!(" · {}", b.opcode)}</span> })}</td></tr>
                <tr><td>"Lifetime"</td><td>{match b.span {
                    Some((s, l)) => view! { "steps " <Count metric="buffer_start_step" value=s.max(0) as u64 /> " – " <Count metric="buffer_end_step" value=l.max(0) as u64 /> }.into_any(),
                    None => view! { <span class="muted">"whole program"</span> }.into_any(),
                }}</td></tr>
                <tr><td>"Source"</td><td class="wrap">{match b.source {
                    Some(s) => view! { <code><Text metric="buffer_source" value=s /></code> }.into_any(),
                    None => view! { <span class="muted">"not recorded"</span> }.into_any(),
                }}</td></tr>
            </table>
        </section>
    }
}
