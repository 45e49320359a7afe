"""Dask input, for the measures that take it (permutation importance and TreeSHAP): rows
that need not fit in memory, read a block of whole rows at a time on Dask's workers."""

from __future__ import annotations

__all__ = ["dask_rows", "is_dask_collection"]


def is_dask_collection(X) -> bool:
    """Whether ``X`` is a Dask collection (without importing Dask when it is not)."""
    return type(X).__module__.split(".")[0] in ("dask", "dask_expr")


def dask_rows(X):
    """A Dask DataFrame of numeric columns or a 2-D Dask array as a Dask array whose
    blocks hold whole rows."""
    # Dask is optional and heavy: imported only for Dask input.
    import dask.array as da

    if hasattr(X, "to_dask_array"):
        other = [str(c) for c, kind in X.dtypes.items() if kind.kind not in "biuf"]
        if other:
            raise ValueError(f"X must have numeric columns only; not numeric: {other}")
        blocks = X.to_dask_array(lengths=True)
    elif isinstance(X, da.Array):
        blocks = X
    else:
        raise TypeError(f"X must be a Dask DataFrame or array; got {type(X).__name__}")
    if blocks.ndim != 2:
        raise ValueError(f"X must be 2-D; got {blocks.ndim} dimensions")
    return blocks.rechunk({1: -1})
