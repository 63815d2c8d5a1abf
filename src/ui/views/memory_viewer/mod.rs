//! The Memory Viewer tool: for one compiled HLO module, how the heap evolves over program order, which
//! buffers are live at the peak and where they sit, and what to shrink when it runs out of memory.
//! Every figure is the engine's (`analysis::memory_viewer`, through the worker); this view only lays
//! them out, links the charts (hovering a buffer highlights it everywhere), and remembers the module
//! in the URL.

use crate::analysis::memory_viewer::{GroupTotal, HeapObject, MemoryViewer};
use crate::engine::memory_viewer::{ModuleEntry, ModuleProblem};
use crate::engine::protocol::{RequestBody, ResponseBody};
use crate::ui::charts::block_timeline::{BlockTimeline, TimelineData};
use crate::ui::charts::now_ms;
use crate::ui::charts::plot::{group_color, GROUPS};
use crate::ui::charts::viewport::Viewport;
use crate::ui::charts::working_space::WorkingSpace;
use crate::ui::components::metric::{Bytes, Count, Text};
use crate::ui::components::table::{Column, Table, TableSpec, TableState};
use crate::ui::engine_client;
use crate::ui::state::{AppState, FileStatus};
use leptos::prelude::*;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

/// Buffers named in the "what to shrink" panel.
const TOP_BUFFERS: usize = 5;

/// One module's answer, as the page keeps it.
#[derive(Clone)]
enum Loaded {
    Ready { viewer: Arc<MemoryViewer>, timeline: Arc<TimelineData>, load_ms: f64 },
    Unavailable(ModuleProblem),
}

type ViewerKey = (u32, String, Option<i64>);

/// The ids of the ready files a module list covers, and the list.
type ModuleList = (Vec<u32>, Arc<Vec<ModuleEntry>>);

thread_local! {
    /// The module list and the ready files it covers. The view is rebuilt whenever the file list
    /// changes; these keep it from asking the engine again and from flashing "loading".
    static MODULES: RefCell<Option<ModuleList>> = const { RefCell::new(None) };
    static VIEWERS: RefCell<HashMap<ViewerKey, Loaded>> = RefCell::new(HashMap::new());
}

fn ready_files(state: AppState) -> Vec<(u32, String)> {
    state.files.with(|fs| {
        fs.iter()
            .filter_map(|f| match f.status {
                FileStatus::Ready { file_id, .. } => Some((file_id, f.name.clone())),
                _ => None,
            })
            .collect()
    })
}

#[component]
pub fn MemoryViewerView() -> impl IntoView {
    let state = expect_context::<AppState>();
    let files = Memo::new(move |_| ready_files(state));
    let ids = Memo::new(move |_| {
        let mut ids: Vec<u32> = files.get().into_iter().map(|(id, _)| id).collect();
        ids.sort_unstable();
        ids
    });
    let cached = MODULES.with(|m| m.borrow().as_ref().filter(|(i, _)| *i == ids.get_untracked()).map(|(_, l)| l.clone()));
    let modules = RwSignal::new(cached);
    Effect::new(move |_| {
        let ids = ids.get();
        if MODULES.with(|m| m.borrow().as_ref().is_some_and(|(i, _)| *i == ids)) {
            return;
        }
        engine_client::send(
            RequestBody::MemoryViewerModules,
            None,
            "Memory Viewer modules".into(),
            Box::new(move |body| {
                if let ResponseBody::MemoryViewerModules { modules: list } = body {
                    let list = Arc::new(list);
                    MODULES.with(|m| *m.borrow_mut() = Some((ids.clone(), list.clone())));
                    modules.set(Some(list));
                }
            }),
        );
    });

    // The module shown: the one in the state (URL) when the selected file has it, else that file's
    // largest.
    let current = Memo::new(move |_| {
        let list = modules.get()?;
        let name = state.selected.get()?;
        let file_id = files.with(|fs| fs.iter().find(|(_, n)| *n == name).map(|(id, _)| *id))?;
        let wanted = state.module.get();
        let of_file: Vec<&ModuleEntry> = list.iter().filter(|m| m.file_id == file_id).collect();
        let entry = of_file.iter().find(|m| Some(&m.name) == wanted.as_ref()).or(of_file.first())?;
        Some((file_id, entry.name.clone(), state.memory_space.get()))
    });
    let loaded = RwSignal::new(None::<(ViewerKey, Loaded)>);
    Effect::new(move |_| {
        let Some(key) = current.get() else { return };
        if let Some(hit) = VIEWERS.with(|v| v.borrow().get(&key).cloned()) {
            loaded.set(Some((key, hit)));
            return;
        }
        let (file_id, module, memory_space) = key.clone();
        let sent = now_ms();
        engine_client::send(
            RequestBody::MemoryViewer { file_id, module, memory_space },
            None,
            "Memory Viewer".into(),
            Box::new(move |body| {
                let answer = match body {
                    ResponseBody::MemoryViewer { viewer, .. } => {
                        let timeline = Arc::new(TimelineData::new(&viewer));
                        Loaded::Ready { viewer: Arc::new(*viewer), timeline, load_ms: now_ms() - sent }
                    }
                    ResponseBody::MemoryViewerUnavailable { problem, .. } => Loaded::Unavailable(problem),
                    ResponseBody::Failed { error } => {
                        Loaded::Unavailable(ModuleProblem { message: error.message, no_buffer_assignment: false })
                    }
                    _ => return,
                };
                VIEWERS.with(|v| v.borrow_mut().insert(key.clone(), answer.clone()));
                loaded.set(Some((key.clone(), answer)));
            }),
        );
    });

    let body = move || {
        let Some(list) = modules.get() else {
            return view! { <p class="muted loading">"Reading the HLO modules of the loaded files…"</p> }.into_any();
        };
        let Some(key) = current.get() else {
            let file = state.selected.get().unwrap_or_default();
            let hint = if list.is_empty() {
                "None of the loaded files has HLO modules. The Memory Viewer reads XLA HloProto dumps (*.hlo.pb, with buffer assignment: the after_optimizations one) and XProf traces (*.xplane.pb) of compiled programs."
            } else {
                "Choose a module of another file above."
            };
            return view! { <p class="empty" data-testid="mv-no-modules">{format!("{file} has no HLO modules. {hint}")}</p> }.into_any();
        };
        match loaded.get() {
            Some((k, Loaded::Ready { viewer, timeline, load_ms })) if k == key => {
                view! { <Module viewer timeline load_ms /> }.into_any()
            }
            Some((k, Loaded::Unavailable(problem))) if k == key => view! {
                <section class="mv-unavailable" data-testid="mv-unavailable" data-no-buffer-assignment=problem.no_buffer_assignment.to_string()>
                    <h2>{if problem.no_buffer_assignment { format!("{} has no buffer assignment", key.1) } else { format!("{} cannot be shown", key.1) }}</h2>
                    <p>{problem.message}</p>
                </section>
            }
            .into_any(),
            _ => view! { <p class="muted loading">{format!("Analysing {}…", key.1)}</p> }.into_any(),
        }
    };
    view! {
        <article class="memory-viewer" data-testid="memory-viewer">
            <header class="mv-head">
                {move || modules.get().map(|list| view! { <ModulePicker modules=list current=current.get() /> })}
                {move || match loaded.get() {
                    Some((_, Loaded::Ready { viewer, .. })) if viewer.memory_spaces.len() > 1 => Some(view! { <MemorySpace viewer /> }),
                    _ => None,
                }}
            </header>
            {body}
        </article>
    }
}

/// The searchable module selector: every module of every loaded file, largest peak first.
#[component]
fn ModulePicker(modules: Arc<Vec<ModuleEntry>>, current: Option<ViewerKey>) -> impl IntoView {
    let state = expect_context::<AppState>();
    let open = RwSignal::new(false);
    let query = RwSignal::new(String::new());
    let input = NodeRef::<leptos::html::Input>::new();
    let chosen = current.as_ref().and_then(|(f, n, _)| modules.iter().find(|m| m.file_id == *f && m.name == *n)).cloned();
    let several_files = modules.iter().any(|m| m.file_id != modules[0].file_id);
    let pick = move |m: &ModuleEntry| {
        state.selected.set(Some(m.file.clone()));
        state.module.set(Some(m.name.clone()));
        state.memory_space.set(None);
        open.set(false);
        query.set(String::new());
    };
    let list = modules.clone();
    let matches = move || {
        let q = query.get().to_lowercase();
        list.iter()
            .filter(|m| q.is_empty() || m.name.to_lowercase().contains(&q) || m.file.to_lowercase().contains(&q))
            .cloned()
            .collect::<Vec<_>>()
    };
    let first_match = matches.clone();
    Effect::new(move |_| {
        if open.get() {
            if let Some(i) = input.get() {
                let _ = i.focus();
            }
        }
    });
    let total = modules.len();
    view! {
        <div class="module-picker">
            <span class="field-label">"Module"</span>
            <button class="btn picker-button" data-testid="module-select" title="Choose a module (every module of every loaded file, largest peak first)" on:click=move |_| open.update(|o| *o = !*o)>
                {match chosen.clone() {
                    Some(m) => view! {
                        <code data-metric="module" data-value=m.name.clone()>{m.name.clone()}</code>
                        {several_files.then(|| view! { <span class="muted">{format!(" · {}", m.file)}</span> })}
                        {m.peak_heap_bytes.map(|p| view! { <span class="muted">" · peak "</span><Bytes metric="module_peak_heap_bytes" value=p /> })}
                    }.into_any(),
                    None => view! { <span class="muted">"Choose a module"</span> }.into_any(),
                }}
                <span class="caret">"▾"</span>
            </button>
            <span class="muted count-note">{format!("{total} module{}", if total == 1 { "" } else { "s" })}</span>
            <Show when=move || open.get()>
                <div class="picker-panel" data-testid="module-panel">
                    <input
                        type="search"
                        placeholder="Search modules and files"
                        data-testid="module-search"
                        node_ref=input
                        prop:value=move || query.get()
                        on:input=move |ev| query.set(event_target_value(&ev))
                        on:keydown={
                            let first_match = first_match.clone();
                            move |ev: web_sys::KeyboardEvent| match ev.key().as_str() {
                                "Escape" => open.set(false),
                                "Enter" => {
                                    if let Some(m) = first_match().first() {
                                        pick(m);
                                    }
                                }
                                _ => {}
                            }
                        }
                    />
                    <div class="picker-list">
                        {
                            let matches = matches.clone();
                            move || {
                                let found = matches();
                                if found.is_empty() {
                                    return view! { <div class="muted picker-empty">"No module matches."</div> }.into_any();
                                }
                                found
                                    .into_iter()
                                    .map(|m| {
                                        let key = format!("{}#{}", m.file_id, m.name);
                                        let row = m.clone();
                                        view! {
                                            <div class="picker-row" data-module=m.name.clone() data-file=m.file.clone() on:click=move |_| pick(&row)>
                                                <code class="pr-name">{m.name.clone()}</code>
                                                <span class="pr-file muted">{m.file.clone()}</span>
                                                <span class="pr-peak">
                                                    {match (m.peak_heap_bytes, &m.problem) {
                                                        (Some(p), _) => view! { <Bytes metric="listed_peak_heap_bytes" value=p key=key /> }.into_any(),
                                                        (None, Some(pr)) if pr.no_buffer_assignment => view! { <span class="muted">"no buffer assignment"</span> }.into_any(),
                                                        _ => view! { <span class="muted">"unavailable"</span> }.into_any(),
                                                    }}
                                                </span>
                                            </div>
                                        }
                                    })
                                    .collect_view()
                                    .into_any()
                            }
                        }
                    </div>
                </div>
            </Show>
        </div>
    }
}

#[component]
fn MemorySpace(viewer: Arc<MemoryViewer>) -> impl IntoView {
    let state = expect_context::<AppState>();
    let current = viewer.options.memory_space;
    view! {
        <label class="field">
            "Memory space "
            <select data-testid="memory-space" on:change=move |ev| state.memory_space.set(event_target_value(&ev).parse().ok()) prop:value=current.to_string()>
                {viewer.memory_spaces.iter().map(|s| view! { <option value=s.to_string()>{if *s == 0 { "0 (device)".to_string() } else { s.to_string() }}</option> }).collect_view()}
            </select>
        </label>
    }
}

/// A buffer as the details card shows it, from the peak list or from the block layout.
struct BufferInfo {
    id: i64,
    name: String,
    group: String,
    size: i64,
    unpadded: i64,
    shape: String,
    op_name: String,
    opcode: String,
    source: Option<String>,
    span: Option<(i64, i64)>,
}

impl BufferInfo {
    fn find(v: &MemoryViewer, t: &TimelineData, id: i64) -> Option<BufferInfo> {
        let span = v.spans.get(&id).map(|s| (s.start, s.limit));
        let source = |s: &crate::analysis::memory_viewer::SourceInfo| format!("{}:{}", s.file_name, s.line_number);
        if let Some(o) = v.peak_buffers.iter().find(|o| o.logical_buffer_id == Some(id)) {
            return Some(BufferInfo {
                id,
                name: o.instruction_name.clone(),
                group: o.group.as_deref().unwrap_or("").to_string(),
                size: o.size_bytes,
                unpadded: o.unpadded_bytes,
                shape: o.shape.clone(),
                op_name: o.op_name.clone(),
                opcode: o.opcode.clone(),
                source: o.source.as_ref().map(source),
                span,
            });
        }
        let b = v.blocks.get(t.block_of(id)?)?;
        Some(BufferInfo {
            id,
            name: b.name.clone(),
            group: b.category.to_string(),
            size: b.size_bytes,
            unpadded: b.unpadded_bytes,
            shape: b.shape.clone(),
            op_name: b.op_name.clone(),
            opcode: String::new(),
            source: b.source.as_ref().map(source),
            span,
        })
    }
}

#[component]
fn Module(viewer: Arc<MemoryViewer>, timeline: Arc<TimelineData>, load_ms: f64) -> impl IntoView {
    let hovered = RwSignal::new(None::<i64>);
    let pinned = RwSignal::new(None::<i64>);
    let view_port: RwSignal<Viewport> = RwSignal::new(timeline.full);
    let v = viewer.clone();
    let f = v.figures.clone();
    let fragmentation = f.fragmentation.map(|x| (format!("{x}"), format!("{:.1} %", x * 100.0)));
    let notes = v.notes.clone();
    let has_blocks = !timeline.is_empty();
    let details_viewer = viewer.clone();
    let details_timeline = timeline.clone();
    let default_id = v.peak_buffers_by_size.iter().filter_map(|&i| v.peak_buffers.get(i)).find_map(|o| o.logical_buffer_id);
    let details = move || {
        let id = hovered.get().or(pinned.get()).or(default_id)?;
        BufferInfo::find(&details_viewer, &details_timeline, id).map(|b| view! { <BufferDetails b pinned=pinned.get() == Some(id) /> })
    };
    view! {
        <div class="mv-module" data-module=v.module_name.clone() data-load-ms=format!("{load_ms:.1}")>
            {(!notes.is_empty()).then(|| view! { <ul class="notes">{notes.into_iter().map(|n| view! { <li data-testid="note">{n}</li> }).collect_view()}</ul> })}
            <div class="summary-cards mv-cards" data-testid="mv-overview">
                <Card label="Peak heap" hint="The heap at its highest point, including parameters and outputs live for the whole program"><Bytes metric="peak_heap_bytes" value=f.peak_heap_bytes /></Card>
                <Card label="Unpadded peak" hint="The same buffers without layout padding and tiling"><Bytes metric="peak_unpadded_heap_bytes" value=f.peak_unpadded_heap_bytes /></Card>
                <Card label="Padding overhead" hint="Peak − unpadded peak"><Bytes metric="padding_overhead_bytes" value=f.padding_overhead_bytes /></Card>
                <Card label="Total allocation" hint="Every allocation of this memory space except thread-local ones"><Bytes metric="total_allocation_bytes" value=f.total_allocation_bytes /></Card>
                <Card label="Fragmentation" hint="Share of the temporary allocation unused at the peak">
                    {match fragmentation {
                        Some((raw, shown)) => view! { <Text metric="fragmentation" value=raw shown=shown /> }.into_any(),
                        None => view! { <Text metric="fragmentation" value="" shown="—" /> }.into_any(),
                    }}
                </Card>
                <Card label="Entry parameters" hint="Arguments of the entry computation"><Bytes metric="entry_parameters_bytes" value=f.entry_parameters_bytes /></Card>
                <Card label="Maybe live-out" hint="Outputs that may outlive the program"><Bytes metric="maybe_live_out_bytes" value=f.maybe_live_out_bytes /></Card>
                <Card label="Temporaries" hint="Total allocation − allocations live for the whole program"><Bytes metric="temporary_allocation_bytes" value=f.temporary_allocation_bytes /></Card>
                <Card label="Indefinite" hint="Parameters, constants and outputs: live for the whole program"><Bytes metric="indefinite_allocation_bytes" value=f.indefinite_allocation_bytes /></Card>
                <Card label="Non-reusable" hint="Thread-local and tuple allocations"><Bytes metric="non_reusable_bytes" value=f.non_reusable_bytes /></Card>
            </div>
            <div class="mv-grid">
                <div class="mv-charts">
                    <section class="panel">
                        <div class="panel-head">
                            <h2>"Working space"</h2>
                            {(!v.heap_bytes.is_empty()).then(|| view! {
                                <span class="legend"><i class="swatch line accent"></i>"heap" <i class="swatch line dashed"></i>"unpadded" <i class="swatch line peak"></i>"peak at step " <Count metric="peak_position" value=v.peak_position as u64 /></span>
                            })}
                        </div>
                        {if v.heap_bytes.is_empty() {
                            view! { <p class="empty chart-empty" data-testid="no-trace">"This memory space has no heap-simulator trace, so the heap does not change over the program: it holds only the allocations live for the whole program, listed below."</p> }.into_any()
                        } else {
                            view! { <WorkingSpace viewer=viewer.clone() view=view_port hovered pinned /> }.into_any()
                        }}
                    </section>
                    <section class="panel">
                        <div class="panel-head">
                            <h2>"Allocation blocks"</h2>
                            <span class="legend">
                                {GROUPS.iter().map(|g| view! { <i class="swatch" style=format!("background:{}", group_color(g, 0))></i>{*g}" " }).collect_view()}
                            </span>
                        </div>
                        {if has_blocks {
                            view! {
                                <BlockTimeline viewer=viewer.clone() data=timeline.clone() view=view_port hovered pinned />
                                <div class="muted chart-foot">"x: program order (width = lifetime) · y: offset (height = size) · wheel zooms (Ctrl: x only, Alt: y only) · drag pans · W/S zoom, A/D pan · click pins a buffer · double-click resets"</div>
                            }.into_any()
                        } else {
                            view! { <p class="empty chart-empty" data-testid="no-blocks">"This memory space has no heap-simulated buffers: everything in it is live for the whole program (parameters, constants, outputs), so there is no layout over time to draw."</p> }.into_any()
                        }}
                    </section>
                </div>
                <aside class="mv-side">
                    {details}
                    <Shrink viewer=viewer.clone() hovered pinned />
                </aside>
            </div>
            <PeakBuffers viewer=viewer.clone() hovered pinned />
        </div>
    }
}

#[component]
fn Card(label: &'static str, hint: &'static str, children: Children) -> impl IntoView {
    view! { <div class="card" title=hint><div class="label">{label}</div><div class="value">{children()}</div></div> }
}

#[component]
fn BufferDetails(b: BufferInfo, pinned: bool) -> impl IntoView {
    let key = b.id.to_string();
    let expansion = (b.unpadded > 0).then(|| b.size as f64 / b.unpadded as f64);
    view! {
        <section class="panel details" data-testid="buffer-details" data-buffer-id=key.clone()>
            <div class="panel-head"><h2>"Buffer"</h2>{pinned.then(|| view! { <span class="muted">"pinned (click another to change)"</span> })}</div>
            <div class="details-name"><code><Text metric="buffer_name" value=b.name.clone() /></code></div>
            <table class="kv">
                <tr><td>"Group"</td><td><i class="swatch" style=format!("background:{}", group_color(&b.group, 0))></i><Text metric="buffer_group" value=b.group.clone() /></td></tr>
                <tr><td>"Size"</td><td><Bytes metric="buffer_size_bytes" value=b.size /></td></tr>
                <tr><td>"Unpadded size"</td><td><Bytes metric="buffer_unpadded_bytes" value=b.unpadded /></td></tr>
                <tr><td>"Expansion"</td><td>{match expansion {
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

fn share(part: i64, whole: i64) -> String {
    if whole <= 0 {
        return "—".into();
    }
    format!("{:.1} %", part as f64 * 100.0 / whole as f64)
}

/// The OOM answer: at the peak, bytes per group and the largest buffers.
#[component]
fn Shrink(viewer: Arc<MemoryViewer>, hovered: RwSignal<Option<i64>>, pinned: RwSignal<Option<i64>>) -> impl IntoView {
    let peak = viewer.peak_heap_bytes;
    let mut groups = viewer.peak_by_group.clone();
    groups.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.group.cmp(&b.group)));
    let top: Vec<HeapObject> = viewer
        .peak_buffers_by_size
        .iter()
        .filter_map(|&i| viewer.peak_buffers.get(i))
        .filter(|o| o.logical_buffer_id.is_some())
        .take(TOP_BUFFERS)
        .cloned()
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
fn group_table(peak: i64) -> TableSpec<GroupTotal> {
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

/// A buffer live at the peak, with its place in XProf's by-size order.
struct PeakRow {
    /// 0 for the largest (XProf's `maxHeapBySize` order, ties as XProf breaks them).
    size_rank: usize,
    /// Padding bytes (size − unpadded); 0 for the folded small buffers.
    padding_bytes: i64,
    o: HeapObject,
}

/// The buffers live at the peak as bars, sortable by program order, size or padding.
#[component]
fn PeakBuffers(viewer: Arc<MemoryViewer>, hovered: RwSignal<Option<i64>>, pinned: RwSignal<Option<i64>>) -> impl IntoView {
    let count = viewer.peak_buffers.len();
    let largest = viewer.peak_buffers.iter().map(|o| o.size_bytes).max().unwrap_or(0).max(1) as f64;
    let mut size_rank = vec![0; count];
    for (rank, &i) in viewer.peak_buffers_by_size.iter().enumerate() {
        if let Some(r) = size_rank.get_mut(i) {
            *r = rank;
        }
    }
    let rows: Arc<Vec<PeakRow>> = Arc::new(
        viewer
            .peak_buffers
            .iter()
            .zip(size_rank)
            .map(|(o, size_rank)| PeakRow {
                size_rank,
                padding_bytes: if o.logical_buffer_id.is_some() { o.size_bytes - o.unpadded_bytes } else { 0 },
                o: o.clone(),
            })
            .collect(),
    );
    let key = |r: &PeakRow| r.o.logical_buffer_id.map_or_else(|| "small".to_string(), |i| i.to_string());
    let columns = vec![
        Column::new("program", "#", |_: &PeakRow, i| view! { <span class="muted num">{i}</span> }.into_any())
            .right()
            .width("44px")
            .sort_key(|r| r.o.color_index),
        Column::new("name", "Buffer", |r: &PeakRow, _| {
            let name = if r.o.logical_buffer_id.is_some() { r.o.instruction_name.clone() } else { r.o.label.clone() };
            view! { <code class="br-name" title=r.o.label.clone()>{name}</code> }.into_any()
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
        .row_attrs(move |r, _| vec![("data-testid", "peak-buffer".to_string()), ("data-buffer-id", key(r))])
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
