"""The permutation kernels' categorical shortcuts (issue 16, item 7) against naive
routing: the category set of a path (``leaf_intervals`` / ``keeps_leaf``), the lanes
through categorical splits (``make_fast``'s layout, ``route_lanes``), and the
conditional bins of a categorical feature. Fast and general routes must give the same
numbers bit for bit, and both the naive ones: missing values, negative, fractional,
unseen (past every set) and huge codes included. Run under NUMBA_BOUNDSCHECK=1 too
(``make test-boundscheck``)."""

import numpy as np
import pytest
from sklearn.ensemble import RandomForestRegressor

from sapwood._format import LEAF
from sapwood._kernels._conditional import _bins
from sapwood._kernels._oob import oob_tree_permutation, oob_tree_permutation_fast
from sapwood._kernels._permuted_traversal import (
    apply_lanes,
    fast_layout,
    make_fast,
    pack_nodes,
)
from sapwood._kernels._tree_index import keeps_leaf, leaf_intervals
from sapwood.adapters import as_ensemble
from sapwood.importance._engine._tree_evaluator import TreeEvaluator
from tests.reference.naive_categorical import (
    NaiveCategoricalModel,
    awkward_codes,
    categorical_ensemble,
    categorical_forest,
    naive_apply,
    naive_goes_left,
    naive_raw,
)

# Values a permuted column may bring: categories at and around word and 64-bit edges,
# -0.0 (category 0), negative, fractional, unseen and huge codes.
_PROBES = np.array([0.0, -0.0, 0.5, 1.0, 5.0, 31.0, 31.5, 32.0, 33.0, 40.0, 63.0, 63.5,
                    64.0, 65.0, 70.0, 79.0, 95.0, -0.5, -1.0, -1e12, 1e9, 2.0**40, 1e30])


def _finite_codes(rng, n, p):
    """Awkward codes (``awkward_codes``) without missing values: the fast route's data."""
    X = np.column_stack([awkward_codes(rng, n) for _ in range(p)])
    return np.where(np.isnan(X), 7.0, X)


def _ensemble(seed, task="regression", n=300, p=4, n_estimators=4, max_depth=7,
              finite=True, n_categories=64):
    """A forest on awkward codes with about half its splits made categorical: sets of
    categories below ``n_categories`` (64: the lanes' sets; more: some trees take the
    general route)."""
    rng = np.random.RandomState(seed)
    X = (_finite_codes(rng, n, p) if finite
         else np.column_stack([awkward_codes(rng, n) for _ in range(p)]))
    ensemble, y = categorical_forest(X, rng, seed, task, n_estimators, max_depth,
                                     n_categories=n_categories)
    return ensemble, X, y


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_path_keeps_its_leaf_exactly_for_the_categories_it_records(seed):
    """For every row, column and probe value: ``keeps_leaf`` implies the naive routing
    keeps the row's leaf, and for values in [0, 64) (where the 64 bits are exact) the
    converse too; NaN never keeps (a traversal decides)."""
    ensemble, X, _ = _ensemble(seed, finite=False, n_categories=70)
    n_kept_below_a_set = 0
    for tree in ensemble.trees:
        n = tree.node_count
        lower, upper = np.empty(n), np.empty(n)
        codes = np.empty(n, dtype=np.uint64)
        stack = np.empty(n + 1, dtype=np.intp)
        leaves = naive_apply(tree, X)
        for j in range(X.shape[1]):
            leaf_intervals(0, j, 0, tree.children_left, tree.children_right, tree.feature,
                           tree.threshold, tree.operator, tree.cat_bitsets, lower, upper,
                           codes, stack)
            for i in range(0, X.shape[0], 3):
                leaf = leaves[i]
                under_set = codes[leaf] != ~np.uint64(0)
                rows = np.repeat(X[i:i + 1], _PROBES.shape[0] + 1, axis=0)
                rows[:, j] = np.append(_PROBES, np.nan)
                same = naive_apply(tree, rows) == leaf
                for value, stays in zip(rows[:, j], same, strict=True):
                    kept = keeps_leaf(value, lower[leaf], upper[leaf], codes[leaf])
                    assert not kept or stays, (j, i, value)
                    if 0.0 <= value < 64.0:
                        assert kept == stays, (j, i, value)
                    n_kept_below_a_set += int(kept and under_set)
    assert n_kept_below_a_set > 100  # the shortcut does work below categorical splits


@pytest.mark.parametrize("seed", [0, 3])
def test_lanes_route_categorical_splits_as_the_naive_routing(seed):
    ensemble, X, _ = _ensemble(seed)
    (left, right, feature, threshold, missing, operator, cat_bitsets,
     roots) = ensemble.packed()
    nodes = pack_nodes(left, right, feature, missing, operator)
    assert fast_layout(left, operator, threshold, cat_bitsets)
    make_fast(nodes, threshold, operator)
    assert (operator[left != LEAF] == 2).any()
    X = np.ascontiguousarray(np.vstack([X, np.repeat(X[:1], len(_PROBES), axis=0)]))
    X[-len(_PROBES):, :] = _PROBES[:, None]
    leaves = apply_lanes(X, nodes, threshold, roots, cat_bitsets) - roots[:, None]
    expected = np.stack([naive_apply(tree, X) for tree in ensemble.trees])
    np.testing.assert_array_equal(leaves, expected)


@pytest.mark.parametrize("task", ["classification", "regression"])
@pytest.mark.parametrize(("n_jobs", "n_categories"), [(1, 64), (2, 64), (2, 96)])
def test_fast_evaluator_equals_general_and_predicting_on_categorical_trees(task, n_jobs,
                                                                          n_categories):
    """Held-out permutation on finite data through categorical splits: the fast route
    (set shortcut, lanes) gives the general route's outputs and naive predictions, bit
    for bit, for one-column and several-column groups. Sets past category 63 make the
    whole evaluator take the general route."""
    ensemble, X, _ = _ensemble(4, task, n=240, p=5, n_estimators=5,
                               n_categories=n_categories)
    lanes = n_categories <= 64
    model = NaiveCategoricalModel(ensemble)
    groups = [np.array([j]) for j in range(5)] + [np.array([0, 2])]
    rng = np.random.RandomState(3)
    sources = np.array([rng.permutation(240) for _ in range(4)])
    outputs = {}
    for fast in (True, False):
        evaluator = TreeEvaluator(model, ensemble, X.astype(np.float32), n_jobs,
                                  fast=None if fast else False)
        assert evaluator.fast == (fast and lanes) and evaluator.mismatch is None
        evaluator.prepare(None, groups)
        outputs[fast] = {(g, k): (evaluator.baseline_eval if raw is None else raw).copy()
                         for g, k, raw in evaluator.permuted_outputs(sources)}
        evaluator.close()
    assert outputs[True].keys() == outputs[False].keys()
    for (g, k), got in outputs[True].items():
        assert np.array_equal(got, outputs[False][g, k]), (g, k)
        X_permuted = X.astype(np.float32)
        X_permuted[:, groups[g]] = X_permuted[sources[k]][:, groups[g]]
        assert np.array_equal(got, ensemble.raw_predict(X_permuted).reshape(240, -1)), (g, k)
        np.testing.assert_allclose(got, naive_raw(ensemble, X_permuted)[:, :got.shape[1]],
                                   rtol=0, atol=1e-12)


@pytest.mark.parametrize("task", ["classification", "regression"])
@pytest.mark.parametrize("n_categories", [64, 96])
def test_oob_fast_kernel_equals_general_and_naive_on_categorical_trees(task, n_categories):
    ensemble, X, y = _ensemble(5, task, n=260, n_categories=n_categories)
    classification = task == "classification"
    rng = np.random.RandomState(0)
    n_features = X.shape[1]
    for tree in ensemble.trees:
        rows = np.sort(rng.choice(X.shape[0], 110, replace=False))
        permutations = np.stack([[rng.permutation(110) for _ in range(n_features)]
                                 for _ in range(2)])
        values = tree.value[:, 0, :]
        prediction = (np.argmax(values, axis=1).astype(np.float64) if classification
                      else np.ascontiguousarray(values[:, 0]))
        target = y[rows].astype(np.float64)
        classes = y[rows].astype(np.intp) if classification else np.zeros(110, np.intp)
        args = (X, rows, target, classes, 2 if classification else 1, classification,
                *tree._routing(), prediction, permutations)
        fast = oob_tree_permutation_fast(*args)
        general = oob_tree_permutation(*args)
        for a, b in zip(fast, general, strict=True):
            np.testing.assert_array_equal(a, b)
        own = prediction[naive_apply(tree, X[rows])]
        expected = np.zeros(n_features)
        for r in range(2):
            for j in range(n_features):
                X_permuted = X[rows].copy()
                X_permuted[:, j] = X[rows][permutations[r, j], j]
                new = prediction[naive_apply(tree, X_permuted)]
                loss = ((new != target).astype(float) if classification
                        else (new - target) ** 2)
                base = (own != target).astype(float) if classification else (own - target) ** 2
                expected[j] += (loss - base).sum()
        np.testing.assert_allclose(fast[1], expected, rtol=1e-12, atol=1e-12)


def test_conditional_bins_of_a_feature_with_many_set_splits_are_its_decision_patterns():
    """A feature with hundreds of categorical splits in one tree (the bins' keys are
    renumbered only every 61 splits): a row's bin is the rank of its tuple of "goes
    right" decisions among the distinct tuples (a missing value's tuple all zeros),
    as when the keys were renumbered after every split; missing values then get a bin
    of their own after them."""
    rng = np.random.RandomState(6)
    X = np.column_stack([awkward_codes(rng, 3000), rng.randint(0, 4, 3000)])
    codes = np.nan_to_num(np.clip(X, -2, 90), nan=-1.0)
    y = np.sin(codes[:, 0]) + rng.normal(scale=0.3, size=3000)
    forest = RandomForestRegressor(n_estimators=1, bootstrap=False, random_state=0)
    ensemble = categorical_ensemble(as_ensemble(forest.fit(codes, y)), rng, share=0.8)
    tree = ensemble.trees[0]
    splits = np.flatnonzero((tree.children_left != LEAF) & (tree.feature == 0))
    assert (tree.operator[splits] == 2).sum() > 130  # two renumberings on the way
    rows = np.arange(0, 3000, 2)
    bins, n_bins = _bins(X, rows, 0, tree.children_left, tree.feature, tree.threshold,
                         tree.operator, tree.missing_go_to_left, tree.cat_bitsets)
    missing = np.isnan(X[rows, 0])
    decisions = np.array([[not np.isnan(X[i, 0]) and not naive_goes_left(tree, node, X[i, 0])
                           for node in splits] for i in rows], dtype=np.int8)
    _, expected = np.unique(decisions, axis=0, return_inverse=True)
    expected = expected.reshape(-1)
    n_keys = expected.max() + 1
    np.testing.assert_array_equal(bins[~missing], expected[~missing])
    assert missing.any() and (bins[missing] == n_keys).all() and n_bins == n_keys + 1
