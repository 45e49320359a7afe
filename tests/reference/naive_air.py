"""Obviously-correct AIR (actual impurity reduction, Nembrini et al. 2018), test-only.

docs/measures.md literally, with loops and no code shared with sapwood: build the shadow
columns row by row from one permutation, fit a scikit-learn estimator on the 2p
columns, and walk every tree from its root, adding each split's weighted impurity
decrease to its column or subtracting it for a shadow column.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import clone

__all__ = ["naive_air"]


def naive_air(estimator, X, y, permutation):
    """(AIR per tree, shadow decrease per tree), both of shape (n_features, n_trees).

    ``estimator`` is a scikit-learn tree model with ``max_features`` and
    ``random_state`` already set as the forest should be grown; per tree the sums
    are divided by the root weight.
    """
    X = np.asarray(X, dtype=np.float32)
    n_samples, n_features = X.shape
    augmented = np.zeros((n_samples, 2 * n_features), dtype=np.float32)
    for i in range(n_samples):
        for j in range(n_features):
            augmented[i, j] = X[i, j]
            augmented[i, n_features + j] = X[permutation[i], j]
    model = clone(estimator).fit(augmented, y)
    trees = [model] if hasattr(model, "tree_") else list(np.ravel(model.estimators_))
    air = np.zeros((n_features, len(trees)))
    shadow = np.zeros((n_features, len(trees)))
    for t, fitted in enumerate(trees):
        structure = fitted.tree_
        w = structure.weighted_n_node_samples
        impurity = structure.impurity
        stack = [0]
        while stack:
            node = stack.pop()
            left, right = structure.children_left[node], structure.children_right[node]
            if left == -1:
                continue
            decrease = (w[node] * impurity[node] - w[left] * impurity[left]
                        - w[right] * impurity[right]) / w[0]
            column = structure.feature[node]
            if column < n_features:
                air[column, t] += decrease
            else:
                air[column - n_features, t] -= decrease
                shadow[column - n_features, t] += decrease
            stack.extend([left, right])
    return air, shadow
