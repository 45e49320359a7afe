"""Partial dependence through the trees: every row of a data set with some of its columns
set to each value of a grid, and Friedman's weighted traversal.

:func:`grid_sums` answers what predicting the data set once per grid value would, for
every (grid value, row) pair, without routing each pair from the root: a tree is walked
once with a block of rows and a block of grid values together. At a split on a grid
column the grid values divide and every row goes both ways; at any other split the rows
divide and every grid value goes both ways; at a leaf the block's pairs all take its
value. Each pair still reaches exactly the leaf it would reach on its own, and each
tree's value is added to its sum in tree order, so the sums are the model's own, bit for
bit; but a grid value is compared at a node once, not once per row, and a row once, not
once per grid value.

:func:`weighted_traversal` is Friedman's (2001, doi:10.1214/aos/1013203451, section 8.2)
partial dependence of a tree on its training distribution: at a split on a grid column
the grid value picks the child, at any other split both children are followed, each
weighted by the share of the node's training weight it received; the leaves' values are
added times their weights, as scikit-learn's ``compute_partial_dependence`` adds them.
"""

import numpy as np

from ._arrays import empty, zeros
from ._numba import kernel, leaf_kernel
from ._traverse import LEAF, goes_left

__all__ = ["grid_sums", "weighted_traversal"]


@kernel
def grid_sums(X, lo, hi, grid, grid_column, children_left, children_right, feature,
              threshold, missing_go_to_left, operator, cat_bitsets, roots, max_depth,
              node_values, tree_column, total):
    """Add, for every tree ``t`` in order, ``node_values[leaf]`` to
    ``total[g, i, tree_column[t]:]`` for every grid point ``g`` and row ``i`` of
    ``lo .. hi``, ``leaf`` being the leaf row ``i`` of ``X`` reaches when column ``f``
    reads ``grid[g, grid_column[f]]`` wherever ``grid_column[f] >= 0``.

    Trees packed end to end (global child ids, ``roots``); ``max_depth`` at least the
    deepest tree's depth. ``total`` (n_grid, n_rows, n_columns) holds each pair's sum so
    far (its start value before the first call), in the sum's own precision.
    """
    n_grid = grid.shape[0]
    width = node_values.shape[1]
    rows = empty(hi - lo, np.intp)
    for k in range(hi - lo):
        rows[k] = lo + k
    points = empty(n_grid, np.intp)
    for k in range(n_grid):
        points[k] = k
    # A block: its node and its ranges of ``rows`` and ``points``. Depth first, a node's
    # two children pushed together: at most one more block per level.
    size = 2 * (max_depth + 2)
    stack_node = empty(size, np.intp)
    stack_rows = empty((size, 2), np.intp)
    stack_points = empty((size, 2), np.intp)
    for t in range(roots.shape[0]):
        column = tree_column[t]
        stack_node[0] = roots[t]
        stack_rows[0, 0], stack_rows[0, 1] = 0, hi - lo
        stack_points[0, 0], stack_points[0, 1] = 0, n_grid
        top = 1
        while top > 0:
            top -= 1
            node = stack_node[top]
            r0, r1 = stack_rows[top, 0], stack_rows[top, 1]
            p0, p1 = stack_points[top, 0], stack_points[top, 1]
            left = children_left[node]
            if left == LEAF:
                for p in range(p0, p1):
                    g = points[p]
                    for r in range(r0, r1):
                        i = rows[r]
                        for c in range(width):
                            total[g, i, column + c] += node_values[node, c]
                continue
            f = feature[node]
            k = grid_column[f]
            # Partition the block's rows (or grid points) in place: those going left
            # first. Each child's block is a subrange, so the sibling's stays whole.
            right = children_right[node]
            if k >= 0:
                split = p0
                for p in range(p0, p1):
                    g = points[p]
                    if goes_left(grid[g, k], threshold[node], operator[node],
                                 missing_go_to_left[node], cat_bitsets):
                        points[p], points[split] = points[split], g
                        split += 1
                top = _push(stack_node, stack_rows, stack_points, top, right, r0, r1,
                            split, p1)
                top = _push(stack_node, stack_rows, stack_points, top, left, r0, r1, p0,
                            split)
            else:
                split = r0
                for r in range(r0, r1):
                    i = rows[r]
                    if goes_left(X[i, f], threshold[node], operator[node],
                                 missing_go_to_left[node], cat_bitsets):
                        rows[r], rows[split] = rows[split], i
                        split += 1
                top = _push(stack_node, stack_rows, stack_points, top, right, split, r1,
                            p0, p1)
                top = _push(stack_node, stack_rows, stack_points, top, left, r0, split, p0,
                            p1)


@leaf_kernel
def _push(stack_node, stack_rows, stack_points, top, node, r0, r1, p0, p1):
    """Push a block unless it is empty; the new stack height."""
    if r0 == r1 or p0 == p1:
        return top
    stack_node[top] = node
    stack_rows[top, 0], stack_rows[top, 1] = r0, r1
    stack_points[top, 0], stack_points[top, 1] = p0, p1
    return top + 1


@kernel
def weighted_traversal(grid, grid_column, children_left, children_right, feature, threshold,
                       missing_go_to_left, operator, cat_bitsets, roots, max_depth, weight,
                       node_values, tree_column, total):
    """Friedman's weighted traversal of every tree, in order: for grid point ``g`` add
    ``share * node_values[leaf]`` to ``total[g, tree_column[t]:]`` for every leaf the
    point can reach, ``share`` the product of the training-weight fractions
    ``weight[child] / weight[node]`` at the splits on columns outside the grid (a split
    on a grid column, ``grid_column[f] >= 0``, sends the point one way with its share).

    The nodes are visited as scikit-learn's ``Tree.compute_partial_dependence`` visits
    them (a stack, the right child on top) and each leaf's term added at once, so that
    the sums round as scikit-learn's do.
    """
    n_grid = grid.shape[0]
    width = node_values.shape[1]
    size = 2 * (max_depth + 2)
    stack_node = empty(size, np.intp)
    stack_share = zeros(size, np.float64)
    for t in range(roots.shape[0]):
        column = tree_column[t]
        for g in range(n_grid):
            stack_node[0] = roots[t]
            stack_share[0] = 1.0
            top = 1
            while top > 0:
                top -= 1
                node = stack_node[top]
                share = stack_share[top]
                left = children_left[node]
                if left == LEAF:
                    for c in range(width):
                        total[g, column + c] += share * node_values[node, c]
                    continue
                f = feature[node]
                k = grid_column[f]
                if k >= 0:
                    if goes_left(grid[g, k], threshold[node], operator[node],
                                 missing_go_to_left[node], cat_bitsets):
                        stack_node[top] = left
                    else:
                        stack_node[top] = children_right[node]
                    stack_share[top] = share
                    top += 1
                else:
                    fraction = weight[left] / weight[node]
                    stack_node[top] = left
                    stack_share[top] = share * fraction
                    stack_node[top + 1] = children_right[node]
                    stack_share[top + 1] = share * (1.0 - fraction)
                    top += 2
