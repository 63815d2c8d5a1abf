//! The details of one file: what it is and what the memory tools will find in it (planes, lines and
//! events counted, allocators, HLO modules, a pprof's or a snapshot's contents). Plain data from the
//! decoded file; the engine gathers the inputs (the Memory Profile it keeps, the step count) in
//! `engine::file_details`.

use crate::analysis::memory_events::{self, Activity};
use crate::analysis::memory_profile::MemoryProfile;
use crate::decode::gzip::GzipCut;
use crate::decode::hlo::{self, ModuleSummary};
use crate::decode::xplane::names::HOST_PLANE;
use crate::decode::xplane::Truncation;
use crate::decode::{DecodeError, DecodedFile, Format, Profile};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileDetails {
    /// The file's base name, for display.
    pub name: String,
    /// The file's path relative to what was opened (a folder, a drop, a bundle): what identifies it,
    /// since base names repeat (every TensorBoard run holds `<host>.xplane.pb`).
    pub path: String,
    /// The run (the folder the file lies in) and host (its name without the profile suffix) the path
    /// gives it.
    #[serde(flatten)]
    pub run_host: crate::decode::log_dir::RunHost,
    pub format: Format,
    pub size_bytes: u64,
    pub gzipped: bool,
    /// Host names: the XSpace's own, else the `<host>` of `<host>.xplane.pb`.
    pub hosts: Vec<String>,
    pub planes: Vec<PlaneOverview>,
    /// Memory events per memory ID (allocator), sorted by memory ID.
    pub allocators: Vec<AllocatorOverview>,
    pub hlo_modules: Vec<ModuleSummary>,
    pub pprof: Option<PprofOverview>,
    /// Things worth knowing that did not stop decoding (the trace's own errors and warnings, modules
    /// without buffer assignment, ...).
    pub notes: Vec<String>,
    /// Where a trace cut short ends: every tool then shows what lies before the cut
    /// ([`FileDetails::truncation_message`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncation: Option<Truncation>,
    /// Where a gzipped trace was cut short, when it was: what was inflated before the cut is what
    /// the tools read (and `truncation` says where the trace in it is cut, when it is).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gzip_cut: Option<GzipCut>,
    /// How many steps the trace's Overview Page finds (its step database: XProf's step markers,
    /// grouped); `None` for a file that is not a trace, or a TPU trace whose steps XProf takes from
    /// step lines that are not computed. What the first screen and the empty-state reasons read
    /// (`engine::first_screen`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<usize>,
    /// The XLA modules whose compilation began in this trace (XLA's first pass pipeline,
    /// `pre-spmd-partitioner (<module>)`, on the host plane) of which the trace holds no compiled
    /// module, though it holds others: a compile that failed (a program too large for the device
    /// fails while the compiler autotunes) or had not finished when the profile ended. Sorted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unfinished_compiles: Vec<String>,
    /// What a PyTorch CUDA memory snapshot holds; `None` for other formats.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub torch_snapshot: Option<TorchSnapshotOverview>,
}

impl FileDetails {
    /// The one line the page's banner and the CLI's warning give a trace cut short: where the cut
    /// is, how many events lie before it, that the figures are partial, and which plane's
    /// names were lost. A gzipped trace cut short names both places: the compressed file's length,
    /// and the byte of the inflated trace that the cut reached; and says that without the gzip's end
    /// marker the inflated bytes were not checked.
    pub fn truncation_message(&self) -> Option<String> {
        let count = crate::units::count;
        let events: usize = self.planes.iter().map(|p| p.event_count).sum();
        let Some(t) = &self.truncation else {
            // The stream was cut after the trace it holds: in the trailer, or between two members.
            let cut = self.gzip_cut?;
            return Some(format!(
                "Truncated: the gzip file is cut short at byte {}, past the end of the trace it holds ({} inflated bytes, {} events, all shown); {UNCHECKED}",
                count(cut.compressed_len),
                count(cut.inflated_bytes),
                count(events as u64)
            ));
        };
        let shown = match events {
            0 => "no event lies wholly before the cut".to_string(),
            1 => "showing the 1 event decoded before the cut; figures are partial".to_string(),
            n => format!("showing the {} events decoded before the cut; figures are partial", count(n as u64)),
        };
        let lost = if t.names_lost_in.is_empty() {
            String::new()
        } else {
            format!(" (names lost in plane {}: shown by id)", t.names_lost_in.join(", "))
        };
        let (at, at_least) = (count(t.truncated_at), count(t.at_least_bytes));
        Some(match self.gzip_cut {
            Some(cut) => format!(
                "Truncated: the gzip file is cut short at byte {}, which inflates to byte {at} of a trace of at least {at_least} bytes: {shown}{lost}; {UNCHECKED}",
                count(cut.compressed_len)
            ),
            None if self.gzipped => format!("Truncated at byte {at} (inflated) of at least {at_least}: {shown}{lost}"),
            None => format!("Truncated at byte {at} of at least {at_least}: {shown}{lost}"),
        })
    }
}

/// What a gzip file cut short lacks: the trailer that checks what was inflated.
const UNCHECKED: &str = "its end marker was lost with the cut, so the inflated bytes could not be checked against its CRC";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlaneOverview {
    pub id: i64,
    pub name: String,
    pub line_count: usize,
    pub event_count: usize,
    pub lines: Vec<LineOverview>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LineOverview {
    pub name: String,
    pub event_count: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AllocatorOverview {
    pub memory_id: String,
    pub allocations: u64,
    pub deallocations: u64,
    /// The largest `peak_bytes_in_use` the allocator reported.
    pub max_peak_bytes_in_use: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PprofOverview {
    pub sample_count: usize,
    pub sample_types: Vec<String>,
    /// Sum of the `bytes` column: the live bytes of a device memory profile.
    pub live_bytes: i64,
    pub function_count: usize,
    pub location_count: usize,
    /// Sample counts per `kind` label (JAX: `buffer`, `executable`), sorted by kind.
    pub samples_by_kind: BTreeMap<String, usize>,
}

/// A PyTorch CUDA memory snapshot at a glance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TorchSnapshotOverview {
    /// Trace events per device, by device index.
    pub events_per_device: Vec<u64>,
    pub segment_count: usize,
    /// Bytes the segments at the dump hold (reserved by the caching allocator).
    pub reserved_bytes: i64,
    /// Bytes of the segments' active blocks at the dump.
    pub active_bytes: i64,
    pub distinct_stacks: usize,
}

/// XLA's first pass pipeline, which it runs once on every module it compiles and names
/// `pre-spmd-partitioner (<module>)` in the trace, on CPU and GPU alike.
const FIRST_COMPILE_PASS: &str = "pre-spmd-partitioner (";

/// The modules whose compilation the host plane shows beginning ([`FIRST_COMPILE_PASS`]) and which
/// `modules` (the trace's compiled modules) lacks. A trace with no module at all says nothing (its
/// profiler did not record HLO protos), so none is reported for it.
fn unfinished_compiles(space: &crate::decode::xplane::XSpace, modules: &[ModuleSummary]) -> Vec<String> {
    if modules.is_empty() {
        return Vec::new();
    }
    let Some(host) = space.plane_named(HOST_PLANE) else { return Vec::new() };
    let mut names: Vec<String> = host
        .meta
        .event_metadata
        .values()
        .filter_map(|m| m.name.strip_prefix(FIRST_COMPILE_PASS)?.strip_suffix(')'))
        .filter(|name| !modules.iter().any(|m| m.module_name == *name))
        .map(str::to_string)
        .collect();
    names.sort();
    names.dedup();
    names
}

/// The last component of a path, whichever separator it uses.
pub fn base_name(path: &str) -> &str {
    path.rsplit(['/', '\\']).next().unwrap_or(path)
}

fn host_from_name(name: &str) -> Option<String> {
    let base = base_name(name);
    let base = base.strip_suffix(".gz").unwrap_or(base);
    base.strip_suffix(".xplane.pb").filter(|h| !h.is_empty()).map(str::to_string)
}

/// The details of `file`; `host_memory` is its Memory Profile if the caller computed it already.
pub fn details(file: &DecodedFile, host_memory: Option<&MemoryProfile>) -> Result<FileDetails, DecodeError> {
    let mut o = FileDetails {
        name: base_name(&file.name).to_string(),
        path: file.name.clone(),
        run_host: crate::decode::log_dir::run_host(&file.name),
        format: file.profile.format(),
        size_bytes: file.size_bytes,
        gzipped: file.gzipped,
        hosts: Vec::new(),
        planes: Vec::new(),
        allocators: Vec::new(),
        hlo_modules: Vec::new(),
        pprof: None,
        notes: Vec::new(),
        truncation: None,
        gzip_cut: file.gzip_cut,
        steps: None,
        unfinished_compiles: Vec::new(),
        torch_snapshot: None,
    };
    match &file.profile {
        Profile::XSpace(space) => {
            o.truncation = space.truncation.clone();
            o.hosts = space.hostnames.clone();
            if o.hosts.is_empty() {
                o.hosts.extend(host_from_name(&file.name));
            }
            o.notes.extend(space.errors.iter().map(|e| format!("the profiler reported an error: {e}")));
            o.notes.extend(space.warnings.iter().map(|w| format!("the profiler reported a warning: {w}")));
            o.planes = space
                .planes
                .iter()
                .map(|p| PlaneOverview {
                    id: p.meta.id,
                    name: p.meta.name.clone(),
                    line_count: p.lines.len(),
                    event_count: p.event_count(),
                    lines: p.lines.iter().map(|l| LineOverview { name: l.header.name.clone(), event_count: l.event_count }).collect(),
                })
                .collect();
            let mut by_id: BTreeMap<String, AllocatorOverview> = BTreeMap::new();
            let mut add = |memory_id: &str, activity: Activity, peak_bytes_in_use: i64, n: u64| {
                let a = by_id.entry(memory_id.to_string()).or_insert_with(|| AllocatorOverview {
                    memory_id: memory_id.to_string(),
                    allocations: 0,
                    deallocations: 0,
                    max_peak_bytes_in_use: 0,
                });
                match activity {
                    Activity::Allocation => a.allocations += n,
                    Activity::Deallocation => a.deallocations += n,
                }
                a.max_peak_bytes_in_use = a.max_peak_bytes_in_use.max(peak_bytes_in_use);
            };
            // The host plane's events are counted from its Memory Profile when the caller has it (one
            // scan of a plane that may hold millions of events, not two); other planes are read here.
            let skip_plane = host_memory.and_then(|_| space.planes.iter().position(|p| p.name() == HOST_PLANE));
            for a in host_memory.map_or(&[][..], |m| &m.allocators[..]) {
                let peak = a.snapshots.iter().map(|s| s.stats.peak_bytes_in_use).max().unwrap_or(0);
                add(&a.memory_id, Activity::Allocation, peak, a.counts.allocations);
                add(&a.memory_id, Activity::Deallocation, peak, a.counts.deallocations);
            }
            memory_events::for_each(space, skip_plane, |e| add(&e.memory_id, e.activity, e.peak_bytes_in_use, 1))?;
            o.allocators = by_id.into_values().collect();
            for m in hlo::embedded_modules(space) {
                match hlo::decode_proto(m.proto_bytes.clone()) {
                    Ok(proto) => o.hlo_modules.push(hlo::summarize(m.name, m.program_id, &proto)),
                    Err(e) => o.notes.push(format!("HLO module {} could not be read: {e}", m.name)),
                }
            }
            // XProf lists modules by name; ours are sorted by program id, then name, for stability.
            o.hlo_modules.sort_by(|a, b| (a.program_id, &a.name).cmp(&(b.program_id, &b.name)));
            o.unfinished_compiles = unfinished_compiles(space, &o.hlo_modules);
        }
        Profile::Hlo(h) => {
            let name = h.proto.hlo_module.as_ref().map(|m| m.name.clone()).unwrap_or_default();
            o.hlo_modules.push(hlo::summarize(&name, None, &h.proto));
        }
        Profile::Kineto(t) => {
            let kernels = t.events.iter().filter(|e| e.kind == crate::decode::kineto::Kind::Kernel).count();
            let memory = t.memory.len();
            let devices: Vec<&str> = t.device_props.iter().flatten().filter_map(|d| d.name.as_deref()).collect();
            o.notes.push(format!(
                "PyTorch profiler trace: {} events ({} read: {kernels} kernels, {memory} [memory] events){}; its views: `tidemark torch-overview`, `torch-operators`, `torch-kernels`, `torch-memory`",
                t.raw_events,
                t.events.len(),
                if devices.is_empty() { String::new() } else { format!(" on {}", devices.join(", ")) }
            ));
        }
        Profile::Pprof(p) => {
            let mut samples_by_kind = BTreeMap::new();
            for s in &p.proto.sample {
                if let Some(kind) = s.label.iter().find(|l| p.str(l.key) == "kind") {
                    *samples_by_kind.entry(p.str(kind.str).to_string()).or_insert(0) += 1;
                }
            }
            o.pprof = Some(PprofOverview {
                sample_count: p.proto.sample.len(),
                sample_types: p.sample_types(),
                live_bytes: p.total_bytes(),
                function_count: p.proto.function.len(),
                location_count: p.proto.location.len(),
                samples_by_kind,
            });
        }
        Profile::TorchSnapshot(t) => {
            o.torch_snapshot = Some(TorchSnapshotOverview {
                events_per_device: t.devices.iter().map(|d| d.len() as u64).collect(),
                segment_count: t.segments.len(),
                reserved_bytes: t.segments.iter().fold(0, |a, g| a.saturating_add(g.total_size)),
                active_bytes: t.segments.iter().fold(0, |a, g| a.saturating_add(g.active_size)),
                distinct_stacks: t.stack_count(),
            });
        }
    }
    for m in &o.hlo_modules {
        if !m.has_buffer_assignment {
            o.notes.push(format!(
                "HLO module {} has no buffer assignment (a before-optimizations dump?): the Memory Viewer needs the after-optimizations HloProto",
                m.name
            ));
        }
    }
    Ok(o)
}
