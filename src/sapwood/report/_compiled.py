"""Which measures' Numba kernels are in the on-disk cache already, read from one small
index file per measure: the command line's warm-up compiles the others ahead in a second
process, and :func:`compiled_first` orders the measures so that the compiled ones run
while the others compile."""

from __future__ import annotations

import importlib

__all__ = ["PROBES", "compiled_first", "uncompiled"]

# The largest kernel of each measure that has one: its on-disk cache says whether the
# measure's kernels are compiled (they compile in the same calls).
PROBES = {
    "permutation": ("sapwood._kernels._permutation", "reroute_packed"),
    "oob": ("sapwood._kernels._oob", "oob_tree_permutation_rows"),
    "ufi": ("sapwood._kernels._traverse", "decision_path_tree"),
    "conditional": ("sapwood._kernels._conditional", "conditional_tree_permutation"),
    "shap": ("sapwood._kernels._shap", "shap_tables"),
    "sage": ("sapwood._kernels._sage", "coalition_totals"),
}


def uncompiled(methods) -> list[str]:
    """The measures of ``methods`` whose kernels are not in Numba's on-disk cache for
    this version of the kernels: reads one small index file per measure."""
    return [name for name in methods if name in PROBES and not _cached(*PROBES[name])]


def _cached(module, name) -> bool:
    dispatcher = getattr(importlib.import_module(module), name)
    cache = getattr(dispatcher, "_cache", None)
    if cache is None or not hasattr(cache, "_cache_file"):  # no JIT, or no disk cache
        return True
    # Empty when the index is missing or was written for other kernel sources.
    return bool(cache._cache_file._load_index())


def compiled_first(names):
    """Yield ``names``, those whose kernels are compiled first. On a first run a
    measure whose kernels the second process has compiled meanwhile goes before those
    still compiling (looked up again before each; once all are compiled, in order)."""
    queue = list(names)
    waiting = uncompiled(queue)
    while queue:
        if waiting:
            waiting = uncompiled(queue)
            queue.sort(key=lambda name: name in waiting)
        yield queue.pop(0)
