"""Friedman & Popescu's H-statistic, exactly by its definition on the rows given."""

from __future__ import annotations

import itertools
import warnings
from numbers import Integral, Real

import numpy as np
import pandas as pd
from sklearn.utils import check_random_state

from .._sklearn_compat import Interval, StrOptions, validate_params
from ..adapters import is_pipeline
from ._engine import (
    RESPONSE_METHODS,
    Rows,
    conversion_mismatch,
    grid_raw,
    read_model,
    resolve_features,
    respond,
    response_of,
)
from ._pipelines import pipeline_units

__all__ = ["h_statistic"]

_CALLER = "h_statistic"


@validate_params(
    {
        "model": "no_validation",
        "X": ["array-like"],
        "pairs": ["array-like", None],
        "features": ["array-like", None],
        "top": [Interval(Integral, 2, None, closed="left")],
        "response_method": [StrOptions(set(RESPONSE_METHODS))],
        "n_bootstrap": [Interval(Integral, 0, None, closed="left")],
        "confidence": [Interval(Real, 0, 1, closed="neither")],
        "random_state": ["random_state"],
        "n_jobs": [Integral, None],
    },
    prefer_skip_nested_validation=True,
)
def h_statistic(model, X, *, pairs=None, features=None, top=5, response_method="auto",
                n_bootstrap=0, confidence=0.95, random_state=None, n_jobs=None):
    """Friedman & Popescu's H-statistic: how much of the variation of the model's
    response is interaction, per pair of features and per feature (2008 [1]_, section 8).

    With the partial dependence functions evaluated at the rows' own values and centred
    to mean zero over the rows (``PD_S(x_i) = mean_l f(x_{i,S}, x_{l,-S})``), for a pair
    ``(j, k)`` and for a feature ``j`` against all the others::

        H2_jk = sum_i [PD_jk(x_ij, x_ik) - PD_j(x_ij) - PD_k(x_ik)]^2
                / sum_i PD_jk(x_ij, x_ik)^2
        H2_j  = sum_i [f(x_i) - PD_j(x_ij) - PD_-j(x_i,-j)]^2 / sum_i f(x_i)^2

    and ``H = sqrt(H2)``. ``H2_jk`` is the share of the variance of the pair's joint PD
    that is not the sum of the two one-way PDs (0: no interaction between them, as far
    as the data go; 1: the joint effect is all interaction); ``H2_j`` the share of the
    response's variance that involves ``j`` together with other features. A
    multi-column response (a multiclass classifier's probabilities) adds numerators
    and denominators over its columns. A pair whose joint PD is constant gets 0.

    Every PD is computed exactly on the rows given, with no sampling: ``n`` grid points
    (the rows' own values) times ``n`` rows per feature and per pair, each tree walked
    once with blocks of rows and grid points (as :func:`partial_dependence`'s brute
    method; a feature's single matrix gives both ``PD_j`` and ``PD_-j``). The cost grows
    as ``n^2``: a few hundred rows are the usual sample.

    Definition: docs/measures.md, section 'Effects and interactions'.

    Parameters
    ----------
    model : tree model
        Any model sapwood reads.
    X : array-like or DataFrame of shape (n_samples, n_features)
        The rows the statistics are computed on (a sample of the data).
    pairs : sequence of pairs of features (indices or names), default=None
        The pairs; by default every pair of the ``top`` features with the largest
        partial-dependence importance (the standard deviation of ``PD_j`` over the rows,
        Greenwell et al. 2018 [2]_) among ``features``.
    features : sequence of features, default=None
        The features whose overall statistic ``H2_j`` is computed (default: all).
    top : int, default=5
        How many features the default pairs come from.
    response_method : {"auto", "predict_proba", "decision_function", "predict"}
        As in :func:`partial_dependence` (a binary classifier: its positive class).
    n_bootstrap : int, default=0
        With ``B > 0``, percentile intervals from ``B`` bootstrap resamples of the rows
        (each statistic recomputed on the resample: the same matrices, reweighted).
    confidence : float in (0, 1), default=0.95
        The intervals' level.
    random_state : int, RandomState or None
        Seeds the bootstrap.
    n_jobs : int, default=None
        Threads for the trees' walks (the numbers do not change).

    Returns
    -------
    pandas.DataFrame
        One row per pair (``kind`` "pair", strongest first) then per feature (``kind``
        "overall", strongest first): ``features`` (a tuple of names), ``kind``, ``H2``,
        ``H`` and, with ``n_bootstrap``, ``H2_low``, ``H2_high``, ``H_low``, ``H_high``.

    References
    ----------
    .. [1] Friedman, J. H., Popescu, B. E. (2008). Predictive learning via rule
       ensembles. Annals of Applied Statistics 2(3), 916-954. doi:10.1214/07-AOAS148
    .. [2] Greenwell, B. M., Boehmke, B. C., McCarthy, A. J. (2018). A simple and
       effective model-based variable importance measure. arXiv:1805.04755
    """
    blocks = None  # a Pipeline's: each unit of its input columns' derived columns
    if is_pipeline(model):
        model, X, names, blocks = pipeline_units(model, X, _CALLER)
    ensemble = read_model(model, _CALLER)
    rows = Rows(ensemble, X, _CALLER)
    response = response_of(ensemble, model, response_method, _CALLER)
    n = rows.n_rows
    if n < 2:
        raise ValueError(f"{_CALLER}: X needs at least two rows; got {n}")
    if blocks is None:
        names, blocks = rows.names, [[j] for j in range(len(rows.names))]
    singles = (list(range(len(names))) if features is None
               else resolve_features(features, names, _CALLER))
    mismatch = conversion_mismatch(ensemble, model, rows, response)
    if mismatch is not None:
        warnings.warn(f"{_CALLER}: the model's tree-format conversion does not reproduce its "
                      f"{response} ({mismatch}); the statistics are the converted model's.",
                      stacklevel=2)
    weights = _weights(n, n_bootstrap, random_state)
    total = weights.sum(axis=1, keepdims=True)

    def matrix(features):
        columns = [c for j in features for c in blocks[j]]
        raw = grid_raw(ensemble, rows.values, columns, rows.values[:, columns], n_jobs)
        flat = respond(ensemble, raw.reshape(n * n, *raw.shape[2:]), response)
        return flat.reshape(n, n, -1)  # [grid point a, row b, column]

    def mean_over(M, axis):
        # (replicates, n, columns): each replicate's weighted mean over the other axis.
        spec = "abc,qb->qac" if axis == 1 else "abc,qa->qbc"
        return np.einsum(spec, M, weights) / total[:, :, None]

    one_way, rest = {}, {}
    for j in singles:
        M = matrix([j])
        one_way[j], rest[j] = mean_over(M, 1), mean_over(M, 0)
    if pairs is None:
        ranked = sorted(singles, key=lambda j: -_spread(one_way[j][0]))
        pair_list = list(itertools.combinations(sorted(ranked[:top]), 2))
    else:
        pair_list = _pairs(pairs, names)
    for j in {j for pair in pair_list for j in pair} - set(one_way):
        one_way[j] = mean_over(matrix([j]), 1)
    f = respond(ensemble, ensemble.raw_predict(rows.values, native=True), response)
    f = np.broadcast_to(f.reshape(n, -1), (weights.shape[0],) + f.reshape(n, -1).shape)
    records = []
    for j, k in pair_list:
        joint = mean_over(matrix([j, k]), 1)
        h2 = _ratio(weights, joint - one_way[j] - one_way[k], joint)
        records.append(((names[j], names[k]), "pair", h2))
    for j in singles:
        h2 = _ratio(weights, f - one_way[j] - rest[j], f)
        records.append(((names[j],), "overall", h2))
    return _table(records, n_bootstrap, confidence)


def _weights(n, n_bootstrap, random_state):
    """(1 + n_bootstrap, n): ones, then each bootstrap resample's row counts."""
    weights = np.ones((1 + n_bootstrap, n))
    rng = check_random_state(random_state)
    for q in range(1, 1 + n_bootstrap):
        weights[q] = np.bincount(rng.randint(0, n, size=n), minlength=n)
    return weights


def _centred(values, weights):
    """``values`` (replicates, n, columns) minus each replicate's weighted mean."""
    means = np.einsum("qnc,qn->qc", values, weights) / weights.sum(axis=1)[:, None]
    return values - means[:, None, :]


def _ratio(weights, difference, whole):
    """Per replicate ``sum w (centred difference)^2 / sum w (centred whole)^2`` (0 when
    the denominator is)."""
    numerator = np.einsum("qnc,qn->q", _centred(difference, weights) ** 2, weights)
    denominator = np.einsum("qnc,qn->q", _centred(whole, weights) ** 2, weights)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, numerator / np.where(denominator > 0, denominator,
                                                              1.0), 0.0)


def _spread(pd_values):
    """The partial-dependence importance: the standard deviation of PD_j over the rows
    (columns' variances added)."""
    return float(np.sqrt(pd_values.var(axis=0).sum()))


def _pairs(pairs, names):
    out = []
    for pair in pairs:
        if isinstance(pair, (str, Integral)) or len(pair) != 2:
            raise ValueError(f"{_CALLER}: pairs must hold pairs of features; got {pair!r}")
        out.append(tuple(resolve_features(list(pair), names, _CALLER, "pairs")))
    return out


def _table(records, n_bootstrap, confidence):
    rows = []
    for features, kind, h2 in records:
        row = {"features": features, "kind": kind, "H2": float(h2[0]),
               "H": float(np.sqrt(h2[0]))}
        if n_bootstrap:
            alpha = (1 - confidence) / 2
            low, high = np.quantile(h2[1:], [alpha, 1 - alpha])
            row.update(H2_low=float(low), H2_high=float(high), H_low=float(np.sqrt(low)),
                       H_high=float(np.sqrt(high)))
        rows.append(row)
    table = pd.DataFrame(rows)
    order = np.lexsort((-table["H2"].to_numpy(), (table["kind"] == "overall").to_numpy()))
    return table.iloc[order].reset_index(drop=True)
