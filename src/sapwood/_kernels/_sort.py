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

from ._numba import kernel


@kernel
def _swap(values, indices, i, j):
    values[i], values[j] = values[j], values[i]
    indices[i], indices[j] = indices[j], indices[i]


@kernel
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


@kernel
def _insertion_sort(values, indices, lo, n):
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


@kernel
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


@kernel
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


@kernel
def sort_segment(values, indices, lo, n):
    """Sort ``values[lo:lo+n]`` ascending, moving ``indices`` along."""
    if n <= 0:
        return
    max_depth = 2 * int(np.log2(n))
    # Explicit stack of (lo, n, max_depth) segments still to sort.
    stack = np.empty((2 * max_depth + 8, 3), dtype=np.intp)
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
            _insertion_sort(values, indices, seg_lo, seg_n)
