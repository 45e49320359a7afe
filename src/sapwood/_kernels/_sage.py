"""SAGE's imputed outputs: every coalition along a feature order in one walk per tree.

The permutation estimator of SAGE (:mod:`sapwood.importance._sage`) needs, for a row x,
an order of its features and every background row z, the model's raw output on the
hybrid rows h_k = (x on the first k features of the order, z on the others), for
k = 0 .. p. A tree sends h_k down a path that reads x at a node whose feature is among
the first k and z at the others; where x and z go the same way the coalition does not
matter. So one walk per (x, z, tree) finds all p + 1 leaves: it carries the interval of
steps [first, last) that reach the current node, and at a node where x and z part, on
feature j at place r of the order, the steps k <= r follow z and the steps k > r follow
x (an interval that lies on one side is not split). A tree gives at most p + 1 leaves
and the nodes above the first parting are walked once for all of them, instead of p + 1
walks of stacked hybrid rows through every tree.

Each hybrid row's sum starts from ``init`` and adds its leaf's values tree by tree, in
tree order and in ``init``'s dtype (float32 sums round after every addition, as
XGBoost adds its trees), as :func:`sapwood._kernels._permuted_sums.sum_leaf_values` sums
a routed row: the same sums as routing the stacked hybrid rows.
"""

import numpy as np

from ._arrays import empty, zeros
from ._numba import kernel
from ._traverse import LEAF, goes_left


@kernel
def node_directions(X, children_left, feature, threshold, missing_go_to_left, operator,
                    cat_bitsets, lo, hi, out):
    """``out[i, node]`` = 1 when row ``i`` of ``X`` (i in [lo, hi)) goes left at the split
    ``node`` (any node of the packed trees), else 0; 0 at leaves."""
    for i in range(lo, hi):
        for node in range(children_left.shape[0]):
            if children_left[node] == LEAF:
                out[i, node] = 0
            elif goes_left(X[i, feature[node]], threshold[node], operator[node],
                           missing_go_to_left[node], cat_bitsets):
                out[i, node] = 1
            else:
                out[i, node] = 0


@kernel
def background_sets(background_left, n_words):
    """Per node the set of background rows going left, as bits: row b is bit ``b % 64``
    of word ``b // 64`` of ``out[node]`` (``background_left`` node-major, (n_nodes,
    n_background), from :func:`node_directions`)."""
    n_nodes, n_background = background_left.shape
    out = zeros((n_nodes, n_words), np.uint64)
    for node in range(n_nodes):
        for b in range(n_background):
            if background_left[node, b] != 0:
                out[node, b >> 6] |= np.uint64(1) << np.uint64(b & 63)
    return out


@kernel
def _count(bits):
    """The number of bits set in a uint64 (SWAR)."""
    bits = bits - ((bits >> np.uint64(1)) & np.uint64(0x5555555555555555))
    bits = (bits & np.uint64(0x3333333333333333)) + ((bits >> np.uint64(2))
                                                     & np.uint64(0x3333333333333333))
    bits = (bits + (bits >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return np.intp((bits * np.uint64(0x0101010101010101)) >> np.uint64(56))


@kernel
def coalition_totals(x_left, rank, left_sets, everyone, children, feature, roots,
                     node_values, tree_column, capacity, lo, hi, out):
    """Fill ``out[k, i]`` (shape (p + 1, n_rows, n_columns)) for rows ``i`` in [lo, hi):
    the sum over the background rows and the trees of the leaf values the hybrid rows
    of step k reach (each tree's leaf row of ``node_values`` at columns
    ``tree_column[t]`` on), for a model whose mean over the background is taken of
    these sums (a forest's mean, a boosted model's identity link).

    The background rows walk together: a walk carries a node, an interval of steps
    [first, last) and the set of background rows (``everyone``'s bits to start with)
    that reach the node with them, so the rows that part from x at the same nodes are
    walked once. At a node on feature j, the steps k <= rank[i, j] read the background
    rows, which split by ``left_sets[node]`` (:func:`background_sets`); the later steps
    follow x with the whole set. A leaf adds its values times the set's size.
    ``capacity``: pending walks at most (the deepest tree's depth times 2, plus 1)."""
    n_steps = rank.shape[1] + 1
    n_words = everyone.shape[0]
    width = node_values.shape[1]
    stack_node = empty(capacity, np.intp)
    stack_first = empty(capacity, np.intp)
    stack_last = empty(capacity, np.intp)
    stack_set = empty((capacity, n_words), np.uint64)
    current = empty(n_words, np.uint64)
    for i in range(lo, hi):
        for k in range(n_steps):
            for c in range(out.shape[2]):
                out[k, i, c] = 0.0
        for t in range(roots.shape[0]):
            column = tree_column[t]
            stack_node[0] = roots[t]
            stack_first[0] = 0
            stack_last[0] = n_steps
            for w in range(n_words):
                stack_set[0, w] = everyone[w]
            top = 1
            while top > 0:
                top -= 1
                node = stack_node[top]
                first = stack_first[top]
                last = stack_last[top]
                for w in range(n_words):
                    current[w] = stack_set[top, w]
                while children[node, 0] != LEAF:
                    x_child = children[node, 1 - np.intp(x_left[i, node])]
                    # Steps k > rank know the feature: they follow x.
                    known = rank[i, feature[node]] + 1
                    if first >= known:
                        node = x_child
                        continue
                    if last > known:
                        stack_node[top] = x_child
                        stack_first[top] = known
                        stack_last[top] = last
                        for w in range(n_words):
                            stack_set[top, w] = current[w]
                        top += 1
                        last = known
                    # The background rows decide: those going left, then those going
                    # right (pushed), each when there are any.
                    any_left = False
                    any_right = False
                    for w in range(n_words):
                        going = current[w] & left_sets[node, w]
                        any_left |= going != 0
                        any_right |= (current[w] & ~left_sets[node, w]) != 0
                    if any_right:
                        if any_left:
                            stack_node[top] = children[node, 1]
                            stack_first[top] = first
                            stack_last[top] = last
                            for w in range(n_words):
                                stack_set[top, w] = current[w] & ~left_sets[node, w]
                            top += 1
                            for w in range(n_words):
                                current[w] &= left_sets[node, w]
                            node = children[node, 0]
                        else:
                            node = children[node, 1]
                    else:
                        node = children[node, 0]
                count = 0
                for w in range(n_words):
                    count += _count(current[w])
                for k in range(first, last):
                    for c in range(width):
                        out[k, i, column + c] += node_values[node, c] * count


@kernel
def coalition_sums(x_left, rank, background_left, children, feature, roots, node_values,
                   tree_column, init, lo, hi, out):
    """Fill ``out[k, i, b]`` (shape (p + 1, n_rows, n_background, len(init))) for rows
    ``i`` in [lo, hi): the sum of the trees' values (``init`` plus, per tree t, its leaf's
    row of ``node_values`` added at columns ``tree_column[t]`` on) for the hybrid row
    taking feature j from row ``i`` when ``rank[i, j] < k`` and from background row ``b``
    otherwise, for a model whose link is taken of each hybrid row's sum.
    ``x_left[i, node]`` and ``background_left[b, node]`` are the rows' directions at
    every node (:func:`node_directions`); ``children`` (n_nodes, 2) the left and right
    child of each node (global ids, -1 at leaves) of the trees packed end to end from
    ``roots``."""
    n_steps = rank.shape[1] + 1
    n_background = background_left.shape[0]
    width = node_values.shape[1]
    n_columns = init.shape[0]
    # Pending branches of a walk: at most one per leaf but the last.
    stack_node = empty(n_steps, np.intp)
    stack_first = empty(n_steps, np.intp)
    stack_last = empty(n_steps, np.intp)
    for i in range(lo, hi):
        for b in range(n_background):
            for k in range(n_steps):
                for c in range(n_columns):
                    out[k, i, b, c] = init[c]
        for t in range(roots.shape[0]):
            column = tree_column[t]
            for b in range(n_background):
                stack_node[0] = roots[t]
                stack_first[0] = 0
                stack_last[0] = n_steps
                top = 1
                while top > 0:
                    top -= 1
                    node = stack_node[top]
                    first = stack_first[top]
                    last = stack_last[top]
                    while children[node, 0] != LEAF:
                        x_go = np.intp(x_left[i, node])
                        if x_go == background_left[b, node]:
                            node = children[node, 1 - x_go]
                            continue
                        x_child = children[node, 1 - x_go]
                        b_child = children[node, x_go]
                        # Steps k > rank know the feature: they follow x.
                        known = rank[i, feature[node]] + 1
                        if last <= known:
                            node = b_child
                        elif first >= known:
                            node = x_child
                        else:
                            stack_node[top] = x_child
                            stack_first[top] = known
                            stack_last[top] = last
                            top += 1
                            node = b_child
                            last = known
                    for k in range(first, last):
                        for c in range(width):
                            out[k, i, b, column + c] += node_values[node, c]
