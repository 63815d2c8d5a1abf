"""One XProf 2.24.2 conversion in a fresh process: its time and the process's peak memory.

Runs xprof.convert.raw_to_tool_data.xspace_to_tool_data([FILE], TOOL, params) once, with the parameters
XProf's profile plugin builds for a default web-UI request (bench/xprof_tools_compare.py uses the same),
and prints one line:  TOOL<TAB>FILE<TAB>conversion_ms<TAB>peak_rss_kb<TAB>rss_before_kb
peak_rss_kb is the whole Python process's peak (getrusage), rss_before_kb its resident size just before
the call (Python with xprof imported), so the conversion's own share is roughly the difference.
Used by bench/native_memory.sh.

usage: $XPROF_PYTHON bench/xprof_once.py TOOL FILE.xplane.pb
"""
import os, resource, sys, time


def rss_kb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def main(tool, path):
    from xprof.convert import raw_to_tool_data as r
    params = {"use_saved_result": False, "memory_space": "0"}
    if tool == "trace_viewer":
        params["trace_viewer_options"] = {"resolution": 8000, "full_dma": False}
    before = rss_kb()
    t = time.perf_counter()
    r.xspace_to_tool_data([os.path.abspath(path)], tool, params)
    ms = (time.perf_counter() - t) * 1e3
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"{tool}\t{path}\t{ms:.1f}\t{peak}\t{before}", flush=True)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    main(sys.argv[1], sys.argv[2])
