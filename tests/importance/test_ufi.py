"""UFI against the authors' node-by-node loop, its claims on ground-truth data, and
its guards."""

import numpy as np
import pytest
from sklearn.datasets import make_classification, make_regression
from sklearn.ensemble import RandomForestClassifier as SkRandomForestClassifier
from sklearn.ensemble import RandomForestRegressor as SkRandomForestRegressor
from sklearn.tree import DecisionTreeClassifier as SkDecisionTreeClassifier

import sapwood
from sapwood.datasets import make_ground_truth
from sapwood.importance import ufi
from sapwood.importance._engine._bagging import inbag_counter
from tests.reference.naive_issue5 import naive_ufi


def _naive_oob(forest, X, y, classification):
    counts = inbag_counter(forest)
    n_trees = len(forest.estimators_)
    inbag = [counts(t) for t in range(n_trees)]
    oob = [np.flatnonzero(c == 0) for c in inbag]
    return naive_ufi(forest.estimators_, X, y, inbag, oob, classification)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_classification_matches_naive(n_classes):
    X, y = make_classification(200, 5, n_informative=3, n_redundant=0, n_classes=n_classes,
                               random_state=0)
    X[:, 4] = np.round(X[:, 4])  # ties
    forest = SkRandomForestClassifier(n_estimators=6, max_depth=5, random_state=0).fit(X, y)
    result = ufi(forest, X, y)
    expected = _naive_oob(forest, X, y, classification=True)
    np.testing.assert_allclose(result.importances, expected, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(result.importances_mean, expected.mean(axis=1), rtol=1e-10,
                               atol=1e-14)
    assert result.method == "ufi" and not result.params["held_out"]


def test_regression_matches_naive():
    X, y = make_regression(200, 5, n_informative=3, noise=5.0, random_state=1)
    forest = SkRandomForestRegressor(n_estimators=6, max_depth=5, random_state=0).fit(X, y)
    result = ufi(forest, X, y)
    expected = _naive_oob(forest, X, y, classification=False)
    np.testing.assert_allclose(result.importances, expected, rtol=1e-9, atol=1e-9)


def test_sapwood_forest_equals_scikit_learn_forest():
    X, y = make_classification(150, 4, n_informative=2, n_redundant=0, random_state=2)
    params = {"n_estimators": 5, "max_depth": 4, "random_state": 3}
    ours = ufi(sapwood.RandomForestClassifier(**params).fit(X, y), X, y)
    theirs = ufi(SkRandomForestClassifier(**params).fit(X, y), X, y)
    np.testing.assert_allclose(ours.importances, theirs.importances, rtol=1e-12,
                               atol=1e-15)


def test_held_out_single_tree_matches_naive():
    X, y = make_classification(300, 4, n_informative=2, n_redundant=0, random_state=3)
    tree = SkDecisionTreeClassifier(max_depth=4, random_state=0).fit(X[:200], y[:200])
    result = ufi(tree, X[200:], y[200:])
    assert result.params["held_out"]
    expected = _naive_held_out(tree, X[:200], y[:200], X[200:], y[200:])
    np.testing.assert_allclose(result.importances[:, 0], expected, rtol=1e-10, atol=1e-14)


def _naive_held_out(tree, X_train, y_train, X_test, y_test):
    X = np.vstack([X_train, X_test])
    y = np.concatenate([y_train, y_test])
    counts = np.concatenate([np.ones(len(y_train), int), np.zeros(len(y_test), int)])
    rows = np.arange(len(y_train), len(y))
    return naive_ufi([tree], X, y, [counts], [rows], True)[:, 0]


def test_trace_sums_to_the_importances():
    X, y = make_classification(150, 4, n_informative=2, n_redundant=0, random_state=4)
    forest = SkRandomForestClassifier(n_estimators=4, max_depth=3, random_state=0).fit(X, y)
    result = ufi(forest, X, y)
    sums = result.trace.groupby(["feature", "tree"])["decrease"].sum()
    rebuilt = np.zeros_like(result.importances)
    for (feature, tree), value in sums.items():
        rebuilt[result.feature_names.index(feature), tree] = value
    np.testing.assert_allclose(rebuilt, result.importances, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("seed", [0, 1])
def test_ground_truth_id_column_below_every_informative_one(seed):
    # Zhou & Hooker's claim: out-of-sample impurity removes MDI's preference for the
    # ID-like column (MDI ranks it above inf_5 on this data, see
    # test_ground_truth_claims.py).
    X, y, truth = make_ground_truth(1000, "classification", random_state=seed)
    forest = SkRandomForestClassifier(n_estimators=100, random_state=seed).fit(X, y)
    result = ufi(forest, X, y)
    importance = dict(zip(result.feature_names, result.importances_mean, strict=True))
    informative = [name for name, role in truth.items() if role == "informative"]
    assert importance["noise_id"] < min(importance[name] for name in informative)
    assert importance["noise_id"] < 0.05 * max(importance[n] for n in informative)


def test_guards():
    X, y = make_classification(100, 4, random_state=0)
    entropy = SkRandomForestClassifier(n_estimators=2, criterion="entropy",
                                       random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="criterion \\('gini',\\).*'entropy'"):
        ufi(entropy, X, y)
    forest = SkRandomForestClassifier(n_estimators=2, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="fit on 100. Out-of-bag rows need the training"):
        ufi(forest, X[:50], y[:50])
    with pytest.raises(ValueError, match="labels the model was not fit on"):
        ufi(forest, X, y + 5)
    boosted = sapwood.GradientBoostingRegressor(n_estimators=2).fit(X, y)
    with pytest.raises(ValueError, match="combine='sum'"):
        ufi(boosted, X, y)
