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
               feature, threshold, operator, missing_go_to_left, cover, values, column,
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
        if goes_left(x[split], threshold[node], operator[node], missing_go_to_left[node]):
            hot, cold = children_left[node], children_right[node]
        else:
            hot, cold = children_right[node], children_left[node]
        hot_zero = cover[hot] / cover[node]
        cold_zero = cover[cold] / cover[node]
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
    return (np.empty(size, dtype=np.intp), np.empty(size), np.empty(size), np.empty(size),
            np.empty((max_depth + 2, 4), dtype=np.intp), np.empty((max_depth + 2, 3)))


@kernel
def shap_values(X, children_left, children_right, feature, threshold, operator,
                missing_go_to_left, cover, values, roots, tree_column, max_depth, n_columns):
    """SHAP values of every row of ``X``, shape (n_rows, n_features, n_columns): the sum
    over the trees (global node ids, trees starting at ``roots``) of each tree's
    values. Tree ``t`` adds ``values[node]`` (already scaled by how the trees combine)
    to columns ``tree_column[t] ..``; ``cover`` is each node's share of the training
    data; ``max_depth`` the depth of the deepest tree."""
    n_rows, n_features = X.shape
    feature_of, zero, one, weight, calls, fractions = _buffers(max_depth)
    phi = np.zeros((n_rows, n_features, n_columns))
    for r in range(n_rows):
        for t in range(roots.shape[0]):
            _tree_shap(roots[t], 0, 0, X[r], children_left, children_right, feature,
                       threshold, operator, missing_go_to_left, cover, values, tree_column[t],
                       feature_of, zero, one, weight, calls, fractions, phi[r])
    return phi


@kernel
def _tree_features(children_left, feature, roots, n_nodes, n_features):
    """CSR of the distinct features each tree splits on, in increasing order."""
    n_trees = roots.shape[0]
    seen = np.zeros(n_features, dtype=np.uint8)
    ptr = np.zeros(n_trees + 1, dtype=np.intp)
    found = np.empty(n_trees * n_features, dtype=np.intp)
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
                      missing_go_to_left, cover, values, roots, tree_column, max_depth,
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
    out = np.zeros((n_rows, n_features, n_features, n_columns))
    diagonal = np.zeros((n_features, n_columns))
    on = np.zeros((n_features, n_columns))
    off = np.zeros((n_features, n_columns))
    for r in range(n_rows):
        x = X[r]
        diagonal[:] = 0.0
        for t in range(roots.shape[0]):
            _tree_shap(roots[t], 0, 0, x, children_left, children_right, feature, threshold,
                       operator, missing_go_to_left, cover, values, tree_column[t],
                       feature_of, zero, one, weight, calls, fractions, diagonal)
            for k in range(ptr[t], ptr[t + 1]):
                j = tree_features[k]
                on[:] = 0.0
                off[:] = 0.0
                _tree_shap(roots[t], 1, j, x, children_left, children_right, feature,
                           threshold, operator, missing_go_to_left, cover, values,
                           tree_column[t], feature_of, zero, one, weight, calls, fractions, on)
                _tree_shap(roots[t], -1, j, x, children_left, children_right, feature,
                           threshold, operator, missing_go_to_left, cover, values,
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
