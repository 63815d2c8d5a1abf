"""The installed `tidemark` command and the page this package carries: where they are, and the one call
the package makes of them (`tidemark bundle ... --json`)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sysconfig
from pathlib import Path
from typing import Optional, Sequence


class TidemarkError(Exception):
    """What Tidemark cannot do with the input, in one sentence. IPython prints it without a traceback
    (the stack would be this package's, which the user does not need)."""

    def _render_traceback_(self):
        return [f"tidemark: {self}"]


# `tidemark bundle`'s exit status for profiles over `--max-bytes` (src/bin/tidemark/bundle.rs).
TOO_LARGE = 3


def binary() -> str:
    """The `tidemark` executable installed with this package: the environment's scripts folder (a venv,
    a conda env, `pip install --user`), else the PATH."""
    name = "tidemark.exe" if os.name == "nt" else "tidemark"
    schemes = [None, f"{os.name}_user"]
    for scheme in schemes:
        try:
            folder = sysconfig.get_path("scripts", scheme) if scheme else sysconfig.get_path("scripts")
        except KeyError:
            continue
        candidate = Path(folder) / name
        if candidate.is_file():
            return str(candidate)
    found = shutil.which(name)
    if found:
        return found
    raise TidemarkError("the `tidemark` command that comes with this package is missing: reinstall it (pip install tidemark-*.whl)")


def page_dir() -> Path:
    """The built page (Trunk's output) carried in the wheel."""
    page = Path(__file__).parent / "page"
    if not all((page / wasm).is_file() for wasm in ("tidemark-web_bg.wasm", "tidemark-engine_bg.wasm")):
        raise TidemarkError(f"{page} holds no built page: this package was built without it (build the wheel with scripts/wheel.sh)")
    return page


def run_bundle(paths: Sequence[Path], out: Path, tool: Optional[str], slim: bool, max_bytes: Optional[int]) -> dict:
    """Writes the offline page of `paths` to `out` and returns `tidemark bundle --json`'s summary (its
    bytes, each profile's embedded and on-disk bytes) — or, where the profiles come to more than
    `max_bytes`, `{"error": "too_large", "bytes": ...}` and writes nothing."""
    command = [binary(), "bundle", *map(str, paths), "-o", str(out), "--dist", str(page_dir()), "--json"]
    if tool:
        command += ["--tool", tool]
    if slim:
        command.append("--slim")
    if max_bytes is not None:
        command += ["--max-bytes", str(int(max_bytes))]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode in (0, TOO_LARGE):
        return json.loads(done.stdout.strip().splitlines()[-1])
    said = [line for line in done.stderr.strip().splitlines() if not line.startswith("usage:")]
    reason = said[0] if said else f"tidemark bundle failed (exit status {done.returncode})"
    for prefix in ("tidemark bundle: ", "tidemark: "):
        reason = reason.removeprefix(prefix)
    raise TidemarkError(reason)
