"""Interventional TreeSHAP: Shapley values of a tree against a set of background rows.

For an explained row x and a background row z, the game's value of a feature set S is
the tree's output on the hybrid row taking S's features from x and the others from z;
the interventional SHAP value is the mean over the background of each pair's Shapley
values (Lundberg et al. 2020, doi:10.1038/s42256-019-0138-9, "Interventional Tree
SHAP").

Per-leaf decomposition (Lundberg et al. 2020, Methods; the per-leaf decision patterns
of Woodelf, Nadel & Wettenstein, AAAI 2026, arXiv:2511.09376): a leaf with d distinct
features on its path is reached by the hybrid row iff, for each of them, the row whose
value S picks satisfies all the path's splits on it. With a (from x) and b (from z) the
d-bit masks of the features whose splits each row satisfies, the leaf's game is zero
unless a | b holds every bit; then A = a & ~b (features it needs from x) and B = ~a & b
(from z) decide it: the leaf's value v adds v (|A|-1)! |B|! / (|A|+|B|)! to each
feature of A and -v |A|! (|B|-1)! / (|A|+|B|)! to each of B. A leaf's values therefore
depend on the background only through how many background rows (with what weight)
have each mask b, and on the explained row only through a. So at each leaf the
background rows are grouped by mask, the explained rows too, and each distinct
explained mask is matched with the groups once: the work shared across background
rows, and across explained rows alike. A leaf then costs O(n + m + kinds x groups x d)
for n explained and m background rows, where kinds <= min(n, 2^d) and groups <=
min(m, 2^d): linear in m and n for a fixed depth (Woodelf tabulates the 3^d pairs of
patterns instead; here only the pairs that occur are met).

With a non-identity output transform each pair carries its own weight (the ``shap``
package's rescaling, see :mod:`sapwood.importance._engine._shap_interventional`), so a group's
weight is summed per explained row over the group's members: one addition per
background row that can reach the leaf with x.
"""

import numpy as np

from ._arrays import empty, full, zeros
from ._numba import kernel
from ._shap import node_masks
from ._traverse import LEAF


@kernel
def shapley_coefficients(max_d):
    """``positive[n_a, n_b] = (n_a - 1)! n_b! / (n_a + n_b)!`` and ``negative[n_a, n_b]
    = n_a! (n_b - 1)! / (n_a + n_b)!`` for n_a, n_b <= ``max_d`` (zero where undefined):
    1 / (n_a C(n_a + n_b, n_a)) and 1 / (n_b C(n_a + n_b, n_b))."""
    choose = zeros((2 * max_d + 1, 2 * max_d + 1), np.float64)
    for n in range(2 * max_d + 1):
        choose[n, 0] = 1.0
        for k in range(1, n + 1):
            choose[n, k] = choose[n - 1, k - 1] + (choose[n - 1, k] if k < n else 0.0)
    positive = zeros((max_d + 1, max_d + 1), np.float64)
    negative = zeros((max_d + 1, max_d + 1), np.float64)
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
def _distinct(masks, dense, slot, which, distinct):
    """Tells the distinct masks of ``masks`` apart: writes each entry's index among them
    to ``which`` and them to ``distinct``, returns their number. ``dense``: with the
    ``slot`` array of 2^d entries (all -1, left so), in the order of first appearance;
    else sorted."""
    n = masks.shape[0]
    count = 0
    if dense:
        for k in range(n):
            m = masks[k]
            if slot[m] < 0:
                slot[m] = count
                distinct[count] = m
                count += 1
            which[k] = slot[m]
        for j in range(count):
            slot[distinct[j]] = -1
        return count
    order = np.argsort(masks, kind="mergesort")
    for k in range(n):
        m = masks[order[k]]
        if count == 0 or m != distinct[count - 1]:
            distinct[count] = m
            count += 1
        which[order[k]] = count - 1
    return count


@kernel
def _scratch(n_rows, n_background, max_d, dense_features):
    """The buffers :func:`_leaf` reuses from leaf to leaf: O(n + m + 2^min(d, dense))."""
    return (full(1 << min(max_d, dense_features), -1, np.intp),
            empty(n_background, np.intp), empty(n_background, np.int64),
            empty(n_background + 1, np.intp), empty(n_background, np.intp),
            empty(n_rows, np.intp), empty(n_rows, np.int64),
            empty(n_rows + 1, np.intp), empty(n_rows, np.intp),
            empty(n_background, np.intp), empty(max_d, np.float64), empty(n_background, np.float64))


@kernel
def _by_group(group_of, n_groups, starts, members):
    """The entries of ``group_of`` (a group per entry) listed by group: CSR ``starts``,
    ``members`` in entry order within a group."""
    starts[:n_groups + 1] = 0
    for k in range(group_of.shape[0]):
        starts[group_of[k] + 1] += 1
    for g in range(n_groups):
        starts[g + 1] += starts[g]
    for k in range(group_of.shape[0]):
        g = group_of[k]
        members[starts[g]] = k
        starts[g] += 1
    for g in range(n_groups, 0, -1):
        starts[g] = starts[g - 1]
    starts[0] = 0


@kernel
def _leaf(x_masks, z_masks, weights, per_row, d, dense, features, values, node, column,
          positive, negative, slot, group_of, group_mask, starts, members, kind_of,
          kind_mask, kind_start, kind_rows, match, acc, row_weight, phi):
    """Adds one leaf's interventional SHAP values of every explained row to ``phi``.

    ``x_masks`` / ``z_masks``: the explained / background rows' masks at the leaf;
    ``weights[r, z]`` each pair's weight (``per_row``) or ``weights[0, z]`` every row's;
    ``dense``: tell masks apart with the dense ``slot`` array; the rest scratch from
    :func:`_scratch`. The background rows are grouped by mask, and so are the explained
    rows: each distinct explained mask a finds the groups that can reach the leaf with
    it once (b holding every bit a lacks) and, without per-row weights, its d unit
    values once. A row's numbers depend only on its mask, the groups and their order
    (first appearance in the background), never on the other rows explained with it.
    """
    full = (np.int64(1) << d) - 1
    n_groups = _distinct(z_masks, dense, slot, group_of, group_mask)
    _by_group(group_of[:z_masks.shape[0]], n_groups, starts, members)
    n_kinds = _distinct(x_masks, dense, slot, kind_of, kind_mask)
    _by_group(kind_of[:x_masks.shape[0]], n_kinds, kind_start, kind_rows)
    for j in range(n_kinds):
        missing = full & ~kind_mask[j]
        n_match = 0
        for g in range(n_groups):
            b = group_mask[g]
            if (b & missing) == missing and not (b == full and missing == 0):
                match[n_match] = g
                n_match += 1
        if n_match == 0:
            continue
        matching = match[:n_match]
        if not per_row:
            acc[:d] = 0.0
            for i in range(n_match):
                g = matching[i]
                row_weight[i] = 0.0
                for k in range(starts[g], starts[g + 1]):
                    row_weight[i] += weights[0, members[k]]
            _add_units(acc, d, full, missing, group_mask, matching, row_weight, positive,
                       negative)
        for i in range(kind_start[j], kind_start[j + 1]):
            r = kind_rows[i]
            if per_row:
                acc[:d] = 0.0
                for q in range(n_match):
                    g = matching[q]
                    row_weight[q] = 0.0
                    for k in range(starts[g], starts[g + 1]):
                        row_weight[q] += weights[r, members[k]]
                _add_units(acc, d, full, missing, group_mask, matching, row_weight,
                           positive, negative)
            for k in range(d):
                for w in range(values.shape[1]):
                    phi[r, features[k], column + w] += acc[k] * values[node, w]


@kernel
def _add_units(acc, d, full, missing, group_mask, matching, weight, positive, negative):
    """Adds, for an explained mask lacking ``missing``, each matching group's unit
    contributions (leaf value 1, the group's ``weight[i]``) to ``acc``: A = ~b, the
    features the leaf needs from x, B = ``missing``, what it needs from z."""
    n_b = _popcount(missing)
    for i in range(matching.shape[0]):
        b = group_mask[matching[i]]
        needed = full & ~b
        n_a = d - _popcount(b)
        plus = weight[i] * positive[n_a, n_b]
        minus = weight[i] * negative[n_a, n_b]
        for k in range(d):
            if (needed >> k) & 1:
                acc[k] += plus
            elif (missing >> k) & 1:
                acc[k] -= minus


@kernel
def interventional_tree(X, Z, weights, per_row, children_left, feature, threshold, operator,
                        missing_go_to_left, cat_bitsets, values, root, column, walk, node_bit,
                        node_first, leaf_start, leaf_features, max_depth, positive, negative,
                        dense_features, phi):
    """Adds one tree's interventional SHAP values of every row of ``X`` against the
    background ``Z`` to ``phi`` (n_rows, n_features, n_columns): tree ``root`` (global
    node ids) adds ``values[leaf]`` (already scaled by how the trees combine) to columns
    ``column ..``; ``walk`` to ``leaf_features`` come from
    :func:`sapwood._kernels._shap.leaf_paths`. ``weights`` as in :func:`_leaf`;
    ``positive`` / ``negative`` from :func:`shapley_coefficients` (at least the tree's
    largest d).

    ``leaf_paths``' walk replayed, carrying every explained and background row's mask
    of satisfied path features (:func:`sapwood._kernels._shap.node_masks`); at each
    leaf, :func:`_leaf`. Time: O(nodes (n + m)) for the masks of n explained and m
    background rows, plus per leaf O(n + m) to group both (O(.. log ..) past
    ``dense_features``), O(kinds x groups) to match the k distinct explained masks with
    the g background ones, O(matches x d) for their units and O(n d) to add them; with
    per-pair weights, plus per row the background rows that can reach the leaf with it.
    """
    x_masks = empty((max_depth + 1, X.shape[0]), np.int64)
    z_masks = empty((max_depth + 1, Z.shape[0]), np.int64)
    scratch = _scratch(X.shape[0], Z.shape[0], max_depth, dense_features)
    leaf = 0
    for step in range(walk.shape[0]):
        node, level = node_masks(X, children_left, feature, threshold, operator,
                                 missing_go_to_left, cat_bitsets, root, node_bit, node_first,
                                 walk[step], x_masks)
        node_masks(Z, children_left, feature, threshold, operator, missing_go_to_left,
                   cat_bitsets, root, node_bit, node_first, walk[step], z_masks)
        if children_left[node] != LEAF:
            continue
        start = leaf_start[leaf]
        d = leaf_start[leaf + 1] - start
        if d > 0:
            _leaf(x_masks[level], z_masks[level], weights, per_row, d, d <= dense_features,
                  leaf_features[start:start + d], values, node, column, positive, negative,
                  *scratch, phi)
        leaf += 1
