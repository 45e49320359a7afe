"""Simultaneous sort of feature values and sample ids, in scikit-learn's exact order.

Split search only looks at positions between distinct values, but the order of tied
samples decides the order in which weights and targets are summed, and so the last
bits of every impurity. Introsort with median-of-three pivots and three-way
partitioning (Musser 1997, doi:10.1002/(SICI)1097-024X(199708)27:8<983::AID-SPE117>3.0.CO;2-#;
Bentley & McIlroy 1993) arranges ties exactly as scikit-learn's tree builder does.
The recursion on the left part is replaced by an explicit stack; segments are
disjoint, so the processing order does not change the result.
"""

import numpy as np

from ._arrays import empty
from ._numba import allocating_kernel, leaf_kernel


@leaf_kernel
def _swap(values, indices, i, j):
    values[i], values[j] = values[j], values[i]
    indices[i], indices[j] = indices[j], indices[i]


@leaf_kernel
def _median3(values, lo, n):
    a = values[lo]
    b = values[lo + n // 2]
    c = values[lo + n - 1]
    if a < b:
        if b < c:
            return b
        elif a < c:
            return c
        return a
    elif b < c:
        if a < c:
            return a
        return c
    return b


@leaf_kernel
def insertion_sort(values, indices, lo, n):
    for i in range(lo + 1, lo + n):
        value = values[i]
        index = indices[i]
        j = i
        while j > lo and values[j - 1] > value:
            values[j] = values[j - 1]
            indices[j] = indices[j - 1]
            j -= 1
        values[j] = value
        indices[j] = index


@leaf_kernel
def _sift_down(values, indices, lo, start, end):
    root = start
    while True:
        child = root * 2 + 1
        largest = root
        if child < end and values[lo + largest] < values[lo + child]:
            largest = child
        if child + 1 < end and values[lo + largest] < values[lo + child + 1]:
            largest = child + 1
        if largest == root:
            return
        _swap(values, indices, lo + root, lo + largest)
        root = largest


@leaf_kernel
def _heapsort(values, indices, lo, n):
    start = (n - 2) // 2
    while True:
        _sift_down(values, indices, lo, start, n)
        if start == 0:
            break
        start -= 1
    end = n - 1
    while end > 0:
        _swap(values, indices, lo, lo + end)
        _sift_down(values, indices, lo, 0, end)
        end -= 1


# Rows of an introsort stack of (lo, n, max_depth) segments still to sort: enough for
# any n < 2**63 (max_depth = 2 log2 n <= 126, at most 2 max_depth + 8 entries).
STACK_ROWS = 264


@allocating_kernel
def sort_segment(values, indices, lo, n):
    """Sort ``values[lo:lo+n]`` ascending, moving ``indices`` along."""
    if n <= 15:
        # Small segments (most nodes of a deep tree) skip the stack allocation below.
        insertion_sort(values, indices, lo, n)
        return
    sort_segment_in(values, indices, lo, n, empty((STACK_ROWS, 3), np.intp))


@leaf_kernel
def sort_segment_in(values, indices, lo, n, stack):
    """:func:`sort_segment` with a caller's stack, (STACK_ROWS, 3) intp."""
    if n <= 15:
        insertion_sort(values, indices, lo, n)
        return
    max_depth = 2 * int(np.log2(n))
    top = 0
    stack[0, 0] = lo
    stack[0, 1] = n
    stack[0, 2] = max_depth
    top = 1
    while top > 0:
        top -= 1
        seg_lo = stack[top, 0]
        seg_n = stack[top, 1]
        depth = stack[top, 2]
        heapsorted = False
        while seg_n > 15:
            if depth <= 0:
                _heapsort(values, indices, seg_lo, seg_n)
                heapsorted = True
                break
            depth -= 1
            pivot = _median3(values, seg_lo, seg_n)
            i = 0
            left = 0
            right = seg_n
            while i < right:
                v = values[seg_lo + i]
                if v < pivot:
                    _swap(values, indices, seg_lo + i, seg_lo + left)
                    i += 1
                    left += 1
                elif v > pivot:
                    right -= 1
                    _swap(values, indices, seg_lo + i, seg_lo + right)
                else:
                    i += 1
            if left > 1:
                stack[top, 0] = seg_lo
                stack[top, 1] = left
                stack[top, 2] = depth
                top += 1
            seg_lo += right
            seg_n -= right
        if not heapsorted:
            insertion_sort(values, indices, seg_lo, seg_n)


# -- segments without ties: any correct sort gives scikit-learn's order --------------------

RADIX_MIN = 256  # below this, introsort is as fast
_RADIX_BITS = 11
RADIX_SIZE = 1 << _RADIX_BITS
_SIGN = 0x80000000
_ALL = 0xFFFFFFFF


@allocating_kernel
def radix_sort_segment(values, indices, lo, n, keys, keys_spare, indices_spare):
    """Sort ``values[lo:lo+n]`` (float32, no NaN) ascending with ``indices`` (see
    :func:`radix_sort_segment_in`)."""
    radix_sort_segment_in(values, indices, lo, n, keys, keys_spare, indices_spare,
                          empty((3, RADIX_SIZE), np.intp))


@leaf_kernel
def radix_sort_segment_in(values, indices, lo, n, keys, keys_spare, indices_spare, counts):
    """Sort ``values[lo:lo+n]`` (float32, no NaN) ascending with ``indices``, by a least
    significant digit radix sort on order-preserving integer keys (3 passes of 11 bits).

    Stable, so on tie-free data it gives the same permutation as :func:`sort_segment`.
    ``keys``, ``keys_spare`` (uint32) and ``indices_spare`` (intp) are workspaces of at
    least ``n`` entries; ``counts`` one of (3, RADIX_SIZE) intp.
    """
    bits = values[lo:lo + n].view(np.uint32)
    counts[:, :] = 0
    for i in range(n):
        b = np.int64(bits[i])
        key = (b ^ _ALL) if b >= _SIGN else (b | _SIGN)
        keys[i] = key
        counts[0, key & (RADIX_SIZE - 1)] += 1
        counts[1, (key >> _RADIX_BITS) & (RADIX_SIZE - 1)] += 1
        counts[2, key >> (2 * _RADIX_BITS)] += 1
    for d in range(3):
        total = 0
        for j in range(RADIX_SIZE):
            c = counts[d, j]
            counts[d, j] = total
            total += c
    segment = indices[lo:lo + n]
    # pass 0: (keys, segment) -> (spare); pass 1: back; pass 2: -> spare
    for d in range(3):
        shift = d * _RADIX_BITS
        if d % 2 == 0:
            src_keys, src_idx, dst_keys, dst_idx = keys, segment, keys_spare, indices_spare
        else:
            src_keys, src_idx, dst_keys, dst_idx = keys_spare, indices_spare, keys, segment
        for i in range(n):
            key = np.int64(src_keys[i])
            digit = (key >> shift) & (RADIX_SIZE - 1)
            position = counts[d, digit]
            counts[d, digit] = position + 1
            dst_keys[position] = key
            dst_idx[position] = src_idx[i]
    for i in range(n):
        key = np.int64(keys_spare[i])
        bits[i] = (key ^ _SIGN) if key >= _SIGN else (key ^ _ALL)
        segment[i] = indices_spare[i]


# -- introsort on packed records: scikit-learn's permutation, faster ------------------------
#
# Each record is one uint64: the value's order-preserving 32-bit key in the high half and
# the sample id in the low half. The algorithm is the one of :func:`sort_segment`, step
# for step, comparing high halves only (so ties stay ties and are moved exactly as
# introsort moves them); a swap moves one 8-byte word instead of a float32 and an intp.
# -0.0 gets the key of 0.0 (they compare equal as floats). No key reaches 0xFFFFFFFF
# (NaN is never sorted), so ``(key + 1) << 32`` does not overflow.

PACKED_MAX_ROWS = 1 << 32  # sample ids must fit the low half
_HALF = np.uint64(32)
_LOW = np.uint64(0xFFFFFFFF)
_ONE = np.uint64(1)


@leaf_kernel
def _key_high(record):
    return record >> _HALF


@leaf_kernel
def _insertion_sort_packed(records, lo, n):
    for i in range(lo + 1, lo + n):
        record = records[i]
        bound = (_key_high(record) + _ONE) << _HALF  # records above it compare greater
        j = i
        while j > lo and records[j - 1] >= bound:
            records[j] = records[j - 1]
            j -= 1
        records[j] = record


@leaf_kernel
def _sift_down_packed(records, lo, start, end):
    root = start
    while True:
        child = root * 2 + 1
        largest = root
        if child < end and _key_high(records[lo + largest]) < _key_high(records[lo + child]):
            largest = child
        if (child + 1 < end
                and _key_high(records[lo + largest]) < _key_high(records[lo + child + 1])):
            largest = child + 1
        if largest == root:
            return
        records[lo + root], records[lo + largest] = records[lo + largest], records[lo + root]
        root = largest


@leaf_kernel
def _heapsort_packed(records, lo, n):
    start = (n - 2) // 2
    while True:
        _sift_down_packed(records, lo, start, n)
        if start == 0:
            break
        start -= 1
    end = n - 1
    while end > 0:
        records[lo], records[lo + end] = records[lo + end], records[lo]
        _sift_down_packed(records, lo, 0, end)
        end -= 1


@leaf_kernel
def _median3_packed(records, lo, n):
    a = _key_high(records[lo])
    b = _key_high(records[lo + n // 2])
    c = _key_high(records[lo + n - 1])
    if a < b:
        if b < c:
            return b
        elif a < c:
            return c
        return a
    elif b < c:
        if a < c:
            return a
        return c
    return b


@allocating_kernel
def introsort_packed(records, lo, n):
    """:func:`sort_segment`'s algorithm on packed records ``records[lo:lo+n]``."""
    if n <= 15:
        _insertion_sort_packed(records, lo, n)
        return
    introsort_packed_in(records, lo, n, empty((STACK_ROWS, 3), np.intp))


@leaf_kernel
def introsort_packed_in(records, lo, n, stack):
    """:func:`introsort_packed` with a caller's stack, (STACK_ROWS, 3) intp."""
    if n <= 15:
        _insertion_sort_packed(records, lo, n)
        return
    max_depth = 2 * int(np.log2(n))
    stack[0, 0] = lo
    stack[0, 1] = n
    stack[0, 2] = max_depth
    top = 1
    while top > 0:
        top -= 1
        seg_lo = stack[top, 0]
        seg_n = stack[top, 1]
        depth = stack[top, 2]
        heapsorted = False
        while seg_n > 15:
            if depth <= 0:
                _heapsort_packed(records, seg_lo, seg_n)
                heapsorted = True
                break
            depth -= 1
            pivot = _median3_packed(records, seg_lo, seg_n)
            below = pivot << _HALF            # records < below: value < pivot
            above = (pivot + _ONE) << _HALF   # records >= above: value > pivot
            i = seg_lo
            left = seg_lo
            right = seg_lo + seg_n
            while i < right:
                record = records[i]
                if record < below:
                    records[i] = records[left]
                    records[left] = record
                    i += 1
                    left += 1
                elif record >= above:
                    right -= 1
                    records[i] = records[right]
                    records[right] = record
                else:
                    i += 1
            if left - seg_lo > 1:
                stack[top, 0] = seg_lo
                stack[top, 1] = left - seg_lo
                stack[top, 2] = depth
                top += 1
            seg_n -= right - seg_lo
            seg_lo = right
        if not heapsorted:
            _insertion_sort_packed(records, seg_lo, seg_n)


@allocating_kernel
def sort_segment_packed(column, values, indices, lo, n, records):
    """Same result as ``sort_segment(values, indices, lo, n)`` when ``values[lo+i] ==
    column[indices[lo+i]]`` (no NaN, ids < 2**32); ``records`` is a uint64 workspace of
    at least ``n`` entries. Sorted values are read back from ``column`` (keeps -0.0)."""
    sort_segment_packed_in(column, values, indices, lo, n, records,
                           empty((STACK_ROWS, 3), np.intp))


@leaf_kernel
def sort_segment_packed_in(column, values, indices, lo, n, records, stack):
    """:func:`sort_segment_packed` with a caller's stack, (STACK_ROWS, 3) intp."""
    bits = values[lo:lo + n].view(np.uint32)
    for i in range(n):
        b = np.uint64(bits[i])
        if values[lo + i] == 0.0:
            b = np.uint64(0)
        key = (b ^ _LOW) if b >= np.uint64(_SIGN) else (b | np.uint64(_SIGN))
        records[i] = (key << _HALF) | np.uint64(indices[lo + i])
    introsort_packed_in(records, 0, n, stack)
    for i in range(n):
        sample = np.intp(records[i] & _LOW)
        indices[lo + i] = sample
        values[lo + i] = column[sample]


# -- introsort's order of tied values only: skip the subsegments that hold no tie ----------
#
# A three-way partition never splits a run of equal values, and after it each part holds
# exactly the values whose sorted positions it covers. So every subsegment introsort
# works on is the set of values of a range of sorted positions, and whether it holds a
# tie can be read off any correct sort of the segment. A subsegment without a tie has a
# unique sorted order (any sort gives it) and sorting it moves nothing outside it, so
# introsort may skip it: the subsegments it still sorts are sorted exactly as before
# (same pivots, same moves, same depth budget), among them every one holding a tie, so
# tied values end in introsort's order; every other position takes the value of the
# correct sort. With t tied pairs in n values the partitions cost about (log2 t + 2) n
# instead of log2(n / 16) n and the final insertion sorts.


@leaf_kernel
def _holds_tie(tie_prefix, lo, n):
    # tie_prefix[i]: number of j in 1..i whose sorted value equals the one before
    if n <= 1:
        return False
    return tie_prefix[lo + n - 1] != tie_prefix[lo]


@leaf_kernel
def introsort_packed_ties_in(records, n, stack, tie_prefix):
    """:func:`introsort_packed_in` on ``records[0:n]``, sorting only the subsegments that
    hold a tie according to ``tie_prefix`` (see above); the other positions are left
    in an unspecified order."""
    if not _holds_tie(tie_prefix, 0, n):
        return
    if n <= 15:
        _insertion_sort_packed(records, 0, n)
        return
    max_depth = 2 * int(np.log2(n))
    stack[0, 0] = 0
    stack[0, 1] = n
    stack[0, 2] = max_depth
    top = 1
    while top > 0:
        top -= 1
        seg_lo = stack[top, 0]
        seg_n = stack[top, 1]
        depth = stack[top, 2]
        finished = False
        while seg_n > 15:
            if not _holds_tie(tie_prefix, seg_lo, seg_n):
                finished = True
                break
            if depth <= 0:
                _heapsort_packed(records, seg_lo, seg_n)
                finished = True
                break
            depth -= 1
            pivot = _median3_packed(records, seg_lo, seg_n)
            below = pivot << _HALF
            above = (pivot + _ONE) << _HALF
            i = seg_lo
            left = seg_lo
            right = seg_lo + seg_n
            while i < right:
                record = records[i]
                if record < below:
                    records[i] = records[left]
                    records[left] = record
                    i += 1
                    left += 1
                elif record >= above:
                    right -= 1
                    records[i] = records[right]
                    records[right] = record
                else:
                    i += 1
            if left - seg_lo > 1 and _holds_tie(tie_prefix, seg_lo, left - seg_lo):
                stack[top, 0] = seg_lo
                stack[top, 1] = left - seg_lo
                stack[top, 2] = depth
                top += 1
            seg_n -= right - seg_lo
            seg_lo = right
        if not finished and _holds_tie(tie_prefix, seg_lo, seg_n):
            _insertion_sort_packed(records, seg_lo, seg_n)


@leaf_kernel
def sort_ties_packed_in(column, values, indices, lo, n, original_values, original_indices,
                        records, stack, tie_prefix):
    """Give tied values introsort's order, the rest being sorted already.

    ``values[lo:lo+n]`` / ``indices[lo:lo+n]`` hold a correct sort of the segment whose
    order before sorting was ``original_values[:n]`` / ``original_indices[:n]`` (no NaN,
    ids < 2**32); afterwards they equal what :func:`sort_segment` gives on the original
    order. ``records`` (uint64) and ``tie_prefix`` (uint32) are workspaces of at least
    ``n`` entries, ``stack`` one of (STACK_ROWS, 3) intp. Returns the number of tied
    adjacent pairs (0: nothing was done).
    """
    if n == 0:
        return 0
    ties = 0
    tie_prefix[0] = 0
    for i in range(1, n):
        if values[lo + i] == values[lo + i - 1]:
            ties += 1
        tie_prefix[i] = ties
    if ties == 0:
        return 0
    original_bits = original_values.view(np.uint32)
    for i in range(n):
        b = np.uint64(original_bits[i])
        if original_values[i] == 0.0:
            b = np.uint64(0)
        key = (b ^ _LOW) if b >= np.uint64(_SIGN) else (b | np.uint64(_SIGN))
        records[i] = (key << _HALF) | np.uint64(original_indices[i])
    introsort_packed_ties_in(records, n, stack, tie_prefix)
    for i in range(n):
        if ((i > 0 and tie_prefix[i] != tie_prefix[i - 1])
                or (i + 1 < n and tie_prefix[i + 1] != tie_prefix[i])):
            sample = np.intp(records[i] & _LOW)
            indices[lo + i] = sample
            values[lo + i] = column[sample]
    return ties


@allocating_kernel
def sort_segment_radix_ties(column, values, indices, lo, n):
    """Same result as ``sort_segment(values, indices, lo, n)`` when ``values[lo+i] ==
    column[indices[lo+i]]`` (no NaN, ids < 2**32): radix sort, then introsort only where
    ties are (:func:`sort_ties_packed_in`). For tests; the tree builder passes its
    workspace."""
    original_values = values[lo:lo + n].copy()
    original_indices = indices[lo:lo + n].copy()
    m = max(n, 1)
    radix_sort_segment_in(values, indices, lo, n, empty(m, np.uint32),
                          empty(m, np.uint32), empty(m, np.intp),
                          empty((3, RADIX_SIZE), np.intp))
    sort_ties_packed_in(column, values, indices, lo, n, original_values, original_indices,
                        empty(m, np.uint64), empty((STACK_ROWS, 3), np.intp),
                        empty(m, np.uint32))
