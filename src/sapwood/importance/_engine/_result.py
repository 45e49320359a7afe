"""The one result type every importance measure returns."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field, fields

import numpy as np
import pandas as pd

from ._html import result_html
from ._ranks import RankIntervals, rank_intervals

__all__ = ["ImportanceResult", "mean_interval", "side_by_side", "t_interval"]


class _Trace:
    """The ``trace`` field: a table, None, or a function ``build(trees=None)`` that
    builds the table (of the given trees only, when asked), called on first access and
    kept. MDI's trace of a 100-tree forest grown on 150,000 rows has 9.5 million rows,
    seconds to build, that most callers never read."""

    def __get__(self, result, owner=None):
        if result is None:
            return None  # the field's default (dataclasses ask the class)
        value = result.__dict__.get("_trace")
        if _is_builder(value):
            value = result.__dict__["_trace"] = value()
        return value

    def __set__(self, result, value):
        result.__dict__["_trace"] = value


def _is_builder(value) -> bool:
    return callable(value) and not isinstance(value, pd.DataFrame)


@dataclass(eq=False)
class ImportanceResult:
    """Feature importances with their spread and the evidence behind them.

    Attributes
    ----------
    importances_mean : ndarray of shape (n_features,)
        The importance of each feature.
    importances_std : ndarray of shape (n_features,)
        Its spread over repeats or trees (zero when the measure is deterministic).
    feature_names : list of str
    method : str
        Name of the measure, e.g. ``"mdi"``, ``"permutation"``.
    params : dict
        The arguments that determine the numbers (n_repeats, random_state, ...).
    importances : ndarray of shape (n_features, n_draws) or None
        Raw values per repeat or per tree, when the measure has them.
    ci_low, ci_high : ndarray of shape (n_features,) or None
        Confidence interval bounds, when the measure provides them: where the
        importance is the mean of its draws (repeats, trees, folds, rows), the 95%
        Student-t interval of that mean (:meth:`from_draws`; NaN below two draws). It
        covers what varies between those draws only (the shuffles, the trees), which
        ``extra["intervals"]["ci"]`` says where the measure knows it.
    pvalues : ndarray of shape (n_features,) or None
    trace : pandas.DataFrame or None
        Per-node (or per-tree) table the numbers were computed from. A measure may
        pass a function that builds it instead: it is called when ``trace`` is first
        read (see :meth:`tree_trace` for one tree's rows alone).
    extra : dict
        Further named arrays a measure provides (e.g. per-class importances).
    rank_draws : ndarray of shape (n_features, n_draws) or None
        The draws the simultaneous 95% rank intervals rest on (:meth:`rank_intervals`)
        when they are not ``importances``: one draw per row (random blocks of rows
        beyond 10,000), whose spread covers the choice of rows as well as the shuffles,
        for held-out permutation with a score that is a (weighted) mean over rows or
        binary ROC AUC (:mod:`sapwood.importance._engine._permutation_rows`), OOB permutation,
        conditional permutation of forests and trees, and UFI; for AIR of a bagged
        forest, pseudo-draws with the infinitesimal jackknife's covariance over
        training samples. Otherwise the draws are ``importances``: trees for AIR of
        other models and a forest's MDI, folds for drop-column by cross-validation, rows
        for tree_shap, and repeats for held-out permutation with other scores and
        boosted conditional permutation (which cover the shuffles only).
        ``extra["intervals"]["rank"]`` says what they cover where the measure knows it.

    Each field also answers by key, as scikit-learn's ``Bunch`` result does:
    ``result["importances_mean"]`` is ``result.importances_mean``, so code written for
    :func:`sklearn.inspection.permutation_importance` runs unchanged.
    """

    importances_mean: np.ndarray
    importances_std: np.ndarray
    feature_names: list
    method: str
    params: dict = field(default_factory=dict)
    importances: np.ndarray | None = None
    ci_low: np.ndarray | None = None
    ci_high: np.ndarray | None = None
    pvalues: np.ndarray | None = None
    trace: pd.DataFrame | None = _Trace()
    extra: dict = field(default_factory=dict)
    rank_draws: np.ndarray | None = None
    _rank_intervals: object = field(default=None, init=False, repr=False)

    def __post_init__(self):
        self.importances_mean = np.asarray(self.importances_mean, dtype=np.float64)
        self.importances_std = np.asarray(self.importances_std, dtype=np.float64)
        self.feature_names = [str(name) for name in self.feature_names]
        n = self.importances_mean.shape[0]
        if self.importances_std.shape != (n,) or len(self.feature_names) != n:
            raise ValueError("importances_mean, importances_std and feature_names must have "
                             f"the same length; got {n}, {self.importances_std.shape[0]} "
                             f"and {len(self.feature_names)}")

    @classmethod
    def from_draws(cls, draws, **fields) -> ImportanceResult:
        """A result whose importance is each feature's mean over its ``draws`` (shape
        (n_features, n_draws)): ``importances_std`` over the draws (ddof=0, as
        scikit-learn's ``permutation_importance``) and the 95% Student-t confidence
        interval of the mean (:func:`mean_interval`)."""
        draws = np.asarray(draws, dtype=np.float64)
        if draws.shape[1] == 0:
            zeros = np.zeros(draws.shape[0])
            return cls(importances_mean=zeros, importances_std=zeros, importances=draws,
                       **fields)
        low, high = mean_interval(draws)
        return cls(importances_mean=draws.mean(axis=1), importances_std=draws.std(axis=1),
                   importances=draws, ci_low=low, ci_high=high, **fields)

    def keys(self) -> list[str]:
        """The names that answer ``result[name]``: the public fields."""
        return [f.name for f in fields(self) if not f.name.startswith("_")]

    def __getitem__(self, key: str):
        if key not in self.keys():
            raise KeyError(f"{key!r} is not a field of ImportanceResult; fields: "
                           f"{', '.join(self.keys())}")
        return getattr(self, key)

    def replace(self, **changes) -> ImportanceResult:
        """A copy with ``changes`` (:func:`dataclasses.replace`) that leaves a trace not
        built yet unbuilt."""
        changes.setdefault("trace", self.__dict__.get("_trace"))
        return dataclasses.replace(self, **changes)

    def tree_trace(self, tree: int) -> pd.DataFrame | None:
        """The rows of ``trace`` for tree ``tree`` (a per-node trace with a ``tree``
        column), or None without a trace. While the whole trace is not built, only
        that tree's rows are."""
        source = self.__dict__.get("_trace")
        if _is_builder(source):
            return source([tree])
        if source is None:
            return None
        return source[source["tree"] == tree]

    @property
    def n_features(self) -> int:
        return self.importances_mean.shape[0]

    def ranks(self) -> np.ndarray:
        """Rank of each feature, 1 = most important (ties share the smaller rank)."""
        return pd.Series(self.importances_mean).rank(ascending=False, method="min").to_numpy(
            dtype=np.int64)

    def rank_intervals(self) -> RankIntervals | None:
        """Simultaneous 95% confidence intervals for the ranks, from ``rank_draws``
        or else the draws in ``importances``
        (:func:`~sapwood.importance._engine._ranks.rank_intervals`: a max-t bound over all
        pairwise differences, Mogstad et al. 2024, doi:10.1093/restud/rdad006), or None
        where the measure has fewer than two draws (a single tree's MDI, a library's
        split gain). Computed once.

        What they cover: the ranks of the importances this model would show on the
        whole population the rows were drawn from (held-out permutation and tree_shap:
        the expected importance of this fitted model over new held-out rows and new
        shuffles; OOB and conditional permutation and UFI: the mean over this forest's
        trees of each tree's expected importance on new rows; AIR: its expectation over
        training samples). All features' ranks lie in their intervals
        at once in at least 95% of samples; features whose importance is exactly equal
        (never used by the model) share their places. Checked by simulation against
        populations of 20,000 to 100,000 rows: docs/measures.md, section 'Rank intervals'."""
        draws = self.importances if self.rank_draws is None else self.rank_draws
        if self._rank_intervals is None and draws is not None and draws.ndim == 2 \
                and draws.shape[0] == self.n_features:
            self._rank_intervals = rank_intervals(draws)
        return self._rank_intervals

    def to_frame(self, sort: bool = True) -> pd.DataFrame:
        """Tidy table: feature, importance, std, ci_low, ci_high, [pvalue], rank,
        rank_low, rank_high (the simultaneous 95% rank interval; missing without
        draws)."""
        nan = np.full(self.n_features, np.nan)
        frame = pd.DataFrame({
            "feature": self.feature_names,
            "importance": self.importances_mean,
            "std": self.importances_std,
            "ci_low": nan if self.ci_low is None else self.ci_low,
            "ci_high": nan if self.ci_high is None else self.ci_high,
        })
        if self.pvalues is not None:
            frame["pvalue"] = self.pvalues
        frame["rank"] = self.ranks()
        intervals = self.rank_intervals()
        missing = pd.array([pd.NA] * self.n_features, dtype="Int64")
        if intervals is None:
            frame["rank_low"], frame["rank_high"] = missing, missing.copy()
        else:
            known = intervals.low > 0
            frame["rank_low"] = pd.array(np.where(known, intervals.low, 0), dtype="Int64")
            frame["rank_high"] = pd.array(np.where(known, intervals.high, 0), dtype="Int64")
            frame.loc[~known, ["rank_low", "rank_high"]] = pd.NA
        if sort:
            frame = frame.sort_values(["rank", "feature"], kind="stable").reset_index(drop=True)
        return frame

    def _repr_html_(self) -> str:
        """The table a notebook shows: each feature with its importance, a bar, its
        interval and its rank interval, most important first."""
        return result_html(self)

    def __repr__(self) -> str:
        head = self.to_frame().head(10).to_string(index=False)
        return f"ImportanceResult(method={self.method!r})\n{head}"


def mean_interval(draws, level=0.95):
    """(low, high): the Student-t confidence interval at ``level`` of each row's mean,
    ``mean -/+ t_{(1 + level) / 2, k - 1} s / sqrt(k)`` over its k draws (s with
    ddof=1); NaN for rows of fewer than two draws. Definition: docs/measures.md,
    section 'Confidence intervals of the importances'."""
    draws = np.asarray(draws, dtype=np.float64)
    k = draws.shape[1]
    if k < 2:
        nan = np.full(draws.shape[0], np.nan)
        return nan, nan.copy()
    return t_interval(draws.mean(axis=1), draws.std(axis=1, ddof=1), k, level)


def t_interval(mean, sample_std, k, level=0.95):
    """:func:`mean_interval` from each row's mean and sample standard deviation
    (ddof=1) over k >= 2 draws."""
    from scipy.stats import t

    half = t.ppf((1 + level) / 2, k - 1) * np.asarray(sample_std) / np.sqrt(k)
    return mean - half, mean + half


def side_by_side(*results: ImportanceResult, names=None) -> pd.DataFrame:
    """Lay several results out as one tidy table: feature, method, importance, std, rank."""
    if not results:
        raise ValueError("side_by_side needs at least one ImportanceResult")
    names = names or [r.method for r in results]
    if len(names) != len(results):
        raise ValueError(f"names has {len(names)} entries for {len(results)} results")
    frames = []
    for name, result in zip(names, results, strict=True):
        frame = result.to_frame(sort=False)[["feature", "importance", "std", "rank"]]
        frame.insert(1, "method", name)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)
