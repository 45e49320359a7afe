"""Python side of tree growth: settle options, call the Numba builders, wrap the result."""

from __future__ import annotations

import functools

import numpy as np

from .._format import TreeArrays
from .._kernels import _criteria
from .._kernels._grow import BUILDERS
from .._kernels._prune import prune_tree
from .._kernels._sort import PACKED_MAX_ROWS

INT32_MAX = np.iinfo(np.int32).max


def grow_tree(X32, y, sample_weight, *, criterion, n_classes, splitter, max_features,
              min_samples_split, min_samples_leaf, min_weight_leaf, max_depth,
              max_leaf_nodes, min_impurity_decrease, ccp_alpha, seed, has_missing,
              tied_pairs=None, leaf_of=None):
    """Grow one tree on prepared inputs and return it as :class:`TreeArrays`.

    ``X32`` is float32 (n_samples, n_features); ``y`` float64 (n_samples, n_outputs) with
    classes encoded 0..K-1; ``sample_weight`` float64 (never None); ``seed`` the tree's
    XorShift seed (``RandomState.randint(0, 2**31 - 1)`` as scikit-learn draws it).
    ``has_missing`` and ``tied_pairs`` are per-feature facts about X (see
    :func:`column_facts`); ensembles compute them once for all their trees.
    ``leaf_of`` (intp, one entry per row), if given, receives the leaf of every row with
    nonzero weight (before pruning: callers pass it only with ``ccp_alpha == 0``).
    """
    X_columns = np.ascontiguousarray(X32.T)
    if tied_pairs is None:
        tied_pairs = count_tied_pairs(X_columns)
    y = np.ascontiguousarray(y, dtype=np.float64)
    sample_weight = np.ascontiguousarray(sample_weight, dtype=np.float64)
    code = _criteria.CRITERIA[criterion]
    # ties per row pair: radix sorting is tried where a segment is unlikely to hold a tie
    tie_rate = tied_pairs / float(max(X32.shape[0], 1)) ** 2
    if _counts_are_exact(code, sample_weight):
        tie_rate = np.zeros_like(tie_rate)
    criterion_state = _criteria.make_criterion(code, y.shape[1], n_classes, X32.shape[0],
                                               float(sample_weight.sum()))
    rng = np.array([seed], dtype=np.int64)
    if leaf_of is None:
        leaf_of = np.empty(0, dtype=np.intp)
    # More rows than the sorts' packed records hold ids for: True, else None (see
    # _kernels._split._sort_feature)
    huge = True if X32.shape[0] > PACKED_MAX_ROWS else None
    common = (X_columns, y, sample_weight, has_missing.astype(np.bool_), tie_rate,
              criterion_state, rng,
              int(max_features), int(min_samples_split), int(min_samples_leaf),
              float(min_weight_leaf), int(max_depth))
    if max_leaf_nodes is None:
        nodes = BUILDERS["depth_first", splitter, code](*common, float(min_impurity_decrease),
                                                        leaf_of, huge)
    else:
        nodes = BUILDERS["best_first", splitter, code](*common, int(max_leaf_nodes),
                                                       float(min_impurity_decrease), leaf_of, huge)
    if ccp_alpha > 0.0:
        nodes = prune_tree(*nodes, float(ccp_alpha))
    (left, right, feature, threshold, impurity, n_node_samples, w_node_samples, missing,
     value) = nodes
    return TreeArrays(
        children_left=left, children_right=right, feature=feature, threshold=threshold,
        impurity=impurity, n_node_samples=n_node_samples,
        weighted_n_node_samples=w_node_samples, value=value, missing_go_to_left=missing,
        operator=np.zeros(left.shape[0], dtype=np.uint8), n_features=X32.shape[1])


def _counts_are_exact(code, sample_weight):
    """True when the order of tied samples cannot change a bit of the tree.

    Gini and entropy see the data only through weighted class counts. With integer
    weights (unit weights, bootstrap counts) those sums are exact in any order, so every
    sum, impurity, proxy and split is the same whichever order a sort leaves tied values
    in, and the fast radix sort may be used for every feature.
    """
    if code not in (_criteria.GINI, _criteria.ENTROPY):
        return False
    return bool(sample_weight.sum() < 2.0**53
                and np.array_equal(sample_weight, np.floor(sample_weight)))


def column_facts(X32):
    """(has_missing, tied_pairs) per feature of float32 X: which columns hold NaN, and
    how many adjacent pairs of their sorted values are equal (0: radix sort is exact)."""
    X_columns = np.ascontiguousarray(X32.T)
    return np.isnan(X_columns).any(axis=1), count_tied_pairs(X_columns)


def count_tied_pairs(X_columns):
    """For each feature (a row of float32 ``X_columns``), how many adjacent pairs of its
    sorted non-missing values are equal: its number of values less its number of
    distinct values. Zero means the feature has no ties, so its sorted order is unique
    in any subset of rows and a radix sort yields exactly introsort's permutation.
    -0.0 and 0.0 count as a tie, as they do for the comparison sort; NaN (sorted last)
    equals nothing.

    numpy's sort, not a kernel: it is vectorised (faster than the radix kernel it
    replaced), and that kernel had to compile before every first fit could start."""
    counts = np.empty(X_columns.shape[0], dtype=np.intp)
    for f, column in enumerate(X_columns):
        ordered = np.sort(column)
        counts[f] = np.count_nonzero(ordered[1:] == ordered[:-1])
    return counts


def release_free_memory():
    """Give the memory the fit's temporary buffers freed back to the system.

    A fit allocates and frees many buffers of a few megabytes per tree (the grower's
    node arrays as they double, its sort workspace, the bootstrap counts), from every
    thread that grows trees. glibc's allocator keeps such freed memory in each thread's
    arena (after the first large frees it raises its mmap and trim thresholds up to 32
    and 64 MiB), so a fitted forest held a sizeable share of memory above its node
    arrays. ``malloc_trim(0)`` returns the free pages of every
    arena; the fitted arrays are not touched. A no-op where the C library has no
    ``malloc_trim`` (macOS, Windows, musl)."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim():
    import ctypes

    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError, TypeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim
