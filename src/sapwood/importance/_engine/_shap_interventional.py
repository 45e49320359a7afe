"""Interventional TreeSHAP: SHAP values against background data, of the raw output, the
probability or the loss.

For a row x and a background row z the value of a feature set S is the model's output on
the row taking S's features from x and the others from z; phi_i(x) is the mean over
the background rows of the Shapley values of that game (Lundberg et al. 2020,
doi:10.1038/s42256-019-0138-9, the "interventional" TreeSHAP the ``shap`` package runs
with background data). On the raw output (the margin of boosting, a forest's mean) the
values add up to ``raw(x) - mean_z raw(z)``.

A transformed output (``model_output="probability"`` through the logistic link,
``"log_loss"`` through the loss) is explained as the ``shap`` package explains it: the
raw values of each pair (x, z) are rescaled by ``(T(raw x) - T(raw z)) / (raw x - raw
z)`` (1 when the margins are equal), so that each pair's values add up to ``T(raw x) -
T(raw z)`` and the mean to ``T(raw x) - mean_z T(raw z)``, the expected value being
``mean_z T(raw z)`` (for the loss, with x's label: one per row).

The loss of a forest classifier (or a single tree) is the ``shap`` package's too: its
raw output, the class probabilities, goes column by column through the logistic loss
``log(1 + e^p) - y p`` as if each probability were a margin, with one number y per row
for every column (the label's class index, 0 .. k-1: what shap reads when the classes
are 0 .. k-1). Each column's pairs then carry their own weights, and margins a few
roundings apart count as equal (the same probability summed from other leaves).

How it is computed: :mod:`sapwood._kernels._shap_interventional` (the per-leaf
decomposition: at each leaf the background rows are grouped by which of the leaf's path
features they satisfy, the explained rows too, and each distinct pair of masks is
weighed once; per tree O(nodes (n + m)) for n explained and m background rows, plus per
leaf O(kinds x groups + n d), instead of the ``shap`` package's O(n m) pairs, each a
walk over the part of the tree the pair can reach). With a transform the pairs' weights
differ, and each row also sums, per leaf, the weights of the background rows that can
reach the leaf with it.
"""

from __future__ import annotations

import numpy as np
from joblib import Parallel, delayed

from ..._kernels._shap_interventional import interventional_tree, shapley_coefficients
from ..._progress import counted, progress_bar
from ._names import column_names
from ._result import ImportanceResult
from ._shap_output import explanation_extra
from ._shap_trees import explained_rows, shap_trees, tree_walks

__all__ = ["MODEL_OUTPUTS", "interventional_tree_shap"]

MODEL_OUTPUTS = ("raw", "probability", "log_loss")

# Objectives whose loss is the squared error (the ``shap`` package's "squared_loss"):
# XGBoost's and LightGBM's names, and scikit-learn's / sapwood's ``loss``.
_SQUARED_ERROR = ("reg:squarederror", "reg:linear", "regression", "regression_l2", "l2",
                  "mean_squared_error", "mse", "squared_error")
# Bytes of per-pair weights held at a time (explained rows x background rows).
_WEIGHTS_BUDGET = 64 * 2**20
# Leaves with at most this many distinct path features tell rows' masks apart with an
# array of 2^d slots (512 KiB at most), longer paths by sorting them.
_DENSE_FEATURES = 16
# Leaves may hold at most this many distinct path features (bit masks in an int64).
_MAX_PATH_FEATURES = 62


def interventional_tree_shap(model, ensemble, X, data, model_output, y, n_jobs,
                             progress) -> ImportanceResult:
    """:func:`~sapwood.importance.tree_shap` with ``feature_perturbation=
    "interventional"`` (its arguments, already validated; ``ensemble`` is the model
    read by :func:`sapwood.adapters.as_ensemble`)."""
    feature_names = column_names(X, model, ensemble.n_features)
    rows = explained_rows(X, ensemble, "X")
    background = explained_rows(data, ensemble, "data")
    transform = _transform(ensemble, model, model_output)
    labels = _labels(y, ensemble, transform, rows.shape[0])
    trees, walks, positive, negative = _tree_arrays(ensemble)
    n_columns = trees.n_columns
    if transform != "identity" and n_columns != 1 and ensemble.combine != "mean":
        raise ValueError(f"model_output={model_output!r} needs a model with one output "
                         f"column; this one has {n_columns}")
    # Each column rescaled by its own pairs' weights (a forest's class probabilities),
    # else one set of weights for every column.
    weight_columns = n_columns if transform != "identity" else 1
    margin_rows = ensemble.raw_predict(rows).reshape(rows.shape[0], -1)
    margin_background = ensemble.raw_predict(background).reshape(background.shape[0], -1)
    tie = _tie(ensemble, transform, margin_rows, margin_background)
    n_threads = max(1, min(n_jobs, rows.shape[0]))
    block = max(1, rows.shape[0] if transform == "identity" else
                _WEIGHTS_BUDGET // (8 * background.shape[0] * weight_columns))
    n_blocks = -(-rows.shape[0] // block)
    phi = np.zeros((rows.shape[0], ensemble.n_features, n_columns))
    with progress_bar(n_blocks * n_threads * len(ensemble.trees),
                      "Interventional TreeSHAP, trees x row blocks", progress) as steps:
        for lo in range(0, rows.shape[0], block):
            hi = min(lo + block, rows.shape[0])
            weights = np.stack([
                _pair_weights(transform, margin_rows[lo:hi, c], margin_background[:, c],
                              None if labels is None else labels[lo:hi], tie)
                for c in range(weight_columns)])
            phi[lo:hi] = _values(rows[lo:hi], background, weights, transform != "identity",
                                 trees, walks, positive, negative, n_threads, steps)
    expected = _expected_value(transform, margin_background, labels)
    magnitude = np.abs(phi).mean(axis=2).T  # (n_features, n_rows)
    squeeze = n_columns == 1
    if squeeze and transform not in ("logistic_nlogloss", "squared_loss"):
        expected = float(expected[0])
    extra = {"shap_values": phi[..., 0] if squeeze else phi, "expected_value": expected,
             **explanation_extra(ensemble, X, n_columns, transform)}
    return ImportanceResult.from_draws(
        magnitude, feature_names=feature_names, method="tree_shap",
        params={"interactions": False, "n_rows": int(rows.shape[0]),
                "feature_perturbation": "interventional", "model_output": model_output,
                "n_background": int(background.shape[0])}, extra=extra)


def _transform(ensemble, model, model_output):
    """The ``shap`` package's transform of the raw output for ``model_output``."""
    if model_output == "raw":
        return "identity"
    logistic = ensemble.combine == "sum" and ensemble.link == "logistic"
    forest_classifier = ensemble.combine == "mean" and ensemble.task == "classification"
    if model_output == "probability":
        if forest_classifier:
            return "identity"  # a forest's raw output is already its class probabilities
        if logistic:
            return "logistic"
        raise ValueError(
            "model_output='probability' needs a classifier whose raw output is "
            "probabilities (a forest or tree) or a margin through the logistic link (binary "
            f"boosting); this model has combine={ensemble.combine!r} and link="
            f"{ensemble.link!r} (a softmax's probabilities are not a per-class transform "
            "of each margin, which is all the pairwise rescaling can explain)")
    if logistic:
        return "logistic_nlogloss"
    if forest_classifier:
        if ensemble.classes is not None and isinstance(ensemble.classes[0], tuple):
            raise ValueError("model_output='log_loss' needs a single-output classifier (one "
                             "label per row); this forest predicts "
                             f"{len(ensemble.classes)} outputs")
        # The shap package's loss of a forest: the logistic loss of each class
        # probability, read as if it were a margin.
        return "logistic_nlogloss"
    objective = ensemble.kind.objective.split(" ")[0]
    if ensemble.combine == "sum" and ensemble.link == "identity" and (
            objective in _SQUARED_ERROR):
        return "squared_loss"
    raise ValueError(
        "model_output='log_loss' needs a classifier (boosting with the logistic link, a "
        "forest or tree classifier) or squared-error boosting (squared loss); this model "
        "has combine="
        f"{ensemble.combine!r}, link={ensemble.link!r}, objective {objective or 'unknown'!r}")


def _labels(y, ensemble, transform, n_rows):
    """``y`` as numbers for the loss: a classifier's label as its class's index (binary:
    1 for the positive class, 0 for the other), the target itself otherwise; None where
    no loss is explained."""
    if transform not in ("logistic_nlogloss", "squared_loss"):
        if y is not None:
            raise ValueError("y is used only with model_output='log_loss'; got y with "
                             "another model_output")
        return None
    if y is None:
        raise ValueError("model_output='log_loss' needs y, the labels of the rows of X")
    labels = np.asarray(y).ravel()
    if labels.shape[0] != n_rows:
        raise ValueError(f"y has {labels.shape[0]} entries but X has {n_rows} rows")
    classes = ensemble.classes
    if transform == "logistic_nlogloss" and ensemble.task == "classification" and (
            classes is not None):
        unknown = ~np.isin(labels, np.asarray(classes, dtype=object))
        if unknown.any():
            raise ValueError(f"y holds {labels[unknown][0]!r}, not one of the model's "
                             f"classes {list(classes)}")
        index = np.zeros(n_rows)
        for k, label in enumerate(classes[1:], start=1):
            index[labels == label] = k
        return index
    return labels.astype(np.float64)


def _apply(transform, margin, label):
    if transform == "logistic":
        return 1.0 / (1.0 + np.exp(-margin))
    if transform == "logistic_nlogloss":
        return np.logaddexp(0.0, margin) - label * margin
    if transform == "squared_loss":
        return (margin - label) ** 2
    return margin


def _tie(ensemble, transform, margin_rows, margin_background):
    """How far apart two margins may be and still count as equal in the rescaling.

    A forest's class probability is a mean of leaf fractions, and the same probability
    is often reached through different leaves; the order of the additions then splits
    some of these ties by a rounding, and the rescaling's quotient of two differences of
    a few ulps would be noise instead of the 1 of equal margins. Such margins are
    counted as equal: each carries at most about n_trees rounding errors of its size.
    Boosting's margins tie only through the same leaves (exactly equal sums): 0."""
    if transform == "identity" or ensemble.combine != "mean":
        return 0.0
    size = max(1.0, float(np.abs(margin_rows).max()), float(np.abs(margin_background).max()))
    return 4.0 * ensemble.n_trees * np.finfo(np.float64).eps * size


def _pair_weights(transform, margin_rows, margin_background, labels, tie=0.0):
    """Each pair's weight in one output column, (n_rows, m) / m: the rescaling (T(f(x)) -
    T(f(z))) / (f(x) - f(z)) (1 where the margins are equal, within ``tie``); for the
    identity every row's 1 / m, (1, m)."""
    m = margin_background.shape[0]
    if transform == "identity":
        return np.full((1, m), 1.0 / m)
    label = 0.0 if labels is None else labels[:, None]
    x = margin_rows[:, None]
    z = margin_background[None, :]
    difference = x - z
    equal = np.abs(difference) <= tie
    rise = _apply(transform, x, label) - _apply(transform, z, label)
    scale = np.where(equal, 1.0, rise / np.where(equal, 1.0, difference))
    return np.ascontiguousarray(scale / m)


def _expected_value(transform, margin_background, labels):
    """mean_z T(raw(z)) per column; for the loss, per row (with the row's label): (n_rows,)
    for one column, (n_rows, n_columns) for several."""
    if labels is not None:
        per_column = [_apply(transform, margin_background[None, :, c], labels[:, None])
                      .mean(axis=1) for c in range(margin_background.shape[1])]
        return per_column[0] if len(per_column) == 1 else np.stack(per_column, axis=1)
    return _apply(transform, margin_background, 0.0).mean(axis=0)


def _tree_arrays(ensemble):
    """The trees (:func:`shap_trees`), their walks (:func:`tree_walks`) and the Shapley
    coefficients up to the largest number of distinct features on a leaf's path."""
    trees = shap_trees(ensemble)
    walks = tree_walks(trees)
    largest = max(int(np.diff(walk[3]).max(initial=0)) for walk in walks)
    if largest > _MAX_PATH_FEATURES:
        raise ValueError(f"interventional TreeSHAP handles leaves with at most "
                         f"{_MAX_PATH_FEATURES} distinct features on their path; this model "
                         f"has one with {largest}")
    return trees, walks, *shapley_coefficients(largest)


def _values(rows, background, weights, per_row, trees, walks, positive, negative,
            n_threads, steps):
    """The rows' values (n_rows, n_features, n_columns), the rows split among threads
    (each row's numbers do not depend on the split); ``weights[c]`` the weights of
    output column c (a forest's, whose class columns each have their own), or
    ``weights[0]`` those of every column; ``per_row``: they hold each pair's weight,
    else one row of weights for all."""
    bounds = np.linspace(0, rows.shape[0], n_threads + 1).astype(np.intp)
    # One column's node values, for trees that each add to every column (a forest).
    column_values = ([np.ascontiguousarray(trees.values[:, c:c + 1])
                      for c in range(weights.shape[0])] if weights.shape[0] > 1 else [])

    def part(lo, hi):
        n_rows = hi - lo
        phi = np.zeros((n_rows, rows.shape[1], trees.n_columns))
        column_phi = [np.zeros((n_rows, rows.shape[1], 1)) for _ in column_values]
        w = weights[:, lo:hi] if per_row else weights
        arrays = (trees.children_left, trees.feature, trees.threshold, trees.operator,
                  trees.missing_go_to_left, trees.cat_bitsets)
        for t in counted(range(trees.roots.shape[0]), steps):
            # The walk less the leaves' zero fractions, which only path-dependent reads.
            if not column_values:
                interventional_tree(rows[lo:hi], background, w[0], per_row, *arrays,
                                    trees.values, trees.roots[t], trees.tree_column[t],
                                    *walks[t][:5], trees.max_depth, positive, negative,
                                    _DENSE_FEATURES, phi)
                continue
            for c, values in enumerate(column_values):
                interventional_tree(rows[lo:hi], background, w[c], per_row, *arrays, values,
                                    trees.roots[t], 0, *walks[t][:5], trees.max_depth,
                                    positive, negative, _DENSE_FEATURES, column_phi[c])
        for c, values_c in enumerate(column_phi):
            phi[..., c] = values_c[..., 0]
        return phi

    with Parallel(n_jobs=n_threads, prefer="threads") as parallel:
        parts = parallel(delayed(part)(lo, hi) for lo, hi in zip(bounds[:-1], bounds[1:],
                                                                strict=True))
    return np.concatenate(parts)
