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

Outputs are never re-predicted: the evaluator records only the (tree, sample) pairs
whose leaf changed, and the sums are then redone in tree order for the changed samples
only, so every prediction is bit-identical to summing the trees in order.

All kernels take arrays of the packed forest (global node ids, ``roots``) and are
arrays-in / arrays-out with no validation; ``sapwood.importance._permutation_tree``
prepares their inputs.
"""

import numpy as np

from ._numba import kernel
from ._traverse import LEAF, OP_LE, goes_left


@kernel
def preorder_spans(children_left, children_right, roots):
    """Pre-order rank of every node within its tree and the end of its subtree's ranks.

    The subtree of node ``i`` is exactly the nodes of its tree ranked
    ``[rank[i], span_end[i])``.
    """
    n_nodes = children_left.shape[0]
    rank = np.empty(n_nodes, dtype=np.intp)
    span_end = np.empty(n_nodes, dtype=np.intp)
    stack = np.empty(n_nodes, dtype=np.intp)
    sequence = np.empty(n_nodes, dtype=np.intp)
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
    stack = np.empty(2 * n_nodes + 1, dtype=np.intp)
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
    """Per tree, the samples ordered by the pre-order rank of their leaf, and the
    sorted ranks. ``leaves`` has shape (n_trees, n_samples) (global node ids)."""
    n_trees, n_samples = leaves.shape
    order = np.empty((n_trees, n_samples), dtype=np.intp)
    sorted_rank = np.empty((n_trees, n_samples), dtype=np.intp)
    keys = np.empty(n_samples, dtype=np.intp)
    for t in range(n_trees):
        for i in range(n_samples):
            keys[i] = rank[leaves[t, i]]
        o = np.argsort(keys)
        for k in range(n_samples):
            order[t, k] = o[k]
            sorted_rank[t, k] = keys[o[k]]
    return order, sorted_rank


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


@kernel
def reroute_permuted(X, source_rows, slot_repeat, batch_groups, batch_slot_ptr, group_ptr,
                     group_columns, entry_ptr, entry_node, n_groups, children_left,
                     children_right, feature, threshold, missing_go_to_left, operator, roots,
                     rank, span_end, order, sorted_rank, leaves, tree_lo, tree_hi,
                     max_tree_nodes, new_leaves, changed):
    """Leaves reached with permuted group columns, for trees ``tree_lo .. tree_hi``.

    A slot is one (group, repeat). Group ``batch_groups[b]`` owns slots
    ``batch_slot_ptr[b] .. batch_slot_ptr[b + 1]``; in slot ``s`` sample ``i`` reads the
    group's columns from row ``source_rows[slot_repeat[s], i]``. Where the leaf of tree
    t changes, ``new_leaves[s, t, i]`` gets the new leaf and ``changed[s, i]`` is set;
    other entries are left alone. Trees are independent, so disjoint tree ranges can run
    on different threads.
    """
    n_features = X.shape[1]
    in_group = np.zeros(n_features, dtype=np.uint8)
    lower = np.empty(max_tree_nodes)
    upper = np.empty(max_tree_nodes)
    stack = np.empty(max_tree_nodes + 1, dtype=np.intp)
    for b in range(batch_groups.shape[0]):
        g = batch_groups[b]
        first_column = group_columns[group_ptr[g]]
        single = group_ptr[g + 1] - group_ptr[g] == 1
        for k in range(group_ptr[g], group_ptr[g + 1]):
            in_group[group_columns[k]] = 1
        slot_lo = batch_slot_ptr[b]
        slot_hi = batch_slot_ptr[b + 1]
        for t in range(tree_lo, tree_hi):
            key = t * n_groups + g
            root = roots[t]
            for q in range(entry_ptr[key], entry_ptr[key + 1]):
                top = entry_node[q]
                if single:
                    _leaf_intervals(top, first_column, root, children_left, children_right,
                                    feature, threshold, operator, lower, upper, stack)
                first = np.searchsorted(sorted_rank[t], rank[top])
                last = np.searchsorted(sorted_rank[t], span_end[top])
                for position in range(first, last):
                    i = order[t, position]
                    old = leaves[t, i]
                    for s in range(slot_lo, slot_hi):
                        source = source_rows[slot_repeat[s], i]
                        if single:
                            value = X[source, first_column]
                            if lower[old - root] < value < upper[old - root]:
                                continue
                        node = top
                        while children_left[node] != LEAF:
                            f = feature[node]
                            row = source if in_group[f] else i
                            if goes_left(X[row, f], threshold[node], operator[node],
                                         missing_go_to_left[node]):
                                node = children_left[node]
                            else:
                                node = children_right[node]
                        if node != old:
                            new_leaves[s, t, i] = node
                            changed[s, i] = 1
        for k in range(group_ptr[g], group_ptr[g + 1]):
            in_group[group_columns[k]] = 0


@kernel
def resum_changed(leaves, new_leaves, changed, node_values, tree_column, sample_lo,
                  sample_hi, out):
    """Add ``node_values`` of every tree's (possibly new) leaf to ``out[s, i]`` in tree
    order, for the changed samples ``i`` in ``sample_lo .. sample_hi`` of every slot.

    ``out`` must hold the initial value; consumed ``new_leaves`` entries are reset to -1
    so the buffer can be reused.
    """
    n_slots = new_leaves.shape[0]
    n_trees = leaves.shape[0]
    width = node_values.shape[1]
    for s in range(n_slots):
        for t in range(n_trees):
            column = tree_column[t]
            for i in range(sample_lo, sample_hi):
                if changed[s, i] == 0:
                    continue
                leaf = new_leaves[s, t, i]
                if leaf < 0:
                    leaf = leaves[t, i]
                else:
                    new_leaves[s, t, i] = -1
                for w in range(width):
                    out[s, i, column + w] += node_values[leaf, w]
