"""Interventional TreeSHAP: Shapley values of a tree against a set of background rows.

For an explained row x and a background row z, the game's value of a feature set S is
the tree's output on the hybrid row taking S's features from x and the others from z;
the interventional SHAP value is the mean over the background of each pair's Shapley
values (Lundberg et al. 2020, doi:10.1038/s42256-019-0138-9, "Interventional Tree
SHAP").

Per-leaf decomposition (Lundberg et al. 2020, Methods; the decision patterns of
Woodelf, Nadel et al. 2025): a leaf with d distinct features on its path is reached by
the hybrid row iff, for each of them, the row whose value S picks satisfies all the
path's splits on it. With a (from x) and b (from z) the d-bit masks of the features
whose splits each row satisfies, the leaf's game is zero unless a | b holds every bit;
then A = a & ~b (features it needs from x) and B = ~a & b (from z) decide it: the leaf's
value v adds v (|A|-1)! |B|! / (|A|+|B|)! to each feature of A and
-v |A|! (|B|-1)! / (|A|+|B|)! to each of B. A leaf's values therefore depend on the
background only through how many background rows (with what weight) have each mask b:
the rows are grouped by mask once per leaf, and an explained row costs one pass over
the groups, or, for leaves with few features, one read of a table T[a] built once from
the groups (2^|b| entries per group, d numbers each). The two give bit-for-bit the same
numbers (the same terms added in the same group order), so the choice, made per leaf
from the number of rows, does not change any value.

With a non-identity output transform each pair carries its own weight (the ``shap``
package's rescaling, see :mod:`sapwood.importance._shap_interventional`), so a group's
weight is summed per explained row over the group's members: one pass over the groups
plus one addition per background row that can reach the leaf with x.
"""

import numpy as np

from ._numba import kernel
from ._shap import _node_masks
from ._traverse import LEAF

# Leaves with at most this many distinct path features may be tabulated (2^d x d
# numbers of scratch: 4096 x 12 at most).
TABLE_FEATURES = 12


@kernel
def shapley_coefficients(max_d):
    """``positive[n_a, n_b] = (n_a - 1)! n_b! / (n_a + n_b)!`` and ``negative[n_a, n_b]
    = n_a! (n_b - 1)! / (n_a + n_b)!`` for n_a, n_b <= ``max_d`` (zero where undefined):
    1 / (n_a C(n_a + n_b, n_a)) and 1 / (n_b C(n_a + n_b, n_b))."""
    choose = np.zeros((2 * max_d + 1, 2 * max_d + 1))
    for n in range(2 * max_d + 1):
        choose[n, 0] = 1.0
        for k in range(1, n + 1):
            choose[n, k] = choose[n - 1, k - 1] + (choose[n - 1, k] if k < n else 0.0)
    positive = np.zeros((max_d + 1, max_d + 1))
    negative = np.zeros((max_d + 1, max_d + 1))
    for n_a in range(max_d + 1):
        for n_b in range(max_d + 1):
            if n_a > 0:
                positive[n_a, n_b] = 1.0 / (n_a * choose[n_a + n_b, n_a])
            if n_b > 0:
                negative[n_a, n_b] = 1.0 / (n_b * choose[n_a + n_b, n_b])
    return positive, negative


@kernel
def _popcount(m):
    count = 0
    while m:
        m &= m - 1
        count += 1
    return count


@kernel
def _group(masks):
    """The background rows ordered by mask (stable) and the groups of equal masks: the
    order, each group's mask and its start in the order (CSR, n_groups + 1)."""
    order = np.argsort(masks, kind="mergesort")
    n = masks.shape[0]
    starts = np.empty(n + 1, dtype=np.intp)
    group_mask = np.empty(n, dtype=np.int64)
    n_groups = 0
    for k in range(n):
        m = masks[order[k]]
        if k == 0 or m != group_mask[n_groups - 1]:
            group_mask[n_groups] = m
            starts[n_groups] = k
            n_groups += 1
    starts[n_groups] = n
    return order, group_mask[:n_groups], starts[:n_groups + 1]


@kernel
def _leaf(x_masks, z_masks, weights, per_row, d, features, values, node, column,
          positive, negative, table, acc, phi):
    """Adds one leaf's interventional SHAP values of every explained row to ``phi``.

    ``x_masks`` / ``z_masks``: the explained / background rows' masks at the leaf;
    ``weights[r, z]`` each pair's weight (``per_row``) or ``weights[0, z]`` every row's.
    """
    full = (np.int64(1) << d) - 1
    order, group_mask, starts = _group(z_masks)
    n_groups = group_mask.shape[0]
    n_rows = x_masks.shape[0]
    group_weight = np.zeros(n_groups)
    if not per_row:
        for g in range(n_groups):
            for k in range(starts[g], starts[g + 1]):
                group_weight[g] += weights[0, order[k]]
    # A table costs 2^|b| entries per group once (and 2^d d to clear); a pass over the
    # groups costs n_groups per row.
    tabulate = False
    if not per_row and d <= TABLE_FEATURES:
        build = (1 << d) * d
        for g in range(n_groups):
            build += (1 << _popcount(group_mask[g])) * d
        tabulate = build < n_rows * n_groups
    if tabulate:
        size = 1 << d
        table[:size, :d] = 0.0
        for g in range(n_groups):
            b = group_mask[g]
            needed = full & ~b
            n_a = d - _popcount(b)
            # Every a holding ~b: a = ~b | s for s a subset of b; B = b & ~s.
            s = b
            while True:
                a = needed | s
                from_z = b & ~s
                n_b = _popcount(from_z)
                if n_a > 0 or n_b > 0:
                    plus = group_weight[g] * positive[n_a, n_b]
                    minus = group_weight[g] * negative[n_a, n_b]
                    for k in range(d):
                        if (needed >> k) & 1:
                            table[a, k] += plus
                        elif (from_z >> k) & 1:
                            table[a, k] -= minus
                if s == 0:
                    break
                s = (s - 1) & b
        for r in range(n_rows):
            a = x_masks[r]
            for k in range(d):
                unit = table[a, k]
                for w in range(values.shape[1]):
                    phi[r, features[k], column + w] += unit * values[node, w]
        return
    for r in range(n_rows):
        a = x_masks[r]
        missing = full & ~a  # needed from z: every matching group has them all
        n_b = d - _popcount(a)
        acc[:d] = 0.0
        for g in range(n_groups):
            b = group_mask[g]
            if (b & missing) != missing:
                continue
            weight = group_weight[g]
            if per_row:
                weight = 0.0
                for k in range(starts[g], starts[g + 1]):
                    weight += weights[r, order[k]]
            needed = full & ~b
            n_a = d - _popcount(b)
            if n_a == 0 and n_b == 0:
                continue
            plus = weight * positive[n_a, n_b]
            minus = weight * negative[n_a, n_b]
            for k in range(d):
                if (needed >> k) & 1:
                    acc[k] += plus
                elif (missing >> k) & 1:
                    acc[k] -= minus
        for k in range(d):
            for w in range(values.shape[1]):
                phi[r, features[k], column + w] += acc[k] * values[node, w]


@kernel
def interventional_tree(X, Z, weights, per_row, children_left, children_right, feature,
                        threshold, operator, missing_go_to_left, values, root, column,
                        node_bit, node_first, leaf_of_node, leaf_start, leaf_features,
                        max_depth, positive, negative, phi):
    """Adds one tree's interventional SHAP values of every row of ``X`` against the
    background ``Z`` to ``phi`` (n_rows, n_features, n_columns): tree ``root`` (global
    node ids) adds ``values[leaf]`` (already scaled by how the trees combine) to columns
    ``column ..``; ``node_bit``, ``node_first``, ``leaf_start`` and ``leaf_features``
    come from :func:`sapwood._kernels._shap.leaf_paths` and ``leaf_of_node[node -
    root]`` is a leaf's index there. ``weights`` as in :func:`_leaf`; ``positive`` /
    ``negative`` from :func:`shapley_coefficients` (at least the tree's largest d).

    One walk down every branch, carrying every explained and background row's mask of
    satisfied path features (a node's masks are made from its parent's when it is taken
    from the stack); at each leaf, :func:`_leaf`. Time: O(nodes (n + m)) for the masks,
    plus per leaf O(m log m) to group the m background rows and, per explained row,
    O(groups + d) (or O(d) from a table); with per-pair weights, plus the background
    rows that can reach the leaf with x.
    """
    x_masks = np.empty((max_depth + 1, X.shape[0]), dtype=np.int64)
    z_masks = np.empty((max_depth + 1, Z.shape[0]), dtype=np.int64)
    width = min(max_depth, TABLE_FEATURES)
    table = np.empty((1 << width, width))
    acc = np.empty(max_depth + 1)
    stack = np.empty((max_depth + 2, 3), dtype=np.intp)
    stack[0, 0], stack[0, 1], stack[0, 2] = root, 0, -1
    top = 1
    while top > 0:
        top -= 1
        node, level, parent = stack[top, 0], stack[top, 1], stack[top, 2]
        _node_masks(X, children_left, feature, threshold, operator, missing_go_to_left,
                    root, node_bit, node_first, x_masks, node, level, parent)
        _node_masks(Z, children_left, feature, threshold, operator, missing_go_to_left,
                    root, node_bit, node_first, z_masks, node, level, parent)
        if children_left[node] != LEAF:
            stack[top, 0], stack[top, 1], stack[top, 2] = children_right[node], level + 1, node
            stack[top + 1, 0], stack[top + 1, 1], stack[top + 1, 2] = (
                children_left[node], level + 1, node)
            top += 2
            continue
        leaf = leaf_of_node[node - root]
        start = leaf_start[leaf]
        d = leaf_start[leaf + 1] - start
        if d > 0:
            _leaf(x_masks[level], z_masks[level], weights, per_row, d,
                  leaf_features[start:start + d], values, node, column, positive, negative,
                  table, acc, phi)
