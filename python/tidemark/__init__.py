"""Tidemark in a notebook: XProf's profiler tools on JAX and TensorFlow profiles, inline, offline.

    import tidemark
    with tidemark.trace("/tmp/tb"):          # jax.profiler.trace; shown when the block ends
        state = train_step(state, batch)
    tidemark.show("/tmp/tb", tool="memory-profile")

The page is the one the web app serves, carried in this package, with the profiles inside it: the
notebook needs no server and no network, and the saved notebook opens anywhere. The work is done by the
`tidemark` command this package installs (its `bundle` subcommand makes the page).
"""

from ._notebook import TidemarkError, bundle, open, show, trace

__all__ = ["TidemarkError", "bundle", "open", "show", "trace"]
