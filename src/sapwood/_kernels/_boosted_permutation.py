"""Held-out permutation importance on boosted models: every permuted sum in one pass.

A boosted model's output is a sum over hundreds of trees that each use most of the
informative features, so nearly every row changes under nearly every permutation and
its sum must be redone in the model's own order and precision (XGBoost's float32 sums
round after every addition). :func:`boosted_permuted_totals` therefore walks each row
through each tree once and answers every (feature, repeat) "slot" of that row there:

- the row's path gives, per feature on it, the interval of values that keeps the path
  (``lo <= v < hi``; the interval test): a permuted value inside it reaches the same
  leaf, one outside it is re-routed from the first split on the feature;
- the row keeps one running total per slot; each tree adds its leaf value to all of
  them (a vector add over slots) after the slots whose value left the interval have
  their new leaf's value put in, so every total is the model's own sum: the same
  terms, in tree order, in the same precision (the dtype of ``node_value``).

Rows are taken a block at a time: the block's rows walk each tree side by side, and
a row's re-routings advance side by side too, one step per round, so that their
memory reads overlap instead of each waiting on the one before (a traversal is a
chain of dependent reads). Row ranges are independent: threads split the rows.
Splits route through ``goes_left``; a node whose operator is not a plain ``<=`` /
``<`` comparison (or a row whose own value is missing there) gives its feature an
empty interval, so every permuted value is re-routed: still exact.
"""

import numpy as np

from ._numba import kernel
from ._traverse import LEAF, OP_LE, OP_LT, goes_left

__all__ = ["boosted_permuted_totals"]

_ROW_BLOCK = 16


@kernel
def boosted_permuted_totals(X, permuted, feature_slot_ptr, feature_slots, nodes, thresholds,
                            operator, cat_bitsets, roots, node_value, start, row_lo, row_hi,
                            out):
    """``out[i, s]``, for rows ``row_lo .. row_hi``: the model's sum for row ``i`` when
    the feature of slot ``s`` reads ``permuted[i, s]`` instead of ``X[i, f]``.

    ``feature_slots[feature_slot_ptr[f]:feature_slot_ptr[f + 1]]`` are the slots of
    feature ``f``. ``nodes`` are the packed records (left, right, feature, flags: bit 1
    missing values go left) of the trees starting at ``roots``, ``thresholds`` and
    ``operator`` beside them (``cat_bitsets``: the category sets of categorical
    splits, see ``goes_left``); ``node_value[k]`` is what node ``k`` adds to the sum, in
    the sum's dtype, and ``start[0]`` the sum's first value (the base score). Every
    total is ``start[0]`` plus the trees' leaf values in tree order, in that dtype.
    """
    n_slots = permuted.shape[1]
    n_trees = roots.shape[0]
    n_features = X.shape[1]
    # The deepest path bounds the distinct features on a path.
    depth_bound = min(n_features, nodes.shape[0])
    path_feature = np.empty((_ROW_BLOCK, depth_bound), dtype=np.intp)
    path_first = np.empty((_ROW_BLOCK, depth_bound), dtype=np.intp)
    lower = np.empty((_ROW_BLOCK, depth_bound))
    upper = np.empty((_ROW_BLOCK, depth_bound))
    row_node = np.empty(_ROW_BLOCK, dtype=np.intp)
    n_path = np.empty(_ROW_BLOCK, dtype=np.intp)
    terms = np.empty(n_slots, dtype=node_value.dtype)
    item_node = np.empty(n_slots + 1, dtype=np.intp)
    item_slot = np.empty(n_slots + 1, dtype=np.intp)
    item_feature = np.empty(n_slots + 1, dtype=np.intp)
    item_value = np.empty(n_slots + 1, dtype=permuted.dtype)
    totals = np.empty((_ROW_BLOCK, n_slots), dtype=node_value.dtype)
    for block_lo in range(row_lo, row_hi, _ROW_BLOCK):
        block_hi = min(block_lo + _ROW_BLOCK, row_hi)
        for b in range(block_hi - block_lo):
            for s in range(n_slots):
                totals[b, s] = start[0]
        for t in range(n_trees):
            n_rows = block_hi - block_lo
            # The block's rows walk the tree side by side, one step per round.
            for b in range(n_rows):
                row_node[b] = roots[t]
                n_path[b] = 0
            moving = True
            while moving:
                moving = False
                for b in range(n_rows):
                    node = row_node[b]
                    if nodes[node, 0] == LEAF:
                        continue
                    moving = True
                    f = nodes[node, 2]
                    x = X[block_lo + b, f]
                    threshold = thresholds[node]
                    op = operator[node]
                    if op == OP_LE and not np.isnan(x):
                        left = x <= threshold
                    else:
                        left = goes_left(x, threshold, op, nodes[node, 3] & 2, cat_bitsets)
                    k = 0
                    while k < n_path[b] and path_feature[b, k] != f:
                        k += 1
                    if k == n_path[b]:
                        path_feature[b, k] = f
                        path_first[b, k] = node
                        lower[b, k] = -np.inf
                        upper[b, k] = np.inf
                        n_path[b] += 1
                    if (op == OP_LT or op == OP_LE) and not np.isnan(x):
                        # v <= t is v < nextafter(t, inf): one form for both.
                        cut = threshold if op == OP_LT else np.nextafter(threshold,
                                                                         np.inf)
                        if left:
                            upper[b, k] = min(upper[b, k], cut)
                        else:
                            lower[b, k] = max(lower[b, k], cut)
                    else:
                        lower[b, k] = np.inf  # empty: every value is re-routed
                        upper[b, k] = -np.inf
                    row_node[b] = nodes[node, np.intp(not left)]
            for b in range(n_rows):
                i = block_lo + b
                node = row_node[b]
                base = node_value[node]
                for s in range(n_slots):
                    terms[s] = base
                n_items = 0
                for k in range(n_path[b]):
                    f = path_feature[b, k]
                    low = lower[b, k]
                    high = upper[b, k]
                    first = path_first[b, k]
                    for q in range(feature_slot_ptr[f], feature_slot_ptr[f + 1]):
                        s = feature_slots[q]
                        v = permuted[i, s]
                        # Queued unconditionally, kept when the value leaves the
                        # interval: no branch to mispredict.
                        item_node[n_items] = first
                        item_slot[n_items] = s
                        item_value[n_items] = v
                        item_feature[n_items] = f
                        n_items += np.intp(not (low <= v and v < high))
                # The re-routings advance side by side, one step per round: their
                # memory reads overlap instead of waiting on one another.
                moving = n_items > 0
                while moving:
                    moving = False
                    for q in range(n_items):
                        other = item_node[q]
                        if nodes[other, 0] == LEAF:
                            continue
                        moving = True
                        g = nodes[other, 2]
                        x = X[i, g]
                        x = item_value[q] if g == item_feature[q] else x
                        threshold = thresholds[other]
                        if operator[other] == OP_LE and not np.isnan(x):
                            item_node[q] = nodes[other, np.intp(x > threshold)]
                        elif goes_left(x, threshold, operator[other], nodes[other, 3] & 2,
                                       cat_bitsets):
                            item_node[q] = nodes[other, 0]
                        else:
                            item_node[q] = nodes[other, 1]
                for q in range(n_items):
                    terms[item_slot[q]] = node_value[item_node[q]]
                for s in range(n_slots):
                    totals[b, s] += terms[s]
        for b in range(block_hi - block_lo):
            for s in range(n_slots):
                out[block_lo + b, s] = totals[b, s]
