"""Drop-column importance against a naive refit loop, exact answers on linear models,
groups, n_jobs invariance and error messages."""

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import make_classification, make_regression
from sklearn.ensemble import RandomForestRegressor as SkRandomForestRegressor
from sklearn.linear_model import LinearRegression
from sklearn.metrics import check_scoring
from sklearn.model_selection import KFold, StratifiedKFold

import sapwood
from sapwood.importance import ImportanceResult, drop_column_importance
from tests.reference.naive_issue5 import naive_drop_column


def _regression(n=120, seed=0):
    return make_regression(n, 4, n_informative=2, noise=1.0, random_state=seed)


def test_matches_naive_cross_validation_forest():
    X, y = make_classification(150, 4, n_informative=2, n_redundant=0, random_state=0)
    forest = sapwood.RandomForestClassifier(n_estimators=5, max_depth=4, random_state=1)
    result = drop_column_importance(forest, X, y, cv=3, scoring="accuracy")
    folds = list(StratifiedKFold(3).split(X, y))
    expected, baseline = naive_drop_column(forest, X, y, check_scoring(forest, "accuracy"),
                                           folds=folds)
    assert isinstance(result, ImportanceResult)
    assert result.method == "drop_column"
    np.testing.assert_array_equal(result.importances, expected)
    np.testing.assert_array_equal(result.extra["baseline_score"], baseline)
    np.testing.assert_array_equal(result.importances_mean, expected.mean(axis=1))
    np.testing.assert_array_equal(result.importances_std, expected.std(axis=1))


def test_matches_naive_held_out_default_scorer():
    X, y = _regression()
    forest = sapwood.RandomForestRegressor(n_estimators=5, random_state=0)
    result = drop_column_importance(forest, X[:80], y[:80], X[80:], y[80:])
    expected, baseline = naive_drop_column(forest, X[:80], y[:80], check_scoring(forest),
                                           X_test=X[80:], y_test=y[80:])
    np.testing.assert_array_equal(result.importances, expected)
    np.testing.assert_array_equal(result.importances_std, np.zeros(4))
    assert result.params["held_out"] and result.params["n_folds"] is None
    np.testing.assert_array_equal(result.extra["baseline_score"], baseline)


def test_linear_model_exact_answer_on_training_r2():
    # Least squares on all rows: dropping column j loses exactly its share of R^2,
    # the change in residual sum of squares over the total sum of squares.
    X, y = _regression()
    full = [(np.arange(X.shape[0]), np.arange(X.shape[0]))]
    result = drop_column_importance(LinearRegression(), X, y, cv=full, scoring="r2")
    total = np.sum((y - y.mean()) ** 2)

    def rss(columns):
        model = LinearRegression().fit(X[:, columns], y)
        return np.sum((y - model.predict(X[:, columns])) ** 2)

    expected = [(rss([c for c in range(4) if c != j]) - rss(list(range(4)))) / total
                for j in range(4)]
    np.testing.assert_allclose(result.importances_mean, expected, rtol=1e-9, atol=1e-12)
    assert result.importances.shape == (4, 1)


def test_duplicated_column_gets_zero():
    X, y, coef = make_regression(120, 4, n_informative=2, noise=1.0, coef=True,
                                 random_state=0)
    strongest = int(np.argmax(np.abs(coef)))
    X = np.column_stack([X, X[:, strongest]])
    result = drop_column_importance(LinearRegression(), X, y, cv=KFold(4))
    # Either copy can stand in for the other, so neither adds anything alone.
    np.testing.assert_allclose(result.importances_mean[[strongest, 4]], 0.0, atol=1e-9)
    other = int(np.argsort(np.abs(coef))[-2])
    assert result.importances_mean[other] > 0.01


def test_dataframe_names_and_groups():
    X, y = _regression()
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    forest = SkRandomForestRegressor(n_estimators=4, max_depth=4, random_state=2)
    single = drop_column_importance(forest, frame, y, cv=3)
    assert single.feature_names == ["a", "b", "c", "d"]
    grouped = drop_column_importance(forest, frame, y, cv=3,
                                     feature_groups={"ab": ["a", "b"], "c_only": ["c"]})
    assert grouped.feature_names == ["ab", "c_only"]
    np.testing.assert_array_equal(grouped.importances[1], single.importances[2])
    # Dropping a and b together equals refitting on c and d by hand.
    by_hand = drop_column_importance(forest, frame[["c", "d"]].assign(a=0.0), y, cv=3,
                                     feature_groups={"a": ["a"]})
    np.testing.assert_array_equal(grouped.extra["scores"][0], by_hand.extra["scores"][0])
    positional = drop_column_importance(forest, X, y, cv=3, feature_groups={"ab": [0, 1]})
    np.testing.assert_array_equal(positional.importances[0], grouped.importances[0])


def test_same_numbers_for_any_n_jobs():
    X, y = _regression()
    forest = SkRandomForestRegressor(n_estimators=4, max_depth=5, random_state=0)
    serial = drop_column_importance(forest, X, y, cv=3, n_jobs=1)
    parallel = drop_column_importance(forest, X, y, cv=3, n_jobs=2)
    np.testing.assert_array_equal(serial.importances, parallel.importances)


class _NewFoldsEachCall(KFold):
    """A splitter whose every split() call draws other folds (a shuffled KFold without
    random_state, made countable): call k uses KFold(3, shuffle=True, random_state=k)."""

    def __init__(self):
        super().__init__(3)
        self.calls = 0

    def split(self, X, y=None, groups=None):
        self.calls += 1
        return KFold(3, shuffle=True, random_state=self.calls).split(X, y, groups)


def test_shuffled_folds_are_drawn_once():
    X, y = _regression()
    cv = _NewFoldsEachCall()
    result = drop_column_importance(LinearRegression(), X, y, cv=cv)
    assert result.params["n_folds"] == 3
    assert cv.calls == 1
    # Every refit saw the folds of that one call: the naive loop on them gives the same
    # numbers, and other folds do not.
    first = list(KFold(3, shuffle=True, random_state=1).split(X))
    expected, baseline = naive_drop_column(LinearRegression(), X, y,
                                           check_scoring(LinearRegression()), folds=first)
    np.testing.assert_allclose(result.importances, expected, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(result.extra["baseline_score"], baseline, rtol=1e-12)
    second = list(KFold(3, shuffle=True, random_state=2).split(X))
    other, _ = naive_drop_column(LinearRegression(), X, y,
                                 check_scoring(LinearRegression()), folds=second)
    assert not np.allclose(other, expected, rtol=1e-6, atol=0)


def test_errors_name_the_problem():
    X, y = _regression()
    with pytest.raises(ValueError, match="both X_test and y_test"):
        drop_column_importance(LinearRegression(), X, y, X_test=X)
    with pytest.raises(ValueError, match="not both; got X_test and cv=3"):
        drop_column_importance(LinearRegression(), X, y, X, y, cv=3)
    with pytest.raises(ValueError, match="leaves no column"):
        drop_column_importance(LinearRegression(), X, y, feature_groups={"all": [0, 1, 2, 3]})
    with pytest.raises(ValueError, match="which X does not have"):
        drop_column_importance(LinearRegression(), X, y, feature_groups={"bad": [7]})
    with pytest.raises(ValueError, match="'scoring' parameter"):
        drop_column_importance(LinearRegression(), X, y, scoring="no-such-scorer")
