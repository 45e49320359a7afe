"""Held-out permutation importance on boosted models: every permuted sum in one pass.

A boosted model's output is a sum over hundreds of trees that each use most of the
informative features, so nearly every row changes under nearly every permutation and
its sum must be redone in the model's own order and precision (XGBoost's float32 sums
round after every addition). :func:`boosted_permuted_totals` therefore walks each row
through each tree once and answers every (feature, repeat) "slot" of that row there:

- down the row's path, at each split the slots of its feature whose value goes the
  other way leave the path (the first such split of a slot; a value that never does
  reaches the row's own leaf): the path above is the row's own, so the value is
  re-routed from the other child of that split only;
- the row keeps one running total per slot; each tree adds its leaf value to all of
  them (a vector add over slots) after the slots whose value left the path have their
  new leaf's value put in, so every total is the model's own sum: the same terms, in
  tree order, in the same precision (the dtype of ``node_value``).

Rows are taken a block at a time: the block's rows walk each tree side by side, and the
block's re-routings advance side by side too, one step per round (a re-routing that
reaches a leaf drops out), so that their memory reads overlap instead of each waiting
on the one before (a traversal is a chain of dependent reads). Row ranges are
independent: threads split the rows.

The nodes are in :func:`boosted_layout`'s form: a split sends ``v`` left when
``v < cut`` (a ``<=`` split's threshold moved up by one float) or, with flag
``_MISSING_LEFT``, when ``v`` is missing: one comparison. Splits it cannot state that
way (categorical, ``<= inf``: flag ``_SLOW``) route through ``goes_left`` with their own
threshold and operator. A leaf child is stored as ``~id``, so a walk knows it has
arrived without reading the leaf.
"""

import numpy as np

from ._arrays import empty, zeros
from ._numba import kernel
from ._traverse import LEAF, OP_LE, OP_LT, goes_left

__all__ = ["boosted_layout", "boosted_permuted_totals"]

_ROW_BLOCK = 16
# Flags of boosted_layout's records (field 3).
_MISSING_LEFT = 2
_SLOW = 4


@kernel
def boosted_layout(nodes, thresholds, operator, roots):
    """``(records, cut, root_code, depth)`` for :func:`boosted_permuted_totals` from the
    packed records (left, right, feature, flags; :mod:`._permuted_traversal`, either
    layout), their thresholds, operators and the trees' roots.

    A child is stored as its node id when it is a split and as ``~id`` (negative) when
    it is a leaf, so that a walk knows it has arrived without reading the leaf;
    ``root_code`` codes the roots alike. Flags: ``_MISSING_LEFT`` and ``_SLOW`` only;
    ``cut``: ``v`` goes left when ``v < cut``. ``depth``: the most splits on a path.
    """
    n_nodes = nodes.shape[0]
    records = nodes.copy()
    cut = empty(n_nodes, np.float64)
    for k in range(n_nodes):
        flags = 0
        if nodes[k, 3] & 2:  # the packed layouts' missing-left bit
            flags |= _MISSING_LEFT
        t = thresholds[k]
        if nodes[k, 0] == LEAF:
            records[k, 2] = 0
            cut[k] = np.nan
        elif operator[k] == OP_LT:
            cut[k] = t
        elif operator[k] == OP_LE and t < np.inf:
            cut[k] = np.nextafter(t, np.inf)  # v <= t is v < nextafter(t, inf) below inf
        else:
            flags |= _SLOW
            cut[k] = np.nan
        records[k, 3] = flags
        if nodes[k, 0] != LEAF:
            for side in range(2):
                child = nodes[k, side]
                records[k, side] = ~child if nodes[child, 0] == LEAF else child
    root_code = empty(roots.shape[0], np.int32)
    depth = zeros(n_nodes, np.intp)
    stack = empty(n_nodes, np.intp)
    deepest = 0
    for t in range(roots.shape[0]):
        root = roots[t]
        root_code[t] = ~root if nodes[root, 0] == LEAF else root
        depth[root] = 0
        stack[0] = root
        n_stack = 1
        while n_stack > 0:
            n_stack -= 1
            k = stack[n_stack]
            deepest = max(deepest, depth[k])
            if nodes[k, 0] != LEAF:
                for side in range(2):
                    child = nodes[k, side]
                    depth[child] = depth[k] + 1
                    stack[n_stack] = child
                    n_stack += 1
    return records, cut, root_code, deepest


@kernel(inline="always")
def _left(records, cut, thresholds, operator, cat_bitsets, node, value):
    """Whether ``value`` goes left at split ``node`` (``goes_left`` semantics)."""
    flags = records[node, 3]
    if flags & _SLOW:
        return goes_left(value, thresholds[node], operator[node], flags & _MISSING_LEFT,
                         cat_bitsets)
    return (value < cut[node]) | ((flags & _MISSING_LEFT != 0) & np.isnan(value))


@kernel
def boosted_permuted_totals(X, permuted, feature_slot_ptr, records, cut, thresholds,
                            operator, cat_bitsets, root_code, max_depth, node_value, start,
                            row_lo, row_hi, out):
    """``out[i, s]``, for rows ``row_lo .. row_hi``: the model's sum for row ``i`` when
    the feature of slot ``s`` reads ``permuted[i, s]`` instead of ``X[i, f]``.

    Slots are ordered by feature: ``feature_slot_ptr[f] .. feature_slot_ptr[f + 1]``
    are feature ``f``'s. ``records``, ``cut``, ``root_code`` and ``max_depth``: the
    trees in :func:`boosted_layout`'s form; ``thresholds`` and ``operator`` the packed
    ones (read at ``_SLOW`` splits; ``cat_bitsets``: the category sets of categorical
    splits, see ``goes_left``); ``node_value[k]`` is what node ``k`` adds to the sum, in
    the sum's dtype, and ``start[0]`` the sum's first value (the base score). Every
    total is ``start[0]`` plus the trees' leaf values in tree order, in that dtype.
    """
    n_slots = permuted.shape[1]
    n_trees = root_code.shape[0]
    n_features = X.shape[1]
    depth = max(max_depth, 1)
    slot_feature = empty(n_slots, np.intp)
    for f in range(n_features):
        for q in range(feature_slot_ptr[f], feature_slot_ptr[f + 1]):
            slot_feature[q] = f
    # Each block row's path: its splits and the way it went at each; its leaf (coded).
    path_node = empty((_ROW_BLOCK, depth), np.intp)
    path_right = empty((_ROW_BLOCK, depth), np.bool_)
    n_path = empty(_ROW_BLOCK, np.intp)
    row_code = empty(_ROW_BLOCK, np.intp)
    # Per slot, the node its value goes on from once it has left the row's path (0:
    # it has not, as no split has the root as child; reset after every row).
    exit_code = zeros(n_slots, np.intp)
    # The block's re-routings: node (coded), row, value, feature, slot.
    capacity = _ROW_BLOCK * n_slots + 1
    item_code = empty(capacity, np.intp)
    item_row = empty(capacity, np.intp)
    item_value = empty(capacity, permuted.dtype)
    item_feature = empty(capacity, np.intp)
    item_slot = empty(capacity, np.intp)
    live = empty(capacity, np.intp)
    row_items = empty(_ROW_BLOCK + 1, np.intp)
    terms = empty(n_slots, node_value.dtype)
    totals = empty((_ROW_BLOCK, n_slots), node_value.dtype)
    for block_lo in range(row_lo, row_hi, _ROW_BLOCK):
        n_rows = min(block_lo + _ROW_BLOCK, row_hi) - block_lo
        for b in range(n_rows):
            for s in range(n_slots):
                totals[b, s] = start[0]
        for t in range(n_trees):
            # The block's rows walk the tree side by side, one step per round.
            for b in range(n_rows):
                row_code[b] = root_code[t]
                n_path[b] = 0
            moving = root_code[t] >= 0
            while moving:
                moving = False
                for b in range(n_rows):
                    node = row_code[b]
                    if node < 0:
                        continue
                    right = not _left(records, cut, thresholds, operator, cat_bitsets, node,
                                      X[block_lo + b, records[node, 2]])
                    path_node[b, n_path[b]] = node
                    path_right[b, n_path[b]] = right
                    n_path[b] += 1
                    row_code[b] = records[node, np.intp(right)]
                    moving |= row_code[b] >= 0
            n_items = 0
            for b in range(n_rows):
                i = block_lo + b
                row_items[b] = n_items
                # Down the path: at each split, the slots of its feature whose value
                # goes the other way leave the path there (the first such split of a
                # slot), to go on from the split's other child. A value is queued
                # unconditionally and kept when it leaves (no branch to mispredict).
                for d in range(n_path[b]):
                    node = path_node[b, d]
                    f = records[node, 2]
                    right = path_right[b, d]
                    other = records[node, np.intp(not right)]
                    flags = records[node, 3]
                    if flags & _SLOW:
                        for q in range(feature_slot_ptr[f], feature_slot_ptr[f + 1]):
                            left = goes_left(permuted[i, q], thresholds[node], operator[node],
                                             flags & _MISSING_LEFT, cat_bitsets)
                            leaves = (left == right) & (exit_code[q] == 0)
                            exit_code[q] = other if leaves else exit_code[q]
                            item_slot[n_items] = q
                            n_items += np.intp(leaves)
                        continue
                    c = cut[node]
                    missing_left = (flags & _MISSING_LEFT) != 0
                    for q in range(feature_slot_ptr[f], feature_slot_ptr[f + 1]):
                        v = permuted[i, q]
                        left = (v < c) | (missing_left & np.isnan(v))
                        leaves = (left == right) & (exit_code[q] == 0)
                        exit_code[q] = other if leaves else exit_code[q]
                        item_slot[n_items] = q
                        n_items += np.intp(leaves)
                for q in range(row_items[b], n_items):
                    s = item_slot[q]
                    item_code[q] = exit_code[s]
                    exit_code[s] = 0
                    item_row[q] = i
                    item_value[q] = permuted[i, s]
                    item_feature[q] = slot_feature[s]
            row_items[n_rows] = n_items
            # The re-routings advance side by side, one step per round; one that
            # reaches a leaf leaves the round's list.
            n_live = 0
            for q in range(n_items):
                live[n_live] = q
                n_live += np.intp(item_code[q] >= 0)
            while n_live > 0:
                n_next = 0
                for k in range(n_live):
                    q = live[k]
                    node = item_code[q]
                    g = records[node, 2]
                    x = X[item_row[q], g]
                    x = item_value[q] if g == item_feature[q] else x
                    child = records[node, np.intp(not _left(records, cut, thresholds,
                                                            operator, cat_bitsets, node, x))]
                    item_code[q] = child
                    live[n_next] = q
                    n_next += np.intp(child >= 0)
                n_live = n_next
            for b in range(n_rows):
                base = node_value[~row_code[b]]
                for s in range(n_slots):
                    terms[s] = base
                for q in range(row_items[b], row_items[b + 1]):
                    terms[item_slot[q]] = node_value[~item_code[q]]
                for s in range(n_slots):
                    totals[b, s] += terms[s]
        for b in range(n_rows):
            for s in range(n_slots):
                out[block_lo + b, s] = totals[b, s]
