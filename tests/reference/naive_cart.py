"""Slow, obviously correct CART: exhaustive split search and greedy growth in pure Python.

Used to check the Numba kernels on data where the best split is unique (no ties), so
the result does not depend on the order in which features are visited.
"""

import numpy as np


def impurity(y, w, criterion, n_classes=None):
    total = w.sum()
    if criterion in ("gini", "entropy"):
        p = np.array([w[y == k].sum() for k in range(n_classes)]) / total
        if criterion == "gini":
            return 1.0 - np.sum(p * p)
        p = p[p > 0]
        return -np.sum(p * np.log2(p))
    mean = np.sum(w * y) / total
    return np.sum(w * (y - mean) ** 2) / total


def best_split(X, y, w, criterion, n_classes=None, min_samples_leaf=1):
    """(feature, threshold, weighted impurity decrease) of the best split, or None."""
    n, d = X.shape
    parent = w.sum() * impurity(y, w, criterion, n_classes)
    best = None
    for j in range(d):
        values = np.unique(X[:, j])
        for a, b in zip(values[:-1], values[1:], strict=True):
            if b - a <= 1e-7:
                continue
            threshold = np.float64(a) / 2.0 + np.float64(b) / 2.0
            left = X[:, j] <= threshold
            if left.sum() < min_samples_leaf or (~left).sum() < min_samples_leaf:
                continue
            children = (w[left].sum() * impurity(y[left], w[left], criterion, n_classes)
                        + w[~left].sum() * impurity(y[~left], w[~left], criterion, n_classes))
            decrease = parent - children
            if best is None or decrease > best[2]:
                best = (j, threshold, decrease)
    return best


def grow(X, y, w, criterion, n_classes=None, max_depth=np.inf, depth=0):
    """A nested dict tree grown greedily to purity (or max_depth)."""
    node = {"n": len(y), "w": w.sum(), "impurity": impurity(y, w, criterion, n_classes)}
    split = None
    if depth < max_depth and len(y) >= 2 and node["impurity"] > np.finfo(float).eps:
        split = best_split(X, y, w, criterion, n_classes)
    if split is None:
        if criterion in ("gini", "entropy"):
            node["value"] = np.array([w[y == k].sum() for k in range(n_classes)]) / w.sum()
        else:
            node["value"] = np.array([np.sum(w * y) / w.sum()])
        return node
    j, threshold, _ = split
    left = X[:, j] <= threshold
    node.update(feature=j, threshold=threshold,
                left=grow(X[left], y[left], w[left], criterion, n_classes, max_depth, depth + 1),
                right=grow(X[~left], y[~left], w[~left], criterion, n_classes, max_depth,
                           depth + 1))
    return node


def predict(node, x):
    while "feature" in node:
        node = node["left"] if x[node["feature"]] <= node["threshold"] else node["right"]
    return node["value"]


def mdi(node, n_features):
    """Unnormalised impurity decrease per feature, summed over the tree, / root weight."""
    root_w = node["w"]
    out = np.zeros(n_features)

    def walk(n):
        if "feature" not in n:
            return
        out[n["feature"]] += (n["w"] * n["impurity"] - n["left"]["w"] * n["left"]["impurity"]
                              - n["right"]["w"] * n["right"]["impurity"])
        walk(n["left"])
        walk(n["right"])

    walk(node)
    return out / root_w
