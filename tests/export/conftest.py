"""Fitted scikit-learn trees and their copies in sapwood's format, shared by the
export tests. matplotlib draws with Agg so the tests need no display."""

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from sklearn.datasets import load_diabetes, load_digits, load_iris  # noqa: E402
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor  # noqa: E402

from tests.reference.sklearn_trees import tree_arrays_from_sklearn  # noqa: E402


def _fit(estimator, X, y, **fit_params):
    estimator.fit(X, y, **fit_params)
    return estimator, tree_arrays_from_sklearn(estimator)


@pytest.fixture(scope="session")
def iris_tree():
    X, y = load_iris(return_X_y=True)
    return _fit(DecisionTreeClassifier(max_depth=3, random_state=0), X, y)


@pytest.fixture(scope="session")
def weighted_binary_tree():
    """Non-integer class weights, so the value line shows rounded floats."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(120, 4))
    y = (X[:, 0] + 0.5 * rng.normal(size=120) > 0).astype(int)
    weights = rng.uniform(0.1, 2.0, size=120)
    return _fit(DecisionTreeClassifier(max_depth=3, criterion="entropy", random_state=0),
                X, y, sample_weight=weights)


@pytest.fixture(scope="session")
def digits_tree():
    """Ten classes: long value lists that numpy's printer wraps."""
    X, y = load_digits(return_X_y=True)
    return _fit(DecisionTreeClassifier(max_depth=3, random_state=0), X, y)


@pytest.fixture(scope="session")
def diabetes_tree():
    X, y = load_diabetes(return_X_y=True)
    return _fit(DecisionTreeRegressor(max_depth=3, random_state=0), X, y)


@pytest.fixture(scope="session")
def multi_output_tree():
    X, y = load_diabetes(return_X_y=True)
    Y = np.column_stack([y, np.log(y), -y / 7])
    return _fit(DecisionTreeRegressor(max_depth=2, random_state=0), X, Y)


@pytest.fixture(scope="session")
def missing_value_tree():
    """Trained on data with NaN: one split sends only the missing rows right
    (threshold +inf), another routes NaN to a learnt side."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(200, 2))
    y = (X[:, 1] > 0).astype(int)
    X[:40, 0] = np.nan
    y[:40] = 2
    X[40:80, 1] = np.nan
    return _fit(DecisionTreeClassifier(max_depth=3, random_state=0), X, y)
