"""Tidemark's Memory Viewer vs XProf's converter on the same module of the same trace (issue 4 §5).

XProf: xprof.convert.raw_to_tool_data.xspace_to_tool_data([xplane], "memory_viewer", {module_name, ...})
in-process, as its web server calls it. Tidemark: the release CLI, `tidemark memory-viewer XPLANE --module M
--json`, as a subprocess — so ours also pays process start and reading the file.
Both end with XProf's memory_viewer JSON for that module. Medians of REPEAT runs; nothing is asserted.

usage: /tmp/xprof-venv/bin/python bench/xprof_memory_viewer.py [XPLANE[.gz] ...]
(needs Python 3.12 with `pip install xprof==2.24.2`, and `cargo build --release --bin tidemark`)
"""
import gzip, os, shutil, statistics, subprocess, sys, tempfile, time

from xprof.convert import raw_to_tool_data as r

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPEAT = int(os.environ.get("REPEAT", "5"))
TIDEMARK = os.environ.get("TIDEMARK_BIN", os.path.join(ROOT, "target/release/tidemark"))
DEFAULT = [
    ("tests/fixtures/jax/a2_mlp_train/a2_mlp_train.xplane.pb.gz", ["jit_train_step(14)", "jit_init_params(4)", "jit_batch(12)"]),
    ("tests/fixtures/jax/a1_docs_seed/a1_docs_seed.xplane.pb.gz", ["jit__normal(4)"]),
]


def median_ms(f):
    times = []
    for _ in range(REPEAT):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


def main():
    tmp = tempfile.mkdtemp()
    try:
        print("Per module: XProf converts the HloProto it extracted from the trace; Tidemark reads the same")
        print("extracted file. From the trace: XProf's tool listing (which extracts every module) plus the")
        print("conversion, against Tidemark decoding the whole trace and analysing the module.\n")
        print(f"{'module':<24} {'xprof_ms':>9} {'tidemark_ms':>12} {'ratio':>7} | {'from trace: xprof':>18} {'tidemark':>9} {'ratio':>7}")
        for rel, modules in DEFAULT:
            src = os.path.join(ROOT, rel)
            plain = os.path.join(tmp, os.path.basename(src)[: -len(".gz")])
            with gzip.open(src) as i, open(plain, "wb") as o:
                shutil.copyfileobj(i, o)
            extract = median_ms(lambda: r.xspace_to_tool_names([plain]))
            for m in modules:
                proto = os.path.join(tmp, f"{m}.hlo_proto.pb")
                convert = median_ms(lambda: r.xspace_to_tool_data([plain], "memory_viewer", {"use_saved_result": False, "memory_space": "0", "module_name": m}))
                ours = median_ms(lambda: subprocess.run([TIDEMARK, "memory-viewer", proto, "--json"], check=True, stdout=subprocess.DEVNULL))
                ours_trace = median_ms(lambda: subprocess.run([TIDEMARK, "memory-viewer", plain, "--module", m, "--json"], check=True, stdout=subprocess.DEVNULL))
                full = extract + convert
                print(f"{m:<24} {convert:>9.1f} {ours:>12.1f} {convert / ours:>6.1f}x | {full:>18.1f} {ours_trace:>9.1f} {full / ours_trace:>6.1f}x")
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    sys.exit(main())
