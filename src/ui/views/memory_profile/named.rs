//! The peak named by what asked for each allocation (Tidemark's own, for traces whose allocations
//! carry no op, as JAX's): the peak's bytes by kind and by module as two bars, then every allocation
//! live at the peak by name, each row of a module linked to the Memory Viewer on that module with its
//! buffer highlighted. Every figure is the engine's ([`NamedPeakView`]).

use super::*;
use crate::analysis::allocation_names::PoolAtPeak;
use crate::engine::memory_profile::{BarPart, NamedPeakRow, NamedPeakView};
use crate::ui::components::op_links::show_buffers;

/// How many colours the bars cycle through (`.mp-part.c0` … in the stylesheet).
const COLOURS: usize = 8;

#[component]
pub(super) fn NamedPeak(name: String, named: Arc<NamedPeakView>) -> impl IntoView {
    let reasons = named.reasons.clone();
    let body = match &named.unaligned {
        Some(why) => view! {
            <p class="notes" data-testid="named-unaligned">
                "The allocations of this memory ID cannot be named: " {why.clone()} "."
            </p>
        }
        .into_any(),
        None => view! { <NamedBody name named=named.clone() /> }.into_any(),
    };
    view! {
        <section class="mp-named" data-testid="named-peak">
            <h2>"What is in memory at the peak"</h2>
            {reasons.into_iter().map(|r| view! { <p class="notes" data-testid="named-reason">{r}</p> }).collect_view()}
            {body}
        </section>
    }
}

/// The named table's columns: what asked for each allocation (with its module's largest buffers
/// and the modules it could be), its kind, module, shape, Python frame, counts and sizes, and the
/// link to its buffers in the Memory Viewer.
fn columns(state: AppState) -> Vec<Column<NamedPeakRow>> {
    vec![
        Column::new("name", "Allocated by", |r: &NamedPeakRow, k| {
            let buffers = (!r.largest_buffers.is_empty()).then(|| {
                view! {
                    <div class="muted small" data-testid="named-largest-buffers">
                        "largest buffers at its module's peak: "
                        {r.largest_buffers.iter().enumerate().map(|(i, (b, bytes))| view! {
                            {(i > 0).then_some(", ")}
                            <code>{b.clone()}</code> " " <Bytes metric="named_largest_buffer_bytes" value=*bytes key=format!("{k}:{b}") />
                        }).collect_view()}
                    </div>
                }
            });
            let candidates = (!r.name.module_candidates.is_empty()).then(|| {
                view! { <div class="muted small">"could be any of: " {r.name.module_candidates.join(", ")}</div> }
            });
            view! {
                <span title=r.name.label.clone()><Text metric="named_label" value=r.name.label.clone() key=k.to_string() /></span>
                {candidates}
                {buffers}
            }
            .into_any()
        })
        .class("op")
        .sort_key(|r| r.name.label.clone())
        .csv("name", |r| r.name.label.clone()),
        Column::new("kind", "Kind", |r: &NamedPeakRow, k| view! { <Text metric="named_kind" value=r.name.kind.label() key=k.to_string() /> }.into_any())
            .width("100px")
            .sort_key(|r| r.name.kind)
            .csv("kind", |r| r.name.kind.label().to_string()),
        Column::new("module", "Module", |r: &NamedPeakRow, k| {
            let m = r.name.module.clone().unwrap_or_default();
            view! { <span class:muted=m.is_empty()><Text metric="named_module" value=m.clone() key=k.to_string() shown=if m.is_empty() { "–".to_string() } else { m.clone() } /></span> }.into_any()
        })
        .width("12%")
        .sort_key(|r| r.name.module.clone())
        .csv("module", |r| r.name.module.clone().unwrap_or_default()),
        Column::new("shape", "Shape", |r: &NamedPeakRow, k| {
            let (s, title) = (r.name.shape.clone().unwrap_or_default(), r.name.shape.clone());
            view! { <code title=title><Text metric="named_shape" value=s key=k.to_string() /></code> }.into_any()
        })
        .width("12%")
        .sort_key(|r| r.name.shape.clone())
        .csv("shape", |r| r.name.shape.clone().unwrap_or_default()),
        Column::new("python", "Python", |r: &NamedPeakRow, k| {
            let (f, title) = (r.name.python_frame.clone().unwrap_or_default(), r.name.python_frame.clone());
            view! { <code title=title><Text metric="named_python_frame" value=f key=k.to_string() /></code> }.into_any()
        })
        .width("130px")
        .sort_key(|r| r.name.python_frame.clone())
        .csv("python_frame", |r| r.name.python_frame.clone().unwrap_or_default()),
        Column::new("allocations", "Allocations", |r: &NamedPeakRow, k| view! { <Count metric="named_allocations" value=r.allocations key=k.to_string() /> }.into_any())
            .right()
            .width("100px")
            .sort_key(|r| r.allocations)
            .csv("allocations", |r| r.allocations.to_string()),
        Column::new("allocation_bytes", "Allocation size", |r: &NamedPeakRow, k| view! { <Bytes metric="named_allocation_bytes" value=r.allocation_bytes key=k.to_string() /> }.into_any())
            .right()
            .width("120px")
            .sort_key(|r| r.allocation_bytes)
            .csv("allocation_bytes", |r| r.allocation_bytes.to_string()),
        Column::new("requested_bytes", "Requested size", |r: &NamedPeakRow, k| view! { <Bytes metric="named_requested_bytes" value=r.requested_bytes key=k.to_string() /> }.into_any())
            .right()
            .width("120px")
            .sort_key(|r| r.requested_bytes)
            .csv("requested_bytes", |r| r.requested_bytes.to_string()),
        Column::new("viewer", "", move |r: &NamedPeakRow, _| {
            let Some(module) = r.name.module.clone() else { return ().into_any() };
            // One buffer-assignment allocation: its buffer is highlighted; among several of one size
            // none is (never one guessed), the module alone is shown.
            let op = r.name.instruction.clone();
            let title = match &op {
                Some(op) => format!("Memory Viewer: {module}, the buffers of {op} highlighted"),
                None => format!("Memory Viewer: {module} (the allocation is one of several of its size: no buffer highlighted)"),
            };
            view! {
                <button class="op-link" data-testid="named-show-buffers" data-module=module.clone() data-op=op.clone().unwrap_or_default() title=title
                    on:click=move |ev| { ev.stop_propagation(); show_buffers(state, module.clone(), op.clone()); }>
                    "buffers"
                </button>
            }
            .into_any()
        })
        .width("80px"),
    ]
}

#[component]
fn NamedBody(name: String, named: Arc<NamedPeakView>) -> impl IntoView {
    let n = &named;
    let bars = n.peak_bars.clone();
    let columns = columns(expect_context::<AppState>());
    let export_name = format!("{}.named_peak.csv", name.trim_end_matches(".gz").trim_end_matches(".pb").trim_end_matches(".xplane"));
    let spec = TableSpec::new("mp-table mp-named-table", columns)
        .testid("named-rows")
        .filter("Filter name, module, shape", "named-filter", |r: &NamedPeakRow| {
            vec![r.name.label.as_str(), r.name.module.as_deref().unwrap_or(""), r.name.shape.as_deref().unwrap_or("")]
        })
        .counts("named-count", "named_rows_shown", "named_rows")
        .csv(export_name, "named-export-csv")
        .row_attrs(|r: &NamedPeakRow, i| vec![("data-row", i.to_string()), ("data-kind", format!("{:?}", r.name.kind))]);
    let peak = n.peak_bytes;
    let pool = n.pool.clone();
    let pool_kind = view! { <PoolKind pool=pool.clone() /> };
    let bound = pool.unused_at_most_bytes.map(|most| {
        view! {
            " Here: at least " <Bytes metric="pool_unused_at_least_bytes" value=pool.unused_at_least_bytes />
            ", at most " <Bytes metric="pool_unused_at_most_bytes" value=most /> " (the limit "
            <Bytes metric="pool_limit_bytes" value=pool.limit_bytes /> " less " <Bytes metric="pool_in_use_bytes" value=pool.in_use_bytes />
            " in use at the peak)."
        }
    });
    view! {
        <p>
            "All " <Bytes metric="named_peak_bytes" value=peak /> " in use at the peak, by what asked for each allocation: a module's run ("
            "its outputs and temporary, matched to the module's buffer assignment), the compiler's autotuning, a copy from the host. "
            "Every allocation live at the peak, not only the peak step's as in XProf's table below."
        </p>
        {(n.before_trace_bytes < 0).then(|| view! {
            <p class="muted">
                "The window's events free " <Bytes metric="named_before_trace_bytes" value=-n.before_trace_bytes />
                " more than they allocate before the peak: memory allocated before the trace began."
            </p>
        })}
        <PeakBar title="By kind" metric="peak_kind_bytes" share_metric="peak_kind_fraction" testid="named-by-kind" parts=bars.by_kind>
            {pool_kind}
        </PeakBar>
        <p class="muted small" data-testid="named-pool">
            <Text metric="pool_note" value=pool.note.clone() />
            {bound}
        </p>
        <PeakBar title="By module" metric="peak_module_bytes" share_metric="peak_module_fraction" testid="named-by-module" parts=bars.by_module />
        <Table spec rows=Arc::new(named.rows.clone()) />
    }
}

/// The by-kind legend's "preallocated but unused": beside the bar, not a part of it (the bar is the
/// bytes in use); its bytes where the allocator's figures pin the pool, else that the trace cannot
/// tell ([`PoolAtPeak`]).
#[component]
fn PoolKind(pool: PoolAtPeak) -> impl IntoView {
    let figure = match pool.unused_bytes() {
        Some(b) => view! {
            <span class="mp-part-label">"preallocated but unused"</span> " "
            <Bytes metric="pool_unused_bytes" value=b />
        }
        .into_any(),
        None => view! {
            <span class="mp-part-label mp-pool-unknown" data-metric="pool_unused_bytes" data-value="">
                "preallocated but unused: the trace cannot tell"
            </span>
        }
        .into_any(),
    };
    view! {
        <li data-testid="named-pool-kind" title=pool.note.clone()>
            <span class="sw mp-part mp-pool-unknown"></span>
            {figure}
        </li>
    }
}

/// A bar of bytes in `parts` (each with its share of the bar's total, the engine's), with a legend
/// whose figures carry `metric` (bytes) and `share_metric` (share) and the part's key; `children`,
/// more legend items (what the bar cannot show).
#[component]
pub(super) fn PeakBar(
    title: &'static str,
    metric: &'static str,
    share_metric: &'static str,
    testid: &'static str,
    parts: Vec<BarPart>,
    #[prop(optional)] children: Option<Children>,
) -> impl IntoView {
    let bar = parts
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let style = format!("width:{:.3}%", p.fraction * 100.0);
            view! { <span class=format!("mp-part c{}", i % COLOURS) style=style title=p.label.clone()></span> }
        })
        .collect_view();
    let legend = parts
        .into_iter()
        .enumerate()
        .map(|(i, p)| {
            view! {
                <li>
                    <span class=format!("sw mp-part c{}", i % COLOURS)></span>
                    <span class="mp-part-label" title=p.label.clone()>{p.label.clone()}</span> " "
                    <Bytes metric value=p.bytes key=p.key.clone() /> " "
                    <span class="muted"><Percent metric=share_metric value=p.fraction key=p.key.clone() /></span>
                </li>
            }
        })
        .collect_view();
    view! {
        <div class="mp-bar-row" data-testid=testid>
            <div class="mp-bar-title">{title}</div>
            <div class="mp-bar" role="img" aria-label=title>{bar}</div>
            <ul class="mp-bar-legend">{legend} {children.map(|c| c())}</ul>
        </div>
    }
}
