"""The one place where sapwood's Numba options live.

Every kernel is compiled with ``cache=True`` (first-call compile time is part of what a
user waits for, so it is paid once per machine) and ``nogil=True`` (parallel work goes
through joblib threads, which only overlap if the kernels release the GIL).
"""

import numba

__all__ = ["kernel"]


def kernel(function=None, **options):
    """``numba.njit`` with sapwood's options; usable bare or with extra options."""
    settings = {"cache": True, "nogil": True, "fastmath": False, "error_model": "numpy"}
    settings.update(options)
    if function is None:
        return lambda f: numba.njit(**settings)(f)
    return numba.njit(**settings)(function)
