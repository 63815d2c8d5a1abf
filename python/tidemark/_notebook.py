"""`show`, `bundle`, `open` and `trace`: the page with the profiles in it, inline in a notebook, in a file,
or in the browser."""

from __future__ import annotations

import contextlib
import html
import tempfile
import webbrowser
from pathlib import Path
from typing import Iterator, List, Optional, Union

from ._cli import TidemarkError, run_bundle

PathLike = Union[str, "Path"]

# What `show` embeds at most by default: a saved notebook of a few hundred MB is one nobody can open
# or send. Over it, the slim copy (the lines the memory tools read) is tried, then the user is told.
DEFAULT_MAX_MB = 150.0

# Making the slim copy reads every profile; past this much on disk the user is told at once instead.
SLIM_READ_LIMIT_BYTES = 2_000_000_000


def _inputs(path: PathLike) -> List[Path]:
    p = Path(path).expanduser()
    if not p.exists():
        raise TidemarkError(f"{path}: no such file or folder")
    return [p]


def _megabytes(n: int) -> str:
    if n >= 1e9:
        return f"{n / 1e9:.1f} GB"
    return f"{n / 1e6:.1f} MB" if n >= 1e5 else f"{n / 1e3:.1f} kB"


def _write(path: PathLike, out: Path, tool: Optional[str], slim: Optional[bool], max_mb: Optional[float]) -> dict:
    """The page of `path` written to `out`, within `max_mb` of profiles: as they are, else (where `slim`
    is None) their slim copy; `tidemark bundle`'s summary."""
    paths = _inputs(path)
    max_bytes = None if max_mb is None else int(max_mb * 1e6)
    summary = run_bundle(paths, out, tool, bool(slim), max_bytes)
    if summary.get("error") == "too_large" and slim is None and summary["bytes"] <= SLIM_READ_LIMIT_BYTES:
        summary = run_bundle(paths, out, tool, True, max_bytes)
    if summary.get("error") == "too_large":
        what = "their slim copy comes" if summary["slim"] else "the profiles come"
        raise TidemarkError(
            f"{path}: {what} to {_megabytes(summary['bytes'])}, more than the {max_mb:g} MB this notebook would embed; "
            f"tidemark.open({str(path)!r}) shows them in the browser without embedding, or pass max_mb={summary['bytes'] / 1e6 + 1:.0f}"
        )
    return summary


def _caption(summary: dict) -> str:
    """One line above the page: what it holds and what it adds to the notebook."""
    profiles = summary["profiles"]
    names = ", ".join(p["name"] for p in profiles[:3]) + (f" and {len(profiles) - 3} more" if len(profiles) > 3 else "")
    slim = " (slim copy: the lines the memory tools read)" if summary["slim"] else ""
    return (
        f"Tidemark · {len(profiles)} profile{'s' if len(profiles) != 1 else ''} ({names}), "
        f"{_megabytes(summary['embedded_bytes'])} embedded{slim}; this output adds {_megabytes(summary['bytes'])} to the notebook"
    )


def _display(html_text: str, text: str) -> None:
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:
        get_ipython = None
    if get_ipython is None or get_ipython() is None:
        raise TidemarkError("show() draws in a notebook; outside one, tidemark.open(path) opens the page in the browser")
    display({"text/html": html_text, "text/plain": text}, raw=True)


def show(
    path: PathLike,
    tool: Optional[str] = None,
    *,
    height: int = 720,
    slim: Optional[bool] = None,
    max_mb: Optional[float] = DEFAULT_MAX_MB,
) -> None:
    """Shows the profiles at `path` (a trace, a run folder, a log dir, a `*.prof`, an HLO dump) inline,
    on `tool` (`overview-page`, `memory-profile`, `op-profile`, `trace-viewer`, ... — by default the tool
    the page lands on after a drop). The page and the profiles go into the cell's output once; nothing
    is written outside a temporary folder. Over `max_mb` of profiles the slim copy is embedded (unless
    `slim=False`), and over that the cell says so and what to do instead. A problem is said in the cell,
    in one sentence."""
    try:
        with tempfile.TemporaryDirectory(prefix="tidemark-") as tmp:
            out = Path(tmp) / "tidemark.html"
            summary = _write(path, out, tool, slim, max_mb)
            page = out.read_text(encoding="utf-8")
    except TidemarkError as e:
        message = f"tidemark: {e}"
        _display(f'<div class="tidemark-error" data-testid="tidemark-error" style="color:#b3261e">{html.escape(message)}</div>', message)
        return
    caption = _caption(summary)
    frame = (
        f'<div class="tidemark" data-testid="tidemark-output">'
        f'<div data-testid="tidemark-caption" style="font:12px sans-serif;color:#666;margin:2px 0">{html.escape(caption)}</div>'
        f'<iframe title="Tidemark" srcdoc="{html.escape(page, quote=True)}" '
        f'style="width:100%;height:{int(height)}px;border:1px solid #8884;border-radius:4px"></iframe></div>'
    )
    _display(frame, caption)


def bundle(path: PathLike, out: PathLike, tool: Optional[str] = None, *, slim: bool = False) -> Path:
    """Writes the offline page of the profiles at `path` to `out` (one HTML file that opens from disk,
    with no server and no network) and returns its path."""
    target = Path(out).expanduser()
    _write(path, target, tool, slim, None)
    return target


def open(path: PathLike, tool: Optional[str] = None, *, slim: bool = False) -> Path:
    """Opens the profiles at `path` in the default browser, through an offline page written to a
    temporary folder (returned); where no browser can be started, says where the page is."""
    target = Path(tempfile.mkdtemp(prefix="tidemark-")) / "tidemark.html"
    bundle(path, target, tool, slim=slim)
    if not webbrowser.open(target.as_uri()):
        raise TidemarkError(f"no browser could be started here; the page is at {target}: open it from disk, or use tidemark.show() in a notebook")
    return target


def _runs(logdir: Path) -> List[Path]:
    """The run folders TensorBoard's profile plugin reads under `logdir`, oldest first."""
    runs = logdir / "plugins" / "profile"
    return sorted(p for p in runs.iterdir() if p.is_dir()) if runs.is_dir() else []


def _recorder(logdir: Path, options: dict):
    """JAX's profiler where JAX is installed, else PyTorch's (whose traces Tidemark does not read yet)."""
    try:
        import jax  # noqa: F401
    except ImportError:
        pass
    else:
        import jax.profiler

        return jax.profiler.trace(str(logdir), **options)
    try:
        import torch.profiler
    except ImportError:
        raise TidemarkError("trace() records with JAX (jax.profiler.trace) or PyTorch (torch.profiler); neither is installed") from None
    return torch.profiler.profile(on_trace_ready=torch.profiler.tensorboard_trace_handler(str(logdir)), **options)


@contextlib.contextmanager
def trace(logdir: PathLike, tool: Optional[str] = None, *, show_result: bool = True, **options) -> Iterator[Path]:
    """Records the block with the framework's profiler into `logdir` (`options` go to it) and, when the
    block ends without an error, shows the run it recorded."""
    folder = Path(logdir).expanduser()
    before = set(_runs(folder))
    with _recorder(folder, options):
        yield folder
    if show_result:
        recorded = [r for r in _runs(folder) if r not in before]
        show(recorded[-1] if recorded else folder, tool)
