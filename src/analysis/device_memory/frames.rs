//! Which frames are library code, how library frames are folded, and how an allocation site is named.

use super::Frame;

/// Whether a frame's file is library code rather than the user's own. The rule, on the path's
/// components (`/` or `\` separated, case-insensitive):
/// - installed packages: a `site-packages` or `dist-packages` component;
/// - JAX itself, even from a source checkout: a `jax` or `jaxlib` component;
/// - the Python standard library: a `pythonX.Y` component directly under `lib` (e.g.
///   `/usr/lib/python3.12/threading.py`), and frozen modules (`<frozen runpy>`).
///
/// Everything else, including an empty file name, counts as the user's code.
pub fn is_library_file(file: &str) -> bool {
    if file.starts_with("<frozen ") {
        return true;
    }
    let parts: Vec<String> = file.split(['/', '\\']).map(str::to_ascii_lowercase).collect();
    parts.iter().enumerate().any(|(i, p)| {
        matches!(p.as_str(), "site-packages" | "dist-packages" | "jax" | "jaxlib")
            || (i > 0 && parts[i - 1] == "lib" && i + 1 < parts.len() && is_python_dir(p))
    })
}

/// `python3.12`, `python3`, `python2.7`: the stdlib directory name.
fn is_python_dir(p: &str) -> bool {
    p.strip_prefix("python").is_some_and(|v| !v.is_empty() && v.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

/// Folds library frames of a root-first stack: each run of consecutive library frames is replaced
/// by its outermost frame, the library function the caller invoked (`jax.random.normal`, `jnp.tile`,
/// an operator such as `_operator_mul`). The dispatch machinery below it (pjit, pxla, the profiler
/// wrapper) is the same for every allocation and only hides what the user's line did. A stack of
/// library frames only keeps its outermost frame.
pub(super) fn fold(frames: Vec<Frame>) -> Vec<Frame> {
    let mut out: Vec<Frame> = Vec::with_capacity(frames.len());
    for f in frames {
        if !(f.library && out.last().is_some_and(|prev| prev.library)) {
            out.push(f);
        }
    }
    out
}

/// Names where a root-first stack allocated: the library call (if any), the innermost user
/// function and its file:line, e.g. `normal ← anotherfunc ← b2_pprof_docs_leak.py:20`. Works the
/// same on folded and full stacks, since the library call named is the outermost library frame
/// below the user's innermost frame.
pub fn site(frames: &[Frame]) -> String {
    let Some(leaf) = frames.last() else { return "(no stack)".to_string() };
    let (user, call) = match frames.iter().rposition(|f| !f.library) {
        Some(u) => (&frames[u], frames.get(u + 1)),
        None => (leaf, None),
    };
    let mut parts: Vec<&str> = call.map(|c| c.function.as_str()).into_iter().collect();
    parts.push(&user.function);
    let place = format!("{}:{}", basename(&user.file), user.line);
    parts.push(&place);
    parts.join(" ← ")
}

fn basename(file: &str) -> &str {
    file.rsplit(['/', '\\']).next().unwrap_or(file)
}
