"""Growing one survival tree by log-rank splitting, as scikit-survival 0.28 grows it.

scikit-survival's ``SurvivalTree`` is scikit-learn's depth-first builder and splitters
with a log-rank criterion; this kernel follows both (the feature draws from the tree's
XorShift stream, the constant-feature bookkeeping, the candidate positions, the random
splitter's thresholds and partitions), so that for the same data, options and seed it
grows the same tree.

A split is ranked by the absolute log-rank statistic comparing the left child with
the node (:func:`logrank`); a node whose rows are all censored cannot be split. Each
node records, at every one of the training set's distinct times (``n_times``), the
Nelson-Aalen cumulative hazard and the Kaplan-Meier survival probability of its rows
(value[node, time, 0] and [..., 1], scikit-survival's layout), and each split node its
log-rank statistic (the split's gain).

The statistic is computed per node over the node's own event times only, from
per-slot weights that are updated as rows move to the left child, instead of over all
times from scratch at every candidate position as scikit-survival does: the same
operations on the same numbers for every time that has an event in the node (the
other times add exact zeros), so with unit or whole-number weights (bootstrap
counts) the statistic is scikit-survival's to the bit. (With fractional weights sums
may be grouped differently: equal up to rounding.)
"""

import numpy as np

from ._arrays import empty, zeros
from ._grow import (
    LEAF,
    UNDEFINED,
    _doubled,
    _heap_pop,
    _heap_push,
    _set_node,
    new_nodes,
    resized,
)
from ._numba import kernel, leaf_kernel
from ._random import rand_int, rand_uniform
from ._split import FEATURE_THRESHOLD, _partition_final, _partition_values

__all__ = ["grow_survival_tree", "heapsort", "logrank", "node_counts", "node_value"]

# The rows of one (6, n_times + 1) array of node statistics. Over the node's event times
# (slot j: its j-th event time): the node's weight at risk and its event weight there,
# the variance factor, the left child's weight leaving the risk set after slot j - 1
# (LEFT_LEAVING[j]; [0]: before the first event time) and its event weight at slot j.
# DENSE: the node's weight at risk at every time index from its first to its last.
AT_RISK, EVENTS, VARIANCE, LEFT_LEAVING, LEFT_EVENTS, DENSE = range(6)


@leaf_kernel
def node_counts(samples, start, end, time_index, sample_weight, event, slot_of_time,
                counts, slot):
    """The node's event times and risk sets, and every row's slot (how many of the
    node's event times are at or before its time: it is at risk at slots below it).
    Returns (n_slots, weight of the node, first time index, last time index);
    ``counts[DENSE]`` holds, for time indices first..last, the node's weight at risk."""
    lo = time_index[samples[start]]
    hi = lo
    w_node = 0.0
    for p in range(start, end):
        i = samples[p]
        t = time_index[i]
        if t < lo:
            lo = t
        elif t > hi:
            hi = t
        w_node += sample_weight[i]
    at_risk = counts[AT_RISK]
    events = counts[EVENTS]
    dense = counts[DENSE]
    # dense risk-set weights per time: first the weight at each time, then suffix sums
    for t in range(lo, hi + 1):
        dense[t] = 0.0
        slot_of_time[t] = 0
    for p in range(start, end):
        i = samples[p]
        t = time_index[i]
        dense[t] += sample_weight[i]
        if event[i]:
            slot_of_time[t] = 1  # marks an event time of the node for now
    n_slots = 0
    for t in range(lo, hi + 1):
        if slot_of_time[t] != 0:
            n_slots += 1
        slot_of_time[t] = n_slots
    total = 0.0
    for t in range(hi, lo - 1, -1):
        total += dense[t]
        dense[t] = total
    for t in range(lo, hi + 1):
        j = slot_of_time[t] - 1
        if j >= 0 and (t == lo or slot_of_time[t - 1] != j + 1):
            at_risk[j] = dense[t]
            events[j] = 0.0
    for p in range(start, end):
        i = samples[p]
        slot[i] = slot_of_time[time_index[i]]
        if event[i]:
            events[slot[i] - 1] += sample_weight[i]
    variance = counts[VARIANCE]
    for j in range(n_slots):
        n = at_risk[j]
        d = events[j]
        variance[j] = (n - d) / (n - 1.0) * d if n > 1.0 else 0.0
    return n_slots, w_node, lo, hi


@leaf_kernel
def logrank(counts, n_slots, w_left):
    """|log-rank statistic| of the left child against its node (scikit-survival's
    ``LogrankCriterion.proxy_impurity_improvement``), -inf when the node has no event
    time with a variance (every row censored): such a node is not split."""
    at_risk = counts[AT_RISK]
    events = counts[EVENTS]
    variance = counts[VARIANCE]
    leaving = counts[LEFT_LEAVING]
    left_events = counts[LEFT_EVENTS]
    at = w_left - leaving[0]
    numer = 0.0
    denom = 0.0
    for j in range(n_slots):
        ratio = at / at_risk[j]
        numer += left_events[j] - events[j] * ratio
        denom += ratio * (1.0 - ratio) * variance[j]
        at -= leaving[j + 1]
    if denom != 0.0:
        return abs(numer / np.sqrt(denom))
    return -np.inf


@leaf_kernel
def _clear_left(counts, n_slots):
    leaving = counts[LEFT_LEAVING]
    left_events = counts[LEFT_EVENTS]
    for j in range(n_slots + 1):
        leaving[j] = 0.0
        left_events[j] = 0.0


@leaf_kernel
def _move_left(counts, samples, first, last, sample_weight, event, slot):
    """Move ``samples[first:last]`` to the left child; returns their weight, summed in
    row order (as scikit-survival sums the left child's weight)."""
    leaving = counts[LEFT_LEAVING]
    left_events = counts[LEFT_EVENTS]
    w = 0.0
    for q in range(first, last):
        i = samples[q]
        weight = sample_weight[i]
        s = slot[i]
        leaving[s] += weight
        if event[i]:
            left_events[s - 1] += weight
        w += weight
    return w


@leaf_kernel
def events_into(samples, start, end, time_index, sample_weight, event, value, lo, hi):
    """Put the node's event weight at each of its times into ``value[lo:hi + 1, 0]``
    (in row order), where :func:`node_value` reads it."""
    for t in range(lo, hi + 1):
        value[t, 0] = 0.0
    for p in range(start, end):
        i = samples[p]
        if event[i]:
            value[time_index[i], 0] += sample_weight[i]


@leaf_kernel
def node_value(counts, lo, hi, value):
    """The node's Nelson-Aalen cumulative hazard and Kaplan-Meier survival at every
    time, over its event weights (:func:`events_into`) and risk sets (``counts[DENSE]``,
    :func:`node_counts`), as scikit-survival's ``node_value``: times before the node's
    first add exactly nothing, times after its last have nobody at risk and keep the
    last values."""
    dense = counts[DENSE]
    hazard = 0.0
    survival = 1.0
    for t in range(value.shape[0]):
        if lo <= t <= hi:
            ratio = value[t, 0] / dense[t]
            hazard += ratio
            survival *= 1.0 - ratio
        value[t, 0] = hazard
        value[t, 1] = survival


@leaf_kernel
def heapsort(values, samples, start, end):
    """Sort ``values[start:end]`` ascending, ``samples`` alongside. The order of tied
    values is not introsort's, as scikit-learn leaves them: it cannot change a sum of
    whole-number weights (see the module docstring), and this sort compiles in a
    fraction of the time of :mod:`sapwood._kernels._sort`'s."""
    n = end - start
    for root in range(n // 2 - 1, -1, -1):
        _sift_down(values, samples, start, root, n)
    for last in range(n - 1, 0, -1):
        values[start], values[start + last] = values[start + last], values[start]
        samples[start], samples[start + last] = samples[start + last], samples[start]
        _sift_down(values, samples, start, 0, last)


@leaf_kernel
def _sift_down(values, samples, start, root, n):
    while True:
        child = 2 * root + 1
        if child >= n:
            return
        if child + 1 < n and values[start + child + 1] > values[start + child]:
            child += 1
        if values[start + child] <= values[start + root]:
            return
        a = start + root
        b = start + child
        values[a], values[b] = values[b], values[a]
        samples[a], samples[b] = samples[b], samples[a]
        root = child


@leaf_kernel
def split_node(X_columns, time_index, sample_weight, event, samples, values, features,
               constant_features, counts, slot, rng, start, end, n_slots, w_node,
               n_known_constants, max_features, min_samples_leaf, min_weight_leaf,
               random_splitter, best):
    """Search the node's split into ``best`` (pos, feature, threshold, statistic,
    missing_go_to_left; pos == end: none); returns n_constant_features. The feature
    walk, the constant bookkeeping and the random splitter follow scikit-learn's
    splitters as :func:`sapwood._kernels._split` does."""
    n_features = features.shape[0]
    best[0] = end
    best[1] = 0.0
    best[2] = 0.0
    best[3] = -np.inf
    best[4] = 0.0
    best_proxy = -np.inf
    last_feature = -1
    f_i = n_features
    n_visited = 0
    n_found_constants = 0
    n_drawn_constants = 0
    n_total_constants = n_known_constants
    while f_i > n_total_constants and (
            n_visited < max_features or n_visited <= n_found_constants + n_drawn_constants):
        n_visited += 1
        f_j = rand_int(n_drawn_constants, f_i - n_found_constants, rng)
        if f_j < n_known_constants:
            features[n_drawn_constants], features[f_j] = (features[f_j],
                                                          features[n_drawn_constants])
            n_drawn_constants += 1
            continue
        f_j += n_found_constants
        feature = features[f_j]
        if not random_splitter:
            column = X_columns[feature]
            for p in range(start, end):
                values[p] = column[samples[p]]
            heapsort(values, samples, start, end)
            if values[end - 1] <= values[start] + FEATURE_THRESHOLD:
                features[f_j], features[n_total_constants] = (features[n_total_constants],
                                                              features[f_j])
                n_found_constants += 1
                n_total_constants += 1
                continue
            f_i -= 1
            features[f_i], features[f_j] = features[f_j], features[f_i]
            _clear_left(counts, n_slots)
            w_left = 0.0
            pos = start
            p = start
            while p < end:
                p += 1
                while p < end and values[p] <= values[p - 1] + FEATURE_THRESHOLD:
                    p += 1
                p_prev = p - 1
                if p == end:
                    break
                if p - start < min_samples_leaf or end - p < min_samples_leaf:
                    continue
                w_left += _move_left(counts, samples, pos, p, sample_weight, event, slot)
                pos = p
                if w_left < min_weight_leaf or w_node - w_left < min_weight_leaf:
                    continue
                proxy = logrank(counts, n_slots, w_left)
                if proxy > best_proxy:
                    best_proxy = proxy
                    best[0] = p
                    best[1] = feature
                    best[2] = np.float64(values[p_prev]) / 2.0 + np.float64(values[p]) / 2.0
                    best[3] = proxy
                    best[4] = 1.0 if p - start > end - p else 0.0
        else:
            last_feature = feature
            column = X_columns[feature]
            min_value = column[samples[start]]
            max_value = min_value
            for p in range(start, end):
                value = column[samples[p]]
                values[p] = value
                if value < min_value:
                    min_value = value
                elif value > max_value:
                    max_value = value
            if max_value <= min_value + FEATURE_THRESHOLD:
                features[f_j], features[n_total_constants] = (features[n_total_constants],
                                                              feature)
                n_found_constants += 1
                n_total_constants += 1
                continue
            f_i -= 1
            features[f_i], features[f_j] = features[f_j], features[f_i]
            threshold = rand_uniform(np.float64(min_value), np.float64(max_value), rng)
            if threshold == max_value:
                threshold = np.float64(min_value)
            pos = _partition_values(values, samples, start, end, threshold, False)
            n_left = pos - start
            n_right = end - pos
            if n_left < min_samples_leaf or n_right < min_samples_leaf:
                continue
            _clear_left(counts, n_slots)
            w_left = _move_left(counts, samples, start, pos, sample_weight, event, slot)
            if w_left < min_weight_leaf or w_node - w_left < min_weight_leaf:
                continue
            proxy = logrank(counts, n_slots, w_left)
            if proxy > best_proxy:
                best_proxy = proxy
                best[0] = pos
                best[1] = feature
                best[2] = threshold
                best[3] = proxy
                best[4] = 1.0 if n_left > n_right else 0.0
    best_pos = int(best[0])
    if best_pos < end and (not random_splitter or last_feature != int(best[1])):
        _partition_final(X_columns, samples, start, end, int(best[1]), best[2], best[4] != 0)
    for j in range(n_known_constants):
        features[j] = constant_features[j]
    for j in range(n_known_constants, n_total_constants):
        constant_features[j] = features[j]
    return n_total_constants


@kernel
def _tree_workspace(sample_weight, n_features, n_times):
    """The root's rows (those with weight; scikit-learn drops the others up front), a
    buffer for one feature's values, the features in order, the record of constant
    features, and the node statistics' arrays."""
    n_rows = sample_weight.shape[0]
    n_in = 0
    for i in range(n_rows):
        if sample_weight[i] != 0.0:
            n_in += 1
    samples = empty(n_in, np.intp)
    j = 0
    for i in range(n_rows):
        if sample_weight[i] != 0.0:
            samples[j] = i
            j += 1
    features = empty(n_features, np.intp)
    for f in range(n_features):
        features[f] = f
    return (samples, empty(n_rows, np.float32), features, empty(n_features, np.intp),
            zeros((6, n_times + 1), np.float64), zeros(n_times, np.intp),
            zeros(n_rows, np.intp))


@leaf_kernel
def _add_node(X_columns, time_index, event, sample_weight, workspace, rng, nodes, gain,
              best, node_id, start, end, depth, parent, is_left, n_constant, max_features,
              min_samples_split, min_samples_leaf, min_weight_leaf, max_depth,
              random_splitter):
    """Search node ``node_id``'s split (unless a stopping rule makes it a leaf), record
    the node (its split, counts, functions and split statistic) and return
    (is_leaf, split position, n_constant_features)."""
    samples, values, features, constant_features, counts, slot_of_time, slot = workspace
    n_node_samples = end - start
    n_slots, w_node, lo, hi = node_counts(samples, start, end, time_index, sample_weight,
                                          event, slot_of_time, counts, slot)
    is_leaf = (depth >= max_depth or n_node_samples < min_samples_split
               or n_node_samples < 2 * min_samples_leaf or w_node < 2 * min_weight_leaf)
    split_pos = end
    split_feature = 0
    split_threshold = 0.0
    statistic = 0.0
    missing_left = 0
    if not is_leaf:
        n_constant = split_node(
            X_columns, time_index, sample_weight, event, samples, values, features,
            constant_features, counts, slot, rng, start, end, n_slots, w_node, n_constant,
            max_features, min_samples_leaf, min_weight_leaf, random_splitter, best)
        split_pos = int(best[0])
        split_feature = int(best[1])
        split_threshold = best[2]
        statistic = best[3]
        missing_left = np.uint8(best[4])
        is_leaf = split_pos >= end
    # scikit-survival records no impurity (inf); the tree format's is left at 0.
    _set_node(nodes, node_id, parent, is_left == 1, is_leaf, split_feature, split_threshold,
              0.0, n_node_samples, w_node, missing_left)
    gain[node_id] = 0.0 if is_leaf else statistic
    value = nodes[8][node_id]
    events_into(samples, start, end, time_index, sample_weight, event, value, lo, hi)
    node_value(counts, lo, hi, value)
    return is_leaf, split_pos if not is_leaf else end, n_constant


@kernel
def grow_survival_tree(X_columns, time_index, event, sample_weight, n_times, rng,
                       max_features, min_samples_split, min_samples_leaf, min_weight_leaf,
                       max_depth, max_leaf_nodes, random_splitter):
    """Grow a survival tree as scikit-learn's builders do with scikit-survival's
    criterion: depth-first (left child before right), or with ``max_leaf_nodes`` > 0
    best-first (always splitting the leaf with the largest statistic, scikit-learn's
    heap order); returns the node arrays (``_grow.new_nodes``' layout, values (n_nodes,
    n_times, 2)) and each node's split statistic (0 at leaves)."""
    workspace = _tree_workspace(sample_weight, X_columns.shape[0], n_times)
    n_in = workspace[0].shape[0]
    if max_leaf_nodes > 0:
        capacity = 2 * max_leaf_nodes - 1
    else:
        capacity = (1 << (max_depth + 1)) - 1 if max_depth <= 10 else 2047
    # Every leaf holds min_samples_leaf rows or more: no more nodes than this can be
    # grown, and each node's value is n_times x 2 numbers (arrays sized for the bound,
    # not for scikit-learn's 2,047 nodes, are faster to allocate and to trim).
    most = 2 * (n_in // max(min_samples_leaf, 1)) + 1
    if most < capacity:
        capacity = most
    nodes = new_nodes(capacity, n_times, 2)
    gain = zeros(capacity, np.float64)
    best = empty(5, np.float64)
    if max_leaf_nodes > 0:
        count = _best_first(X_columns, time_index, event, sample_weight, workspace, rng,
                            nodes, gain, best, max_features, min_samples_split,
                            min_samples_leaf, min_weight_leaf, max_depth, max_leaf_nodes,
                            random_splitter)
        return resized(nodes, count, count), gain
    count = 0
    # stack of (start, end, depth, parent, is_left, n_constant_features)
    stack = empty((64, 6), np.intp)
    stack[0, 0] = 0
    stack[0, 1] = n_in
    stack[0, 2] = 0
    stack[0, 3] = UNDEFINED
    stack[0, 4] = 0
    stack[0, 5] = 0
    top = 1
    while top > 0:
        top -= 1
        start = stack[top, 0]
        end = stack[top, 1]
        depth = stack[top, 2]
        if count >= nodes[0].shape[0]:
            nodes = resized(nodes, 2 * nodes[0].shape[0], count)
            gain = _doubled(gain)
        node_id = count
        count += 1
        is_leaf, split_pos, n_constant = _add_node(
            X_columns, time_index, event, sample_weight, workspace, rng, nodes, gain, best,
            node_id, start, end, depth, stack[top, 3], stack[top, 4], stack[top, 5],
            max_features, min_samples_split, min_samples_leaf, min_weight_leaf, max_depth,
            random_splitter)
        if not is_leaf:
            if top + 2 > stack.shape[0]:
                stack = _doubled(stack)
            for child_start, child_end, child_left in ((split_pos, end, 0),
                                                       (start, split_pos, 1)):
                stack[top, 0] = child_start
                stack[top, 1] = child_end
                stack[top, 2] = depth + 1
                stack[top, 3] = node_id
                stack[top, 4] = child_left
                stack[top, 5] = n_constant
                top += 1
    return resized(nodes, count, count), gain


@kernel
def _best_first(X_columns, time_index, event, sample_weight, workspace, rng, nodes, gain,
                best, max_features, min_samples_split, min_samples_leaf, min_weight_leaf,
                max_depth, max_leaf_nodes, random_splitter):
    """Best-first growth into ``nodes`` (room for 2 max_leaf_nodes - 1 nodes): both
    children of a split join the frontier once both are added, and the frontier's node
    with the largest statistic is split next (``_grow``'s heap, libstdc++'s moves);
    returns the node count."""
    capacity = nodes[0].shape[0]
    count = 0
    # Frontier records (one per node): start, end, split position, depth, is_leaf.
    record_of = empty((capacity, 5), np.intp)
    improvement = empty(capacity, np.float64)
    heap = empty(capacity, np.intp)
    heap_size = 0
    max_split_nodes = max_leaf_nodes - 1
    # (start, end, depth, parent, is_left) of nodes still to be added
    pending = empty((2, 5), np.intp)
    pending[0, 0] = 0
    pending[0, 1] = workspace[0].shape[0]
    pending[0, 2] = 0
    pending[0, 3] = UNDEFINED
    pending[0, 4] = 1
    n_pending = 1
    while True:
        for q in range(n_pending):
            start = pending[q, 0]
            end = pending[q, 1]
            depth = pending[q, 2]
            node_id = count
            count += 1
            is_leaf, split_pos, _ = _add_node(
                X_columns, time_index, event, sample_weight, workspace, rng, nodes, gain,
                best, node_id, start, end, depth, pending[q, 3], pending[q, 4], 0,
                max_features, min_samples_split, min_samples_leaf, min_weight_leaf,
                max_depth, random_splitter)
            record_of[node_id, 0] = start
            record_of[node_id, 1] = end
            record_of[node_id, 2] = split_pos
            record_of[node_id, 3] = depth
            record_of[node_id, 4] = 1 if is_leaf else 0
            improvement[node_id] = gain[node_id]
        for q in range(n_pending):
            heap_size = _heap_push(heap, heap_size, improvement, count - n_pending + q)
        n_pending = 0
        while heap_size > 0 and n_pending == 0:
            record, heap_size = _heap_pop(heap, heap_size, improvement)
            if record_of[record, 4] == 1 or max_split_nodes <= 0:
                left, right, feature, threshold = nodes[0], nodes[1], nodes[2], nodes[3]
                left[record] = LEAF
                right[record] = LEAF
                feature[record] = UNDEFINED
                threshold[record] = UNDEFINED
                gain[record] = 0.0
                continue
            max_split_nodes -= 1
            for q, (child_start, child_end, child_left) in enumerate((
                    (record_of[record, 0], record_of[record, 2], 1),
                    (record_of[record, 2], record_of[record, 1], 0))):
                pending[q, 0] = child_start
                pending[q, 1] = child_end
                pending[q, 2] = record_of[record, 3] + 1
                pending[q, 3] = record
                pending[q, 4] = child_left
            n_pending = 2
        if n_pending == 0:
            break
    return count

