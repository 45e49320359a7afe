"""Rank intervals the slow, obvious way: every pair in a loop, the critical value
handed in (the simulation is tested apart), so the counting rule is checked alone."""

import numpy as np


def naive_rank_intervals(draws, critical):
    """(low, high, above) for draws (p, n): j above k when the mean of their differences
    over its standard error exceeds ``critical``, or, when the differences never vary,
    when they are positive."""
    draws = np.asarray(draws, dtype=float)
    p, n = draws.shape
    above = np.zeros((p, p), dtype=bool)
    for j in range(p):
        for k in range(p):
            if j == k:
                continue
            d = draws[j] - draws[k]
            spread = d.std(ddof=1)
            if spread <= 1e-12 * max(np.abs(draws[j]).max(), np.abs(draws[k]).max(), 1e-300):
                above[j, k] = d.mean() > 1e-12 * max(np.abs(draws[j]).max(),
                                                     np.abs(draws[k]).max())
            else:
                above[j, k] = d.mean() / (spread / np.sqrt(n)) > critical
    low = np.array([1 + sum(above[k, j] for k in range(p)) for j in range(p)])
    high = np.array([p - sum(above[j, k] for k in range(p)) for j in range(p)])
    return low, high, above
