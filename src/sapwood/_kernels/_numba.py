"""The one place where sapwood's Numba options live.

Every kernel is compiled with ``cache=True`` (first-call compile time is part of what a
user waits for, so it is paid once per machine) and ``nogil=True`` (parallel work goes
through joblib threads, which only overlap if the kernels release the GIL).
"""

import numba

__all__ = ["allocating_kernel", "kernel", "leaf_kernel"]


def kernel(function=None, **options):
    """``numba.njit`` with sapwood's options; usable bare or with extra options."""
    settings = {"cache": True, "nogil": True, "fastmath": False, "error_model": "numpy"}
    settings.update(options)
    if function is None:
        return lambda f: numba.njit(**settings)(f)
    return numba.njit(**settings)(function)


# Kernels that allocate nothing and return no array are compiled without Numba's
# reference counting (``_nrt=False``, an option Numba accepts and uses in its own tests;
# pyproject.toml caps numba at the versions tested with it): with it, every array a
# kernel receives, unpacks from a tuple or slices costs an atomic increment and
# decrement of its reference count, a third of the fit of a deep tree (D2, 160,000
# nodes; measured with perf). Such a kernel must not allocate (it cannot: compilation
# fails), must not return an array, and must only call kernels that return no array
# (the arrays it sees are owned by its callers). A kernel compiled from another
# inherits its caller's setting unless it sets its own, so the kernels that allocate
# and are called from leaf kernels say so explicitly.
leaf_kernel = kernel(_nrt=False)
allocating_kernel = kernel(_nrt=True)
