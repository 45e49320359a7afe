"""Routing samples through trees in the common tree format.

A sample goes left at node ``i`` when its value is missing and
``missing_go_to_left[i]``, or when it is present and compares true against
``threshold[i]`` with the node's operator (``<=`` for scikit-learn and LightGBM,
``<`` for XGBoost). Leaves have ``children_left == -1``.

A categorical node (operator ``OP_CAT``) tests set membership instead: its threshold
holds an offset ``k`` into the tree's ``cat_bitsets`` (uint32), where
``cat_bitsets[k]`` is the number of words ``w`` and ``cat_bitsets[k + 1 : k + 1 + w]``
the set, category ``c`` being bit ``c % 32`` of word ``c // 32``. A present value goes
left when it is a category of the set, the category of a value being the value
truncated to an integer; a negative value or one past the set's ``32 w`` categories
goes right, as does every category not in the set.
"""

import numpy as np

from ._arrays import empty, full, zeros
from ._numba import kernel

LEAF = -1
OP_LE = 0
OP_LT = 1
OP_CAT = 2


@kernel
def in_category_set(value, cat_bitsets, offset):
    """Whether the present (not NaN) ``value`` is a category of the set stored at
    ``offset`` of ``cat_bitsets`` (see the module docstring)."""
    if not value >= 0.0:
        return False
    n_words = cat_bitsets[offset]
    if value >= 32.0 * n_words:
        return False
    code = np.intp(value)
    return (cat_bitsets[offset + 1 + (code >> 5)] >> np.uint32(code & 31)) & np.uint32(1) != 0


@kernel
def goes_left(value, threshold, operator, missing_go_to_left, cat_bitsets):
    if np.isnan(value):
        return missing_go_to_left != 0
    if operator == OP_LE:
        return value <= threshold
    if operator == OP_LT:
        return value < threshold
    return in_category_set(value, cat_bitsets, np.intp(threshold))


@kernel
def apply_tree(X, children_left, children_right, feature, threshold, missing_go_to_left,
               operator, cat_bitsets):
    """Leaf id reached by every row of ``X``."""
    leaves = empty(X.shape[0], np.intp)
    for i in range(X.shape[0]):
        node = 0
        while children_left[node] != LEAF:
            if goes_left(X[i, feature[node]], threshold[node], operator[node],
                         missing_go_to_left[node], cat_bitsets):
                node = children_left[node]
            else:
                node = children_right[node]
        leaves[i] = node
    return leaves


@kernel
def first_splits(X, rows, children_left, children_right, feature, threshold,
                 missing_go_to_left, operator, cat_bitsets):
    """Route ``X[rows]`` once and record where each row's path first meets each feature:
    what the permutation measures need to re-route a row from that node only.

    Returns ``used`` (uint8, n_features: 1 if the tree splits on the feature), ``first``
    (int32, n_features x m: the first node of row k's path that splits on feature j,
    or -1) and ``leaf`` (intp, m: the leaf row k reaches).
    """
    m = rows.shape[0]
    n_features = X.shape[1]
    used = zeros(n_features, np.uint8)
    for node in range(children_left.shape[0]):
        if children_left[node] != LEAF:
            used[feature[node]] = 1
    first = full((n_features, m), -1, np.int32)
    leaf = empty(m, np.intp)
    for k in range(m):
        i = rows[k]
        node = 0
        while children_left[node] != LEAF:
            f = feature[node]
            if first[f, k] < 0:
                first[f, k] = node
            if goes_left(X[i, f], threshold[node], operator[node], missing_go_to_left[node],
                         cat_bitsets):
                node = children_left[node]
            else:
                node = children_right[node]
        leaf[k] = node
    return used, first, leaf


@kernel
def apply_packed(X, children_left, children_right, feature, threshold, missing_go_to_left,
                 operator, cat_bitsets, roots):
    """Global leaf ids, shape (n_samples, n_trees), for trees packed end to end.

    Trees are concatenated node arrays; ``roots[t]`` is tree t's first node and child
    indices are global. Tree-major order keeps one tree's nodes in cache.
    """
    n_trees = roots.shape[0]
    leaves = empty((X.shape[0], n_trees), np.intp)
    for t in range(n_trees):
        root = roots[t]
        for i in range(X.shape[0]):
            node = root
            while children_left[node] != LEAF:
                if goes_left(X[i, feature[node]], threshold[node], operator[node],
                             missing_go_to_left[node], cat_bitsets):
                    node = children_left[node]
                else:
                    node = children_right[node]
            leaves[i, t] = node
    return leaves


@kernel
def decision_path_tree(X, children_left, children_right, feature, threshold,
                       missing_go_to_left, operator, cat_bitsets):
    """CSR (indptr, indices) of the nodes each row of ``X`` passes through."""
    n_samples = X.shape[0]
    indptr = zeros(n_samples + 1, np.intp)
    for i in range(n_samples):
        node = 0
        length = 1
        while children_left[node] != LEAF:
            if goes_left(X[i, feature[node]], threshold[node], operator[node],
                         missing_go_to_left[node], cat_bitsets):
                node = children_left[node]
            else:
                node = children_right[node]
            length += 1
        indptr[i + 1] = indptr[i] + length
    indices = empty(indptr[n_samples], np.intp)
    for i in range(n_samples):
        node = 0
        k = indptr[i]
        indices[k] = 0
        while children_left[node] != LEAF:
            if goes_left(X[i, feature[node]], threshold[node], operator[node],
                         missing_go_to_left[node], cat_bitsets):
                node = children_left[node]
            else:
                node = children_right[node]
            k += 1
            indices[k] = node
    return indptr, indices


@kernel
def node_depths(children_left, children_right):
    """Depth of every node (root = 0), found by walking down from the root.

    Nodes the root cannot reach keep depth -1. Children must be valid node ids and
    every node must have at most one parent (the format's validation checks both
    first), so each node is pushed at most once and the stack cannot overflow."""
    n_nodes = children_left.shape[0]
    depth = full(n_nodes, -1, np.intp)
    stack = empty(n_nodes, np.intp)
    depth[0] = 0
    stack[0] = 0
    top = 1
    while top > 0:
        top -= 1
        node = stack[top]
        if children_left[node] != LEAF:
            for child in (children_left[node], children_right[node]):
                if depth[child] < 0 and top < n_nodes:
                    depth[child] = depth[node] + 1
                    stack[top] = child
                    top += 1
    return depth


# Problems ``tree_problem`` reports, in the order it checks for them.
SHAPE_OK = 0
ONE_CHILD_LEAF = 1
LEFT_OUT_OF_RANGE = 2
RIGHT_OUT_OF_RANGE = 3
NOT_ONE_PARENT = 4
UNREACHABLE = 5
FEATURE_OUT_OF_RANGE = 6
NAN_THRESHOLD = 7
BAD_OPERATOR = 8


@kernel
def tree_problem(children_left, children_right, feature, threshold, operator, n_features):
    """The first structural problem of a tree's node arrays (of equal length, at least
    one) as ``(problem, node)``, and its depth (``(SHAPE_OK, -1, depth)`` when sound).

    Sound means: both children or neither are ``LEAF``; child ids in ``[1, n)``; every
    node but the root has exactly one parent (so no node is shared and, once every
    node is reachable from the root, there is no cycle); split features in
    ``[0, n_features)``; no NaN threshold at a split; operators ``OP_LE``, ``OP_LT``
    or ``OP_CAT`` at splits (the format checks categorical nodes' offsets). The
    problem reported is the first kind in that order that any node has, at the first
    node that has it, so it does not depend on where in the tree a problem sits. (One
    pass records the first node of every local problem: a pass per check cost twice as
    much.)
    """
    n = children_left.shape[0]
    # first[k]: the first node with local problem k (n: none).
    first = full(BAD_OPERATOR + 1, n, np.intp)
    parents = zeros(n, np.intp)
    for node in range(n - 1, -1, -1):
        left = children_left[node]
        right = children_right[node]
        if (left == LEAF) != (right == LEAF):
            first[ONE_CHILD_LEAF] = node
        if left == LEAF:
            continue
        left_ok = 1 <= left < n
        right_ok = 1 <= right < n
        if not left_ok:
            first[LEFT_OUT_OF_RANGE] = node
        if not right_ok:
            first[RIGHT_OUT_OF_RANGE] = node
        if left_ok and right_ok:
            parents[left] += 1
            parents[right] += 1
        if not 0 <= feature[node] < n_features:
            first[FEATURE_OUT_OF_RANGE] = node
        if np.isnan(threshold[node]):
            first[NAN_THRESHOLD] = node
        if operator[node] > OP_CAT:
            first[BAD_OPERATOR] = node
    for problem in (ONE_CHILD_LEAF, LEFT_OUT_OF_RANGE, RIGHT_OUT_OF_RANGE):
        if first[problem] < n:
            return problem, first[problem], -1
    for node in range(n):
        if parents[node] != (0 if node == 0 else 1):
            return NOT_ONE_PARENT, node, -1
    depth = node_depths(children_left, children_right)
    deepest = 0  # a loop, not ``depth.max()``: that compiles NumPy's reduction machinery
    for node in range(n):
        if depth[node] < 0:
            return UNREACHABLE, node, -1
        deepest = max(deepest, depth[node])
    for problem in (FEATURE_OUT_OF_RANGE, NAN_THRESHOLD, BAD_OPERATOR):
        if first[problem] < n:
            return problem, first[problem], -1
    return SHAPE_OK, -1, deepest
