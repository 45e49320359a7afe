"""Naive references for the boosted permutation kernels (``_kernels/_boosted_permutation``,
``_kernels/_boosted_masks``): random packed trees, data tied with their thresholds, and
every permuted row's sum by walking each tree with the slot's feature replaced."""

import numpy as np

from sapwood._kernels._traverse import LEAF, OP_CAT, OP_LE, OP_LT, goes_left


def random_trees(rng, n_trees, n_features, max_depth, categorical, specials):
    """Packed arrays of ``n_trees`` random trees (pre-order ids, global), their
    thresholds, operators, category sets and roots. ``categorical``: True makes a fifth
    of the splits (on any feature) categorical; a set of features makes exactly the
    splits on those categorical."""
    by_feature = not isinstance(categorical, bool)
    left, right, feature, threshold, missing_left, operator = [], [], [], [], [], []
    bitsets = []
    roots = []

    def grow(depth):
        node = len(left)
        for column in (left, right, feature, threshold, missing_left, operator):
            column.append(0)
        if depth == max_depth or rng.random() < 0.2:
            left[node] = right[node] = LEAF
            feature[node] = -2
            threshold[node] = -2.0
            return node
        feature[node] = rng.integers(n_features)
        missing_left[node] = rng.integers(2)
        kind = rng.random()
        if (feature[node] in categorical) if by_feature else (categorical and kind < 0.2):
            operator[node] = OP_CAT
            words = rng.integers(0, 2**32, size=rng.integers(1, 3), dtype=np.uint32)
            threshold[node] = float(len(bitsets))
            bitsets.extend([len(words), *words])
        else:
            operator[node] = OP_LT if kind < 0.6 else OP_LE
            threshold[node] = float(np.round(rng.normal(), 1))
            if specials and rng.random() < 0.05:
                threshold[node] = float(rng.choice([np.inf, -np.inf]))
        left[node] = grow(depth + 1)
        right[node] = grow(depth + 1)
        return node

    for _ in range(n_trees):
        roots.append(grow(0))
    return (np.array(left, dtype=np.intp), np.array(right, dtype=np.intp),
            np.array(feature, dtype=np.intp), np.array(threshold),
            np.array(missing_left, dtype=np.uint8), np.array(operator, dtype=np.uint8),
            np.array(bitsets or [0], dtype=np.uint32), np.array(roots, dtype=np.intp))


def naive_permuted_sums(X, permuted, slot_feature, trees, node_value, start):
    left, right, feature, threshold, missing_left, operator, bitsets, roots = trees
    m, n_slots = permuted.shape
    out = np.empty((m, n_slots), dtype=node_value.dtype)
    for i in range(m):
        for s in range(n_slots):
            row = X[i].copy()
            row[slot_feature[s]] = permuted[i, s]
            total = start[0]
            for root in roots:
                node = root
                while left[node] != LEAF:
                    go_left = goes_left(row[feature[node]], threshold[node], operator[node],
                                        missing_left[node], bitsets)
                    node = left[node] if go_left else right[node]
                total = total + node_value[node]  # in the sum's dtype
            out[i, s] = total
    return out


def tied_data(rng, m, n_features, special):
    X = np.round(rng.normal(size=(m, n_features)), 1)  # ties with the thresholds
    if special:
        X[rng.random(X.shape) < 0.1] = np.nan
        X[rng.random(X.shape) < 0.03] = np.inf
        X[rng.random(X.shape) < 0.03] = -np.inf
    return X
