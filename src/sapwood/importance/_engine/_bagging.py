"""What a bagged forest's measures share: each tree's bootstrap draws, randomForest's
summary over trees, and the per-row draws of an out-of-bag importance."""

from __future__ import annotations

import numpy as np

from ...adapters import as_ensemble

__all__ = ["bootstrap_of", "inbag_counter", "oob_row_draws", "randomforest_summary"]


def oob_row_draws(by_row, n_trees):
    """The rank intervals' per-row draws (n_features, n_samples) from every loss change
    counted at both rows it involves, each tree's weighted by 1 / (n_repeats |B_t|):
    ``D_ji = (n / N) by_row_ij - PI(j)``, whose mean over rows is PI(j) (every change
    counted twice, so PI(j) is half the mean of the first term). Their spread covers the
    rows, which the trees share; the spread over trees would not: see docs/measures.md,
    'Rank intervals'."""
    per_row = by_row.T * (by_row.shape[0] / n_trees)
    return per_row - per_row.mean(axis=1, keepdims=True) / 2


def randomforest_summary(per_tree):
    """(PI, SD, z) over the last axis of ``per_tree`` (the N trees), as randomForest:
    PI = mean, SD = sqrt((mean of squares - PI^2) / N) (0 if the radicand rounds
    below 0), z = PI / SD with SD taken as 1 when below machine epsilon."""
    per_tree = np.asarray(per_tree, dtype=np.float64)
    n_trees = per_tree.shape[-1]
    mean = per_tree.mean(axis=-1)
    variance = np.maximum((per_tree**2).mean(axis=-1) - mean**2, 0.0) / n_trees
    std = np.sqrt(variance)
    zscore = mean / np.where(std < np.finfo(np.float64).eps, 1.0, std)
    return mean, std, zscore


def inbag_counter(model):
    """``counts(t)``: how often each training row was drawn for tree t (see
    :func:`bootstrap_of`)."""
    return bootstrap_of(model)[1].counts


def bootstrap_of(model):
    """``(ensemble, bootstrap)``: the model in the tree format and its record of which
    rows each tree was grown on (:class:`sapwood._bootstrap.Bootstrap`).

    Raises ValueError naming what is missing when the model has no bagging record.
    """
    try:
        ensemble = as_ensemble(model)
    except TypeError:
        ensemble = None  # a model sapwood cannot read has no record it can read either
    if ensemble is not None and ensemble.bootstrap is not None:
        return ensemble, ensemble.bootstrap
    kind = None if ensemble is None else ensemble.kind
    name = (kind.model if kind is not None and kind.model else type(model).__name__)
    if kind is not None and kind.objective == "path_length":
        raise ValueError(f"{name} is an anomaly detector: its trees are grown on random "
                         "splits, not fitted to a target, so there is no out-of-bag "
                         "error to permute; use permutation_importance with a scorer "
                         "(e.g. scoring='roc_auc') or tree_shap")
    if kind is not None and kind.family == "forest" and kind.library in ("sapwood", "sklearn"):
        if not kind.bagged:
            raise ValueError(f"{name} was fit with bootstrap=False: every tree saw every "
                             "row, so there are no out-of-bag rows. Refit with "
                             "bootstrap=True.")
        raise ValueError(f"{name} does not record its bootstrap draws (per-tree integer "
                         "random_state, _n_samples, _n_samples_bootstrap and "
                         "_sample_weight): cannot regenerate its bootstrap rows (is it "
                         "fitted, with scikit-learn >= 1.4?)")
    raise ValueError(
        f"oob_permutation_importance needs a bagged forest whose in-bag rows it can "
        f"recover: a sapwood or scikit-learn RandomForest* / ExtraTrees* fitted with "
        f"bootstrap=True, or a model file saved from one; got {name}, which has "
        f"no bootstrap record sapwood can read.")
