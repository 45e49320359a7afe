"""The concordance index of a risk score over censored times, with each row's share.

A pair of rows (i, j) is comparable when i had an event and j was still under
observation after i's time: ``time[j] > time[i]``, or ``time[j] == time[i]`` with j
censored (scikit-survival's ``concordance_index_censored`` and Harrell's rule; two events
at one time are not comparable). It is concordant when i, the earlier event, has the
higher risk; risks within ``tied_tol`` count one half. The index is

    C = sum_pairs w_i [concordant] / sum_pairs w_i

with ``w_i`` the weight of the earlier row (1 for Harrell's index, the squared inverse
probability of censoring for Uno's). Each pair's weight and concordance are also
credited to both of its rows (``shares`` / ``weights``), the per-row sums the first-order
influence of the index is made of (:mod:`sapwood.importance._engine._survival_scores`).

Every comparable pair is visited once: O(n^2) time for n rows, O(n) memory.
"""

import numpy as np

from ._arrays import zeros
from ._numba import kernel

__all__ = ["concordance_pairs"]


@kernel
def concordance_pairs(time, event, estimate, weight, tied_tol):
    """``(numerator, denominator, shares, weights, n_pairs)``: the weighted sums of
    concordance and comparability over the comparable pairs (module docstring), each
    row's part of them (every pair counted at both of its rows) and the number of
    comparable pairs. ``order`` of the rows by time is the kernel's own."""
    n = time.shape[0]
    order = np.argsort(time, kind="mergesort")
    shares = zeros(n, np.float64)
    weights = zeros(n, np.float64)
    numerator = 0.0
    denominator = 0.0
    n_pairs = 0
    start = 0
    while start < n:
        now = time[order[start]]
        end = start + 1
        while end < n and time[order[end]] == now:
            end += 1
        for p in range(start, end):
            i = order[p]
            if not event[i]:
                continue
            w = weight[i]
            n_concordant = 0
            n_tied = 0
            n_compared = 0
            for q in range(start, n):
                j = order[q]
                if q < end and event[j]:
                    continue  # an event at the same time (or i itself)
                gap = estimate[j] - estimate[i]
                if abs(gap) <= tied_tol:
                    credit = 0.5
                    n_tied += 1
                elif gap < 0.0:
                    credit = 1.0
                    n_concordant += 1
                else:
                    credit = 0.0
                n_compared += 1
                shares[i] += w * credit
                shares[j] += w * credit
                weights[i] += w
                weights[j] += w
            # As scikit-survival adds them: counts times the weight, row by row.
            numerator += w * n_concordant + 0.5 * w * n_tied
            denominator += w * n_compared
            n_pairs += n_compared
        start = end
    return numerator, denominator, shares, weights, n_pairs
