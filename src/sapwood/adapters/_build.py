"""Shared helpers for adapters: building a :class:`TreeArrays` from foreign node lists."""

from __future__ import annotations

import numpy as np

from .._format import LEAF, OP_LT, UNDEFINED, FormatError, TreeArrays

__all__ = ["build_tree", "build_trees", "category_sets", "codes_to_words"]


def build_tree(left, right, feature, threshold, missing_go_to_left, operator, value, *,
               n_features, impurity=None, n_node_samples=None, weighted_n_node_samples=None,
               gain=None, cover=None, cat_bitsets=None) -> TreeArrays:
    """A validated :class:`TreeArrays` from node arrays rooted at node 0.

    Children are node ids with ``-1`` at leaves. Nodes the root cannot reach (XGBoost
    keeps pruned nodes in its arrays) are dropped and the rest renumbered in their
    original order. Leaf entries of ``feature`` / ``threshold`` are normalised to
    scikit-learn's ``-2`` and the split statistics ``gain`` / ``cover`` are zero at leaves.
    Malformed input (out-of-range children, cycles, shared nodes) raises FormatError.
    Categorical splits (``operator`` ``OP_CAT``) hold their set's offset into
    ``cat_bitsets`` as threshold (:func:`category_sets`).
    """
    left = np.asarray(left, dtype=np.int64)
    right = np.asarray(right, dtype=np.int64)
    n = left.shape[0]
    if n == 0 or right.shape != (n,):
        raise FormatError(f"a tree needs matching, non-empty child arrays; got {n} left and "
                          f"{right.shape[0]} right children")
    keep = _reachable(left, right)
    if not keep.all():
        new_id = np.cumsum(keep) - 1
        left = np.where(left[keep] == LEAF, LEAF, new_id[np.clip(left[keep], 0, n - 1)])
        right = np.where(right[keep] == LEAF, LEAF, new_id[np.clip(right[keep], 0, n - 1)])
    else:
        keep = slice(None)
    leaf = left == LEAF
    n_kept = left.shape[0]

    def pick(array, dtype, default):
        if array is None:
            return np.full(n_kept, default, dtype=dtype)
        array = np.asarray(array, dtype=dtype)
        if array.shape[:1] != (n,):
            raise FormatError(f"a node array has {array.shape[:1]} entries for {n} nodes")
        return array[keep]

    feature = np.where(leaf, UNDEFINED, pick(feature, np.int64, UNDEFINED))
    threshold = np.where(leaf, float(UNDEFINED), pick(threshold, np.float64, 0.0))
    stats = {}
    if gain is not None:
        stats["gain"] = np.where(leaf, 0.0, pick(gain, np.float64, 0.0))
    if cover is not None:
        stats["cover"] = pick(cover, np.float64, 0.0)
    return TreeArrays(
        children_left=left, children_right=right, feature=feature, threshold=threshold,
        impurity=pick(impurity, np.float64, 0.0),
        n_node_samples=pick(n_node_samples, np.int64, 0),
        weighted_n_node_samples=pick(weighted_n_node_samples, np.float64, 0.0),
        value=pick(value, np.float64, 0.0),
        missing_go_to_left=np.where(leaf, 0, pick(missing_go_to_left, np.int64, 0) != 0),
        operator=np.where(leaf, 0, pick(operator, np.uint8, 0)),
        n_features=n_features, cat_bitsets=cat_bitsets, **stats)


def build_trees(sizes, left, right, feature, threshold, missing_go_to_left, value, *,
                n_features, weighted_n_node_samples, gain, cover) -> list[TreeArrays]:
    """:func:`build_tree` of many trees at once, without categorical splits (operator
    ``OP_LT``): tree ``t`` has the next ``sizes[t]`` entries of every node array, its
    children numbered from 0 within it. The same trees as ``build_tree`` on each, in one
    NumPy pass over all their nodes instead of one per tree (several times faster on a
    model of hundreds of trees; the trees' own validation is most of what is left).
    Raises FormatError
    on any malformed tree without saying which; ``build_tree`` tree by tree names the
    problem.
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    n = int(sizes.sum())
    if not sizes.size or (sizes < 1).any() \
            or any(a.shape[0] != n for a in (left, right, feature, threshold,
                                                missing_go_to_left, value,
                                                weighted_n_node_samples, gain, cover)):
        raise FormatError("node arrays do not match the trees' sizes")
    starts = np.cumsum(sizes) - sizes
    own_size = np.repeat(sizes, sizes)
    leaf = left == LEAF
    # Both children or none, each inside its own tree; anything else is left to
    # build_tree, tree by tree.
    if (leaf != (right == LEAF)).any() or ((~leaf) & ((left < 0) | (left >= own_size)
                                                      | (right < 0) | (right >= own_size))).any():
        raise FormatError("a child is out of range or a node has one child")
    offset = np.repeat(starts, sizes)
    left_at = np.where(leaf, LEAF, left + offset)
    right_at = np.where(leaf, LEAF, right + offset)
    # Reachability from every root at once, level by level (as _reachable per tree).
    # A mask per level instead of np.unique: the same set of new nodes, no sort.
    seen = np.zeros(n, dtype=bool)
    seen[starts] = True
    frontier = starts
    reached = np.zeros(n, dtype=bool)
    while frontier.size:
        frontier = frontier[left_at[frontier] != LEAF]
        reached[:] = False
        reached[left_at[frontier]] = True
        reached[right_at[frontier]] = True
        reached &= ~seen
        frontier = np.flatnonzero(reached)
        seen |= reached
    if not seen.all():
        # Renumbered in their original order within each tree, as build_tree does.
        new_id = np.cumsum(seen) - 1
        tree_start = np.repeat(new_id[starts], sizes)[seen]
        leaf = leaf[seen]
        left = np.where(leaf, LEAF, new_id[np.clip(left_at[seen], 0, n - 1)] - tree_start)
        right = np.where(leaf, LEAF, new_id[np.clip(right_at[seen], 0, n - 1)] - tree_start)
        sizes = np.add.reduceat(seen, starts).astype(np.int64)
        feature, threshold, missing_go_to_left, value, weighted_n_node_samples, gain, \
            cover = (a[seen] for a in (feature, threshold, missing_go_to_left, value,
                                       weighted_n_node_samples, gain, cover))
    feature = np.where(leaf, UNDEFINED, feature)
    threshold = np.where(leaf, float(UNDEFINED), threshold)
    gain = np.where(leaf, 0.0, gain)
    missing_go_to_left = np.where(leaf, 0, missing_go_to_left != 0)
    operator = np.where(leaf, 0, OP_LT).astype(np.uint8)
    zeros, counts = np.zeros(leaf.shape[0]), np.zeros(leaf.shape[0], dtype=np.int64)
    ends = np.cumsum(sizes)
    return [TreeArrays(children_left=left[a:b], children_right=right[a:b],
                       feature=feature[a:b], threshold=threshold[a:b], impurity=zeros[a:b],
                       n_node_samples=counts[a:b],
                       weighted_n_node_samples=weighted_n_node_samples[a:b],
                       value=value[a:b], missing_go_to_left=missing_go_to_left[a:b],
                       operator=operator[a:b], n_features=n_features, gain=gain[a:b],
                       cover=cover[a:b])
            for a, b in zip((ends - sizes).tolist(), ends.tolist(), strict=True)]


def category_sets(words):
    """One tree's ``cat_bitsets`` and each set's offset in it, from each categorical
    split's bitset words (uint32, category ``c`` at bit ``c % 32`` of word ``c // 32``,
    LightGBM's and scikit-learn's layout): per set its word count, then its words."""
    offsets = []
    parts = []
    at = 0
    for bits in words:
        bits = np.asarray(bits, dtype=np.uint32).reshape(-1)
        # Trailing zero words hold no category: dropped, the set is the same.
        used = np.flatnonzero(bits)
        bits = bits[:used[-1] + 1] if used.size else bits[:0]
        offsets.append(float(at))
        parts.append(np.concatenate([[bits.shape[0]], bits]).astype(np.uint32))
        at += bits.shape[0] + 1
    bitsets = np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint32)
    return np.array(offsets, dtype=np.float64), bitsets


def codes_to_words(codes):
    """Bitset words (uint32) of a set of non-negative integer category codes."""
    codes = np.asarray(codes, dtype=np.int64).reshape(-1)
    if codes.size and codes.min() < 0:
        raise FormatError(f"a category set holds the negative code {int(codes.min())}")
    words = np.zeros(int(codes.max()) // 32 + 1 if codes.size else 0, dtype=np.uint32)
    np.bitwise_or.at(words, codes // 32, (np.uint32(1) << (codes % 32).astype(np.uint32)))
    return words


def _reachable(left, right):
    """Mask of the nodes reachable from node 0; out-of-range children raise FormatError."""
    n = left.shape[0]
    for name, children in (("left", left), ("right", right)):
        bad = (children != LEAF) & ((children < 0) | (children >= n))
        if bad.any():
            raise FormatError(f"node {int(np.argmax(bad))} has a {name} child out of range")
    seen = np.zeros(n, dtype=bool)
    seen[0] = True
    frontier = np.array([0])
    # Each pass only expands nodes seen for the first time, so a cycle cannot loop forever.
    while frontier.size:
        frontier = frontier[left[frontier] != LEAF]
        children = np.concatenate([left[frontier], right[frontier]])
        frontier = np.unique(children[~seen[children]])
        seen[frontier] = True
    return seen

