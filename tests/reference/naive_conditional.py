"""Obviously-correct conditional permutation importance (test-only).

docs/measures.md and Strobl et al. (2008), literally, sharing no code with sapwood:

- the association test pair by pair with ``scipy.stats.pearsonr`` on complete rows,
  c = (n - 1) r^2 against chi2(1);
- per tree, the sorted distinct thresholds of the tree's splits on every conditioning
  feature it uses, a row's bin by ``searchsorted``, its cell as a tuple of bins (NaN a
  bin of its own) in a dict; on a feature with a categorical split (a set is no
  threshold), the bin is the tuple of the row's decisions at all the splits on it;
- within every cell, the cell's rows in row order read column j from the cell's rows
  in the order of the permutation the tree's random stream draws;
- a copy of the rows with column j replaced, every row routed from the root in Python,
  and the loss computed from scratch.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.stats import chi2, pearsonr
from sklearn.utils import check_random_state

from sapwood.adapters import as_ensemble
from tests.reference.naive_categorical import naive_goes_left

__all__ = ["naive_conditional_importance", "naive_conditioning"]


def naive_conditioning(X, threshold):
    """{j: sorted list of z} with 1 - p > threshold."""
    X = np.asarray(X, dtype=np.float64)
    n_features = X.shape[1]
    sets = {}
    for j in range(n_features):
        sets[j] = []
        for z in range(n_features):
            if z == j:
                continue
            both = ~np.isnan(X[:, j]) & ~np.isnan(X[:, z])
            a, b = X[both, j], X[both, z]
            if both.sum() < 2 or a.min() == a.max() or b.min() == b.max():
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = pearsonr(a, b).statistic
            p = chi2.sf((both.sum() - 1) * r * r, 1)
            if 1.0 - p > threshold:
                sets[j].append(z)
    return sets


def _route(tree, x):
    node = 0
    while tree.children_left[node] != -1:
        left = naive_goes_left(tree, node, x[tree.feature[node]])
        node = tree.children_left[node] if left else tree.children_right[node]
    return node


def _cells(tree, X_rows, conditioning_set):
    """One hashable cell label per row: the tuple of its bins on every feature of the
    conditioning set that the tree splits on."""
    internal = tree.children_left != -1
    labels = []
    columns = []
    for z in conditioning_set:
        at_z = internal & (tree.feature == z)
        if not at_z.any():
            continue
        le = np.unique(tree.threshold[at_z & (tree.operator == 0)])
        lt = np.unique(tree.threshold[at_z & (tree.operator == 1)])
        splits = np.flatnonzero(at_z) if (tree.operator[at_z] == 2).any() else None
        columns.append((z, le, lt, splits))
    for x in X_rows:
        label = []
        for z, le, lt, splits in columns:
            if np.isnan(x[z]):
                label.append(-1)
            elif splits is not None:
                label.append(tuple(naive_goes_left(tree, node, x[z]) for node in splits))
            else:
                # x goes right of a "<=" cut c when x > c, of a "<" cut when x >= c.
                label.append(int(np.searchsorted(le, x[z], side="left")
                                 + np.searchsorted(lt, x[z], side="right")))
        labels.append(tuple(label))
    return labels


def _within_cells(labels, pi):
    members = {}
    for k, label in enumerate(labels):
        members.setdefault(label, []).append(k)
    sources = {}
    for k in pi:
        sources.setdefault(labels[k], []).append(k)
    source_of = np.empty(len(labels), dtype=np.intp)
    for label, rows in members.items():
        for target, source in zip(rows, sources[label], strict=True):
            source_of[target] = source
    return source_of


def naive_conditional_importance(model, X, y, rows_per_tree, threshold=0.2, n_repeats=1,
                                 random_state=None):
    """Per-tree importances (n_features, n_trees) for averaging models, per-repeat ones
    (n_features, n_repeats) for boosted ones. ``rows_per_tree[t]``: tree t's
    evaluation rows; ``y`` class codes (classification) or values."""
    ensemble = as_ensemble(model)
    X = np.asarray(X, dtype=np.float32)
    y = np.asarray(y, dtype=np.float64)
    n_features = X.shape[1]
    sets = naive_conditioning(X, threshold)
    n_trees = ensemble.n_trees
    seeds = check_random_state(random_state).randint(np.iinfo(np.int32).max, size=n_trees)
    classification = ensemble.task == "classification"
    if ensemble.combine == "mean":
        per_tree = np.zeros((n_features, n_trees))
        for t, tree in enumerate(ensemble.trees):
            rows = rows_per_tree[t]
            rng = np.random.RandomState(seeds[t])
            X_rows, y_rows = X[rows], y[rows]
            for _ in range(n_repeats):
                for j in range(n_features):
                    pi = rng.permutation(len(rows))
                    if not len(rows) or not (tree.feature[tree.children_left != -1] == j).any():
                        continue
                    source_of = _within_cells(_cells(tree, X_rows, sets[j]), pi)
                    X_permuted = X_rows.copy()
                    X_permuted[:, j] = X_rows[source_of, j]
                    before = _tree_loss(ensemble, tree, X_rows, y_rows, classification)
                    after = _tree_loss(ensemble, tree, X_permuted, y_rows, classification)
                    per_tree[j, t] += (after - before) / n_repeats
        return per_tree
    per_repeat = np.zeros((n_features, n_repeats))
    permuted_X = {}
    for t, tree in enumerate(ensemble.trees):
        rng = np.random.RandomState(seeds[t])
        for r in range(n_repeats):
            for j in range(n_features):
                pi = rng.permutation(X.shape[0])
                source_of = _within_cells(_cells(tree, X, sets[j]), pi)
                X_permuted = X.copy()
                X_permuted[:, j] = X[source_of, j]
                permuted_X[t, r, j] = X_permuted
    before = _boosted_loss(ensemble, [X] * n_trees, y, classification)
    for r in range(n_repeats):
        for j in range(n_features):
            after = _boosted_loss(ensemble, [permuted_X[t, r, j] for t in range(n_trees)], y,
                                  classification)
            per_repeat[j, r] = after - before
    return per_repeat


def _tree_loss(ensemble, tree, X_rows, y_rows, classification):
    losses = []
    for x, target in zip(X_rows, y_rows, strict=True):
        value = tree.value[_route(tree, x), 0]
        if classification:
            losses.append(float(np.argmax(value) != target))
        else:
            prediction = value[0] + ensemble.base_score[0]
            losses.append((target - prediction) ** 2)
    return np.mean(losses)


def _boosted_loss(ensemble, X_per_tree, y, classification):
    n_columns = max(int(ensemble.tree_output.max()) + 1, ensemble.base_score.shape[0])
    losses = []
    for i, target in enumerate(y):
        margin = np.zeros(n_columns) + ensemble.base_score
        for t, tree in enumerate(ensemble.trees):
            leaf = _route(tree, X_per_tree[t][i])
            margin[ensemble.tree_output[t]] += ensemble.tree_weights[t] * tree.value[leaf, 0, 0]
        if classification:
            label = float(margin[0] > 0) if n_columns == 1 else float(np.argmax(margin))
            losses.append(float(label != target))
        elif ensemble.link == "exp":
            losses.append((target - np.exp(margin[0])) ** 2)
        else:
            losses.append((target - margin[0]) ** 2)
    return np.mean(losses)
