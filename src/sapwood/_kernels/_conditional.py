"""Conditional permutation of one tree (Strobl et al. 2008) and the association test
that picks the conditioning sets.

For feature j and tree t, the evaluation rows are grouped into cells: every feature z
of j's conditioning set that tree t splits on is cut at all of the tree's split points
on z, and the cell is the combination of the bins a row falls into. Column j is then
permuted within cells only. A value's bin on z is the number of the tree's splits on z
that send it right (monotone in the value, so equal counts are exactly the intervals
between consecutive distinct cuts); a missing value gets a bin of its own. Only the
partition matters, so cuts need neither sorting nor de-duplication.

The permutation within cells is derived from one permutation pi of all rows: in every
cell, the cell's rows, in row order, read column j from the cell's rows in the order
pi lists them. With a single cell this is pi itself, so a tree that uses no
conditioning feature permutes exactly as the unconditional out-of-bag importance does.

As in :mod:`sapwood._kernels._oob`, only rows whose path meets a split on j are
re-routed, from the first such split, reading the permuted value only at splits on j,
and a value inside its leaf's interval on j keeps the leaf without a traversal; the
re-routings of one feature and repeat are queued and run by the one permuted traversal
(:mod:`._permuted_traversal`).
"""

import numpy as np

from ._arrays import empty, full, zeros
from ._numba import kernel
from ._permuted_traversal import fast_layout, pack_tree, route_permuted, row_offsets
from ._traverse import LEAF, OP_CAT, first_splits, goes_left
from ._tree_index import keeps_leaf, leaf_intervals

# Keys of combined bins stay below this; beyond it they are renumbered densely first.
_KEY_LIMIT = 2**62


@kernel
def pairwise_correlation(X):
    """Pearson correlation of every pair of columns on the rows where both are present.

    Returns
    -------
    correlation : float64 array (n_features, n_features)
        0 where either column is constant on the pair's complete rows or fewer than two
        rows are complete (no evidence of association); 1 on the diagonal.
    n_complete : int64 array (n_features, n_features)
        Number of rows where both columns are present.
    """
    n_samples, n_features = X.shape
    correlation = zeros((n_features, n_features), np.float64)  # np.eye compiles its own kernels
    for a in range(n_features):
        correlation[a, a] = 1.0
    n_complete = zeros((n_features, n_features), np.int64)
    for a in range(n_features):
        for b in range(a, n_features):
            count = 0
            sum_a = 0.0
            sum_b = 0.0
            low_a = np.inf
            high_a = -np.inf
            low_b = np.inf
            high_b = -np.inf
            for i in range(n_samples):
                u = np.float64(X[i, a])
                v = np.float64(X[i, b])
                if np.isnan(u) or np.isnan(v):
                    continue
                count += 1
                sum_a += u
                sum_b += v
                low_a = min(low_a, u)
                high_a = max(high_a, u)
                low_b = min(low_b, v)
                high_b = max(high_b, v)
            n_complete[a, b] = count
            n_complete[b, a] = count
            if a == b or count < 2 or low_a == high_a or low_b == high_b:
                continue
            mean_a = sum_a / count
            mean_b = sum_b / count
            cross = 0.0
            square_a = 0.0
            square_b = 0.0
            for i in range(n_samples):
                u = np.float64(X[i, a])
                v = np.float64(X[i, b])
                if np.isnan(u) or np.isnan(v):
                    continue
                cross += (u - mean_a) * (v - mean_b)
                square_a += (u - mean_a) * (u - mean_a)
                square_b += (v - mean_b) * (v - mean_b)
            r = cross / np.sqrt(square_a * square_b)
            r = min(1.0, max(-1.0, r))
            correlation[a, b] = r
            correlation[b, a] = r
    return correlation, n_complete


@kernel
def _bins(X, rows, z, children_left, feature, threshold, operator, missing_go_to_left,
          cat_bitsets):
    """Bin of every row on feature z: how many of the tree's splits on z send it right,
    or (number of splits on z) + 1 when missing. Also returns the number of bins.

    A categorical split is not monotone in the value, so when z has one the bin is
    instead the pattern of decisions at all splits on z (numbered densely), missing
    values again in a bin of their own."""
    m = rows.shape[0]
    splits = empty(children_left.shape[0], np.intp)
    n_splits = 0
    categorical = False
    for node in range(children_left.shape[0]):
        if children_left[node] != LEAF and feature[node] == z:
            splits[n_splits] = node
            n_splits += 1
            categorical = categorical or operator[node] == OP_CAT
    bins = zeros(m, np.int64)
    if categorical:
        # The decisions as the bits of a key, first split highest; renumbered densely
        # (an order-keeping sort) only when another bit could overflow it, and at the
        # end: the same bins as renumbering after every split, at a sort per 61 splits
        # instead of one per split (which made categorical trees many times slower).
        size = 1
        for s in range(n_splits):
            node = splits[s]
            if size > _KEY_LIMIT // 2:
                bins, size = _renumber(bins)
            for k in range(m):
                value = X[rows[k], z]
                right = not np.isnan(value) and not goes_left(
                    value, threshold[node], operator[node], missing_go_to_left[node],
                    cat_bitsets)
                bins[k] = 2 * bins[k] + right
            size *= 2
        bins, n_present = _renumber(bins)
        for k in range(m):
            if np.isnan(X[rows[k], z]):
                bins[k] = n_present
        return bins, n_present + 1
    for k in range(m):
        value = X[rows[k], z]
        if np.isnan(value):
            bins[k] = n_splits + 1
            continue
        count = 0
        for s in range(n_splits):
            node = splits[s]
            if not goes_left(value, threshold[node], operator[node], missing_go_to_left[node],
                             cat_bitsets):
                count += 1
        bins[k] = count
    return bins, n_splits + 2


@kernel
def _renumber(key):
    """The same partition of rows with keys 0 .. (number of distinct keys - 1), numbered
    in increasing key order.

    The rows are put in key order by a least-significant-digit radix sort of the keys'
    distances from the smallest, a byte per pass (keys are below ``_KEY_LIMIT`` and not
    negative, so the distances fit in int64): ``np.argsort`` compiled Numba's generic
    merge sort, costly to compile. In int64 throughout, with no ``min``, ``max`` or
    ``np.arange``: conversions to uint64 and those functions' own compiles were a large
    part of this kernel's compiling."""
    m = key.shape[0]
    order = empty(m, np.intp)
    spare = empty(m, np.intp)
    counts = empty(257, np.intp)
    smallest = key[0] if m > 0 else 0
    largest = smallest
    for k in range(m):
        order[k] = k
        if key[k] < smallest:
            smallest = key[k]
        if key[k] > largest:
            largest = key[k]
    span = largest - smallest
    shift = 0
    while shift < 64 and (span >> shift) > 0:
        for d in range(257):
            counts[d] = 0
        for k in range(m):
            counts[(((key[k] - smallest) >> shift) & 255) + 1] += 1
        for d in range(256):
            counts[d + 1] += counts[d]
        for position in range(m):
            k = order[position]
            digit = ((key[k] - smallest) >> shift) & 255
            spare[counts[digit]] = k
            counts[digit] += 1
        order, spare = spare, order
        shift += 8
    dense = empty(m, np.int64)
    label = -1
    previous = 0
    for position in range(m):
        k = order[position]
        if position == 0 or key[k] != previous:
            label += 1
            previous = key[k]
        dense[k] = label
    return dense, label + 1


@kernel
def conditional_tree_permutation(X, rows, conditioning, permutations, children_left,
                                 children_right, feature, threshold, missing_go_to_left,
                                 operator, cat_bitsets, fast, sets=True):
    """Leaves of one tree's evaluation rows and the leaves that change when each column
    is permuted within the tree's cells of its conditioning set.

    Parameters
    ----------
    X : float32 or float64 array (n_samples, n_features), C-contiguous
    rows : intp array (m,)
        The evaluation rows (the tree's out-of-bag rows, or every held-out row).
    conditioning : uint8 array (n_features, n_features)
        ``conditioning[j, z]`` is 1 when z is in feature j's conditioning set.
    permutations : intp array (n_repeats, n_features, m)
        pi for repeat r and feature j (see the module docstring).
    fast : bool
        X is finite: the re-routings run side by side (``route_lanes``).
    sets : None or True
        None when the tree has no category set: only the lanes without the categorical
        test compile (see ``route_permuted``).

    Returns
    -------
    leaf : intp array (m,)
        The leaf every evaluation row reaches.
    slot : intp array (n_changes,)
        ``r * n_features + j`` of every change (grouped by feature, then repeat; rows in
        increasing order within a slot).
    position : intp array (n_changes,)
        Index into ``rows`` of the row whose leaf changes.
    new_leaf : intp array (n_changes,)
        The leaf it reaches with column j permuted.
    n_cells : intp array (n_features,)
        Number of non-empty cells column j was permuted within (0 if the tree does not
        split on j).
    source : intp array (n_changes,)
        Index into ``rows`` of the row whose value of column j it read (the giver; the
        rank intervals count each change at both rows).
    """
    m = rows.shape[0]
    n_features = X.shape[1]
    n_repeats = permutations.shape[0]
    used, first, leaf = first_splits(X, rows, children_left, children_right, feature,
                                     threshold, missing_go_to_left, operator, cat_bitsets)
    # Bins of every feature the tree uses; each is needed by the features conditioned on it.
    bins = zeros((n_features, m), np.int64)
    n_bins = full(n_features, 1, np.int64)
    for z in range(n_features):
        if used[z] != 0:
            bins_z, n_bins[z] = _bins(X, rows, z, children_left, feature, threshold,
                                      operator, missing_go_to_left, cat_bitsets)
            # Loops, not slice assignments (here and below): Numba compiles a slice
            # assignment's broadcasting and its error message, seconds of a first run.
            for k in range(m):
                bins[z, k] = bins_z[k]
    capacity = max(16, m)
    slot = empty(capacity, np.intp)
    position = empty(capacity, np.intp)
    new_leaf = empty(capacity, np.intp)
    source = empty(capacity, np.intp)
    n_changes = 0
    n_cells = zeros(n_features, np.intp)
    source_of = empty(m, np.intp)
    n_nodes = children_left.shape[0]
    # A set past category 63 has no place in the lanes' layout: such trees take the
    # general route.
    fast = fast and fast_layout(children_left, operator, threshold, cat_bitsets)
    nodes, thresholds, operators, set_bits = pack_tree(
        children_left, children_right, feature, threshold, missing_go_to_left, operator,
        cat_bitsets, fast)
    flat_X = X.reshape(-1)
    flat_nodes = nodes.reshape(-1)
    lower = empty(n_nodes, np.float64)
    upper = empty(n_nodes, np.float64)
    codes = empty(n_nodes, np.uint64)
    stack = empty(n_nodes + 1, np.intp)
    in_group = zeros(n_features, np.uint8)
    row_base = row_offsets(rows, n_features)
    # The queue of one feature and repeat (one spare entry: an item is written before
    # the queue decides whether to keep it).
    item_row = empty(m + 1, np.uint32)
    item_value = empty(m + 1, np.float64)
    item_source = empty(m + 1, np.intp)
    item_leaf = empty(m + 1, np.intp)
    for j in range(n_features):
        if used[j] == 0 or m == 0:
            continue
        key = zeros(m, np.int64)
        size = 1
        for z in range(n_features):
            if z == j or used[z] == 0 or conditioning[j, z] == 0:
                continue
            if size > _KEY_LIMIT // n_bins[z]:
                key, size = _renumber(key)
            for k in range(m):
                key[k] = key[k] * n_bins[z] + bins[z, k]
            size *= n_bins[z]
        cell = key
        cells = 1
        if size > 1:
            cell, cells = _renumber(key)
        n_cells[j] = cells
        if cells == m:
            continue  # every row alone in its cell: nothing moves
        # Counting sort by cell: targets lists every cell's rows in row order.
        start = zeros(cells + 1, np.intp)
        for k in range(m):
            start[cell[k] + 1] += 1
        for c in range(cells):
            start[c + 1] += start[c]
        fill = start[:cells].copy()
        targets = empty(m, np.intp)
        for k in range(m):
            targets[fill[cell[k]]] = k
            fill[cell[k]] += 1
        sources = empty(m, np.intp)
        leaf_intervals(0, j, 0, nodes[:, 0], nodes[:, 1], nodes[:, 2], thresholds, operators,
                       cat_bitsets, lower, upper, codes, stack)
        in_group[j] = 1
        for r in range(n_repeats):
            pi = permutations[r, j]
            # sources lists every cell's rows in the order pi lists them.
            for c in range(cells):
                fill[c] = start[c]
            for index in range(m):
                k = pi[index]
                sources[fill[cell[k]]] = k
                fill[cell[k]] += 1
            for index in range(m):
                source_of[targets[index]] = sources[index]
            n_items = 0
            for k in range(m):
                if first[j, k] < 0 or source_of[k] == k:
                    continue
                value = X[rows[source_of[k]], j]
                own = X[rows[k], j]
                if value == own or (np.isnan(value) and np.isnan(own)):
                    continue
                item_row[n_items] = k
                item_value[n_items] = value
                if not fast:  # the lanes read the value; the general route, the row
                    item_source[n_items] = row_base[source_of[k]]
                n_items += not keeps_leaf(value, lower[leaf[k]], upper[leaf[k]], codes[leaf[k]])
            route_permuted(fast, sets, n_items, item_row, first[j], row_base, item_value,
                           item_source, in_group, j, flat_X, flat_nodes, thresholds,
                           cat_bitsets, set_bits, item_leaf)
            for q in range(n_items):
                k = item_row[q]
                node = item_leaf[q]
                if node == leaf[k]:
                    continue
                if n_changes == capacity:
                    capacity *= 2
                    slot = _grow(slot, capacity)
                    position = _grow(position, capacity)
                    new_leaf = _grow(new_leaf, capacity)
                    source = _grow(source, capacity)
                slot[n_changes] = r * n_features + j
                position[n_changes] = k
                new_leaf[n_changes] = node
                source[n_changes] = source_of[k]
                n_changes += 1
        in_group[j] = 0
    return leaf, slot[:n_changes].copy(), position[:n_changes].copy(), \
        new_leaf[:n_changes].copy(), n_cells, source[:n_changes].copy()


@kernel
def _grow(array, capacity):
    grown = empty(capacity, array.dtype)
    # A loop, not a slice assignment: that compiles Numba's broadcasting and its error
    # messages, a costly compile for a copy.
    for k in range(array.shape[0]):
        grown[k] = array[k]
    return grown
