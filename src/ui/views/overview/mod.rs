//! The Overview tool: what a file is and what the memory tools will find in it.

use crate::decode::Format;
use crate::engine::FileOverview;
use crate::ui::components::metric::{Bytes, Count, Text};
use leptos::prelude::*;

fn format_name(f: Format) -> &'static str {
    match f {
        Format::XSpace => "XSpace trace (xplane.pb)",
        Format::HloProto => "XLA HloProto",
        Format::Pprof => "pprof profile",
    }
}

fn format_slug(f: Format) -> &'static str {
    match f {
        Format::XSpace => "xspace",
        Format::HloProto => "hlo_proto",
        Format::Pprof => "pprof",
    }
}

#[component]
pub fn Overview(overview: FileOverview) -> impl IntoView {
    let o = overview;
    let is_xspace = o.format == Format::XSpace;
    let planes = o.planes.clone();
    let allocators = o.allocators.clone();
    let modules = o.hlo_modules.clone();
    let pprof = o.pprof.clone();
    let notes = o.notes.clone();
    view! {
        <article class="overview" data-file=o.name.clone()>
            <header class="summary-cards">
                <div class="card"><div class="label">"Format"</div><div class="value"><Text metric="format" value=format_slug(o.format) shown=format_name(o.format).to_string() /></div></div>
                <div class="card"><div class="label">"File size"</div><div class="value"><Bytes metric="size_bytes" value=o.size_bytes as i64 />{o.gzipped.then_some(" (gzip)")}</div></div>
                {(!o.hosts.is_empty()).then(|| view! { <div class="card"><div class="label">"Host"</div><div class="value"><Text metric="host" value=o.hosts.join(", ") /></div></div> })}
                {is_xspace.then(|| view! { <div class="card"><div class="label">"Planes"</div><div class="value"><Count metric="plane_count" value=o.planes.len() as u64 /></div></div> })}
                {(!o.hlo_modules.is_empty()).then(|| view! { <div class="card"><div class="label">"HLO modules"</div><div class="value"><Count metric="hlo_module_count" value=o.hlo_modules.len() as u64 /></div></div> })}
            </header>

            {(!notes.is_empty()).then(|| view! {
                <ul class="notes">{notes.into_iter().map(|n| view! { <li data-testid="note">{n}</li> }).collect_view()}</ul>
            })}

            {is_xspace.then(|| view! {
                <section>
                    <h2>"Planes"</h2>
                    <table class="grid">
                        <thead><tr><th>"Plane"</th><th class="r">"Lines"</th><th class="r">"Events"</th></tr></thead>
                        <tbody>
                            {planes.into_iter().map(|p| {
                                let name = p.name.clone();
                                let lines = p.lines.clone();
                                view! {
                                    <tr data-plane=name.clone()>
                                        <td>
                                            <details>
                                                <summary><code>{name.clone()}</code></summary>
                                                <table class="grid inner">
                                                    {lines.into_iter().map(|l| view! {
                                                        <tr><td>{if l.name.is_empty() { "(unnamed line)".to_string() } else { l.name.clone() }}</td><td class="r"><Count metric="line_event_count" value=l.event_count as u64 key=format!("{}/{}", name, l.name) /></td></tr>
                                                    }).collect_view()}
                                                </table>
                                            </details>
                                        </td>
                                        <td class="r"><Count metric="plane_line_count" value=p.line_count as u64 key=p.name.clone() /></td>
                                        <td class="r"><Count metric="plane_event_count" value=p.event_count as u64 key=p.name.clone() /></td>
                                    </tr>
                                }
                            }).collect_view()}
                        </tbody>
                    </table>
                </section>
                <section>
                    <h2>"Memory events"</h2>
                    {if allocators.is_empty() {
                        view! {
                            <p class="empty" data-testid="no-memory-events">
                                "This trace has no allocator events (" <code>"MemoryAllocation"</code> "/" <code>"MemoryDeallocation"</code>
                                "). JAX on CPU never emits them: use the Memory Viewer on its HLO modules. For TensorFlow, profile with "
                                <code>"TF_CPU_ALLOCATOR_USE_BFC=true"</code> " or on a GPU."
                            </p>
                        }.into_any()
                    } else {
                        view! {
                            <table class="grid">
                                <thead><tr><th>"Memory ID (allocator)"</th><th class="r">"Allocations"</th><th class="r">"Deallocations"</th><th class="r">"Peak in use"</th></tr></thead>
                                <tbody>
                                    {allocators.into_iter().map(|a| view! {
                                        <tr data-allocator=a.memory_id.clone()>
                                            <td><code>{a.memory_id.clone()}</code></td>
                                            <td class="r"><Count metric="allocations" value=a.allocations key=a.memory_id.clone() /></td>
                                            <td class="r"><Count metric="deallocations" value=a.deallocations key=a.memory_id.clone() /></td>
                                            <td class="r"><Bytes metric="peak_bytes_in_use" value=a.max_peak_bytes_in_use key=a.memory_id.clone() /></td>
                                        </tr>
                                    }).collect_view()}
                                </tbody>
                            </table>
                        }.into_any()
                    }}
                </section>
            })}

            {(!modules.is_empty()).then(|| view! {
                <section>
                    <h2>"HLO modules"</h2>
                    <table class="grid">
                        <thead><tr><th>"Module"</th><th class="r">"Program id"</th><th>"Buffer assignment"</th><th class="r">"Instructions"</th><th class="r">"Allocations"</th><th class="r">"Total allocation"</th></tr></thead>
                        <tbody>
                            {modules.into_iter().map(|m| {
                                let k = m.name.clone();
                                view! {
                                    <tr data-module=k.clone()>
                                        <td><code>{m.name.clone()}</code></td>
                                        <td class="r">{m.program_id.map(|p| view! { <Count metric="program_id" value=p key=k.clone() /> })}</td>
                                        <td><Text metric="has_buffer_assignment" value=m.has_buffer_assignment.to_string() shown=if m.has_buffer_assignment { "yes" } else { "none" }.to_string() key=k.clone() /></td>
                                        <td class="r"><Count metric="instruction_count" value=m.instruction_count as u64 key=k.clone() /></td>
                                        <td class="r"><Count metric="allocation_count" value=m.allocation_count as u64 key=k.clone() /></td>
                                        <td class="r"><Bytes metric="total_allocation_bytes" value=m.total_allocation_bytes as i64 key=k.clone() /></td>
                                    </tr>
                                }
                            }).collect_view()}
                        </tbody>
                    </table>
                </section>
            })}

            {pprof.map(|p| view! {
                <section>
                    <h2>"Device memory profile"</h2>
                    <div class="summary-cards">
                        <div class="card"><div class="label">"Live bytes"</div><div class="value"><Bytes metric="live_bytes" value=p.live_bytes /></div></div>
                        <div class="card"><div class="label">"Samples"</div><div class="value"><Count metric="sample_count" value=p.sample_count as u64 /></div></div>
                        {p.samples_by_kind.iter().map(|(k, n)| view! {
                            <div class="card"><div class="label">{format!("{k} samples")}</div><div class="value"><Count metric="samples_by_kind" value=*n as u64 key=k.clone() /></div></div>
                        }).collect_view()}
                        <div class="card"><div class="label">"Functions"</div><div class="value"><Count metric="function_count" value=p.function_count as u64 /></div></div>
                    </div>
                    <p class="muted">"Sample types: " <Text metric="sample_types" value=p.sample_types.join(", ") /></p>
                </section>
            })}
        </article>
    }
}
