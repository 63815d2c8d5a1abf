"""The notebook package as a user meets it: the wheel (target/wheels/, from scripts/wheel.sh) installed
into a fresh venv with Jupyter's kernel and runner; its `tidemark` command and `python -m tidemark`; a
notebook executed by a real kernel (nbclient) that shows a real trace, a pprof series, and a path with no
profile; the executed notebook converted to HTML (nbconvert) at target/notebook/executed.html, which
tests/browser/notebook.test.mjs opens in headless Chromium.

Run by scripts/test.sh after scripts/wheel.sh. Exits non-zero, saying what failed, on any failure."""

import glob
import json
import re
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "target" / "notebook"
ENV = OUT / "venv"
FIXTURES = ROOT / "tests" / "fixtures"
TRACE = FIXTURES / "tf" / "d2_tf_cnn" / "d2_tf_cnn.xplane.pb.gz"
LEAK = FIXTURES / "pprof" / "docs_leak"


def run(*command, **kw):
    print("$", " ".join(map(str, command)), flush=True)
    return subprocess.run(list(map(str, command)), check=True, text=True, capture_output=True, **kw)


def main():
    wheels = glob.glob(str(ROOT / "target" / "wheels" / "tidemark-*.whl"))
    assert len(wheels) == 1, f"one wheel in target/wheels, found {wheels}: run scripts/wheel.sh first"
    OUT.mkdir(parents=True, exist_ok=True)
    venv.create(ENV, with_pip=True, clear=True)
    py = ENV / "bin" / "python"
    # JAX (CPU) for `tidemark.trace`, which records with jax.profiler.
    run(py, "-m", "pip", "install", "-q", wheels[0], "nbclient", "nbconvert", "nbformat", "ipykernel", "jax")

    # The CLI on the venv's PATH, and as `python -m tidemark`.
    help_text = run(ENV / "bin" / "tidemark", "--help").stdout
    assert "tidemark bundle" in help_text, help_text
    inspected = json.loads(run(py, "-m", "tidemark", "inspect", TRACE, "--json").stdout)
    assert json.dumps(inspected).count("d2_tf_cnn") >= 1, inspected

    # A notebook run by a real kernel of that venv.
    cells = [
        "import tidemark",
        f"tidemark.show({str(TRACE)!r}, tool='overview-page', height=640)",
        f"tidemark.show({str(LEAK)!r})",
        "tidemark.show('/no/such/profile.xplane.pb')",
        f"tidemark.show({str(ROOT / 'docs')!r})",
        f"tidemark.show({str(TRACE)!r}, max_mb=0.001)",
        "import tempfile, jax.numpy as jnp\n"
        "with tidemark.trace(tempfile.mkdtemp(), tool='trace-viewer'):\n"
        "    x = jnp.ones((256, 256))\n"
        "    (x @ x).block_until_ready()",
    ]
    script = f"""
import nbformat, nbclient
nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in {cells!r}])
nbclient.NotebookClient(nb, timeout=300, kernel_name="python3").execute()
nbformat.write(nb, {str(OUT / 'executed.ipynb')!r})
"""
    run(py, "-c", script, cwd=OUT)
    nb = json.loads((OUT / "executed.ipynb").read_text())
    outputs = [c["outputs"] for c in nb["cells"]]
    for i, out in enumerate(outputs):
        assert all(o["output_type"] != "error" for o in out), f"cell {i} raised: {out}"

    def html_of(i):
        (o,) = [o for o in outputs[i] if o["output_type"] == "display_data"]
        return "".join(o["data"]["text/html"])

    def text_of(i):
        (o,) = [o for o in outputs[i] if o["output_type"] == "display_data"]
        return "".join(o["data"]["text/plain"])

    for i in (1, 2, 6):
        assert 'data-testid="tidemark-output"' in html_of(i), f"cell {i} shows the page"
        assert "<iframe" in html_of(i) and "srcdoc=" in html_of(i)
    assert text_of(1).startswith("Tidemark · 1 profile (d2_tf_cnn.xplane.pb.gz)"), text_of(1)
    assert text_of(2).startswith("Tidemark · 9 profiles (memory1.prof, memory2.prof, memory3.prof and 6 more)"), text_of(2)
    # trace(): the run the block recorded, one host's trace, shown when the block ended.
    assert re.match(r"Tidemark · 1 profile \([^/ ]+\.xplane\.pb\)", text_of(6)), text_of(6)
    # Bad input: one sentence in the cell, no traceback.
    assert text_of(3) == "tidemark: /no/such/profile.xplane.pb: no such file or folder", text_of(3)
    assert text_of(4).startswith(f"tidemark: no profile in {ROOT / 'docs'}: Tidemark reads XProf traces"), text_of(4)
    assert 'data-testid="tidemark-error"' in html_of(4)
    assert "more than the 0.001 MB this notebook would embed" in text_of(5) and "their slim copy comes to" in text_of(5), text_of(5)
    # The profile goes into the notebook once per output, not per re-render: one page per shown cell.
    saved = (OUT / "executed.ipynb").read_text()
    assert saved.count('data-testid=\\"tidemark-output\\"') == 3, "each shown page is in the notebook once"

    run(py, "-m", "nbconvert", "--to", "html", OUT / "executed.ipynb", "--output", "executed", cwd=OUT)
    size = (OUT / "executed.html").stat().st_size
    print(f"notebook: executed.ipynb {len(saved) / 1e6:.1f} MB, executed.html {size / 1e6:.1f} MB", flush=True)


if __name__ == "__main__":
    try:
        main()
    except subprocess.CalledProcessError as e:
        sys.exit(f"failed: {e.cmd}\n{e.stdout}\n{e.stderr}")
