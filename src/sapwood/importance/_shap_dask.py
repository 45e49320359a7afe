"""TreeSHAP on a Dask DataFrame or array: rows that need not fit in memory.

SHAP values are per row, so each block of rows is explained on its own (on Dask's
workers, with whatever scheduler is active) and only the per-feature summaries come
back: mean |SHAP| and its standard deviation over all rows, the same numbers as
:func:`~sapwood.importance.tree_shap` on the rows in memory up to the order of the
final sums. The values themselves stay a lazy Dask array to store or reduce further.
"""

from __future__ import annotations

import numpy as np

from ..adapters import as_ensemble
from ._oob import _feature_names
from ._result import ImportanceResult, t_interval

__all__ = ["dask_tree_shap", "is_dask_collection"]


def is_dask_collection(X) -> bool:
    """Whether ``X`` is a Dask collection (without importing Dask when it is not)."""
    return type(X).__module__.split(".")[0] in ("dask", "dask_expr")


def dask_tree_shap(model, X, interactions, n_jobs) -> ImportanceResult:
    """:func:`~sapwood.importance.tree_shap` for a Dask DataFrame or 2-D Dask array."""
    import dask
    import dask.array as da

    from ._shap import _expected_value, _shap_values, _tree_arrays

    ensemble = as_ensemble(model)
    if hasattr(X, "to_dask_array"):
        other = [str(c) for c, kind in X.dtypes.items() if kind.kind not in "biuf"]
        if other:
            raise ValueError(f"X must have numeric columns only; not numeric: {other}")
        feature_names = _feature_names(X, model, ensemble.n_features)
        blocks = X.to_dask_array(lengths=True)
    elif isinstance(X, da.Array):
        feature_names = _feature_names(X, model, ensemble.n_features)
        blocks = X
    else:
        raise TypeError(f"X must be a Dask DataFrame or array; got {type(X).__name__}")
    if blocks.ndim != 2 or blocks.shape[1] != ensemble.n_features:
        raise ValueError(f"X has {blocks.shape[1:]} features per row; the model was fit "
                         f"on {ensemble.n_features}")
    blocks = blocks.rechunk({1: -1})  # every block holds whole rows
    tree_arrays = _tree_arrays(ensemble)
    n_columns = ensemble.base_score.shape[0] if ensemble.combine == "sum" else (
        tree_arrays[7].shape[1])
    n_features = ensemble.n_features
    shape = (n_features,) * (2 if interactions else 1) + (n_columns,)

    def explain(block):
        rows = np.asarray(block, dtype=ensemble.input_dtype)
        if np.isinf(rows).any():
            raise ValueError("X holds infinite values")
        rows = np.ascontiguousarray(rows, dtype=np.float64)
        n_threads = max(1, min(n_jobs, rows.shape[0]))
        return _shap_values(rows, tree_arrays, n_columns, n_threads, interactions)

    values = blocks.map_blocks(explain, dtype=np.float64,
                               chunks=(blocks.chunks[0], *((size,) for size in shape)),
                               new_axis=list(range(2, 1 + len(shape))))
    phi = values.sum(axis=2) if interactions else values
    magnitude = abs(phi).mean(axis=2)  # (n_rows, n_features)
    n_rows = int(blocks.shape[0])
    mean, std, sample_std = dask.compute(magnitude.mean(axis=0), magnitude.std(axis=0),
                                         magnitude.std(axis=0, ddof=1 if n_rows > 1 else 0))
    ci_low, ci_high = (t_interval(mean, sample_std, n_rows) if n_rows > 1
                       else (np.full(n_features, np.nan), np.full(n_features, np.nan)))
    expected = _expected_value(ensemble, tree_arrays, n_columns)
    squeeze = n_columns == 1
    extra = {"shap_values": phi[..., 0] if squeeze else phi,
             "expected_value": float(expected[0]) if squeeze else expected}
    if interactions:
        extra["interaction_values"] = values[..., 0] if squeeze else values
    return ImportanceResult(
        importances_mean=np.asarray(mean, dtype=np.float64),
        importances_std=np.asarray(std, dtype=np.float64),
        feature_names=feature_names, method="tree_shap",
        params={"interactions": interactions, "n_rows": n_rows,
                "feature_perturbation": "tree_path_dependent", "dask": True},
        importances=None, ci_low=np.asarray(ci_low, dtype=np.float64),
        ci_high=np.asarray(ci_high, dtype=np.float64), extra=extra)
