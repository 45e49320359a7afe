"""Summing the trees' leaf values, bit for bit as the model does, after re-routing.

Outputs are never re-predicted, and only changed rows are summed again. When every leaf
value is a whole multiple of one power of two (pure-leaf forest probabilities) no sum
rounds, so a changed leaf adds its difference to the baseline total
(:func:`collect_exact`); otherwise the re-routing records, tree-major, the (tree, row)
pairs whose leaf changed and each changed row's sum is redone in tree order
(:func:`collect_changed`). Either way every prediction is bit-identical to summing the
trees in order (:func:`sum_leaf_values`).

:func:`accuracy_change` scores the changed rows directly for a consumer that reads only
the predicted class (the default accuracy score).
"""

import numpy as np

from ._arrays import empty
from ._numba import kernel

__all__ = ["accuracy_change", "add_leaf_values", "add_new_leaf_values", "checkpoint_sums",
           "collect_changed", "collect_exact", "sum_leaf_values"]


@kernel
def sum_leaf_values(leaves, node_values, tree_column, init):
    """``init + sum_t node_values[leaf_t]`` per sample, added in tree order.

    ``node_values`` has shape (n_nodes, width): tree t adds its leaf's row to columns
    ``tree_column[t] .. tree_column[t] + width`` of the (n_samples, len(init)) output.
    The sums are kept in ``init``'s dtype (float32: rounded after every addition, as
    XGBoost adds its trees; ``node_values`` then float32 too).
    """
    out = empty((leaves.shape[1], init.shape[0]), init.dtype)
    for i in range(out.shape[0]):
        for c in range(init.shape[0]):
            out[i, c] = init[c]
    add_leaf_values(leaves, node_values, tree_column, out)
    return out


@kernel
def checkpoint_sums(leaves_by_sample, node_values, tree_column, init, stride):
    """Per sample the running total of ``sum_leaf_values`` before trees 0, stride,
    2 * stride, ...: shape (n_samples, ceil(n_trees / stride), len(init)), in
    ``init``'s dtype."""
    n_samples, n_trees = leaves_by_sample.shape
    width = node_values.shape[1]
    n_columns = init.shape[0]
    n_checkpoints = (n_trees + stride - 1) // stride
    out = empty((n_samples, n_checkpoints, n_columns), init.dtype)
    total = empty(n_columns, init.dtype)
    for i in range(n_samples):
        for c in range(n_columns):
            total[c] = init[c]
        for t in range(n_trees):
            if t % stride == 0:
                for c in range(n_columns):
                    out[i, t // stride, c] = total[c]
            leaf = leaves_by_sample[i, t]
            column = tree_column[t]
            for w in range(width):
                total[column + w] += node_values[leaf, w]
    return out


@kernel
def collect_changed(leaf_values, new_leaves, changed, node_values, tree_column,
                    checkpoints, stride, exact_node, exact_sample, base_totals, slot_lo,
                    slot_hi, counts, rows, totals):
    """Per slot ``s`` in ``slot_lo .. slot_hi``: the changed samples
    (``rows[s, :counts[s]]``) and their raw totals ``init + sum_t node_values[leaf]``
    added in tree order (``totals[s, :counts[s]]``), with each tree's new leaf
    ``new_leaves[s, t, i]`` where it changed, else the baseline leaf's values
    ``leaf_values[t, i]``.

    Tree-major, like ``new_leaves``: for each tree the changed samples are visited in
    increasing order, so one tree's entries are read in sequence; every sample adds
    its trees in tree order into its own total, starting from ``checkpoints[i, 0]``
    (``checkpoint_sums``: the initial value): the same additions in the same order as
    the model's sum. When every term of a sample's sum is exact (``exact_sample[i]``
    for its baseline leaves and ``exact_node`` for its new ones: multiples of one power
    of two, small enough that no partial sum rounds), any order gives the same bits,
    and the total is the baseline ``base_totals[i]`` plus the changed trees'
    differences. Consumed ``new_leaves`` entries are reset to -1 so the buffer can be
    reused. (``stride`` is unused: any checkpoint spacing works.)
    """
    n_trees, n_samples, width = leaf_values.shape
    n_columns = checkpoints.shape[2]
    exact = empty(n_samples, np.uint8)
    for s in range(slot_lo, slot_hi):
        n = 0
        any_exact = False
        for i in range(n_samples):
            if changed[i, s] != 0:
                rows[s, n] = i
                exact[n] = exact_sample[i]
                any_exact |= exact_sample[i] != 0
                n += 1
        counts[s] = n
        if any_exact:
            # A sample with exact baseline leaves stays exact if its new leaves are.
            for t in range(n_trees):
                for k in range(n):
                    if exact[k] != 0:
                        leaf = new_leaves[s, t, rows[s, k]]
                        if leaf >= 0 and exact_node[leaf] == 0:
                            exact[k] = 0
        for k in range(n):
            i = rows[s, k]
            for c in range(n_columns):
                totals[s, k, c] = base_totals[i, c] if exact[k] != 0 else checkpoints[i, 0, c]
        for t in range(n_trees):
            column = tree_column[t]
            for k in range(n):
                i = rows[s, k]
                leaf = new_leaves[s, t, i]
                if leaf >= 0:
                    new_leaves[s, t, i] = -1
                if exact[k] != 0:
                    if leaf >= 0:
                        for w in range(width):
                            totals[s, k, column + w] += (node_values[leaf, w]
                                                         - leaf_values[t, i, w])
                elif leaf < 0:
                    for w in range(width):
                        totals[s, k, column + w] += leaf_values[t, i, w]
                else:
                    for w in range(width):
                        totals[s, k, column + w] += node_values[leaf, w]


@kernel
def collect_exact(base_totals, deltas, changes, slot_lo, slot_hi, counts, rows, totals):
    """``collect_changed`` when every sum is exact: per slot ``s`` in
    ``slot_lo .. slot_hi`` the samples some buffer marks changed (``changes[k, i, s]``,
    in increasing order: ``rows[s, :counts[s]]``, counts starting at 0) and their
    totals ``base_totals[i] + sum_k deltas[k, i, s]``.

    With node values that are whole multiples of one power of two and sums far below
    2**53 of them, no addition rounds, so this equals summing the new leaves in tree
    order bit for bit. Consumed entries of ``deltas`` and ``changes`` are reset to 0.
    """
    n_parts, n_samples = changes.shape[0], changes.shape[1]
    n_columns = base_totals.shape[1]
    for i in range(n_samples):
        for s in range(slot_lo, slot_hi):
            hit = False
            for k in range(n_parts):
                hit |= changes[k, i, s] != 0
            if not hit:
                continue
            n = counts[s]
            rows[s, n] = i
            for c in range(n_columns):
                total = base_totals[i, c]
                for k in range(n_parts):
                    total += deltas[k, i, s, c]
                    deltas[k, i, s, c] = 0.0
                totals[s, n, c] = total
            for k in range(n_parts):
                changes[k, i, s] = 0
            counts[s] = n + 1


@kernel
def accuracy_change(rows, totals, n_trees, offset, y_code, correct):
    """How many more evaluation rows a classifier gets right when rows ``rows`` have the
    class sums ``totals`` (one row of sums each) instead of their baseline ones.

    The predicted class is the first largest ``totals[k, c] / n_trees + offset[c]``: the
    probabilities of a mean-combined forest (the evaluator's ``finalize``) and the
    class its ``predict`` picks (NumPy's argmax), over the ``offset.shape[0]`` classes.
    A row is right when that class is ``y_code[i]``; ``correct[i]`` says whether it was
    right before.
    """
    n_classes = offset.shape[0]
    change = 0
    for k in range(rows.shape[0]):
        i = rows[k]
        best = 0
        best_value = totals[k, 0] / n_trees + offset[0]
        for c in range(1, n_classes):
            value = totals[k, c] / n_trees + offset[c]
            if value > best_value:
                best = c
                best_value = value
        change += np.intp(best == y_code[i]) - np.intp(correct[i])
    return change


# -- a few trees at a time -------------------------------------------------------------
# For large forests the evaluator never holds every tree's nodes: it reads a few trees,
# indexes, re-routes and adds them into running totals, and drops them (see
# ``sapwood.importance._engine._chunked_evaluator.ChunkedTreeEvaluator``). Every total gets its
# trees' values added one tree at a time in tree order by ``add_leaf_values``, the
# additions ``sum_leaf_values`` makes, so the bits do not depend on how the trees are cut.


@kernel
def add_leaf_values(leaves, node_values, tree_column, totals):
    """What ``sum_leaf_values`` adds, and its continuation: adds, in tree order, the
    values of the leaves ``leaves`` (shape (n_trees, n_samples), the piece's node ids)
    to the running ``totals`` (n_samples, n_columns), in place."""
    n_trees, n_samples = leaves.shape
    width = node_values.shape[1]
    for t in range(n_trees):
        column = tree_column[t]
        for i in range(n_samples):
            leaf = leaves[t, i]
            for w in range(width):
                totals[i, column + w] += node_values[leaf, w]


@kernel
def add_new_leaf_values(leaves, new_leaves, node_values, tree_column, slot_lo, slot_hi,
                        totals):
    """Per slot ``s`` in ``slot_lo .. slot_hi`` and sample ``i``: adds to
    ``totals[s, i]``, tree by tree in order, the value of the new leaf
    ``new_leaves[s, t, i]`` where the re-routing recorded one (``reroute_packed``), else
    of the baseline leaf ``leaves[t, i]``. Consumed ``new_leaves`` entries are reset to
    -1 so the buffer can be reused."""
    n_trees, n_samples = leaves.shape
    width = node_values.shape[1]
    for s in range(slot_lo, slot_hi):
        for t in range(n_trees):
            column = tree_column[t]
            for i in range(n_samples):
                leaf = new_leaves[s, t, i]
                if leaf < 0:
                    leaf = leaves[t, i]
                else:
                    new_leaves[s, t, i] = -1
                for w in range(width):
                    totals[s, i, column + w] += node_values[leaf, w]
