"""The default regressor score (R^2) of every permuted data set in one ``r2_score`` call
(``_BatchedR2``) equals the scorer's, one data set at a time, bit for bit."""

import numpy as np
import pytest
from sklearn.datasets import make_regression
from sklearn.ensemble import RandomForestRegressor
from sklearn.inspection import permutation_importance as sklearn_permutation_importance
from sklearn.metrics import r2_score

from sapwood.importance import _permutation, permutation_importance


def _batched_flags(monkeypatch):
    """A list that gets, for every scoring round of ``_BatchedR2``, whether it was
    scored in one batched call."""
    used = []
    original = _permutation._BatchedR2._score

    def spy(self, *args, **kwargs):
        original(self, *args, **kwargs)
        used.append(self.batched)

    monkeypatch.setattr(_permutation._BatchedR2, "_score", spy)
    return used


@pytest.mark.parametrize("n_rows", [2, 3, 9, 127, 129, 1000, 8193, 20_001])
@pytest.mark.parametrize("y_dtype", [np.float64, np.float32, np.int64])
@pytest.mark.parametrize("p_dtype", [np.float64, np.float32])
def test_columns_in_fortran_order_score_as_one_output(n_rows, y_dtype, p_dtype):
    # The layout _BatchedR2 relies on: each column's sums over contiguous memory, as one
    # output's are.
    rng = np.random.default_rng(n_rows)
    y = (rng.normal(size=n_rows) * 100).astype(y_dtype)
    predicted = (y[:, None] + rng.normal(size=(n_rows, 6)) * 50).astype(p_dtype)
    predicted[:, 2] = y  # a perfect column
    predicted[:, 4] = predicted[0, 4]  # a constant one
    columns = np.asfortranarray(predicted)
    truth = np.asfortranarray(np.broadcast_to(y[:, None], columns.shape))
    batched = r2_score(truth, columns, multioutput="raw_values").tolist()
    assert batched == [r2_score(y, predicted[:, j].copy()) for j in range(6)]


def _forest(y_dtype=np.float64):
    X, y = make_regression(n_samples=700, n_features=6, n_informative=4, noise=1.0,
                           random_state=0)
    X[:, 2] = np.round(X[:, 2])
    model = RandomForestRegressor(n_estimators=8, max_depth=6, random_state=0)
    model.fit(X[:400], y[:400])
    return model, X[400:], y[400:].astype(y_dtype)


@pytest.mark.parametrize("y_dtype", [np.float64, np.float32, np.int64])
@pytest.mark.parametrize("max_samples", [1.0, 0.7])
def test_batched_scores_equal_sklearn(monkeypatch, y_dtype, max_samples):
    model, X, y = _forest(y_dtype)
    used = _batched_flags(monkeypatch)
    ours = permutation_importance(model, X, y, n_repeats=4, random_state=3,
                                  max_samples=max_samples)
    theirs = sklearn_permutation_importance(model, X, y, n_repeats=4, random_state=3,
                                            max_samples=max_samples)
    assert ours.params["evaluator"] == "tree"
    assert used and all(used)  # every score came from the one call
    np.testing.assert_array_equal(ours.importances, theirs.importances)


def test_a_difference_from_the_scorer_scores_one_at_a_time(monkeypatch):
    # The first scores of a call are checked against the scorer: a batched score that
    # differed would hand every score back to the scorer.
    model, X, y = _forest()
    monkeypatch.setattr(_permutation, "r2_score",
                        lambda *args, **kwargs: r2_score(*args, **kwargs) + 1e-9)
    used = _batched_flags(monkeypatch)
    ours = permutation_importance(model, X, y, n_repeats=3, random_state=1)
    theirs = sklearn_permutation_importance(model, X, y, n_repeats=3, random_state=1)
    assert used == [False]
    np.testing.assert_array_equal(ours.importances, theirs.importances)


def test_a_small_budget_scores_in_several_calls(monkeypatch):
    # No more predictions are held than one call scores.
    model, X, y = _forest()
    monkeypatch.setattr(_permutation._BatchedR2, "_BUDGET", 3 * X.shape[0])
    held = []
    original = _permutation._BatchedR2._score

    def spy(self, slots, raws):
        held.append(len(raws))
        original(self, slots, raws)

    monkeypatch.setattr(_permutation._BatchedR2, "_score", spy)
    ours = permutation_importance(model, X, y, n_repeats=4, random_state=2)
    assert len(held) > 2 and max(held) == 3
    theirs = sklearn_permutation_importance(model, X, y, n_repeats=4, random_state=2)
    np.testing.assert_array_equal(ours.importances, theirs.importances)
