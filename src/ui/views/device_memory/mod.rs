//! The Device memory tool: JAX device memory profiles (`*.prof` from
//! `jax.profiler.save_device_memory_profile`). One profile: who holds memory, by function, by
//! allocation site and as a flame graph. Two: what changed between a base and a target. A series:
//! what keeps growing, with the leak suspects ranked and explained. All figures come from the engine
//! (`engine::device_memory`); this view only asks and draws.

use crate::analysis::device_memory::{order_by_number, DiffRow, Frame, FunctionRow, SeriesStack, StackRow};
use crate::decode::Format;
use crate::engine::device_memory::{DeviceMemoryDiffView, DeviceMemoryProfileView, DeviceMemoryQuery, DeviceMemorySeriesView, Labels};
use crate::engine::protocol::{RequestBody, ResponseBody};
use crate::engine::FileOverview;
use crate::ui::charts::flame::FlameGraph;
use crate::ui::charts::sparkline::SeriesChart;
use crate::ui::components::metric::{Bytes, Count, SignedBytes, Text};
use crate::ui::components::table::{Column, Table, TableSpec, TableState};
use crate::ui::engine_client;
use crate::ui::state::{AppState, FileStatus, Tool};
use leptos::prelude::*;
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Profile,
    Diff,
    Series,
}

impl Mode {
    fn slug(self) -> &'static str {
        match self {
            Mode::Profile => "profile",
            Mode::Diff => "diff",
            Mode::Series => "series",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Reply {
    Profile(Box<DeviceMemoryProfileView>),
    Diff(Box<DeviceMemoryDiffView>),
    Series(Box<DeviceMemorySeriesView>),
    Failed(String),
}

/// The tool's choices and its last answer. They outlive the view, which the page rebuilds whenever
/// the file list changes, so a choice or an answer is not lost (nor asked again) on a rebuild.
#[derive(Clone)]
struct Ui {
    /// `None`: a series when two or more profiles are loaded, else the selected profile.
    mode: ArcRwSignal<Option<Mode>>,
    fold: ArcRwSignal<bool>,
    kind: ArcRwSignal<Option<String>>,
    device: ArcRwSignal<Option<String>>,
    /// File names chosen for a diff.
    base: ArcRwSignal<Option<String>>,
    target: ArcRwSignal<Option<String>>,
    /// The function table's sort and filter.
    table: TableState,
    /// The function whose frames the flame graph outlines (a clicked table row).
    highlight: ArcRwSignal<Option<(String, String)>>,
    /// The last answer and the request (as JSON) it answers.
    reply: ArcRwSignal<Option<(String, Reply)>>,
    /// The request in flight, if any.
    pending: ArcRwSignal<Option<String>>,
    /// How many series stacks to show beyond the suspects.
    show_all: ArcRwSignal<bool>,
}

thread_local! {
    static UI: Ui = Ui {
        mode: ArcRwSignal::new(None),
        fold: ArcRwSignal::new(true),
        kind: ArcRwSignal::new(None),
        device: ArcRwSignal::new(None),
        base: ArcRwSignal::new(None),
        target: ArcRwSignal::new(None),
        table: TableState::sorted("FlatBytes", true),
        highlight: ArcRwSignal::new(None),
        reply: ArcRwSignal::new(None),
        pending: ArcRwSignal::new(None),
        show_all: ArcRwSignal::new(false),
    };
}

fn ui() -> Ui {
    UI.with(Clone::clone)
}

/// Loaded pprof files (name, engine file id) in series order, and how many files are still loading.
fn profiles(state: AppState) -> (Vec<(String, u32)>, usize) {
    state.files.with(|fs| {
        let ready: Vec<(String, u32)> = fs
            .iter()
            .filter_map(|f| match &f.status {
                FileStatus::Ready { file_id, overview } if overview.format == Format::Pprof => Some((f.name.clone(), *file_id)),
                _ => None,
            })
            .collect();
        let names: Vec<&str> = ready.iter().map(|(n, _)| n.as_str()).collect();
        let ordered = order_by_number(&names).0.into_iter().map(|i| ready[i].clone()).collect();
        (ordered, fs.iter().filter(|f| matches!(f.status, FileStatus::Loading { .. })).count())
    })
}

/// The request the current choices call for, or why there is none yet.
fn request(state: AppState, u: &Ui, mode: Mode, pprofs: &[(String, u32)], loading: usize) -> Result<RequestBody, String> {
    let query = DeviceMemoryQuery { fold_library_frames: u.fold.get(), kind: u.kind.get(), device: u.device.get() };
    let id = |name: &str| pprofs.iter().find(|(n, _)| n == name).map(|(_, id)| *id);
    match mode {
        Mode::Profile => {
            let selected = state.selected.get().unwrap_or_default();
            id(&selected)
                .map(|file_id| RequestBody::DeviceMemoryProfile { file_id, query })
                .ok_or_else(|| format!("{selected} is not a loaded profile"))
        }
        Mode::Diff => {
            let (base, target) = diff_pair(state, u, pprofs);
            match (base.as_deref().and_then(id), target.as_deref().and_then(id)) {
                (Some(base_file_id), Some(target_file_id)) => Ok(RequestBody::DeviceMemoryDiff { base_file_id, target_file_id, query }),
                _ => Err("Pick a base and a target profile.".into()),
            }
        }
        Mode::Series if loading > 0 => Err(format!("Waiting for {loading} file(s) to finish loading…")),
        Mode::Series => Ok(RequestBody::DeviceMemorySeries { file_ids: pprofs.iter().map(|(_, id)| *id).collect(), query }),
    }
}

/// The diff's base and target: the user's picks while they are loaded; by default the selected
/// profile (else the last of the series) against the snapshot before it.
fn diff_pair(state: AppState, u: &Ui, pprofs: &[(String, u32)]) -> (Option<String>, Option<String>) {
    let loaded = |n: &Option<String>| n.clone().filter(|n| pprofs.iter().any(|(p, _)| p == n));
    let target = loaded(&u.target.get()).or_else(|| loaded(&state.selected.get())).or_else(|| pprofs.last().map(|p| p.0.clone()));
    let pos = target.as_ref().and_then(|t| pprofs.iter().position(|(p, _)| p == t));
    let fallback = pos
        .and_then(|i| i.checked_sub(1).or(if pprofs.len() > 1 { Some(i + 1) } else { None }))
        .and_then(|i| pprofs.get(i))
        .map(|p| p.0.clone());
    (loaded(&u.base.get()).or(fallback), target)
}

fn send(u: &Ui, key: String, body: RequestBody) {
    u.pending.set(Some(key.clone()));
    let u2 = u.clone();
    engine_client::send(
        body,
        None,
        "device memory".into(),
        Box::new(move |body| {
            let reply = match body {
                ResponseBody::DeviceMemoryProfile { view } => Reply::Profile(view),
                ResponseBody::DeviceMemoryDiff { view } => Reply::Diff(view),
                ResponseBody::DeviceMemorySeries { view } => Reply::Series(view),
                ResponseBody::Failed { error } => Reply::Failed(error.to_string()),
                ResponseBody::Rejected { message } => Reply::Failed(message),
                _ => return,
            };
            if u2.pending.get_untracked().as_ref() == Some(&key) {
                u2.pending.set(None);
            }
            u2.reply.set(Some((key.clone(), reply)));
        }),
    );
}

#[component]
pub fn DeviceMemory(overview: FileOverview) -> impl IntoView {
    let state = expect_context::<AppState>();
    if overview.format != Format::Pprof {
        return view! { <NotPprof overview=overview /> }.into_any();
    }
    let u = ui();
    let mode = {
        let u = u.clone();
        Memo::new(move |_| {
            let n = profiles(state).0.len();
            match u.mode.get() {
                Some(m) if n >= 2 || m == Mode::Profile => m,
                _ if n >= 2 => Mode::Series,
                _ => Mode::Profile,
            }
        })
    };
    // The request the choices call for, as (JSON key, body), or why there is none.
    let wanted = {
        let u = u.clone();
        Memo::new(move |_| {
            let (pprofs, loading) = profiles(state);
            request(state, &u, mode.get(), &pprofs, loading).map(|b| (serde_json::to_string(&b).unwrap_or_default(), b))
        })
    };
    {
        let u = u.clone();
        Effect::new(move |_| {
            let Ok((key, body)) = wanted.get() else { return };
            let answered = u.reply.with_untracked(|r| r.as_ref().is_some_and(|(k, _)| *k == key));
            if !answered && u.pending.get_untracked().as_ref() != Some(&key) {
                send(&u, key, body);
            }
        });
    }
    let status = {
        let u = u.clone();
        move || match wanted.get() {
            Err(_) => "waiting",
            Ok((key, _)) if u.reply.with(|r| r.as_ref().is_some_and(|(k, _)| *k == key)) => "ready",
            Ok(_) => "loading",
        }
    };
    let body = {
        let u = u.clone();
        move || {
            let waiting = wanted.get().err();
            let m = mode.get();
            // Keep showing the last answer while a new one is computed: no blank flash, no jump.
            let reply = u.reply.get().map(|(_, r)| r);
            match (reply, waiting) {
                (_, Some(why)) if m == Mode::Series || m == Mode::Diff => view! { <p class="muted">{why}</p> }.into_any(),
                (Some(Reply::Failed(e)), _) => view! { <p class="banner error" data-testid="dm-error">{e}</p> }.into_any(),
                (Some(Reply::Profile(v)), _) if m == Mode::Profile => view! { <ProfileView view=*v /> }.into_any(),
                (Some(Reply::Diff(v)), _) if m == Mode::Diff => view! { <DiffView view=*v /> }.into_any(),
                (Some(Reply::Series(v)), _) if m == Mode::Series => view! { <SeriesView view=*v /> }.into_any(),
                _ => view! { <p class="muted loading">"Analysing…"</p> }.into_any(),
            }
        }
    };
    view! {
        <article class="device-memory" data-testid="device-memory" data-mode=move || mode.get().slug() data-state=status>
            <Controls mode=mode />
            {body}
        </article>
    }
    .into_any()
}

/// A select of label values with an "all" entry; `None` = all.
fn label_select(testid: &'static str, all: &'static str, values: Vec<String>, signal: ArcRwSignal<Option<String>>) -> impl IntoView {
    let current = signal.clone();
    view! {
        <select data-testid=testid on:change=move |ev| { let v = event_target_value(&ev); signal.set((!v.is_empty()).then_some(v)); } prop:value=move || current.get().unwrap_or_default()>
            <option value="">{all}</option>
            {values.into_iter().map(|v| view! { <option value=v.clone()>{v.clone()}</option> }).collect_view()}
        </select>
    }
}

#[component]
fn Controls(mode: Memo<Mode>) -> impl IntoView {
    let state = expect_context::<AppState>();
    let u = ui();
    let count = move || profiles(state).0.len();
    // Filters offer the labels of the last answer: they are the files' labels, whatever is filtered.
    let labels = {
        let u = u.clone();
        move || {
            u.reply.with(|r| match r.as_ref().map(|(_, r)| r) {
                Some(Reply::Profile(v)) => v.labels.clone(),
                Some(Reply::Diff(v)) => v.labels.clone(),
                Some(Reply::Series(v)) => v.labels.clone(),
                _ => Labels::default(),
            })
        }
    };
    let mode_button = {
        let u = u.clone();
        move |m: Mode, label: &'static str| {
            let u = u.clone();
            let needs_two = m != Mode::Profile;
            view! {
                <button
                    class="seg"
                    data-mode=m.slug()
                    aria-pressed=move || (mode.get() == m).to_string()
                    disabled=move || needs_two && count() < 2
                    title=if needs_two { "Needs two or more loaded *.prof files" } else { "The selected profile" }
                    on:click=move |_| u.mode.set(Some(m))
                >
                    {label}
                </button>
            }
        }
    };
    let pair = {
        let u = u.clone();
        move || {
            if mode.get() != Mode::Diff {
                return None;
            }
            let pprofs = profiles(state).0;
            let (base, target) = diff_pair(state, &u, &pprofs);
            let options = move |sel: Option<String>| {
                pprofs
                    .iter()
                    .map(|(n, _)| view! { <option value=n.clone() selected=sel.as_deref() == Some(n.as_str())>{n.clone()}</option> })
                    .collect_view()
            };
            let (ub, ut) = (u.base.clone(), u.target.clone());
            let (sb, st) = (base.clone(), target.clone());
            let swap = {
                let (ub, ut) = (u.base.clone(), u.target.clone());
                move |_| {
                    ub.set(st.clone());
                    ut.set(sb.clone());
                }
            };
            Some(view! {
                <label class="field">"Base " <select data-testid="dm-base" on:change=move |ev| ub.set(Some(event_target_value(&ev)))>{options.clone()(base)}</select></label>
                <button class="btn icon" title="Swap base and target" data-testid="dm-swap" on:click=swap>"⇄"</button>
                <label class="field">"Target " <select data-testid="dm-target" on:change=move |ev| ut.set(Some(event_target_value(&ev)))>{options(target)}</select></label>
            })
        }
    };
    let selected = move || (mode.get() == Mode::Profile).then(|| view! { <span class="muted">{state.selected.get()}</span> });
    let pending = {
        let u = u.clone();
        move || u.pending.get().is_some().then(|| view! { <span class="muted updating">"updating…"</span> })
    };
    let fold = u.fold.clone();
    let fold_set = u.fold.clone();
    let (kinds, devices) = {
        let l2 = labels.clone();
        (move || labels().kinds, move || l2().devices)
    };
    let (kind, device) = (u.kind.clone(), u.device.clone());
    view! {
        <div class="dm-controls">
            <div class="segmented" role="group" aria-label="View">
                {mode_button(Mode::Profile, "Snapshot")}
                {mode_button(Mode::Diff, "Diff")}
                {mode_button(Mode::Series, "Series")}
            </div>
            {selected}
            {pair}
            <span class="sep"></span>
            <label class="field check" title="Collapse runs of library frames (site-packages, JAX, the standard library) to the library call your code made">
                <input type="checkbox" data-testid="dm-fold" prop:checked=move || fold.get() on:change=move |ev| fold_set.set(event_target_checked(&ev)) />
                "Fold library frames"
            </label>
            <label class="field">"Kind " {move || label_select("dm-kind", "all", kinds(), kind.clone())}</label>
            <label class="field">"Device " {move || label_select("dm-device", "all", devices(), device.clone())}</label>
            {pending}
        </div>
    }
}

/// A selected file that is not a device memory profile: say what this tool reads, and where to go.
#[component]
fn NotPprof(overview: FileOverview) -> impl IntoView {
    let state = expect_context::<AppState>();
    let (what, instead, tool) = match overview.format {
        Format::XSpace => (
            "an XProf trace (xplane.pb)",
            "The Memory Profile tab reads its allocator events; the Memory Viewer reads the HLO modules it embeds.",
            Tool::MemoryProfile,
        ),
        Format::HloProto => ("an XLA HloProto dump", "The Memory Viewer tab reads its buffer assignment.", Tool::MemoryViewer),
        Format::Pprof => ("a pprof profile", "", Tool::DeviceMemory),
    };
    let others = profiles(state).0;
    view! {
        <section class="pending" data-testid="dm-not-pprof">
            <h2>"Device memory"</h2>
            <p>{format!("{} is {what}. ", overview.name)}"This tool reads JAX device memory profiles: the " <code>"*.prof"</code> " files that " <code>"jax.profiler.save_device_memory_profile"</code> " writes."</p>
            <p>{instead} " " <button class="btn" on:click=move |_| state.tool.set(tool)>{format!("Open {}", tool.title())}</button></p>
            {(!others.is_empty()).then(|| view! {
                <p class="muted">"Loaded profiles: "
                    {others.into_iter().map(|(n, _)| { let n2 = n.clone(); view! { <button class="btn link" on:click=move |_| state.selected.set(Some(n2.clone()))>{n}</button> } }).collect_view()}
                </p>
            })}
        </section>
    }
}

fn basename(file: &str) -> &str {
    file.rsplit(['/', '\\']).next().unwrap_or(file)
}

/// `<module>:19 → func2:15 → func1:12`, root first, library frames marked.
fn stack_view(frames: &[Frame]) -> impl IntoView {
    let frames = frames.to_vec();
    view! {
        <ol class="stack">
            {frames.into_iter().map(|f| view! {
                <li class:lib=f.library title=format!("{}:{}", f.file, f.line)>
                    <code>{f.function.clone()}</code>" "<span class="muted">{format!("{}:{}", basename(&f.file), f.line)}</span>
                </li>
            }).collect_view()}
        </ol>
    }
}

fn stack_key(kind: &str, device: &str, site: &str) -> String {
    format!("{kind}|{device}|{site}")
}

#[component]
fn ProfileView(view: DeviceMemoryProfileView) -> impl IntoView {
    let u = ui();
    let r = view.report;
    let highlight = Signal::derive({
        let h = u.highlight.clone();
        move || h.get()
    });
    let notes = r.notes.clone();
    view! {
        <header class="summary-cards">
            <div class="card"><div class="label">"Live bytes"</div><div class="value"><Bytes metric="dm_total_bytes" value=r.total_bytes /></div></div>
            <div class="card"><div class="label">"Samples"</div><div class="value"><Count metric="dm_total_count" value=r.total_count.unsigned_abs() /></div></div>
            {r.by_kind.iter().map(|k| {
                let key = format!("{}|{}", k.kind, k.device);
                let label = if k.device.is_empty() { k.kind.clone() } else { format!("{} · {}", k.kind, k.device) };
                view! {
                    <div class="card"><div class="label">{label}</div><div class="value">
                        <Bytes metric="kind_bytes" value=k.bytes key=key.clone() />
                        <span class="muted small">" in "<Count metric="kind_count" value=k.count.unsigned_abs() key=key /></span>
                    </div></div>
                }
            }).collect_view()}
        </header>
        {(!notes.is_empty()).then(|| view! { <ul class="notes">{notes.into_iter().map(|n| view! { <li>{n}</li> }).collect_view()}</ul> })}
        <section>
            <h2>"Live bytes by Python stack"</h2>
            <FlameGraph nodes=view.flame highlight=highlight />
        </section>
        <div class="dm-tables">
            <section>
                <h2>"Functions"</h2>
                <FunctionTable rows=r.functions />
            </section>
            <section>
                <h2>"Allocation sites"</h2>
                <SiteTable rows=r.stacks />
            </section>
        </div>
    }
}

/// The top table by function: flat (allocated here) and cumulative (on the stack) bytes and counts,
/// sortable, filterable by name; a click outlines the function in the flame graph.
#[component]
fn FunctionTable(rows: Vec<FunctionRow>) -> impl IntoView {
    let u = ui();
    let key = |f: &FunctionRow| format!("{}@{}", f.function, f.file);
    let figure = move |metric: &'static str, value: fn(&FunctionRow) -> i64, bytes: bool| {
        move |f: &FunctionRow, _| {
            if bytes {
                view! { <Bytes metric value=value(f) key=key(f) /> }.into_any()
            } else {
                view! { <Count metric value=value(f).unsigned_abs() key=key(f) /> }.into_any()
            }
        }
    };
    let columns = vec![
        Column::new("Function", "Function", |f: &FunctionRow, _| {
            view! {
                <span title=f.file.clone()>
                    <code>{f.function.clone()}</code>" "<span class="muted">{basename(&f.file).to_string()}</span>
                    {f.library.then(|| view! { <span class="tag">"lib"</span> })}
                </span>
            }
            .into_any()
        })
        .sort_key(|f| f.function.clone()),
        Column::new("FlatBytes", "Flat bytes", figure("flat_bytes", |f| f.flat_bytes, true))
            .right()
            .width("110px")
            .sort_key(|f| f.flat_bytes),
        Column::new("FlatCount", "Flat count", figure("flat_count", |f| f.flat_count, false))
            .right()
            .width("95px")
            .sort_key(|f| f.flat_count),
        Column::new("CumBytes", "Cum bytes", figure("cum_bytes", |f| f.cum_bytes, true)).right().width("110px").sort_key(|f| f.cum_bytes),
        Column::new("CumCount", "Cum count", figure("cum_count", |f| f.cum_count, false)).right().width("110px").sort_key(|f| f.cum_count),
    ];
    let rows = Arc::new(rows);
    let (h, h2, by_index) = (u.highlight.clone(), u.highlight.clone(), rows.clone());
    let id = move |i: usize| by_index.get(i).map(|f: &FunctionRow| (f.function.clone(), f.file.clone()));
    let id2 = id.clone();
    let spec = TableSpec::new("dm-functions", columns)
        .filter("Filter functions or files", "dm-filter", |f: &FunctionRow| vec![f.function.as_str(), f.file.as_str()])
        .row_attrs(|f, _| vec![("data-function", f.function.clone())])
        .row_class(|f| if f.library { "lib" } else { "" })
        .selected(move |i| h.with(|cur| cur.is_some() && *cur == id(i)))
        .on_click(move |i| {
            let id = id2(i);
            h2.update(|cur| *cur = if *cur == id { None } else { id });
        });
    view! { <Table spec rows state=u.table.clone() /> }
}

/// `kind` or `kind · device`.
fn kind_label(kind: &str, device: &str) -> String {
    if device.is_empty() {
        kind.to_string()
    } else {
        format!("{kind} · {device}")
    }
}

/// A table of stacks (`frames` of each row) with the whole stack of the row clicked below it: rows
/// keep one height, so the stack cannot unfold inside the table.
fn with_stack_panel<R: Send + Sync + 'static>(spec: TableSpec<R>, rows: Vec<R>, frames: fn(&R) -> &[Frame]) -> impl IntoView {
    let rows = Arc::new(rows);
    let picked = RwSignal::new(None::<usize>);
    let of_row = rows.clone();
    view! {
        <Table spec=spec.pick(picked) rows />
        {move || match picked.get().and_then(|i| of_row.get(i)) {
            Some(r) => view! { <div class="stack-panel"><span class="muted small">"Stack, root first"</span>{stack_view(frames(r))}</div> }.into_any(),
            None => view! { <p class="muted small stack-panel">"Click a row for its whole stack."</p> }.into_any(),
        }}
    }
}

/// Allocation sites (one row per distinct stack) with their bytes and counts; a click shows the stack.
#[component]
fn SiteTable(rows: Vec<StackRow>) -> impl IntoView {
    let key = |s: &StackRow| stack_key(&s.kind, &s.device, &s.site);
    let columns = vec![
        Column::new("site", "Site (library call ← your code)", move |s: &StackRow, _| {
            view! { <span title=s.site.clone()><Text metric="site" value=s.site.clone() key=key(s) /></span> }.into_any()
        })
        .sort_key(|s| s.site.clone()),
        Column::new("kind", "Kind", |s: &StackRow, _| view! { <span class="muted">{kind_label(&s.kind, &s.device)}</span> }.into_any())
            .width("130px")
            .sort_key(|s| (s.kind.clone(), s.device.clone())),
        Column::new("bytes", "Bytes", move |s: &StackRow, _| view! { <Bytes metric="site_bytes" value=s.bytes key=key(s) /> }.into_any())
            .right()
            .width("110px")
            .sort_key(|s| s.bytes),
        Column::new("count", "Count", move |s: &StackRow, _| {
            view! { <Count metric="site_count" value=s.count.unsigned_abs() key=key(s) /> }.into_any()
        })
        .right()
        .width("80px")
        .sort_key(|s| s.count),
    ];
    let spec = TableSpec::new("dm-sites", columns).row_attrs(|s, _| vec![("data-site", s.site.clone()), ("data-kind", s.kind.clone())]);
    with_stack_panel(spec, rows, |s| &s.frames)
}

/// The stacks that changed between base and target, largest growth first; a click shows the stack.
#[component]
fn DiffTable(rows: Vec<DiffRow>) -> impl IntoView {
    let max = rows.iter().map(|s| s.delta_bytes.unsigned_abs()).max().unwrap_or(0).max(1);
    let key = |s: &DiffRow| stack_key(&s.kind, &s.device, &s.site);
    let columns = vec![
        Column::new("site", "Site (library call ← your code)", move |s: &DiffRow, _| {
            view! { <span title=s.site.clone()><Text metric="diff_site" value=s.site.clone() key=key(s) /></span> }.into_any()
        })
        .sort_key(|s| s.site.clone()),
        Column::new("kind", "Kind", |s: &DiffRow, _| view! { <span class="muted">{kind_label(&s.kind, &s.device)}</span> }.into_any())
            .width("130px")
            .sort_key(|s| (s.kind.clone(), s.device.clone())),
        Column::new("base", "Base", move |s: &DiffRow, _| view! { <Bytes metric="diff_base_bytes" value=s.base_bytes key=key(s) /> }.into_any())
            .right()
            .width("100px")
            .sort_key(|s| s.base_bytes),
        Column::new("target", "Target", move |s: &DiffRow, _| view! { <Bytes metric="diff_target_bytes" value=s.new_bytes key=key(s) /> }.into_any())
            .right()
            .width("100px")
            .sort_key(|s| s.new_bytes),
        Column::new("change", "Change", move |s: &DiffRow, _| view! { <SignedBytes metric="diff_delta_bytes" value=s.delta_bytes key=key(s) /> }.into_any())
            .right()
            .width("110px")
            .sort_key(|s| s.delta_bytes),
        Column::new("bar", "", move |s: &DiffRow, _| {
            let pct = s.delta_bytes.unsigned_abs() as f64 * 100.0 / max as f64;
            view! { <div class="delta-bar" data-sign=if s.delta_bytes < 0 { "shrink" } else { "grow" } style=format!("width:{pct:.1}%")></div> }.into_any()
        })
        .class("bar-col")
        .width("120px"),
        Column::new("delta_count", "Δ count", move |s: &DiffRow, _| {
            view! { <span class="num" data-metric="diff_delta_count" data-key=key(s) data-value=s.delta_count.to_string()>{crate::units::signed_count(s.delta_count, true)}</span> }.into_any()
        })
        .right()
        .width("80px")
        .sort_key(|s| s.delta_count),
    ];
    let spec = TableSpec::new("dm-diff", columns).row_attrs(|s, _| vec![("data-site", s.site.clone()), ("data-kind", s.kind.clone())]);
    with_stack_panel(spec, rows, |s| &s.frames)
}

#[component]
fn DiffView(view: DeviceMemoryDiffView) -> impl IntoView {
    let r = view.report;
    let no_highlight = Signal::derive(|| None);
    view! {
        <header class="summary-cards">
            <div class="card"><div class="label">{format!("Base · {}", view.base_name)}</div><div class="value"><Bytes metric="diff_base_total_bytes" value=r.base_total_bytes /></div></div>
            <div class="card"><div class="label">{format!("Target · {}", view.target_name)}</div><div class="value"><Bytes metric="diff_target_total_bytes" value=r.new_total_bytes /></div></div>
            <div class="card"><div class="label">"Change"</div><div class="value"><SignedBytes metric="diff_delta_total_bytes" value=r.delta_bytes /></div></div>
            <div class="card"><div class="label">"Change in samples"</div><div class="value"><span class="num" data-metric="diff_delta_total_count" data-value=r.delta_count.to_string()>{crate::units::signed_count(r.delta_count, true)}</span></div></div>
        </header>
        {(!r.notes.is_empty()).then(|| view! { <ul class="notes">{r.notes.iter().map(|n| view! { <li>{n.clone()}</li> }).collect_view()}</ul> })}
        <section>
            <h2>"Change by Python stack " <span class="legend"><i class="grow"></i>"growth " <i class="shrink"></i>"shrinkage"</span></h2>
            {if r.stacks.is_empty() {
                view! { <p class="empty" data-testid="diff-empty">"No stack changed: the target holds exactly what the base held."</p> }.into_any()
            } else {
                view! { <FlameGraph nodes=view.flame diff=true highlight=no_highlight /> }.into_any()
            }}
        </section>
        <section>
            <h2>"Changed stacks"</h2>
            <DiffTable rows=r.stacks />
        </section>
    }
}

/// How many non-suspect stacks the series shows before "Show all".
const OTHER_STACKS: usize = 6;

#[component]
fn SeriesView(view: DeviceMemorySeriesView) -> impl IntoView {
    let u = ui();
    let r = view.report;
    let labels: Vec<String> = r.snapshots.iter().map(|s| basename(&s.name).to_string()).collect();
    let totals: Vec<i64> = r.snapshots.iter().map(|s| s.total_bytes).collect();
    let (first, last) = (totals.first().copied().unwrap_or(0), totals.last().copied().unwrap_or(0));
    let order = if r.ordered_by_number {
        "ordered by the number in each file name"
    } else {
        "in the order loaded (the names carry no distinct numbers)"
    };
    let suspects: Vec<SeriesStack> = r.stacks.iter().take(r.suspect_count).cloned().collect();
    let others: Vec<SeriesStack> = r.stacks.iter().skip(r.suspect_count).cloned().collect();
    let other_count = others.len();
    let show_all = u.show_all.clone();
    let show_set = u.show_all.clone();
    let labels2 = labels.clone();
    let suspect_card = if r.suspect_count > 0 { "card alert" } else { "card" };
    view! {
        <header class="summary-cards">
            <div class="card"><div class="label">"Snapshots"</div><div class="value"><Count metric="snapshot_count" value=r.snapshots.len() as u64 /></div></div>
            <div class="card"><div class="label">"First → last"</div><div class="value"><Bytes metric="series_first_total_bytes" value=first />" → "<Bytes metric="series_last_total_bytes" value=last /></div></div>
            <div class="card"><div class="label">"Change"</div><div class="value"><SignedBytes metric="series_delta_total_bytes" value=last - first /></div></div>
            <div class=suspect_card><div class="label">"Leak suspects"</div><div class="value"><Count metric="suspect_count" value=r.suspect_count as u64 /></div></div>
        </header>
        {(!r.notes.is_empty()).then(|| view! { <ul class="notes">{r.notes.iter().map(|n| view! { <li>{n.clone()}</li> }).collect_view()}</ul> })}
        <section>
            <h2>"Live bytes per snapshot " <span class="muted small">{order}</span></h2>
            <SeriesChart values=totals labels=labels.clone() metric="snapshot_total_bytes" key="total" height=120.0 bars=true />
        </section>
        <section>
            <h2>"Leak suspects"</h2>
            {if suspects.is_empty() {
                view! { <p class="empty" data-testid="no-suspects">"No stack ended larger than it started while growing in more than half of the steps: nothing here looks like a leak."</p> }.into_any()
            } else {
                view! { <div class="multiples">{suspects.into_iter().enumerate().map(|(i, s)| stack_card(s, i + 1, labels.clone())).collect_view()}</div> }.into_any()
            }}
        </section>
        <section>
            <h2>"Other stacks " <span class="muted small">"largest last snapshot first"</span></h2>
            <div class="multiples">
                {move || {
                    let n = if show_all.get() { other_count } else { OTHER_STACKS };
                    others.iter().take(n).cloned().map(|s| stack_card(s, 0, labels2.clone())).collect_view()
                }}
            </div>
            {(other_count > OTHER_STACKS).then(|| view! {
                <button class="btn" data-testid="dm-show-all" on:click=move |_| show_set.update(|v| *v = !*v)>
                    {move || if u.show_all.get() { "Show fewer".to_string() } else { format!("Show all {other_count}") }}
                </button>
            })}
        </section>
    }
}

/// One stack through the series as a small multiple: its sparkline, growth figures and the
/// engine's explanation. `rank` is its place among the suspects (0: not a suspect).
fn stack_card(s: SeriesStack, rank: usize, labels: Vec<String>) -> impl IntoView {
    let key = stack_key(&s.kind, &s.device, &s.site);
    let g = s.growth.clone();
    let last = s.bytes.last().copied().unwrap_or(0);
    let kind = kind_label(&s.kind, &s.device);
    view! {
        <article class="dm-stack" class:suspect=s.suspect data-site=s.site.clone() data-kind=s.kind.clone() data-suspect=s.suspect.to_string() data-rank=rank.to_string()>
            <div class="head">
                {(rank > 0).then(|| view! { <span class="rank">{format!("#{rank}")}</span> })}
                <code class="site" title=s.site.clone()>{s.site.clone()}</code>
                <span class="muted small">{kind}</span>
            </div>
            <SeriesChart values=s.bytes.clone() labels=labels metric="series_bytes" key=key.clone() height=44.0 colour_var=if s.suspect { "--grow" } else { "--fg-2" } />
            <div class="figures">
                <span>"now "<Bytes metric="series_last_bytes" value=last key=key.clone() /></span>
                <span>"net "<SignedBytes metric="series_net_growth_bytes" value=g.net_growth_bytes key=key.clone() /></span>
                <span>"per step "<SignedBytes metric="series_mean_growth_bytes_per_step" value=g.mean_growth_bytes_per_step.round() as i64 key=key.clone() /></span>
                <span>"grew in "<Count metric="series_grew_steps" value=g.grew_steps as u64 key=key.clone() />"/"{g.steps}</span>
                <span title="How well a straight line fits the bytes (1: steady growth)">"R² "<Text metric="series_r_squared" value=format!("{:.3}", g.r_squared) key=key.clone() /></span>
            </div>
            <p class="explain"><Text metric="series_explanation" value=s.explanation.clone() key=key /></p>
            <details><summary class="muted">"Stack"</summary>{stack_view(&s.frames)}</details>
        </article>
    }
}
