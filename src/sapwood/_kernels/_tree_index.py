"""Indexes of packed trees for re-routing only the rows a permuted group can move.

Permuting the columns of a group ``G`` changes a tree's output only for rows whose path
meets a split on a column of ``G``. For each tree and group the *entry nodes*
(:func:`entry_nodes`) are the splits on ``G`` with no ancestor splitting on ``G``; a row
is re-routed from the entry node on its path, reading the permuted row only at splits on
``G`` (ranger ``Tree::dropDownSamplePermuted``). Rows are sorted per tree by the
pre-order rank of their leaf (:func:`preorder_spans`, :func:`sort_by_leaf`), so the rows
below any node are one contiguous run found by binary search: unaffected rows and trees
that never split on ``G`` cost nothing.

For a one-column group each leaf below an entry node carries the open interval of values
that take the same decisions at every split on that column along its path
(:func:`leaf_intervals`); a permuted value inside it lands in the same leaf without a
traversal.

Trees are packed end to end from ``roots`` (global node ids); arrays in, arrays out.
"""

import numpy as np

from ._arrays import empty, zeros
from ._numba import kernel
from ._permuted_traversal import low_categories
from ._traverse import LEAF, OP_CAT, OP_LE

__all__ = ["entry_nodes", "entry_nodes_of", "keeps_leaf", "largest_tree", "leaf_intervals",
           "preorder_spans", "preorder_spans_of", "sort_by_leaf", "sort_by_leaf_into"]


@kernel
def largest_tree(roots, n_nodes):
    """Node count of the largest tree (trees are packed end to end from ``roots``)."""
    largest = 0
    for t in range(roots.shape[0]):
        end = roots[t + 1] if t + 1 < roots.shape[0] else n_nodes
        largest = max(largest, end - roots[t])
    return largest


@kernel
def preorder_spans(children_left, children_right, roots):
    """Pre-order rank of every node within its tree and the end of its subtree's ranks
    (uint32: ranks are below a tree's size).

    The subtree of node ``i`` is exactly the nodes of its tree ranked
    ``[rank[i], span_end[i])``.
    """
    n_nodes = children_left.shape[0]
    rank = empty(n_nodes, np.uint32)
    span_end = empty(n_nodes, np.uint32)
    preorder_spans_of(children_left, children_right, roots, 0, roots.shape[0], rank,
                      span_end)
    return rank, span_end


@kernel
def preorder_spans_of(children_left, children_right, roots, tree_lo, tree_hi, rank,
                      span_end):
    """:func:`preorder_spans` of trees ``tree_lo .. tree_hi`` written into ``rank`` and
    ``span_end`` (every node's entries, uint32): each tree is walked on its own, so
    disjoint tree ranges can run on different threads."""
    n_nodes = children_left.shape[0]
    largest = 0
    for t in range(tree_lo, tree_hi):
        end = roots[t + 1] if t + 1 < roots.shape[0] else n_nodes
        largest = max(largest, end - roots[t])
    stack = empty(largest + 1, np.intp)
    sequence = empty(largest, np.intp)
    for t in range(tree_lo, tree_hi):
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


@kernel
def entry_nodes(children_left, children_right, feature, roots, feature_group_ptr,
                feature_groups, n_groups):
    """Entry nodes of every (tree, group): splits on a group column with no ancestor
    splitting on one. CSR over ``t * n_groups + g``: ``(ptr, nodes)``.

    ``feature_groups[feature_group_ptr[f]:feature_group_ptr[f + 1]]`` lists the groups
    column ``f`` belongs to.
    """
    return entry_nodes_of(children_left, children_right, feature, roots, 0, roots.shape[0],
                          feature_group_ptr, feature_groups, n_groups)


@kernel
def entry_nodes_of(children_left, children_right, feature, roots, tree_lo, tree_hi,
                   feature_group_ptr, feature_groups, n_groups):
    """:func:`entry_nodes` of trees ``tree_lo .. tree_hi``: CSR over
    ``(t - tree_lo) * n_groups + g``. Each tree is walked on its own, so disjoint tree
    ranges can run on different threads and their CSRs be put end to end."""
    n_nodes = children_left.shape[0]
    n_trees = tree_hi - tree_lo
    first_node = roots[tree_lo] if n_trees > 0 else 0
    end_node = roots[tree_hi] if tree_hi < roots.shape[0] else n_nodes
    capacity = 0
    largest = 0
    for t in range(tree_lo, tree_hi):
        end = roots[t + 1] if t + 1 < roots.shape[0] else n_nodes
        largest = max(largest, end - roots[t])
    for node in range(first_node, end_node):
        if children_left[node] != LEAF:
            f = feature[node]
            capacity += feature_group_ptr[f + 1] - feature_group_ptr[f]
    record_key = empty(capacity, np.intp)
    record_node = empty(capacity, np.intp)
    n_records = 0
    ancestors_in_group = zeros(n_groups, np.intp)
    # A negative stack entry ~node marks leaving node's subtree.
    stack = empty(2 * largest + 1, np.intp)
    for t in range(tree_lo, tree_hi):
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
                    record_key[n_records] = (t - tree_lo) * n_groups + g
                    record_node[n_records] = node
                    n_records += 1
                ancestors_in_group[g] += 1
            stack[top] = ~node
            stack[top + 1] = children_right[node]
            stack[top + 2] = children_left[node]
            top += 3
    ptr = zeros(n_trees * n_groups + 1, np.intp)
    for r in range(n_records):
        ptr[record_key[r] + 1] += 1
    for k in range(n_trees * n_groups):
        ptr[k + 1] += ptr[k]
    nodes = empty(n_records, np.intp)
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
    order = empty((n_trees, n_samples), np.uint32)
    sorted_rank = empty((n_trees, n_samples), np.uint32)
    sorted_leaf = empty((n_trees, n_samples), np.uint32)
    sort_by_leaf_into(leaves, rank, order, sorted_rank, sorted_leaf)
    return order, sorted_rank, sorted_leaf


@kernel
def sort_by_leaf_into(leaves, rank, order, sorted_rank, sorted_leaf):
    """:func:`sort_by_leaf` written into ``order``, ``sorted_rank`` and ``sorted_leaf``
    (uint32, the shape of ``leaves``): a caller fills the rows of a range of trees of
    arrays it holds, with no copy to put the ranges' results together.

    A counting sort over the ranks costs a pass over as many counters as the tree has
    nodes; for fewer rows than a quarter of that (a window of rows of a large tree) a
    radix sort of the ranks, eleven bits at a time, costs a few passes over the rows
    instead. Both are stable: the same order either way."""
    n_trees, n_samples = leaves.shape
    largest = 0
    for t in range(n_trees):
        for i in range(n_samples):
            largest = max(largest, rank[leaves[t, i]] + 1)
    if 4 * n_samples < largest:
        _radix_sort_by_leaf(leaves, rank, largest, order, sorted_rank, sorted_leaf)
        return
    start = empty(largest + 1, np.intp)
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


_DIGIT_BITS = 11
_DIGITS = 1 << _DIGIT_BITS


@kernel
def _radix_sort_by_leaf(leaves, rank, largest, order, sorted_rank, sorted_leaf):
    """:func:`sort_by_leaf_into` by a least-significant-digit radix sort of the ranks
    (all below ``largest``): stable, as each pass is."""
    n_trees, n_samples = leaves.shape
    n_passes = 1
    while (largest - 1) >> (_DIGIT_BITS * n_passes) > 0:
        n_passes += 1
    key = empty(n_samples, np.uint32)
    item = empty(n_samples, np.uint32)
    next_key = empty(n_samples, np.uint32)
    next_item = empty(n_samples, np.uint32)
    start = empty(_DIGITS + 1, np.intp)
    for t in range(n_trees):
        for i in range(n_samples):
            key[i] = rank[leaves[t, i]]
            item[i] = i
        for p in range(n_passes):
            shift = np.uint32(_DIGIT_BITS * p)
            start[:] = 0
            for i in range(n_samples):
                start[((key[i] >> shift) & np.uint32(_DIGITS - 1)) + 1] += 1
            for d in range(_DIGITS):
                start[d + 1] += start[d]
            for i in range(n_samples):
                digit = (key[i] >> shift) & np.uint32(_DIGITS - 1)
                k = start[digit]
                start[digit] = k + 1
                next_key[k] = key[i]
                next_item[k] = item[i]
            key, next_key = next_key, key
            item, next_item = next_item, item
        for k in range(n_samples):
            i = item[k]
            order[t, k] = i
            sorted_rank[t, k] = key[k]
            sorted_leaf[t, k] = leaves[t, i]


@kernel(inline="always", _nrt=False)
def keeps_leaf(value, low, high, codes):
    """Whether a permuted ``value`` keeps every decision recorded by
    :func:`leaf_intervals` for a node: inside the open interval ``(low, high)`` and,
    its category (the value truncated, clamped to ``0 .. 63``) in the 64-bit set
    ``codes``. Branch-free; ``codes`` is all ones where no categorical split is on the
    path, so there it is the interval test alone."""
    code = value if value > 0.0 else 0.0
    code = code if code < 63.0 else 63.0
    in_codes = (codes >> np.uint64(code)) & np.uint64(1) != 0
    return (low < value) & (value < high) & in_codes


@kernel
def leaf_intervals(top, column, root, children_left, children_right, feature, threshold,
                   operator, cat_bitsets, lower, upper, codes, stack):
    """What keeps every decision on ``column`` between ``top`` and each node of its
    subtree (stored at ``node - root``): the open interval ``(lower, upper)`` of its
    values and the categories ``codes`` (64 bits, category ``c`` at bit ``c``), read
    together by :func:`keeps_leaf`.

    A numeric split narrows the interval. A categorical split keeps the categories of
    its set on the left, the others on the right; as a set of 64 bits this holds only
    for categories ``0 .. 63``, so below it the interval is also narrowed to
    ``[0, 64)``: a negative or larger value (and NaN, as everywhere) takes a
    traversal, which finds its leaf whatever it is. ``codes`` stays all ones where
    no categorical split on ``column`` is above."""
    lower[top - root] = -np.inf
    upper[top - root] = np.inf
    codes[top - root] = ~np.uint64(0)
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
        keep = codes[node - root]
        lower[left - root] = lo
        upper[left - root] = hi
        lower[right - root] = lo
        upper[right - root] = hi
        codes[left - root] = keep
        codes[right - root] = keep
        if feature[node] == column:
            # Closed bounds become open ones one float64 step further out.
            if operator[node] == OP_CAT:
                # -0.0 is category 0 too: the bound is the largest negative float64.
                lo = max(lo, np.nextafter(0.0, -np.inf))
                hi = min(hi, 64.0)
                lower[left - root] = lower[right - root] = lo
                upper[left - root] = upper[right - root] = hi
                in_set = low_categories(cat_bitsets, np.intp(threshold[node]))
                codes[left - root] = keep & in_set
                codes[right - root] = keep & ~in_set
            elif operator[node] == OP_LE:
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
