"""Rankers: scored by NDCG@k over queries, permuted within queries.

A ranker (XGBoost's ``rank:*`` objectives, ``XGBRanker``; LightGBM's ``lambdarank`` and
``rank_xendcg``, ``LGBMRanker``) orders the rows of each query (a search, a user's
session) by its output; its scale means nothing, so R² against the relevance labels
judges it wrongly. Its score is the normalised discounted cumulative gain of the first
``k`` rows of each query, averaged over the queries (docs/measures.md, "Ranking
score")::

    NDCG@k = (1/Q) sum_q DCG@k(q) / IDCG@k(q),  DCG@k = sum_{r <= k} rel_(r) / log2(r + 1)

each query's term being scikit-learn's ``ndcg_score`` of its rows (gains the relevance
labels, tied outputs sharing their positions' discounts; a query whose labels are all
zero scores 0; a query of one row orders nothing and is left out).

Permutation importance of a ranker shuffles a feature's values among the rows of each
query, never across queries: a value moved to another query would change what the
model compares, not only which value a row has. The draws over new data are the
queries' (each query's drop in NDCG, averaged over the shuffles), so the intervals
cover new queries and new shuffles.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.utils import check_random_state

from ._ranks import row_blocks
from ._result import ImportanceResult

__all__ = ["DEFAULT_K", "RANKING_OBJECTIVES", "Ranker", "is_ranking_objective",
           "ndcg_by_query", "query_permutation_importance", "why_not_for_ranker"]

#: NDCG's default cut-off: the first page of results.
DEFAULT_K = 10
#: The objectives that rank: XGBoost's rank:* and LightGBM's.
RANKING_OBJECTIVES = ("lambdarank", "rank_xendcg")


def is_ranking_objective(objective) -> bool:
    """Whether a model's ``objective`` ranks the rows of each query."""
    objective = str(objective or "")
    return objective.startswith("rank:") or objective in RANKING_OBJECTIVES


def ndcg_by_query(y, output, queries, k=DEFAULT_K) -> np.ndarray:
    """Each query's NDCG@k (scikit-learn's ``ndcg_score`` of its rows), in the order of
    the queries' first rows; queries of one row are left out."""
    y = np.asarray(y, dtype=np.float64)
    output = np.asarray(output, dtype=np.float64)
    if (y < 0).any():
        raise ValueError("NDCG reads the relevance labels as gains, which must not be "
                         f"negative; the target has {int((y < 0).sum())} negative value(s)")
    codes, _ = pd.factorize(np.asarray(queries), sort=False)
    order = np.argsort(codes, kind="stable")
    bounds = np.flatnonzero(np.diff(codes[order])) + 1
    return np.array([_ndcg(y[rows], output[rows], k) for rows in np.split(order, bounds)
                     if rows.size > 1], dtype=np.float64)


def _ndcg(relevance, output, k) -> float:
    """scikit-learn's ``ndcg_score([relevance], [output], k=k)`` of one query, by its
    own steps without its checks (a ranker's permutation asks for thousands): tied
    outputs share the mean of their positions' discounts, the ideal order's DCG
    normalises, a query whose labels are all zero scores 0."""
    discount = 1 / (np.log(np.arange(relevance.size) + 2) / np.log(2))
    if k is not None:
        discount[k:] = 0
    ideal = discount.dot(relevance[np.argsort(relevance)[::-1]])
    if ideal == 0:
        return 0.0
    _, inverse, counts = np.unique(-output, return_inverse=True, return_counts=True)
    ranked = np.zeros(len(counts))
    np.add.at(ranked, inverse, relevance)
    ranked /= counts
    ends = np.cumsum(discount)[np.cumsum(counts) - 1]
    shares = np.diff(ends, prepend=0.0)
    shares[0] = ends[0]
    return float((ranked * shares).sum() / ideal)


class Ranker:
    """A fitted ranker scored by NDCG@``k`` over the queries of its rows.

    ``queries``: a Series of each row's query, indexed as the tables the model will be
    given (their index says which query a row is in, however the rows are shuffled or
    taken). ``predict`` is the model's; ``score(X, y)`` the mean over the queries of
    the rows of ``X`` of their NDCG@k."""

    def __init__(self, model, queries: pd.Series, k: int = DEFAULT_K):
        self.model = model
        self.queries = queries
        self.k = k
        self.score_name = f"NDCG@{k}"
        for name in ("n_features_in_", "feature_names_in_"):
            value = getattr(model, name, None)
            if value is not None:
                setattr(self, name, value)

    def predict(self, X):
        return self.model.predict(X)

    def queries_of(self, X) -> np.ndarray:
        index = getattr(X, "index", None)
        if index is None:
            raise ValueError("a ranker is scored by the queries of its rows, which a table "
                             "without row labels (an array) does not say")
        return self.queries.loc[index].to_numpy()

    def score(self, X, y, sample_weight=None):
        if sample_weight is not None:
            raise ValueError("NDCG of a ranker takes no sample weights")
        return float(ndcg_by_query(y, self.predict(X), self.queries_of(X), self.k).mean())

    @property
    def get_params(self):
        """The model's own (none for a model read from a file)."""
        return self.model.get_params

    def to_ensemble(self):
        from ...adapters import as_ensemble

        return as_ensemble(self.model)


def query_permutation_importance(model: Ranker, X: pd.DataFrame, y, *, n_repeats=5,
                                 random_state=None) -> ImportanceResult:
    """Permutation importance of a :class:`Ranker`: the drop in NDCG@k when a column's
    values are shuffled among the rows of each query, ``n_repeats`` times.

    Every column sees the same shuffles (one per repeat, drawn per query from
    ``random_state``). ``importances`` (n_features, n_repeats) are the drops per
    shuffle; the rank intervals and the verdict's intervals rest on the queries' draws
    (each query's drop averaged over the shuffles)."""
    y = np.asarray(y, dtype=np.float64)
    queries = model.queries_of(X)
    codes, _ = pd.factorize(queries, sort=False)
    rng = check_random_state(random_state)
    order = np.argsort(codes, kind="stable")
    blocks = np.split(order, np.flatnonzero(np.diff(codes[order])) + 1)
    sources = np.empty((n_repeats, len(y)), dtype=np.intp)
    for k in range(n_repeats):
        for rows in blocks:
            sources[k, rows] = rows[rng.permutation(rows.size)]
    base = ndcg_by_query(y, model.predict(X), queries, model.k)
    names = [str(column) for column in X.columns]
    drops = np.empty((len(names), n_repeats, base.size))
    for j in range(len(names)):
        for k in range(n_repeats):
            shuffled = X.copy()
            shuffled.isetitem(j, X.iloc[sources[k], j].to_numpy())
            drops[j, k] = base - ndcg_by_query(y, model.predict(shuffled), queries, model.k)
    by_query = drops.mean(axis=1)
    notes = {"ci": f"the spread of the {n_repeats} shuffles only, not the choice of "
                   "held-out queries",
             "rank": "the held-out queries and the shuffles (one draw per query)"}
    return ImportanceResult.from_draws(
        drops.mean(axis=2), feature_names=names, method="permutation",
        params={"n_repeats": n_repeats, "scoring": model.score_name, "within": "queries",
                "n_queries": int(base.size)},
        extra={"baseline_score": float(base.mean()), "intervals": notes},
        rank_draws=row_blocks(by_query))


def why_not_for_ranker(name: str, measure, model) -> str | None:
    """Why measure ``name`` does not apply to a ranker: every measure that scores rows
    against the target, but held-out permutation (which shuffles within queries), reads
    each row's error, which NDCG within queries is not."""
    if not isinstance(model, Ranker) or "y" not in measure.needs or name == "permutation":
        return None
    return (f"it scores each row against the target, and a ranker is scored by "
            f"{model.score_name} within queries (permutation importance shuffles within "
            "queries)")
