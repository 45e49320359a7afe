"""Obviously-correct knockoff filter, e-BH and CPI loop (test-only), from MEASURES.md.

- The knockoff(+) threshold by brute force: every candidate t (each |W_j| > 0) is
  tried, the ratio counted with exact fractions, the smallest passing t kept.
- e-BH by trying every k from p down to 1.
- CPI deltas one row at a time, with the random stream of ``sapwood.importance.cpi``
  for the permutation sampler (per repeat, per feature: ``rng.permutation(n)``).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from sklearn.utils import check_random_state

__all__ = ["naive_cpi_deltas", "naive_ebh", "naive_threshold"]


def naive_threshold(W, fdr, offset):
    """min{t in {|W_j| > 0} : (offset + #{W_j <= -t}) / max(1, #{W_j >= t}) <= fdr}."""
    W = [float(w) for w in W]
    passing = []
    for t in {abs(w) for w in W if w != 0}:
        negatives = sum(1 for w in W if w <= -t)
        positives = sum(1 for w in W if w >= t)
        if Fraction(offset + negatives, max(1, positives)) <= Fraction(fdr):
            passing.append(t)
    return min(passing) if passing else float("inf")


def naive_ebh(evalues, fdr):
    """Sorted indices selected by e-BH: the largest k with k e-values >= p / (fdr k),
    those k."""
    p = len(evalues)
    for k in range(p, 0, -1):
        passing = [j for j in range(p) if evalues[j] >= p / (fdr * k)]
        if len(passing) >= k:
            return sorted(passing)
    return []


def naive_cpi_deltas(model, X, y, loss, n_repeats, random_state):
    """delta_ij = L(y_i, f(row i with column j from the permuted row)) - L(y_i, f(x_i)),
    averaged over repeats; one row predicted at a time. ``loss(y_true, prediction)``
    of one row."""
    X = np.asarray(X, dtype=np.float64)
    n, p = X.shape
    rng = check_random_state(random_state)
    deltas = np.zeros((p, n))
    for _ in range(n_repeats):
        for j in range(p):
            order = rng.permutation(n)
            for i in range(n):
                row = X[i].copy()
                original = loss(y[i], model.predict(row[None, :])[0])
                row[j] = X[order[i], j]
                deltas[j, i] += loss(y[i], model.predict(row[None, :])[0]) - original
    return deltas / n_repeats
