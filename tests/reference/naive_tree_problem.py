"""Tree validation, one check at a time over all nodes (plain Python): the reference
for ``sapwood._kernels._traverse.tree_problem``."""

import math

from sapwood._kernels._traverse import (
    BAD_OPERATOR,
    FEATURE_OUT_OF_RANGE,
    LEAF,
    LEFT_OUT_OF_RANGE,
    NAN_THRESHOLD,
    NOT_ONE_PARENT,
    ONE_CHILD_LEAF,
    OP_CAT,
    RIGHT_OUT_OF_RANGE,
    SHAPE_OK,
    UNREACHABLE,
)


def naive_tree_problem(left, right, feature, threshold, operator, n_features):
    n = len(left)
    splits = [k for k in range(n) if left[k] != LEAF]
    for k in range(n):
        if (left[k] == LEAF) != (right[k] == LEAF):
            return ONE_CHILD_LEAF, k, -1
    for k in splits:
        if not 1 <= left[k] < n:
            return LEFT_OUT_OF_RANGE, k, -1
    for k in splits:
        if not 1 <= right[k] < n:
            return RIGHT_OUT_OF_RANGE, k, -1
    parents = [0] * n
    for k in splits:
        parents[left[k]] += 1
        parents[right[k]] += 1
    for k in range(n):
        if parents[k] != (0 if k == 0 else 1):
            return NOT_ONE_PARENT, k, -1
    depth = {0: 0}
    stack = [0]
    while stack:
        k = stack.pop()
        if left[k] != LEAF:
            for child in (left[k], right[k]):
                depth[child] = depth[k] + 1
                stack.append(child)
    for k in range(n):
        if k not in depth:
            return UNREACHABLE, k, -1
    for k in splits:
        if not 0 <= feature[k] < n_features:
            return FEATURE_OUT_OF_RANGE, k, -1
    for k in splits:
        if math.isnan(threshold[k]):
            return NAN_THRESHOLD, k, -1
    for k in splits:
        if operator[k] > OP_CAT:
            return BAD_OPERATOR, k, -1
    return SHAPE_OK, -1, max(depth.values())
