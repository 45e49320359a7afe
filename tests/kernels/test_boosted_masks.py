"""The leaf-mask kernel (``_kernels/_boosted_masks.py``) against the naive reference
of the re-routing kernel's tests: every (row, slot) sum equals walking each tree with
the slot's feature replaced and adding the leaves in tree order, in the sum's dtype.
Random trees mix ``<=`` and ``<`` splits with tied and infinite thresholds, missing
values' directions and single-leaf trees; the data have missing and infinite values.
Trees the masks cannot state (a category set, ``<= inf``, more than 64 leaves, rank
tables over the budget) are refused. (Run under NUMBA_BOUNDSCHECK=1 too.)"""

import numpy as np
import pytest

from sapwood._kernels._boosted_masks import mask_layout, masked_permuted_totals, value_codes
from sapwood._kernels._boosted_permutation import boosted_layout
from sapwood._kernels._permuted_traversal import make_fast, pack_nodes
from sapwood._kernels._traverse import LEAF, OP_LE, OP_LT
from tests.reference.naive_boosted import naive_permuted_sums, random_trees, tied_data


def _layout(trees, node_value, fast, budget=2**30):
    left, right, feature, threshold, missing_left, operator, bitsets, roots = trees
    nodes = pack_nodes(left, right, feature, missing_left, operator)
    threshold, operator = threshold.copy(), operator.copy()
    if fast:
        make_fast(nodes, threshold, operator)
    records, cut, root_code, _ = boosted_layout(nodes, threshold, operator, roots)
    n_features = int(feature.max()) + 1
    return mask_layout(records, cut, root_code, node_value, n_features, budget)


def _totals(layout, X, permuted, slot_feature, feature_slot_ptr, start, ranges):
    ok, cuts_ptr, model_cuts, tables = layout
    assert ok
    X_code = np.empty(X.shape, dtype=np.uint32)
    value_codes(X, np.arange(X.shape[1]), cuts_ptr, model_cuts, X_code)
    permuted_code = np.empty(permuted.shape, dtype=np.uint32)
    value_codes(permuted, slot_feature, cuts_ptr, model_cuts, permuted_code)
    out = np.full(permuted.shape, np.nan, dtype=start.dtype)
    for lo, hi in ranges:  # row ranges, as threads take them
        masked_permuted_totals(X_code, permuted_code, feature_slot_ptr, *tables, start, lo,
                               hi, out)
    return out


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case", ["plain", "missing", "deep"])
def test_masks_equal_walking_every_permuted_row(case, dtype):
    rng = np.random.default_rng(["plain", "missing", "deep"].index(case) + 10)
    n_features, n_repeats = 5, 3
    m = 150 if case == "deep" else 37  # blocks of 64 rows: full ones and a part
    special = case == "missing"
    depth = 6 if case == "deep" else 5  # at most 64 leaves
    trees = random_trees(rng, 23, n_features, depth, False, False)
    if special:  # infinite cuts of '<' splits (a '<= inf' has none: see below)
        threshold, operator = trees[3], trees[5]
        inner = np.flatnonzero((trees[0] != LEAF) & (operator == OP_LT))
        threshold[rng.choice(inner, 4, replace=False)] = [np.inf, -np.inf, np.inf, -np.inf]
    X = tied_data(rng, m, n_features, special).astype(dtype)  # float32: XGBoost's data
    slot_feature = np.repeat(np.arange(n_features - 1), n_repeats)  # feature 4: no slots
    permuted = np.stack([X[rng.permutation(m), f] for f in slot_feature], axis=1)
    feature_slot_ptr = np.searchsorted(slot_feature, np.arange(n_features + 1))
    node_value = np.round(rng.normal(size=trees[0].shape[0]), 3).astype(dtype)
    start = np.array([0.3], dtype=dtype)
    expected = naive_permuted_sums(X, permuted, slot_feature, trees, node_value, start)

    layout = _layout(trees, node_value, fast=not special)
    out = _totals(layout, X, permuted, slot_feature, feature_slot_ptr, start,
                  [(0, 20), (20, m)])
    np.testing.assert_array_equal(out, expected)


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
    categorical = random_trees(rng, 10, 3, 4, True, False)
    assert not _layout(categorical, np.zeros(categorical[0].shape[0]), fast=False)[0]
