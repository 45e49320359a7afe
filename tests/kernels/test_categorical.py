"""Every kernel that routes rows, on trees with categorical splits, against the naive
routing of tests/reference/naive_categorical.py: NaN, negative, fractional, unseen and
huge codes included (also run under NUMBA_BOUNDSCHECK=1 by ``make test-boundscheck``)."""

import dataclasses

import numpy as np
import pytest
from sklearn.metrics import get_scorer

from sapwood import FormatError, ModelKind, TreeArrays
from sapwood._kernels._conditional import conditional_tree_permutation
from sapwood._kernels._oob import oob_tree_permutation, oob_tree_permutation_fast
from sapwood._kernels._traverse import first_splits
from sapwood.importance import (
    conditional_permutation_importance,
    permutation_importance,
    tree_shap,
)
from tests.reference.naive_categorical import (
    NaiveCategoricalModel,
    awkward_codes,
    categorical_forest,
    naive_apply,
    naive_goes_left,
    naive_path,
    naive_path_dependent_shap,
    naive_raw,
)
from tests.reference.naive_conditional import naive_conditional_importance
from tests.reference.naive_permutation import naive_permutation_scores
from tests.reference.naive_shap_interventional import naive_interventional_shap


def _data(seed, n=240, p=4):
    rng = np.random.RandomState(seed)
    X = np.column_stack([awkward_codes(rng, n) for _ in range(p)])
    codes = np.nan_to_num(np.clip(X, -2, 90), nan=-1.0)
    y = (codes[:, 0] % 3) + 0.5 * (codes[:, 1] % 5 == 0) + 0.1 * codes[:, 2] / 90
    return X, codes, y


def _ensemble(seed, task="regression", n_estimators=4, max_depth=6):
    X, _, _ = _data(seed)
    ensemble, y = categorical_forest(X, np.random.RandomState(seed), seed, task,
                                     n_estimators, max_depth)
    return ensemble, X, y


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_apply_decision_path_and_packed_routing_equal_naive(seed, dtype):
    ensemble, X, _ = _ensemble(seed)
    X = X.astype(dtype)
    for tree in ensemble.trees:
        np.testing.assert_array_equal(tree.apply(X), naive_apply(tree, X.astype(np.float64)))
        path = tree.decision_path(X)
        for i in range(0, X.shape[0], 7):
            assert path[i].indices.tolist() == naive_path(tree, X[i].astype(np.float64))
    leaves = np.column_stack([naive_apply(tree, np.asarray(X, np.float32).astype(np.float64))
                              for tree in ensemble.trees])
    np.testing.assert_array_equal(ensemble.apply(X), leaves)
    np.testing.assert_array_equal(ensemble.raw_predict(X), naive_raw(ensemble, X)[:, None])


def test_first_splits_equal_naive():
    ensemble, X, _ = _ensemble(2)
    rows = np.arange(0, X.shape[0], 2)
    for tree in ensemble.trees:
        used, first, leaf = first_splits(X, rows, *tree._routing())
        for k, i in enumerate(rows):
            path = naive_path(tree, X[i])
            assert leaf[k] == path[-1]
            for j in range(X.shape[1]):
                on_j = [n for n in path[:-1] if tree.feature[n] == j]
                assert first[j, k] == (on_j[0] if on_j else -1)
        assert used.tolist() == [int((tree.feature[tree.children_left >= 0] == j).any())
                                 for j in range(X.shape[1])]


def test_set_edges_follow_the_rule():
    """Word boundaries, the last category of a set, one past it, -0.5, NaN both ways."""
    words = np.array([2, 1 << 31 | 1, 1 << 3], dtype=np.uint32)  # {0, 31, 35}
    tree = TreeArrays(children_left=[1, -1, -1], children_right=[2, -1, -1],
                      feature=[0, -2, -2], threshold=[0.0, -2.0, -2.0], impurity=np.zeros(3),
                      n_node_samples=np.ones(3), weighted_n_node_samples=np.ones(3),
                      value=[0.0, 1.0, 2.0], missing_go_to_left=[1, 0, 0],
                      operator=[2, 0, 0], n_features=1, cat_bitsets=words)
    values = np.array([0, 0.99, 1, 31, 31.5, 32, 35, 36, 63, 64, 1e10, -0.5, -1, np.nan])
    left = [True, True, False, True, True, False, True, False, False, False, False, False,
            False, True]
    assert [naive_goes_left(tree, 0, v) for v in values] == left
    np.testing.assert_array_equal(tree.apply(values[:, None]), np.where(left, 1, 2))
    assert tree.categories_left(0).tolist() == [0, 31, 35]


def test_bad_category_sets_are_refused():
    fields = dict(children_left=[1, -1, -1], children_right=[2, -1, -1], feature=[0, -2, -2],
                  impurity=np.zeros(3), n_node_samples=np.ones(3),
                  weighted_n_node_samples=np.ones(3), value=[0.0, 1.0, 2.0],
                  missing_go_to_left=[0, 0, 0], operator=[2, 0, 0], n_features=1)
    for threshold, words in ((0.0, None), (1.0, [1, 5]), (0.5, [1, 5]), (-1.0, [1, 5]),
                             (0.0, [2, 5]), (0.0, [2**32 - 1, 5]), (np.inf, [1, 5])):
        with pytest.raises(FormatError):
            TreeArrays(threshold=[threshold, -2.0, -2.0], cat_bitsets=words, **fields)
    TreeArrays(threshold=[0.0, -2.0, -2.0], cat_bitsets=[1, 5], **fields)
    TreeArrays(threshold=[0.0, -2.0, -2.0], cat_bitsets=[0], **fields)  # the empty set


@pytest.mark.parametrize("task", ["regression", "classification"])
def test_permutation_importance_equals_naive(task):
    ensemble, X, y = _ensemble(3, task)
    model = NaiveCategoricalModel(ensemble)
    scoring = "neg_mean_squared_error" if task == "regression" else "accuracy"
    groups = {"a": [0], "b": [1], "c": [2, 3], "d": [3]}
    result = permutation_importance(model, X, y, scoring=scoring, n_repeats=3,
                                    random_state=4, feature_groups=groups)
    assert result.params["evaluator"] == "tree"
    baseline, scores = naive_permutation_scores(model, X, y, get_scorer(scoring),
                                                list(groups.values()), 3, 4)
    np.testing.assert_allclose(result.importances, baseline - scores, rtol=0, atol=1e-12)


@pytest.mark.parametrize("kernel", [oob_tree_permutation, oob_tree_permutation_fast])
def test_oob_kernels_equal_naive(kernel):
    ensemble, X, y = _ensemble(4, "classification")
    if kernel is oob_tree_permutation_fast:
        # Its contract: finite data. (Categorical trees used to fall back to the
        # general route inside it, which let missing values through; they now take
        # the lanes, which drop the missing-value directions.)
        X = np.nan_to_num(X, nan=1.0)
    rng = np.random.RandomState(0)
    n_features = X.shape[1]
    for tree in ensemble.trees:
        rows = np.sort(rng.choice(X.shape[0], 90, replace=False))
        permutations = np.stack([[rng.permutation(90) for _ in range(n_features)]
                                 for _ in range(2)])
        prediction = np.argmax(tree.value[:, 0, :], axis=1).astype(np.float64)
        target = y[rows].astype(np.float64)
        base_loss, increase, _, casewise = kernel(
            X, rows, target, y[rows].astype(np.intp), 2, True, *tree._routing(), prediction,
            permutations)
        own = prediction[naive_apply(tree, X[rows])]
        np.testing.assert_array_equal(base_loss, (own != target).astype(float))
        expected = np.zeros((90, n_features))
        for r in range(2):
            for j in range(n_features):
                X_permuted = X[rows].copy()
                X_permuted[:, j] = X[rows][permutations[r, j], j]
                new = prediction[naive_apply(tree, X_permuted)]
                expected[:, j] += (new != target).astype(float) - (own != target)
        np.testing.assert_array_equal(increase, expected.sum(axis=0))


@pytest.mark.parametrize("fast", [False, True])
def test_conditional_kernel_and_measure_equal_naive(fast):
    ensemble, X, y = _ensemble(5, "classification", n_estimators=3)
    # Not bagged: every tree is evaluated on every row (held-out mode).
    ensemble = dataclasses.replace(ensemble, bootstrap=None, kind=ModelKind())
    model = NaiveCategoricalModel(ensemble)
    n = X.shape[0]
    # Threshold 0: every feature is conditioned on every other (the categorical bins
    # matter).
    result = conditional_permutation_importance(model, X, y, threshold=0.0, n_repeats=2,
                                                random_state=1)
    naive = naive_conditional_importance(model, X, y, [np.arange(n)] * ensemble.n_trees,
                                         threshold=0.0, n_repeats=2, random_state=1)
    np.testing.assert_allclose(result.importances, naive, rtol=0, atol=1e-12)
    # The kernel's fast flag on finite data must not change a categorical tree's answer.
    tree = ensemble.trees[0]
    finite = np.nan_to_num(X, nan=1.0, posinf=200.0, neginf=-5.0)
    permutations = np.stack([[np.random.RandomState(j).permutation(n) for j in range(4)]])
    conditioning = np.ones((4, 4), dtype=np.uint8) - np.eye(4, dtype=np.uint8)
    args = (finite, np.arange(n), conditioning, permutations, *tree._routing())
    for a, b in zip(conditional_tree_permutation(*args, fast),
                    conditional_tree_permutation(*args, False), strict=True):
        np.testing.assert_array_equal(a, b)


def test_path_dependent_shap_and_interactions_equal_naive():
    ensemble, X, _ = _ensemble(6, n_estimators=2, max_depth=4)
    rows = X[:12]
    result = tree_shap(NaiveCategoricalModel(ensemble), rows)
    phi = np.asarray(result.extra["shap_values"])
    expected = sum(np.stack([naive_path_dependent_shap(tree, x) for x in rows])
                   for tree in ensemble.trees) / ensemble.n_trees
    np.testing.assert_allclose(phi, expected[:, :, 0], rtol=0, atol=1e-12)
    pairs = tree_shap(NaiveCategoricalModel(ensemble), rows, interactions=True)
    interactions = np.asarray(pairs.extra["interaction_values"])
    np.testing.assert_allclose(interactions.sum(axis=2), phi, rtol=0, atol=1e-12)
    np.testing.assert_allclose(interactions, interactions.transpose(0, 2, 1), atol=1e-12)


def test_interventional_shap_equals_naive():
    ensemble, X, _ = _ensemble(7, n_estimators=2, max_depth=4)
    rows, background = X[:6], X[100:140]
    result = tree_shap(NaiveCategoricalModel(ensemble), rows, data=background,
                       feature_perturbation="interventional")
    expected = naive_interventional_shap(lambda Z: naive_raw(ensemble, Z)[:, 0], rows,
                                         background)
    np.testing.assert_allclose(np.asarray(result.extra["shap_values"]), expected[..., 0],
                               rtol=0, atol=1e-10)
