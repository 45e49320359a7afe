"""Held-out permutation importance on trees: re-routing a batch of permuted groups.

For every (group, repeat) "slot" of a batch, :func:`reroute_packed` finds the rows whose
leaf changes in each tree, re-routing only the rows below the group's entry nodes
(:mod:`._tree_index`) and only the values that leave their leaf's interval, through the
one permuted traversal (:mod:`._permuted_traversal`: the fast lanes for one-column
groups on finite data, the general route otherwise). The sums are redone by
:mod:`._permuted_sums`.

A consumer that reads only the predicted class (the default accuracy score) can skip
more: :func:`flip_potential` bounds how far the trees whose path meets a column can
move a row's lead of its class, and :func:`reroute_packed` leaves out the (group, row)
pairs whose lead is larger (``skip``).

All kernels take arrays of the packed forest (global node ids, ``roots``) and are
arrays-in / arrays-out with no validation; ``sapwood.importance._engine._tree_evaluator``
prepares their inputs.
"""

import numpy as np

from ._arrays import empty, zeros
from ._numba import kernel, leaf_kernel
from ._permuted_traversal import route_permuted, set_bits_of
from ._traverse import LEAF
from ._tree_index import keeps_leaf, largest_tree, leaf_intervals

__all__ = ["QUEUE_ITEMS", "flip_potential", "permuted_values", "reroute_packed"]

# Items a re-routing queue holds before it is routed and emptied (``reroute_packed``'s
# ``queue_items``): its size does not grow with the rows (a tree and group may queue
# every row times every slot), and the lanes still take long runs of items.
QUEUE_ITEMS = 1 << 16


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
    potential = zeros((n_samples, n_features), np.float64)
    on_path = zeros(n_features, np.intp)
    distinct = empty(n_features, np.intp)
    # A negative stack entry ~node marks leaving node's subtree.
    stack = empty(2 * largest_tree(roots, children_left.shape[0]) + 1, np.intp)
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
    is -1, a several-column slot), for the ``source_rows.shape[1]`` samples of
    ``source_rows`` (all of X's rows, or a window of them whose sources are any of X's
    rows). Sample-major, as ``reroute_packed`` reads it."""
    n_samples = source_rows.shape[1]
    n_slots = slot_repeat.shape[0]
    permuted = zeros((n_samples, n_slots), X.dtype)
    for i in range(n_samples):
        for s in range(n_slots):
            if slot_column[s] >= 0:
                permuted[i, s] = X[source_rows[slot_repeat[s], i], slot_column[s]]
    return permuted


@kernel
def reroute_packed(X, row_lo, permuted, source_rows, slot_repeat, batch_groups,
                   batch_slot_ptr, group_ptr, group_columns, entry_ptr, entry_node,
                   entry_span, n_groups, nodes, thresholds, operator, cat_bitsets, roots,
                   rank, order, sorted_rank, sorted_leaf, tree_lo, tree_hi,
                   max_tree_nodes, exact, node_values, tree_column, new_leaves, delta,
                   changed, fast, skip, queue_items, sets=True):
    """Leaves reached with permuted group columns, for trees ``tree_lo .. tree_hi``.

    A slot is one (group, repeat). Group ``batch_groups[b]`` owns slots
    ``batch_slot_ptr[b] .. batch_slot_ptr[b + 1]``; in slot ``s`` sample ``i`` reads the
    group's columns from row ``source_rows[slot_repeat[s], i]`` of ``X``. Each sample is
    re-routed from the entry node above its leaf; for a one-column group a value
    inside the leaf's interval (``leaf_intervals``) keeps the leaf without a traversal.
    Per tree and group the re-routings are queued, then run by the permuted traversal.
    Trees are independent, so disjoint tree ranges can run on different threads.
    ``order``, ``sorted_rank`` and ``sorted_leaf`` are ``sort_by_leaf``'s: the samples
    below an entry node are a run of positions, read in sequence. ``rank`` is every
    node's pre-order rank and ``entry_span[q]`` the end of the ranks of entry node
    ``entry_node[q]``'s subtree (``preorder_spans``); an entry node with no row below
    it is passed over.

    The samples are a window of X's rows: sample ``i`` is row ``row_lo + i`` of ``X``
    (its own values), while its sources may be any of X's rows. Every per-sample array
    (``permuted``, ``source_rows``, ``order``, ``changed``, ``new_leaves``, ``delta``,
    ``skip``) covers the window only, so the rows can be taken a window at a time.

    For a one-column group, ``permuted[i, s]`` is the value sample ``i`` reads in slot
    ``s`` (the column at row ``source_rows[slot_repeat[s], i]``); several-column groups
    read the source rows of ``X``. Where the leaf of tree t changes, ``changed[i, s]``
    is set and either (``exact`` false) ``new_leaves[s, t, i]`` gets the new leaf, or
    (``exact``: node values whose sums never round, see ``collect_exact``) the
    difference of the two leaves' values is added to ``delta[i, s]``; other entries are
    left alone. (Sample-major: the slots of one sample are written together.)

    ``cat_bitsets``: the category sets of the packed trees' categorical splits.

    ``fast``: the layout is ``make_fast``'s (``fast_layout`` holds) and the data finite;
    one-column groups then take the fast traversal (``route_lanes``), other groups the
    general one (``route_rows``), as does all data without ``fast``.

    ``skip`` (shape (n_groups, n_samples), or (0, 0) for none): sample ``i`` is not
    re-routed for group ``g`` where ``skip[g, i]`` is set (its consumer has shown that
    no change there can matter to it, see ``flip_potential``).

    ``queue_items``: the items a tree and group's queue holds before it is routed and
    emptied (``QUEUE_ITEMS``; at least a row's slots).

    ``sets``: None when no tree has a category set: only the lanes without the
    categorical test compile (see ``route_permuted``).
    """
    use_skip = skip.shape[0] > 0
    n_samples = order.shape[1]
    n_features = X.shape[1]
    width = node_values.shape[1]
    # The queue of one tree and group: per item (one slot's re-routing of a row) its
    # position, slot, permuted value (one-column groups) and source row's offset in
    # ``flat_X``; per position the row, its leaf and its entry node. Entry nodes of one
    # group have disjoint subtrees, so a tree and group have at most one position per
    # row. One spare item: the queue writes an item before deciding whether to keep it.
    # A full queue is routed and emptied (``_run_queue``): each item stands alone.
    most_slots = 0
    for b in range(batch_groups.shape[0]):
        most_slots = max(most_slots, batch_slot_ptr[b + 1] - batch_slot_ptr[b])
    capacity = max(min(most_slots * n_samples, queue_items), most_slots) + 1
    n_places = min(n_samples, capacity)
    item_position = empty(capacity, np.uint32)
    item_slot = empty(capacity, np.uint32)
    item_value = empty(capacity, np.float64)
    item_source = empty(capacity, np.intp)
    item_leaf = empty(capacity, np.intp)
    position_row = empty(n_places, np.uint32)
    position_old = empty(n_places, np.uint32)
    position_top = empty(n_places, np.int32)  # node ids, as route_permuted's
    position_base = empty(n_places, np.intp)
    queue_end = np.uint64(capacity)
    places_end = np.uint64(n_places)
    n_slots = permuted.shape[1]
    flat_permuted = permuted.reshape(-1)
    flat_delta = delta.reshape(-1)
    flat_changed = changed.reshape(-1)
    flat_values = node_values.reshape(-1)
    flat_X = X.reshape(-1)
    flat_nodes = nodes.reshape(-1)
    in_group = zeros(n_features, np.uint8)
    lower = empty(max_tree_nodes, np.float64)
    upper = empty(max_tree_nodes, np.float64)
    codes = empty(max_tree_nodes, np.uint64)
    stack = empty(max_tree_nodes + 1, np.intp)
    children_left = nodes[:, 0]
    children_right = nodes[:, 1]
    feature = nodes[:, 2]
    # The lanes' category bits, for the nodes of these trees (``set_bits_of``).
    set_bits = empty(0, np.uint64)
    if fast and cat_bitsets.shape[0] > 0:
        end_node = roots[tree_hi] if tree_hi < roots.shape[0] else nodes.shape[0]
        set_bits = set_bits_of(nodes, thresholds, cat_bitsets, roots[tree_lo], end_node)
    for b in range(batch_groups.shape[0]):
        g = batch_groups[b]
        column = group_columns[group_ptr[g]]
        single = group_ptr[g + 1] - group_ptr[g] == 1
        lanes = single and fast
        for k in range(group_ptr[g], group_ptr[g + 1]):
            in_group[group_columns[k]] = 1
        slot_lo = batch_slot_ptr[b]
        slot_hi = batch_slot_ptr[b + 1]
        group_slots = np.uint64(slot_hi - slot_lo)
        for t in range(tree_lo, tree_hi):
            key = t * n_groups + g
            if entry_ptr[key] == entry_ptr[key + 1]:
                continue
            root = roots[t]
            tree_ranks = sorted_rank[t]
            n_items = np.uint64(0)
            n_positions = np.uint64(0)
            for q in range(entry_ptr[key], entry_ptr[key + 1]):
                top = np.intp(entry_node[q])
                first = _first_at_least(tree_ranks, rank[top])
                last = _first_at_least(tree_ranks, entry_span[q])
                if first == last:
                    continue  # no row below this entry node
                if single:
                    leaf_intervals(top, column, root, children_left, children_right,
                                   feature, thresholds, operator, cat_bitsets, lower, upper,
                                   codes, stack)
                for position in range(first, last):
                    i = order[t, position]
                    if use_skip and skip[g, i] != 0:
                        continue
                    if n_positions == places_end or n_items + group_slots >= queue_end:
                        _run_queue(lanes, sets, np.intp(n_items), item_position,
                                   position_top, position_base, item_value, item_source,
                                   in_group, column, flat_X, flat_nodes, thresholds,
                                   cat_bitsets, set_bits, item_leaf, position_row,
                                   position_old, item_slot, n_slots, t, exact,
                                   np.uint64(tree_column[t]), flat_values, width,
                                   delta.shape[2], flat_delta, new_leaves, flat_changed)
                        n_items = np.uint64(0)
                        n_positions = np.uint64(0)
                    old = sorted_leaf[t, position]
                    position_row[n_positions] = i
                    position_old[n_positions] = old
                    position_top[n_positions] = top
                    position_base[n_positions] = (row_lo + i) * n_features
                    low = -np.inf
                    high = np.inf
                    keep = ~np.uint64(0)
                    if single:
                        low = lower[old - root]
                        high = upper[old - root]
                        keep = codes[old - root]
                    row = np.uint64(i) * np.uint64(n_slots)
                    for s in range(slot_lo, slot_hi):
                        item_position[n_items] = n_positions
                        item_slot[n_items] = s
                        if not lanes:
                            item_source[n_items] = source_rows[slot_repeat[s], i] * n_features
                        if single:
                            # Written, then kept only when the value leaves the interval
                            # (or the categories): no branch to mispredict (a third of
                            # the values leave it).
                            value = flat_permuted[row + np.uint64(s)]
                            item_value[n_items] = value
                            n_items += np.uint64(not keeps_leaf(value, low, high, keep))
                        else:
                            n_items += np.uint64(1)
                    n_positions += np.uint64(1)
            if n_items == 0:
                continue
            _run_queue(lanes, sets, np.intp(n_items), item_position, position_top,
                       position_base, item_value, item_source, in_group, column, flat_X,
                       flat_nodes, thresholds, cat_bitsets, set_bits, item_leaf, position_row,
                       position_old, item_slot, n_slots, t, exact, np.uint64(tree_column[t]),
                       flat_values, width, delta.shape[2], flat_delta, new_leaves,
                       flat_changed)
        for k in range(group_ptr[g], group_ptr[g + 1]):
            in_group[group_columns[k]] = 0


@leaf_kernel
def _run_queue(lanes, sets, n_items, item_position, position_top, position_base, item_value,
               item_source, in_group, column, flat_X, flat_nodes, thresholds, cat_bitsets,
               set_bits, item_leaf, position_row, position_old, item_slot, n_slots, t, exact,
               offset, flat_values, width, delta_width, flat_delta, new_leaves, flat_changed):
    """Route ``reroute_packed``'s queue of tree ``t`` (its first ``n_items`` items) and
    record the leaves that changed: the new leaf (``new_leaves``) or, for exact sums,
    the difference of the leaves' values (``flat_delta``), and the changed flag."""
    route_permuted(lanes, sets, n_items, item_position, position_top, position_base,
                   item_value, item_source, in_group, column, flat_X, flat_nodes, thresholds,
                   cat_bitsets, set_bits, item_leaf)
    # On finite data a value outside its leaf's interval always reaches another leaf; a
    # missing one, or a group's row, may not. Flat arrays and unsigned offsets: no
    # wrap-around in this loop either.
    for k in range(n_items):
        node = np.uint64(item_leaf[k])
        position = item_position[k]
        old = np.uint64(position_old[position])
        if node == old:
            continue
        i = np.uint64(position_row[position])
        s = np.uint64(item_slot[k])
        cell = i * np.uint64(n_slots) + s
        if exact:
            at = cell * np.uint64(delta_width) + offset
            for w in range(width):
                flat_delta[at + np.uint64(w)] += (
                    flat_values[node * np.uint64(width) + np.uint64(w)]
                    - flat_values[old * np.uint64(width) + np.uint64(w)])
        else:
            new_leaves[s, t, i] = node
        flat_changed[cell] = 1


@leaf_kernel
def _first_at_least(ascending, value):
    """``np.searchsorted(ascending, value)``: the first index whose entry is not below
    ``value`` (a bisection of our own: Numba's searchsorted compiles its comparisons for
    every dtype, NaN and complex included, a second of a first run)."""
    lo = 0
    hi = ascending.shape[0]
    while lo < hi:
        mid = (lo + hi) >> 1
        if ascending[mid] < value:
            lo = mid + 1
        else:
            hi = mid
    return lo
