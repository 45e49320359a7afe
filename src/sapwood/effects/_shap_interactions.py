"""Interaction importance from TreeSHAP interaction values: mean |interaction| per pair."""

from __future__ import annotations

import itertools
from numbers import Integral, Real

import numpy as np
import pandas as pd

from .._sklearn_compat import Interval, validate_params
from ..adapters import is_pipeline
from ..importance import tree_shap
from ..importance._engine._result import mean_interval
from ._engine import Rows, read_model

__all__ = ["shap_interaction_importance"]

_CALLER = "shap_interaction_importance"


@validate_params(
    {
        "model": "no_validation",
        "X": ["array-like"],
        "confidence": [Interval(Real, 0, 1, closed="neither")],
        "n_jobs": [Integral, None],
    },
    prefer_skip_nested_validation=True,
)
def shap_interaction_importance(model, X, *, confidence=0.95, n_jobs=None):
    """How strongly each pair of features interacts in the model's raw output, from
    path-dependent TreeSHAP interaction values (Lundberg et al. 2020 [1]_).

    The interaction value ``Phi_i(j, k)`` of row ``i`` is the Shapley interaction index of
    the pair in the explanation of the row's raw output, split equally between
    ``(j, k)`` and ``(k, j)``; the pair's strength on the row is their sum, and its
    importance the mean over the rows::

        I_jk = mean_i |Phi_i(j, k) + Phi_i(k, j)|        (= 2 mean_i |Phi_i(j, k)|)

    (output columns, a multiclass model's, add their absolute values). The interval is
    the Student-t interval of that mean over the rows.

    It answers a different question from :func:`h_statistic`: ``I_jk`` is in the units of
    the output (a pair that interacts strongly but rarely, or on a feature of small
    effect, ranks low), local (each row's attribution, averaged), on the raw output
    (log-odds for a boosted classifier), and weighted by the training data's paths
    through the trees (cover); ``H2_jk`` is a share of the pair's joint partial
    dependence variance (unit-free: a pair of weak features that only interact scores
    near 1), global, on the response asked for, over the rows given. They agree on
    which pairs interact at all; they rank pairs differently when the features' scales
    differ.

    Definition: docs/measures.md, section 'Effects and interactions'.

    Parameters
    ----------
    model : tree model
        Any model :func:`sapwood.importance.tree_shap` explains.
    X : array-like or DataFrame of shape (n_samples, n_features)
        The rows explained.
    confidence : float in (0, 1), default=0.95
        The level of the intervals.
    n_jobs : int, default=None
        Threads for TreeSHAP (the values do not depend on it).

    Returns
    -------
    pandas.DataFrame
        One row per pair of features, strongest first: ``features`` (a tuple of names),
        ``mean_abs_interaction`` (``I_jk``), ``std`` (over the rows), ``low``, ``high``.

    References
    ----------
    .. [1] Lundberg, S. M., Erion, G., Chen, H., et al. (2020). From local explanations to
       global understanding with explainable AI for trees. Nature Machine Intelligence
       2, 56-67. doi:10.1038/s42256-019-0138-9
    """
    if is_pipeline(model):
        # In its input columns: tree_shap sums the derived columns' pairs per unit.
        result = tree_shap(model, X, interactions=True, n_jobs=n_jobs)
        names = result.feature_names
    else:
        ensemble = read_model(model, _CALLER)
        names = Rows(ensemble, X, _CALLER).names
        result = tree_shap(model, X, interactions=True, n_jobs=n_jobs)
    values = np.asarray(result.extra["interaction_values"])
    if values.ndim == 3:
        values = values[..., None]
    records = []
    for j, k in itertools.combinations(range(values.shape[1]), 2):
        strength = np.abs(values[:, j, k, :] + values[:, k, j, :]).sum(axis=1)
        records.append(((names[j], names[k]), strength))
    if not records:
        raise ValueError(f"{_CALLER}: the model has one feature; there is no pair")
    strengths = np.array([s for _, s in records])
    low, high = mean_interval(strengths, confidence)
    table = pd.DataFrame({"features": [f for f, _ in records],
                          "mean_abs_interaction": strengths.mean(axis=1),
                          "std": strengths.std(axis=1, ddof=1) if strengths.shape[1] > 1
                          else np.full(strengths.shape[0], np.nan),
                          "low": low, "high": high})
    return table.sort_values("mean_abs_interaction", ascending=False,
                             kind="stable").reset_index(drop=True)
