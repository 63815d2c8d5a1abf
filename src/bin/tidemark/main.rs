//! `tidemark`: the native front door to the same engine the page uses.
//!
//! Usage: `tidemark <command> FILE... [options]`; see `tidemark --help`.

#[cfg(not(target_arch = "wasm32"))]
mod args;
#[cfg(not(target_arch = "wasm32"))]
mod bundle;
#[cfg(not(target_arch = "wasm32"))]
mod device_memory;
#[cfg(not(target_arch = "wasm32"))]
mod framework_op_stats;
#[cfg(not(target_arch = "wasm32"))]
mod graph_viewer;
#[cfg(not(target_arch = "wasm32"))]
mod input_pipeline;
#[cfg(not(target_arch = "wasm32"))]
mod inspect;
#[cfg(not(target_arch = "wasm32"))]
mod memory_across_hosts;
#[cfg(not(target_arch = "wasm32"))]
mod memory_profile;
#[cfg(not(target_arch = "wasm32"))]
mod memory_viewer;
#[cfg(not(target_arch = "wasm32"))]
mod op_tables;
mod open;
#[cfg(not(target_arch = "wasm32"))]
mod overview_page;
#[cfg(not(target_arch = "wasm32"))]
mod run_comparison;
#[cfg(not(target_arch = "wasm32"))]
mod step_window;
#[cfg(not(target_arch = "wasm32"))]
mod torch;
mod torch_snapshot;
#[cfg(not(target_arch = "wasm32"))]
mod trace_viewer;
#[cfg(not(target_arch = "wasm32"))]
mod units;
#[cfg(not(target_arch = "wasm32"))]
mod xla_ops_cpu;

#[cfg(not(target_arch = "wasm32"))]
const HELP: &str = "tidemark — what is using accelerator memory, when, and why

Usage:
  tidemark inspect FILE|DIR... [--json]   (or file-details) the details of each profile (format, planes, allocators, HLO modules, pprof)
  tidemark memory-profile FILE [--memory-id ID] [--json]
                                          XProf's Memory Profile: peak, breakdown, exact counts, leak hints
  tidemark memory-viewer FILE [--module NAME] [--memory-space N] [--json]
                                          XProf's Memory Viewer of one HLO module (lists modules without --module)
  tidemark graph-viewer FILE --module M [--node NAME] [--width N] [--format dot|json] [--overview]
                                          XProf's Graph Viewer: the module's graph within N hops of an
                                          instruction (default: the entry root), or a whole computation;
                                          --overview: the whole module, each fusion one node
  tidemark overview-page FILE|RUN_DIR [--json]
                                          XProf's Overview Page: run environment, step time, input-bound verdict
  tidemark input-pipeline-analyzer FILE|RUN_DIR [--json]
                                          XProf's Input Pipeline Analyzer: steps by category, verdict, input ops
  tidemark device-memory FILE|DIR... [--base FILE] [--json] [--all-frames] [--kind KIND]
                                          JAX device memory: live bytes by stack; diff; leak suspects of a series
  tidemark framework-op-stats FILE|RUN_DIR [--step N] [--json]
                                          XProf's framework op stats: ops by self time, device and host (the
                                          true occurrence count beside XProf's where allocator events inflate it);
                                          --step N: only the ops starting inside step N (its group id, as the
                                          page's step selection names it) — Tidemark's own, XProf has no such option
  tidemark trace-viewer FILE [--json]
                                          XProf's Trace Viewer: processes, threads, event counts and time span;
                                          --json prints XProf's trace_viewer JSON (Chrome trace format) with
                                          every event — XProf keeps only the 5,000,000 earliest (the summary
                                          says how many it would drop) — the lines XProf derives on GPU/TPU
                                          planes (Steps, XLA Ops, Framework Ops, ...) and its step groups included
  tidemark op-profile FILE|RUN_DIR [--step N] [--json]
                                          XProf's Op Profile: device ops by program and category, time and utilisation;
                                          --step N as for framework-op-stats (XProf has no such option)
  tidemark kernel-stats FILE|RUN_DIR [--step N] [--json]
                                          XProf's GPU Kernel Stats: each kernel's launches, durations, Tensor Core use;
                                          --step N as for framework-op-stats (XProf has no such option)
  tidemark hlo-stats FILE|RUN_DIR [--step N] [--json]
                                          XProf's HLO Op Stats: each HLO op's time, rates and bound (TPU traces);
                                          --step N as for framework-op-stats (XProf has no such option)
  tidemark roofline-model FILE|RUN_DIR [--step N] [--json]
                                          XProf's Roofline Model: ops against the device's peaks (TPU traces);
                                          --step N as for framework-op-stats (XProf has no such option)
  tidemark xla-ops-cpu FILE [--json]      Tidemark's own (not in XProf): the XLA ops a CPU trace's host threads
                                          ran, per module and HLO op: runs, total / average / self time, category
  tidemark memory-across-hosts FILE|RUN_DIR [--json]
                                          every allocator of every host of a run: peak, capacity, peak time,
                                          closest to capacity first (times from the run's earliest host start)
  tidemark run-comparison RUN_DIR --baseline BASE_RUN_DIR [--json]
                                          a run against a baseline run: each framework op's self and total time
                                          in both with the change, each host allocator's peak, step time; two
                                          PyTorch runs (folders of *.pt.trace.json, or traces): ops, kernels,
                                          step time, ranks (the baseline may also follow as a second path)
  tidemark torch-overview | torch-operators | torch-kernels | torch-memory TRACE [--json]
                                          the PyTorch Profiler's views of a Kineto trace (*.pt.trace.json[.gz]):
                                          step time by category, ops, kernels, memory; --json prints the
                                          TensorBoard plugin's payloads keyed by its file names;
                                          torch-operators --group-by input-shape: by name and input shape
  tidemark torch-overview | torch-operators | torch-kernels RUN_FOLDER [--json]
                                          a PyTorch run of several ranks (one trace per worker): each rank's
                                          step split (computation, communication, memcpy, other), ops and
                                          kernels summed over the ranks; --json every rank's and the combined
  tidemark torch-ranks RUN_FOLDER [--json]
                                          a PyTorch run's ranks all at once (the page's Ranks view): each rank's
                                          step split side by side with their mean, then the operators and
                                          kernels summed over the ranks; --json as for RUN_FOLDER above
  tidemark torch-snapshot SNAPSHOT [--device D] [--at EVENT | --trace TRACE] [--json]
                                          a PyTorch CUDA memory snapshot (torch.cuda.memory._dump_snapshot's
                                          pickle) per device: events, peak active memory and what was live
                                          there by Python frame, segments, lost history, largest allocations,
                                          leak suspects, OOMs; --at: the allocator's state after that event;
                                          --trace: a Kineto trace of the same run on the snapshot's clock
                                          (matched events, span, its peak beside the snapshot's; --json the points)
  tidemark bundle FILE|DIR... -o OUT.html [--slim] [--tool T] [--file NAME] [--module M] [--dist DIR]
                [--max-bytes N] [--json]  one offline HTML file with the app and the profiles (opens from disk);
                                          without --tool it opens where a drop would land; --max-bytes N:
                                          refuse (exit 3) profiles over N bytes; --json: a summary on stdout

FILE may be an XProf trace (*.xplane.pb[.gz]), an XLA HloProto (*.hlo.pb, *.hlo_proto.pb) or a JAX
device memory profile (*.prof); the format is detected from the content. A directory is searched
recursively. RUN_DIR is a TensorBoard run folder (`<logdir>/plugins/profile/<run>/`) with one
`<host>.xplane.pb` per host: the op tools combine its hosts as XProf does for all hosts.
Exit status: 0 on success, 1 when a file could not be read, 2 on a usage error.
";

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    // No `retain_memory::retain_freed_memory` here, unlike the benchmarks: a command analyses its
    // file once, so keeping freed memory for a next run gains nothing, and it kept the Memory
    // Profile's discarded buffers resident, a fifth of the command's peak memory.
    return_freed_buffers();
    end_quietly_on_a_closed_pipe();
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let Some((command, rest)) = argv.split_first() else {
        eprint!("{HELP}");
        std::process::exit(2);
    };
    let code = match command.as_str() {
        "-h" | "--help" | "help" => {
            print!("{HELP}");
            0
        }
        // `file-details` is the tool's name (the page's File details); `inspect` the older one.
        "inspect" | "file-details" => inspect::run(rest),
        "bundle" => bundle::run(rest),
        "device-memory" => device_memory::run(rest),
        "memory-viewer" => memory_viewer::run(rest),
        "graph-viewer" => graph_viewer::run(rest),
        "memory-profile" => memory_profile::run(rest),
        "framework-op-stats" => framework_op_stats::run(rest),
        "trace-viewer" => trace_viewer::run(rest),
        "op-profile" => op_tables::op_profile(rest),
        "overview-page" => overview_page::run(rest),
        "input-pipeline-analyzer" => input_pipeline::run(rest),
        "kernel-stats" => op_tables::kernel_stats(rest),
        "hlo-stats" => op_tables::hlo_stats(rest),
        "roofline-model" => op_tables::roofline_model(rest),
        "xla-ops-cpu" => xla_ops_cpu::run(rest),
        "memory-across-hosts" => memory_across_hosts::run(rest),
        // `compare-runs` is the name it had before it took the tool's.
        "run-comparison" | "compare-runs" => run_comparison::run(rest),
        "torch-overview" | "torch-operators" | "torch-kernels" | "torch-memory" | "torch-ranks" => torch::run(command, rest),
        "torch-snapshot" => torch_snapshot::run(rest),
        other => {
            eprintln!("tidemark: unknown command `{other}`\n\n{HELP}");
            2
        }
    };
    std::process::exit(code);
}

#[cfg(target_arch = "wasm32")]
fn main() {}

/// Every buffer of 128 KiB or more gets a mapping of its own, unmapped when freed. That is glibc's
/// default until the first such buffer is freed; glibc then raises the size (up to 32 MiB), so the
/// buffers an analysis allocates after its first large ones were freed (the Memory Profile's
/// snapshots, after its step grouping) stayed resident once freed: 55 MiB of the Memory Profile's
/// peak on a 298 MB trace. Setting the size fixes it. A no-op off glibc.
/// `tidemark … --json | head` ends when `head` has read enough, as other command-line tools do:
/// Rust ignores SIGPIPE, so a write to the closed pipe would otherwise panic ("failed printing to
/// stdout: Broken pipe").
#[cfg(not(target_arch = "wasm32"))]
fn end_quietly_on_a_closed_pipe() {
    #[cfg(target_os = "linux")]
    // SAFETY: restores the default action of one signal, before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn return_freed_buffers() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes glibc's allocation parameters; called before any thread starts.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 << 10);
    }
}
