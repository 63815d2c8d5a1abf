//! The Device memory tool: JAX device memory profiles (`*.prof` from
//! `jax.profiler.save_device_memory_profile`). One profile: who holds memory, by function, by
//! allocation site and as a flame graph. Two: what changed between a base and a target. A series:
//! what keeps growing, with the leak suspects ranked and explained. All figures come from the engine
//! (`engine::device_memory`); this view only asks and draws.

mod controls;
mod diff;
mod not_pprof;
mod profile;
mod series;
mod stacks;

use crate::analysis::device_memory::{order_by_number, DiffRow, Frame, FunctionRow, SeriesStack, StackRow};
use crate::decode::Format;
use crate::engine::device_memory::{DeviceMemoryDiffView, DeviceMemoryProfileView, DeviceMemoryQuery, DeviceMemorySeriesView, Labels};
use crate::engine::protocol::request::{self, DeviceMemoryAnswer as Answer, DeviceMemoryFiles};
use crate::engine::FileDetails;
use crate::ui::charts::flame::FlameGraph;
use crate::ui::charts::sparkline::SeriesChart;
use crate::ui::components::metric::{Bytes, Count, SignedBytes, Text};
use crate::ui::components::table::{Column, Table, TableSpec, TableState};
use crate::ui::state::{AppState, FileStatus, Tool};
use crate::ui::use_engine::{use_engine, Reply};
use controls::Controls;
use diff::DiffView;
use leptos::prelude::*;
use not_pprof::NotPprof;
use profile::ProfileView;
use series::SeriesView;
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

/// The tool's choices (not its answers: those come from the engine, which keeps them). They outlive
/// the view, so switching tools and back keeps the mode, filters and sort the user chose.
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
        show_all: ArcRwSignal::new(false),
    };
}

fn ui() -> Ui {
    UI.with(Clone::clone)
}

/// Loaded pprof files (path, engine file id) in series order, and how many files are still loading.
fn profiles(state: AppState) -> (Vec<(String, u32)>, usize) {
    state.files.with(|fs| {
        let ready: Vec<(String, u32)> = fs
            .iter()
            .filter_map(|f| match &f.status {
                FileStatus::Ready { file_id, details } if details.format == Format::Pprof => Some((f.path.clone(), *file_id)),
                _ => None,
            })
            .collect();
        let names: Vec<&str> = ready.iter().map(|(n, _)| n.as_str()).collect();
        let ordered = order_by_number(&names).0.into_iter().map(|i| ready[i].clone()).collect();
        (ordered, fs.iter().filter(|f| matches!(f.status, FileStatus::Loading { .. })).count())
    })
}

/// The request the current choices call for, or why there is none yet.
fn request(state: AppState, u: &Ui, mode: Mode, pprofs: &[(String, u32)], loading: usize) -> Result<request::DeviceMemory, String> {
    let query = DeviceMemoryQuery { fold_library_frames: u.fold.get(), kind: u.kind.get(), device: u.device.get() };
    let id = |name: &str| pprofs.iter().find(|(n, _)| n == name).map(|(_, id)| *id);
    match mode {
        Mode::Profile => {
            let selected = state.selected.get().unwrap_or_default();
            id(&selected)
                .map(|file_id| request::DeviceMemory { files: DeviceMemoryFiles::Profile { file_id }, query })
                .ok_or_else(|| format!("{selected} is not a loaded profile"))
        }
        Mode::Diff => {
            let (base, target) = diff_pair(state, u, pprofs);
            match (base.as_deref().and_then(id), target.as_deref().and_then(id)) {
                (Some(base_file_id), Some(target_file_id)) => {
                    Ok(request::DeviceMemory { files: DeviceMemoryFiles::Diff { base_file_id, target_file_id }, query })
                }
                _ => Err("Pick a base and a target profile.".into()),
            }
        }
        Mode::Series if loading > 0 => Err(format!("Waiting for {loading} file(s) to finish loading…")),
        Mode::Series => {
            Ok(request::DeviceMemory { files: DeviceMemoryFiles::Series { file_ids: pprofs.iter().map(|(_, id)| *id).collect() }, query })
        }
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

#[component]
pub fn DeviceMemory(details: FileDetails) -> impl IntoView {
    let state = expect_context::<AppState>();
    if details.format != Format::Pprof {
        return view! { <NotPprof details=details /> }.into_any();
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
    // The request the choices call for, or why there is none.
    let wanted = {
        let u = u.clone();
        Memo::new(move |_| {
            let (pprofs, loading) = profiles(state);
            request(state, &u, mode.get(), &pprofs, loading)
        })
    };
    let fetch = use_engine("device memory", move || wanted.get().ok());
    // The filters offer the labels of the last answer (the files' labels, whatever is filtered); kept
    // while the next answer is computed so the selects do not empty meanwhile.
    let labels = RwSignal::new(Labels::default());
    Effect::new(move |_| {
        if let Reply::Ready(a) = fetch.reply.get() {
            labels.set(a.labels().clone());
        }
    });
    let status = move || match (wanted.with(Result::is_err), fetch.reply.get()) {
        (true, _) => "waiting",
        (false, Reply::Waiting) => "loading",
        (false, _) => "ready",
    };
    let body = move || {
        let waiting = wanted.get().err();
        let m = mode.get();
        match (fetch.reply.get(), waiting) {
            (_, Some(why)) if m == Mode::Series || m == Mode::Diff => view! { <p class="muted">{why}</p> }.into_any(),
            (Reply::Failed(e), _) => view! { <p class="banner error" data-testid="dm-error">{e.to_string()}</p> }.into_any(),
            (Reply::Rejected(e), _) => view! { <p class="banner error" data-testid="dm-error">{e}</p> }.into_any(),
            (Reply::Ready(Answer::Profile(v)), _) if m == Mode::Profile => view! { <ProfileView view=*v /> }.into_any(),
            (Reply::Ready(Answer::Diff(v)), _) if m == Mode::Diff => view! { <DiffView view=*v /> }.into_any(),
            (Reply::Ready(Answer::Series(v)), _) if m == Mode::Series => view! { <SeriesView view=*v /> }.into_any(),
            _ => view! { <p class="muted loading">"Analysing…"</p> }.into_any(),
        }
    };
    let pending = Signal::derive(move || wanted.with(Result::is_ok) && matches!(fetch.reply.get(), Reply::Waiting));
    view! {
        <article class="device-memory" data-testid="device-memory" data-mode=move || mode.get().slug() data-state=status>
            <Controls mode=mode labels=labels.read_only() pending />
            {body}
        </article>
    }
    .into_any()
}
