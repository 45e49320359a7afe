"""Which measures' Numba kernels are in the on-disk cache already, read from one small
index file per measure (the kernel its record names): the command line's warm-up
compiles the others ahead in a second process, and :func:`compiled_first` orders the
measures so that the compiled ones run while the others compile."""

from __future__ import annotations

import importlib

from ._measures import MEASURES

__all__ = ["compiled_first", "probes", "uncompiled"]


def probes(methods=None) -> dict:
    """``name -> (module, kernel)`` for each measure of ``methods`` (default: every
    registered one) whose record names a kernel: the largest of its kernels, whose
    on-disk cache says whether the measure's kernels are compiled (they compile in the
    same calls)."""
    names = MEASURES if methods is None else methods
    return {name: tuple(MEASURES[name].kernel.rsplit(".", 1)) for name in names
            if name in MEASURES and MEASURES[name].kernel}


def uncompiled(methods) -> list[str]:
    """The measures of ``methods`` whose kernels are not in Numba's on-disk cache for
    this version of the kernels: reads one small index file per measure."""
    return [name for name, kernel in probes(methods).items() if not _cached(*kernel)]


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
