"""The model as both TreeSHAP variants read it: the path-dependent one
(:mod:`sapwood.importance._shap`) and the interventional one
(:mod:`sapwood.importance._engine._shap_interventional`) take the same arrays, the same rows
and the same walk of each tree (:func:`sapwood._kernels._shap.leaf_paths`)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from sklearn.utils import check_array

from ..._kernels._shap import leaf_paths

__all__ = ["ShapTrees", "explained_rows", "shap_trees", "tree_walks"]


class ShapTrees(NamedTuple):
    """The ensemble's nodes (global ids) as the SHAP kernels take them."""

    children_left: np.ndarray
    children_right: np.ndarray
    feature: np.ndarray
    threshold: np.ndarray
    operator: np.ndarray
    missing_go_to_left: np.ndarray
    cat_bitsets: np.ndarray
    values: np.ndarray  # each node's output, scaled as the trees combine
    roots: np.ndarray
    ends: np.ndarray  # tree t holds nodes roots[t] .. ends[t]
    tree_column: np.ndarray  # the first output column each tree adds to
    max_depth: int  # of the deepest tree
    n_columns: int  # output columns


def shap_trees(ensemble) -> ShapTrees:
    """The packed routing arrays of ``ensemble``, its node values scaled as the trees
    combine (a forest's mean: 1 / n_trees) and where each tree starts, ends and adds."""
    (children_left, children_right, feature, threshold, missing_go_to_left, operator,
     cat_bitsets, roots) = ensemble.packed()
    values, tree_column, _ = ensemble.node_outputs()
    if ensemble.combine == "mean":
        values = values / ensemble.n_trees
    n_columns = ensemble.base_score.shape[0] if ensemble.combine == "sum" else values.shape[1]
    return ShapTrees(children_left, children_right, feature, threshold, operator,
                     missing_go_to_left, cat_bitsets, values, roots,
                     np.append(roots[1:], children_left.shape[0]), tree_column,
                     max(tree.max_depth for tree in ensemble.trees), n_columns)


def tree_walks(trees: ShapTrees, cover=None) -> list:
    """Each tree's :func:`~sapwood._kernels._shap.leaf_paths`: its walk, the path
    features' bits, the leaves' path features and their zero fractions from ``cover``
    (each node's training weight), which only path-dependent TreeSHAP reads (without
    ``cover`` every fraction is 1)."""
    if cover is None:
        cover = np.ones(trees.children_left.shape[0])
    return [leaf_paths(root, end, trees.children_left, trees.children_right, trees.feature,
                       cover, trees.max_depth)
            for root, end in zip(trees.roots, trees.ends, strict=True)]


def explained_rows(X, ensemble, name):
    """``X`` as float64 rows, rounded through the model's input type first (the values
    the model itself compares)."""
    if np.shape(X)[:1] == (0,):
        raise ValueError(f"{name} has no rows; at least one is needed")
    rows = check_array(ensemble.encode(X), dtype=ensemble.input_dtype,
                       ensure_all_finite="allow-nan", input_name=name)
    if rows.shape[1] != ensemble.n_features:
        raise ValueError(f"{name} has {rows.shape[1]} features; the model was fit on "
                         f"{ensemble.n_features}")
    return np.ascontiguousarray(rows, dtype=np.float64)
