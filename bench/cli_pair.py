"""Two builds of the Tidemark CLI timed against each other, whole process, run by run in turn (A B A B ...).

For every FILE and TOOL: `BEFORE <tool> FILE --json` and `AFTER <tool> FILE --json` (output thrown away), each
run REPEAT times after one warm-up run each, alternating so that both see the same minutes of a shared
machine. Per side: the median wall time and the median CPU time (user + system, from the kernel's
accounting of the finished child, all threads), and the ratio of the medians (BEFORE / AFTER). Each
pair's outputs are also compared byte for byte once (a change that makes the output differ is
reported as `OUTPUT DIFFERS`). Timings are printed, never asserted.

usage: REPEAT=21 TOOLS=overview_page,hlo_stats python3 bench/cli_pair.py BEFORE AFTER FILE.xplane.pb[.gz] ...
  BEFORE, AFTER: two `tidemark` binaries (e.g. a copy of target/release/tidemark built at the start
  commit, and the current one: `cargo build --release --bin tidemark`)
  TOOLS: default every op table, overview_page, input_pipeline_analyzer and trace_viewer
"""
import os, resource, statistics, subprocess, sys, time

DEFAULT_TOOLS = ["framework_op_stats", "hlo_stats", "kernel_stats", "op_profile", "roofline_model",
                 "overview_page", "input_pipeline_analyzer", "trace_viewer"]


def timed(argv):
    """(wall seconds, CPU seconds) of one whole run of `argv`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    before_cli, after_cli, files = argv[0], argv[1], argv[2:]
    repeat = int(os.environ.get("REPEAT", "21"))
    tools = [t for t in os.environ.get("TOOLS", ",".join(DEFAULT_TOOLS)).split(",") if t]
    print(f"{'file':30} {'tool':24} {'before_ms':>9} {'after_ms':>9} {'wall x':>7} "
          f"{'before_cpu':>10} {'after_cpu':>9} {'cpu x':>6}")
    for f in files:
        for tool in tools:
            cmd = lambda cli: [cli, tool.replace("_", "-"), f, "--json"]
            outs = [subprocess.run(cmd(cli), capture_output=True, check=False) for cli in (before_cli, after_cli)]
            same = outs[0].stdout == outs[1].stdout and outs[0].returncode == outs[1].returncode
            runs = {before_cli: [], after_cli: []}
            for _ in range(repeat):
                for cli in (before_cli, after_cli):
                    runs[cli].append(timed(cmd(cli)))
            med = {cli: (statistics.median(w for w, _ in r) * 1e3, statistics.median(c for _, c in r) * 1e3)
                   for cli, r in runs.items()}
            (bw, bc), (aw, ac) = med[before_cli], med[after_cli]
            print(f"{os.path.basename(f)[:30]:30} {tool:24} {bw:9.1f} {aw:9.1f} {bw / aw:6.2f}x "
                  f"{bc:10.1f} {ac:9.1f} {bc / max(ac, 1e-9):5.2f}x{'' if same else '  OUTPUT DIFFERS'}",
                  flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
