"""The concordance index of a risk score over censored times, with each row's share.

A pair of rows (i, j) is comparable when i had an event and j was still under
observation after i's time: ``time[j] > time[i]``, or ``time[j] == time[i]`` with j
censored (scikit-survival's ``concordance_index_censored`` and Harrell's rule; two events
at one time are not comparable). It is concordant when i, the earlier event, has the
higher risk; risks within ``tied_tol`` count one half (``|risk[j] - risk[i]| <=
tied_tol``, as scikit-survival compares them). The index is

    C = sum_pairs w_i [concordant] / sum_pairs w_i

with ``w_i`` the weight of the earlier row (1 for Harrell's index, the squared inverse
probability of censoring for Uno's). Each pair's weight and concordance are also
credited to both of its rows (``shares`` / ``weights``), the per-row sums the first-order
influence of the index is made of (:mod:`sapwood.importance._engine._survival_scores`).

No pair is visited: two sweeps over the rows by time, each with Fenwick trees over the
rows' places in the order of their risks, count them (O(n log n) for n rows, O(n)
memory). The first, from the latest time back, counts for each event the rows after it
below, within and above its risk; the second, from the earliest time on, sums for each
row the weights of the events before it above, within and below its risk. The
tolerance is applied by binary search on the sorted risks with the very comparison
above (``risk[j] - risk[i]`` against ``tied_tol``, monotone in either risk), so the
counts are those of comparing every pair (``tests/kernels/test_concordance.py``).
"""

import numpy as np

from ._arrays import empty, zeros
from ._numba import kernel

__all__ = ["concordance_pairs"]


@kernel
def _add(tree, place, value):
    """Add ``value`` at ``place`` (0-based) of the Fenwick tree ``tree``."""
    k = place + 1
    while k < tree.shape[0]:
        tree[k] += value
        k += k & -k


@kernel
def _before(tree, place):
    """The sum of the values at places ``0 .. place - 1``."""
    total = tree[0] * 0
    k = place
    while k > 0:
        total += tree[k]
        k -= k & -k
    return total


@kernel
def _first_not_below(ordered, risk, tied_tol):
    """The first place k of ``ordered`` (ascending) with ``ordered[k] - risk >=
    -tied_tol``: before it, the rows whose risk is below ``risk`` beyond the tolerance."""
    lo, hi = 0, ordered.shape[0]
    while lo < hi:
        mid = (lo + hi) // 2
        if ordered[mid] - risk < -tied_tol:
            lo = mid + 1
        else:
            hi = mid
    return lo


@kernel
def _first_above(ordered, risk, tied_tol):
    """The first place k of ``ordered`` with ``ordered[k] - risk > tied_tol``."""
    lo, hi = 0, ordered.shape[0]
    while lo < hi:
        mid = (lo + hi) // 2
        if ordered[mid] - risk <= tied_tol:
            lo = mid + 1
        else:
            hi = mid
    return lo


@kernel
def _first_concordant_later(ordered, risk, tied_tol):
    """The first place k of ``ordered`` with ``risk - ordered[k] < -tied_tol``: from it on,
    the earlier events whose risk is above ``risk`` (that of the later row) beyond the
    tolerance."""
    lo, hi = 0, ordered.shape[0]
    while lo < hi:
        mid = (lo + hi) // 2
        if risk - ordered[mid] < -tied_tol:
            hi = mid
        else:
            lo = mid + 1
    return lo


@kernel
def _first_tied_later(ordered, risk, tied_tol):
    """The first place k of ``ordered`` with ``risk - ordered[k] <= tied_tol``."""
    lo, hi = 0, ordered.shape[0]
    while lo < hi:
        mid = (lo + hi) // 2
        if risk - ordered[mid] <= tied_tol:
            hi = mid
        else:
            lo = mid + 1
    return lo


@kernel
def concordance_pairs(time, event, estimate, weight, tied_tol):
    """``(numerator, denominator, shares, weights, n_pairs)``: the weighted sums of
    concordance and comparability over the comparable pairs (module docstring), each
    row's part of them (every pair counted at both of its rows) and the number of
    comparable pairs."""
    n = time.shape[0]
    by_time = np.argsort(time, kind="mergesort")
    by_risk = np.argsort(estimate, kind="mergesort")
    ordered = estimate[by_risk]
    place = empty(n, np.intp)
    for k in range(n):
        place[by_risk[k]] = k
    shares = zeros(n, np.float64)
    weights = zeros(n, np.float64)
    numerator = 0.0
    denominator = 0.0
    n_pairs = 0
    # From the latest time back: each event against the rows observed after it.
    counts = zeros(n + 1, np.int64)
    n_after = 0
    end = n
    while end > 0:
        now = time[by_time[end - 1]]
        start = end - 1
        while start > 0 and time[by_time[start - 1]] == now:
            start -= 1
        for q in range(start, end):  # censored at this time: after its events
            j = by_time[q]
            if not event[j]:
                _add(counts, place[j], 1)
                n_after += 1
        for q in range(start, end):
            i = by_time[q]
            if not event[i]:
                continue
            below = _before(counts, _first_not_below(ordered, estimate[i], tied_tol))
            within = _before(counts, _first_above(ordered, estimate[i], tied_tol)) - below
            w = weight[i]
            # As scikit-survival adds them: counts times the weight, row by row.
            numerator += w * below + 0.5 * w * within
            denominator += w * n_after
            n_pairs += n_after
            shares[i] += w * below + 0.5 * w * within
            weights[i] += w * n_after
        for q in range(start, end):
            j = by_time[q]
            if event[j]:
                _add(counts, place[j], 1)
                n_after += 1
        end = start
    # From the earliest time on: each row against the events before it.
    sums = zeros(n + 1, np.float64)
    total = 0.0
    start = 0
    while start < n:
        now = time[by_time[start]]
        end = start + 1
        while end < n and time[by_time[end]] == now:
            end += 1
        for second in range(2):  # events (before this time's), then censored (with them)
            if second == 1:
                for q in range(start, end):
                    i = by_time[q]
                    if event[i]:
                        _add(sums, place[i], weight[i])
                        total += weight[i]
            for q in range(start, end):
                j = by_time[q]
                if event[j] == (second == 1):
                    continue
                # Differences of the tree's own sums: no pair in a range, exactly 0.
                whole = _before(sums, n)
                above = whole - _before(sums, _first_concordant_later(ordered, estimate[j],
                                                                     tied_tol))
                within = whole - _before(sums, _first_tied_later(ordered, estimate[j],
                                                                 tied_tol)) - above
                shares[j] += above + 0.5 * within
                weights[j] += total
        start = end
    return numerator, denominator, shares, weights, n_pairs
