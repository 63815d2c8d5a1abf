"""XProf's own Memory Profile converter time on trace files, for the ratios of issue 3 §5.

Times xprof.convert.raw_to_tool_data.xspace_to_tool_data([FILE], "memory_profile",
{"use_saved_result": False, "memory_space": "0"}) in-process, as XProf's web server calls it (and as
tests/fixtures/scripts/e_xprof_oracle.py times it): from the file on disk to XProf's memory_profile
JSON. Prints one `median_ms<TAB>FILE<TAB>MS` line per file (median of REPEAT runs, default 3), FILE as
given. Shared by bench/xprof_compare.sh (native) and bench/browser_memory_profile.mjs (in the browser).

XProf reads uncompressed .xplane.pb only: a FILE ending in .gz is inflated to a temporary folder first
(not timed). XProf's own logging goes to stderr.

usage: XPROF_PYTHON=/tmp/xprof-venv/bin/python; $XPROF_PYTHON bench/xprof_time.py FILE.xplane.pb[.gz] ...
       $XPROF_PYTHON bench/xprof_time.py --check   (exit 2 with a hint if xprof is not importable)
(needs Python 3.12 with `pip install xprof==2.24.2`, the version the fixtures' oracle outputs come from)
"""
import gzip, os, shutil, statistics, sys, tempfile, time


def load_xprof():
    try:
        from xprof.convert import raw_to_tool_data
    except ImportError as e:
        print(f"xprof is not importable with {sys.executable} ({e}): set XPROF_PYTHON to a Python 3.12 with "
              "'pip install xprof==2.24.2'", file=sys.stderr)
        sys.exit(2)
    return raw_to_tool_data


def main(args):
    r = load_xprof()
    if args == ["--check"]:
        return
    if not args:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    repeat = int(os.environ.get("REPEAT", "3"))
    tmp = tempfile.mkdtemp()
    try:
        for f in args:
            path = f
            if f.endswith(".gz"):
                path = os.path.join(tmp, os.path.basename(f)[:-3])
                with gzip.open(f, "rb") as src, open(path, "wb") as dst:
                    shutil.copyfileobj(src, dst)
            times = []
            for _ in range(repeat):
                t = time.perf_counter()
                r.xspace_to_tool_data([path], "memory_profile", {"use_saved_result": False, "memory_space": "0"})
                times.append(time.perf_counter() - t)
            print(f"median_ms\t{f}\t{statistics.median(times) * 1e3:.3f}", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1:])
