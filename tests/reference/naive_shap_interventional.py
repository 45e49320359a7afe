"""Obviously-correct interventional SHAP values (test-only).

The definition, literally: for an explained row x and a background row z, the game's
value of a feature set S is the model's raw output on the row that takes S's features
from x and the others from z; the Shapley value of feature i is
sum over S not holding i of |S|! (p - |S| - 1)! / p! (v(S + i) - v(S)), every one of the
2^p subsets predicted. A transformed output T (the ``shap`` package's rule) rescales
each pair's values by (T(v(all)) - T(v(none))) / (v(all) - v(none)), 1 when the two are
equal; the result is the mean over the background rows. Exponential in the number of
features: tiny models only.
"""

from __future__ import annotations

from itertools import combinations
from math import factorial

import numpy as np

__all__ = ["naive_interventional_shap"]


def naive_interventional_shap(raw_predict, X, background, transform=None, labels=None):
    """Values (n_rows, n_features, n_columns) for ``raw_predict`` (rows -> (n, n_columns)
    raw outputs); ``transform(margin, label)`` optional, one column only."""
    X = np.asarray(X, dtype=np.float64)
    background = np.asarray(background, dtype=np.float64)
    n_rows, p = X.shape
    subsets = [frozenset(s) for k in range(p + 1) for s in combinations(range(p), k)]
    phi = None
    for r in range(n_rows):
        for z in background:
            hybrids = np.array([[X[r, j] if j in s else z[j] for j in range(p)]
                                for s in subsets])
            outputs = np.asarray(raw_predict(hybrids), dtype=np.float64).reshape(
                len(subsets), -1)
            value = dict(zip(subsets, outputs, strict=True))
            if phi is None:
                phi = np.zeros((n_rows, p, outputs.shape[1]))
            pair = np.zeros((p, outputs.shape[1]))
            for i in range(p):
                for s in subsets:
                    if i in s:
                        continue
                    weight = factorial(len(s)) * factorial(p - len(s) - 1) / factorial(p)
                    pair[i] += weight * (value[s | {i}] - value[s])
            if transform is not None:
                label = None if labels is None else labels[r]
                full, empty = value[frozenset(range(p))][0], value[frozenset()][0]
                scale = 1.0 if full == empty else (
                    (transform(full, label) - transform(empty, label)) / (full - empty))
                pair = pair * scale
            phi[r] += pair / background.shape[0]
    return phi
