"""Mean decrease in impurity (MDI) from a tree's node arrays: scikit-learn's rule.

Per tree (scikit-learn ``Tree.compute_feature_importances``)::

    imp_j = sum over split nodes i on j of (w_i I_i - w_L I_L - w_R I_R) / w_root

normalised to sum 1 when the total is positive. A model with several trees combines
them as scikit-learn's ensembles do (:func:`combine_importances`, the one place this
rule lives): forests average the *normalised* vectors of the trees with more than one
node, boosting the *unnormalised* ones, and the mean is renormalised.

This sits at the format layer: it reads only ``children_left``, ``children_right``,
``feature``, ``impurity`` and ``weighted_n_node_samples`` of a
:class:`~sapwood._format.TreeArrays`, which calls it for
``compute_feature_importances``; sapwood's learners call it for
``feature_importances_`` and :func:`sapwood.importance.mdi` adds the per-node trace.
"""

from __future__ import annotations

import numpy as np

from ._kernels._traverse import LEAF

__all__ = ["combine_importances", "node_decrease", "sum_by_feature",
           "tree_impurity_decrease", "tree_importances"]


def node_decrease(tree):
    """(split nodes, their left children, right children, ``w I - w_L I_L - w_R I_R``)."""
    split = np.flatnonzero(tree.children_left != LEAF)
    left, right = tree.children_left[split], tree.children_right[split]
    # The products first, for every node, then three gathers (not six): the same
    # products, so the same numbers.
    weighted = tree.weighted_n_node_samples * tree.impurity
    decrease = weighted[split] - weighted[left] - weighted[right]
    return split, left, right, decrease


def tree_impurity_decrease(tree) -> np.ndarray:
    """Sum of ``w_i I_i - w_L I_L - w_R I_R`` per feature, in node order (unscaled)."""
    split, _, _, decrease = node_decrease(tree)
    return sum_by_feature(tree.feature[split], decrease, tree.n_features)


def sum_by_feature(features, values, n_features: int) -> np.ndarray:
    """``totals[j] = sum of values[i] where features[i] == j``, added one by one in
    order: scikit-learn's summation order, so the numbers match it bit for bit.
    ``np.bincount`` adds its weights sequentially in C (a Python loop took seconds on a
    forest of millions of split nodes)."""
    return np.bincount(features, weights=values, minlength=n_features).astype(np.float64)


def tree_importances(tree, normalize: bool = True) -> np.ndarray:
    """One tree's MDI: the decreases over the root weight, normalised to sum 1 when
    ``normalize`` and the total is positive."""
    importances = tree_impurity_decrease(tree) / tree.weighted_n_node_samples[0]
    if normalize:
        total = importances.sum()
        if total > 0.0:
            importances /= total
    return importances


def combine_importances(per_tree, used, combine: str) -> np.ndarray:
    """A model's MDI from its trees' vectors, by scikit-learn's rule.

    Parameters
    ----------
    per_tree : sequence of ndarray (n_features,)
        Each tree's unnormalised MDI (:func:`tree_importances` with ``normalize=False``).
    used : sequence of bool
        Whether each tree has more than one node (single-node trees take no part).
    combine : {"mean", "sum"}
        The ensemble's ``combine``: forests average the normalised vectors, boosting
        the unnormalised ones.

    Returns
    -------
    ndarray (n_features,)
        One tree: its normalised vector (``DecisionTree*.feature_importances_``).
        Several: the mean over the used trees, divided by its total when that is
        positive; zeros when no tree splits.
    """
    if len(per_tree) == 1:
        return _normalise(per_tree[0])
    vectors = [vector for vector, keep in zip(per_tree, used, strict=True) if keep]
    if combine == "mean":
        vectors = [_normalise(vector) for vector in vectors]
    if not vectors:
        return np.zeros(len(per_tree[0]))
    mean = np.mean(vectors, axis=0, dtype=np.float64)
    total = mean.sum()
    return mean / total if total > 0 else mean


def _normalise(vector):
    total = vector.sum()
    return vector / total if total > 0 else vector.copy()


def importance_draws(per_tree, used, combine: str) -> np.ndarray:
    """The trees' shares of :func:`combine_importances`, shape (n_features, n_draws),
    scaled so that their mean is the combined importance: the vectors it averages
    (normalised for forests, unnormalised for boosting; used trees only) divided by the
    total of their mean. Intervals and rank intervals come from these draws, so they
    order the features as the importance does. One tree: its normalised vector."""
    if len(per_tree) == 1:
        return _normalise(per_tree[0])[:, None]
    vectors = [vector for vector, keep in zip(per_tree, used, strict=True) if keep]
    if combine == "mean":
        vectors = [_normalise(vector) for vector in vectors]
    if not vectors:
        return np.zeros((len(per_tree[0]), 1))
    draws = np.column_stack(vectors).astype(np.float64)
    total = draws.mean(axis=1).sum()
    return draws / total if total > 0 else draws
