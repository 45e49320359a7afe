"""Mean decrease in impurity (MDI, "Gini importance") with its per-node trace.

Per tree (scikit-learn ``Tree.compute_feature_importances``; seed 000's
``dI = n_t/n (I_t - n_tl/n_t I_tl - n_tr/n_t I_tr)``)::

    imp_j = sum over split nodes i on j of (w_i I_i - w_L I_L - w_R I_R) / w_root

normalised to sum 1 when the total is positive. Ensembles combine per-tree vectors as
scikit-learn does (:func:`sapwood._impurity.combine_importances`, the rule sapwood's
learners use too): forests (``combine="mean"``) average the *normalised* vectors of
trees with more than one node; boosting (``combine="sum"``) averages the
*unnormalised* ones; both renormalise at the end.

Breiman, Friedman, Olshen, Stone (1984), *Classification and Regression Trees*;
Louppe et al. (2013), "Understanding variable importances in forests of randomized
trees", NeurIPS.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._impurity import (
    combine_importances,
    importance_draws,
    sum_by_feature,
    tree_impurity_decrease,
)
from .._impurity import node_decrease as _node_decrease
from ..adapters import as_ensemble
from ._engine._names import feature_names_of
from ._engine._pipelines import pipeline_view, regrouped
from ._engine._result import ImportanceResult, mean_interval

__all__ = ["mdi", "tree_impurity_decrease"]


def mdi(model, feature_names=None, *, transformed=False) -> ImportanceResult:
    """Mean decrease in impurity of any model in the tree format, with the node trace.

    Definition: docs/measures.md, section 'MDI (mean decrease in impurity)'.

    Parameters
    ----------
    model : fitted sapwood estimator, TreeEnsemble or TreeArrays
        Or a fitted scikit-learn ``Pipeline`` whose last step is a tree model: the
        result is then per input column of the pipeline, each the sum over the derived
        columns it makes (docs/measures.md, section 'Pipelines in their input columns').
    feature_names : list of str, optional
        Defaults to the model's feature names, else ``x0, x1, ...``.
    transformed : bool, default=False
        For a Pipeline: report the columns its last step reads (the derived columns)
        instead of its input columns.

    Returns
    -------
    ImportanceResult
        ``importances_mean`` equals scikit-learn's ``feature_importances_`` for the same
        trees; ``importances`` holds the trees' draws (n_features, trees with a split):
        the vectors the rule averages (a forest's normalised, boosting's unnormalised)
        divided by the total of their mean, so that their mean is the importance and
        the rank intervals order features as it does; ``importances_std`` is their
        standard deviation. ``trace`` has one row per split
        node: tree, node, feature, threshold, w (weighted samples), impurity, w_left,
        impurity_left, w_right, impurity_right, decrease (``w I - w_L I_L - w_R I_R``
        divided by the root weight, seed 000's dI) and contribution (its share of the
        final importance: contributions of a feature sum to its importance).

    Notes
    -----
    Per tree, ``imp_j = sum over splits i on j of (w_i I_i - w_L I_L - w_R I_R) /
    w_root``, normalised to sum 1; forests average the normalised vectors, boosting
    the unnormalised ones. MDI is computed on the training data and favours features
    with many split points (continuous or high-cardinality ones) [3]_; check it with
    :func:`permutation_importance`, or use the corrected :func:`air`
    (AIR) or :func:`ufi` (UFI).

    References
    ----------
    .. [1] L. Breiman, J. Friedman, R. Olshen, C. Stone, *Classification and
       Regression Trees*, Wadsworth, 1984. doi:10.1201/9781315139470
    .. [2] G. Louppe, L. Wehenkel, A. Sutera, P. Geurts, "Understanding variable
       importances in forests of randomized trees", NeurIPS 2013. arXiv:1310.5726
    .. [3] C. Strobl, A.-L. Boulesteix, A. Zeileis, T. Hothorn, "Bias in random forest
       variable importance measures", BMC Bioinformatics 8:25, 2007.
       doi:10.1186/1471-2105-8-25
    """
    view = pipeline_view(model, feature_names=None if transformed else feature_names)
    if view is not None:
        derived = feature_names if transformed and feature_names is not None \
            else view.derived_names
        result = mdi(view.final, feature_names=derived)
        return result if transformed else regrouped(result, view)
    ensemble = as_ensemble(model)
    _require_impurities(ensemble)
    names = feature_names_of(ensemble, feature_names)
    raw_per_tree, scales, used, scaled_decreases = [], [], [], []
    for tree in ensemble.trees:
        split, _, _, decrease = _node_decrease(tree)
        w_root = tree.weighted_n_node_samples[0]
        raw = sum_by_feature(tree.feature[split], decrease, tree.n_features) / w_root
        total = raw.sum()
        raw_per_tree.append(raw)
        # Trees with a single node take no part in scikit-learn's ensemble average.
        used.append(tree.node_count > 1)
        if ensemble.n_trees == 1:
            scale = 1.0 / total if total > 0 else 1.0
        elif ensemble.combine == "mean":
            scale = (1.0 / total if total > 0 else 0.0) if used[-1] else 0.0
        else:
            scale = 1.0 if used[-1] else 0.0
        scales.append(scale)
        scaled_decreases.append(decrease / w_root * scale)
    importances = combine_importances(raw_per_tree, used, ensemble.combine)
    n_used = max(sum(used) if ensemble.n_trees > 1 else 1, 1)
    # The total the trace's contributions are shares of, summed over every split node
    # at once as the whole trace's column was (the same numbers to the last bit).
    grand_total = np.nansum(np.concatenate(scaled_decreases) / n_used)  # pandas' sum
    draws = importance_draws(raw_per_tree, used, ensemble.combine)
    ci_low, ci_high = _forest_interval(ensemble, draws)
    return ImportanceResult(
        importances_mean=importances,
        importances_std=draws.std(axis=1),
        feature_names=names,
        method="mdi",
        params={"combine": ensemble.combine, "n_trees": ensemble.n_trees},
        importances=draws,
        ci_low=ci_low,
        ci_high=ci_high,
        trace=_NodeTrace(ensemble, names, scales, n_used, grand_total),
    )


class _NodeTrace:
    """MDI's per-node trace, built when it is read (a 100-tree forest grown on 150,000
    rows has 9.5 million split nodes: seconds of work and a gigabyte that most callers
    never look at), for all trees or the ones asked for."""

    def __init__(self, ensemble, names, scales, n_used, grand_total):
        self.ensemble, self.names = ensemble, np.asarray(names, dtype=object)
        self.scales, self.n_used, self.grand_total = scales, n_used, grand_total

    def __call__(self, trees=None) -> pd.DataFrame:
        trees = range(self.ensemble.n_trees) if trees is None else trees
        trace = pd.concat([self._tree_rows(t) for t in trees], ignore_index=True)
        unnormalised = trace["decrease"] * trace["_scale"] / self.n_used
        trace["contribution"] = (unnormalised / self.grand_total if self.grand_total > 0
                                 else 0.0)
        return trace.drop(columns="_scale")

    def _tree_rows(self, t):
        tree = self.ensemble.trees[t]
        split, left, right, decrease = _node_decrease(tree)
        w, impurity = tree.weighted_n_node_samples, tree.impurity
        return pd.DataFrame({
            "tree": t,
            "node": split,
            "feature": self.names[tree.feature[split]],
            "threshold": tree.threshold[split],
            "w": w[split],
            "impurity": impurity[split],
            "w_left": w[left],
            "impurity_left": impurity[left],
            "w_right": w[right],
            "impurity_right": impurity[right],
            "decrease": decrease / w[0],
            "_scale": self.scales[t],
        })


def _forest_interval(ensemble, draws):
    """A forest's MDI is the mean of its draws (its non-stump trees' normalised
    importances, renormalised): the 95% t interval of that mean. None for one tree and
    for boosting (whose trees are not draws of one quantity)."""
    if ensemble.combine != "mean" or draws.shape[1] < 2 or not draws.any():
        return None, None
    return mean_interval(draws)


def _require_impurities(ensemble):
    if not ensemble.kind.node_impurity:
        name = ensemble.kind.model or ensemble.kind.library
        if not any(tree.has_gain or tree.has_cover for tree in ensemble.trees):
            raise ValueError(f"MDI needs node impurities, which {name} models do not "
                             "record (nor split gains); use tree_shap or "
                             "permutation_importance")
        raise ValueError(
            f"MDI needs node impurities, which {name} models do not record; use "
            "sapwood.importance.native_importance(model, 'gain') for the library's own "
            "split-gain importance, or permutation_importance")


