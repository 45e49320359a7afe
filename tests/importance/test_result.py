"""The result type's confidence intervals: Student-t intervals of the mean over draws."""

import re

import numpy as np
import pytest
from scipy import stats
from sklearn.datasets import make_classification

from sapwood import RandomForestClassifier
from sapwood.importance import (
    ImportanceResult,
    oob_permutation_importance,
    permutation_importance,
    tree_shap,
)
from sapwood.importance._engine._result import mean_interval


def _reference(draws, level=0.95):
    """scipy's t interval of each row's mean."""
    low, high = [], []
    for row in draws:
        a, b = stats.t.interval(level, len(row) - 1, loc=np.mean(row),
                                scale=stats.sem(row))
        low.append(a)
        high.append(b)
    return np.array(low), np.array(high)


def test_mean_interval_equals_scipy():
    draws = np.random.default_rng(0).normal(size=(6, 7))
    for level in (0.9, 0.95):
        low, high = mean_interval(draws, level)
        expected = _reference(draws, level)
        np.testing.assert_allclose(low, expected[0], rtol=1e-12)
        np.testing.assert_allclose(high, expected[1], rtol=1e-12)
    low, high = mean_interval(draws[:, :1])
    assert np.isnan(low).all() and np.isnan(high).all()
    low, high = mean_interval(np.ones((2, 4)))
    np.testing.assert_array_equal(low, 1.0)
    np.testing.assert_array_equal(high, 1.0)


def test_from_draws_keeps_numpy_mean_and_std():
    draws = np.random.default_rng(1).exponential(size=(3, 5))
    result = ImportanceResult.from_draws(draws, feature_names=["a", "b", "c"], method="x")
    np.testing.assert_array_equal(result.importances_mean, np.mean(draws, axis=1))
    np.testing.assert_array_equal(result.importances_std, np.std(draws, axis=1))
    np.testing.assert_array_equal(result.ci_low, mean_interval(draws)[0])
    frame = result.to_frame(sort=False)
    np.testing.assert_array_equal(frame["ci_high"], mean_interval(draws)[1])
    empty = ImportanceResult.from_draws(np.zeros((2, 0)), feature_names=["a", "b"],
                                        method="x")
    np.testing.assert_array_equal(empty.importances_mean, 0.0)
    assert empty.ci_low is None


@pytest.fixture(scope="module")
def fitted():
    X, y = make_classification(n_samples=400, n_features=5, random_state=0)
    forest = RandomForestClassifier(20, random_state=0).fit(X[:300], y[:300])
    return forest, X, y


def test_measures_report_the_interval_of_their_draws(fitted):
    forest, X, y = fitted
    held_out = permutation_importance(forest, X[300:], y[300:], n_repeats=6,
                                      random_state=0)
    oob = oob_permutation_importance(forest, X[:300], y[:300], random_state=0)
    shap = tree_shap(forest, X[300:])
    for result in (held_out, oob, shap):
        low, high = _reference(result.importances)
        np.testing.assert_allclose(result.ci_low, low, rtol=1e-10, atol=1e-15)
        np.testing.assert_allclose(result.ci_high, high, rtol=1e-10, atol=1e-15)
        assert (result.ci_low <= result.importances_mean).all()
        assert (result.importances_mean <= result.ci_high).all()


def test_dask_tree_shap_interval_equals_in_memory(fitted):
    da = pytest.importorskip("dask.array")
    forest, X, _ = fitted
    expected = tree_shap(forest, X)
    result = tree_shap(forest, da.from_array(X, chunks=90))
    np.testing.assert_allclose(result.ci_low, expected.ci_low, rtol=1e-9)
    np.testing.assert_allclose(result.ci_high, expected.ci_high, rtol=1e-9)


def test_forest_mdi_interval_is_that_of_its_trees_mean(fitted):
    from sapwood.importance import mdi

    forest, _, _ = fitted
    result = mdi(forest)
    draws = result.importances  # each tree's normalised importances (no stumps here)
    low, high = _reference(draws)
    scale = 1.0 / draws.mean(axis=1).sum()
    np.testing.assert_allclose(result.ci_low, low * scale, rtol=1e-10)
    np.testing.assert_allclose(result.ci_high, high * scale, rtol=1e-10)
    assert (result.ci_low <= result.importances_mean).all()
    assert (result.importances_mean <= result.ci_high).all()
    np.testing.assert_allclose(result.importances_mean, forest.feature_importances_,
                               rtol=1e-12)
    single = mdi(forest.estimators_[0])
    assert single.ci_low is None


def test_fields_answer_by_key_as_a_bunch_does():
    result = ImportanceResult(importances_mean=[0.5, 0.1], importances_std=[0.0, 0.1],
                              feature_names=["a", "b"], method="test",
                              importances=np.array([[0.5, 0.5], [0.0, 0.2]]))
    assert result["importances_mean"] is result.importances_mean
    assert result["importances"] is result.importances
    assert "importances_std" in result.keys() and "_rank_intervals" not in result.keys()
    with pytest.raises(KeyError, match="'rank' is not a field.*importances_mean"):
        result["rank"]


def test_a_notebook_shows_the_table_with_bars_intervals_and_escaped_names():
    draws = np.array([[0.5, 0.52, 0.49], [0.1, 0.2, 0.15], [0.0, 0.01, -0.01]])
    result = ImportanceResult.from_draws(draws, feature_names=["<b>x</b>", "y", "z\x1b[2J"],
                                         method="permutation")
    page = result._repr_html_()
    assert "<b>x</b>" not in page and "&lt;b&gt;x&lt;/b&gt;" in page
    assert "\x1b" not in page and "z\\x1b[2J" in page
    # Bars in proportion to the importance (the largest 120 px), rows most important first.
    assert [int(w) for w in re.findall(r"width:(\d+)px", page)] == [120, 36, 0]
    low, high = result.ci_low[1], result.ci_high[1]
    assert f"[{low:.4f}, {high:.4f}]" in page
    intervals = result.rank_intervals()
    shown = re.findall(r"<td>([0-9–]+)</td></tr>", page)
    assert "rank (95%)" in page and shown == [
        str(lo) if lo == hi else f"{lo}–{hi}"
        for lo, hi in zip(intervals.low, intervals.high, strict=True)]


def test_a_notebook_table_shows_the_first_rows_of_a_wide_result():
    result = ImportanceResult(importances_mean=np.arange(50.0), importances_std=np.zeros(50),
                              feature_names=[f"f{i}" for i in range(50)], method="mdi")
    page = result._repr_html_()
    assert page.count("<tr>") == 31 and "the first 30 shown" in page
    assert ">f49<" in page and ">f19<" not in page
