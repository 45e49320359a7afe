"""Simultaneous rank intervals: the counting rule against a naive loop, the exact cases,
and coverage by simulation with known true importances."""

import numpy as np
import pytest
from scipy import stats

from sapwood import RandomForestClassifier
from sapwood.importance import ImportanceResult, permutation_importance
from sapwood.importance._engine._ranks import rank_intervals
from tests.reference.naive_ranks import naive_rank_intervals


def true_rank_sets(means):
    """For each feature, the ranks it can take in the truth (a range when tied)."""
    means = np.asarray(means)
    better = (means[None, :] > means[:, None]).sum(axis=1)
    same = (means[None, :] == means[:, None]).sum(axis=1)
    return better + 1, better + same


def covered(intervals, means) -> bool:
    """All features at once: each interval meets the ranks its true value allows."""
    first, last = true_rank_sets(means)
    return bool(np.all((intervals.low <= last) & (intervals.high >= first)))


@pytest.mark.parametrize("n", [4, 12, 80])
def test_counting_rule_equals_the_naive_loop(n):
    rng = np.random.default_rng(n)
    draws = rng.normal(size=(7, 1)) + 0.5 * rng.normal(size=(7, n))
    draws[5] = draws[6] + 0.3  # an exact, constant difference
    result = rank_intervals(draws)
    low, high, above = naive_rank_intervals(draws, result.critical_value)
    np.testing.assert_array_equal(result.low, low)
    np.testing.assert_array_equal(result.high, high)
    np.testing.assert_array_equal(result.above, above)


def test_exact_cases():
    # Draws that differ by the same amount every time: certain order.
    certain = rank_intervals(np.array([[3.0] * 5, [2.0] * 5, [1.0] * 5]))
    assert list(certain.low) == [1, 2, 3] and list(certain.high) == [1, 2, 3]
    # Identical features (e.g. never used: all zero) span their shared places.
    tied = rank_intervals(np.zeros((3, 5)))
    assert list(tied.low) == [1, 1, 1] and list(tied.high) == [3, 3, 3]
    assert not tied.above.any()
    # Far apart but noisy: still certain.
    rng = np.random.default_rng(0)
    apart = rank_intervals(np.array([[10.0], [5.0], [0.0]]) + rng.normal(size=(3, 30)))
    assert list(apart.low) == list(apart.high) == [1, 2, 3]


def test_missing_values_and_too_few_draws():
    draws = np.array([[1.0, 1.1, 0.9], [np.nan, 0.0, 0.0], [0.0, 0.1, -0.1]])
    result = rank_intervals(draws)
    assert result.low[1] == -1 and result.high[1] == -1
    assert list(result.low[[0, 2]]) == [1, 2] and list(result.high[[0, 2]]) == [1, 2]
    assert rank_intervals(np.ones((3, 1))) is None
    frame = ImportanceResult(importances_mean=[1.0, 0.5], importances_std=[0.0, 0.0],
                             feature_names=["a", "b"], method="mdi").to_frame()
    assert frame["rank_low"].isna().all() and frame["rank_high"].isna().all()


def test_critical_value_is_the_t_quantile_for_one_pair():
    # Two features: the max over one pair is |t| with n - 1 degrees of freedom.
    rng = np.random.default_rng(1)
    for n in (5, 10):
        c = rank_intervals(rng.normal(size=(2, n))).critical_value
        assert c == pytest.approx(stats.t.ppf(0.975, n - 1), rel=0.12)
    c = rank_intervals(rng.normal(size=(2, 500))).critical_value
    assert c == pytest.approx(stats.norm.ppf(0.975), rel=0.08)


def simulate(means, n, reps, seed, correlated=0.0):
    rng = np.random.default_rng(seed)
    means = np.asarray(means, dtype=float)
    hits, exact = 0, 0
    for _ in range(reps):
        noise = rng.normal(size=(len(means), n)) + correlated * rng.normal(size=(1, n))
        draws = means[:, None] + noise
        result = rank_intervals(draws)
        hits += covered(result, means)
        exact += result.low[0] == result.high[0] == 1
    return hits / reps, exact / reps


@pytest.mark.parametrize("n, correlated", [(5, 0.0), (5, 2.0), (30, 0.0), (200, 1.0)])
def test_simultaneous_coverage(n, correlated):
    # Clearly first, a tied pair, a near tie and a tail of equal zeros (unused
    # features). 150 replications: with true coverage 0.95 the chance of seeing fewer
    # than 134 covered (0.893) is below 0.1% (binomial), so the bound is safe.
    means = [8.0, 3.0, 3.0, 2.6, 1.0, 0.0, 0.0, 0.0]
    rate, first_exact = simulate(means, n, reps=150, seed=n)
    assert rate >= 0.9
    if n >= 30:
        # Not trivially wide: the clear leader is pinned to rank 1.
        assert first_exact >= 0.9


@pytest.mark.slow
def test_simultaneous_coverage_large():
    rng = np.random.default_rng(7)
    means = np.round(rng.normal(size=20), 1)
    for n in (5, 15, 100):
        rate, _ = simulate(means, n, reps=1000, seed=n, correlated=0.5)
        # 1000 replications: below 0.935 has probability < 2% at a true 0.95.
        assert rate >= 0.935


def test_to_frame_of_a_real_measure_contains_the_ranks():
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(400, 4))
    y = (X[:, 0] + 0.3 * X[:, 1] > 0.7).astype(int)
    forest = RandomForestClassifier(n_estimators=30, random_state=0).fit(X[:300], y[:300])
    result = permutation_importance(forest, X[300:], y[300:], n_repeats=10, random_state=0)
    frame = result.to_frame()
    assert list(frame.columns[-3:]) == ["rank", "rank_low", "rank_high"]
    assert (frame["rank_low"] <= frame["rank"]).all()
    assert (frame["rank"] <= frame["rank_high"]).all()
    assert frame.loc[0, "rank_low"] == 1 and frame.loc[0, "rank_high"] == 1
