"""Obviously-correct implementations of issue 5's measures (test-only).

Each follows docs/measures.md literally, with loops and no shared code with sapwood:

- drop-column importance (rfpimp's ``dropcol_importances`` loop, with the estimator's
  own ``random_state`` instead of rfpimp's fixed 999, and cross-validation folds);
- Janitza p-values (the null set written out element by element);
- Altmann p-values (refit on permuted labels, count);
- UFI / MDI-oob for gini and squared error, node by node from the rows that reach
  each node.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import clone

__all__ = ["naive_altmann", "naive_drop_column", "naive_janitza", "naive_ufi"]


def naive_drop_column(estimator, X, y, scorer, folds=None, X_test=None, y_test=None):
    """(importances of shape (n_features, n_folds), baseline per fold).

    ``X`` a float ndarray; ``folds`` a list of (train, test) index arrays, or None with
    held-out ``X_test`` / ``y_test``.
    """
    X = np.asarray(X)
    y = np.asarray(y)
    if folds is None:
        pairs = [(X, y, np.asarray(X_test), np.asarray(y_test))]
    else:
        pairs = [(X[train], y[train], X[test], y[test]) for train, test in folds]
    n_features = X.shape[1]
    importances = np.zeros((n_features, len(pairs)))
    baselines = np.zeros(len(pairs))
    for k, (X_fit, y_fit, X_eval, y_eval) in enumerate(pairs):
        full = clone(estimator).fit(X_fit, y_fit)
        baselines[k] = scorer(full, X_eval, y_eval)
        for j in range(n_features):
            keep = [c for c in range(n_features) if c != j]
            model = clone(estimator).fit(X_fit[:, keep], y_fit)
            importances[j, k] = baselines[k] - scorer(model, X_eval[:, keep], y_eval)
    return importances, baselines


def naive_janitza(importances):
    """p_j = #{m in M : m >= imp_j} / |M|, M = negatives, their mirrors and zeros."""
    null = []
    for value in importances:
        if value < 0:
            null.append(value)
            null.append(-value)
        elif value == 0:
            null.append(value)
    pvalues = []
    for value in importances:
        pvalues.append(sum(1 for m in null if m >= value) / len(null))
    return np.array(pvalues)


def naive_altmann(estimator, X, y, measure, n_permutations, random_state):
    """(observed, null of shape (n_features, S), p-values), permutations drawn as
    ``RandomState(random_state).permutation(n)`` S times in a row."""
    X = np.asarray(X)
    y = np.asarray(y)
    observed = measure(clone(estimator).fit(X, y), X, y)
    rng = np.random.RandomState(random_state)
    null = np.zeros((observed.shape[0], n_permutations))
    for s in range(n_permutations):
        y_permuted = y[rng.permutation(y.shape[0])]
        null[:, s] = measure(clone(estimator).fit(X, y_permuted), X, y_permuted)
    pvalues = np.array([(np.sum(null[j] >= observed[j]) + 1) / (n_permutations + 1)
                        for j in range(observed.shape[0])])
    return observed, null, pvalues


def naive_ufi(trees, X, y, inbag_counts, oob_rows, classification):
    """UFI, node by node, from the rows themselves (the authors' ``UFI_cls.py`` /
    ``UFI_regr.py`` loop): in-bag statistics from the in-bag rows repeated by their
    counts, out-of-sample statistics from ``oob_rows[t]``. ``trees`` are fitted
    scikit-learn trees; ``y`` class codes 0..K-1 or floats. Returns (n_features,
    n_trees) per-tree sums divided by the in-bag total."""
    X = np.asarray(X, dtype=np.float32)
    y = np.asarray(y)
    n_features = X.shape[1]
    per_tree = np.zeros((n_features, len(trees)))
    for t, tree in enumerate(trees):
        structure = tree.tree_
        X_in = np.repeat(X, inbag_counts[t], axis=0)
        y_in = np.repeat(y, inbag_counts[t], axis=0)
        path_in = tree.decision_path(X_in).toarray().astype(bool)
        X_out, y_out = X[oob_rows[t]], y[oob_rows[t]]
        path_out = tree.decision_path(X_out).toarray().astype(bool)
        n_nodes = structure.node_count
        impurity = np.zeros(n_nodes)
        weight = np.zeros(n_nodes)
        n_out = np.zeros(n_nodes, dtype=int)
        for i in range(n_nodes):
            inside = y_in[path_in[:, i]]
            outside = y_out[path_out[:, i]]
            weight[i] = inside.shape[0]
            n_out[i] = outside.shape[0]
            if outside.shape[0] == 0:
                continue
            if classification:
                n_classes = structure.value.shape[2]
                total = 1.0
                for k in range(n_classes):
                    total -= np.mean(inside == k) * np.mean(outside == k)
                impurity[i] = total
            else:
                in_mean = np.mean(inside)
                in_variance = np.mean((inside - in_mean) ** 2)
                impurity[i] = in_variance + np.mean((outside - in_mean) ** 2)
        for i in range(n_nodes):
            left, right = structure.children_left[i], structure.children_right[i]
            if left == -1 or n_out[left] == 0 or n_out[right] == 0:
                continue
            decrease = (weight[i] * impurity[i] - weight[left] * impurity[left]
                        - weight[right] * impurity[right])
            per_tree[structure.feature[i], t] += decrease / weight[0]
    return per_tree
