"""Held-out permutation importance on boosted models by leaf bitmasks: no re-routing.

A tree of at most 64 leaves, its leaves numbered left to right, gives every split a
mask of the leaves a value can still reach once it goes right there: all but the
leaves of the split's left subtree. The leaf a row reaches is the lowest leaf left in
the AND of the masks of the splits where it goes right (the leftmost leaf not ruled
out: Lucchese et al., "QuickScorer", SIGIR 2015). Grouped by feature, the splits where
a value goes right are those whose cut it reaches: sorted by cut, a prefix. So each
(tree, feature) keeps the ANDs of its masks' prefixes, and a value's mask is the prefix
of its rank among the cuts.

A row's leaf when feature ``f`` reads another value is then the lowest leaf of the AND
of the row's own masks of every other feature and that value's mask of ``f``: one AND
and a count of trailing zeros, whatever the split the value leaves the row's path at.
Only the features on the row's own path can change its leaf, so only their slots are
asked. Every total is the model's own sum: ``start`` plus the trees' leaf values in
tree order, in ``leaf_value``'s dtype.

:func:`mask_layout` makes the tables from :func:`._boosted_permutation.boosted_layout`'s
records. A categorical feature's values are its categories: a (tree, feature) keeps a
mask per class of categories that go the same way at all its splits. A tree with more
than 64 leaves or a ``<= inf`` split, or a feature split both as a number and as a
category, has no masks, and the model takes
:func:`._boosted_permutation.boosted_permuted_totals` instead.
"""

import numpy as np
from numba.core import cgutils, types
from numba.extending import intrinsic

from ._arrays import empty, full, zeros
from ._boosted_permutation import _MISSING_LEFT, _SLOW
from ._numba import kernel
from ._traverse import OP_CAT, in_category_set

__all__ = ["mask_layout", "masked_permuted_totals"]

_ROW_BLOCK = 64
_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)
# The most masks of a categorical entry (its ranks are bytes).
_MOST_CLASSES = 256


@intrinsic
def _lowest_bit(typingctx, mask):
    """The index of the lowest set bit of a nonzero uint64 (LLVM's ``cttz``)."""
    def codegen(context, builder, signature, args):
        return builder.cttz(args[0], cgutils.true_bit)
    return types.uint64(types.uint64), codegen


@kernel
def _tree_order(records, root_code):
    """Every tree's nodes in left-first pre-order (coded: a leaf as ``~id``), trees one
    after another, with ``parent`` per node (-1 at roots); ``node_ptr[t]`` starts tree
    ``t``'s. Leaves come left to right, and a split's left subtree's leaves are those
    between its left child's first leaf and its right child's."""
    n_nodes = records.shape[0]
    n_trees = root_code.shape[0]
    order = empty(n_nodes, np.intp)
    node_ptr = zeros(n_trees + 1, np.intp)
    parent = full(n_nodes, -1, np.intp)
    stack = empty(n_nodes + 1, np.intp)
    n = 0
    for t in range(n_trees):
        stack[0] = root_code[t]
        n_stack = 1
        while n_stack > 0:
            n_stack -= 1
            code = stack[n_stack]
            order[n] = code
            n += 1
            if code >= 0:
                for side in (1, 0):
                    child = records[code, side]
                    parent[~child if child < 0 else child] = code
                    stack[n_stack] = child
                    n_stack += 1
        node_ptr[t + 1] = n
    return order[:n].copy(), node_ptr, parent


def mask_layout(records, cut, operator, thresholds, cat_bitsets, root_code, node_value,
                n_features, budget):
    """The tables of :func:`masked_permuted_totals` from ``boosted_layout``'s
    ``records``, ``cut`` and ``root_code``, the packed ``operator``, ``thresholds`` and
    category sets, and the nodes' values: ``(ok, codes, tables)``. ``ok`` is False (and
    the rest None) when a tree cannot be stated by leaf masks (a ``<= inf`` split, more
    than 64 leaves, a feature split both ways, a categorical feature whose categories
    fall into more than 256 classes in one tree) or the rank tables would take more
    than ``budget`` bytes.

    Values are coded per feature by :func:`value_codes` from ``codes = (cuts_ptr,
    model_cuts, categories)``. A numeric feature ``f``'s distinct cuts in the whole model
    are ``model_cuts[cuts_ptr[f] .. cuts_ptr[f + 1]]``, ascending, and a value's code is
    how many of them it reaches; a categorical feature's (``categories[f] >= 0``, the
    categories its sets can hold) code is its category, ``categories[f]`` for a value in
    no set. A missing value's code is one more than the largest. ``tables``:
    ``tree_entry_ptr, entry_feature, rank_ptr, rank, mask_ptr, masks, leaf_ptr,
    leaf_value, path_ptr, path_entry`` (see :func:`_fill_tables`). The sorting is
    numpy's; the kernel only walks (a kernel that sorts takes seconds to compile).
    """
    refused = False, None, None
    order, node_ptr, parent = _tree_order(records, root_code)
    n_trees = root_code.shape[0]
    tree_of = np.repeat(np.arange(n_trees), np.diff(node_ptr))
    is_split = order >= 0
    splits = order[is_split]
    leaves_per_tree = np.bincount(tree_of[~is_split], minlength=n_trees)
    categorical = operator[splits] == OP_CAT
    slow = (records[splits, 3] & _SLOW) != 0
    if (slow & ~categorical).any() or leaves_per_tree.max(initial=0) > 64:
        return refused
    split_tree = tree_of[is_split]
    split_feature = records[splits, 2].astype(np.intp)
    # A categorical feature's codes: its categories up to the widest set's last word.
    categories = np.full(n_features, -1, dtype=np.intp)
    widths = 32 * cat_bitsets[thresholds[splits[categorical]].astype(np.intp)].astype(np.intp)
    np.maximum.at(categories, split_feature[categorical], widths)
    if (categories[split_feature[~categorical]] >= 0).any():
        return refused  # split as a number and as a category
    # The model's distinct cuts per numeric feature, and each split's cut's index among
    # them (0 for a categorical split: its entry's splits need no order).
    split_cut = np.where(categorical, 0.0, cut[splits])
    numeric = np.flatnonzero(~categorical)
    by_value = numeric[np.lexsort((split_cut[numeric], split_feature[numeric]))]
    sorted_feature, sorted_cut = split_feature[by_value], split_cut[by_value]
    new = np.ones(by_value.shape[0], dtype=bool)
    new[1:] = (sorted_feature[1:] != sorted_feature[:-1]) | (sorted_cut[1:] != sorted_cut[:-1])
    model_cuts = sorted_cut[new]
    cuts_ptr = np.searchsorted(sorted_feature[new], np.arange(n_features + 1)).astype(np.intp)
    cut_index = np.zeros(splits.shape[0], dtype=np.intp)
    cut_index[by_value] = np.cumsum(new) - 1 - cuts_ptr[sorted_feature]
    # Per tree, its splits by feature and cut: an entry per (tree, feature).
    ranked = np.lexsort((cut_index, split_feature, split_tree))
    starts = np.ones(splits.shape[0], dtype=bool)
    starts[1:] = ((split_tree[ranked][1:] != split_tree[ranked][:-1])
                  | (split_feature[ranked][1:] != split_feature[ranked][:-1]))
    entry_feature = split_feature[ranked][starts]
    entry_categories = categories[entry_feature]
    n_codes = np.where(entry_categories >= 0, entry_categories,
                       cuts_ptr[entry_feature + 1] - cuts_ptr[entry_feature])
    if int(np.sum(n_codes + 2)) > budget:
        return refused
    tree_entry_ptr = np.searchsorted(split_tree[ranked][starts],
                                     np.arange(n_trees + 1)).astype(np.intp)
    entry_split_ptr = np.append(np.flatnonzero(starts), splits.shape[0]).astype(np.intp)
    rank_ptr = np.concatenate([[0], np.cumsum(n_codes + 2)]).astype(np.intp)
    # At most a mask per prefix of a numeric entry's cuts (and one for missing values),
    # per class of a categorical entry's categories.
    n_masks = np.where(entry_categories >= 0, np.minimum(n_codes + 2, _MOST_CLASSES),
                       np.diff(entry_split_ptr) + 2)
    ok, *tables = _fill_tables(records, thresholds, cat_bitsets, order, node_ptr, parent,
                               splits[ranked], cut_index[ranked], entry_split_ptr,
                               tree_entry_ptr, entry_feature, entry_categories >= 0,
                               n_codes, rank_ptr, int(n_masks.sum()), node_value,
                               n_features)
    if not ok:
        return refused
    return True, (cuts_ptr, model_cuts, categories), (tree_entry_ptr, entry_feature, rank_ptr,
                                                      *tables)


@kernel
def _fill_tables(records, thresholds, cat_bitsets, order, node_ptr, parent, ranked,
                 ranked_cut, entry_split_ptr, tree_entry_ptr, entry_feature,
                 entry_is_categorical, n_codes, rank_ptr, mask_capacity, node_value,
                 n_features):
    """``ok, rank, mask_ptr, masks, leaf_ptr, leaf_value, path_ptr, path_entry`` of
    :func:`mask_layout`: ``masks[mask_ptr[e] + rank[rank_ptr[e] + code]]`` is entry
    ``e``'s mask of a value coded ``code``: for a numeric entry one mask per prefix of
    its own distinct cuts, then a missing value's; for a categorical one, a mask per
    class of categories that go the same way at every split (``ok`` is False when
    there are more than 256). Leaves ``leaf_ptr[t] + j`` (``j`` left to right) have
    ``leaf_value``, and the features on their paths are the entries
    ``path_entry[path_ptr[l] .. path_ptr[l + 1]]``, as offsets from the tree's first.
    Entry ``e``'s splits are ``ranked[entry_split_ptr[e] .. entry_split_ptr[e + 1]]``
    by cut, ``ranked_cut`` their cuts' indices among the feature's model cuts."""
    n_trees = node_ptr.shape[0] - 1
    n_entries = entry_feature.shape[0]
    n_order = order.shape[0]
    rank = empty(rank_ptr[n_entries], np.uint8)
    mask_ptr = zeros(n_entries + 1, np.intp)
    masks = empty(mask_capacity, np.uint64)
    leaf_ptr = zeros(n_trees + 1, np.intp)
    leaf_value = empty(n_order, node_value.dtype)
    path_ptr = zeros(n_order + 1, np.intp)
    # Bytes: a tree of at most 64 leaves has at most 63 entries, and the kernel reads
    # these lists for every row and tree (as intp they took eight times the cache, and
    # the kernel was slower).
    path_entry = empty(n_order, np.uint8)
    first_leaf = zeros(records.shape[0], np.intp)
    local = full(n_features, -1, np.intp)
    seen = zeros(n_entries + 1, np.bool_)
    n_masks = 0
    n_leaves = 0
    n_path = 0
    for t in range(n_trees):
        # Pre-order, left first: leaves come left to right, and a split's left
        # subtree's leaves are those from its left child's first leaf to its right's.
        n_leaf = 0
        for j in range(node_ptr[t], node_ptr[t + 1]):
            c = order[j]
            if c < 0:
                first_leaf[~c] = n_leaf
                n_leaf += 1
            else:
                first_leaf[c] = n_leaf
        e0 = tree_entry_ptr[t]
        for e in range(e0, tree_entry_ptr[t + 1]):
            local[entry_feature[e]] = e - e0
            mask_ptr[e] = n_masks
            if entry_is_categorical[e]:
                n_masks = _fill_categorical(records, thresholds, cat_bitsets, ranked,
                                            entry_split_ptr[e], entry_split_ptr[e + 1],
                                            first_leaf, n_codes[e], rank[rank_ptr[e]:],
                                            masks, n_masks)
                if n_masks < 0:
                    return (False, rank, mask_ptr, masks, leaf_ptr, leaf_value, path_ptr,
                            path_entry)
                continue
            prefix = _ALL
            missing = _ALL
            masks[n_masks] = prefix
            n_masks += 1
            code = 0  # codes below a cut's index rank below it
            for j in range(entry_split_ptr[e], entry_split_ptr[e + 1]):
                k = ranked[j]
                ruled_out = _left_leaves(records, first_leaf, k)
                prefix &= ~ruled_out
                if not records[k, 3] & _MISSING_LEFT:
                    missing &= ~ruled_out
                index = ranked_cut[j]
                if j + 1 == entry_split_ptr[e + 1] or ranked_cut[j + 1] != index:
                    # The last split at this cut: a value reaching it has this prefix.
                    while code <= index:
                        rank[rank_ptr[e] + code] = n_masks - mask_ptr[e] - 1
                        code += 1
                    masks[n_masks] = prefix
                    n_masks += 1
            while code <= n_codes[e]:
                rank[rank_ptr[e] + code] = n_masks - mask_ptr[e] - 1
                code += 1
            rank[rank_ptr[e] + n_codes[e] + 1] = n_masks - mask_ptr[e]
            masks[n_masks] = missing
            n_masks += 1
        # Leaves, their values, and the features on their paths (each once).
        leaf_ptr[t] = n_leaves
        for j in range(node_ptr[t], node_ptr[t + 1]):
            c = order[j]
            if c >= 0:
                continue
            leaf_value[n_leaves] = node_value[~c]
            path_ptr[n_leaves] = n_path
            k = parent[~c]
            while k >= 0:
                e = local[records[k, 2]]
                if not seen[e]:
                    seen[e] = True
                    if n_path == path_entry.shape[0]:
                        grown = empty(2 * n_path, np.uint8)
                        for q in range(n_path):  # not a slice assignment: see _grow
                            grown[q] = path_entry[q]
                        path_entry = grown
                    path_entry[n_path] = e
                    n_path += 1
                k = parent[k]
            for p in range(path_ptr[n_leaves], n_path):
                seen[path_entry[p]] = False
            n_leaves += 1
        path_ptr[n_leaves] = n_path
        for e in range(e0, tree_entry_ptr[t + 1]):
            local[entry_feature[e]] = -1
    leaf_ptr[n_trees] = n_leaves
    mask_ptr[n_entries] = n_masks
    return (True, rank, mask_ptr, masks[:n_masks].copy(), leaf_ptr,
            leaf_value[:n_leaves].copy(), path_ptr[:n_leaves + 1].copy(),
            path_entry[:n_path].copy())




@kernel
def _left_leaves(records, first_leaf, k):
    """The mask of split ``k``'s left subtree's leaves: those a value going right there
    cannot reach (its left child's first leaf up to its right child's)."""
    left = records[k, 0]
    right = records[k, 1]
    lo = first_leaf[~left if left < 0 else left]
    hi = first_leaf[~right if right < 0 else right]
    return ((np.uint64(1) << np.uint64(hi - lo)) - np.uint64(1)) << np.uint64(lo)


@kernel
def _fill_categorical(records, thresholds, cat_bitsets, ranked, lo, hi, first_leaf,
                      n_categories, rank, masks, n_masks):
    """A categorical entry's masks from ``masks[n_masks]`` on and its codes' ranks
    (``rank[code]``): categories ``0 .. n_categories - 1``, then a value in no set, then
    a missing one; categories going the same way at the entry's splits ``ranked[lo ..
    hi]`` share a mask. Returns the masks' new end, or -1 past 256 masks."""
    start = n_masks
    for code in range(n_categories + 2):
        mask = _ALL
        for j in range(lo, hi):
            k = ranked[j]
            if code == n_categories + 1:
                right = not records[k, 3] & _MISSING_LEFT
            else:
                right = code == n_categories or not in_category_set(
                    np.float64(code), cat_bitsets, np.intp(thresholds[k]))
            if right:
                mask &= ~_left_leaves(records, first_leaf, k)
        index = start
        while index < n_masks and masks[index] != mask:
            index += 1
        if index == n_masks:
            if n_masks - start == _MOST_CLASSES:
                return -1
            masks[n_masks] = mask
            n_masks += 1
        rank[code] = index - start
    return n_masks


@kernel
def value_codes(values, column_feature, codes, out):
    """``out[i, j]``: the code of ``values[i, j]`` as a value of feature
    ``column_feature[j]`` (:func:`mask_layout`): how many of its model cuts the value
    reaches (goes right at: ``v >= cut``), or for a categorical feature its category
    (``categories[f]`` when in no set); a missing value's code is one more."""
    cuts_ptr, model_cuts, categories = codes
    for j in range(values.shape[1]):
        f = column_feature[j]
        feature_cuts = model_cuts[cuts_ptr[f]:cuts_ptr[f + 1]]
        n = categories[f]
        for i in range(values.shape[0]):
            v = values[i, j]
            if n >= 0:
                # in_category_set's reading: the integer part of a value 0 <= v < n.
                out[i, j] = n + 1 if np.isnan(v) else (np.intp(v) if 0.0 <= v < n else n)
            else:
                out[i, j] = (feature_cuts.shape[0] + 1 if np.isnan(v)
                             else np.searchsorted(feature_cuts, v, side="right"))


@kernel
def masked_permuted_totals(X_code, permuted_code, feature_slot_ptr, tree_entry_ptr,
                           entry_feature, rank_ptr, rank, mask_ptr, masks, leaf_ptr,
                           leaf_value, path_ptr, path_entry, start, row_lo, row_hi, out,
                           baseline):
    """``out[i, s]``, for rows ``row_lo .. row_hi``: the model's sum for row ``i`` when
    the feature of slot ``s`` reads the value coded ``permuted_code[i, s]`` instead of
    its own (codes: :func:`value_codes`); slots ordered by feature
    (``feature_slot_ptr``), the tables from :func:`mask_layout`. ``baseline[i]``: row
    ``i``'s own sum (its own leaves are found on the way: the evaluator need not route
    the rows again for it). Every total is ``start[0]`` plus the trees' leaf values in
    tree order, in ``leaf_value``'s dtype (the same numbers as
    ``boosted_permuted_totals`` and ``sum_leaf_values``)."""
    n_slots = permuted_code.shape[1]
    n_trees = tree_entry_ptr.shape[0] - 1
    most = 1
    for t in range(n_trees):
        most = max(most, tree_entry_ptr[t + 1] - tree_entry_ptr[t])
    own = empty((most, _ROW_BLOCK), np.uint64)
    # before[k, b]: the AND of row b's masks of entries < k; after[k, b]: of > k.
    before = empty((most + 1, _ROW_BLOCK), np.uint64)
    after = empty((most + 1, _ROW_BLOCK), np.uint64)
    # on_path[k, :n_on[k]]: the block's rows whose path has the tree's entry k.
    on_path = empty((most, _ROW_BLOCK), np.uint8)  # block rows: < 256
    n_on = zeros(most, np.intp)
    terms = empty((_ROW_BLOCK, n_slots), leaf_value.dtype)
    totals = empty((_ROW_BLOCK, n_slots), leaf_value.dtype)
    own_totals = empty(_ROW_BLOCK, leaf_value.dtype)
    for block_lo in range(row_lo, row_hi, _ROW_BLOCK):
        n_rows = min(block_lo + _ROW_BLOCK, row_hi) - block_lo
        for b in range(n_rows):
            own_totals[b] = start[0]
            for s in range(n_slots):
                totals[b, s] = start[0]
        for t in range(n_trees):
            e0 = tree_entry_ptr[t]
            n_e = tree_entry_ptr[t + 1] - e0
            for b in range(n_rows):
                before[0, b] = _ALL
                after[max(n_e - 1, 0), b] = _ALL
            # Entry by entry over the block's rows.
            for k in range(n_e):
                e = e0 + k
                f = entry_feature[e]
                table = rank[rank_ptr[e]:rank_ptr[e + 1]]
                entry_masks = masks[mask_ptr[e]:mask_ptr[e + 1]]
                for b in range(n_rows):
                    own[k, b] = entry_masks[table[X_code[block_lo + b, f]]]
                    before[k + 1, b] = before[k, b] & own[k, b]
            for k in range(n_e - 1, 0, -1):
                for b in range(n_rows):
                    after[k - 1, b] = after[k, b] & own[k, b]
            values = leaf_value[leaf_ptr[t]:leaf_ptr[t + 1]]
            # Each row's leaf; the rows whose path has each feature of the tree.
            for k in range(n_e):
                n_on[k] = 0
            for b in range(n_rows):
                leaf = _lowest_bit(before[n_e, b])
                base = values[leaf]
                own_totals[b] += base
                for s in range(n_slots):
                    terms[b, s] = base
                leaf = leaf_ptr[t] + np.intp(leaf)
                for p in range(path_ptr[leaf], path_ptr[leaf + 1]):
                    k = path_entry[p]
                    on_path[k, n_on[k]] = b
                    n_on[k] += 1
            # Only the features on a row's path can move it to another leaf: their slots,
            # feature by feature over the rows concerned.
            for k in range(n_e):
                e = e0 + k
                f = entry_feature[e]
                table = rank[rank_ptr[e]:rank_ptr[e + 1]]
                entry_masks = masks[mask_ptr[e]:mask_ptr[e + 1]]
                for j in range(n_on[k]):
                    b = on_path[k, j]
                    others = before[k, b] & after[k, b]
                    for q in range(feature_slot_ptr[f], feature_slot_ptr[f + 1]):
                        mask = others & entry_masks[table[permuted_code[block_lo + b, q]]]
                        terms[b, q] = values[_lowest_bit(mask)]
            for b in range(n_rows):
                for s in range(n_slots):
                    totals[b, s] += terms[b, s]
        for b in range(n_rows):
            baseline[block_lo + b] = own_totals[b]
            for s in range(n_slots):
                out[block_lo + b, s] = totals[b, s]
