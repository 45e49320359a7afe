"""The growth kernels against the naive pure-Python CART in tests/reference."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sapwood
from tests.reference import naive_cart


def _continuous(seed, n=200, d=3):
    rng = np.random.RandomState(seed)
    X = rng.rand(n, d).astype(np.float32).astype(np.float64)
    return rng, X


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("criterion", ["gini", "entropy"])
def test_classifier_equals_naive_growth(seed, criterion):
    rng, X = _continuous(seed)
    y = (X[:, 0] + 0.5 * rng.rand(X.shape[0]) > 0.7).astype(int) + (X[:, 1] > 0.8)
    w = rng.randint(1, 4, X.shape[0]).astype(float)
    # Depth 3 on continuous data: every split is unique, so the visiting order of
    # features (sapwood's random stream) cannot change the tree.
    model = sapwood.DecisionTreeClassifier(criterion=criterion, max_depth=3, random_state=seed)
    model.fit(X, y, sample_weight=w)
    reference = naive_cart.grow(X, y, w, criterion, n_classes=3, max_depth=3)
    expected = np.array([naive_cart.predict(reference, x) for x in X])
    np.testing.assert_allclose(model.predict_proba(X), expected, rtol=1e-12)
    np.testing.assert_allclose(model.tree_.compute_feature_importances(normalize=False),
                               naive_cart.mdi(reference, 3), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_regressor_equals_naive_growth(seed):
    rng, X = _continuous(seed)
    y = np.sin(4 * X[:, 0]) + X[:, 2] + 0.1 * rng.randn(X.shape[0])
    w = np.ones(X.shape[0])
    model = sapwood.DecisionTreeRegressor(max_depth=4, random_state=seed).fit(X, y)
    reference = naive_cart.grow(X, y, w, "squared_error", max_depth=4)
    expected = np.array([naive_cart.predict(reference, x)[0] for x in X])
    np.testing.assert_allclose(model.predict(X), expected, rtol=1e-10)
    np.testing.assert_allclose(model.tree_.compute_feature_importances(normalize=False),
                               naive_cart.mdi(reference, 3), rtol=1e-7, atol=1e-10)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 30), st.integers(0, 10_000))
def test_root_split_is_the_exhaustive_best(n, seed):
    rng = np.random.RandomState(seed)
    X = rng.randint(0, 5, size=(n, 3)).astype(float)
    y = rng.randint(0, 2, n)
    model = sapwood.DecisionTreeClassifier(max_depth=1, random_state=seed).fit(X, y)
    best = naive_cart.best_split(X, y, np.ones(n), "gini", n_classes=max(2, y.max() + 1))
    tree = model.tree_
    if best is None or tree.node_count == 1:
        # No split, or one that does not reduce impurity: sapwood must agree.
        assert best is None or best[2] <= 1e-12 or tree.impurity[0] <= np.finfo(float).eps
        return
    left, right = tree.children_left[0], tree.children_right[0]
    decrease = (tree.weighted_n_node_samples[0] * tree.impurity[0]
                - tree.weighted_n_node_samples[left] * tree.impurity[left]
                - tree.weighted_n_node_samples[right] * tree.impurity[right])
    assert decrease == pytest.approx(best[2], rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("n", [1, 2])
def test_one_and_two_row_inputs(n):
    X = np.arange(n, dtype=float).reshape(n, 1)
    y = np.arange(n)
    model = sapwood.DecisionTreeClassifier().fit(X, y)
    assert model.tree_.node_count == (1 if n == 1 else 3)
    np.testing.assert_array_equal(model.predict(X), y)


def test_constant_columns_never_split():
    rng = np.random.RandomState(0)
    X = np.column_stack([np.ones(50), rng.rand(50), np.full(50, 3.0)])
    y = (X[:, 1] > 0.5).astype(int)
    tree = sapwood.DecisionTreeClassifier(random_state=0).fit(X, y).tree_
    assert set(tree.feature[tree.feature >= 0]) == {1}


def test_nan_rows_follow_the_learned_direction():
    X = np.array([[0.0], [1.0], [2.0], [3.0], [np.nan], [np.nan]])
    y = np.array([0, 0, 1, 1, 1, 1])
    model = sapwood.DecisionTreeClassifier(random_state=0).fit(X, y)
    assert model.predict(np.array([[np.nan]]))[0] == 1
    tree = model.tree_
    assert tree.missing_go_to_left[0] == 0 and tree.threshold[0] == 1.5
