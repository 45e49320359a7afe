"""Unbiased feature importance (UFI): impurity decrease re-measured on out-of-sample rows.

Zhou & Hooker (2021), doi:10.1145/3429445. MDI measures every split's impurity
decrease on the rows the split was chosen on, so a feature with many split points
gains importance even when it carries no signal. UFI keeps the tree's in-bag node
statistics but measures each node's impurity against rows the tree did not see: the
out-of-bag rows of a bagged forest, or held-out rows. For node i with in-bag weight
w_i (``weighted_n_node_samples``), in-bag class fractions p_ik or mean mu_i and
impurity I_i, and with the n'_i out-of-sample rows reaching i::

    gini:           H'(i) = 1 - sum_k p_ik p'_ik   (p'_ik: their class fractions)
    squared error:  H'(i) = I_i + (1/n'_i) sum_{rows r at i} (y_r - mu_i)^2
    decrease'(i)  = (w_i H'(i) - w_L H'(L) - w_R H'(R)) / w_root
    UFI_j         = (1/N) sum_trees sum_{splits i on j} decrease'(i)

A split whose children do not both receive out-of-sample rows contributes nothing
(as in the authors' code). The squared-error form is the authors' regression
version (``UFI_regr.py``: in-bag impurity plus out-of-sample error around the in-bag
mean). For gini this is also Li et al.'s MDI-oob idea (NeurIPS 2019,
arXiv:1906.10845) in the impurity form.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.utils import check_array

from .._format import LEAF
from ..adapters import as_ensemble
from ._engine._bagging import inbag_counter
from ._engine._names import column_names
from ._engine._ranks import TREES_ONLY, row_blocks
from ._engine._result import ImportanceResult
from ._engine._survival import refuse_survival

__all__ = ["ufi"]

_CRITERIA = {"classification": ("gini",), "regression": ("squared_error",)}


def ufi(model, X, y, *, held_out=None) -> ImportanceResult:
    """Unbiased feature importance (UFI, Zhou & Hooker 2021): MDI measured on
    out-of-bag or held-out rows.

    For every split node i of every tree, the impurity decrease is recomputed with the
    node impurities H' measured on rows the tree was not fit on [1]_::

        gini:           H'(i) = 1 - sum_k p_ik p'_ik
        squared error:  H'(i) = I_i + (1/n'_i) sum_{rows r at i} (y_r - mu_i)^2
        decrease'(i)  = (w_i H'(i) - w_L H'(L) - w_R H'(R)) / w_root
        UFI_j         = (1/N) sum_trees sum_{splits i on j} decrease'(i)

    with the in-bag weight w_i, class fractions p_ik, mean mu_i and impurity I_i that
    the tree stores, and p'_ik the class fractions of the n'_i out-of-sample rows
    reaching node i. A split where either child receives no out-of-sample row
    contributes 0. The numbers are not normalised and can be negative: a feature
    whose splits do not generalise gets about zero, unlike MDI, which rewards the
    many split points of an ID-like column [1]_ [2]_.

    Differences from the authors' scripts: both tasks divide by w_root (their
    classification script does not, which scales every importance by the number of
    bootstrap draws) and classes are not limited to two.

    Definition: docs/measures.md, section 'Unbiased feature importance (UFI)'.

    Parameters
    ----------
    model : fitted tree model
        A bagged forest (sapwood or scikit-learn ``RandomForest*`` / ``ExtraTrees*``
        with ``bootstrap=True``) whose out-of-bag rows are used, or with
        ``held_out=True`` any single-output model :func:`sapwood.adapters.as_ensemble`
        reads whose leaves are class fractions or means (forests, single trees).
        Classification trees must use ``criterion="gini"``, regression trees
        ``"squared_error"``.
    X : array-like of shape (n_samples, n_features)
        The training data of a bagged forest, or held-out data.
    y : array-like of shape (n_samples,)
    held_out : bool or None, default=None
        True: every row of (X, y) is out-of-sample for every tree. False: use each
        tree's out-of-bag rows of (X, y), the forest's training data. None: False for
        a bagged forest, else True.

    Returns
    -------
    ImportanceResult
        ``method="ufi"``; ``importances`` of shape (n_features, n_trees) (the
        per-tree sums), ``importances_mean`` = UFI, ``importances_std`` their std over
        trees (ddof=0); ``trace`` has one row per split node: tree, node, feature
        (name), w, impurity (H'), w_left, impurity_left, w_right, impurity_right,
        n_oob (out-of-sample rows reaching the node) and decrease (decrease'(i), 0
        where a child has no out-of-sample row); per tree and feature the decreases
        sum to ``importances``. ``rank_draws`` (n_features, n_samples): per-row draws
        whose mean is UFI, from each row's delete-one jackknife influence on the trees
        it is out of sample for; the rank intervals rest on them (the trees share their
        rows). ``extra["intervals"]`` says what the intervals cover.

    Raises
    ------
    ValueError
        For a criterion other than gini / squared error, boosted or multi-output
        models, or out-of-bag mode without bagging information.

    References
    ----------
    .. [1] Z. Zhou, G. Hooker, "Unbiased Measurement of Feature Importance in
       Tree-Based Methods", ACM Transactions on Knowledge Discovery from Data 15(2),
       26:1-26:21, 2021. doi:10.1145/3429445
    .. [2] X. Li, Y. Wang, S. Basu, K. Kumbier, B. Yu, "A Debiased MDI Feature
       Importance Measure for Random Forests", NeurIPS 2019. arXiv:1906.10845
    """
    ensemble = as_ensemble(model)
    refuse_survival(ensemble, "ufi")
    if ensemble.combine != "mean" or ensemble.trees[0].n_outputs != 1:
        raise ValueError("ufi needs a single-output forest or tree whose leaves "
                         "are class fractions or means; got a model with "
                         f"combine={ensemble.combine!r} and "
                         f"{ensemble.trees[0].n_outputs} outputs")
    task = ensemble.task
    criterion = getattr(model, "criterion", None)
    if criterion is not None and criterion not in _CRITERIA[task]:
        raise ValueError(f"ufi supports criterion {_CRITERIA[task]} for "
                         f"{task}; the model uses {criterion!r}")
    if held_out is None:
        held_out = not getattr(model, "bootstrap", False)
    feature_names = column_names(X, model, ensemble.n_features)
    X = np.ascontiguousarray(check_array(X, dtype=np.float32, ensure_all_finite="allow-nan"))
    if X.shape[1] != ensemble.n_features:
        raise ValueError(f"X has {X.shape[1]} features; the model was fit on "
                         f"{ensemble.n_features}")
    target = _targets(model, ensemble, y, X.shape[0])
    if held_out:
        def rows_of(t):
            return np.arange(X.shape[0])
    else:
        counts = inbag_counter(model)
        if X.shape[0] != model._n_samples:
            raise ValueError(f"X has {X.shape[0]} rows; the forest was fit on "
                             f"{model._n_samples}. Out-of-bag rows need the training data "
                             "(pass held_out=True for held-out rows).")

        def rows_of(t):
            return np.flatnonzero(counts(t) == 0)

    importances = np.zeros((ensemble.n_features, ensemble.n_trees))
    by_row = np.zeros((X.shape[0], ensemble.n_features))
    traces = []
    for t, tree in enumerate(ensemble.trees):
        rows = rows_of(t)
        node_impurity, n_rows, path = _node_impurity(tree, X[rows], target[rows], task)
        trace = _tree_decrease(tree, node_impurity, n_rows)
        np.add.at(importances[:, t], trace["feature"], trace["decrease"])
        trace["tree"] = t
        traces.append(trace)
        if rows.shape[0]:
            by_row[rows] += _row_influence(tree, path, target[rows], task, node_impurity,
                                           trace, ensemble.n_features) / rows.shape[0]
    trace = _trace_frame(traces)
    trace["feature"] = np.asarray(feature_names, dtype=object)[trace["feature"].to_numpy()]
    params = {"held_out": bool(held_out), "task": task, "n_trees": ensemble.n_trees}
    result = ImportanceResult.from_draws(importances, feature_names=feature_names,
                                         method="ufi", params=params, trace=trace)
    # Per-row draws D_jr = UFI_j + (n / N) sum_{t: r out of sample} IF_tj(r) / m_t.
    draws = result.importances_mean[:, None] + by_row.T * (X.shape[0] / ensemble.n_trees)
    intervals = {"ci": TREES_ONLY, "rank": "the {} rows (one draw per row: its jackknife "
                 "influence)".format("held-out" if held_out else "out-of-bag")}
    return result.replace(rank_draws=row_blocks(draws),
                          extra={**result.extra, "intervals": intervals})


def _targets(model, ensemble, y, n_samples):
    """Class codes (classification) or float targets, shape (n_samples,)."""
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1 or y.shape[0] != n_samples:
        raise ValueError(f"y must have shape ({n_samples},); got {y.shape}")
    if ensemble.task == "regression":
        return y.astype(np.float64)
    classes = np.asarray(ensemble.classes if ensemble.classes is not None
                         else model.classes_)
    codes = np.clip(np.searchsorted(classes, y), 0, len(classes) - 1)
    unknown = classes[codes] != y
    if unknown.any():
        raise ValueError(f"y contains labels the model was not fit on, e.g. "
                         f"{y[np.argmax(unknown)]!r}; classes are {classes.tolist()}")
    return codes


def _node_impurity(tree, X, target, task):
    """H'(i) for every node and the number of out-of-sample rows reaching it."""
    path = tree.decision_path(X).tocsc().astype(np.float64)
    n_rows = np.asarray(path.sum(axis=0)).ravel()
    reached = np.maximum(n_rows, 1.0)
    if task == "classification":
        n_classes = tree.value.shape[2]
        onehot = np.zeros((X.shape[0], n_classes))
        onehot[np.arange(X.shape[0]), target] = 1.0
        oob_fractions = np.asarray(path.T @ onehot) / reached[:, None]
        inbag = tree.value[:, 0, :]
        inbag_fractions = inbag / inbag.sum(axis=1, keepdims=True)
        impurity = 1.0 - np.sum(inbag_fractions * oob_fractions, axis=1)
    else:
        mean = tree.value[:, 0, 0]
        # sum_r (y_r - mu)^2 from per-node sums, without an (n_rows, n_nodes) matrix.
        total = path.T @ target
        total_squares = path.T @ (target * target)
        squared = np.maximum(total_squares - 2.0 * mean * total + n_rows * mean**2, 0.0)
        impurity = tree.impurity + squared / reached
    return impurity, n_rows, path


def _row_influence(tree, path, target, task, impurity, trace, n_features):
    """IF (m, n_features): each out-of-sample row's delete-one jackknife influence on the
    tree's UFI, (m - 1) (UFI_t - UFI_t without the row), centred over the tree's m rows.

    Deleting row r changes only the nodes on its path: H'(i) is a constant plus the
    mean, over the n'_i rows reaching node i, of h_i(r) = 1 - p_{i, y_r} (gini) or
    (y_r - mu_i)^2 (squared error), so without r it is H'(i) - (h_i(r) - mean h_i) /
    (n'_i - 1); and only the splits on its path, each through the child r reaches,
    which counts nothing when r was its only row. The jackknife rather than the
    first-order influence: most leaves hold one or two out-of-sample rows, where a row's
    first-order influence on the leaf's mean is zero or understated. The structure of
    the tree is fixed: it was grown on other rows."""
    path = path.tocoo()
    row, node = path.row, path.col
    # Each (row, non-root node c) on a path: the split p above c and c's sibling o.
    below = node != 0
    row, child = row[below], node[below]
    split = np.flatnonzero(tree.children_left != LEAF)
    parent = np.empty(tree.node_count, dtype=np.intp)
    parent[tree.children_left[split]] = split
    parent[tree.children_right[split]] = split
    above = parent[child]
    sibling = np.where(tree.children_left[above] == child, tree.children_right[above],
                       tree.children_left[above])
    n_rows = np.bincount(path.col, minlength=tree.node_count).astype(np.float64)
    mean = np.zeros(tree.node_count)
    for nodes in (above, child):  # mean h_i = H'(i) minus its constant
        mean[nodes] = impurity[nodes] - (tree.impurity[nodes] if task == "regression"
                                         else 0.0)

    def h(nodes):
        if task == "classification":
            inbag = tree.value[nodes, 0, :]
            return 1.0 - inbag[np.arange(nodes.shape[0]), target[row]] / inbag.sum(axis=1)
        return (target[row] - tree.value[nodes, 0, 0]) ** 2

    def without(nodes):  # H'(i) without the row (nodes with one row: unused)
        return impurity[nodes] - (h(nodes) - mean[nodes]) / np.maximum(n_rows[nodes] - 1, 1)

    w = tree.weighted_n_node_samples
    decrease = np.zeros(tree.node_count)
    decrease[trace["node"]] = trace["decrease"]
    new = (w[above] * without(above) - w[child] * without(child)
           - w[sibling] * impurity[sibling]) / w[0]
    new[(n_rows[child] == 1) | (n_rows[sibling] == 0)] = 0.0
    m = path.shape[0]
    influence = np.zeros((m, n_features))
    np.add.at(influence, (row, tree.feature[above]), (m - 1) * (decrease[above] - new))
    return influence - influence.mean(axis=0)


def _tree_decrease(tree, impurity, n_rows):
    split = np.flatnonzero(tree.children_left != LEAF)
    left, right = tree.children_left[split], tree.children_right[split]
    w = tree.weighted_n_node_samples
    decrease = (w[split] * impurity[split] - w[left] * impurity[left]
                - w[right] * impurity[right]) / w[0]
    decrease[(n_rows[left] == 0) | (n_rows[right] == 0)] = 0.0
    return {"node": split, "feature": tree.feature[split], "w": w[split],
            "impurity": impurity[split], "w_left": w[left], "impurity_left": impurity[left],
            "w_right": w[right], "impurity_right": impurity[right],
            "n_oob": n_rows[split].astype(np.intp), "decrease": decrease}


def _trace_frame(traces):
    columns = ["tree", "node", "feature", "w", "impurity", "w_left", "impurity_left",
               "w_right", "impurity_right", "n_oob", "decrease"]
    frames = [pd.DataFrame({name: np.broadcast_to(trace[name], trace["node"].shape)
                            for name in columns}) for trace in traces]
    return pd.concat(frames, ignore_index=True)
