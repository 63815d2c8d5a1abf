//! Every allocator event named by what asked for the memory (Tidemark's own; no profiler joins these).
//!
//! A JAX trace's allocator events carry no `tf_op`, so XProf's Memory Profile lists every allocation
//! as `(no op)`. The trace says more: each event lies inside host events on its thread's line
//! ([`host_context`]): a module's run (`Build buffer allocations` in `…LoadedExecutable::Execute`),
//! the compiler's autotuning, a host→device copy, with the Python tracer's frames above. And a run
//! allocates exactly its module's buffer-assignment allocations ([`buffers`]): its outputs and its
//! temporary, each of a size the HLO states. So an allocation in a run is matched to the allocation of
//! its size; where several are of one size (six outputs `f32[2048,2048]`), every candidate is listed
//! and only what they share (kind, shape) is said — never one of them guessed.
//!
//! Where the trace cannot say (no HLO modules, no allocator events, no Python tracer, allocations
//! outside any host event), [`AllocationNames::reasons`] says what is missing and what to record.

pub mod buffers;
mod host_context;
mod live;

use crate::analysis::memory_events::Activity;
use crate::analysis::memory_profile::{AllocatorProfile, MemoryProfile};
use crate::analysis::xla_modules::decoded_modules;
use crate::decode::xplane::names::HOST_PLANE;
use crate::decode::xplane::XSpace;
use crate::decode::DecodeError;
use crate::fast_hash::FastMap;
use buffers::{BufferKind, Held, ModuleAllocations, Parameter, RunAllocation};
use host_context::{HostEvent, Place, Scanned};
pub use live::{FloorNames, LiveNames, PeakRow};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What asked for an allocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NameKind {
    /// A module run's output.
    Output,
    /// A module run's temporary (scratch) allocation.
    Temporary,
    /// In a module run, but not one of its module's buffer-assignment allocations (or the module's
    /// allocations of that size are of different kinds).
    RunOther,
    /// The compiler (autotuning candidate kernels).
    Compile,
    /// An input copied from the host.
    Transfer,
    /// Inside other host events.
    Other,
    /// Inside no host event.
    Outside,
}

impl NameKind {
    /// The kind as the page's bar and the CLI group it.
    pub fn label(self) -> &'static str {
        match self {
            NameKind::Output => "outputs",
            NameKind::Temporary => "temporaries",
            NameKind::RunOther => "module runs, unmatched",
            NameKind::Compile => "compile-time",
            NameKind::Transfer => "transfers",
            NameKind::Other => "other host work",
            NameKind::Outside => "outside host events",
        }
    }
}

/// The name of one allocation.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct AllocationName {
    pub kind: NameKind,
    /// The module's XProf name (`jit_train_step(5314)`), when one module's run made it.
    pub module: Option<String>,
    /// The modules that could have made it, when the run's module cannot be told apart (several
    /// modules of one name whose allocations all fit); empty otherwise.
    pub module_candidates: Vec<String>,
    /// The buffer-assignment allocations (index) it may be: one when matched, several when the module
    /// has several of its size.
    pub buffer_candidates: Vec<i64>,
    /// An output's place in the result, `{3}`; `{0|1|2}` among candidates.
    pub output_index: Option<String>,
    /// The shape, where every candidate has the same.
    pub shape: Option<String>,
    /// The parameter (the user's variable) an output holds, where the HLO says so and every
    /// candidate holds the same.
    pub holds: Option<Held>,
    /// For an output that holds no parameter in any candidate (the HLO neither aliases nor copies
    /// one into it): a new value, with the entry parameters of its shape every candidate shares
    /// (empty where none or where candidates differ). `None` for other kinds, and where an output
    /// holds a parameter.
    pub new_value_shaped_as: Option<Vec<Parameter>>,
    /// The instruction whose buffer the Memory Viewer highlights (one candidate only).
    pub instruction: Option<String>,
    /// The host event that says what it was (compile, transfer, other), or the run's module name as
    /// the host events give it.
    pub event: String,
    /// The innermost Python frame around it (`pxla.py:399 __call__`), where the Python tracer ran.
    pub python_frame: Option<String>,
    /// All of it in a few words, what a table row shows.
    pub label: String,
}

/// One module run found in the trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModuleRun {
    /// The module's name as the host events give it (`jit_train_step`).
    pub module_name: Option<String>,
    /// The module (index into [`AllocationNames::modules`]) whose buffer assignment explains the run's
    /// allocations, when exactly one does.
    pub module: Option<usize>,
    /// Every module whose buffer assignment explains them, when several do.
    pub candidates: Vec<usize>,
    /// Where the run starts in the trace, ps.
    pub start_trace_ps: i64,
    pub memory_id: String,
    /// Allocations the run made while building its buffers, and their requested bytes.
    pub allocations: u64,
    pub allocated_bytes: i64,
    /// Requested bytes of its allocations named temporary.
    pub temporary_bytes: i64,
    /// Snapshot indices (of `memory_id`'s profile) of its allocations, in time order.
    pub snapshot_indices: Vec<usize>,
}

/// The names of one memory ID's events.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AllocatorNames {
    pub memory_id: String,
    /// The distinct names.
    pub names: Vec<AllocationName>,
    /// Per snapshot of the profile (time order), the index of its name in `names`: an allocation's
    /// own, a deallocation its allocation's (its own place where its allocation is not in the window).
    /// Empty when the events could not be lined up with the profile's (`unaligned` says why).
    pub name_of: Vec<u32>,
    pub unaligned: Option<String>,
    pub peak: PeakNames,
    /// Each step's heap floor by name, in the leak hints' step order: what stays allocated between
    /// steps, and which module's outputs hold it.
    pub floors: Vec<FloorNames>,
    /// What is still live when the window ends, by name: the leak hints' suspects.
    pub live_at_end: LiveNames,
}

/// What was live at the allocator's peak, by name. The rows, `before_trace_bytes` and `stack_bytes`
/// add up to `peak_bytes`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PeakNames {
    /// The peak event's snapshot index; `None` when no event is the peak.
    pub peak_index: Option<usize>,
    /// Heap + stack at the peak: XProf's peak.
    pub peak_bytes: i64,
    /// Live allocations grouped by name, most bytes first (ties by name index).
    pub rows: Vec<PeakRow>,
    /// Heap at the peak held by allocations made before the window (none of its events saw them).
    pub before_trace_bytes: i64,
    pub stack_bytes: i64,
    /// Bytes per kind ([`NameKind::label`]) and per module (`""` for allocations of no one module),
    /// most first.
    pub by_kind: Vec<(NameKind, i64)>,
    pub by_module: Vec<(String, i64)>,
    /// The allocator's pool beyond what is in use: the by-kind grouping's "preallocated but unused",
    /// known where the allocator's figures pin the pool, bounded where they do not.
    pub pool: PoolAtPeak,
}

/// "Preallocated but unused" at the peak: the device memory the allocator holds (its pool: what XLA
/// preallocates, or what it has grown to) less what is in use. No stat states the pool, but XLA's BFC
/// allocator writes one derived from it on every event: `fragmentation` = 1 − largest free chunk /
/// (pool − bytes in use) (`BFCAllocator::GetFragmentation`). Every chunk is a multiple of 256 bytes, so
/// where the fragmentation is above zero the free chunks besides the largest hold at least 256 bytes,
/// and the pool at least `in use + 256 / fragmentation` — the fragmentation rounded up by its last
/// written digit (the profiler writes it with six). The pool does not shrink (the allocator returns a
/// region only to retry a failed allocation), so the largest such bound up to the peak holds at the
/// peak; the allocator's limit bounds it from above.
///
/// On n2 and n3 (preallocated) the first free of a small allocation beside another bounds the pool
/// to the limit within a millionth; on n1 (`XLA_PYTHON_CLIENT_PREALLOCATE=false`, the pool grown on
/// demand) the bounds stay far apart and the trace cannot tell: the note says so, and what to record.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PoolAtPeak {
    /// The allocator's limit (heap + stack + free at the peak event, XProf's capacity): the most its
    /// pool can be.
    pub limit_bytes: i64,
    pub in_use_bytes: i64,
    /// The least the pool can be at the peak (see above), at most the limit; `None` where no event up
    /// to the peak reports a fragmentation above zero.
    pub pool_at_least_bytes: Option<i64>,
    /// The least that is preallocated but unused at the peak: the pool's bound less the bytes in use
    /// (0 where the bound is below them). The by-kind grouping's "preallocated but unused".
    pub unused_at_least_bytes: i64,
    /// `limit_bytes − in_use_bytes`: the most that can be preallocated but unused at the peak; `None`
    /// where the events report no limit above what is in use.
    pub unused_at_most_bytes: Option<i64>,
    /// Whether the bounds meet: the pool is the whole limit (to the fragmentation's precision), so
    /// the unused bytes are known, not only bounded.
    pub known: bool,
    /// What the trace says of it, and what would tell the rest.
    pub note: String,
}

/// The most the fragmentation's rounding (six significant digits) can have taken off it, relative.
const FRAGMENTATION_ROUNDING: f64 = 5e-6;
/// XLA's BFC allocator's smallest chunk (`kMinAllocationSize`): every chunk is a multiple of it.
const MIN_CHUNK_BYTES: f64 = 256.0;

impl PoolAtPeak {
    /// The pool at `a`'s peak event `peak_index` (snapshot index, time order).
    fn new(a: &AllocatorProfile, peak_index: Option<usize>) -> Self {
        let limit_bytes = a.summary.memory_capacity_bytes;
        let in_use_bytes = a.summary.peak_stats.peak_bytes_in_use;
        let s = &a.snapshots;
        // The formula is XLA's BFC allocator's (its allocators are named `GPU_0_bfc`, `xla_gpu_host_bfc`);
        // another allocator's fragmentation (a TPU's) says nothing of a pool.
        let bfc = a.memory_id.ends_with("_bfc");
        let up_to_peak = if bfc { peak_index.map_or(0, |p| p + 1) } else { 0 };
        let pool_at_least_bytes = s
            .rows(0..up_to_peak)
            .filter(|x| x.stats.fragmentation > 0.0 && x.stats.fragmentation.is_finite())
            .map(|x| {
                let most = x.stats.fragmentation * (1.0 + FRAGMENTATION_ROUNDING);
                // The pool is a whole number of chunks: rounded up to one.
                let chunk = MIN_CHUNK_BYTES as i64;
                let at_least = x.stats.heap_allocated_bytes.saturating_add((MIN_CHUNK_BYTES / most).ceil() as i64);
                at_least.saturating_add(chunk - 1) / chunk * chunk
            })
            .max()
            .map(|b| b.min(limit_bytes));
        let unused_at_most_bytes = (limit_bytes > in_use_bytes).then(|| limit_bytes - in_use_bytes);
        let heap = in_use_bytes - a.summary.peak_stats.stack_reserved_bytes;
        let unused_at_least_bytes = pool_at_least_bytes.map_or(0, |p| (p - heap).max(0)).min(unused_at_most_bytes.unwrap_or(0));
        // The bounds meet where they differ by no more than the bound's own rounding.
        let slack = (limit_bytes as f64 * 2.0 * FRAGMENTATION_ROUNDING) as i64;
        let known = unused_at_most_bytes.is_some_and(|most| most - unused_at_least_bytes <= slack);
        let record = "To know it, record jax.devices()[0].memory_stats()['pool_bytes'] with the profile, and how the process was started (XLA_PYTHON_CLIENT_PREALLOCATE, XLA_PYTHON_CLIENT_MEM_FRACTION).";
        let note = match (known, unused_at_most_bytes) {
            (true, _) => "Read from the allocator's own figures: its fragmentation (1 − largest free chunk / (pool − in use)) bounds the pool from below, and here the bound reaches the allocator's limit: the pool is the whole limit, taken up front (XLA's preallocation, XLA_PYTHON_CLIENT_PREALLOCATE), and all of it not in use at the peak is preallocated but unused.".to_string(),
            (false, Some(_)) if pool_at_least_bytes.is_some() => format!("The trace cannot tell how much is preallocated but unused: no event records the pool the allocator holds. Its fragmentation figure bounds the pool from below, here short of the limit, so the unused part lies between the two bounds: the pool may have been grown on demand (XLA_PYTHON_CLIENT_PREALLOCATE=false) or taken whole. {record}"),
            (false, Some(_)) => format!("The trace cannot tell how much is preallocated but unused: no event records the pool the allocator holds, and no figure of this allocator bounds it (only XLA's BFC allocator's fragmentation does), so the unused part lies between nothing and the limit less the bytes in use. {record}"),
            (false, None) => format!("The trace cannot tell how much is preallocated but unused: its events report no limit above the bytes in use, so not even a bound is known. {record}"),
        };
        PoolAtPeak { limit_bytes, in_use_bytes, pool_at_least_bytes, unused_at_least_bytes, unused_at_most_bytes, known, note }
    }

    /// The preallocated but unused bytes where the bounds meet (the pool is the whole limit).
    pub fn unused_bytes(&self) -> Option<i64> {
        self.unused_at_most_bytes.filter(|_| self.known)
    }
}

/// Every allocator event of a trace named.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct AllocationNames {
    /// The trace's modules with a buffer assignment, by program id.
    pub modules: Vec<ModuleAllocations>,
    pub runs: Vec<ModuleRun>,
    /// One per allocator of the profile, in its order.
    pub allocators: Vec<AllocatorNames>,
    /// What the trace cannot say, one sentence each, with what to record.
    pub reasons: Vec<String>,
}

/// Names the allocator events of `space`, whose Memory Profile is `profile`.
pub fn analyze(space: &XSpace, profile: &MemoryProfile) -> Result<AllocationNames, DecodeError> {
    let mut decoded = decoded_modules(space);
    decoded.sort_by_key(|(id, _, _)| *id);
    let modules = buffers::modules(&decoded);
    drop(decoded);
    let scanned = match space.planes.iter().position(|p| p.name() == HOST_PLANE) {
        Some(i) => host_context::scan(space, i, &space.planes[i], &profile.lines_with_events)?,
        None => Scanned::default(),
    };
    let mut reasons = Vec::new();
    if profile.allocators.is_empty() {
        reasons.push(format!("The trace has no allocator events (MemoryAllocation on {HOST_PLANE}), so there is nothing to name: JAX on CPU records none; on a GPU they come with the profile."));
    }
    if modules.is_empty() && !profile.allocators.is_empty() {
        reasons.push("The trace carries no HLO modules with buffer assignment, so a module run's allocations are named by module but not by buffer: record with jax.profiler.ProfileOptions enable_hlo_proto=True (the default).".into());
    }
    if !scanned.python_tracer && !profile.allocators.is_empty() {
        reasons.push("The Python tracer did not run, so no allocation names its Python line: record with jax.profiler.ProfileOptions python_tracer_level=1.".into());
    }
    if !profile.allocators.is_empty() {
        reasons.extend(constants_reason(&modules));
    }
    let mut names = Namer { modules: &modules, runs: Vec::new() };
    let allocators = profile.allocators.iter().map(|a| names.allocator(a, &scanned)).collect();
    let runs = names.runs;
    reasons.extend(profile.allocators.iter().zip(&allocators).filter_map(outside_reason));
    if !runs.is_empty() {
        reasons.push(PARAMETERS_REASON.into());
    }
    Ok(AllocationNames { modules, runs, allocators, reasons })
}

/// Why a run's entry parameters are named by what allocated them. XLA's GPU executable takes each
/// parameter's buffer from the caller's arguments (`BufferForAllocation`): memory allocated before
/// the run, by a host→device copy (`BufferFromHostBuffer`) or as an earlier run's output, with no
/// allocator event of its own. The events carry that allocation's address, but no event records the
/// addresses a run was given, so which earlier allocation a run read as its parameter is not in the
/// trace; the one parameter allocation a run makes (an aliased output whose argument was not
/// donated) is named as that output.
const PARAMETERS_REASON: &str = "A module run's parameters are named by what allocated them (a transfer, or an earlier run's output), not as parameters: a run reads the caller's arrays in place and allocates nothing for them, and no event records which arrays (addresses) a run was given; only an aliased output is tied to its parameter. The Python tracer (python_tracer_level=1) gives the call's line, where the arguments are named.";

/// The modules whose buffer assignment has constant allocations, which the allocator never sees
/// ([`ModuleAllocations::constants`]): one sentence listing them, if any.
fn constants_reason(modules: &[ModuleAllocations]) -> Option<String> {
    let with: Vec<String> = modules
        .iter()
        .filter(|m| !m.constants.is_empty())
        .map(|m| {
            let bytes: i64 = m.constants.iter().map(|&(_, b)| b).sum();
            format!("{} ({} allocation{}, {bytes} bytes)", m.xprof_name, m.constants.len(), if m.constants.len() == 1 { "" } else { "s" })
        })
        .collect();
    (!with.is_empty()).then(|| {
        format!("No allocation is named a constant: the constants of {} are not in the allocator's events, as XLA's GPU executable places them once per executable at its first run (Resolve constant globals) in the loaded kernel module's globals or in memory the executor allocates directly, never through the allocator the trace records.", with.join(", "))
    })
}

/// What to record where allocations outside any host event (nothing in the trace says what asked
/// for them) are live at `a`'s peak or at the end of the window, if any are.
fn outside_reason((a, n): (&AllocatorProfile, &AllocatorNames)) -> Option<String> {
    let outside = |rows: &[PeakRow]| -> i64 {
        rows.iter().filter(|r| n.names.get(r.name as usize).is_some_and(|x| x.kind == NameKind::Outside)).map(|r| r.allocation_bytes).sum()
    };
    let (at_peak, at_end) = (outside(&n.peak.rows), outside(&n.live_at_end.rows));
    (at_peak > 0 || at_end > 0).then(|| {
        format!("Of {}, {at_peak} bytes live at the peak and {at_end} bytes live at the end were allocated outside any host event, so nothing in the trace says what asked for them (no module run, compile or transfer): record with jax.profiler.ProfileOptions host_tracer_level=3 for the runtime's verbose events, and python_tracer_level=1 for the Python line that ran.", a.memory_id)
    })
}

/// Whether `profile`'s allocations need naming: some allocation live at XProf's peak carries no op
/// (JAX's never do). A TensorFlow trace's are named by their ops, and are shown as XProf shows them.
pub fn needed(profile: &MemoryProfile) -> bool {
    profile
        .allocators
        .iter()
        .any(|a| a.breakdown.iter().any(|r| r.special_index.is_none() && a.row_metadata(r).is_some_and(|m| m.tf_op_name.is_empty())))
}

impl AllocationNames {
    /// The names of memory ID `memory_id`.
    pub fn allocator(&self, memory_id: &str) -> Option<&AllocatorNames> {
        self.allocators.iter().find(|a| a.memory_id == memory_id)
    }
}

impl AllocatorNames {
    /// The name of snapshot `i`, if named.
    pub fn name(&self, i: usize) -> Option<&AllocationName> {
        self.names.get(*self.name_of.get(i)? as usize)
    }
}

struct Namer<'m> {
    modules: &'m [ModuleAllocations],
    runs: Vec<ModuleRun>,
}

impl Namer<'_> {
    fn allocator(&mut self, a: &AllocatorProfile, scanned: &Scanned) -> AllocatorNames {
        let mut events: Vec<&HostEvent> = scanned.events.iter().filter(|e| e.memory_id == a.memory_id).collect();
        events.sort_by_key(|e| e.offset_ps);
        let mut out = AllocatorNames {
            memory_id: a.memory_id.clone(),
            names: Vec::new(),
            name_of: Vec::new(),
            unaligned: None,
            peak: PeakNames::default(),
            floors: Vec::new(),
            live_at_end: LiveNames::default(),
        };
        if let Some(why) = misaligned(a, &events) {
            out.unaligned = Some(why);
            return out;
        }
        let mut table = NameTable::default();
        let mut name_of = vec![u32::MAX; events.len()];
        // The name of each distinct (size, Python frame) of a run, and of each distinct place: built
        // once, not once per event.
        let mut run_names: FastMap<(i64, Option<i64>), u32> = FastMap::default();
        let mut place_names: FastMap<(Place, Option<i64>), u32> = FastMap::default();
        // Runs first: their allocations are matched together.
        let mut by_run: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for (i, e) in events.iter().enumerate() {
            if let (Place::Run { run, building: true }, Activity::Allocation) = (&e.place, e.activity) {
                by_run.entry(*run).or_default().push(i);
            }
        }
        for (run, indices) in by_run {
            let host = &scanned.runs[run];
            let sizes: Vec<i64> = indices.iter().map(|&i| events[i].requested_bytes).collect();
            let fitting = self.fitting_modules(host.module_name.as_deref(), &sizes);
            let mut temporary_bytes = 0;
            run_names.clear();
            for (&i, &size) in indices.iter().zip(&sizes) {
                let frame = events[i].python_frame;
                let id = *run_names.entry((size, frame)).or_insert_with(|| {
                    let python_frame = frame.map(|f| scanned.python_frame(f));
                    table.id(self.run_name(host.module_name.as_deref(), &fitting, size, python_frame))
                });
                if table.names[id as usize].kind == NameKind::Temporary {
                    temporary_bytes += size;
                }
                name_of[i] = id;
            }
            self.runs.push(ModuleRun {
                module_name: host.module_name.clone(),
                module: (fitting.len() == 1).then(|| fitting[0]),
                candidates: if fitting.len() > 1 { fitting } else { Vec::new() },
                start_trace_ps: host.start_trace_ps,
                memory_id: a.memory_id.clone(),
                allocations: indices.len() as u64,
                allocated_bytes: sizes.iter().sum(),
                temporary_bytes,
                snapshot_indices: indices,
            });
        }
        let mut allocation_of = vec![None; events.len()];
        for j in 0..events.len() {
            if let Some(k) = a.freed_by(j) {
                allocation_of[k] = Some(j);
            }
        }
        for (i, e) in events.iter().enumerate() {
            if name_of[i] != u32::MAX {
                continue;
            }
            // A deallocation is its allocation's (which comes first, so is named by now).
            let named = allocation_of[i].map(|k| name_of[k]);
            name_of[i] = match named {
                Some(id) if id != u32::MAX => id,
                _ => *place_names.entry((e.place, e.python_frame)).or_insert_with(|| table.id(Self::place_name(e, scanned))),
            };
        }
        // One replay for every event whose live set is named: the floors, the last event, the peak.
        let floors = live::floor_events(a);
        let (end, peak) = (a.snapshots.len().checked_sub(1), peak_index(a));
        let mut targets: Vec<usize> = floors.iter().map(|&(_, i)| i).collect();
        targets.extend(end);
        targets.extend(peak);
        let mut lives = live::live_at(a, &targets, &name_of, &table.names).into_iter();
        out.floors = floors
            .iter()
            .zip(lives.by_ref())
            .map(|(&(step_id, i), live)| FloorNames {
                step_id,
                snapshot_index: i,
                in_use_bytes: a.snapshots.in_use_bytes(i),
                stack_bytes: a.snapshots.get(i).map_or(0, |x| x.stats.stack_reserved_bytes),
                live,
            })
            .collect();
        out.live_at_end = end.and_then(|_| lives.next()).unwrap_or_default();
        out.peak = peak_names(a, peak, peak.and_then(|_| lives.next()));
        out.names = table.names;
        out.name_of = name_of;
        out
    }

    /// The modules (indices) that could have made a run of allocations of `sizes`: those named
    /// `module_name` (every module where the events name none or no module has the name) whose
    /// allocations hold every size, each a distinct allocation.
    fn fitting_modules(&self, module_name: Option<&str>, sizes: &[i64]) -> Vec<usize> {
        let named: Vec<usize> = (0..self.modules.len()).filter(|&m| Some(self.modules[m].name.as_str()) == module_name).collect();
        let pool = if named.is_empty() { (0..self.modules.len()).collect() } else { named };
        let mut need: BTreeMap<i64, usize> = BTreeMap::new();
        for &s in sizes {
            *need.entry(s).or_default() += 1;
        }
        pool.into_iter()
            .filter(|&m| {
                let allocations = &self.modules[m].allocations;
                need.iter().all(|(&s, &n)| allocations.iter().filter(|x| x.size_bytes == s).count() >= n)
            })
            .collect()
    }

    /// The name of a run's allocation of `size` bytes, the run's module among `fitting`.
    fn run_name(&self, module_name: Option<&str>, fitting: &[usize], size: i64, python_frame: Option<String>) -> AllocationName {
        let event = module_name.unwrap_or_default().to_string();
        let candidates: Vec<(usize, &RunAllocation)> = fitting
            .iter()
            .flat_map(|&m| self.modules[m].allocations.iter().filter(move |x| x.size_bytes == size).map(move |x| (m, x)))
            .collect();
        let kind = common(candidates.iter().map(|(_, x)| x.kind));
        let module = (fitting.len() == 1).then(|| self.modules[fitting[0]].xprof_name.clone());
        let module_candidates =
            if fitting.len() > 1 { fitting.iter().map(|&m| self.modules[m].xprof_name.clone()).collect() } else { Vec::new() };
        let Some(kind) = kind else {
            let why = if candidates.is_empty() { "no module's buffer assignment has this size" } else { "its candidates differ in kind" };
            let who = module.clone().or_else(|| module_name.map(str::to_string)).unwrap_or_else(|| "a module".into());
            return AllocationName {
                kind: NameKind::RunOther,
                module,
                module_candidates,
                buffer_candidates: candidates.iter().map(|(_, x)| x.index).collect(),
                output_index: None,
                shape: None,
                holds: None,
                new_value_shaped_as: None,
                instruction: None,
                event,
                python_frame,
                label: format!("{who} run, unmatched ({why})"),
            };
        };
        let shape = common(candidates.iter().map(|(_, x)| x.shape.clone()));
        let holds = common(candidates.iter().map(|(_, x)| x.holds.clone())).flatten();
        let index_table = shape.as_deref().is_some_and(|s| s.starts_with('('));
        let new_value_shaped_as = (kind == BufferKind::Output && !index_table && candidates.iter().all(|(_, x)| x.holds.is_none()))
            .then(|| common(candidates.iter().map(|(_, x)| x.shaped_as.clone())).unwrap_or_default());
        let one = (candidates.len() == 1).then(|| candidates[0].1);
        let output_index = (kind == BufferKind::Output).then(|| {
            let mut indices: Vec<&Vec<i64>> = candidates.iter().filter_map(|(_, x)| x.output_index.as_ref()).collect();
            let all = indices.len() == candidates.len();
            indices.sort();
            indices.dedup();
            let text: Vec<String> = indices.iter().map(|i| index_text(i)).collect();
            (all && !indices.is_empty()).then(|| format!("{{{}}}", text.join("|")))
        });
        let output_index = output_index.flatten();
        let who = match (&module, module_candidates.len()) {
            (Some(m), _) => m.clone(),
            (None, n) => format!("one of {n} modules {}", module_name.unwrap_or_default()),
        };
        // A tuple-shaped output is the result tuple's index table: its shape is the whole result.
        let what = match kind {
            BufferKind::Output if index_table => "result tuple's index table".to_string(),
            BufferKind::Output => format!("output{}", output_index.as_deref().map(|i| format!(" {i}")).unwrap_or_default()),
            BufferKind::Temporary => "temporary".to_string(),
        };
        let mut label = format!("{who} {what}");
        if let Some(s) = shape.as_ref().filter(|_| !index_table) {
            label.push(' ');
            label.push_str(s);
        }
        if let Some(h) = &holds {
            label.push_str(", ");
            label.push_str(&h.text());
        }
        match new_value_shaped_as.as_deref() {
            Some([]) => label.push_str(", a new value (no parameter aliased)"),
            Some(like) => {
                let like: Vec<String> = like.iter().map(Parameter::text).collect();
                label.push_str(&format!(", a new value shaped as {}", like.join(", ")));
            }
            None => {}
        }
        if candidates.len() > 1 {
            label.push_str(&format!(" (one of {} allocations of this size)", candidates.len()));
        }
        AllocationName {
            kind: match kind {
                BufferKind::Output => NameKind::Output,
                BufferKind::Temporary => NameKind::Temporary,
            },
            module,
            module_candidates,
            buffer_candidates: candidates.iter().map(|(_, x)| x.index).collect(),
            output_index,
            shape,
            holds,
            new_value_shaped_as,
            instruction: one.map(|x| x.instruction.clone()),
            event,
            python_frame,
            label,
        }
    }

    /// The name of an event outside a run's buffer building.
    fn place_name(e: &HostEvent, scanned: &Scanned) -> AllocationName {
        let name = |id: Option<i64>| id.map_or(String::new(), |id| scanned.event_name(id).to_string());
        let (kind, event, label) = match e.place {
            Place::Run { run, .. } => {
                let module = scanned.runs[run].module_name.clone().unwrap_or_default();
                let label = format!("{} run, outside its buffer building", if module.is_empty() { "a module" } else { &module });
                (NameKind::RunOther, module, label)
            }
            Place::Compile { event } => {
                let event = name(event);
                let label = format!("compile: {event}");
                (NameKind::Compile, event, label)
            }
            Place::Transfer { event } => {
                let event = name(Some(event));
                let label = format!("host→device: {event}");
                (NameKind::Transfer, event, label)
            }
            Place::Other { event } => match name(event) {
                event if event.is_empty() => (NameKind::Other, event, "Python code, no host event".to_string()),
                event => (NameKind::Other, event.clone(), event),
            },
            Place::Outside => (NameKind::Outside, String::new(), "outside any host event".to_string()),
        };
        AllocationName {
            kind,
            module: None,
            module_candidates: Vec::new(),
            buffer_candidates: Vec::new(),
            output_index: None,
            shape: None,
            holds: None,
            new_value_shaped_as: None,
            instruction: None,
            event,
            python_frame: e.python_frame.map(|f| scanned.python_frame(f)),
            label,
        }
    }
}

/// The value every item shares, if any.
fn common<T: PartialEq>(mut items: impl Iterator<Item = T>) -> Option<T> {
    let first = items.next()?;
    items.all(|x| x == first).then_some(first)
}

fn index_text(index: &[i64]) -> String {
    index.iter().map(i64::to_string).collect::<Vec<_>>().join(",")
}

/// Why the scanned events do not line up one to one with the profile's snapshots, if they do not.
fn misaligned(a: &AllocatorProfile, events: &[&HostEvent]) -> Option<String> {
    if events.len() != a.snapshots.len() {
        return Some(format!("{} events found beside the profile's {}", events.len(), a.snapshots.len()));
    }
    let s = &a.snapshots;
    let bad = (0..events.len()).find(|&i| {
        let e = events[i];
        s.times()[i] != e.offset_ps
            || s.activity(i) != e.activity
            || s.address(i) != e.address
            || s.allocation_bytes(i) != e.allocation_bytes
    })?;
    Some(format!("event {bad} differs from the profile's"))
}

/// Distinct names, each given an id once.
#[derive(Default)]
struct NameTable {
    names: Vec<AllocationName>,
    ids: std::collections::HashMap<AllocationName, u32>,
}

impl NameTable {
    fn id(&mut self, name: AllocationName) -> u32 {
        if let Some(&id) = self.ids.get(&name) {
            return id;
        }
        let id = self.names.len() as u32;
        self.names.push(name.clone());
        self.ids.insert(name, id);
        id
    }
}

/// The snapshot index of `a`'s peak event: the last event at the summary's peak time whose heap +
/// stack is the peak's; `None` when no event is.
fn peak_index(a: &AllocatorProfile) -> Option<usize> {
    let (sum, s) = (&a.summary, &a.snapshots);
    let at_time = s.times().partition_point(|&t| t < sum.peak_stats_time_ps)..s.times().partition_point(|&t| t <= sum.peak_stats_time_ps);
    at_time.rev().find(|&i| s.in_use_bytes(i) == sum.peak_stats.peak_bytes_in_use)
}

/// What was live at `a`'s peak event `peak_index`, by name (`live`, its live set): every allocation
/// made at or before the peak event and not freed by then (not only the peak step's, as XProf's
/// breakdown).
fn peak_names(a: &AllocatorProfile, peak_index: Option<usize>, live: Option<LiveNames>) -> PeakNames {
    let sum = &a.summary;
    let mut out = PeakNames {
        peak_index,
        peak_bytes: sum.peak_stats.peak_bytes_in_use,
        stack_bytes: sum.peak_stats.stack_reserved_bytes,
        pool: PoolAtPeak::new(a, peak_index),
        ..Default::default()
    };
    let Some(live) = live else { return out };
    out.rows = live.rows;
    out.before_trace_bytes = live.before_trace_bytes;
    out.by_kind = live.by_kind;
    out.by_module = live.by_module;
    out
}
