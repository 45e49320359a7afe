"""Split criteria on the samples ``samples[start:end]`` of one node.

The state of a criterion is a :data:`Criterion` named tuple of arrays, created once per
tree by :func:`make_criterion` and updated in place. The arithmetic (order of sums,
``update`` from whichever end is closer, the proxy used to rank splits) follows
scikit-learn 1.9's ``_criterion.pyx`` so that sapwood grows bit-identical trees.

Criteria: gini ``1 - sum p_k^2``; entropy ``-sum p_k log2 p_k``; squared error
(weighted variance); absolute error (weighted mean absolute deviation from the
weighted median, by prefix sums in a Fenwick tree); Poisson half deviance.
"""

from collections import namedtuple

import numpy as np

from ._numba import inline_kernel, leaf_kernel
from ._sort import sort_segment

GINI, ENTROPY, SQUARED_ERROR, ABSOLUTE_ERROR, POISSON = 0, 1, 2, 3, 4
CRITERIA = {"gini": GINI, "entropy": ENTROPY, "log_loss": ENTROPY,
            "squared_error": SQUARED_ERROR, "absolute_error": ABSOLUTE_ERROR,
            "poisson": POISSON}

# stats slots
W_SAMPLES, W_NODE, W_LEFT, W_RIGHT, SQ_SUM_TOTAL = 0, 1, 2, 3, 4
# position slots
START, POS, END = 0, 1, 2
# sums rows: weighted class counts (classification) or weighted target sums, per output
TOTAL, LEFT, RIGHT = 0, 1, 2
# absolute error buffers: rows of mae_values (float) and mae_ranks (int)
LEFT_AE, RIGHT_AE, LEFT_MEDIAN, RIGHT_MEDIAN, SORTED_Y, FENWICK_W, FENWICK_WY, NODE_MEDIANS = (
    range(8))
SORTED_INDICES, RANKS = 0, 1

EPSILON_POISSON = 10 * np.finfo(np.float64).eps

# Few, stacked arrays on purpose: Numba reference-counts each array of the tuple at every
# call that takes it. The kernels below are leaf kernels (``_sort.leaf_kernel``: no
# reference counting, no allocation), so the builders' once-per-node calls are cheap.
#
# The criterion's code (GINI ... POISSON) is not part of the state: the kernels take it
# as their first argument, and the tree builders pass a constant (``_grow.BUILDERS``
# holds one builder per criterion). Every kernel that branches on the code is inlined
# into its callers (``_numba.inline_kernel``), which is how the constant reaches it:
# Numba drops the branches of the other criteria, and the kernels only they call,
# before it types the caller (it prunes on constants, not on an argument's literal
# type). So a first gini fit compiles no entropy, regression or absolute error code
# (``tests/test_compile_scope.py`` checks it).
Criterion = namedtuple("Criterion", [
    "n_classes",     # (n_outputs,) classes per output (1 for regression)
    "sums",          # (3, n_outputs, max_n_classes): TOTAL, LEFT, RIGHT
    "stats",         # (5,) W_SAMPLES, W_NODE, W_LEFT, W_RIGHT, SQ_SUM_TOTAL
    "position",      # (3,) START, POS, END
    "mae_values",    # (8, n_samples + 1) absolute error only, else (8, 1)
    "mae_ranks",     # (2, n_samples) absolute error only, else (2, 1)
])


def make_criterion(code, n_outputs, n_classes, n_samples, weighted_n_samples):
    """Allocate a criterion's state (Python side, once per tree)."""
    width = int(max(n_classes.max(), 1))
    mae = n_samples if code == ABSOLUTE_ERROR else 1
    stats = np.zeros(5)
    stats[W_SAMPLES] = weighted_n_samples
    return Criterion(
        n_classes.astype(np.intp), np.zeros((3, n_outputs, width)), stats,
        np.zeros(3, dtype=np.intp), np.zeros((8, max(mae + 1, n_outputs))),
        np.zeros((2, mae), dtype=np.intp),
    )


@leaf_kernel
def log2(x):
    # scikit-learn computes log2 as ln(x) / ln(2); the same expression keeps its bits.
    return np.log(x) / np.log(2.0)


@leaf_kernel
def xlogy(x, y):
    if x == 0.0:
        return 0.0
    return x * np.log(y)


@inline_kernel
def init_node(code, c, y, sample_weight, samples, start, end):
    """Node totals for ``samples[start:end]`` and reset to an empty left child."""
    c.position[START] = start
    c.position[END] = end
    n_outputs = y.shape[1]
    w_node = 0.0
    # the sums read out of the tuple once: the builders that inline this kernel count
    # references, and a read inside the loop would count one per row
    total = c.sums[TOTAL]
    if code == ABSOLUTE_ERROR:
        for p in range(start, end):
            w_node += sample_weight[samples[p]]
    elif code == GINI or code == ENTROPY:
        total[:, :] = 0.0
        for p in range(start, end):
            i = samples[p]
            w = sample_weight[i]
            for k in range(n_outputs):
                total[k, int(y[i, k])] += w
            w_node += w
    else:
        total[:, :] = 0.0
        sq_sum = 0.0
        for p in range(start, end):
            i = samples[p]
            w = sample_weight[i]
            for k in range(n_outputs):
                w_y = w * y[i, k]
                total[k, 0] += w_y
                sq_sum += w_y * y[i, k]
            w_node += w
        c.stats[SQ_SUM_TOTAL] = sq_sum
    c.stats[W_NODE] = w_node
    reset(code, c, y, sample_weight, samples)


@inline_kernel
def reset(code, c, y, sample_weight, samples):
    """Move every sample to the right child."""
    c.position[POS] = c.position[START]
    c.stats[W_LEFT] = 0.0
    c.stats[W_RIGHT] = c.stats[W_NODE]
    if code == ABSOLUTE_ERROR:
        _mae_precompute(c, y, sample_weight, samples)
    else:
        c.sums[LEFT][:, :] = 0.0
        copy_sums(c.sums[RIGHT], c.sums[TOTAL])


@inline_kernel
def update(code, c, y, sample_weight, samples, new_pos):
    """Move ``samples[pos:new_pos]`` to the left child, summing from the nearer end."""
    pos = c.position[POS]
    end = c.position[END]
    classification = code == GINI or code == ENTROPY
    if code == ABSOLUTE_ERROR:
        w_left = move_weight(sample_weight, samples, pos, new_pos, c.stats[W_LEFT])
    elif (new_pos - pos) <= (end - new_pos):
        w_left = move_rows(c.sums[LEFT], y, sample_weight, samples, pos, new_pos, 1,
                           classification, c.stats[W_LEFT])
    else:
        # scikit-learn's reverse_reset: start from "everything left" and remove rows.
        copy_sums(c.sums[LEFT], c.sums[TOTAL])
        w_left = move_rows(c.sums[LEFT], y, sample_weight, samples, end - 1, new_pos - 1, -1,
                           classification, c.stats[W_NODE])
    if code != ABSOLUTE_ERROR:
        right_sums(c.sums[RIGHT], c.sums[TOTAL], c.sums[LEFT], c.n_classes, classification)
    c.stats[W_LEFT] = w_left
    c.stats[W_RIGHT] = c.stats[W_NODE] - w_left
    c.position[POS] = new_pos


# Small array-in helpers: the split scan calls them once per candidate position. Kept
# small so that Numba prunes their reference counting and LLVM inlines them.

@leaf_kernel
def move_weight(sample_weight, samples, first, last, w_left):
    for p in range(first, last):
        w_left += sample_weight[samples[p]]
    return w_left


@leaf_kernel
def move_rows(sum_left, y, sample_weight, samples, first, last, step, classification,
              w_left):
    """Add (step 1) or remove (step -1) rows first, first+step, ... up to ``last``
    (excluded) to the left sums; returns the updated left weight."""
    p = first
    while p != last:
        i = samples[p]
        w = sample_weight[i] if step == 1 else -sample_weight[i]
        for k in range(y.shape[1]):
            if classification:
                sum_left[k, int(y[i, k])] += w
            else:
                sum_left[k, 0] += w * y[i, k]
        w_left += w
        p += step
    return w_left


@leaf_kernel
def copy_sums(destination, source):
    for k in range(source.shape[0]):
        for j in range(source.shape[1]):
            destination[k, j] = source[k, j]


@leaf_kernel
def right_sums(sum_right, sum_total, sum_left, n_classes, classification):
    for k in range(sum_total.shape[0]):
        for j in range(n_classes[k] if classification else 1):
            sum_right[k, j] = sum_total[k, j] - sum_left[k, j]


@inline_kernel
def proxy_from_sums(code, n_classes, sum_left, sum_right, w_left, w_right):
    """The proxy improvement of every criterion but absolute error, from the child sums."""
    n_outputs = sum_left.shape[0]
    if code == SQUARED_ERROR:
        proxy_left = 0.0
        proxy_right = 0.0
        for k in range(n_outputs):
            proxy_left += sum_left[k, 0] * sum_left[k, 0]
            proxy_right += sum_right[k, 0] * sum_right[k, 0]
        return proxy_left / w_left + proxy_right / w_right
    if code == POISSON:
        proxy_left = 0.0
        proxy_right = 0.0
        for k in range(n_outputs):
            if sum_left[k, 0] <= EPSILON_POISSON or sum_right[k, 0] <= EPSILON_POISSON:
                return -np.inf
            proxy_left -= sum_left[k, 0] * log2(sum_left[k, 0] / w_left)
            proxy_right -= sum_right[k, 0] * log2(sum_right[k, 0] / w_right)
        return -proxy_left - proxy_right
    impurity_left = _class_impurity(code, n_classes, sum_left, w_left)
    impurity_right = _class_impurity(code, n_classes, sum_right, w_right)
    return -w_right * impurity_right - w_left * impurity_left


@leaf_kernel
def mae_proxy(left_abs_errors, right_abs_errors, start, pos, end, w_left, w_right, n_outputs):
    impurity_left = (left_abs_errors[pos - 1] if pos > start else 0.0) / (w_left * n_outputs)
    impurity_right = (right_abs_errors[pos] if pos < end else 0.0) / (w_right * n_outputs)
    return -w_right * impurity_right - w_left * impurity_left


@inline_kernel
def _class_impurity(code, n_classes, sums, weight):
    n_outputs = sums.shape[0]
    total = 0.0
    for k in range(n_outputs):
        if code == GINI:
            sq_count = 0.0
            for j in range(n_classes[k]):
                sq_count += sums[k, j] * sums[k, j]
            total += 1.0 - sq_count / (weight * weight)
        else:
            for j in range(n_classes[k]):
                count = sums[k, j]
                if count > 0.0:
                    count /= weight
                    total -= count * log2(count)
    return total / n_outputs


@leaf_kernel
def _poisson_loss(y, sample_weight, samples, start, end, sums, weight):
    n_outputs = y.shape[1]
    loss = 0.0
    for k in range(n_outputs):
        if sums[k, 0] <= EPSILON_POISSON:
            return np.inf
        y_mean = sums[k, 0] / weight
        for p in range(start, end):
            i = samples[p]
            loss += sample_weight[i] * xlogy(y[i, k], y[i, k] / y_mean)
    return loss / (weight * n_outputs)


@inline_kernel
def node_impurity(code, c, y, sample_weight, samples):
    w_node = c.stats[W_NODE]
    n_outputs = y.shape[1]
    if code == GINI or code == ENTROPY:
        return _class_impurity(code, c.n_classes, c.sums[TOTAL], w_node)
    if code == SQUARED_ERROR:
        impurity = c.stats[SQ_SUM_TOTAL] / w_node
        for k in range(n_outputs):
            impurity -= (c.sums[TOTAL][k, 0] / w_node) ** 2.0
        return impurity / n_outputs
    if code == ABSOLUTE_ERROR:
        return c.mae_values[RIGHT_AE][c.position[START]] / (w_node * n_outputs)
    return _poisson_loss(y, sample_weight, samples, c.position[START], c.position[END],
                         c.sums[TOTAL], w_node)


@inline_kernel
def children_impurity(code, c, y, sample_weight, samples):
    """(impurity_left, impurity_right) at the current position."""
    w_left = c.stats[W_LEFT]
    w_right = c.stats[W_RIGHT]
    start, pos, end = c.position[START], c.position[POS], c.position[END]
    n_outputs = y.shape[1]
    if code == GINI or code == ENTROPY:
        return (_class_impurity(code, c.n_classes, c.sums[LEFT], w_left),
                _class_impurity(code, c.n_classes, c.sums[RIGHT], w_right))
    if code == SQUARED_ERROR:
        sq_sum_left = 0.0
        for p in range(start, pos):
            i = samples[p]
            w = sample_weight[i]
            for k in range(n_outputs):
                sq_sum_left += w * y[i, k] * y[i, k]
        sq_sum_right = c.stats[SQ_SUM_TOTAL] - sq_sum_left
        left = sq_sum_left / w_left
        right = sq_sum_right / w_right
        for k in range(n_outputs):
            left -= (c.sums[LEFT][k, 0] / w_left) ** 2.0
            right -= (c.sums[RIGHT][k, 0] / w_right) ** 2.0
        return left / n_outputs, right / n_outputs
    if code == ABSOLUTE_ERROR:
        left = c.mae_values[LEFT_AE][pos - 1] if pos > start else 0.0
        right = c.mae_values[RIGHT_AE][pos] if pos < end else 0.0
        return left / (w_left * n_outputs), right / (w_right * n_outputs)
    return (_poisson_loss(y, sample_weight, samples, start, pos, c.sums[LEFT], w_left),
            _poisson_loss(y, sample_weight, samples, pos, end, c.sums[RIGHT], w_right))


@inline_kernel
def proxy_improvement(code, c, y, sample_weight, samples):
    """A quantity that ranks splits like the impurity improvement, cheaper to compute."""
    if code == ABSOLUTE_ERROR:
        return mae_proxy(c.mae_values[LEFT_AE], c.mae_values[RIGHT_AE], c.position[START],
                         c.position[POS], c.position[END], c.stats[W_LEFT], c.stats[W_RIGHT],
                         y.shape[1])
    return proxy_from_sums(code, c.n_classes, c.sums[LEFT], c.sums[RIGHT], c.stats[W_LEFT],
                           c.stats[W_RIGHT])


@leaf_kernel
def impurity_improvement(c, impurity_parent, impurity_left, impurity_right):
    w_node = c.stats[W_NODE]
    return ((w_node / c.stats[W_SAMPLES])
            * (impurity_parent - (c.stats[W_RIGHT] / w_node * impurity_right)
               - (c.stats[W_LEFT] / w_node * impurity_left)))


@inline_kernel
def node_value(code, c, out):
    """Write the node prediction into ``out`` (n_outputs, max_n_classes)."""
    w_node = c.stats[W_NODE]
    n_outputs = out.shape[0]
    total = c.sums[TOTAL]
    if code == GINI or code == ENTROPY:
        for k in range(n_outputs):
            for j in range(c.n_classes[k]):
                out[k, j] = total[k, j] / w_node
    elif code == ABSOLUTE_ERROR:
        for k in range(n_outputs):
            out[k, 0] = c.mae_values[NODE_MEDIANS][k]
    else:
        for k in range(n_outputs):
            out[k, 0] = total[k, 0] / w_node


# -- absolute error: weighted medians and absolute deviations of every prefix/suffix -----

@leaf_kernel
def _fenwick_add(tree_w, tree_wy, size, index, y_value, weight):
    weighted_y = weight * y_value
    j = index + 1
    while j <= size:
        tree_w[j] += weight
        tree_wy[j] += weighted_y
        j += j & -j


@leaf_kernel
def _fenwick_search(tree_w, tree_wy, size, max_pow2, target):
    """Smallest rank whose cumulative weight reaches ``target``, the rank before it, and
    the weight and weighted-y sums of the ranks below it. Exact ties in cumulative
    weight are resolved as scikit-learn does (median between two ranks)."""
    current = 0
    cumul_w = 0.0
    cumul_wy = 0.0
    bit = max_pow2
    equal_bit = 0
    equal_target = 0.0
    while bit != 0:
        nxt = current + bit
        if nxt <= size:
            node_w = tree_w[nxt]
            if target == node_w:
                equal_target = target
                equal_bit = bit
                break
            elif target > node_w:
                target -= node_w
                current = nxt
                cumul_w += node_w
                cumul_wy += tree_wy[nxt]
        bit >>= 1
    if bit == 0:
        return current, current, cumul_w, cumul_wy
    prev = current
    while bit != 0:
        nxt = prev + bit
        if nxt <= size:
            node_w = tree_w[nxt]
            if target > node_w:
                target -= node_w
                prev = nxt
        bit >>= 1
    bit = equal_bit
    target = equal_target
    while bit != 0:
        nxt = current + bit
        if nxt <= size:
            node_w = tree_w[nxt]
            if target >= node_w:
                target -= node_w
                current = nxt
                cumul_w += node_w
                cumul_wy += tree_wy[nxt]
        bit >>= 1
    return current, prev, cumul_w, cumul_wy


@leaf_kernel
def _absolute_errors(c, sample_weight, samples, start, stop, abs_errors, medians):
    """Add to ``abs_errors[p]`` the absolute deviation of the samples between ``start`` and
    ``p`` (inclusive) from their weighted median, walking from ``start`` towards ``stop``."""
    if start < stop:
        step = 1
        n = stop - start
    else:
        step = -1
        n = start - stop
    size = n
    c.mae_values[FENWICK_W][: size + 1] = 0.0
    c.mae_values[FENWICK_WY][: size + 1] = 0.0
    max_pow2 = 1
    while max_pow2 <= size:
        max_pow2 <<= 1
    max_pow2 >>= 1
    total_w = 0.0
    total_wy = 0.0
    p = start
    for _ in range(n):
        w = sample_weight[samples[p]]
        rank = c.mae_ranks[RANKS][p]
        y_value = c.mae_values[SORTED_Y][rank]
        _fenwick_add(c.mae_values[FENWICK_W], c.mae_values[FENWICK_WY], size, rank, y_value, w)
        total_w += w
        total_wy += w * y_value
        median_rank, prev_rank, w_left, wy_left = _fenwick_search(
            c.mae_values[FENWICK_W], c.mae_values[FENWICK_WY], size, max_pow2, 0.5 * total_w)
        if median_rank != prev_rank:
            median = (c.mae_values[SORTED_Y][prev_rank] + c.mae_values[SORTED_Y][median_rank]) / 2
        else:
            median = c.mae_values[SORTED_Y][median_rank]
        w_right = total_w - w_left
        wy_right = total_wy - wy_left
        medians[p] = median
        abs_errors[p] += (wy_right - median * w_right) + (median * w_left - wy_left)
        p += step


@leaf_kernel
def _mae_precompute(c, y, sample_weight, samples):
    start = c.position[START]
    end = c.position[END]
    n = end - start
    c.mae_values[LEFT_AE][start:end] = 0.0
    c.mae_values[RIGHT_AE][start:end] = 0.0
    for k in range(y.shape[1]):
        for p in range(start, end):
            c.mae_values[SORTED_Y][p - start] = y[samples[p], k]
        for j in range(n):
            c.mae_ranks[SORTED_INDICES][j] = j
        sort_segment(c.mae_values[SORTED_Y], c.mae_ranks[SORTED_INDICES], 0, n)
        for j in range(n):
            c.mae_ranks[RANKS][start + c.mae_ranks[SORTED_INDICES][j]] = j
        _absolute_errors(c, sample_weight, samples, start, end, c.mae_values[LEFT_AE],
                         c.mae_values[LEFT_MEDIAN])
        _absolute_errors(c, sample_weight, samples, end - 1, start - 1, c.mae_values[RIGHT_AE],
                         c.mae_values[RIGHT_MEDIAN])
        c.mae_values[NODE_MEDIANS][k] = c.mae_values[RIGHT_MEDIAN][start]
