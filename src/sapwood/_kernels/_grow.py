"""Growing one CART tree: depth-first, or best-first when ``max_leaf_nodes`` is set.

Both builders follow scikit-learn 1.9's ``_tree.pyx`` node for node (same node ids,
same stopping rules, same heap order for best-first growth), so a tree grown here
equals scikit-learn's for the same data and seed. Output: the node arrays of the tree
format, trimmed to the node count.
"""

import numpy as np

from . import _criteria as crit
from ._arrays import empty, full, zeros
from ._numba import kernel, leaf_kernel
from ._sort import RADIX_SIZE, STACK_ROWS
from ._split import SPLIT_FIELDS, split_node

EPSILON = np.finfo(np.float64).eps
LEAF = -1
UNDEFINED = -2


@kernel
def new_nodes(capacity, n_outputs, width):
    """Node arrays for ``capacity`` nodes, as a grown tree holds them (leaves, undefined
    features and thresholds, zeros); the pruner's too."""
    left = full(capacity, LEAF, np.intp)
    right = full(capacity, LEAF, np.intp)
    feature = full(capacity, UNDEFINED, np.intp)
    threshold = full(capacity, UNDEFINED, np.float64)
    impurity = zeros(capacity, np.float64)
    n_samples = zeros(capacity, np.intp)
    weighted = zeros(capacity, np.float64)
    missing = zeros(capacity, np.uint8)
    values = zeros((capacity, n_outputs, width), np.float64)
    return left, right, feature, threshold, impurity, n_samples, weighted, missing, values


@kernel
def resized(nodes, capacity, count):
    """The first ``count`` nodes of ``nodes``, in new arrays of ``capacity`` nodes: more
    room for a growing tree, or the grown tree's arrays trimmed to its node count."""
    bigger = new_nodes(capacity, nodes[8].shape[1], nodes[8].shape[2])
    _copy_head(bigger[0], nodes[0], count)
    _copy_head(bigger[1], nodes[1], count)
    _copy_head(bigger[2], nodes[2], count)
    _copy_head(bigger[3], nodes[3], count)
    _copy_head(bigger[4], nodes[4], count)
    _copy_head(bigger[5], nodes[5], count)
    _copy_head(bigger[6], nodes[6], count)
    _copy_head(bigger[7], nodes[7], count)
    per_node = nodes[8].shape[1] * nodes[8].shape[2]
    # C order: a node's values are contiguous, nodes one after the other
    _copy_head(bigger[8].reshape(-1), nodes[8].reshape(-1), count * per_node)
    return bigger


@leaf_kernel
def _copy_head(destination, source, n):
    # ``destination[:n] = source[:n]`` as a loop: Numba's slice assignment compiles its
    # broadcasting and error paths, seconds of a first run for a copy
    for i in range(n):
        destination[i] = source[i]


@kernel
def _doubled(stack):
    """``stack`` with room for as many entries again (a copy in a loop: np.concatenate
    compiles kernels of its own, a second of a first run)."""
    bigger = empty((2 * stack.shape[0],) + stack.shape[1:], stack.dtype)
    _copy_head(bigger.reshape(-1), stack.reshape(-1), stack.size)  # C order
    return bigger


@leaf_kernel
def _set_node(nodes, node_id, parent, is_left, is_leaf, feature, threshold, impurity,
              n_node_samples, weighted_n_node_samples, missing_go_to_left):
    left, right, feat, thr, imp, n_samples, w_samples, missing, _ = nodes
    imp[node_id] = impurity
    n_samples[node_id] = n_node_samples
    w_samples[node_id] = weighted_n_node_samples
    if parent >= 0:
        if is_left:
            left[parent] = node_id
        else:
            right[parent] = node_id
    if is_leaf:
        left[node_id] = LEAF
        right[node_id] = LEAF
        feat[node_id] = UNDEFINED
        thr[node_id] = UNDEFINED
    else:
        feat[node_id] = feature
        thr[node_id] = threshold
        missing[node_id] = missing_go_to_left


@kernel
def _workspace(sample_weight, n_features):
    """What a builder grows a tree in: the root's samples, a buffer for one feature's
    values, the sorts' workspace, the features in order and the record of constant
    features (one kernel for both builders)."""
    n_rows = sample_weight.shape[0]
    # Rows with zero weight take no part in the tree (scikit-learn drops them up front).
    n = 0
    for i in range(n_rows):
        if sample_weight[i] != 0.0:
            n += 1
    samples = empty(n, np.intp)
    j = 0
    for i in range(n_rows):
        if sample_weight[i] != 0.0:
            samples[j] = i
            j += 1
    features = empty(n_features, np.intp)
    for f in range(n_features):
        features[f] = f
    # radix keys, their spare, spare ids; original values and ids for the tie fallback;
    # packed (key, id) records for introsort; introsort's stack; radix counts
    sort_workspace = (
        empty(n_rows, np.uint32), empty(n_rows, np.uint32),
        empty(n_rows, np.intp), empty(n_rows, np.float32),
        empty(n_rows, np.intp), empty(n_rows, np.uint64),
        empty((STACK_ROWS, 3), np.intp), empty((3, RADIX_SIZE), np.intp))
    return (samples, empty(n_rows, np.float32), sort_workspace, features,
            empty(n_features, np.intp))


# -- best-first growth: a binary max-heap on improvement with libstdc++'s exact moves -----

@kernel
def _heap_sift_up(heap, improvement, hole, top, record):
    parent = (hole - 1) // 2
    while hole > top and improvement[heap[parent]] < improvement[record]:
        heap[hole] = heap[parent]
        hole = parent
        parent = (hole - 1) // 2
    heap[hole] = record


@kernel
def _heap_push(heap, size, improvement, record):
    heap[size] = record
    _heap_sift_up(heap, improvement, size, 0, record)
    return size + 1


@kernel
def _heap_pop(heap, size, improvement):
    """Remove and return the record with the largest improvement (std::pop_heap order)."""
    best = heap[0]
    last = size - 1
    if last > 0:
        record = heap[last]
        heap[last] = heap[0]
        length = last
        hole = 0
        child = 0
        while child < (length - 1) // 2:
            child = 2 * (child + 1)
            if improvement[heap[child]] < improvement[heap[child - 1]]:
                child -= 1
            heap[hole] = heap[child]
            hole = child
        if (length & 1) == 0 and child == (length - 2) // 2:
            child = 2 * (child + 1)
            heap[hole] = heap[child - 1]
            hole = child - 1
        _heap_sift_up(heap, improvement, hole, 0, record)
    return best, last


# -- the builders, one per criterion and splitter ------------------------------------------

def _depth_first(code, random_splitter):
    """The kernel that grows a tree depth-first with the criterion ``code`` and the
    random splitter or the best (see :func:`_builder`)."""

    @kernel
    def depth_first(X_columns, y, sample_weight, has_missing, tie_rate, c, rng,
                    max_features, min_samples_split, min_samples_leaf, min_weight_leaf,
                    max_depth, min_impurity_decrease, leaf_of, huge):
        """Grow a tree depth-first (left child before right); returns the node arrays.

        ``leaf_of``: empty, or one entry per row, set to the leaf of every row in the tree
        (rows with zero weight are left alone); gradient boosting updates its raw scores
        from it instead of routing X through the tree again. ``huge``: None, or True
        for data with more than 2^32 rows (see ``_split._sort_feature``).

        Called through :data:`BUILDERS`.
        """
        samples, values, sort_workspace, features, constant_features = _workspace(
            sample_weight, X_columns.shape[0])
        n_outputs = c.sums[crit.TOTAL].shape[0]
        width = c.sums[crit.TOTAL].shape[1]
        # A shift, not 2 ** (max_depth + 1): Numba compiles its integer power apart.
        capacity = (1 << (max_depth + 1)) - 1 if max_depth <= 10 else 2047
        nodes = new_nodes(capacity, n_outputs, width)
        split = empty(SPLIT_FIELDS, np.float64)
        count = 0

        # stack of (start, end, depth, parent, is_left, n_constant_features) + impurity
        stack_i = empty((64, 6), np.intp)
        stack_f = empty(64, np.float64)
        stack_i[0, 0] = 0
        stack_i[0, 1] = samples.shape[0]
        stack_i[0, 2] = 0
        stack_i[0, 3] = UNDEFINED
        stack_i[0, 4] = 0
        stack_i[0, 5] = 0
        stack_f[0] = np.inf
        top = 1
        first = True
        while top > 0:
            top -= 1
            start = stack_i[top, 0]
            end = stack_i[top, 1]
            depth = stack_i[top, 2]
            parent = stack_i[top, 3]
            is_left = stack_i[top, 4]
            n_constant = stack_i[top, 5]
            impurity = stack_f[top]
            n_node_samples = end - start
            crit.init_node(code, c, y, sample_weight, samples, start, end)
            weighted_n_node_samples = c.stats[crit.W_NODE]
            is_leaf = (depth >= max_depth or n_node_samples < min_samples_split
                       or n_node_samples < 2 * min_samples_leaf
                       or weighted_n_node_samples < 2 * min_weight_leaf)
            if first:
                impurity = crit.node_impurity(code, c, y, sample_weight, samples)
                first = False
            is_leaf = is_leaf or impurity <= EPSILON
            split_feature = 0
            split_threshold = 0.0
            split_pos = end
            impurity_left = 0.0
            impurity_right = 0.0
            missing_left = 0
            if not is_leaf:
                n_constant = split_node(
                    code, X_columns, y, sample_weight, samples, values, features, constant_features,
                    has_missing, tie_rate, sort_workspace, c, rng, start, end, impurity, n_constant,
                    max_features, min_samples_leaf, min_weight_leaf, random_splitter, huge, split)
                split_pos = int(split[0])
                split_feature = int(split[1])
                split_threshold = split[2]
                impurity_left = split[3]
                impurity_right = split[4]
                missing_left = np.uint8(split[6])
                is_leaf = split_pos >= end or split[5] + EPSILON < min_impurity_decrease
            if count >= nodes[0].shape[0]:
                nodes = resized(nodes, 2 * nodes[0].shape[0], count)
            node_id = count
            _set_node(nodes, node_id, parent, is_left == 1, is_leaf, split_feature, split_threshold,
                      impurity, n_node_samples, weighted_n_node_samples, missing_left)
            count += 1
            crit.node_value(code, c, nodes[8][node_id])
            if is_leaf and leaf_of.shape[0] > 0:
                for p in range(start, end):
                    leaf_of[samples[p]] = node_id
            if not is_leaf:
                if top + 2 > stack_i.shape[0]:
                    stack_i = _doubled(stack_i)
                    stack_f = _doubled(stack_f)
                for child_start, child_end, child_left, child_impurity in (
                        (split_pos, end, 0, impurity_right), (start, split_pos, 1, impurity_left)):
                    stack_i[top, 0] = child_start
                    stack_i[top, 1] = child_end
                    stack_i[top, 2] = depth + 1
                    stack_i[top, 3] = node_id
                    stack_i[top, 4] = child_left
                    stack_i[top, 5] = n_constant
                    stack_f[top] = child_impurity
                    top += 1
        return resized(nodes, count, count)

    return depth_first


def _best_first(code, random_splitter):
    """The kernel that grows a tree best-first with the criterion ``code`` and the random
    splitter or the best (see :func:`_builder`)."""

    @kernel
    def best_first(X_columns, y, sample_weight, has_missing, tie_rate, c, rng, max_features,
                   min_samples_split, min_samples_leaf, min_weight_leaf, max_depth,
                   max_leaf_nodes, min_impurity_decrease, leaf_of, huge):
        """Grow a tree by always splitting the leaf with the largest impurity improvement
        (``leaf_of`` as for :func:`_depth_first`'s kernel)."""
        samples, values, sort_workspace, features, constant_features = _workspace(
            sample_weight, X_columns.shape[0])
        n_outputs = c.sums[crit.TOTAL].shape[0]
        width = c.sums[crit.TOTAL].shape[1]
        capacity = 2 * max_leaf_nodes - 1
        nodes = new_nodes(capacity, n_outputs, width)
        split = empty(SPLIT_FIELDS, np.float64)
        count = 0
        # Frontier records (one per node): start, end, pos, depth, is_leaf / impurities.
        rec_i = empty((capacity, 5), np.intp)
        rec_f = empty((capacity, 3), np.float64)
        improvement = empty(capacity, np.float64)
        heap = empty(capacity, np.intp)
        heap_size = 0
        max_split_nodes = max_leaf_nodes - 1

        # (start, end, depth, parent, is_left, impurity) of nodes still to be added
        pending_i = empty((2, 5), np.intp)
        pending_f = empty(2, np.float64)
        pending_i[0, 0] = 0
        pending_i[0, 1] = samples.shape[0]
        pending_i[0, 2] = 0
        pending_i[0, 3] = UNDEFINED
        pending_i[0, 4] = 1
        pending_f[0] = np.inf
        n_pending = 1
        first = True
        while True:
            for q in range(n_pending):
                start = pending_i[q, 0]
                end = pending_i[q, 1]
                depth = pending_i[q, 2]
                parent = pending_i[q, 3]
                is_left = pending_i[q, 4]
                impurity = pending_f[q]
                crit.init_node(code, c, y, sample_weight, samples, start, end)
                weighted_n_node_samples = c.stats[crit.W_NODE]
                if first:
                    impurity = crit.node_impurity(code, c, y, sample_weight, samples)
                    first = False
                n_node_samples = end - start
                is_leaf = (depth >= max_depth or n_node_samples < min_samples_split
                           or n_node_samples < 2 * min_samples_leaf
                           or weighted_n_node_samples < 2 * min_weight_leaf
                           or impurity <= EPSILON)
                split_pos = end
                split_feature = 0
                split_threshold = 0.0
                missing_left = 0
                split_improvement = 0.0
                impurity_left = impurity
                impurity_right = impurity
                if not is_leaf:
                    split_node(
                        code, X_columns, y, sample_weight, samples, values, features,
                        constant_features, has_missing, tie_rate, sort_workspace, c, rng, start,
                        end, impurity, 0, max_features, min_samples_leaf, min_weight_leaf,
                        random_splitter, huge, split)
                    split_pos = int(split[0])
                    split_feature = int(split[1])
                    split_threshold = split[2]
                    missing_left = np.uint8(split[6])
                    is_leaf = split_pos >= end or split[5] + EPSILON < min_impurity_decrease
                    if not is_leaf:
                        split_improvement = split[5]
                        impurity_left = split[3]
                        impurity_right = split[4]
                    else:
                        split_pos = end
                node_id = count
                _set_node(nodes, node_id, parent, is_left == 1, is_leaf, split_feature,
                          split_threshold, impurity, n_node_samples, weighted_n_node_samples,
                          missing_left)
                count += 1
                crit.node_value(code, c, nodes[8][node_id])
                rec_i[node_id, 0] = start
                rec_i[node_id, 1] = end
                rec_i[node_id, 2] = split_pos
                rec_i[node_id, 3] = depth
                rec_i[node_id, 4] = 1 if is_leaf else 0
                rec_f[node_id, 0] = impurity
                rec_f[node_id, 1] = impurity_left
                rec_f[node_id, 2] = impurity_right
                improvement[node_id] = split_improvement
            # Both children of a split enter the frontier only once both have been added.
            for q in range(n_pending):
                heap_size = _heap_push(heap, heap_size, improvement, count - n_pending + q)
            n_pending = 0
            while heap_size > 0 and n_pending == 0:
                record, heap_size = _heap_pop(heap, heap_size, improvement)
                start = rec_i[record, 0]
                end = rec_i[record, 1]
                pos = rec_i[record, 2]
                depth = rec_i[record, 3]
                leaf = rec_i[record, 4]
                if leaf == 1 or max_split_nodes <= 0:
                    left, right, feat, thr = nodes[0], nodes[1], nodes[2], nodes[3]
                    left[record] = LEAF
                    right[record] = LEAF
                    feat[record] = UNDEFINED
                    thr[record] = UNDEFINED
                    if leaf_of.shape[0] > 0:
                        for p in range(start, end):
                            leaf_of[samples[p]] = record
                    continue
                max_split_nodes -= 1
                pending_i[0, 0] = start
                pending_i[0, 1] = pos
                pending_i[0, 2] = depth + 1
                pending_i[0, 3] = record
                pending_i[0, 4] = 1
                pending_f[0] = rec_f[record, 1]
                pending_i[1, 0] = pos
                pending_i[1, 1] = end
                pending_i[1, 2] = depth + 1
                pending_i[1, 3] = record
                pending_i[1, 4] = 0
                pending_f[1] = rec_f[record, 2]
                n_pending = 2
            if n_pending == 0:
                break
        return resized(nodes, count, count)

    return best_first


def _builder(order, random_splitter, code):
    """The kernel that grows one tree in ``order`` ("depth_first" or "best_first") with
    the random splitter or the best, and the criterion ``code``.

    The splitter and the criterion are constants of the kernel (True or None, and an
    integer, so Numba's on-disk cache keys on their values), and Numba compiles the code
    of that one criterion and splitter: the branches of the others are dropped before
    typing (a best-splitter fit compiled the random splitter's code too while the
    splitter was a boolean).
    With the splitter left to run time, LLVM's optimiser also turned the split search
    into much slower code (and ``numba.literally`` from Python would retype the call
    on every tree).
    """
    splitter = True if random_splitter else None  # see _split's split kernels
    if order == "depth_first":
        return _depth_first(code, splitter)
    return _best_first(code, splitter)


# (growth order, splitter, criterion code) -> builder; made up front (Numba compiles
# one when it is first called) so that threads growing trees share them
BUILDERS = {
    (order, splitter, code): _builder(order, splitter == "random", code)
    for order in ("depth_first", "best_first") for splitter in ("best", "random")
    for code in sorted(set(crit.CRITERIA.values()))
}
