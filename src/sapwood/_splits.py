"""How rows are split and refit: at random, by groups, in time order, and in folds.

Every conclusion of :func:`sapwood.explain` rests on rows the model was not trained on,
and on intervals over those rows. Which rows those are, and what a "new row" is, is
decided here and nowhere else, so that the split, the measures' intervals and the
cross-fitting folds agree:

- at random (scikit-learn's ``train_test_split``, stratified by class where every
  class can sit on both sides);
- by ``groups`` (one label per row; a unit: a person, a firm, a patient): every
  group's rows on one side, so that a model cannot score by recognising a unit it saw
  in training; the intervals then treat each group as one draw (:func:`group_draws`);
- by ``order`` (dates, datetimes or numbers): trained on the earliest rows, judged on
  the latest, rows that tie at the cut kept on one side (:func:`holdout`).

:func:`folds` gives the cross-fitting folds under the same three rules (K-fold,
GroupKFold, forward-chaining). Definitions: docs/measures.md, "Splits".
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ._errors import InputError

__all__ = ["RowPlan", "bootstrap_groups", "describe", "folds", "group_draws", "holdout",
           "labels", "of_run", "plan_from", "regroup", "resample_groups", "sort_key",
           "summary"]


@dataclass(frozen=True)
class RowPlan:
    """How a table's rows are split: ``groups`` (integer codes, one per row, or None),
    ``order`` (numbers that sort the rows in time, or None) and the names they came
    from (``groups_name``, ``order_name``: a column's name, or None for labels given
    as an array)."""

    groups: np.ndarray | None = None
    order: np.ndarray | None = None
    groups_name: str | None = None
    order_name: str | None = None
    order_kind: str = "number"  # "number" or "datetime": how the cut is shown

    @property
    def kind(self) -> str:
        if self.order is not None:
            return "time"
        return "groups" if self.groups is not None else "random"

    def subset(self, positions) -> RowPlan:
        """The plan of the rows at ``positions``."""
        pick = np.asarray(positions)
        return RowPlan(None if self.groups is None else self.groups[pick],
                       None if self.order is None else self.order[pick],
                       self.groups_name, self.order_name, self.order_kind)

    def show(self, value) -> str:
        """A value of ``order`` as the cut is shown (a date, or a number)."""
        if self.order_kind == "datetime":
            stamp = pd.Timestamp(int(value))
            return str(stamp.date()) if stamp == stamp.normalize() else str(stamp)
        return f"{value:g}"


def labels(values, n_rows: int, option: str) -> np.ndarray:
    """Integer codes 0..G-1 of one label per row (``values``: an array or Series of
    any labels), in order of first appearance. A missing label is bad input: a row of
    no group cannot be kept with its group."""
    values = pd.Series(np.asarray(values, dtype=object) if not isinstance(values, pd.Series)
                       else values.to_numpy(dtype=object))
    if len(values) != n_rows:
        raise InputError(f"{option} has {len(values)} labels and the data {n_rows} rows; "
                         "give one label per row")
    if values.isna().any():
        raise InputError(f"{option} has {int(values.isna().sum())} missing label(s); every "
                         "row needs its group")
    codes, _ = pd.factorize(values, sort=False)
    return codes.astype(np.intp)


def sort_key(values, option: str) -> tuple:
    """``(numbers, kind)``: the values of a time column as numbers that sort in time
    (datetimes: nanoseconds since 1970; dates as text are parsed) and ``"datetime"``
    or ``"number"``."""
    series = pd.Series(values)
    if series.isna().any():
        raise InputError(f"{option} has {int(series.isna().sum())} missing value(s); every "
                         "row needs its place in time")
    if pd.api.types.is_datetime64_any_dtype(series):
        return series.astype("datetime64[ns]").to_numpy().astype(np.int64), "datetime"
    if pd.api.types.is_bool_dtype(series) or not pd.api.types.is_numeric_dtype(series):
        try:
            parsed = pd.to_datetime(series.astype(str), format="mixed")
        except (ValueError, TypeError):
            raise InputError(f"{option}: needs dates, datetimes or numbers; got values "
                             f"such as {str(series.iloc[0])!r}") from None
        return parsed.astype("datetime64[ns]").to_numpy().astype(np.int64), "datetime"
    return series.to_numpy(dtype=np.float64), "number"


def holdout(n_rows: int, test_size: float, seed: int, *, y=None, plan: RowPlan | None = None):
    """``(train, test)``: sorted positions of the training and held-out rows.

    At random (``plan`` None or without groups and order): scikit-learn's
    ``train_test_split`` of the positions, stratified by ``y`` (classes) when every
    class has two rows and fits on both sides. By groups: a share ``test_size`` of the
    groups held out (``GroupShuffleSplit``), or, for classes, the first fold of
    ``StratifiedGroupKFold`` with ``round(1 / test_size)`` folds when every class
    spans that many groups. In time order: the latest ``test_size`` of the rows held
    out, rows tied at the cut all held out."""
    plan = plan or RowPlan()
    positions = np.arange(n_rows)
    if plan.order is not None:
        return _time_cut(plan.order, test_size)
    if plan.groups is not None:
        return _group_cut(plan.groups, test_size, seed, y)
    from sklearn.model_selection import train_test_split

    stratify = None
    if y is not None:
        counts = pd.Series(np.asarray(y)).value_counts()
        n_test = int(round(test_size * n_rows))
        if counts.min() >= 2 and len(counts) <= n_test <= n_rows - len(counts):
            stratify = y
    try:
        train, test = train_test_split(positions, test_size=test_size, random_state=seed,
                                       stratify=stratify)
    except ValueError as error:
        raise InputError(f"cannot split {n_rows} rows with test_size {test_size}: "
                         f"{str(error).splitlines()[0]}") from None
    return train, test


def _time_cut(order: np.ndarray, test_size: float):
    n_rows = len(order)
    n_test = max(1, math.ceil(test_size * n_rows))
    ranked = np.sort(order, kind="stable")
    cut = ranked[n_rows - n_test]
    test = np.flatnonzero(order >= cut)
    if len(test) == n_rows:
        raise InputError(f"cannot split by time: the latest {test_size:g} of the rows all "
                         "share the earliest time, so no earlier rows are left to train on")
    return np.flatnonzero(order < cut), test


def _group_cut(groups: np.ndarray, test_size: float, seed: int, y):
    n_groups = int(groups.max()) + 1 if len(groups) else 0
    if n_groups < 2:
        raise InputError(f"cannot split by groups: {n_groups} group(s); at least 2 are "
                         "needed (one to train on, one to hold out)")
    n_splits = max(2, round(1 / test_size))
    if y is not None and n_groups >= n_splits and _classes_span(y, groups, n_splits):
        from sklearn.model_selection import StratifiedGroupKFold

        splitter = StratifiedGroupKFold(n_splits=n_splits, shuffle=True, random_state=seed)
        train, test = next(splitter.split(groups, np.asarray(y), groups))
        return np.sort(train), np.sort(test)
    from sklearn.model_selection import GroupShuffleSplit

    n_test = min(max(1, round(test_size * n_groups)), n_groups - 1)
    splitter = GroupShuffleSplit(n_splits=1, test_size=n_test, random_state=seed)
    train, test = next(splitter.split(groups, groups=groups))
    return np.sort(train), np.sort(test)


def _classes_span(y, groups, n_splits: int) -> bool:
    """Whether every class appears in at least ``n_splits`` groups (so that each fold
    can hold some of it)."""
    frame = pd.DataFrame({"y": np.asarray(y), "g": groups})
    return bool(frame.groupby("y")["g"].nunique().min() >= n_splits)


def folds(n_rows: int, k: int, seed: int, *, y=None, plan: RowPlan | None = None) -> list:
    """The cross-fitting folds: a list of ``(train, test)`` sorted positions.

    At random: ``KFold`` (``StratifiedKFold`` for classes when every class has ``k``
    rows), shuffled with ``seed``: every row held out once. By groups: ``GroupKFold``
    (``StratifiedGroupKFold`` for classes when every class spans ``k`` groups),
    shuffled: every group held out once, whole. In time order: forward chaining; the
    rows sorted by time fall into ``k + 1`` consecutive blocks (ties kept in one
    block), and fold i trains on blocks 0..i and holds out block i + 1: every row but
    the first block's is held out once, always by a model of earlier rows."""
    plan = plan or RowPlan()
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 2:
        raise InputError(f"cv must be an integer of at least 2 (the number of folds); got "
                         f"{k!r}")
    positions = np.arange(n_rows)
    if plan.order is not None:
        return _forward_chaining(plan.order, int(k))
    if plan.groups is not None:
        n_groups = int(plan.groups.max()) + 1
        if n_groups < k:
            raise InputError(f"cv={k}: only {n_groups} groups, and each fold holds out "
                             "whole groups; use fewer folds")
        if y is not None and _classes_span(y, plan.groups, k):
            from sklearn.model_selection import StratifiedGroupKFold

            splitter = StratifiedGroupKFold(n_splits=k, shuffle=True, random_state=seed)
            split = splitter.split(positions, np.asarray(y), plan.groups)
        else:
            # GroupKFold's own shuffle gives uneven folds; shuffling the group labels
            # gives an even split that still varies with the seed.
            rng = np.random.default_rng(seed)
            relabelled = rng.permutation(n_groups)[plan.groups]
            from sklearn.model_selection import GroupKFold

            split = GroupKFold(n_splits=k).split(positions, groups=relabelled)
        return [(np.sort(train), np.sort(test)) for train, test in split]
    from sklearn.model_selection import KFold, StratifiedKFold

    if k > n_rows:
        raise InputError(f"cv={k}: more folds than the {n_rows} rows")
    stratified = y is not None and pd.Series(np.asarray(y)).value_counts().min() >= k
    splitter = (StratifiedKFold if stratified else KFold)(n_splits=k, shuffle=True,
                                                          random_state=seed)
    split = splitter.split(positions, np.asarray(y) if stratified else None)
    return [(np.sort(train), np.sort(test)) for train, test in split]


def _forward_chaining(order: np.ndarray, k: int) -> list:
    times = np.unique(order)
    if len(times) < k + 1:
        raise InputError(f"cv={k} in time order needs at least {k + 1} distinct times "
                         f"(k + 1 blocks); the order column has {len(times)}")
    # Block edges at the times that split the sorted rows most evenly.
    ranked = np.sort(order, kind="stable")
    edges = [ranked[min(len(order) - 1, round(i * len(order) / (k + 1)))]
             for i in range(1, k + 1)]
    edges = np.unique(edges)
    if len(edges) < k:
        raise InputError(f"cv={k} in time order: the rows share too few distinct times "
                         f"for {k + 1} blocks; use fewer folds")
    block = np.searchsorted(edges, order, side="right")
    return [(np.flatnonzero(block <= i), np.flatnonzero(block == i + 1)) for i in range(k)]


def group_draws(draws, groups) -> np.ndarray:
    """Per-row draws (n_features, n_rows) as one draw per group (n_features, G): group
    g's draw is ``m + (G / n) (S_g - n_g m)``, with m the rows' mean, S_g the sum of the
    group's n_g draws. Their mean is m, and their spread over ``sqrt(G)`` is the
    cluster-robust standard error of m (``sqrt(G / (G - 1) sum_g (S_g - n_g m)^2) /
    n``): what a bootstrap that resamples whole groups estimates. Rows of one unit are
    alike, so their draws are not independent; treating them as such would make the
    interval too narrow."""
    draws = np.asarray(draws, dtype=np.float64)
    codes, _ = pd.factorize(np.asarray(groups), sort=False)
    n_groups = int(codes.max()) + 1 if len(codes) else 0
    n_rows = max(draws.shape[1], 1)
    sizes = np.bincount(codes, minlength=n_groups)
    mean = draws.mean(axis=1, keepdims=True) if draws.shape[1] else np.zeros((len(draws), 1))
    sums = np.stack([np.bincount(codes, weights=row, minlength=n_groups) for row in draws]) \
        if draws.shape[0] else np.zeros((0, n_groups))
    return mean + (n_groups / n_rows) * (sums - sizes[None, :] * mean)


def resample_groups(groups, rng) -> np.ndarray:
    """Row positions of one bootstrap sample of whole groups: G groups drawn with
    replacement, each bringing all of its rows (a group drawn twice, twice)."""
    codes, _ = pd.factorize(np.asarray(groups), sort=False)
    n_groups = int(codes.max()) + 1
    members = np.argsort(codes, kind="stable")
    starts = np.searchsorted(codes[members], np.arange(n_groups + 1))
    drawn = rng.integers(0, n_groups, n_groups)
    return np.concatenate([members[starts[g]:starts[g + 1]] for g in drawn])


def regroup(result, groups):
    """``result`` (an ImportanceResult) with its per-row ``rank_draws`` turned into one
    draw per group (:func:`group_draws`), so that its intervals over new rows resample
    groups; unchanged when it has no per-row draws for these rows (none, or random
    blocks of rows: more than 10,000 of them)."""
    draws = result.rank_draws
    if groups is None or draws is None or draws.ndim != 2 or draws.shape[1] != len(groups):
        return result
    intervals = dict(result.extra.get("intervals") or {})
    intervals["rank"] = (f"new groups ({len(np.unique(groups))} held-out groups, each "
                         "one draw; and the shuffles)")
    # The per-row draws are kept: cross-fitting pools them over folds, then by group.
    return result.replace(rank_draws=group_draws(draws, groups),
                          extra={**result.extra, "intervals": intervals, "row_draws": draws})


def summary(plan: RowPlan | None, train, test) -> dict:
    """What the report says about the split: its kind, the column(s) it follows, the
    groups on each side, the cut in time. ``train``, ``test``: positions (``train``
    None: the model was not trained on these rows)."""
    plan = plan or RowPlan()
    out = {"kind": plan.kind, "groups": plan.groups_name, "order_by": plan.order_name}
    if plan.groups is not None:
        out["n_groups_train"] = (None if train is None
                                 else int(len(np.unique(plan.groups[train]))))
        out["n_groups_test"] = int(len(np.unique(plan.groups[test])))
    if plan.order is not None:
        if train is not None and len(train):
            out["train_until"] = plan.show(plan.order[train].max())
        out["test_from"] = plan.show(plan.order[test].min())
        out["test_until"] = plan.show(plan.order[test].max())
    return out


def of_run(plan: RowPlan | None, train, test, n_rows: int, held_out: bool):
    """``(summary, groups)`` of one run: what the report says of its split
    (:func:`summary`; None for a random split) and the group of each held-out row (None
    without groups or held-out rows). ``train``, ``test``: positions, or None when the
    run did not split (a fitted model judged on all ``n_rows`` rows, or none held out)."""
    if plan is None or not held_out:
        return None, None
    if test is None:
        test = np.arange(n_rows)
    groups = None if plan.groups is None else plan.groups[test]
    return summary(plan, train, test), groups


def bootstrap_groups(model, plan: RowPlan | None, train):
    """The group of each training row when ``model`` draws bootstraps and can draw
    them by group (sapwood's forests: ``fit(..., groups=)``, with ``bootstrap`` and no
    ``max_samples``), else None."""
    import inspect

    if plan is None or plan.groups is None or train is None:
        return None
    fit = getattr(model, "fit", None)
    if fit is None or "groups" not in inspect.signature(fit).parameters:
        return None
    if not getattr(model, "bootstrap", False) or getattr(model, "max_samples", None):
        return None
    return plan.groups[train]


def plan_from(X: pd.DataFrame, groups, order_by):
    """``(X, plan)``: the table without the columns that ``groups`` and ``order_by``
    name (they organise the rows, they are not features) and the :class:`RowPlan`
    (None when neither is given). Each is a column name of ``X`` or one value per
    row."""
    if groups is None and order_by is None:
        return X, None
    columns = [str(column) for column in X.columns]
    taken, values = [], {}
    for option, given in (("groups", groups), ("order_by", order_by)):
        if given is None:
            continue
        if isinstance(given, str):
            if given not in columns:
                import difflib

                close = difflib.get_close_matches(given, columns, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                raise InputError(f"{option}={given!r}: not a column of X{hint}; give a "
                                 "column name or one label per row")
            position = columns.index(given)
            values[option] = (X.iloc[:, position], given)
            taken.append(position)
        else:
            values[option] = (given, None)
    if len(taken) == 2 and taken[0] == taken[1]:
        raise InputError(f"groups and order_by name the same column {groups!r}")
    if taken:
        X = X.drop(columns=[X.columns[p] for p in taken])
    plan = RowPlan()
    if "groups" in values:
        labelled, name = values["groups"]
        plan = RowPlan(groups=labels(labelled, len(X), "groups"), groups_name=name)
    if "order_by" in values:
        ordered, name = values["order_by"]
        if len(ordered) != len(X):
            raise InputError(f"order_by has {len(ordered)} values and the data {len(X)} "
                             "rows; give one per row")
        order, kind = sort_key(ordered, "order_by")
        plan = RowPlan(plan.groups, order, plan.groups_name, name, kind)
    return X, plan


def describe(split: dict | None) -> str | None:
    """The report's line on a split that is not a plain random one (``split``: the
    dict of :func:`summary`, with ``folds`` when cross-fitted), or None."""
    if not split:
        return None
    folds = split.get("folds")
    groups = split.get("groups") or "the labels given"
    if split["kind"] == "time":
        by = split.get("order_by") or "the order given"
        if folds:
            return (f"Cross-fitted in time order by {by!r}: {folds} forward-chaining "
                    f"folds, each model judged on the rows after those it learned from "
                    f"({split['test_from']} to {split['test_until']})")
        if "train_until" not in split:
            return f"Held-out rows in time order by {by!r}: {split['test_from']} to " \
                   f"{split['test_until']}"
        return (f"Split in time order by {by!r}: trained on rows up to "
                f"{split['train_until']}, judged on {split['test_from']} to "
                f"{split['test_until']}")
    if split["kind"] == "groups":
        if folds:
            return (f"Cross-fitted by groups of {groups!r}: {folds} folds, each of the "
                    f"{split['n_groups_test']} groups held out once, whole")
        if split.get("n_groups_train") is None:
            return f"Held-out rows: {split['n_groups_test']} groups of {groups!r}"
        return (f"Split by groups of {groups!r}: {split['n_groups_train']} groups trained "
                f"on, {split['n_groups_test']} held out (each group's rows on one side)")
    if folds:
        return f"Cross-fitted: {folds} folds, every row held out once"
    return None
