//! The File details tool: what a file is and what the memory tools will find in it (its format,
//! planes, allocators, HLO modules).

use crate::decode::hlo::ModuleSummary;
use crate::decode::Format;
use crate::engine::file_details::{AllocatorOverview, LineOverview, PlaneOverview};
use crate::engine::FileDetails;
use crate::ui::components::metric::{Bytes, Count, Text};
use crate::ui::components::table::{Column, Table, TableSpec};
use leptos::prelude::*;
use std::sync::Arc;

fn format_name(f: Format) -> &'static str {
    match f {
        Format::XSpace => "XSpace trace (xplane.pb)",
        Format::HloProto => "XLA HloProto",
        Format::Pprof => "pprof profile",
        Format::Kineto => "PyTorch profiler trace (Kineto)",
        Format::TorchSnapshot => "PyTorch CUDA memory snapshot",
    }
}

fn format_slug(f: Format) -> &'static str {
    match f {
        Format::XSpace => "xspace",
        Format::HloProto => "hlo_proto",
        Format::Pprof => "pprof",
        Format::Kineto => "kineto",
        Format::TorchSnapshot => "torch_snapshot",
    }
}

#[component]
pub fn FileDetails(details: FileDetails) -> impl IntoView {
    let o = details;
    let is_xspace = o.format == Format::XSpace;
    let planes = o.planes.clone();
    let allocators = o.allocators.clone();
    let modules = o.hlo_modules.clone();
    let pprof = o.pprof.clone();
    let notes = o.notes.clone();
    view! {
        <article class="overview file-details" data-file=o.name.clone()>
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
                    <PlaneTable planes />
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
                        view! { <Table spec=allocator_table() rows=Arc::new(allocators) /> }.into_any()
                    }}
                </section>
            })}

            {(!modules.is_empty()).then(|| view! {
                <section>
                    <h2>"HLO modules"</h2>
                    <Table spec=module_table() rows=Arc::new(modules) />
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

/// The trace's planes; a click on one lists its lines below.
#[component]
fn PlaneTable(planes: Vec<PlaneOverview>) -> impl IntoView {
    let columns = vec![
        Column::new("plane", "Plane", |p: &PlaneOverview, _| view! { <code title=p.name.clone()>{p.name.clone()}</code> }.into_any())
            .sort_key(|p| p.name.clone()),
        Column::new("lines", "Lines", |p: &PlaneOverview, _| {
            view! { <Count metric="plane_line_count" value=p.line_count as u64 key=p.name.clone() /> }.into_any()
        })
        .right()
        .width("90px")
        .sort_key(|p| p.line_count),
        Column::new("events", "Events", |p: &PlaneOverview, _| {
            view! { <Count metric="plane_event_count" value=p.event_count as u64 key=p.name.clone() /> }.into_any()
        })
        .right()
        .width("110px")
        .sort_key(|p| p.event_count),
    ];
    let planes = Arc::new(planes);
    let picked = RwSignal::new(None::<usize>);
    let spec = TableSpec::new("", columns)
        .filter("Filter planes", "plane-filter", |p: &PlaneOverview| vec![p.name.as_str()])
        .row_attrs(|p, _| vec![("data-plane", p.name.clone())])
        .row_title(|_| "Click to list this plane's lines".to_string())
        .pick(picked);
    let lines_of = planes.clone();
    view! {
        <Table spec rows=planes />
        {move || picked.get().and_then(|i| lines_of.get(i)).map(|p| {
            let plane = p.name.clone();
            let columns = vec![
                Column::new("line", "Line", |l: &LineOverview, _| {
                    view! { {if l.name.is_empty() { "(unnamed line)".to_string() } else { l.name.clone() }} }.into_any()
                })
                .sort_key(|l| l.name.clone()),
                Column::new("events", "Events", move |l: &LineOverview, _| {
                    view! { <Count metric="line_event_count" value=l.event_count as u64 key=format!("{}/{}", plane, l.name) /> }.into_any()
                })
                .right()
                .width("110px")
                .sort_key(|l| l.event_count),
            ];
            view! {
                <h3>"Lines of " <code>{p.name.clone()}</code></h3>
                <Table spec=TableSpec::new("lines", columns).max_height(320.0) rows=Arc::new(p.lines.clone()) />
            }
        })}
    }
}

/// Memory events per allocator.
fn allocator_table() -> TableSpec<AllocatorOverview> {
    let columns = vec![
        Column::new("memory_id", "Memory ID (allocator)", |a: &AllocatorOverview, _| {
            view! { <code>{a.memory_id.clone()}</code> }.into_any()
        })
        .sort_key(|a| a.memory_id.clone()),
        Column::new("allocations", "Allocations", |a: &AllocatorOverview, _| {
            view! { <Count metric="allocations" value=a.allocations key=a.memory_id.clone() /> }.into_any()
        })
        .right()
        .width("120px")
        .sort_key(|a| a.allocations),
        Column::new("deallocations", "Deallocations", |a: &AllocatorOverview, _| {
            view! { <Count metric="deallocations" value=a.deallocations key=a.memory_id.clone() /> }.into_any()
        })
        .right()
        .width("130px")
        .sort_key(|a| a.deallocations),
        Column::new("peak", "Peak in use", |a: &AllocatorOverview, _| {
            view! { <Bytes metric="peak_bytes_in_use" value=a.max_peak_bytes_in_use key=a.memory_id.clone() /> }.into_any()
        })
        .right()
        .width("120px")
        .sort_key(|a| a.max_peak_bytes_in_use),
    ];
    TableSpec::new("", columns).row_attrs(|a, _| vec![("data-allocator", a.memory_id.clone())])
}

/// The file's HLO modules and their buffer assignment.
fn module_table() -> TableSpec<ModuleSummary> {
    let columns = vec![
        // A module name can be hundreds of characters (TensorFlow's `a_inference_…_executor_type_…`):
        // it ends in an ellipsis, whole in its tooltip, so the figures keep their columns.
        Column::new("module", "Module", |m: &ModuleSummary, _| view! { <code title=m.name.clone()>{m.name.clone()}</code> }.into_any())
            .class("clip")
            .sort_key(|m| m.name.clone()),
        Column::new("program_id", "Program id", |m: &ModuleSummary, _| {
            m.program_id.map(|p| view! { <Count metric="program_id" value=p key=m.name.clone() /> }).into_any()
        })
        .right()
        .width("100px")
        .sort_key(|m| m.program_id),
        Column::new("buffer_assignment", "Buffer assignment", |m: &ModuleSummary, _| {
            let shown = if m.has_buffer_assignment { "yes" } else { "none" }.to_string();
            view! { <Text metric="has_buffer_assignment" value=m.has_buffer_assignment.to_string() shown key=m.name.clone() /> }.into_any()
        })
        .width("140px")
        .sort_key(|m| m.has_buffer_assignment),
        Column::new("instructions", "Instructions", |m: &ModuleSummary, _| {
            view! { <Count metric="instruction_count" value=m.instruction_count as u64 key=m.name.clone() /> }.into_any()
        })
        .right()
        .width("120px")
        .sort_key(|m| m.instruction_count),
        Column::new("allocations", "Allocations", |m: &ModuleSummary, _| {
            view! { <Count metric="allocation_count" value=m.allocation_count as u64 key=m.name.clone() /> }.into_any()
        })
        .right()
        .width("110px")
        .sort_key(|m| m.allocation_count),
        Column::new("total_allocation", "Total allocation", |m: &ModuleSummary, _| {
            view! { <Bytes metric="total_allocation_bytes" value=m.total_allocation_bytes as i64 key=m.name.clone() /> }.into_any()
        })
        .right()
        .width("130px")
        .sort_key(|m| m.total_allocation_bytes),
    ];
    TableSpec::new("fd-modules", columns)
        .filter("Filter modules", "module-filter", |m: &ModuleSummary| vec![m.name.as_str()])
        .row_attrs(|m, _| vec![("data-module", m.name.clone())])
}
