"""sapwood grows the same tree as scikit-learn 1.9 for the same data, options and seed.

Every criterion x both splitters x each stopping rule, on data with continuous values,
heavy ties, NaN and sample weights (the whole grid takes a few seconds).
"""

import itertools

import numpy as np
import pytest
import sklearn.tree as sk
from sklearn.datasets import make_classification, make_regression

import sapwood
from tests.reference.sklearn_parity import tree_differences

OPTIONS = [
    {}, {"max_depth": 3}, {"min_samples_leaf": 5}, {"max_features": "sqrt"},
    {"max_features": 0.5}, {"max_leaf_nodes": 9}, {"min_impurity_decrease": 0.01},
    {"ccp_alpha": 0.01}, {"min_weight_fraction_leaf": 0.05}, {"min_samples_split": 0.1},
]


def _data(kind, task):
    rng = np.random.RandomState(7)
    if kind == "ties":
        X = rng.randint(0, 4, size=(250, 5)).astype(float)
        y = rng.randint(0, 3, 250) if task == "clf" else rng.poisson(2.0, 250).astype(float)
        return X, y, None
    if task == "clf":
        X, y = make_classification(300, 7, n_informative=4, n_classes=3, random_state=3)
    else:
        X, y = make_regression(300, 7, noise=5.0, random_state=3)
        y = np.abs(y)  # valid for poisson too
    weight = None
    if kind == "nan":
        X[rng.rand(*X.shape) < 0.15] = np.nan
    if kind == "weights":
        weight = rng.randint(0, 4, X.shape[0]).astype(float)
    return X, y, weight


def _check(ours, theirs, X, y, weight):
    ours.fit(X, y, sample_weight=weight)
    theirs.fit(X, y, sample_weight=weight)
    assert tree_differences(ours.tree_, theirs.tree_) == []
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))
    np.testing.assert_array_equal(ours.feature_importances_, theirs.feature_importances_)


CLF_CASES = list(itertools.product(["gini", "entropy"], ["best", "random"], range(len(OPTIONS)),
                                   ["continuous", "ties", "nan", "weights"]))
REG_CASES = list(itertools.product(["squared_error", "absolute_error", "poisson"],
                                   ["best", "random"], range(len(OPTIONS)),
                                   ["continuous", "ties", "nan", "weights"]))


@pytest.mark.parametrize("criterion,splitter,option,kind", CLF_CASES)
def test_classifier_parity(criterion, splitter, option, kind):
    X, y, weight = _data(kind, "clf")
    params = dict(criterion=criterion, splitter=splitter, random_state=option, **OPTIONS[option])
    _check(sapwood.DecisionTreeClassifier(**params), sk.DecisionTreeClassifier(**params),
           X, y, weight)


@pytest.mark.parametrize("criterion,splitter,option,kind", REG_CASES)
def test_regressor_parity(criterion, splitter, option, kind):
    X, y, weight = _data(kind, "reg")
    options = dict(OPTIONS[option])
    if "ccp_alpha" in options:
        options["ccp_alpha"] = 5.0
    params = dict(criterion=criterion, splitter=splitter, random_state=option, **options)
    _check(sapwood.DecisionTreeRegressor(**params), sk.DecisionTreeRegressor(**params),
           X, y, weight)


@pytest.mark.parametrize("class_weight", ["balanced", {0: 1.0, 1: 3.0, 2: 0.5}])
def test_class_weight_parity(class_weight):
    X, y, _ = _data("continuous", "clf")
    params = dict(class_weight=class_weight, random_state=0, max_depth=6)
    _check(sapwood.DecisionTreeClassifier(**params), sk.DecisionTreeClassifier(**params),
           X, y, None)


def test_multi_output_parity():
    X, y, _ = _data("continuous", "clf")
    Y = np.column_stack([y, (X[:, 0] > 0).astype(int), np.where(y == 2, "a", "b")])
    ours = sapwood.DecisionTreeClassifier(random_state=1).fit(X, Y)
    theirs = sk.DecisionTreeClassifier(random_state=1).fit(X, Y)
    assert tree_differences(ours.tree_, theirs.tree_) == []
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))
    for a, b in zip(ours.predict_proba(X), theirs.predict_proba(X), strict=True):
        np.testing.assert_array_equal(a, b)
    Xr, yr = make_regression(200, 5, n_targets=3, random_state=0)
    for criterion in ("squared_error", "absolute_error"):
        ours = sapwood.DecisionTreeRegressor(criterion=criterion, random_state=2).fit(Xr, yr)
        theirs = sk.DecisionTreeRegressor(criterion=criterion, random_state=2).fit(Xr, yr)
        assert tree_differences(ours.tree_, theirs.tree_) == []


@pytest.mark.parametrize("seed", range(6))
def test_parity_on_random_small_problems(seed):
    # Small, tie-heavy problems exercise the tie-breaking random stream hardest.
    rng = np.random.RandomState(seed)
    n = rng.randint(1, 40)
    X = rng.randint(0, 3, size=(n, 4)).astype(float)
    X[:, 1] = 1.0  # a constant column
    y = rng.randint(0, 2, n)
    params = dict(random_state=seed, max_features=rng.choice([None, 2]))
    _check(sapwood.DecisionTreeClassifier(**params), sk.DecisionTreeClassifier(**params),
           X, y, None)


@pytest.mark.parametrize("criterion", ["gini", "entropy"])
def test_parity_on_larger_data_mixing_radix_and_introsort_features(criterion):
    # 3000 rows: continuous (tie-free) columns take the radix sort in big nodes, the
    # rounded and integer columns keep introsort; both must give scikit-learn's tree.
    X, y = make_classification(3000, 6, n_informative=4, random_state=5)
    X[:, 1] = np.round(X[:, 1], 1)
    X[:, 2] = np.floor(X[:, 2] * 3)
    params = dict(criterion=criterion, random_state=3)
    _check(sapwood.DecisionTreeClassifier(**params), sk.DecisionTreeClassifier(**params),
           X, y, None)


def test_regression_parity_on_larger_data():
    X, y = make_regression(3000, 5, noise=3.0, random_state=4)
    X[:, 0] = np.round(X[:, 0])
    params = dict(random_state=1, min_samples_leaf=3)
    _check(sapwood.DecisionTreeRegressor(**params), sk.DecisionTreeRegressor(**params),
           X, y, None)


@pytest.mark.parametrize("criterion", ["squared_error", "poisson"])
@pytest.mark.parametrize("max_depth", [3, None])
def test_regression_parity_with_sparse_ties(criterion, max_depth):
    # Continuous float32 columns with a few tied pairs, as real data has: large nodes
    # are radix sorted and introsort runs only where the ties are; one column has NaN.
    rng = np.random.RandomState(11)
    X, y = make_regression(4000, 5, noise=3.0, random_state=6)
    X = X.astype(np.float32)
    for j in range(X.shape[1]):
        X[rng.randint(0, 4000, 12), j] = X[rng.randint(0, 4000, 12), j]
    X[rng.rand(4000) < 0.05, 4] = np.nan
    y = np.abs(y) + 1.0
    weight = rng.randint(0, 3, 4000).astype(float)
    params = dict(criterion=criterion, random_state=2, max_depth=max_depth)
    _check(sapwood.DecisionTreeRegressor(**params), sk.DecisionTreeRegressor(**params),
           X, y, weight)
