"""Friedman's relative importance of the inputs of a gradient-boosted model.

Friedman (2001), "Greedy function approximation: a gradient boosting machine",
Annals of Statistics 29(5), Sec. 8.1, doi:10.1214/aos/1013203451. For one tree T
(Breiman et al. 1984)::

    J_j^2(T) = sum over internal nodes t splitting on j of i_t^2,
    i_t^2 = w_L w_R / (w_L + w_R) (mean_L - mean_R)^2,

the squared-error improvement of the split, with w the (weighted) number of training
rows in each child and mean the children's means of the pseudo-residuals the tree was
fitted to. Over an ensemble of M trees ``J_j^2 = (1/M) sum_m J_j^2(T_m)`` (with K
trees per stage, one per class, this is also Friedman's average of the per-class
``J_jk^2`` over the classes), and Friedman reports ``J_j = sqrt(J_j^2)``.

R's gbm (Ridgeway) reports ``relative.influence``: the sum of ``i_t^2`` over all trees,
without the square root; ``summary.gbm`` clips negatives to 0 and rescales to sum 100.

Boosted trees are squared-error regression trees on the pseudo-residuals, for which
``i_t^2 = w_t I_t - w_L I_L - w_R I_R`` (I = the node's weighted variance). sapwood
computes i_t^2 from the stored impurities because leaf *values* of boosted trees are
usually no longer residual means: log-loss, absolute-error, Huber and quantile boosting
replace them by the loss's line-search step, while impurities and weights stay those of
the fit. The trace also lists the mean-based formula where the stored values allow it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._format import LEAF
from ..adapters import as_ensemble
from ._engine._names import feature_names_of
from ._engine._result import ImportanceResult

__all__ = ["friedman_importance"]

_SCALES = ("sqrt", "relative_influence")


def friedman_importance(model, *, scale="sqrt", feature_names=None) -> ImportanceResult:
    """Friedman's (2001) importance of a boosted tree ensemble (``combine="sum"``).

    Definition: docs/measures.md, section 'Friedman relative importance of boosted trees'.

    Parameters
    ----------
    model : fitted sapwood or scikit-learn gradient boosting model, or TreeEnsemble
        Any model in the tree format whose trees are added up (``combine="sum"``) and
        carry node impurities (squared-error trees on pseudo-residuals).
    scale : {"sqrt", "relative_influence"}, default="sqrt"
        ``"sqrt"``: Friedman's ``J_j = sqrt((1/M) sum_m J_j^2(T_m))``.
        ``"relative_influence"``: R gbm's relative influence ``sum_m J_j^2(T_m)`` with
        negatives clipped to 0, normalised to sum 100 as ``summary.gbm`` prints it.
    feature_names : list of str, optional

    Returns
    -------
    ImportanceResult
        ``importances`` holds every tree's ``J_j^2(T_m)`` (n_features, n_trees);
        ``importances_std`` is zero (the measure is deterministic). ``extra`` has
        ``"J2"`` (the mean over trees), ``"relative_influence"`` (gbm's unscaled sum)
        and, for several trees per stage, ``"J2_per_output"`` (n_features, n_outputs).
        ``trace`` has one row per split node: tree, output, node, feature, w_left,
        w_right, mean_left, mean_right (stored child values; NaN for leaves whose
        value is not a residual mean) and improvement ``i_t^2``.
    """
    if scale not in _SCALES:
        raise ValueError(f"scale must be one of {_SCALES}, got {scale!r}")
    ensemble = as_ensemble(model)
    if ensemble.combine != "sum":
        raise ValueError("Friedman's importance is defined for boosted ensembles, whose "
                         f"trees are added up (combine='sum'); this model has "
                         f"combine={ensemble.combine!r}. Use sapwood.importance.mdi.")
    if not ensemble.kind.node_impurity or any(tree.impurity is None
                                              for tree in ensemble.trees):
        raise ValueError(f"{ensemble.kind.model or 'this model'} records no node "
                         "impurities, which "
                         "Friedman's importance needs; use "
                         "sapwood.importance.native_importance(model, 'gain')")
    names = feature_names_of(ensemble, feature_names)
    n_features, n_trees = ensemble.n_features, ensemble.n_trees
    per_tree = np.zeros((n_features, n_trees))
    outputs = (np.zeros(n_trees, dtype=np.intp) if ensemble.tree_output is None
               else np.asarray(ensemble.tree_output, dtype=np.intp))
    leaf_values_are_means = _leaf_values_are_means(ensemble.kind)
    rows = []
    for t, tree in enumerate(ensemble.trees):
        split = np.flatnonzero(tree.children_left != LEAF)
        left, right = tree.children_left[split], tree.children_right[split]
        w, impurity = tree.weighted_n_node_samples, tree.impurity
        improvement = w[split] * impurity[split] - w[left] * impurity[left] - (
            w[right] * impurity[right])
        for feature, value in zip(tree.feature[split], improvement, strict=True):
            per_tree[feature, t] += value
        values = tree.value[:, 0, 0].astype(np.float64)
        if not leaf_values_are_means:
            values = np.where(tree.children_left == LEAF, np.nan, values)
        rows.append(pd.DataFrame({
            "tree": t, "output": outputs[t], "node": split,
            "feature": np.asarray(names, dtype=object)[tree.feature[split]],
            "w_left": w[left], "w_right": w[right],
            "mean_left": values[left], "mean_right": values[right],
            "improvement": improvement,
        }))
    J2 = per_tree.mean(axis=1) if n_trees else np.zeros(n_features)
    influence = per_tree.sum(axis=1)
    extra = {"J2": J2, "relative_influence": influence}
    n_outputs = int(outputs.max()) + 1 if n_trees else 1
    if n_outputs > 1:
        extra["J2_per_output"] = np.column_stack(
            [per_tree[:, outputs == k].mean(axis=1) for k in range(n_outputs)])
    if scale == "sqrt":
        importances = np.sqrt(np.clip(J2, 0.0, None))
    else:
        clipped = np.clip(influence, 0.0, None)
        total = clipped.sum()
        importances = 100.0 * clipped / total if total > 0 else clipped
    trace = (pd.concat(rows, ignore_index=True) if rows else
             pd.DataFrame(columns=["tree", "output", "node", "feature", "w_left", "w_right",
                                   "mean_left", "mean_right", "improvement"]))
    return ImportanceResult(
        importances_mean=importances,
        importances_std=np.zeros(n_features),
        feature_names=names,
        method="friedman" if scale == "sqrt" else "relative_influence",
        params={"scale": scale, "n_trees": n_trees},
        importances=per_tree,
        trace=trace,
        extra=extra,
    )


def _leaf_values_are_means(kind):
    """Whether the leaves still hold residual means: sapwood's and scikit-learn's
    gradient boosting with squared-error loss (other losses replace the leaf values)."""
    return (kind.family == "boosting" and kind.library in ("sapwood", "sklearn")
            and kind.objective == "squared_error")
