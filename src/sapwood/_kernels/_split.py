"""Best and random split search on one node, as scikit-learn 1.9's splitters do it.

``samples[start:end]`` are the node's rows; ``X_columns`` is X transposed (one float32
row per feature, so a column scan is contiguous). Features are drawn without
replacement by a Fisher-Yates walk over ``features`` driven by the tree's XorShift
stream, skipping features already known to be constant; the walk, the constant
bookkeeping and every tie rule match scikit-learn, which is what makes the trees equal.

Missing values: for a feature with NaN in the node, the best splitter tries the
missing rows on the right (including "all missing rows alone on the right", threshold
+inf) and then on the left; the random splitter sends them to a random side.
"""

import numpy as np

from . import _criteria as crit
from ._criteria import ABSOLUTE_ERROR, ENTROPY, GINI, POISSON, SQUARED_ERROR
from ._numba import inline_kernel, leaf_kernel
from ._random import rand_int, rand_uniform
from ._sort import (
    RADIX_MIN,
    insertion_sort,
    radix_sort_segment_in,
    sort_segment_in,
    sort_segment_packed_in,
    sort_ties_packed_in,
)

# Values closer than this are treated as equal (scikit-learn's FEATURE_THRESHOLD, float32).
FEATURE_THRESHOLD = np.float32(1e-7)

# A split found by the search: pos (first right sample), feature, threshold,
# impurity_left, impurity_right, improvement, missing_go_to_left.
SPLIT_FIELDS = 7

# Segments expected to hold more than one tied pair per this many values are sorted by
# introsort directly; the others by radix sort, then introsort only where ties are
# (``_sort.sort_ties_packed_in``), which pays off while ties are sparse.
SPARSE_TIES = 16


@inline_kernel
def _introsort(column, values, samples, start, n, records, stack, huge):
    # scikit-learn's introsort; on packed (key, id) records unless ``huge`` (see
    # :func:`_sort_feature`). Small segments go to insertion sort here, as
    # sort_segment_in would send them: calling it compiled its whole introsort.
    if n <= 15:
        insertion_sort(values, samples, start, n)
    elif huge is None:
        sort_segment_packed_in(column, values, samples, start, n, records, stack)
    else:
        sort_segment_in(values, samples, start, n, stack)


@leaf_kernel
def _sort_feature(X_columns, feature, samples, values, start, end, has_missing, tie_rate,
                  workspace, huge):
    """Copy the feature's values of ``samples[start:end]`` into ``values`` and sort both,
    missing values moved to the end unsorted; returns the number of missing values.

    The order of tied values must be introsort's (it fixes the order of sums and so the
    last bits of impurities). Sorted orders of distinct values are unique, so a radix
    sort may be used where no ties can be: ``tie_rate`` is 0 when the feature has no ties
    or the order cannot matter (see ``learners._grow``), else tied pairs / n_rows^2, so
    that ``tie_rate * n^2`` estimates the ties in a segment of n rows. Segments with
    few expected ties are radix sorted, then the tied values are put in introsort's
    order by running introsort from the original order on only the parts of the
    segment that hold a tie (exact: see ``_sort.sort_ties_packed_in``); small segments
    and segments with many ties go straight to introsort.

    Introsort and the tie fallback sort packed (value, sample id) records, which hold
    ids below 2^32: ``huge`` is True for data with more rows (then both sort the values
    and ids side by side), else None, so that Numba drops the unpacked sorts before
    typing for all other data (they are costly to compile).
    """
    column = X_columns[feature]
    n_missing = 0
    if has_missing:
        i = start
        last = end - 1
        while i <= last:
            if np.isnan(column[samples[last]]):
                n_missing += 1
                last -= 1
                continue
            if np.isnan(column[samples[i]]):
                samples[i], samples[last] = samples[last], samples[i]
                n_missing += 1
                last -= 1
            values[i] = column[samples[i]]
            i += 1
    else:
        for i in range(start, end):
            values[i] = column[samples[i]]
    n_present = end - start - n_missing
    (keys, keys_spare, indices_spare, original_values, original_samples, records, stack,
     counts) = workspace
    expected_ties = tie_rate * n_present * n_present
    if n_present < RADIX_MIN or (expected_ties >= 0.5 and not (
            huge is None and expected_ties * SPARSE_TIES <= n_present)):
        _introsort(column, values, samples, start, n_present, records, stack, huge)
        return n_missing
    checked = tie_rate > 0.0
    if checked:
        for i in range(n_present):
            original_values[i] = values[start + i]
            original_samples[i] = samples[start + i]
    radix_sort_segment_in(values, samples, start, n_present, keys, keys_spare,
                          indices_spare, counts)
    if not checked:
        return n_missing
    if huge is None:
        # keys is free again: it holds the tie counts
        sort_ties_packed_in(column, values, samples, start, n_present, original_values,
                            original_samples, records, stack, keys)
        return n_missing
    for i in range(start + 1, start + n_present):
        if values[i] == values[i - 1]:
            for j in range(n_present):
                values[start + j] = original_values[j]
                samples[start + j] = original_samples[j]
            _introsort(column, values, samples, start, n_present, records, stack, huge)
            break
    return n_missing


@leaf_kernel
def _rotate(array, start, end, n_first):
    """Swap the blocks ``array[start:start+n_first]`` and ``array[start+n_first:end]``
    (in place: reverse each block, then the whole)."""
    _reverse(array, start, start + n_first)
    _reverse(array, start + n_first, end)
    _reverse(array, start, end)


@leaf_kernel
def _reverse(array, start, end):
    lo = start
    hi = end - 1
    while lo < hi:
        array[lo], array[hi] = array[hi], array[lo]
        lo += 1
        hi -= 1


@leaf_kernel
def _partition_final(X_columns, samples, start, end, feature, threshold, missing_go_to_left):
    column = X_columns[feature]
    lo = start
    hi = end
    while lo < hi:
        value = column[samples[lo]]
        if np.isnan(value):
            left = missing_go_to_left
        else:
            left = value <= threshold
        if left:
            lo += 1
        else:
            hi -= 1
            samples[lo], samples[hi] = samples[hi], samples[lo]


@leaf_kernel
def _partition_values(values, samples, start, end, threshold, missing_go_to_left):
    lo = start
    hi = end
    while lo < hi:
        value = values[lo]
        if np.isnan(value):
            left = missing_go_to_left
        else:
            left = value <= threshold
        if left:
            lo += 1
        else:
            hi -= 1
            values[lo], values[hi] = values[hi], values[lo]
            samples[lo], samples[hi] = samples[hi], samples[lo]
    return hi


def _scan_for(code):
    """The hot loop of the best split search for the criterion ``code`` (a constant of
    the closure, so Numba drops the other criteria's branches before typing; see
    :func:`_for_criterion`)."""

    @leaf_kernel
    def scan(n_classes, sum_total, sum_left, sum_right, stats, left_abs_errors,
             right_abs_errors, y, sample_weight, samples, values, start, end, n_missing,
             missing_go_to_left, min_samples_leaf, min_weight_leaf, best_proxy):
        """Walk the sorted node from left to right and find the position whose split beats
        ``best_proxy``; returns (proxy, p_prev, p), with p = -1 when none does.

        This is split search's hot loop, and it spells out inline the steps of
        ``crit.update`` and ``crit.proxy_improvement`` (same operations in the same order,
        so the same bits; the parity tests pin both). Numba reference-counts every array
        passed to a function call, and one call per candidate position made this loop many
        times slower than scikit-learn's.
        """
        classification = code == GINI or code == ENTROPY
        n_outputs = y.shape[1]
        width = sum_total.shape[1]
        w_node = stats[crit.W_NODE]
        # crit.reset: every sample on the right (absolute error resets in the caller, since
        # its reset recomputes medians for the new sample order)
        if code != ABSOLUTE_ERROR:
            for k in range(n_outputs):
                for j in range(width):
                    sum_left[k, j] = 0.0
        w_left = 0.0
        pos = start
        found_p = -1
        found_p_prev = -1
        end_non_missing = end if missing_go_to_left else end - n_missing
        p = start
        while p < end:
            # Next candidate position: skip values within FEATURE_THRESHOLD of the previous
            # one; with missing values on the right, the last candidate puts exactly the
            # missing rows on the right; with them on the left, start after them.
            if p == end_non_missing and not missing_go_to_left:
                break
            if missing_go_to_left and p == start:
                p = start + n_missing
            p += 1
            while p < end_non_missing and values[p] <= values[p - 1] + FEATURE_THRESHOLD:
                p += 1
            p_prev = p - 1
            if p == end:
                break
            if p - start < min_samples_leaf or end - p < min_samples_leaf:
                continue
            # crit.update: move samples[pos:p] to the left, from the nearer end
            if code == ABSOLUTE_ERROR:
                for q in range(pos, p):
                    w_left += sample_weight[samples[q]]
            else:
                if (p - pos) <= (end - p):
                    first, last, step = pos, p, 1
                else:
                    for k in range(n_outputs):
                        for j in range(width):
                            sum_left[k, j] = sum_total[k, j]
                    w_left = w_node
                    first, last, step = end - 1, p - 1, -1
                q = first
                while q != last:
                    i = samples[q]
                    w = sample_weight[i] if step == 1 else -sample_weight[i]
                    for k in range(n_outputs):
                        if classification:
                            sum_left[k, int(y[i, k])] += w
                        else:
                            sum_left[k, 0] += w * y[i, k]
                    w_left += w
                    q += step
                for k in range(n_outputs):
                    for j in range(n_classes[k] if classification else 1):
                        sum_right[k, j] = sum_total[k, j] - sum_left[k, j]
            pos = p
            w_right = w_node - w_left
            if w_left < min_weight_leaf or w_right < min_weight_leaf:
                continue
            # crit.proxy_improvement
            if code == SQUARED_ERROR:
                proxy_left = 0.0
                proxy_right = 0.0
                for k in range(n_outputs):
                    proxy_left += sum_left[k, 0] * sum_left[k, 0]
                    proxy_right += sum_right[k, 0] * sum_right[k, 0]
                proxy = proxy_left / w_left + proxy_right / w_right
            elif code == GINI or code == ENTROPY:
                impurity_left = 0.0
                impurity_right = 0.0
                for k in range(n_outputs):
                    if code == GINI:
                        sq_left = 0.0
                        sq_right = 0.0
                        for j in range(n_classes[k]):
                            sq_left += sum_left[k, j] * sum_left[k, j]
                            sq_right += sum_right[k, j] * sum_right[k, j]
                        impurity_left += 1.0 - sq_left / (w_left * w_left)
                        impurity_right += 1.0 - sq_right / (w_right * w_right)
                    else:
                        for j in range(n_classes[k]):
                            count = sum_left[k, j]
                            if count > 0.0:
                                count /= w_left
                                impurity_left -= count * (np.log(count) / np.log(2.0))
                            count = sum_right[k, j]
                            if count > 0.0:
                                count /= w_right
                                impurity_right -= count * (np.log(count) / np.log(2.0))
                impurity_left /= n_outputs
                impurity_right /= n_outputs
                proxy = -w_right * impurity_right - w_left * impurity_left
            elif code == ABSOLUTE_ERROR:
                impurity_left = left_abs_errors[p - 1] / (w_left * n_outputs)
                impurity_right = (right_abs_errors[p] if p < end else 0.0) / (w_right * n_outputs)
                proxy = -w_right * impurity_right - w_left * impurity_left
            else:
                proxy = crit.proxy_from_sums(code, n_classes, sum_left, sum_right, w_left, w_right)
            if proxy > best_proxy:
                best_proxy = proxy
                found_p = p
                found_p_prev = p_prev
        stats[crit.W_LEFT] = w_left
        stats[crit.W_RIGHT] = w_node - w_left
        return best_proxy, found_p_prev, found_p

    return scan


_SCAN_GINI = _scan_for(GINI)
_SCAN_ENTROPY = _scan_for(ENTROPY)
_SCAN_SQUARED_ERROR = _scan_for(SQUARED_ERROR)
_SCAN_ABSOLUTE_ERROR = _scan_for(ABSOLUTE_ERROR)
_SCAN_POISSON = _scan_for(POISSON)


@inline_kernel
def _scan_positions(code, n_classes, sum_total, sum_left, sum_right, stats, left_abs_errors,
                    right_abs_errors, y, sample_weight, samples, values, start, end, n_missing,
                    missing_go_to_left, min_samples_leaf, min_weight_leaf, best_proxy):
    """Walk the sorted node from left to right and find the position whose split beats
    ``best_proxy``; returns (proxy, p_prev, p), with p = -1 when none does. Through the
    scan kernel of the criterion ``code``, a constant of the caller: only that one
    compiles."""
    if code == GINI:
        scan = _SCAN_GINI
    elif code == ENTROPY:
        scan = _SCAN_ENTROPY
    elif code == SQUARED_ERROR:
        scan = _SCAN_SQUARED_ERROR
    elif code == ABSOLUTE_ERROR:
        scan = _SCAN_ABSOLUTE_ERROR
    else:
        scan = _SCAN_POISSON
    return scan(n_classes, sum_total, sum_left, sum_right, stats, left_abs_errors,
                right_abs_errors, y, sample_weight, samples, values, start, end, n_missing,
                missing_go_to_left, min_samples_leaf, min_weight_leaf, best_proxy)


@leaf_kernel
def _scan_squared_error(sum_total, sum_left, sum_right, stats, y, sample_weight, samples,
                        values, start, end, n_missing, missing_go_to_left, min_samples_leaf,
                        min_weight_leaf, best_proxy):
    """:func:`_scan_positions` for squared error with one output (regression forests,
    every boosting tree): the same candidate positions and the same floating-point
    operations in the same order, with the sums kept in registers rather than in the
    criterion's arrays (which get the final sums, as :func:`_scan_positions` leaves them).
    """
    total = sum_total[0, 0]
    w_node = stats[crit.W_NODE]
    s_left = 0.0
    s_right = sum_right[0, 0]
    w_left = 0.0
    pos = start
    found_p = -1
    found_p_prev = -1
    end_non_missing = end if missing_go_to_left else end - n_missing
    p = start
    while p < end:
        if p == end_non_missing and not missing_go_to_left:
            break
        if missing_go_to_left and p == start:
            p = start + n_missing
        p += 1
        while p < end_non_missing and values[p] <= values[p - 1] + FEATURE_THRESHOLD:
            p += 1
        p_prev = p - 1
        if p == end:
            break
        if p - start < min_samples_leaf or end - p < min_samples_leaf:
            continue
        if (p - pos) <= (end - p):
            for q in range(pos, p):
                i = samples[q]
                w = sample_weight[i]
                s_left += w * y[i, 0]
                w_left += w
        else:
            s_left = total
            w_left = w_node
            for q in range(end - 1, p - 1, -1):
                i = samples[q]
                w = -sample_weight[i]
                s_left += w * y[i, 0]
                w_left += w
        s_right = total - s_left
        pos = p
        w_right = w_node - w_left
        if w_left < min_weight_leaf or w_right < min_weight_leaf:
            continue
        proxy = (0.0 + s_left * s_left) / w_left + (0.0 + s_right * s_right) / w_right
        if proxy > best_proxy:
            best_proxy = proxy
            found_p = p
            found_p_prev = p_prev
    sum_left[0, 0] = s_left
    sum_right[0, 0] = s_right
    stats[crit.W_LEFT] = w_left
    stats[crit.W_RIGHT] = w_node - w_left
    return best_proxy, found_p_prev, found_p


# -- one split kernel per criterion ------------------------------------------------------

def _for_criterion(code):
    """The split search of one node, compiled for the criterion ``code`` alone: ``code``
    is a constant of this closure (an integer, so Numba's on-disk cache keys on its
    value), and Numba drops the other criteria's branches before typing. (Passed as an
    argument to a kernel inlined into its callers, as ``_criteria``'s small kernels get
    it, the constant reaches it too; but Numba's inliner copies a kernel's whole variable
    table once per block of it, and inlining this search and its scan made a first run
    compile far longer.)"""

    @leaf_kernel
    def split(X_columns, y, sample_weight, samples, values, features, constant_features,
              has_missing, tie_rate, sort_workspace, c, rng, start, end, impurity,
              n_known_constants, max_features, min_samples_leaf, min_weight_leaf,
              random_splitter, huge, best):
        """Search the node's split into ``best``; returns n_constant_features.

        ``best`` is a float64 array of SPLIT_FIELDS entries (the split record);
        ``best[0] == end`` means no valid split was found. ``random_splitter`` is True
        for the random splitter and None for the best: Numba drops the branches of the
        other splitter before typing on a comparison with None only (a literal boolean
        reaches LLVM, which drops them after everything in them was compiled). ``huge``
        as for :func:`_sort_feature`. Called through :func:`split_node`.
        """
        n_features = features.shape[0]
        best[0] = end
        best[1] = 0.0
        best[2] = 0.0
        best[3] = np.inf
        best[4] = np.inf
        best[5] = -np.inf
        best[6] = 0.0
        best_proxy = -np.inf
        last_feature = -1

        # The criterion's arrays read out once: reading a field of the named tuple inside the
        # feature loop costs reference counting each time.
        n_classes, stats = c.n_classes, c.stats
        sum_total, sum_left, sum_right = c.sums[crit.TOTAL], c.sums[crit.LEFT], c.sums[crit.RIGHT]
        left_abs_errors, right_abs_errors = c.mae_values[crit.LEFT_AE], c.mae_values[crit.RIGHT_AE]

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

            if random_splitter is None:
                n_missing = _sort_feature(X_columns, feature, samples, values, start, end,
                                          has_missing[feature], tie_rate[feature],
                                          sort_workspace, huge)
                end_non_missing = end - n_missing
                if end_non_missing == start or (
                        values[end_non_missing - 1] <= values[start] + FEATURE_THRESHOLD
                        and n_missing == 0):
                    features[f_j], features[n_total_constants] = (features[n_total_constants],
                                                                  features[f_j])
                    n_found_constants += 1
                    n_total_constants += 1
                    continue
                f_i -= 1
                features[f_i], features[f_j] = features[f_j], features[f_i]
                n_searches = 2 if n_missing != 0 else 1
                for search in range(n_searches):
                    missing_go_to_left = search == 1
                    if missing_go_to_left:
                        n_non_missing = end - start - n_missing
                        _rotate(samples, start, end, n_non_missing)
                        _rotate(values, start, end, n_non_missing)
                    if code == ABSOLUTE_ERROR:
                        crit.reset(code, c, y, sample_weight, samples)
                    if code == SQUARED_ERROR and y.shape[1] == 1:
                        proxy, p_prev, p = _scan_squared_error(
                            sum_total, sum_left, sum_right, stats, y, sample_weight, samples,
                            values, start, end, n_missing, missing_go_to_left, min_samples_leaf,
                            min_weight_leaf, best_proxy)
                    else:
                        proxy, p_prev, p = _scan_positions(
                            code, n_classes, sum_total, sum_left, sum_right, stats,
                            left_abs_errors, right_abs_errors, y, sample_weight, samples, values,
                            start, end, n_missing, missing_go_to_left, min_samples_leaf,
                            min_weight_leaf, best_proxy)
                    if p < 0:
                        continue
                    best_proxy = proxy
                    best[0] = p
                    best[1] = feature
                    if p == end_non_missing and not missing_go_to_left:
                        # Missing rows alone on the right: NaN <= inf is false.
                        best[2] = np.inf
                    else:
                        best[2] = np.float64(values[p_prev]) / 2.0 + np.float64(values[p]) / 2.0
                    n_left = p - start
                    n_right = end - p
                    if n_missing == 0:
                        best[6] = 1.0 if n_left > n_right else 0.0
                    else:
                        best[6] = 1.0 if missing_go_to_left else 0.0
            else:
                # scikit-learn re-partitions at the end unless the last drawn feature is the best.
                last_feature = feature
                column = X_columns[feature]
                n_missing = 0
                seen = False
                min_value = np.float32(np.inf)
                max_value = np.float32(-np.inf)
                for p in range(start, end):
                    value = column[samples[p]]
                    values[p] = value
                    if np.isnan(value):
                        n_missing += 1
                    elif not seen:
                        min_value = value
                        max_value = value
                        seen = True
                    elif value < min_value:
                        min_value = value
                    elif value > max_value:
                        max_value = value
                if end - start == n_missing or (
                        max_value <= min_value + FEATURE_THRESHOLD and n_missing == 0):
                    features[f_j], features[n_total_constants] = (features[n_total_constants],
                                                                  feature)
                    n_found_constants += 1
                    n_total_constants += 1
                    continue
                f_i -= 1
                features[f_i], features[f_j] = features[f_j], features[f_i]
                threshold = rand_uniform(np.float64(min_value), np.float64(max_value), rng)
                missing_go_to_left = False
                if n_missing != 0:
                    missing_go_to_left = rand_int(0, 2, rng) != 0
                if threshold == max_value:
                    threshold = np.float64(min_value)
                pos = _partition_values(values, samples, start, end, threshold, missing_go_to_left)
                n_left = pos - start
                n_right = end - pos
                if n_left < min_samples_leaf or n_right < min_samples_leaf:
                    continue
                crit.reset(code, c, y, sample_weight, samples)
                crit.update(code, c, y, sample_weight, samples, pos)
                if (c.stats[crit.W_LEFT] < min_weight_leaf
                        or c.stats[crit.W_RIGHT] < min_weight_leaf):
                    continue
                proxy = crit.proxy_improvement(code, c, y, sample_weight, samples)
                if proxy > best_proxy:
                    best_proxy = proxy
                    best[0] = pos
                    best[1] = feature
                    best[2] = threshold
                    if n_missing != 0:
                        best[6] = 1.0 if missing_go_to_left else 0.0
                    else:
                        best[6] = 1.0 if n_left > n_right else 0.0

        best_pos = int(best[0])
        if best_pos < end:
            best_feature = int(best[1])
            if random_splitter is None or last_feature != best_feature:
                _partition_final(X_columns, samples, start, end, best_feature, best[2],
                                 best[6] != 0)
            crit.reset(code, c, y, sample_weight, samples)
            crit.update(code, c, y, sample_weight, samples, best_pos)
            impurity_left, impurity_right = crit.children_impurity(code, c, y, sample_weight,
                                                                   samples)
            best[3] = impurity_left
            best[4] = impurity_right
            best[5] = crit.impurity_improvement(c, impurity, impurity_left, impurity_right)

        # Keep the order of known constants for siblings and children, then record the new ones.
        for j in range(n_known_constants):
            features[j] = constant_features[j]
        for j in range(n_known_constants, n_total_constants):
            constant_features[j] = features[j]
        return n_total_constants

    return split


_SPLIT_GINI = _for_criterion(GINI)
_SPLIT_ENTROPY = _for_criterion(ENTROPY)
_SPLIT_SQUARED_ERROR = _for_criterion(SQUARED_ERROR)
_SPLIT_ABSOLUTE_ERROR = _for_criterion(ABSOLUTE_ERROR)
_SPLIT_POISSON = _for_criterion(POISSON)


@inline_kernel
def split_node(code, X_columns, y, sample_weight, samples, values, features,
               constant_features, has_missing, tie_rate, sort_workspace, c, rng, start, end,
               impurity, n_known_constants, max_features, min_samples_leaf, min_weight_leaf,
               random_splitter, huge, best):
    """The split search through the split kernel of the criterion ``code``. The tree
    builders call it with a constant ``code``, so only that kernel compiles. (It is a
    leaf kernel of its own, not inlined into the builder: the builders count references
    and the split search must not.)"""
    if code == GINI:
        split = _SPLIT_GINI
    elif code == ENTROPY:
        split = _SPLIT_ENTROPY
    elif code == SQUARED_ERROR:
        split = _SPLIT_SQUARED_ERROR
    elif code == ABSOLUTE_ERROR:
        split = _SPLIT_ABSOLUTE_ERROR
    else:
        split = _SPLIT_POISSON
    return split(X_columns, y, sample_weight, samples, values, features, constant_features,
                 has_missing, tie_rate, sort_workspace, c, rng, start, end, impurity,
                 n_known_constants, max_features, min_samples_leaf, min_weight_leaf,
                 random_splitter, huge, best)
