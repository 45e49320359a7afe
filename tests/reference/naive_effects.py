"""Naive references for sapwood.effects: every number straight from its definition,
through the model's own predictions on modified copies of the data."""

from __future__ import annotations

import numpy as np


def response(model, X):
    """The model's response as the effects read it: ``predict`` for a regression, the
    positive class's probability for a binary classifier, every class's for more."""
    if hasattr(model, "predict_proba"):
        proba = np.asarray(model.predict_proba(X))
        return proba[:, 1] if proba.shape[1] == 2 else proba
    return np.asarray(model.predict(X))


def ice(model, X, columns, points):
    """(n_points, n_rows, ...): the response of every row with ``columns`` set to each
    grid point, one prediction call per point."""
    out = []
    for point in points:
        modified = np.array(X, dtype=np.float64, copy=True)
        modified[:, columns] = point
        out.append(response(model, modified))
    return np.array(out)


def partial_dependence(model, X, columns, points):
    return ice(model, X, columns, points).mean(axis=1)


def h_statistics(model, X, pairs, features):
    """Friedman & Popescu's H^2 by definition: {pair: H2} and {feature: overall H2},
    numerators and denominators summed over the response's columns."""
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]

    def centred(values):
        values = values.reshape(n, -1)
        return values - values.mean(axis=0)

    def pd_at_rows(columns):
        # PD of ``columns`` at each row's own values: n predictions of n rows each.
        return centred(np.array([response(model, _with(X, columns, X[a, columns])).mean(axis=0)
                                 for a in range(n)]))

    single = {j: pd_at_rows([j]) for j in set(features) | {j for pair in pairs for j in pair}}
    out_pairs = {}
    for j, k in pairs:
        joint = pd_at_rows([j, k])
        numerator = ((joint - single[j] - single[k]) ** 2).sum()
        denominator = (joint ** 2).sum()
        out_pairs[(j, k)] = numerator / denominator if denominator > 0 else 0.0
    f = centred(response(model, X))
    out_features = {}
    for j in features:
        rest = [c for c in range(X.shape[1]) if c != j]
        others = centred(np.array([response(model, _with(X, rest, X[b, rest])).mean(axis=0)
                                   for b in range(n)]))
        numerator = ((f - single[j] - others) ** 2).sum()
        denominator = (f ** 2).sum()
        out_features[j] = numerator / denominator if denominator > 0 else 0.0
    return out_pairs, out_features


def _with(X, columns, values):
    modified = X.copy()
    modified[:, columns] = values
    return modified


def recursion(ensemble, columns, points):
    """Friedman's weighted traversal written out: per grid point, every tree's leaves
    reachable with the grid columns fixed, each weighted by the training-weight shares
    of the other splits; the trees' values summed with their weights (no base score),
    a forest's divided by its number of trees. (n_points, n_columns)."""
    out = []
    for point in points:
        sums = {}
        for t, tree in enumerate(ensemble.trees):
            column = int(ensemble.tree_output[t]) if ensemble.combine == "sum" else 0
            weight = ensemble.tree_weights[t]

            def walk(node, share, tree=tree, column=column, weight=weight, sums=sums,
                     point=point):
                if tree.children_left[node] == -1:
                    values = (tree.value[node, 0, :1] if ensemble.combine == "sum"
                              else tree.value[node].ravel())
                    for c, v in enumerate(values):
                        sums[column + c] = sums.get(column + c, 0.0) + share * weight * v
                    return
                f = tree.feature[node]
                left, right = tree.children_left[node], tree.children_right[node]
                if f in columns:
                    x = point[columns.index(f)]
                    goes_left = (x < tree.threshold[node] if tree.operator[node] == 1
                                 else x <= tree.threshold[node])
                    walk(left if goes_left else right, share)
                else:
                    w = tree.weighted_n_node_samples
                    walk(left, share * w[left] / w[node])
                    walk(right, share * w[right] / w[node])

            walk(0, 1.0)
        width = max(sums) + 1
        row = np.array([sums.get(c, 0.0) for c in range(width)])
        out.append(row / ensemble.n_trees if ensemble.combine == "mean" else row)
    return np.array(out)
