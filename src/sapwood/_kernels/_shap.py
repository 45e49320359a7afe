"""Path-dependent TreeSHAP (Lundberg, Erion & Lee 2018, Algorithm 2; Lundberg et al. 2020).

For one row and one tree, the Shapley value of feature i in the game whose value for a
feature set S is the tree's expected output when the features in S take the row's
values and the others follow the training data down the tree (each split sends them
left and right in proportion to the nodes' covers). The recursion (here run from a
stack of pending calls) walks the tree once, keeping for the path from the root the
"unique path" of distinct features met: per feature the fraction of the cover that
flows along the path when the feature is unknown (``zero``), whether the row itself
follows the path (``one``), and the weights of the subset sizes (``weight``). A
feature met again on the path is first unwound. At a leaf every feature on the path
gets its share of the leaf's value.

The paths of all recursion levels live in one buffer: a level at path depth ``d``
copies its parent's path into the ``d + 1`` slots after the parent's start plus
``d + 1`` (the layout of the reference implementation in the ``shap`` package), so a
tree of depth D needs (D + 2)(D + 3) / 2 elements.

Conditioning on a feature (``condition`` 1: on, -1: off) gives the interaction values
(Lundberg et al. 2020, section "SHAP interaction values").
"""

import numpy as np

from ._arrays import empty, full, zeros
from ._numba import kernel
from ._traverse import LEAF, goes_left


@kernel
def _extend(feature_of, zero, one, weight, offset, depth, zero_fraction, one_fraction,
            feature):
    feature_of[offset + depth] = feature
    zero[offset + depth] = zero_fraction
    one[offset + depth] = one_fraction
    weight[offset + depth] = 1.0 if depth == 0 else 0.0
    for i in range(depth - 1, -1, -1):
        weight[offset + i + 1] += one_fraction * weight[offset + i] * (i + 1) / (depth + 1)
        weight[offset + i] = zero_fraction * weight[offset + i] * (depth - i) / (depth + 1)


@kernel
def _unwind(feature_of, zero, one, weight, offset, depth, index):
    one_fraction = one[offset + index]
    zero_fraction = zero[offset + index]
    next_one_portion = weight[offset + depth]
    for i in range(depth - 1, -1, -1):
        if one_fraction != 0.0:
            kept = weight[offset + i]
            weight[offset + i] = next_one_portion * (depth + 1) / ((i + 1) * one_fraction)
            next_one_portion = kept - weight[offset + i] * zero_fraction * (depth - i) / (depth + 1)
        else:
            weight[offset + i] = weight[offset + i] * (depth + 1) / (zero_fraction * (depth - i))
    for i in range(index, depth):
        feature_of[offset + i] = feature_of[offset + i + 1]
        zero[offset + i] = zero[offset + i + 1]
        one[offset + i] = one[offset + i + 1]


@kernel
def _unwound_sum(zero, one, weight, offset, depth, index):
    """The total weight of the path with element ``index`` unwound, not unwinding it."""
    one_fraction = one[offset + index]
    zero_fraction = zero[offset + index]
    next_one_portion = weight[offset + depth]
    total = 0.0
    for i in range(depth - 1, -1, -1):
        if one_fraction != 0.0:
            share = next_one_portion * (depth + 1) / ((i + 1) * one_fraction)
            total += share
            next_one_portion = weight[offset + i] - share * zero_fraction * (
                (depth - i) / (depth + 1))
        else:
            total += (weight[offset + i] / zero_fraction) / ((depth - i) / (depth + 1))
    return total


@kernel
def _tree_shap(root, condition, condition_feature, x, children_left, children_right,
               feature, threshold, operator, missing_go_to_left, cat_bitsets, cover, values, column,
               feature_of, zero, one, weight, calls, fractions, phi):
    """Adds one tree's SHAP values of row ``x`` to ``phi`` (n_features, n_columns), its
    values going to columns ``column ..``.

    The recursion of Algorithm 2 run from a stack of pending calls (Numba cannot load a
    recursive function from its cache): a node's call pushes its cold child, then its
    hot child. A call reads only its parent's path, which the calls made before it in
    the parent's subtree do not write (they use the slots after it). ``calls`` rows
    hold (node, depth, parent offset, parent feature), ``fractions`` rows (parent zero
    fraction, parent one fraction, condition fraction).
    """
    calls[0, 0], calls[0, 1], calls[0, 2], calls[0, 3] = root, 0, 0, -1
    fractions[0, 0], fractions[0, 1], fractions[0, 2] = 1.0, 1.0, 1.0
    top = 1
    while top > 0:
        top -= 1
        node, depth, parent_offset, parent_feature = (calls[top, 0], calls[top, 1],
                                                      calls[top, 2], calls[top, 3])
        parent_zero, parent_one, condition_fraction = (fractions[top, 0], fractions[top, 1],
                                                       fractions[top, 2])
        if condition_fraction == 0.0:
            continue
        offset = parent_offset + depth + 1
        for i in range(depth + 1):
            feature_of[offset + i] = feature_of[parent_offset + i]
            zero[offset + i] = zero[parent_offset + i]
            one[offset + i] = one[parent_offset + i]
            weight[offset + i] = weight[parent_offset + i]
        if condition == 0 or condition_feature != parent_feature:
            _extend(feature_of, zero, one, weight, offset, depth, parent_zero, parent_one,
                    parent_feature)
        if children_left[node] == LEAF:
            for i in range(1, depth + 1):
                scale = (_unwound_sum(zero, one, weight, offset, depth, i)
                         * (one[offset + i] - zero[offset + i]) * condition_fraction)
                f = feature_of[offset + i]
                for w in range(values.shape[1]):
                    phi[f, column + w] += scale * values[node, w]
            continue
        split = feature[node]
        if goes_left(x[split], threshold[node], operator[node], missing_go_to_left[node],
                     cat_bitsets):
            hot, cold = children_left[node], children_right[node]
        else:
            hot, cold = children_right[node], children_left[node]
        # A node no training row reached (CatBoost keeps such empty leaves, with value
        # 0) passes no share on: CatBoost's ShapValues skip it, 0 / 0 would be NaN.
        hot_zero = cover[hot] / cover[node] if cover[node] > 0.0 else 0.0
        cold_zero = cover[cold] / cover[node] if cover[node] > 0.0 else 0.0
        incoming_zero = 1.0
        incoming_one = 1.0
        # A feature already on the path: undo its earlier split, the two act as one.
        index = depth + 1
        for i in range(depth + 1):
            if feature_of[offset + i] == split:
                index = i
                break
        if index != depth + 1:
            incoming_zero = zero[offset + index]
            incoming_one = one[offset + index]
            _unwind(feature_of, zero, one, weight, offset, depth, index)
            depth -= 1
        hot_condition = condition_fraction
        cold_condition = condition_fraction
        if condition > 0 and split == condition_feature:
            cold_condition = 0.0
            depth -= 1
        elif condition < 0 and split == condition_feature:
            hot_condition *= hot_zero
            cold_condition *= cold_zero
            depth -= 1
        for child, child_zero, child_one, child_condition in (
                (cold, cold_zero * incoming_zero, 0.0, cold_condition),
                (hot, hot_zero * incoming_zero, incoming_one, hot_condition)):
            if child_zero == 0.0 and child_one == 0.0 and (
                    condition == 0 or split != condition_feature):
                # A path with both fractions 0 weighs nothing (every weight is scaled
                # by one of them), but its leaves would take 0 / 0: skipped. Only an
                # empty cold child (cover 0, or the same feature sent x elsewhere
                # above it) has both.
                continue
            calls[top, 0], calls[top, 1], calls[top, 2], calls[top, 3] = (
                child, depth + 1, offset, split)
            fractions[top, 0], fractions[top, 1], fractions[top, 2] = (
                child_zero, child_one, child_condition)
            top += 1


@kernel
def _buffers(max_depth):
    """The path buffers (see the module docstring) and the stack of pending calls (at
    most one cold child per level waits, plus the hot one)."""
    size = (max_depth + 2) * (max_depth + 3) // 2
    return (empty(size, np.intp), empty(size, np.float64), empty(size, np.float64),
            empty(size, np.float64), empty((max_depth + 2, 4), np.intp),
            empty((max_depth + 2, 3), np.float64))


@kernel
def shap_values(X, children_left, children_right, feature, threshold, operator,
                missing_go_to_left, cat_bitsets, cover, values, roots, tree_column, max_depth,
                n_columns):
    """SHAP values of every row of ``X``, shape (n_rows, n_features, n_columns): the sum
    over the trees (global node ids, trees starting at ``roots``) of each tree's
    values. Tree ``t`` adds ``values[node]`` (already scaled by how the trees combine)
    to columns ``tree_column[t] ..``; ``cover`` is each node's share of the training
    data; ``max_depth`` the depth of the deepest tree."""
    n_rows, n_features = X.shape
    feature_of, zero, one, weight, calls, fractions = _buffers(max_depth)
    phi = zeros((n_rows, n_features, n_columns), np.float64)
    for r in range(n_rows):
        for t in range(roots.shape[0]):
            _tree_shap(roots[t], 0, 0, X[r], children_left, children_right, feature,
                       threshold, operator, missing_go_to_left, cat_bitsets, cover, values,
                       tree_column[t],
                       feature_of, zero, one, weight, calls, fractions, phi[r])
    return phi


@kernel
def _tree_features(children_left, feature, roots, n_nodes, n_features):
    """CSR of the distinct features each tree splits on, in increasing order."""
    n_trees = roots.shape[0]
    seen = zeros(n_features, np.uint8)
    ptr = zeros(n_trees + 1, np.intp)
    found = empty(n_trees * n_features, np.intp)
    count = 0
    for t in range(n_trees):
        end = roots[t + 1] if t + 1 < n_trees else n_nodes
        for node in range(roots[t], end):
            if children_left[node] != LEAF:
                seen[feature[node]] = 1
        for f in range(n_features):
            if seen[f]:
                found[count] = f
                count += 1
                seen[f] = 0
        ptr[t + 1] = count
    return ptr, found[:count].copy()


@kernel
def shap_interactions(X, children_left, children_right, feature, threshold, operator,
                      missing_go_to_left, cat_bitsets, cover, values, roots, tree_column, max_depth,
                      n_columns):
    """SHAP interaction values, shape (n_rows, n_features, n_features, n_columns).

    Per tree and feature ``j`` it splits on, the SHAP values with ``j`` known minus those
    with ``j`` unknown, halved, are the interactions of ``j`` with every feature; the
    diagonal is what remains of each feature's SHAP value (the ``shap`` package's
    ``dense_tree_interactions_path_dependent``)."""
    n_rows, n_features = X.shape
    feature_of, zero, one, weight, calls, fractions = _buffers(max_depth)
    ptr, tree_features = _tree_features(children_left, feature, roots,
                                        children_left.shape[0], n_features)
    out = zeros((n_rows, n_features, n_features, n_columns), np.float64)
    diagonal = zeros((n_features, n_columns), np.float64)
    on = zeros((n_features, n_columns), np.float64)
    off = zeros((n_features, n_columns), np.float64)
    for r in range(n_rows):
        x = X[r]
        diagonal[:] = 0.0
        for t in range(roots.shape[0]):
            _tree_shap(roots[t], 0, 0, x, children_left, children_right, feature, threshold,
                       operator, missing_go_to_left, cat_bitsets, cover, values, tree_column[t],
                       feature_of, zero, one, weight, calls, fractions, diagonal)
            for k in range(ptr[t], ptr[t + 1]):
                j = tree_features[k]
                on[:] = 0.0
                off[:] = 0.0
                _tree_shap(roots[t], 1, j, x, children_left, children_right, feature,
                           threshold, operator, missing_go_to_left, cat_bitsets, cover, values,
                           tree_column[t], feature_of, zero, one, weight, calls, fractions, on)
                _tree_shap(roots[t], -1, j, x, children_left, children_right, feature,
                           threshold, operator, missing_go_to_left, cat_bitsets, cover, values,
                           tree_column[t], feature_of, zero, one, weight, calls, fractions,
                           off)
                for i in range(n_features):
                    for c in range(n_columns):
                        half = (on[i, c] - off[i, c]) / 2.0
                        out[r, j, i, c] += half
                        diagonal[i, c] -= half
        for i in range(n_features):
            for c in range(n_columns):
                out[r, i, i, c] = diagonal[i, c]
    return out


# -- many rows: per-leaf tables ---------------------------------------------------------
# For a leaf whose path meets d distinct features F (each with zero fraction z_j, the
# product of its splits' cover fractions on the path) and a row that satisfies the
# splits of the features in m ⊆ F (o_j = 1 for j in m, 0 otherwise), Algorithm 2 adds
#
#     phi_i += v (o_i - z_i) T_i(m \ {i}),
#     T_i(s) = prod_{j in F \ {i} \ s} z_j  *  sum_k w(k) [t^k] prod_{j in s} (z_j + t),
#
# with w(k) = k! (d - 1 - k)! / d! (the Shapley weight of a coalition of k of the
# other d - 1 features; a feature outside m cannot be in a contributing coalition).
# T depends on the row only through the bit mask of s, so it is tabulated once per leaf
# (d 2^(d-1) numbers); a row then costs one pass over the tree, computing each leaf's
# mask, and d table reads per leaf instead of Algorithm 2's d^2 unwinding per leaf.


@kernel
def leaf_paths(root, end, children_left, children_right, feature, cover, max_depth):
    """One depth-first walk of a tree (ids ``root .. end``, local index ``node -
    root``), left child first, and what the walks of :func:`shap_tables` and
    :func:`sapwood._kernels._shap_interventional.interventional_tree` need from it.

    Per node: the bit its split feature has in the path's list of distinct features
    (first met first), and whether the split is that feature's first on the path. Per
    leaf (in the order the walk meets them): its d distinct path features and their
    zero fractions in bit order (CSR over ``leaf_start``). ``walk``: the nodes in the
    walk's order, rows (node, depth, parent; -1 for the root), so that the kernels
    replay it and number the leaves as they meet them."""
    n = end - root
    node_bit = zeros(n, np.intp)
    node_first = zeros(n, np.uint8)
    # The path's lists at each depth; a node's are made from its parent's when it is
    # taken from the stack (the parent's depth is not written meanwhile: only deeper
    # ones are, by the sibling's subtree).
    level_features = empty((max_depth + 1, max_depth + 1), np.intp)
    level_zero = empty((max_depth + 1, max_depth + 1), np.float64)
    level_count = zeros(max_depth + 1, np.intp)
    stack_node = empty(max_depth + 2, np.intp)
    stack_level = empty(max_depth + 2, np.intp)
    n_leaves = 0
    for node in range(root, end):
        if children_left[node] == LEAF:
            n_leaves += 1
    walk = empty((n, 3), np.intp)
    leaf_start = zeros(n_leaves + 1, np.intp)
    leaf_features = empty(n_leaves * (max_depth + 1), np.intp)
    leaf_zero = empty(n_leaves * (max_depth + 1), np.float64)
    parent_of = full(n, -1, np.intp)
    stack_node[0] = root
    stack_level[0] = 0
    top = 1
    step = 0
    leaf = 0
    while top > 0:
        top -= 1
        node = stack_node[top]
        level = stack_level[top]
        parent = parent_of[node - root]
        walk[step, 0], walk[step, 1], walk[step, 2] = node, level, parent
        step += 1
        count = 0
        if parent >= 0:
            count = level_count[level - 1]
            for b in range(count):
                level_features[level, b] = level_features[level - 1, b]
                level_zero[level, b] = level_zero[level - 1, b]
            bit = node_bit[parent - root]
            fraction = cover[node] / cover[parent] if cover[parent] > 0.0 else 0.0
            if node_first[parent - root]:
                level_features[level, count] = feature[parent]
                level_zero[level, count] = fraction
                count += 1
            else:
                level_zero[level, bit] *= fraction
        level_count[level] = count
        if children_left[node] == LEAF:
            start = leaf_start[leaf]
            for b in range(count):
                leaf_features[start + b] = level_features[level, b]
                leaf_zero[start + b] = level_zero[level, b]
            leaf_start[leaf + 1] = start + count
            leaf += 1
            continue
        f = feature[node]
        bit = count
        for b in range(count):
            if level_features[level, b] == f:
                bit = b
        node_bit[node - root] = bit
        node_first[node - root] = bit == count
        for child in (children_right[node], children_left[node]):
            parent_of[child - root] = node
            stack_node[top] = child
            stack_level[top] = level + 1
            top += 1
    return (walk[:step], node_bit, node_first, leaf_start, leaf_features[:leaf_start[-1]],
            leaf_zero[:leaf_start[-1]])


@kernel
def _tabulate(zero, d, table, base, poly, weights, before):
    """Fills ``table[base + i 2^(d-1) + s]`` with T_i(s) for the d zero fractions
    ``zero[:d]`` (see above): one pass over the 2^d masks builds each mask's
    polynomial prod_{j in s} (z_j + t) from the mask without its lowest bit; W(s) =
    sum_k w(k) [t^k] of it does not depend on i, and T_i(s) = W(s) x the product of
    the z outside s but i, for every bit i outside s (prefix and suffix products)."""
    half = 1 << (d - 1)
    # w(k) = k! (d - 1 - k)! / d!: w(0) = 1 / d, w(k + 1) = w(k) (k + 1) / (d - 1 - k).
    weights[0] = 1.0 / d
    for k in range(d - 1):
        weights[k + 1] = weights[k] * (k + 1) / (d - 1 - k)
    for s in range(1 << d):
        if s == 0:
            poly[0, 0] = 1.0
            for k in range(1, d + 1):
                poly[0, k] = 0.0
        else:
            low = 0
            while not (s >> low) & 1:
                low += 1
            previous = s & (s - 1)
            z = zero[low]
            poly[s, 0] = z * poly[previous, 0]
            for k in range(1, d + 1):
                poly[s, k] = z * poly[previous, k] + poly[previous, k - 1]
        if s == (1 << d) - 1:
            continue  # no bit outside s
        total = 0.0
        for k in range(d):
            total += weights[k] * poly[s, k]
        running = 1.0
        for i in range(d):
            if not (s >> i) & 1:
                before[i] = running
                running *= zero[i]
        running = 1.0
        for i in range(d - 1, -1, -1):
            if not (s >> i) & 1:
                compressed = (s & ((1 << i) - 1)) | ((s >> (i + 1)) << i)
                table[base + i * half + compressed] = total * before[i] * running
                running *= zero[i]


@kernel
def leaf_tables(leaf_start, leaf_zero, pairs):
    """Every leaf's tables, leaf after leaf (CSR over the returned starts).

    ``pairs`` false: T_i(s) for the leaf's d features, i the feature's bit and s a mask
    over the other d - 1 bits (bit i removed, higher bits shifted down): d 2^(d-1)
    numbers. ``pairs`` true, for interaction values: for each feature j, the tables of
    the game without j (its d - 1 other features), (d - 1) 2^(d-2) numbers each.
    """
    n_leaves = leaf_start.shape[0] - 1
    table_start = zeros(n_leaves + 1, np.intp)
    largest = 0
    for leaf in range(n_leaves):
        d = leaf_start[leaf + 1] - leaf_start[leaf]
        if pairs:
            size = d * ((d - 1) << (d - 2)) if d > 1 else 0
        else:
            size = d << (d - 1) if d > 0 else 0
        table_start[leaf + 1] = table_start[leaf] + size
        largest = max(largest, d)
    table = empty(table_start[-1], np.float64)
    poly = empty((1 << largest, largest + 1), np.float64)
    weights = empty(largest + 1, np.float64)
    before = empty(largest + 1, np.float64)
    others = empty(largest + 1, np.float64)
    for leaf in range(n_leaves):
        start = leaf_start[leaf]
        d = leaf_start[leaf + 1] - start
        if not pairs:
            if d > 0:
                _tabulate(leaf_zero[start:start + d], d, table, table_start[leaf], poly,
                          weights, before)
            continue
        if d < 2:
            continue
        size = (d - 1) << (d - 2)
        for j in range(d):
            n = 0
            for k in range(d):
                if k != j:
                    others[n] = leaf_zero[start + k]
                    n += 1
            _tabulate(others, d - 1, table, table_start[leaf] + j * size, poly, weights,
                      before)
    return table_start, table


@kernel
def node_masks(X, children_left, feature, threshold, operator, missing_go_to_left,
               cat_bitsets, root, node_bit, node_first, step, masks):
    """Replays one ``step`` (node, depth, parent) of :func:`leaf_paths`' walk for every
    row of ``X``: ``masks[depth]`` gets the bits of the path features whose splits down
    to the node the row satisfies, made from the parent's ``masks[depth - 1]`` (the
    walk has made them: a depth is not written again until the walk leaves the parent's
    subtree). Returns the node and its depth."""
    node, level, parent = step[0], step[1], step[2]
    if parent < 0:
        masks[0, :] = 0
        return node, level
    f = feature[parent]
    bit = np.int64(1) << node_bit[parent - root]
    first = node_first[parent - root] != 0
    is_left = node == children_left[parent]
    for r in range(X.shape[0]):
        follows = goes_left(X[r, f], threshold[parent], operator[parent],
                            missing_go_to_left[parent], cat_bitsets) == is_left
        m = masks[level - 1, r]
        if follows:
            masks[level, r] = m | bit if first else m
        else:
            masks[level, r] = m & ~bit
    return node, level


@kernel
def _leaf_values(masks_level, leaf_zero, leaf_features, start, d, table, base, values,
                 node, column, phi):
    """Adds a leaf's SHAP values for every row (``masks_level``: the rows' masks)."""
    half = 1 << (d - 1)
    for i in range(d):
        zero_i = leaf_zero[start + i]
        f = leaf_features[start + i]
        low_bits = (np.int64(1) << i) - 1
        for w in range(values.shape[1]):
            value = values[node, w]
            for r in range(masks_level.shape[0]):
                m = masks_level[r]
                compressed = (m & low_bits) | ((m >> (i + 1)) << i)
                phi[r, f, column + w] += (((m >> i) & 1) - zero_i) * table[
                    base + i * half + compressed] * value


@kernel
def _leaf_pairs(masks_level, leaf_zero, leaf_features, start, d, table, base, values,
                node, column, pairs):
    """Adds a leaf's off-diagonal interaction values for every row: with feature j of
    the leaf known (o_j) or unknown (z_j), the game of the other d - 1 features has the
    values (o_j or z_j) v (o_i - z_i) T'_i, so phi_ji = (o_j - z_j) / 2 v (o_i - z_i)
    T'_i (the ``shap`` package's half difference of the conditioned values)."""
    size = (d - 1) << (d - 2)
    quarter = 1 << (d - 2)
    for j in range(d):
        zero_j = leaf_zero[start + j]
        f_j = leaf_features[start + j]
        low_j = (np.int64(1) << j) - 1
        for i in range(d):
            if i == j:
                continue
            reduced = i if i < j else i - 1
            zero_i = leaf_zero[start + i]
            f_i = leaf_features[start + i]
            low_i = (np.int64(1) << reduced) - 1
            offset = base + j * size + reduced * quarter
            for w in range(values.shape[1]):
                half_value = 0.5 * values[node, w]
                for r in range(masks_level.shape[0]):
                    m = masks_level[r]
                    without_j = (m & low_j) | ((m >> (j + 1)) << j)
                    s = (without_j & low_i) | ((without_j >> (reduced + 1)) << reduced)
                    pairs[r, f_j, f_i, column + w] += (
                        (((m >> j) & 1) - zero_j) * (((m >> i) & 1) - zero_i)
                        * table[offset + s] * half_value)


@kernel
def shap_tables(X, children_left, feature, threshold, operator, missing_go_to_left,
                cat_bitsets, values, root, column, walk, node_bit, node_first, leaf_start,
                leaf_features, leaf_zero, table_start, table, pair_start, pair_table,
                max_depth, with_pairs, phi, pairs):
    """Adds one tree's SHAP values of every row of ``X`` to ``phi`` (n_rows, n_features,
    n_columns) from its leaf tables (``leaf_tables(..., False)``) and, with
    ``with_pairs``, its off-diagonal interaction values to ``pairs`` (n_rows,
    n_features, n_features, n_columns) from ``leaf_tables(..., True)``; the diagonal is
    left to the caller.

    :func:`leaf_paths`' walk replayed (``walk`` to ``leaf_zero``), carrying for every
    row at once the mask of path features whose splits the row satisfies
    (:func:`node_masks`); at a leaf, d (and d (d - 1)) table reads per row.
    """
    masks = empty((max_depth + 1, X.shape[0]), np.int64)
    leaf = 0
    for step in range(walk.shape[0]):
        node, level = node_masks(X, children_left, feature, threshold, operator,
                                 missing_go_to_left, cat_bitsets, root, node_bit, node_first,
                                 walk[step], masks)
        if children_left[node] != LEAF:
            continue
        start = leaf_start[leaf]
        d = leaf_start[leaf + 1] - start
        if d > 0:
            _leaf_values(masks[level], leaf_zero, leaf_features, start, d, table,
                         table_start[leaf], values, node, column, phi)
        if with_pairs and d > 1:
            _leaf_pairs(masks[level], leaf_zero, leaf_features, start, d, pair_table,
                        pair_start[leaf], values, node, column, pairs)
        leaf += 1
