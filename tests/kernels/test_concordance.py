"""The concordance kernel (two sweeps with Fenwick trees) against every pair visited in
Python (ties in time, in risk, censored rows at an event's time, weights); run with
bounds checking by ``make test-boundscheck``."""

import numpy as np
import pytest

from sapwood._kernels._concordance import concordance_pairs


def naive(time, event, risk, weight, tol):
    n = len(time)
    numerator = denominator = 0.0
    shares, weights, pairs = np.zeros(n), np.zeros(n), 0
    for i in range(n):
        if not event[i]:
            continue
        for j in range(n):
            if time[j] > time[i] or (time[j] == time[i] and not event[j]):
                gap = risk[j] - risk[i]
                credit = 0.5 if abs(gap) <= tol else float(gap < 0)
                numerator += weight[i] * credit
                denominator += weight[i]
                shares[[i, j]] += weight[i] * credit
                weights[[i, j]] += weight[i]
                pairs += 1
    return numerator, denominator, shares, weights, pairs


@pytest.mark.parametrize("seed", range(8))
def test_every_comparable_pair_is_counted_once_at_both_rows(seed):
    rng = np.random.default_rng(seed)
    n = 40
    time = rng.integers(1, 8, n).astype(np.float64)
    event = rng.random(n) < 0.6
    risk = np.round(rng.normal(size=n), 1)
    weight = rng.uniform(0.5, 2.0, n)
    ours = concordance_pairs(time, event, risk, weight, 1e-8)
    theirs = naive(time, event, risk, weight, 1e-8)
    assert ours[4] == theirs[4] and ours[4] > 0
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-12)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-12)
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-12)
    np.testing.assert_allclose(ours[3], theirs[3], rtol=1e-12)


def test_risks_at_the_tolerance_are_compared_as_every_pair_compares_them():
    """Risks a fraction of the tolerance apart (chains of near-ties, which are not
    transitive): the binary searches make the pair's own comparison."""
    rng = np.random.default_rng(7)
    n = 60
    time = rng.integers(1, 10, n).astype(np.float64)
    event = rng.random(n) < 0.5
    risk = 1.0 + rng.integers(0, 12, n) * 0.4e-8
    weight = np.ones(n)
    ours = concordance_pairs(time, event, risk, weight, 1e-8)
    theirs = naive(time, event, risk, weight, 1e-8)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_no_event_no_pair():
    time = np.arange(5.0)
    result = concordance_pairs(time, np.zeros(5, bool), time, np.ones(5), 1e-8)
    assert result[4] == 0 and result[1] == 0.0
