"""TreeSHAP: exact Shapley values of a tree model's output, and their mean magnitude.

Lundberg, Erion & Lee (2018), "Consistent individualized feature attribution for tree
ensembles", arXiv:1802.03888 (Algorithm 2); Lundberg et al. (2020), "From local
explanations to global understanding with explainable AI for trees", Nature Machine
Intelligence 2, 56-67, doi:10.1038/s42256-019-0138-9.

Path-dependent TreeSHAP: for a row x the value of a feature set S is the tree's expected
output when the features in S take x's values and the others follow the training data
down the tree (each split sends them left and right in proportion to the children's
cover: training rows for scikit-learn and sapwood trees, the hessian sum for XGBoost
and LightGBM trees that carry ``cover``). phi_i is the Shapley value of feature i in
that game; summed over the trees (averaged for a forest) the values add up to the
model's raw output: ``expected_value + sum_i phi_i = raw(x)`` (probabilities for a
forest classifier, the margin for boosting). Interaction values split each phi_i into
phi_ii + sum_{j != i} phi_ij with phi_ij = phi_ji (Lundberg et al. 2020).

The global importance of feature i is mean_x |phi_i(x)| (averaged over the output
columns when there are several), as the ``shap`` package's bar plot shows it. Values
equal the ``shap`` package's ``TreeExplainer`` on the same model.
"""

from __future__ import annotations

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs
from sklearn.utils import check_array

from .._kernels._shap import shap_interactions, shap_values
from ..adapters import as_ensemble
from ._oob import _feature_names
from ._result import ImportanceResult

__all__ = ["tree_shap"]


def tree_shap(model, X, *, interactions=False, n_jobs=None) -> ImportanceResult:
    """SHAP values of every row of ``X`` and the mean absolute SHAP value per feature.

    Path-dependent TreeSHAP (Lundberg et al. 2018, doi:10.1038/s42256-019-0138-9 for
    the 2020 paper): exact Shapley values of the model's raw output, where a feature
    left out follows the training data down each tree in proportion to the nodes'
    cover. The values equal the ``shap`` package's ``TreeExplainer`` (default
    ``feature_perturbation``, no background data) on the same model.

    Parameters
    ----------
    model : fitted tree model or TreeEnsemble
        Anything :func:`sapwood.adapters.as_ensemble` reads: sapwood and scikit-learn
        trees, forests and boosting, XGBoost and LightGBM models.
    X : array-like or DataFrame of shape (n_rows, n_features)
        The rows to explain.
    interactions : bool, default=False
        Also compute SHAP interaction values (costs about 2 x the number of features
        each tree splits on times the plain values).
    n_jobs : int or None, default=None
        Threads (joblib; the rows are split among them). The values do not depend on it.

    Returns
    -------
    ImportanceResult
        ``method="tree_shap"``; ``importances_mean`` is mean |SHAP| over the rows,
        ``importances_std`` its standard deviation over the rows, ``importances`` the
        per-row |SHAP| (n_features, n_rows). ``extra`` holds ``"shap_values"`` (signed,
        (n_rows, n_features), with a last axis of output columns when the raw output
        has several, e.g. a forest classifier's class probabilities),
        ``"expected_value"`` (scalar, or one per column) and, with
        ``interactions=True``, ``"interaction_values"`` (n_rows, n_features,
        n_features[, n_columns]).

    Examples
    --------
    >>> from sklearn.datasets import make_regression
    >>> from sapwood import RandomForestRegressor
    >>> X, y = make_regression(n_samples=300, n_features=4, random_state=0)
    >>> forest = RandomForestRegressor(n_estimators=20, random_state=0).fit(X, y)
    >>> result = tree_shap(forest, X[:50])
    >>> phi = result.extra["shap_values"]
    >>> bool(abs(result.extra["expected_value"] + phi.sum(axis=1)
    ...          - forest.predict(X[:50])).max() < 1e-8)
    True
    """
    if not isinstance(interactions, bool | np.bool_):
        raise TypeError(f"interactions must be True or False; got {interactions!r}")
    ensemble = as_ensemble(model)
    feature_names = _feature_names(X, model, ensemble.n_features)
    rows = check_array(X, dtype=ensemble.input_dtype, ensure_all_finite="allow-nan")
    if rows.shape[1] != ensemble.n_features:
        raise ValueError(f"X has {rows.shape[1]} features; the model was fit on "
                         f"{ensemble.n_features}")
    rows = np.ascontiguousarray(rows, dtype=np.float64)
    tree_arrays = _tree_arrays(ensemble)
    n_columns = ensemble.base_score.shape[0] if ensemble.combine == "sum" else (
        tree_arrays[7].shape[1])
    kernel = shap_interactions if interactions else shap_values
    n_threads = max(1, min(effective_n_jobs(n_jobs), rows.shape[0]))
    bounds = np.linspace(0, rows.shape[0], 4 * n_threads + 1).astype(np.intp)
    parts = Parallel(n_jobs=n_threads, prefer="threads")(
        delayed(kernel)(rows[lo:hi], *tree_arrays, n_columns)
        for lo, hi in zip(bounds[:-1], bounds[1:], strict=True) if hi > lo)
    values = np.concatenate(parts) if parts else np.zeros(
        (0,) + (ensemble.n_features,) * (2 if interactions else 1) + (n_columns,))
    expected = _expected_value(ensemble, tree_arrays, n_columns)
    phi = values.sum(axis=2) if interactions else values
    magnitude = np.abs(phi).mean(axis=2).T  # (n_features, n_rows)
    squeeze = n_columns == 1
    extra = {"shap_values": phi[..., 0] if squeeze else phi,
             "expected_value": float(expected[0]) if squeeze else expected}
    if interactions:
        extra["interaction_values"] = values[..., 0] if squeeze else values
    return ImportanceResult(
        importances_mean=magnitude.mean(axis=1) if magnitude.shape[1] else
        np.zeros(ensemble.n_features),
        importances_std=magnitude.std(axis=1) if magnitude.shape[1] else
        np.zeros(ensemble.n_features),
        feature_names=feature_names, method="tree_shap",
        params={"interactions": interactions, "n_rows": int(rows.shape[0]),
                "feature_perturbation": "tree_path_dependent"},
        importances=magnitude, extra=extra)


def _tree_arrays(ensemble):
    """The kernel's view of the trees: packed routing arrays, each node's cover and its
    value scaled as the trees combine (a forest's mean: 1 / n_trees), the trees' roots,
    output columns and the depth of the deepest tree."""
    (children_left, children_right, feature, threshold, missing_go_to_left, operator,
     roots) = ensemble.packed()
    cover = np.concatenate([tree.weighted_n_node_samples if tree.cover is None
                            else tree.cover for tree in ensemble.trees])
    values, tree_column, _ = ensemble.node_outputs()
    if ensemble.combine == "mean":
        values = values / ensemble.n_trees
    max_depth = max(tree.max_depth for tree in ensemble.trees)
    return (children_left, children_right, feature, threshold, operator,
            missing_go_to_left, cover, values, roots, tree_column, max_depth)


def _expected_value(ensemble, tree_arrays, n_columns):
    """``base_score`` plus each tree's cover-weighted mean leaf value."""
    children_left, *_, cover, values, roots, tree_column, _ = tree_arrays
    expected = np.zeros(n_columns) + (ensemble.base_score if ensemble.combine == "sum"
                                      else ensemble.base_score[0])
    width = values.shape[1]
    ends = np.append(roots[1:], children_left.shape[0])
    for root, end, column in zip(roots, ends, tree_column, strict=True):
        leaf = children_left[root:end] == -1
        share = cover[root:end][leaf] / cover[root]
        expected[column:column + width] += share @ values[root:end][leaf]
    return expected
