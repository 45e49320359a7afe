"""Correlated groups: features associated so strongly that their permutation-type
importances cannot be read one by one.

Association, on a scale from 0 (none) to 1 (one determines the other):

- numeric with numeric: |Spearman's rho|;
- categorical with categorical: Cramér's V with Bergsma's bias correction (Bergsma
  2013, "A bias-correction for Cramér's V and Tschuprow's T", *Journal of the Korean
  Statistical Society* 42(3), doi:10.1016/j.jkss.2012.10.002);
- categorical with numeric: the cross-validated correlation ratio: the square root of
  the out-of-fold R² of the numeric column's ranks predicted by their mean in each
  category (:data:`FOLDS` folds, fixed seed; a category absent from the other folds
  predicts their overall mean), 0 when that R² is negative. A raw eta² grows with the
  number of categories by chance (a 1,000-level category and a column with three
  non-zero values: eta 1.00); out of fold, a category must predict rows it was not
  fitted on.

A column takes part only when its association rests on enough rows: at least
:data:`MIN_SUPPORT` rows (of the rows measured) differ from its most common value. A
column with a handful of non-zero values associates perfectly with anything that
singles out those rows, and says nothing by it.

Text and category columns are categorical (as are the numeric code columns named in
``categorical``); booleans, dates and numbers written as text are numeric (see
``_columns``). Missing values: numeric pairs use the rows where both are present; a categorical
column's missing values are a category of their own. Categorical columns with more
than half as many levels as rows (keys) take no part: the identifier check covers
them. Above :data:`MAX_ROWS` rows the association is measured on a random sample of
that many rows (fixed seed). Groups are the connected components of the graph of pairs
with association at least :data:`ASSOCIATION_THRESHOLD`.

Definition: docs/measures.md, section 'Warnings'.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.sparse.csgraph import connected_components
from scipy.stats import chi2_contingency, rankdata

from .._text import quoted
from ._columns import categorical_columns, numeric_values
from ._finding import Finding

__all__ = ["ASSOCIATION_THRESHOLD", "association_matrix", "find_correlated"]

ASSOCIATION_THRESHOLD = 0.8
MAX_ROWS = 20_000
SEED = 0
MIN_SUPPORT = 20
FOLDS = 5


def find_correlated(X: pd.DataFrame, *, categorical=(), threshold=ASSOCIATION_THRESHOLD,
                    importance=None) -> list:
    """Findings of kind ``"correlated"``, one per group of strongly associated features.

    ``importance``: optional mapping feature -> whether it matters to the model; a
    group none of whose members matters is not reported."""
    matrix, measures = association_matrix(X, categorical=categorical)
    names = [str(c) for c in X.columns]
    strong = np.nan_to_num(matrix, nan=0.0) >= threshold
    np.fill_diagonal(strong, False)
    n_groups, labels = connected_components(strong, directed=False)
    found = []
    for label in range(n_groups):
        members = np.flatnonzero(labels == label)
        if len(members) < 2:
            continue
        group = [names[j] for j in members]
        if importance is not None and not any(importance.get(name, True) for name in group):
            continue
        pairs = [(names[a], names[b], measures[a][b], float(matrix[a, b]))
                 for i, a in enumerate(members) for b in members[i + 1:] if strong[a, b]]
        first, second, measure, value = max(pairs, key=lambda pair: pair[3])
        found.append(Finding(
            kind="correlated", features=tuple(group),
            message=(f"{_and(group)} are strongly associated (strongest: {quoted(first)} and "
                     f"{quoted(second)}, {measure} {value:.2f}; every link at least "
                     f"{threshold:g}): their permutation-type importances are not "
                     "separately interpretable. Shuffling one leaves the others to carry "
                     "the shared information, so each can look unimportant while the "
                     "group matters."),
            details={"pairs": [list(pair) for pair in pairs], "threshold": threshold}))
    return found


def association_matrix(X: pd.DataFrame, *, categorical=()):
    """(matrix, measures): the association of every pair of columns (NaN where it is
    undefined, e.g. a constant column) and the name of the measure used for each."""
    X = pd.DataFrame(X)
    categorical = categorical_columns(X, categorical)
    X = X.sample(n=MAX_ROWS, random_state=SEED) if len(X) > MAX_ROWS else X.copy()
    names = [str(c) for c in X.columns]
    p = len(names)
    matrix = np.full((p, p), np.nan)
    np.fill_diagonal(matrix, 1.0)
    kinds = []
    measures = _Measures(kinds)
    for column, name in zip(X.columns, names, strict=True):
        values = X[column]
        if _support(values) < MIN_SUPPORT:
            kinds.append("thin")  # too few rows away from its usual value
            X[column] = 0
            continue
        if name in categorical:
            codes = pd.factorize(values, use_na_sentinel=False)[0]
            kinds.append("key" if values.nunique(dropna=False) > len(values) / 2
                         else "categorical")
        else:
            codes = None
            kinds.append("numeric")
        X[column] = codes if codes is not None else numeric_values(values)
    numeric = [j for j, kind in enumerate(kinds) if kind == "numeric"]
    cats = [j for j, kind in enumerate(kinds) if kind == "categorical"]
    _spearman(X, numeric, matrix)
    for i, a in enumerate(cats):
        for b in cats[i + 1:]:
            value = _cramers_v(X.iloc[:, a].to_numpy(), X.iloc[:, b].to_numpy())
            _put(matrix, a, b, value)
    for a in cats:
        for b in numeric:
            value = _correlation_ratio(X.iloc[:, a].to_numpy(), X.iloc[:, b].to_numpy())
            _put(matrix, a, b, value)
    return matrix, measures


def _put(matrix, a, b, value):
    matrix[a, b] = matrix[b, a] = value


class _Measures:
    """``measures[a][b]``: the name of the association measured between columns a and
    b, from the two columns' kinds (no table of names for every pair)."""

    NAMES = {("numeric", "numeric"): "|Spearman rho|",
             ("categorical", "categorical"): "Cramér's V",
             ("categorical", "numeric"): "correlation ratio",
             ("numeric", "categorical"): "correlation ratio"}

    def __init__(self, kinds):
        self.kinds = kinds

    def __getitem__(self, a):
        return [self.NAMES.get((self.kinds[a], kind), "") for kind in self.kinds]


def _spearman(X, numeric, matrix):
    """|Spearman's rho| of every pair of numeric columns: ranks, then Pearson; one
    matrix product without missing values, pairwise complete rows with them."""
    if len(numeric) < 2:
        return
    block = X.iloc[:, numeric].to_numpy(dtype=np.float64)
    if np.isnan(block).any():
        rho = pd.DataFrame(block).corr(method="spearman").to_numpy()
    else:
        ranks = rankdata(block, axis=0)
        ranks -= ranks.mean(axis=0)
        norms = np.sqrt((ranks ** 2).sum(axis=0))
        with np.errstate(invalid="ignore", divide="ignore"):
            rho = (ranks.T @ ranks) / np.outer(norms, norms)
    # One assignment, not one per pair: a 1,500-column table has 1.1 million pairs.
    matrix[np.ix_(numeric, numeric)] = np.abs(rho)
    np.fill_diagonal(matrix, 1.0)


def _cramers_v(a, b) -> float:
    table = pd.crosstab(a, b).to_numpy()
    n = table.sum()
    r, k = table.shape
    if r < 2 or k < 2 or n < 2:
        return np.nan
    chi2 = chi2_contingency(table, correction=False)[0]
    phi2 = max(0.0, chi2 / n - (k - 1) * (r - 1) / (n - 1))
    r_corr = r - (r - 1) ** 2 / (n - 1)
    k_corr = k - (k - 1) ** 2 / (n - 1)
    denominator = min(k_corr - 1, r_corr - 1)
    return float(np.sqrt(phi2 / denominator)) if denominator > 0 else np.nan


def _support(values) -> int:
    """How many present values differ from the most common one."""
    counts = pd.Series(values).value_counts(dropna=True)
    return int(counts.sum() - counts.iloc[0]) if len(counts) else 0


def _correlation_ratio(codes, values) -> float:
    """The cross-validated correlation ratio of ``values``' ranks across ``codes``."""
    present = ~np.isnan(values)
    codes, values = pd.factorize(codes[present])[0], rankdata(values[present])
    n = len(values)
    k = codes.max() + 1 if n else 0
    if k < 2 or n < FOLDS * 2:
        return np.nan
    total = ((values - values.mean()) ** 2).sum()
    if total == 0:
        return np.nan
    fold = np.random.default_rng(SEED).permutation(n) % FOLDS
    sums = np.bincount(codes, weights=values, minlength=k)
    counts = np.bincount(codes, minlength=k).astype(np.float64)
    error = 0.0
    for f in range(FOLDS):
        held = fold == f
        fit_sums = sums - np.bincount(codes[held], weights=values[held], minlength=k)
        fit_counts = counts - np.bincount(codes[held], minlength=k)
        overall = fit_sums.sum() / fit_counts.sum()
        with np.errstate(invalid="ignore", divide="ignore"):
            means = np.where(fit_counts > 0, fit_sums / fit_counts, overall)
        error += ((values[held] - means[codes[held]]) ** 2).sum()
    r2 = 1 - error / total
    return float(np.sqrt(max(r2, 0.0)))


def _and(names) -> str:
    shown = [quoted(name) for name in names]
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]
