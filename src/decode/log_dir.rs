//! Where a file sits in a TensorBoard log folder: `<logdir>/plugins/profile/<run>/<host>.xplane.pb`,
//! one file per host, one folder per profiling session (its name a timestamp,
//! `2026_11_24_09_30_00`), the same host file name in every run. Paths here are relative to what
//! the user opened, `/`-separated.
//!
//! The PyTorch Profiler's TensorBoard plugin lays its runs out the same way, without the
//! `plugins/profile` part: `<logdir>/<run>/<worker>[.<span>].pt.trace.json[.gz]`, one Kineto trace per
//! worker (rank) of the run, `<span>` a number (a timestamp) telling one capture of a worker from
//! another. A Kineto file's host is its worker, so the ranks of a run are its hosts.
//!
//! Beside the traces TensorBoard and XProf leave their tools' outputs (sidecars: a trace as
//! `<host>.trace.json.gz`, cached tool data as `<host>.<tool>.pb`): these are not profiles, and are
//! listed as sidecars rather than opened and reported as errors.

use serde::{Deserialize, Serialize};

/// The run and host of a file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunHost {
    /// The folder the file is in, relative to what was opened (`plugins/profile/2026_11_24_09_30_00`);
    /// empty for a file opened alone or lying directly in the opened folder. What identifies the run.
    pub run_dir: String,
    /// The run's name: its folder's name (TensorBoard's run name); empty where `run_dir` is.
    pub run: String,
    /// The host: the file name without its profile suffix (`ml-host` of `ml-host.xplane.pb.gz`); of a
    /// Kineto trace, its worker (`worker0` of `worker0.1795841222.pt.trace.json`).
    pub host: String,
}

/// The suffixes of the sidecars TensorBoard's profile plugin and XProf write beside a host's trace.
const SIDECAR_SUFFIXES: &[&str] = &[
    ".trace.json.gz",
    ".memory_profile.json.gz",
    ".pod_viewer.json",
    ".op_profile.json",
    ".overview_page.pb",
    ".input_pipeline.pb",
    ".tensorflow_stats.pb",
    ".kernel_stats.pb",
    ".op_stats_v2.pb",
    ".dcn_collective_stats.pb",
    ".smart_suggestion.pb",
];

/// The suffixes that end a host's profile name, longest first.
const PROFILE_SUFFIXES: &[&str] = &[
    ".pt.trace.json.gz",
    ".pt.trace.json",
    ".xplane.pb.gz",
    ".xplane.pb",
    ".hlo_proto.pb",
    ".hlo.pb",
    ".prof.gz",
    ".prof",
    ".pb.gz",
    ".pb",
];

/// Whether `name` (a path or a file name) is a sidecar TensorBoard or XProf wrote beside a trace.
pub fn is_sidecar(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    // PyTorch's profiler writes its traces as JSON too (`*.pt.trace.json[.gz]`): profiles, not tool output.
    !is_kineto(&n) && SIDECAR_SUFFIXES.iter().any(|s| n.ends_with(s))
}

/// The run and host of the file at `path`.
pub fn run_host(path: &str) -> RunHost {
    let (run_dir, file) = path.rsplit_once('/').unwrap_or(("", path));
    let lower = file.to_ascii_lowercase();
    let kineto = is_kineto(&lower);
    // A Kineto trace's name ends as a trace sidecar's does (`.trace.json.gz`): its own suffix, whole.
    let sidecars = if kineto { &[][..] } else { SIDECAR_SUFFIXES };
    let stem_len = sidecars
        .iter()
        .chain(PROFILE_SUFFIXES)
        .find(|s| lower.ends_with(*s) && lower.len() > s.len())
        .map_or(file.len(), |s| file.len() - s.len());
    let stem = &file[..stem_len];
    let host = if kineto { kineto_worker(stem) } else { stem };
    RunHost { run_dir: run_dir.to_string(), run: run_dir.rsplit('/').next().unwrap_or_default().to_string(), host: host.to_string() }
}

/// Whether the lower-cased file name is a Kineto trace's (`*.pt.trace.json[.gz]`).
fn is_kineto(lower: &str) -> bool {
    lower.strip_suffix(".gz").unwrap_or(lower).ends_with(".pt.trace.json")
}

/// The worker of a Kineto trace's stem: the plugin's `WORKER_PATTERN`, `^(.*?)(\.\d+)?$` (the stem
/// without a trailing `.<span>` of digits).
fn kineto_worker(stem: &str) -> &str {
    match stem.rsplit_once('.') {
        Some((worker, span)) if !worker.is_empty() && !span.is_empty() && span.bytes().all(|b| b.is_ascii_digit()) => worker,
        _ => stem,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_and_hosts_of_a_log_folder() {
        let r = run_host("logs/plugins/profile/2026_11_24_09_30_00/ml-host.xplane.pb");
        assert_eq!(
            (r.run_dir.as_str(), r.run.as_str(), r.host.as_str()),
            ("logs/plugins/profile/2026_11_24_09_30_00", "2026_11_24_09_30_00", "ml-host")
        );
        let r = run_host("worker-1.xplane.pb.gz");
        assert_eq!((r.run_dir.as_str(), r.run.as_str(), r.host.as_str()), ("", "", "worker-1"));
        assert_eq!(run_host("run1/memory.prof").host, "memory");
        assert_eq!(run_host("run1/ml-host.trace.json.gz").host, "ml-host");
    }

    #[test]
    fn kineto_traces_of_a_run_folder_are_its_workers() {
        // torch.profiler's tensorboard_trace_handler: `<run>/<worker>.<span>.pt.trace.json[.gz]`.
        let r = run_host("tb/resnet/vm_2031.1795841222637258163.pt.trace.json.gz");
        assert_eq!((r.run_dir.as_str(), r.run.as_str(), r.host.as_str()), ("tb/resnet", "resnet", "vm_2031"));
        let hosts: Vec<String> =
            ["run/worker0.17.pt.trace.json", "run/worker1.17.pt.trace.json"].iter().map(|p| run_host(p).host).collect();
        assert_eq!(hosts, ["worker0", "worker1"]);
        assert_eq!(run_host("run/worker1.17.pt.trace.json").run_dir, run_host("run/worker0.17.pt.trace.json").run_dir);
        // Without a span, or with a dot in the worker name, the worker is what precedes the span.
        assert_eq!(run_host("rank0.pt.trace.json").host, "rank0");
        assert_eq!(run_host("run/host.a.b.1234.PT.TRACE.JSON.GZ").host, "host.a.b");
        assert_eq!(run_host("run/host.v2.pt.trace.json").host, "host.v2");
        // A name of digits only keeps them: the plugin's lazy `.*?` leaves a span-looking name whole.
        assert_eq!(run_host("run/12345.pt.trace.json").host, "12345");
    }

    #[test]
    fn sidecars_are_not_profiles() {
        assert!(is_sidecar("run/ml-host.trace.json.gz"));
        assert!(is_sidecar("ml-host.input_pipeline.pb"));
        assert!(!is_sidecar("ml-host.xplane.pb"));
        assert!(!is_sidecar("run/worker0.1795841222.pt.trace.json.gz"));
        assert!(!is_sidecar("NO_MODULE.hlo_proto.pb"));
    }
}
