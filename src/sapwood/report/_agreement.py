"""How far the measures agree: rank tables, rank correlations over the features that
matter, discordant pairs beyond uncertainty, top-k overlap."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from ._intervals import verdict_interval
from ._measures import MEASURES

__all__ = ["agreement", "centred", "default_top_k", "rank_table", "significantly_above",
           "top_features"]

MAX_DEFAULT_TOP_K = 5


def default_top_k(n_features: int) -> int:
    """5, or one less than the number of features (the top n of n always overlap)."""
    return max(1, min(MAX_DEFAULT_TOP_K, n_features - 1))


def rank_table(results: dict, truth: dict | None = None) -> pd.DataFrame:
    """One row per feature: its rank under each measure (1 = most important), ordered
    by the first measure's rank."""
    first = next(iter(results.values()))
    table = pd.DataFrame({"feature": first.feature_names})
    if truth is not None:
        table["truth"] = [truth.get(name, "") for name in first.feature_names]
    for name, result in results.items():
        table[name] = result.ranks()
    return table.sort_values([next(iter(results)), "feature"], kind="stable"
                             ).reset_index(drop=True)


def top_features(result, k: int) -> list:
    """The k most important features (ties broken by name, as the tables order them)."""
    return result.to_frame()["feature"].head(k).tolist()


def agreement(results: dict, k: int) -> list:
    """Every pair of measures: how far they agree, over the features that matter.

    The features compared are those distinguishable from zero on new rows by either
    measure of the pair whose importance is zero for an unused feature
    (permutation-type measures, drop, AIR): their 95% interval over new rows, the
    verdict's (:func:`~._intervals.verdict_interval`), lies above zero. A measure
    without such an interval (its ``ci_low`` covers the shuffles or the trees only)
    selects nothing; when neither measure selects, all features. ``compared_over``
    says in words which features were compared and what the interval covers. Over
    them: Spearman's rho and Kendall's tau-b (scipy.stats; None for fewer than two
    features or a constant measure), and the *discordant* pairs: features a, b that
    one measure puts significantly above the other (:func:`significantly_above`: the
    simultaneous pairwise tests of the rank intervals; without draws, a training-data
    measure orders by its exact values and any other measure orders nothing, as does a
    measure of other rows without an interval over new rows) while the other measure
    puts b significantly above a. Pairs
    whose order either measure cannot tell apart are ties, not disagreement. A pair of
    measures agrees when none of its feature pairs is discordant. The top-k overlap is
    over all features, as before."""
    names = list(results)
    rows = []
    for i, first in enumerate(names):
        for second in names[i + 1:]:
            a, b = results[first], results[second]
            compared, compared_over = _compared(a, b, first, second)
            rho, tau = _correlations(a.importances_mean[compared],
                                     b.importances_mean[compared])
            discordant = _discordant(a, b, first, second, compared)
            top_a = top_features(a, k)
            top_b = top_features(b, k)
            rows.append({"measure_a": first, "measure_b": second,
                         "features": [a.feature_names[j] for j in compared],
                         "compared_over": compared_over,
                         "spearman": rho, "kendall": tau,
                         "n_discordant": len(discordant), "discordant": discordant,
                         "agree": not discordant, "top_k": k,
                         "top_k_overlap": len([n for n in top_a if n in top_b]),
                         "only_a": [n for n in top_a if n not in top_b],
                         "only_b": [n for n in top_b if n not in top_a]})
    return rows


def centred(name: str) -> bool:
    """Whether measure ``name`` is zero, up to noise, for a feature the model does not
    use (so "above zero" means "used")."""
    return MEASURES[name].null != "uncentred"


def _compared(a, b, first: str, second: str) -> tuple:
    """The features the pair is compared over, and which they are in words."""
    keep = np.zeros(a.n_features, dtype=bool)
    judged = []
    for name, result in ((first, a), (second, b)):
        if not centred(name):
            continue
        interval = verdict_interval(name, result)
        # An interval over the shuffles alone lies above zero for test-set noise too.
        if interval.rows and np.isfinite(interval.low).any():
            keep |= np.nan_to_num(interval.low, nan=-np.inf) > 0
            judged.append(f"{name} (95% interval over {interval.covers})")
    if judged:
        over = "the features above zero by " + " or ".join(judged)
    else:
        keep[:] = True
        over = "all features (neither measure has a 95% interval over new rows)"
    finite = np.isfinite(a.importances_mean) & np.isfinite(b.importances_mean)
    return np.flatnonzero(keep & finite), over


def _correlations(a, b):
    from scipy import stats

    if len(a) < 2:
        return None, None
    with warnings.catch_warnings():
        # A constant input has no rank correlation: reported as None.
        warnings.simplefilter("ignore")
        return (_number(stats.spearmanr(a, b).statistic),
                _number(stats.kendalltau(a, b).statistic))


def significantly_above(result, name: str) -> np.ndarray:
    """j significantly above k: the rank intervals' tests where the measure has draws;
    without draws, a training-data measure's exact values (a single tree's MDI is a
    fixed property of the model) and, for any other measure (drop-column on one
    held-out set), nothing: its sampling error is unknown. So also for a measure of
    other rows that is zero for an unused feature but has no interval over new rows
    (:func:`centred`, :func:`~._intervals.verdict_interval`): its draws cover the
    shuffles or the trees only, and would call test-set noise an order."""
    mean = result.importances_mean
    none = np.zeros((len(mean), len(mean)), dtype=bool)
    train = MEASURES[name].rows == "train"
    if not train and centred(name) and not verdict_interval(name, result).rows:
        return none
    intervals = result.rank_intervals()
    if intervals is not None:
        return intervals.above
    return mean[:, None] > mean[None, :] if train else none


def _discordant(a, b, first, second, compared) -> list:
    above_a, above_b = significantly_above(a, first), significantly_above(b, second)
    found = []
    for x in compared:
        for y in compared:
            if above_a[x, y] and above_b[y, x]:
                found.append([a.feature_names[x], a.feature_names[y]])
    return found


def _number(value):
    value = float(value)
    return value if np.isfinite(value) else None
