"""The importances XGBoost, LightGBM and scikit-learn report, recomputed from the trees.

For split node i on feature j with split gain g_i (XGBoost ``loss_chg``, LightGBM
``split_gain``) and hessian cover c_i (``sum_hessian``)::

    weight_j      = number of splits on j                   (XGBoost get_score)
    total_gain_j  = sum_i g_i,      gain_j  = total_gain_j / weight_j
    total_cover_j = sum_i c_i,      cover_j = total_cover_j / weight_j
    split_j       = number of splits on j with g_i > 0      (LightGBM feature_importance)
    gain_j        = sum of g_i > 0 over splits on j          (LightGBM, importance_type="gain")
    impurity_j    = mean decrease in impurity               (scikit-learn feature_importances_)
    prediction_values_change_j                              (CatBoost's default)
                  = 100 * PVC_j / sum_k PVC_k, PVC_j = sum over splits on j of
                    c_l (v_l - m)^2 + c_r (v_r - m)^2

where v_l, v_r are the two sides' values, c_l, c_r their covers and m their
cover-weighted mean. In an ordinary tree the two sides are a split node's children
(values: cover-weighted means of their leaves); in an oblivious tree (CatBoost's
default) every pair of leaves that differ only in that level's split, as CatBoost
computes it.

LightGBM's "gain" is a total, XGBoost's a mean: ``kind="gain"`` follows the library
recorded in the model's ``kind`` (XGBoost's definition when there is none).
Unused features get 0, where XGBoost's ``get_score`` leaves them out.

Chen & Guestrin (2016), "XGBoost: A Scalable Tree Boosting System", KDD,
doi:10.1145/2939672.2939785; Ke et al. (2017), "LightGBM: A Highly Efficient Gradient
Boosting Decision Tree", NeurIPS.
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd

from .._format import LEAF
from ..adapters import as_ensemble, from_model
from ._engine._names import feature_names_of
from ._engine._pipelines import pipeline_view, regrouped
from ._engine._result import ImportanceResult
from ._mdi import mdi

__all__ = ["native_importance", "NATIVE_KINDS"]

NATIVE_KINDS = ("impurity", "weight", "gain", "cover", "total_gain", "total_cover", "split",
                "prediction_values_change")
_DEFAULT_KIND = {"sklearn": "impurity", "xgboost": "gain", "lightgbm": "split",
                 "catboost": "prediction_values_change"}


def native_importance(model, kind=None, *, normalize=False, feature_names=None,
                      transformed=False) -> ImportanceResult:
    """A library's built-in importance, recomputed exactly from the model's trees.

    Definition: docs/measures.md, section 'Native importances of XGBoost, LightGBM
    and scikit-learn'.

    Parameters
    ----------
    model : fitted model, TreeEnsemble or model file
        Anything :func:`sapwood.adapters.as_ensemble` accepts. For an XGBoost model all
        trees count (as in ``get_score``), for LightGBM those up to the best iteration
        (as in ``feature_importance``).
    kind : {"impurity", "weight", "gain", "cover", "total_gain", "total_cover", "split", \
"prediction_values_change"}
        Default: the library's default (scikit-learn "impurity", XGBoost "gain",
        LightGBM "split", CatBoost "prediction_values_change", which like CatBoost's
        sums to 100); "total_gain" for scikit-learn's HistGradientBoosting, which has
        no ``feature_importances_`` but records split gains. scikit-learn's
        IsolationForest has none (a ValueError says so).
    normalize : bool, default False
        Divide by the total (when positive), as XGBoost's ``feature_importances_`` does.
        "impurity" is always normalised, as scikit-learn's is.
    feature_names : list of str, optional
    transformed : bool, default=False
        For a scikit-learn ``Pipeline`` (whose last step is a tree model): report the
        columns its last step reads instead of its input columns. By default each input
        column's importance is the sum over the derived columns it makes (a per-split
        average, XGBoost's "gain" and "cover", is the total over the count of their
        splits).

    Returns
    -------
    ImportanceResult
        ``method`` is ``"native_<kind>"``; ``trace`` has one row per split node (tree,
        node, feature, gain, cover) for the split-statistic kinds.
    """
    view = pipeline_view(model, feature_names=None if transformed else feature_names)
    if view is not None:
        derived = feature_names if transformed and feature_names is not None \
            else view.derived_names
        result = native_importance(view.final, kind, normalize=normalize,
                                   feature_names=derived)
        return result if transformed else regrouped(result, view)
    ensemble = _ensemble(model)
    library = ensemble.kind.library or None
    if kind is None:
        kind = _DEFAULT_KIND.get(library, "impurity")
        if kind == "impurity" and not ensemble.kind.node_impurity \
                and any(tree.has_gain for tree in ensemble.trees):
            # scikit-learn's HistGradientBoosting: no feature_importances_, but its
            # nodes record split gains.
            kind = "total_gain"
    if kind not in NATIVE_KINDS:
        raise ValueError(f"The 'kind' parameter of native_importance must be one of "
                         f"{', '.join(map(repr, NATIVE_KINDS))}. Got {kind!r} instead.")
    names = feature_names_of(ensemble, feature_names)
    params = {"kind": kind, "library": library, "normalize": normalize}
    if kind == "impurity":
        if not ensemble.kind.node_impurity and not any(t.has_gain or t.has_cover
                                                       for t in ensemble.trees):
            # scikit-learn's IsolationForest: grown on a random target, no
            # feature_importances_, nothing recorded per node.
            raise ValueError(f"a {ensemble.kind.model or library} model records neither "
                             "node impurities nor split gains: it has no native "
                             "importance; use tree_shap or permutation_importance")
        if not ensemble.kind.node_impurity:
            raise ValueError(f"a {ensemble.kind.model or library} model records no node "
                             "impurities; "
                             "use kind 'gain', 'total_gain', 'weight' or 'split'")
        result = mdi(ensemble, feature_names=names)
        return ImportanceResult(result.importances_mean, np.zeros(len(names)), names,
                                method="native_impurity", params=params, trace=result.trace)
    if kind == "prediction_values_change":
        values = _prediction_values_change(ensemble)
        if normalize and values.sum() > 0:
            values = values / values.sum()
        return ImportanceResult(values, np.zeros(len(names)), names,
                                method=f"native_{kind}", params=params)
    if library == "catboost":
        raise ValueError(f"CatBoost trees record no split gains, which kind {kind!r} needs; "
                         "use kind 'prediction_values_change' (CatBoost's default)")
    trace = _split_table(ensemble, names, needs_cover=kind in ("cover", "total_cover"))
    features = trace["feature_index"].to_numpy()
    n_features = ensemble.n_features
    gain = trace["gain"].to_numpy()
    if kind == "split" or (kind == "gain" and library == "lightgbm"):
        positive = gain > 0
        counts = np.bincount(features[positive], minlength=n_features).astype(np.float64)
        values = counts if kind == "split" else _ordered_sum(features[positive],
                                                             gain[positive], n_features)
    else:
        counts = np.bincount(features, minlength=n_features).astype(np.float64)
        column = "cover" if "cover" in kind else "gain"
        values = counts if kind == "weight" else _ordered_sum(
            features, trace[column].to_numpy(), n_features)
        if kind in ("gain", "cover"):
            values = np.divide(values, counts, out=np.zeros(n_features), where=counts > 0)
    if normalize and values.sum() > 0:
        values = values / values.sum()
    return ImportanceResult(values, np.zeros(n_features), names, method=f"native_{kind}",
                            params=params, trace=trace.drop(columns="feature_index"))


def _ensemble(model):
    from ..adapters import stopped_early

    # get_score counts every tree, also past an early-stopping best iteration (of an
    # XGBoost object, or of a saved XGBoost model, read to its best iteration).
    if type(model).__module__.partition(".")[0] == "xgboost" or (
            isinstance(model, str | os.PathLike) and stopped_early(model) is not None):
        return from_model(model, iteration_range=(0, 0))
    return as_ensemble(model)


def _prediction_values_change(ensemble):
    """CatBoost's PredictionValuesChange (module docstring), in percent."""
    # Where the trees came from: CatBoost's oblivious trees are read breadth first.
    oblivious = ensemble.kind.oblivious
    totals = np.zeros(ensemble.n_features)
    for t, tree in enumerate(ensemble.trees):
        if tree.cover is None:
            raise ValueError(f"tree {t} records no cover (node weights); "
                             "prediction_values_change needs them")
        value, cover = tree.value[:, 0, 0], tree.cover
        if oblivious:
            features, lo, hi = _oblivious_pairs(tree, t)
            value, cover = value[tree.is_leaf], cover[tree.is_leaf]
        else:
            split = np.flatnonzero(~tree.is_leaf)
            features, lo, hi = tree.feature[split], tree.children_left[split], \
                tree.children_right[split]
        total = cover[lo] + cover[hi]
        mean = np.divide(cover[lo] * value[lo] + cover[hi] * value[hi], total,
                         out=np.zeros(total.shape), where=total > 0)
        change = cover[lo] * (value[lo] - mean) ** 2 + cover[hi] * (value[hi] - mean) ** 2
        totals += np.bincount(features, weights=change, minlength=ensemble.n_features)
    total = totals.sum()
    return 100.0 * totals / total if total > 0 else totals


def _oblivious_pairs(tree, t):
    """For every level's split of a breadth-first oblivious tree: its feature and the
    pairs of leaves (indices among the leaves, left to right) differing only there."""
    depth = tree.max_depth
    n_internal = (1 << depth) - 1
    ids = np.arange(n_internal)
    level = np.repeat(np.arange(depth), 1 << np.arange(depth))
    first = (1 << level) - 1
    # A one-hot level sends its equal side (node 2i + 2, bit 1) left: either child order.
    lower = np.minimum(tree.children_left[ids], tree.children_right[ids])
    if tree.node_count != 2 * n_internal + 1 or (lower != 2 * ids + 1).any() \
            or (tree.feature[ids] != tree.feature[first]).any() \
            or (tree.threshold[ids] != tree.threshold[first]).any():
        raise ValueError(f"tree {t} is not an oblivious tree read from CatBoost")
    leaves = np.arange(1 << depth)
    features, lo, hi = [np.zeros(0, np.intp)], [np.zeros(0, np.intp)], [np.zeros(0, np.intp)]
    for d in range(depth):
        bit = 1 << (depth - 1 - d)
        low = leaves[(leaves & bit) == 0]
        features.append(np.full(low.size, tree.feature[(1 << d) - 1]))
        lo.append(low)
        hi.append(low | bit)
    return (np.concatenate(features), np.concatenate(lo), np.concatenate(hi))


def _split_table(ensemble, names, needs_cover):
    rows = []
    some_gains = any(tree.has_gain for tree in ensemble.trees)
    for t, tree in enumerate(ensemble.trees):
        if some_gains and not tree.has_gain:
            # An XGBoost vector-leaf tree's copy for a later output: its splits count
            # once, with the first output's copy, which holds their statistics.
            continue
        split = np.flatnonzero(tree.children_left != LEAF)
        if split.size and tree.gain is None:
            raise ValueError(f"tree {t} records no split gains; native gain / split "
                             "importances need a boosting library's model")
        if split.size and needs_cover and tree.cover is None:
            raise ValueError(f"tree {t} records no cover (hessian sums)")
        rows.append(pd.DataFrame({
            "tree": t, "node": split, "feature_index": tree.feature[split],
            "gain": np.zeros(split.size) if tree.gain is None else tree.gain[split],
            "cover": np.full(split.size, np.nan) if tree.cover is None else tree.cover[split],
        }))
    table = pd.concat(rows, ignore_index=True)
    table.insert(2, "feature", np.asarray(names, dtype=object)[table["feature_index"]])
    return table


def _ordered_sum(features, values, n_features):
    totals = np.zeros(n_features)
    # Tree then node order, one addition at a time, as the libraries accumulate.
    for feature, value in zip(features, values, strict=True):
        totals[feature] += value
    return totals
