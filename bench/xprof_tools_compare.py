"""Each tool's time, Tidemark's CLI against XProf's own converter, on the same files (issues 16–18 benchmarks).

For every FILE and every TOOL: XProf's `xspace_to_tool_data([FILE], TOOL, params)` timed in-process, as its
web server calls it with `use_saved_result=False` (the import and the server's start-up are NOT counted: a
long-lived server pays them once), against the WHOLE Tidemark process `tidemark <tool> FILE --json` (start-up,
reading the file, decoding, analysing and printing XProf's JSON all counted). Medians of REPEAT runs each,
side by side, file by file; the ratio is XProf's median over Tidemark's. Timings are printed, never asserted.
Beside the wall times, each side's median CPU time (user + system, every thread: XProf's from
`time.process_time()` around the call, Tidemark's from the kernel's accounting of the finished process),
which a machine shared with other work inflates less than the wall time of a short run.

XProf reads uncompressed .xplane.pb only: a FILE ending in .gz is inflated to a temporary folder first (not
timed) and both sides read the inflated copy.

Several CLIs (`TIDEMARK=BEFORE,AFTER`: two builds) are timed in the same rounds: each round runs XProf once,
then each CLI once, in turn, so every side sees the same minutes of a shared machine; one row per CLI.

usage: REPEAT=5 TOOLS=hlo_stats,op_profile $XPROF_PYTHON bench/xprof_tools_compare.py FILE.xplane.pb[.gz] ...
  XPROF_PYTHON: a Python 3.12 with `pip install xprof==2.24.2` (the fixtures' oracle version)
  TIDEMARK: the CLI(s) to time, comma-separated (default target/release/tidemark; build it with
            `cargo build --release --bin tidemark`)
  TOOLS: default every op table, overview_page, input_pipeline_analyzer and trace_viewer
"""
import gzip, os, resource, shutil, statistics, subprocess, sys, tempfile, time

DEFAULT_TOOLS = ["framework_op_stats", "hlo_stats", "kernel_stats", "op_profile", "roofline_model",
                 "overview_page", "input_pipeline_analyzer", "trace_viewer"]
# Parameters as XProf's profile plugin builds them for a default web-UI request.
BASE = {"use_saved_result": False, "memory_space": "0"}
TRACE_VIEWER = {"trace_viewer_options": {"resolution": 8000, "full_dma": False}}


def timed(fn, cpu_clock):
    """Wall and CPU milliseconds of one call of `fn`; `cpu_clock()` is the CPU seconds so far."""
    c, t = cpu_clock(), time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1e3, (cpu_clock() - c) * 1e3


def medians(samples):
    """Median wall and CPU milliseconds of (wall, cpu) samples."""
    return statistics.median(w for w, _ in samples), statistics.median(c for _, c in samples)


def children_cpu():
    """CPU seconds of the finished child processes so far."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def main(files):
    if not files:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    try:
        from xprof.convert import raw_to_tool_data as r
    except ImportError as e:
        print(f"xprof is not importable with {sys.executable} ({e}): run this with a Python 3.12 that has "
              "'pip install xprof==2.24.2'", file=sys.stderr)
        sys.exit(2)
    repeat = int(os.environ.get("REPEAT", "5"))
    tools = [t for t in os.environ.get("TOOLS", ",".join(DEFAULT_TOOLS)).split(",") if t]
    clis = os.environ.get("TIDEMARK", "target/release/tidemark").split(",")
    for cli in clis:
        if not os.access(cli, os.X_OK):
            print(f"{cli} is missing: cargo build --release --bin tidemark", file=sys.stderr)
            sys.exit(2)
    tmp = tempfile.mkdtemp()
    print(f"{'file':34} {'tool':24} {'xprof_ms':>10} {'tidemark_ms':>12} {'ratio':>8} {'xprof_cpu':>10} "
          f"{'tidemark_cpu':>12} {'cpu_ratio':>9}" + ("  cli" if len(clis) > 1 else ""))
    try:
        for f in files:
            path = os.path.abspath(f)
            if f.endswith(".gz"):
                path = os.path.join(tmp, os.path.basename(f)[:-3])
                with gzip.open(f, "rb") as src, open(path, "wb") as dst:
                    shutil.copyfileobj(src, dst)
            for tool in tools:
                params = dict(BASE, **(TRACE_VIEWER if tool == "trace_viewer" else {}))
                argvs = {cli: [cli, tool.replace("_", "-"), path, "--json"] for cli in clis}
                refused = {}
                for cli, argv in argvs.items():
                    check = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                    if check.returncode != 0:
                        refused[cli] = check.stderr.strip().splitlines()[-1][:80] if check.stderr.strip() else ''
                xprof_samples, ours_samples = [], {cli: [] for cli in argvs if cli not in refused}
                for _ in range(repeat):
                    xprof_samples.append(timed(lambda: r.xspace_to_tool_data([path], tool, params), time.process_time))
                    for cli, samples in ours_samples.items():
                        samples.append(timed(lambda: subprocess.run(argvs[cli], stdout=subprocess.DEVNULL,
                                                                    stderr=subprocess.DEVNULL, check=False), children_cpu))
                xprof, xprof_cpu = medians(xprof_samples)
                name = os.path.basename(path)[:34]
                for cli in clis:
                    tail = f"  {cli}" if len(clis) > 1 else ""
                    if cli in refused:
                        print(f"{name:34} {tool:24} {xprof:10.1f} {'refused':>12}  {refused[cli]}{tail}", flush=True)
                        continue
                    ours, ours_cpu = medians(ours_samples[cli])
                    print(f"{name:34} {tool:24} {xprof:10.1f} {ours:12.1f} {xprof / ours:7.1f}x "
                          f"{xprof_cpu:10.1f} {ours_cpu:12.1f} {xprof_cpu / max(ours_cpu, 1e-9):8.1f}x{tail}", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1:])
