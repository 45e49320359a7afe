"""The boosted one-pass kernel (``_kernels/_boosted_permutation.py``) against a naive
reference: every (row, slot) sum equals walking each tree with the slot's feature
replaced and adding the leaves in tree order, in the sum's dtype. Random trees mix
``<=``, ``<`` and categorical splits, missing-value directions, infinite thresholds
and single-leaf trees; the data have missing and infinite values. (Run under
NUMBA_BOUNDSCHECK=1 by ``make test-boundscheck`` too.)"""

import numpy as np
import pytest

from sapwood._kernels._boosted_permutation import boosted_layout, boosted_permuted_totals
from sapwood._kernels._permuted_traversal import make_fast, pack_nodes
from sapwood._kernels._traverse import LEAF, OP_LE, OP_LT
from tests.reference.naive_boosted import naive_permuted_sums, random_trees, tied_data


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case", ["plain", "missing", "categorical"])
def test_one_pass_equals_walking_every_permuted_row(case, dtype):
    rng = np.random.default_rng(["plain", "missing", "categorical"].index(case))
    n_features, m, n_repeats = 5, 37, 3  # 37 rows: two full blocks and a part
    special = case != "plain"
    trees = random_trees(rng, 23, n_features, 5, case == "categorical", special)
    left, right, feature, threshold, missing_left, operator, bitsets, roots = trees
    X = tied_data(rng, m, n_features, special)
    # Slots ordered by feature (the kernel's layout); feature 4 has none.
    slot_feature = np.repeat(np.arange(n_features - 1), n_repeats)
    permuted = np.stack([X[rng.permutation(m), f] for f in slot_feature], axis=1)
    feature_slot_ptr = np.searchsorted(slot_feature, np.arange(n_features + 1))
    node_value = np.round(rng.normal(size=left.shape[0]), 3).astype(dtype)
    start = np.array([0.3], dtype=dtype)
    expected = naive_permuted_sums(X, permuted, slot_feature, trees, node_value, start)

    nodes = pack_nodes(left, right, feature, missing_left, operator)
    packed_threshold = threshold.copy()
    packed_operator = operator.copy()
    if case == "plain":  # finite data: the fast layout, as the evaluator makes it
        make_fast(nodes, packed_threshold, packed_operator)
    records, cut, root_code, depth = boosted_layout(nodes, packed_threshold,
                                                    packed_operator, roots)
    out = np.full((m, slot_feature.shape[0]), np.nan, dtype=dtype)
    for lo, hi in [(0, 20), (20, m)]:  # two row ranges, as two threads take them
        boosted_permuted_totals(X, permuted, feature_slot_ptr.astype(np.intp), records, cut,
                                packed_threshold, packed_operator, bitsets, root_code, depth,
                                node_value, start, lo, hi, out)
    np.testing.assert_array_equal(out, expected)


def test_layout_codes_leaves_and_depth():
    # A root that is a leaf, and a tree of depth 2.
    left = np.array([LEAF, 2, LEAF, 4, LEAF, LEAF], dtype=np.intp)
    right = np.array([LEAF, 3, LEAF, 5, LEAF, LEAF], dtype=np.intp)
    feature = np.array([-2, 0, -2, 1, -2, -2], dtype=np.intp)
    threshold = np.array([-2.0, 0.5, -2.0, np.inf, -2.0, -2.0])
    operator = np.array([OP_LE, OP_LT, OP_LE, OP_LE, OP_LE, OP_LE], dtype=np.uint8)
    nodes = pack_nodes(left, right, feature, np.zeros(6, dtype=np.uint8), operator)
    records, cut, root_code, depth = boosted_layout(nodes, threshold, operator,
                                                    np.array([0, 1], dtype=np.intp))
    assert root_code.tolist() == [~0, 1]
    assert depth == 2
    assert records[1, :2].tolist() == [~2, 3]
    assert records[3, :2].tolist() == [~4, ~5]
    assert cut[1] == 0.5  # x < 0.5
    assert records[3, 3] & 4  # x <= inf has no cut: routed by goes_left
