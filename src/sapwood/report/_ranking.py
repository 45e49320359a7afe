""":func:`sapwood.explain` on a ranker: its queries, its score, its split, its baseline.

A fitted ranker (``XGBRanker``, ``LGBMRanker``, an XGBoost or LightGBM model with a
ranking objective) is judged by NDCG@k over the queries of the held-out rows
(:mod:`sapwood.importance._engine._ranking`), never R² against the relevance labels: the
queries come from ``groups=`` (one label per row, or the name of a column of X), and
without them the call is refused. A split of the rows keeps each query's rows on one
side; permutation importance shuffles within queries; the baseline is a constant
model's NDCG (every row tied), compared query by query.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from .._errors import InputError
from ..importance._engine._ranking import Ranker, is_ranking_objective, ndcg_by_query
from ._baseline import Baseline
from ._data import did_you_mean

__all__ = ["TrainedRanker", "as_ranker", "query_labels", "ranking_baseline", "ranking_objective"]


def query_labels(X, X_train, groups):
    """``(X, X_train, labels, training_labels)``: with ``groups`` a column name, X (and
    X_train) without that column, and the column's values; else X, X_train, ``groups``
    (one label per row of X) as an array or None, and None."""
    if groups is None:
        return X, X_train, None, None
    if isinstance(groups, str):
        X, labels = _column(X, groups, "X")
        if X_train is not None:
            X_train, training_labels = _column(X_train, groups, "X_train")
            return X, X_train, labels, training_labels
        return X, X_train, labels, None
    labels = np.asarray(groups)
    if labels.ndim != 1 or len(labels) != len(X):
        raise InputError(f"groups must be one label per row of X ({len(X)}) or the name of "
                         f"a column; got shape {labels.shape}")
    return X, X_train, labels, None


def _column(X, name, what):
    """X without column ``name``, and the column's values."""
    columns = [str(column) for column in getattr(X, "columns", [])]
    if name not in columns:
        raise InputError(f"groups={name!r}: not a column of {what}"
                         f"{did_you_mean(name, columns)}; groups is one label per row or "
                         "the name of a column of X")
    position = columns.index(name)
    return X.drop(columns=X.columns[position]), X.iloc[:, position].to_numpy()


def ranking_objective(model) -> str | None:
    """The ranking objective of a model, fitted or not (``rank:ndcg``, ``lambdarank``),
    or None when it does not rank (or is a name of sapwood's models)."""
    from ..adapters import as_ensemble

    if model is None or isinstance(model, str):
        return None
    if type(model).__name__ in _TRAINED_WITH_QUERIES:
        return model.get_params().get("objective") or _TRAINED_WITH_QUERIES[
            type(model).__name__]
    try:
        objective = as_ensemble(model).kind.objective
    except (TypeError, ValueError):
        objective = getattr(model, "get_params", dict)().get("objective")
    return objective if is_ranking_objective(objective) else None


# The rankers explain trains on the training queries (their fit takes group=), and the
# objective each has by default.
_TRAINED_WITH_QUERIES = {"XGBRanker": "rank:ndcg", "LGBMRanker": "lambdarank"}


def as_ranker(model, data, labels, n_train: int, scoring=None, fitted=True,
              training_labels=None):
    """``(model, data)``: a ranker as a :class:`Ranker` over the queries ``labels`` of
    X's rows (after the ``n_train`` given training rows, whose queries are
    ``training_labels``, or for a fitted model each row its own), the data's rows
    labelled so that each names its query; any other model unchanged. An unfitted one
    must be an ``XGBRanker`` or ``LGBMRanker``, trained on the training queries."""
    objective = ranking_objective(model)
    if objective is None:
        return model, data
    if not fitted and type(model).__name__ not in _TRAINED_WITH_QUERIES:
        raise InputError(f"{type(model).__name__} with objective {objective} ranks; explain "
                         "trains XGBRanker and LGBMRanker on their queries, or takes any "
                         "ranker fitted already")
    if scoring is not None:
        raise InputError(f"scoring={scoring!r}: the model ranks (objective {objective}) "
                         "and is scored by NDCG within queries; leave scoring=None")
    if labels is None:
        raise InputError(f"the model ranks (objective {objective}) and is scored by NDCG "
                         "within queries: give each row's query with groups= (a column name "
                         "or one label per row)")
    if n_train and training_labels is None:
        if not fitted:
            raise InputError("the ranker is trained on X_train's queries: give groups= as "
                             "the name of a column of X_train and X")
        # The given training rows of a fitted ranker are never scored: their own queries.
        training_labels = np.array([f"training row {i}" for i in range(n_train)],
                                   dtype=object)
    queries = np.concatenate([np.asarray(training_labels if n_train else [], dtype=object),
                              np.asarray(labels, dtype=object)])
    if data.kept is not None:
        queries = queries[data.kept]
    index = data.X.index
    if not index.is_unique:  # each row's label must name one row
        index = pd.RangeIndex(len(data.y))
        data = dataclasses.replace(data, X=data.X.set_axis(index), y=data.y.set_axis(index))
    ranker = Ranker if fitted else TrainedRanker
    return ranker(model, pd.Series(queries, index=index)), data


class TrainedRanker(Ranker):
    """An ``XGBRanker`` or ``LGBMRanker`` that explain trains: ``fit(X, y)`` hands the
    library the rows query by query with each query's size (``group=``)."""

    def fit(self, X, y):
        codes, _ = pd.factorize(self.queries_of(X), sort=True)
        order = np.argsort(codes, kind="stable")
        self.model.fit(X.iloc[order], np.asarray(y)[order], group=np.bincount(codes))
        for name in ("n_features_in_", "feature_names_in_"):
            if hasattr(self.model, name):
                setattr(self, name, getattr(self.model, name))
        return self

    def __sklearn_clone__(self):
        from sklearn.base import clone

        return TrainedRanker(clone(self.model), self.queries, self.k)


def split_queries(data, model: Ranker, test_size: float, seed: int, places=()):
    """``(data, n_train, places)``: the rows reordered so that the training queries come
    first (``n_train`` rows), ``test_size`` of the queries held out, drawn by ``seed``;
    every row of a query on one side. ``places``: ``(position, row)`` pairs of rows
    asked for, their positions followed to the new order."""
    from sklearn.model_selection import GroupShuffleSplit

    labels = model.queries.loc[data.X.index].to_numpy()
    if pd.unique(labels).size < 2:
        raise InputError("cannot split the rows by query: they are all of one query")
    train, test = next(GroupShuffleSplit(n_splits=1, test_size=test_size,
                                         random_state=seed).split(data.X, groups=labels))
    order = np.concatenate([train, test])
    moved = np.empty_like(order)
    moved[order] = np.arange(order.size)
    data = dataclasses.replace(data, X=data.X.iloc[order], y=data.y.iloc[order])
    return data, len(train), [(int(moved[place]), row) for place, row in places]


def ranking_baseline(model: Ranker, X_test, y_test) -> Baseline | None:
    """A constant model's NDCG@k on the held-out queries (every row tied: the expected
    NDCG of a random order) and the 95% interval of the ranker's mean gain over it per
    query."""
    queries = model.queries_of(X_test)
    own = ndcg_by_query(y_test, model.predict(X_test), queries, model.k)
    constant = ndcg_by_query(y_test, np.zeros(len(y_test)), queries, model.k)
    if own.size < 2:
        return None if not own.size else Baseline(float(constant.mean()))
    from sapwood.importance._engine._result import t_interval

    gain = own - constant
    low, high = t_interval(np.array([gain.mean()]), np.array([gain.std(ddof=1)]), gain.size)
    return Baseline(float(constant.mean()), float(low[0]), float(high[0]), test="ndcg")
