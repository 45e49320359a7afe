"""Tree-aware evaluation of permuted columns (held-out permutation importance).

Permuting the columns of a group ``G`` changes a tree's output only for samples whose
path meets a split on a column of ``G``. For each tree and group the *entry nodes* are
the splits on ``G`` with no ancestor splitting on ``G``; a sample is re-routed from the
entry node on its path, reading the permuted row only at splits on ``G``
(ranger ``Tree::dropDownSamplePermuted``). Samples are sorted per tree by the pre-order
rank of their leaf, so the samples below any node are one contiguous run found by
binary search: unaffected samples and trees that never split on ``G`` cost nothing.

For a one-column group each leaf below an entry node carries the open interval of
values that take the same decisions at every split on that column along its path; a
permuted value inside it lands in the same leaf without a traversal.

Outputs are never re-predicted, and only changed samples are summed again. When every
leaf value is a whole multiple of one power of two (pure-leaf forest probabilities)
no sum rounds, so a changed leaf adds its difference to the baseline total
(``collect_exact``); otherwise the evaluator records, tree-major, the (tree, sample)
pairs whose leaf changed and redoes each changed sample's sum in tree order
(``collect_changed``). Either way every prediction is bit-identical to summing the
trees in order.

A consumer that reads only the predicted class (the default accuracy score) can skip
more: ``flip_potential`` bounds how far the trees whose path meets a column can move a
row's lead of its class, and ``reroute_packed`` leaves out the (group, row) pairs whose
lead is larger (``skip``).

Nodes are read from a packed layout (``pack_nodes``): one 16-byte record per node and
the thresholds beside it. For finite data (the common case) ``make_fast`` turns it into
the fast path's layout, where every split reads ``x <= threshold``: the traversals of
a tree are then queued and run side by side, a dozen at a time, each step free of
data-dependent branches (:func:`sapwood._kernels._lanes.route_lanes`). Helpers called
from the hot loops of these kernels take scalars only: Numba increments and decrements
the reference count of every array passed to a function, inlined or not.

All kernels take arrays of the packed forest (global node ids, ``roots``) and are
arrays-in / arrays-out with no validation; ``sapwood.importance._tree_evaluator``
prepares their inputs.
"""

import numpy as np

from ._lanes import route_lanes
from ._numba import kernel
from ._traverse import LEAF, OP_LE


@kernel
def _largest_tree(roots, n_nodes):
    """Node count of the largest tree (trees are packed end to end from ``roots``)."""
    largest = 0
    for t in range(roots.shape[0]):
        end = roots[t + 1] if t + 1 < roots.shape[0] else n_nodes
        largest = max(largest, end - roots[t])
    return largest


@kernel
def preorder_spans(children_left, children_right, roots):
    """Pre-order rank of every node within its tree and the end of its subtree's ranks.

    The subtree of node ``i`` is exactly the nodes of its tree ranked
    ``[rank[i], span_end[i])``.
    """
    n_nodes = children_left.shape[0]
    rank = np.empty(n_nodes, dtype=np.intp)
    span_end = np.empty(n_nodes, dtype=np.intp)
    largest = _largest_tree(roots, n_nodes)
    stack = np.empty(largest + 1, dtype=np.intp)
    sequence = np.empty(largest, dtype=np.intp)
    for t in range(roots.shape[0]):
        stack[0] = roots[t]
        top = 1
        count = 0
        while top > 0:
            top -= 1
            node = stack[top]
            rank[node] = count
            sequence[count] = node
            count += 1
            if children_left[node] != LEAF:
                stack[top] = children_right[node]
                stack[top + 1] = children_left[node]
                top += 2
        for k in range(count - 1, -1, -1):
            node = sequence[k]
            if children_left[node] == LEAF:
                span_end[node] = rank[node] + 1
            else:
                span_end[node] = span_end[children_right[node]]
    return rank, span_end


@kernel
def entry_nodes(children_left, children_right, feature, roots, feature_group_ptr,
                feature_groups, n_groups):
    """Entry nodes of every (tree, group): splits on a group column with no ancestor
    splitting on one. CSR over ``t * n_groups + g``: ``(ptr, nodes)``.

    ``feature_groups[feature_group_ptr[f]:feature_group_ptr[f + 1]]`` lists the groups
    column ``f`` belongs to.
    """
    n_nodes = children_left.shape[0]
    n_trees = roots.shape[0]
    capacity = 0
    for node in range(n_nodes):
        if children_left[node] != LEAF:
            f = feature[node]
            capacity += feature_group_ptr[f + 1] - feature_group_ptr[f]
    record_key = np.empty(capacity, dtype=np.intp)
    record_node = np.empty(capacity, dtype=np.intp)
    n_records = 0
    ancestors_in_group = np.zeros(n_groups, dtype=np.intp)
    # A negative stack entry ~node marks leaving node's subtree.
    stack = np.empty(2 * _largest_tree(roots, n_nodes) + 1, dtype=np.intp)
    for t in range(n_trees):
        stack[0] = roots[t]
        top = 1
        while top > 0:
            top -= 1
            entry = stack[top]
            if entry < 0:
                f = feature[~entry]
                for k in range(feature_group_ptr[f], feature_group_ptr[f + 1]):
                    ancestors_in_group[feature_groups[k]] -= 1
                continue
            node = entry
            if children_left[node] == LEAF:
                continue
            f = feature[node]
            for k in range(feature_group_ptr[f], feature_group_ptr[f + 1]):
                g = feature_groups[k]
                if ancestors_in_group[g] == 0:
                    record_key[n_records] = t * n_groups + g
                    record_node[n_records] = node
                    n_records += 1
                ancestors_in_group[g] += 1
            stack[top] = ~node
            stack[top + 1] = children_right[node]
            stack[top + 2] = children_left[node]
            top += 3
    ptr = np.zeros(n_trees * n_groups + 1, dtype=np.intp)
    for r in range(n_records):
        ptr[record_key[r] + 1] += 1
    for k in range(n_trees * n_groups):
        ptr[k + 1] += ptr[k]
    nodes = np.empty(n_records, dtype=np.intp)
    fill = ptr[:-1].copy()
    for r in range(n_records):
        nodes[fill[record_key[r]]] = record_node[r]
        fill[record_key[r]] += 1
    return ptr, nodes


@kernel
def sort_by_leaf(leaves, rank):
    """Per tree, the samples ordered by the pre-order rank of their leaf (a counting
    sort: ranks are below the tree's size; ties keep sample order), the sorted ranks
    and the leaves in that order. ``leaves`` has shape (n_trees, n_samples) (global
    node ids, below 2**31 like every id of the packed layout).

    All three are uint32: half the memory, and an index read from them is known to be
    non-negative, so Numba's indexing skips its negative-index wrap-around.
    """
    n_trees, n_samples = leaves.shape
    order = np.empty((n_trees, n_samples), dtype=np.uint32)
    sorted_rank = np.empty((n_trees, n_samples), dtype=np.uint32)
    sorted_leaf = np.empty((n_trees, n_samples), dtype=np.uint32)
    largest = 0
    for t in range(n_trees):
        for i in range(n_samples):
            largest = max(largest, rank[leaves[t, i]] + 1)
    start = np.empty(largest + 1, dtype=np.intp)
    for t in range(n_trees):
        start[:] = 0
        for i in range(n_samples):
            start[rank[leaves[t, i]] + 1] += 1
        for r in range(largest):
            start[r + 1] += start[r]
        for i in range(n_samples):
            leaf = leaves[t, i]
            key = rank[leaf]
            k = start[key]
            start[key] = k + 1
            order[t, k] = i
            sorted_rank[t, k] = key
            sorted_leaf[t, k] = leaf
    return order, sorted_rank, sorted_leaf


@kernel
def flip_potential(children_left, children_right, feature, roots, tree_lo, tree_hi, order,
                   sorted_leaf, node_values, best, n_features):
    """For trees ``tree_lo .. tree_hi`` of a classifier whose trees add their leaf's
    class values, ``potential[i, f]``: how far permuting column ``f`` can move sample
    ``i``'s lead of its class ``best[i]`` over any other class.

    Only trees whose path for ``i`` splits on ``f`` can change their leaf; such a tree
    can lower the lead by at most ``values[leaf, b] - low[b]`` (the best class's value
    falling to its lowest) plus ``max_c high[c] - values[leaf, c]`` (another class's
    rising to its highest), ``low`` and ``high`` taken over every node of these trees
    (the trees are packed end to end from ``roots``). ``order`` and ``sorted_leaf`` are
    ``sort_by_leaf``'s: a depth-first walk meets the leaves in the order of their
    samples, keeping the distinct features of the current path on a stack.
    """
    n_samples = order.shape[1]
    width = node_values.shape[1]
    first_node = roots[tree_lo]
    end_node = roots[tree_hi] if tree_hi < roots.shape[0] else children_left.shape[0]
    low = node_values[first_node].copy()
    high = node_values[first_node].copy()
    for node in range(first_node, end_node):
        for c in range(width):
            low[c] = min(low[c], node_values[node, c])
            high[c] = max(high[c], node_values[node, c])
    potential = np.zeros((n_samples, n_features))
    on_path = np.zeros(n_features, dtype=np.intp)
    distinct = np.empty(n_features, dtype=np.intp)
    # A negative stack entry ~node marks leaving node's subtree.
    stack = np.empty(2 * _largest_tree(roots, children_left.shape[0]) + 1, dtype=np.intp)
    for t in range(tree_lo, tree_hi):
        position = 0
        n_distinct = 0
        stack[0] = roots[t]
        top = 1
        while top > 0:
            top -= 1
            entry = stack[top]
            if entry < 0:
                f = feature[~entry]
                on_path[f] -= 1
                if on_path[f] == 0:
                    n_distinct -= 1
                continue
            node = entry
            if children_left[node] == LEAF:
                while position < n_samples and sorted_leaf[t, position] == node:
                    i = order[t, position]
                    b = best[i]
                    rise = 0.0
                    for c in range(width):
                        if c != b:
                            rise = max(rise, high[c] - node_values[node, c])
                    bound = node_values[node, b] - low[b] + rise
                    for k in range(n_distinct):
                        potential[i, distinct[k]] += bound
                    position += 1
                continue
            f = feature[node]
            if on_path[f] == 0:
                distinct[n_distinct] = f
                n_distinct += 1
            on_path[f] += 1
            stack[top] = ~node
            stack[top + 1] = children_right[node]
            stack[top + 2] = children_left[node]
            top += 3
    return potential


@kernel
def permuted_values(X, source_rows, slot_repeat, slot_column):
    """``permuted[i, s] = X[source_rows[slot_repeat[s], i], slot_column[s]]``: the value
    sample ``i`` reads in slot ``s`` of a one-column group (0 where ``slot_column[s]``
    is -1, a several-column slot). Sample-major, as ``reroute_packed`` reads it."""
    n_samples = X.shape[0]
    n_slots = slot_repeat.shape[0]
    permuted = np.zeros((n_samples, n_slots), dtype=X.dtype)
    for i in range(n_samples):
        for s in range(n_slots):
            if slot_column[s] >= 0:
                permuted[i, s] = X[source_rows[slot_repeat[s], i], slot_column[s]]
    return permuted


@kernel
def sum_leaf_values(leaves, node_values, tree_column, init):
    """``init + sum_t node_values[leaf_t]`` per sample, added in tree order.

    ``node_values`` has shape (n_nodes, width): tree t adds its leaf's row to columns
    ``tree_column[t] .. tree_column[t] + width`` of the (n_samples, len(init)) output.
    """
    n_trees, n_samples = leaves.shape
    width = node_values.shape[1]
    out = np.empty((n_samples, init.shape[0]))
    for i in range(n_samples):
        for c in range(init.shape[0]):
            out[i, c] = init[c]
    for t in range(n_trees):
        column = tree_column[t]
        for i in range(n_samples):
            leaf = leaves[t, i]
            for w in range(width):
                out[i, column + w] += node_values[leaf, w]
    return out


@kernel
def _leaf_intervals(top, column, root, children_left, children_right, feature, threshold,
                    operator, lower, upper, stack):
    """Open interval of ``column`` values keeping every decision between ``top`` and
    each node of its subtree (stored at ``node - root``)."""
    lower[top - root] = -np.inf
    upper[top - root] = np.inf
    stack[0] = top
    size = 1
    while size > 0:
        size -= 1
        node = stack[size]
        left = children_left[node]
        if left == LEAF:
            continue
        right = children_right[node]
        lo = lower[node - root]
        hi = upper[node - root]
        lower[left - root] = lo
        upper[left - root] = hi
        lower[right - root] = lo
        upper[right - root] = hi
        if feature[node] == column:
            # Closed bounds become open ones one float64 step further out.
            if operator[node] == OP_LE:
                upper[left - root] = min(hi, np.nextafter(threshold[node], np.inf))
                lower[right - root] = max(lo, threshold[node])
            else:
                upper[left - root] = min(hi, threshold[node])
                lower[right - root] = max(lo, np.nextafter(threshold[node], -np.inf))
        stack[size] = right
        stack[size + 1] = left
        size += 2


# -- packed layout ---------------------------------------------------------------------
# One int32 record per node: left child, right child, feature, flags (bit 0: the split
# is ``<``, bit 1: missing values go left), global ids; thresholds in a parallel array.
# A visit reads 16 contiguous bytes and one float64 instead of six arrays.
_FLAG_LT = 1
_FLAG_MISSING_LEFT = 2


@kernel
def pack_nodes(children_left, children_right, feature, missing_go_to_left, operator):
    """The (n_nodes, 4) int32 records of the packed layout."""
    n_nodes = children_left.shape[0]
    nodes = np.empty((n_nodes, 4), dtype=np.int32)
    for k in range(n_nodes):
        nodes[k, 0] = children_left[k]
        nodes[k, 1] = children_right[k]
        nodes[k, 2] = feature[k]
        flags = 0
        if operator[k] != OP_LE:
            flags |= _FLAG_LT
        if missing_go_to_left[k] != 0:
            flags |= _FLAG_MISSING_LEFT
        nodes[k, 3] = flags
    return nodes


# Helpers inlined into the hot loops take scalars only: an inlined call that passes
# arrays costs an atomic reference-count increment and decrement per array and call,
# which was half the time of ``reroute_packed`` when done once per re-routed sample.
@kernel(inline="always")
def _goes_left(flags, threshold, value):
    """Whether ``value`` goes left at a packed split (``goes_left`` semantics)."""
    if flags & _FLAG_LT:
        left = value < threshold
    else:
        left = value <= threshold
    if not left and np.isnan(value):
        left = (flags & _FLAG_MISSING_LEFT) != 0
    return left


@kernel
def make_fast(nodes, thresholds, operator):
    """Turn the packed layout, in place, into the fast path's: ``x < t`` becomes
    ``x <= nextafter(t, -inf)`` (the same decision for every float64 ``x``), so every
    split reads ``x <= threshold`` (flags and ``operator`` cleared), and leaves get
    feature 0 so a lane parked on a leaf reads a valid column. Only for finite data:
    the missing-value direction is dropped."""
    for k in range(nodes.shape[0]):
        operator[k] = OP_LE
        if nodes[k, 0] == LEAF:
            nodes[k, 2] = 0
        elif nodes[k, 3] & _FLAG_LT:
            thresholds[k] = np.nextafter(thresholds[k], -np.inf)
        nodes[k, 3] = 0


@kernel
def apply_lanes(X, nodes, thresholds, roots):
    """Global leaf ids, shape (n_trees, n_samples), on ``make_fast``'s layout (finite
    ``X``, C-contiguous): every sample routed from each root by ``route_lanes``."""
    n_trees = roots.shape[0]
    n_samples = X.shape[0]
    leaves = np.empty((n_trees, n_samples), dtype=np.intp)
    sample = np.arange(n_samples).astype(np.uint32)
    root = np.empty(n_samples, dtype=np.intp)
    base = np.arange(n_samples) * X.shape[1]
    unused = np.zeros(n_samples)
    for t in range(n_trees):
        root[:] = roots[t]
        route_lanes(n_samples, sample, root, base, unused, -1, X.reshape(-1),
                    nodes.reshape(-1), thresholds, leaves[t])
    return leaves


@kernel
def reroute_packed(X, permuted, source_rows, slot_repeat, batch_groups, batch_slot_ptr,
                   group_ptr, group_columns, entry_ptr, entry_node, n_groups, nodes,
                   thresholds, operator, roots, rank, span_end, order, sorted_rank, sorted_leaf,
                   tree_lo, tree_hi, max_tree_nodes, exact, node_values, tree_column,
                   new_leaves, delta, changed, fast, skip):
    """Leaves reached with permuted group columns, for trees ``tree_lo .. tree_hi``.

    A slot is one (group, repeat). Group ``batch_groups[b]`` owns slots
    ``batch_slot_ptr[b] .. batch_slot_ptr[b + 1]``; in slot ``s`` sample ``i`` reads the
    group's columns from row ``source_rows[slot_repeat[s], i]``. Each sample is
    re-routed from the entry node above its leaf; for a one-column group a value
    inside the leaf's interval (``_leaf_intervals``) keeps the leaf without a traversal.
    Trees are independent, so disjoint tree ranges can run on different threads.
    ``order``, ``sorted_rank`` and ``sorted_leaf`` are ``sort_by_leaf``'s: the samples
    below an entry node are a run of positions, read in sequence.

    For a one-column group, ``permuted[i, s]`` is the value sample ``i`` reads in slot
    ``s`` (the column at row ``source_rows[slot_repeat[s], i]``); several-column groups
    read the source rows of ``X``. Where the leaf of tree t changes, ``changed[i, s]``
    is set and either (``exact`` false) ``new_leaves[s, t, i]`` gets the new leaf, or
    (``exact``: node values whose sums never round, see ``collect_exact``) the
    difference of the two leaves' values is added to ``delta[i, s]``; other entries are
    left alone. (Sample-major: the slots of one sample are written together.)

    ``fast``: the layout is ``make_fast``'s and the data finite; one-column groups then
    queue the traversals of a tree and run them side by side (``route_lanes``).

    ``skip`` (shape (n_groups, n_samples), or (0, 0) for none): sample ``i`` is not
    re-routed for group ``g`` where ``skip[g, i]`` is set (its consumer has shown that
    no change there can matter to it, see ``flip_potential``).
    """
    use_skip = skip.shape[0] > 0
    n_features = X.shape[1]
    width = node_values.shape[1]
    capacity = 0
    for b in range(batch_groups.shape[0]):
        capacity = max(capacity, batch_slot_ptr[b + 1] - batch_slot_ptr[b])
    # The fast path's queue of one tree and group: per item (a value that leaves its
    # leaf's interval) its position, slot and value; per position the sample, its leaf
    # and its entry node. One spare item: the queue writes an item before deciding
    # whether to keep it.
    position_capacity = X.shape[0] if fast else 0
    capacity = capacity * X.shape[0] + 1 if fast else 0
    item_position = np.empty(capacity, dtype=np.uint32)
    item_slot = np.empty(capacity, dtype=np.uint32)
    item_value = np.empty(capacity)
    item_leaf = np.empty(capacity, dtype=np.intp)
    position_row = np.empty(position_capacity, dtype=np.uint32)
    position_old = np.empty(position_capacity, dtype=np.uint32)
    position_top = np.empty(position_capacity, dtype=np.intp)
    position_base = np.empty(position_capacity, dtype=np.intp)
    n_slots = permuted.shape[1]
    flat_permuted = permuted.reshape(-1)
    flat_delta = delta.reshape(-1)
    flat_changed = changed.reshape(-1)
    flat_values = node_values.reshape(-1)
    flat_X = X.reshape(-1)
    flat_nodes = nodes.reshape(-1)
    in_group = np.zeros(n_features, dtype=np.uint8)
    lower = np.empty(max_tree_nodes)
    upper = np.empty(max_tree_nodes)
    stack = np.empty(max_tree_nodes + 1, dtype=np.intp)
    children_left = nodes[:, 0]
    children_right = nodes[:, 1]
    feature = nodes[:, 2]
    for b in range(batch_groups.shape[0]):
        g = batch_groups[b]
        column = group_columns[group_ptr[g]]
        single = group_ptr[g + 1] - group_ptr[g] == 1
        for k in range(group_ptr[g], group_ptr[g + 1]):
            in_group[group_columns[k]] = 1
        slot_lo = batch_slot_ptr[b]
        slot_hi = batch_slot_ptr[b + 1]
        for t in range(tree_lo, tree_hi):
            key = t * n_groups + g
            if entry_ptr[key] == entry_ptr[key + 1]:
                continue
            root = roots[t]
            tree_ranks = sorted_rank[t]
            n_items = np.uint64(0)
            n_positions = np.uint64(0)
            for q in range(entry_ptr[key], entry_ptr[key + 1]):
                top = entry_node[q]
                if single:
                    _leaf_intervals(top, column, root, children_left, children_right,
                                    feature, thresholds, operator, lower, upper, stack)
                first = np.searchsorted(tree_ranks, rank[top])
                last = np.searchsorted(tree_ranks, span_end[top])
                for position in range(first, last):
                    i = order[t, position]
                    if use_skip and skip[g, i] != 0:
                        continue
                    old = sorted_leaf[t, position]
                    if single and fast:
                        low = lower[old - root]
                        high = upper[old - root]
                        position_row[n_positions] = i
                        position_old[n_positions] = old
                        position_top[n_positions] = top
                        position_base[n_positions] = i * n_features
                        row = np.uint64(i) * np.uint64(n_slots)
                        for s in range(slot_lo, slot_hi):
                            # Written, then kept only when the value leaves the interval:
                            # no branch to mispredict (a third of the values leave it).
                            value = flat_permuted[row + np.uint64(s)]
                            item_position[n_items] = n_positions
                            item_slot[n_items] = s
                            item_value[n_items] = value
                            n_items += np.uint64(not (low < value < high))
                        n_positions += np.uint64(1)
                    elif single:
                        low = lower[old - root]
                        high = upper[old - root]
                        for s in range(slot_lo, slot_hi):
                            value = permuted[i, s]
                            if low < value < high:
                                continue
                            node = top
                            while nodes[node, 0] != LEAF:
                                f = nodes[node, 2]
                                if _goes_left(nodes[node, 3], thresholds[node],
                                              value if f == column else X[i, f]):
                                    node = nodes[node, 0]
                                else:
                                    node = nodes[node, 1]
                            if node != old:
                                if exact:
                                    offset = tree_column[t]
                                    for w in range(width):
                                        delta[i, s, offset + w] += (node_values[node, w]
                                                                    - node_values[old, w])
                                else:
                                    new_leaves[s, t, i] = node
                                changed[i, s] = 1
                    else:
                        for s in range(slot_lo, slot_hi):
                            source = source_rows[slot_repeat[s], i]
                            node = top
                            while nodes[node, 0] != LEAF:
                                f = nodes[node, 2]
                                row = source if in_group[f] else i
                                if _goes_left(nodes[node, 3], thresholds[node], X[row, f]):
                                    node = nodes[node, 0]
                                else:
                                    node = nodes[node, 1]
                            if node != old:
                                if exact:
                                    offset = tree_column[t]
                                    for w in range(width):
                                        delta[i, s, offset + w] += (node_values[node, w]
                                                                    - node_values[old, w])
                                else:
                                    new_leaves[s, t, i] = node
                                changed[i, s] = 1
            if n_items == 0:
                continue
            route_lanes(np.intp(n_items), item_position, position_top, position_base,
                        item_value, column, flat_X, flat_nodes, thresholds, item_leaf)
            # A value outside its leaf's interval always reaches another leaf. Flat
            # arrays and unsigned offsets: no wrap-around in this loop either.
            offset = np.uint64(tree_column[t])
            for k in range(np.intp(n_items)):
                node = np.uint64(item_leaf[k])
                position = item_position[k]
                i = np.uint64(position_row[position])
                old = np.uint64(position_old[position])
                s = np.uint64(item_slot[k])
                cell = i * np.uint64(n_slots) + s
                if exact:
                    at = cell * np.uint64(delta.shape[2]) + offset
                    for w in range(width):
                        flat_delta[at + np.uint64(w)] += (
                            flat_values[node * np.uint64(width) + np.uint64(w)]
                            - flat_values[old * np.uint64(width) + np.uint64(w)])
                else:
                    new_leaves[s, t, i] = node
                flat_changed[cell] = 1
        for k in range(group_ptr[g], group_ptr[g + 1]):
            in_group[group_columns[k]] = 0


@kernel
def checkpoint_sums(leaves_by_sample, node_values, tree_column, init, stride):
    """Per sample the running total of ``sum_leaf_values`` before trees 0, stride,
    2 * stride, ...: shape (n_samples, ceil(n_trees / stride), len(init))."""
    n_samples, n_trees = leaves_by_sample.shape
    width = node_values.shape[1]
    n_columns = init.shape[0]
    n_checkpoints = (n_trees + stride - 1) // stride
    out = np.empty((n_samples, n_checkpoints, n_columns))
    total = np.empty(n_columns)
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
    exact = np.empty(n_samples, dtype=np.uint8)
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
# ``sapwood.importance._chunked_evaluator.ChunkedTreeEvaluator``). Every total gets its
# trees' values added one tree at a time in tree order, the additions of
# ``sum_leaf_values``, so the bits do not depend on how the trees are cut.


@kernel
def add_leaf_values(leaves, node_values, tree_column, totals):
    """``sum_leaf_values`` continued: adds, in tree order, the values of the leaves
    ``leaves`` (shape (n_trees, n_samples), the piece's node ids) to the running
    ``totals`` (n_samples, n_columns), in place."""
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
