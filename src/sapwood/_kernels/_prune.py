"""Minimal cost-complexity pruning (Breiman et al. 1984, ch. 3), as scikit-learn does it.

The weakest link is the internal node with the smallest
``alpha_eff = (R(node) - R(subtree)) / (n_leaves(subtree) - 1)`` where
``R = w / w_root * impurity``; it is collapsed until the weakest link exceeds
``ccp_alpha`` (pruning) or the root is a leaf (the full path).
"""

import numpy as np

from ._arrays import empty, full, zeros
from ._grow import LEAF, UNDEFINED, new_nodes, resized
from ._numba import kernel


@kernel
def _prune_sequence(children_left, children_right, weighted_n_node_samples, impurity,
                    ccp_alpha, full_path):
    """Returns (leaves_in_subtree mask, alphas, subtree impurities) of the pruning walk."""
    n_nodes = children_left.shape[0]
    r_node = weighted_n_node_samples * impurity / weighted_n_node_samples[0]
    parent = full(n_nodes, UNDEFINED, np.intp)
    leaves_in_subtree = zeros(n_nodes, np.uint8)
    n_leaves = zeros(n_nodes, np.intp)
    r_branch = zeros(n_nodes, np.float64)
    stack = empty(n_nodes, np.intp)
    stack[0] = 0
    top = 1
    while top > 0:
        top -= 1
        node = stack[top]
        if children_left[node] == LEAF:
            leaves_in_subtree[node] = 1
        else:
            parent[children_left[node]] = node
            parent[children_right[node]] = node
            stack[top] = children_left[node]
            stack[top + 1] = children_right[node]
            top += 2
    for leaf in range(n_nodes):
        if not leaves_in_subtree[leaf]:
            continue
        r_branch[leaf] = r_node[leaf]
        current_r = r_node[leaf]
        node = leaf
        while node != 0:
            up = parent[node]
            r_branch[up] += current_r
            n_leaves[up] += 1
            node = up
    candidate = 1 - leaves_in_subtree
    in_subtree = full(n_nodes, 1, np.uint8)
    alphas = [0.0]
    impurities = [r_branch[0]]
    max_float = np.finfo(np.float64).max
    while candidate[0]:
        effective_alpha = max_float
        pruned = 0
        for i in range(n_nodes):
            if not candidate[i]:
                continue
            subtree_alpha = (r_node[i] - r_branch[i]) / (n_leaves[i] - 1)
            if subtree_alpha < effective_alpha:
                effective_alpha = subtree_alpha
                pruned = i
        if not full_path and ccp_alpha < effective_alpha:
            break
        stack[0] = pruned
        top = 1
        while top > 0:
            top -= 1
            node = stack[top]
            if not in_subtree[node]:
                continue
            candidate[node] = 0
            leaves_in_subtree[node] = 0
            in_subtree[node] = 0
            if children_left[node] != LEAF:
                stack[top] = children_left[node]
                stack[top + 1] = children_right[node]
                top += 2
        leaves_in_subtree[pruned] = 1
        in_subtree[pruned] = 1
        n_pruned_leaves = n_leaves[pruned] - 1
        n_leaves[pruned] = 0
        r_diff = r_node[pruned] - r_branch[pruned]
        r_branch[pruned] = r_node[pruned]
        node = parent[pruned]
        while node != UNDEFINED:
            n_leaves[node] -= n_pruned_leaves
            r_branch[node] += r_diff
            node = parent[node]
        alphas.append(effective_alpha)
        impurities.append(r_branch[0])
    return leaves_in_subtree, np.array(alphas), np.array(impurities)


@kernel
def pruning_path(children_left, children_right, weighted_n_node_samples, impurity):
    """(ccp_alphas, impurities) of scikit-learn's ``cost_complexity_pruning_path``."""
    _, alphas, impurities = _prune_sequence(children_left, children_right,
                                            weighted_n_node_samples, impurity, 0.0, True)
    return alphas, impurities


@kernel
def prune_tree(children_left, children_right, feature, threshold, impurity, n_node_samples,
               weighted_n_node_samples, missing_go_to_left, value, ccp_alpha):
    """The pruned tree's node arrays, renumbered in depth-first (left first) order."""
    leaves, _, _ = _prune_sequence(children_left, children_right, weighted_n_node_samples,
                                   impurity, ccp_alpha, False)
    n_nodes = children_left.shape[0]
    pruned = new_nodes(n_nodes, value.shape[1], value.shape[2])
    (new_left, new_right, new_feature, new_threshold, new_impurity, new_n, new_w,
     new_missing, new_value) = pruned
    # stack of (original node, new parent, is_left)
    stack = empty((n_nodes + 1, 3), np.intp)
    stack[0, 0] = 0
    stack[0, 1] = UNDEFINED
    stack[0, 2] = 0
    top = 1
    count = 0
    while top > 0:
        top -= 1
        old = stack[top, 0]
        up = stack[top, 1]
        is_left = stack[top, 2]
        new = count
        count += 1
        if up != UNDEFINED:
            if is_left:
                new_left[up] = new
            else:
                new_right[up] = new
        new_impurity[new] = impurity[old]
        new_n[new] = n_node_samples[old]
        new_w[new] = weighted_n_node_samples[old]
        new_value[new] = value[old]
        if not leaves[old]:
            new_feature[new] = feature[old]
            new_threshold[new] = threshold[old]
            new_missing[new] = missing_go_to_left[old]
            stack[top, 0] = children_right[old]
            stack[top, 1] = new
            stack[top, 2] = 0
            stack[top + 1, 0] = children_left[old]
            stack[top + 1, 1] = new
            stack[top + 1, 2] = 1
            top += 2
    return resized(pruned, count, count)
