"""The leaf-mask kernel (``_kernels/_boosted_masks.py``) against the naive reference
of the re-routing kernel's tests: every (row, slot) sum equals walking each tree with
the slot's feature replaced and adding the leaves in tree order, in the sum's dtype.
Random trees mix ``<=`` and ``<`` splits with tied and infinite thresholds, missing
values' directions and single-leaf trees; the data have missing and infinite values.
Categorical features have categories inside and past their sets' words, negative and
fractional values. Trees the masks cannot state (``<= inf``, a feature split both as a
number and as a category, more than 64 leaves, rank tables over the budget) are
refused. (Run under NUMBA_BOUNDSCHECK=1 too.)"""

import numpy as np
import pytest

from sapwood._kernels._boosted_masks import mask_layout, masked_permuted_totals, value_codes
from sapwood._kernels._boosted_permutation import boosted_layout
from sapwood._kernels._permuted_traversal import make_fast, pack_nodes
from sapwood._kernels._traverse import LEAF, OP_CAT, OP_LE, OP_LT
from tests.reference.naive_boosted import naive_permuted_sums, random_trees, tied_data


def _layout(trees, node_value, fast, budget=2**30):
    left, right, feature, threshold, missing_left, operator, bitsets, roots = trees
    nodes = pack_nodes(left, right, feature, missing_left, operator)
    threshold, operator = threshold.copy(), operator.copy()
    if fast:
        make_fast(nodes, threshold, operator)
    records, cut, root_code, _ = boosted_layout(nodes, threshold, operator, roots)
    n_features = int(feature.max()) + 1
    return mask_layout(records, cut, operator, threshold, bitsets, root_code, node_value,
                       n_features, budget)


def _totals(layout, X, permuted, slot_feature, feature_slot_ptr, start, ranges):
    ok, codes, tables = layout
    assert ok
    X_code = np.empty(X.shape, dtype=np.uint32)
    value_codes(X, np.arange(X.shape[1]), codes, X_code)
    permuted_code = np.empty(permuted.shape, dtype=np.uint32)
    value_codes(permuted, slot_feature, codes, permuted_code)
    out = np.full(permuted.shape, np.nan, dtype=start.dtype)
    own = np.full(X.shape[0], np.nan, dtype=start.dtype)
    for lo, hi in ranges:  # row ranges, as threads take them
        masked_permuted_totals(X_code, permuted_code, feature_slot_ptr, *tables, start, lo,
                               hi, out, own)
    return out, own


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case", ["plain", "missing", "deep", "categorical"])
def test_masks_equal_walking_every_permuted_row(case, dtype):
    rng = np.random.default_rng(["plain", "missing", "deep", "categorical"].index(case) + 10)
    n_features, n_repeats = 5, 3
    m = 150 if case == "deep" else 37  # blocks of 64 rows: full ones and a part
    special = case in ("missing", "categorical")
    depth = 6 if case == "deep" else 5  # at most 64 leaves
    categorical = {1, 3} if case == "categorical" else False
    trees = random_trees(rng, 23, n_features, depth, categorical, False)
    if special:  # infinite cuts of '<' splits (a '<= inf' has none: see below)
        threshold, operator = trees[3], trees[5]
        inner = np.flatnonzero((trees[0] != LEAF) & (operator == OP_LT))
        threshold[rng.choice(inner, 4, replace=False)] = [np.inf, -np.inf, np.inf, -np.inf]
    X = tied_data(rng, m, n_features, special).astype(dtype)  # float32: XGBoost's data
    if case == "categorical":  # categories past the sets' words, negative and fractional
        for f in categorical:
            X[:, f] = np.where(np.isnan(X[:, f]), np.nan,
                               rng.choice([0, 1, 2, 5, 31, 32, 40, 63, 64, 70, -1, 2.5],
                                          size=m))
    slot_feature = np.repeat(np.arange(n_features - 1), n_repeats)  # feature 4: no slots
    permuted = np.stack([X[rng.permutation(m), f] for f in slot_feature], axis=1)
    feature_slot_ptr = np.searchsorted(slot_feature, np.arange(n_features + 1))
    node_value = np.round(rng.normal(size=trees[0].shape[0]), 3).astype(dtype)
    start = np.array([0.3], dtype=dtype)
    expected = naive_permuted_sums(X, permuted, slot_feature, trees, node_value, start)

    layout = _layout(trees, node_value, fast=case in ("plain", "deep"))
    out, own = _totals(layout, X, permuted, slot_feature, feature_slot_ptr, start,
                       [(0, 20), (20, m)])
    np.testing.assert_array_equal(out, expected)
    # Each row's own sum, found on the way: the naive walk of the row itself.
    unpermuted = naive_permuted_sums(X, X[:, :1], np.zeros(1, dtype=np.intp), trees,
                                     node_value, start)[:, 0]
    assert own.dtype == dtype
    np.testing.assert_array_equal(own, unpermuted)


def _stump_trees(operator, threshold, depth):
    """One complete tree of ``depth`` levels splitting feature 0 everywhere."""
    left, right, feature, thresholds, operators = [], [], [], [], []

    def grow(level):
        node = len(left)
        for column in (left, right, feature, thresholds, operators):
            column.append(0)
        if level == depth:
            left[node] = right[node] = LEAF
            feature[node], thresholds[node], operators[node] = -2, -2.0, OP_LE
            return node
        feature[node], thresholds[node], operators[node] = 0, threshold, operator
        left[node] = grow(level + 1)
        right[node] = grow(level + 1)
        return node

    grow(0)
    n = len(left)
    return (np.array(left, dtype=np.intp), np.array(right, dtype=np.intp),
            np.array(feature, dtype=np.intp), np.array(thresholds),
            np.zeros(n, dtype=np.uint8), np.array(operators, dtype=np.uint8),
            np.zeros(1, dtype=np.uint32), np.array([0], dtype=np.intp))


def test_layout_refuses_what_masks_cannot_state():
    values = np.zeros(2**8)
    assert _layout(_stump_trees(OP_LE, 0.5, 6), values, fast=False)[0]  # 64 leaves
    assert not _layout(_stump_trees(OP_LE, 0.5, 7), values, fast=False)[0]  # 128
    assert not _layout(_stump_trees(OP_LE, np.inf, 2), values, fast=False)[0]  # <= inf
    assert not _layout(_stump_trees(OP_LE, 0.5, 2), values, fast=False, budget=2)[0]
    rng = np.random.default_rng(3)
    mixed = random_trees(rng, 10, 3, 4, True, False)  # features split both ways
    assert not _layout(mixed, np.zeros(mixed[0].shape[0]), fast=False)[0]


def test_layout_refuses_more_than_256_classes_of_categories():
    # 63 splits on one feature, each with its own random set of 320 categories: the
    # categories fall into hundreds of classes (the ranks are bytes); 8 categories
    # into at most 10.
    rng = np.random.default_rng(4)
    for n_words, ok in ((10, False), (1, True)):
        trees = list(_stump_trees(OP_CAT, 0.0, 6))
        splits = np.flatnonzero(trees[0] != LEAF)
        bitsets = []
        for k in splits:
            trees[3][k] = float(len(bitsets))
            words = rng.integers(0, 2**32, size=n_words, dtype=np.uint32)
            words[-1] &= np.uint32(0xFF) if n_words == 1 else words[-1]
            bitsets.extend([n_words, *words])
        trees[6] = np.array(bitsets, dtype=np.uint32)
        assert _layout(tuple(trees), np.zeros(trees[0].shape[0]), fast=False)[0] == ok
