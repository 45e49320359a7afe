"""Leakage: one column alone, or a few together, predict the held-out target almost
perfectly, about as well as the whole model does, and the other columns cannot.

For each column, a small decision tree (sapwood's own: depth :data:`DEPTH`, leaves of at
least :data:`MIN_LEAF` rows) is fit on that column of the training rows and scored on
the held-out rows: classification by balanced accuracy, regression by R². A column with
missing values gives the tree two inputs, its values (missing values routed where the
tree learnt to send them) and its missing indicator, so a column whose information is
in *whether* it was filled in (recorded only for one class) is seen. Text and category
columns are coded by their training rows: categories in order of their majority class
(classification) or mean target (regression), so a few splits can separate them;
categories not seen in training count as missing.

The rule compares errors on one scale, the error left relative to a constant's
(:func:`relative_error`): ``e = (1 - BA) / (1 - 1/K)`` for balanced accuracy over K
classes, ``e = sqrt(1 - R²)`` (the root mean squared error over the target's standard
deviation) for R²; 0 is perfect, 1 is a constant's error. A column is reported when

1. **near perfect**: its ``e`` on the held-out rows is at most :data:`NEAR_PERFECT`
   (0.10: balanced accuracy 0.95 or more on two classes, R² 0.99 or more), and the
   evidence says so: the one-sided 95% upper confidence bound of ``e`` over the
   held-out rows is at most :data:`EVIDENCE` (0.20), which a few lucky rows cannot
   reach (at least :data:`MIN_HELD_OUT` held-out rows in any case); and
2. **near the whole model**, when ``model_score`` (the model's held-out score in the
   same metric, on the same rows) is given: the column's ``e`` is at most the model's
   plus :data:`NEAR_MODEL` (0.05), i.e. the other columns add almost nothing to it. A
   column the model fails to exploit (its ``e`` below the model's) is reported too.

3. **not shared**: the other columns together (one tree of the same size on all of
   them) leave a relative error more than :data:`REDUNDANT` (0.10) above the column's.
   Where honest columns carry the same information (iris's petal length and petal
   width), the column is strong, not leaked; a column recorded after the outcome gives
   what the others cannot. A copy of the column in another scale (its training values
   in the same or the reverse order, |Spearman| at least :data:`COPY`: grams and
   pounds) is the same measurement, not an honest column: it is not among the others,
   and the column is reported with its copies as one finding.

Without ``model_score`` the first and third conditions decide.

**A leak in several columns** (:func:`find_leakage` reports it as one finding naming
every member): a set of at most :data:`MAX_SET` columns whose one tree (the same size)
is near perfect on the held-out rows with more evidence than one column needs (``e``
at most half of ``near_perfect`` and its upper bound at most ``near_perfect``, on at
least :data:`SET_MIN_HELD_OUT` held-out rows), near the whole model (as in 2), while
the columns outside it together leave an ``e`` more than
:data:`REDUNDANT` above the set's: the other columns cannot do what the set does. Two
ways to such a set, both cheap:

- **twins**: two or more columns each near perfect alone (1 and 2) but not reported,
  each because another of them makes it look shared (two columns recorded after the
  outcome: spending, and spending as a share of income); the third condition is then
  asked of them as one set;
- **spread**: no column is reported alone, and the whole model (without
  ``model_score``: one tree on every column) is itself near perfect: the columns
  strongest alone (the first :data:`SEARCH` by ``e``) are added one at a time, each
  time the one that lowers the set's ``e`` most, until the set is near perfect.

Honest strong predictors that share their information (two noisy measurements of one
cause; iris's petal length and width) leave an error that the stricter bounds of a set
see. A strong honest predictor leaves room for error (y = x + noise with R² 0.9 has
e = 0.32; a column with balanced accuracy 0.9, e = 0.2) and is not reported; a column
near perfect alone where the model is much better still (other columns carry what it
lacks) is not reported when the model's score is given. The rule's false-alarm and
detection rates, by simulation with known truth: docs/measures.md, section 'Warnings',
and ``tests/diagnostics/test_leakage_rule.py``.

One tree per column: the cost is linear in rows times columns; the set search adds two
trees for twins and at most 2 * :data:`SEARCH` small ones, only when the model is near
perfect.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import norm

from .._progress import counted
from .._text import quoted
from ..learners import DecisionTreeClassifier, DecisionTreeRegressor
from ._columns import categorical_columns, numeric_values
from ._finding import Finding

__all__ = ["EVIDENCE", "NEAR_MODEL", "NEAR_PERFECT", "find_leakage", "relative_error"]

NEAR_PERFECT = 0.10
EVIDENCE = 0.20
NEAR_MODEL = 0.05
# A column is not reported when the other columns together come this close to it.
REDUNDANT = 0.10
CONFIDENCE = 0.95
MIN_HELD_OUT = 20
DEPTH = 5
MIN_LEAF = 5
# A leak in several columns: at most this many members, searched among this many of the
# columns strongest alone, judged on at least this many held-out rows.
MAX_SET = 3
SEARCH = 6
SET_MIN_HELD_OUT = 100
# Two columns whose values are in this rank order (|Spearman|) are copies of each other.
COPY = 0.999


def find_leakage(X_train, y_train, X_test, y_test, task: str, *, model_score=None,
                 categorical=(), near_perfect=NEAR_PERFECT, near_model=NEAR_MODEL,
                 random_state=0, steps=None) -> list:
    """Findings of kind ``"leakage"``: columns that alone (with their copies in another
    scale), or a few together, predict the held-out target almost perfectly and about
    as well as the whole model (see the module's rule).

    Parameters
    ----------
    X_train, X_test : DataFrame or array-like
        The training and held-out rows, as read: numbers, text, categories, booleans,
        dates; missing values allowed.
    y_train, y_test : array-like
    task : {"classification", "regression"}
        Scored by balanced accuracy or R².
    model_score : float, optional
        The whole model's held-out score in the same metric (balanced accuracy or R²)
        on these held-out rows. Given, a column must also come within ``near_model``
        of it; None: the column's own score decides.
    categorical : iterable of str
        Numeric columns that hold category codes (text columns are found by
        themselves).
    near_perfect, near_model : float
        The rule's bounds on the relative error (:func:`relative_error`); the upper
        confidence bound must also be at most :data:`EVIDENCE`.
    random_state : int
    steps : optional, advanced once per column (a progress bar's
        :class:`sapwood._progress._Steps`).

    Returns
    -------
    list of Finding
        ``details``: ``score`` (the column's held-out score), ``score_name``,
        ``n_test``, ``relative_error`` and its ``relative_error_upper`` bound,
        ``copies`` (the columns reported with it), ``missing_share`` (training rows
        missing), ``indicator_score`` (the missing indicator's own score, None without
        missing values), ``model_score`` and ``model_relative_error`` (None when not
        given), ``near_perfect``, ``near_model``. A set of columns (``features`` its
        members) has the set's ``score`` and errors, ``alone`` (each member's own
        score) and ``rest_score`` (the other columns' together) instead of ``copies``,
        ``missing_share`` and ``indicator_score``.
    """
    if task not in ("classification", "regression"):
        raise ValueError(f"task must be 'classification' or 'regression'; got {task!r}")
    if len(y_test) < MIN_HELD_OUT:
        return []
    X_train, X_test = pd.DataFrame(X_train), pd.DataFrame(X_test)
    y_train, y_test = np.asarray(y_train).ravel(), np.asarray(y_test).ravel()
    classify = task == "classification"
    if classify and len(np.unique(y_test)) < 2:
        return []
    if not classify:
        y_train, y_test = y_train.astype(np.float64), y_test.astype(np.float64)
    score_name = "balanced accuracy" if classify else "R²"
    model_error = None
    if model_score is not None:
        model_error = float(relative_error(float(model_score), task, y_test))
    text = categorical_columns(X_train, categorical) | categorical_columns(X_test)
    columns = _Columns(X_train, X_test, y_train, classify, text)
    alone = {}  # column -> (e, its upper bound, score) of its one-column tree
    for column in counted(X_train.columns, steps):
        train, test = columns[column]
        if not np.isnan(train).all():
            predicted = _fit_predict(*_with_indicators(train[:, None], test[:, None]),
                                     y_train, classify, random_state)
            alone[column] = _errors(y_test, predicted, classify)
    near = [column for column, (error, upper, _) in alone.items()
            if error <= near_perfect and upper <= EVIDENCE
            and (model_error is None or error <= model_error + near_model)]
    found, twins, reported = [], [], set()
    for column in near:
        if column in reported:
            continue
        error, upper, score = alone[column]
        # A copy of the column in another scale is the same measurement, not an honest
        # column sharing its information (a copy's tree is the column's: near too).
        copies = [other for other in near if other != column
                  and columns.same_order(column, other)]
        if _redundant(columns, column, copies, y_train, y_test, classify, error,
                      random_state):
            twins.append(column)
            continue
        reported.update(copies)
        train, test = columns[column]
        indicator_score = None
        if np.isnan(train).any() or np.isnan(test).any():
            indicator = _fit_predict(np.isnan(train)[:, None], np.isnan(test)[:, None],
                                     y_train, classify, random_state)
            indicator_score = _errors(y_test, indicator, classify)[2]
        found.append(_finding(str(column), score, score_name, len(y_test), error, upper,
                              float(np.isnan(train).mean()), indicator_score, model_score,
                              model_error, near_perfect, near_model,
                              [str(c) for c in copies]))
    if len(y_test) >= SET_MIN_HELD_OUT and (len(twins) >= 2 or not found):
        columns.keep = True
        leaked = _leaked_set(columns, twins if len(twins) >= 2 else None, alone, y_train,
                             y_test, classify, model_error, near_perfect, near_model,
                             random_state)
        if leaked is not None:
            found.append(_set_finding(leaked, alone, score_name, len(y_test), model_score,
                                      model_error, near_perfect, near_model))
    return found


class _Columns:
    """Each column of both parts as float64 (:func:`_encoded`), for the one-column
    trees, the redundancy check and the set search. Encoded when asked; kept (``keep``)
    only for the set search, which reads columns again: a wide table's columns are not
    all held at once for the one-column trees."""

    def __init__(self, X_train, X_test, y_train, classify, text):
        self.X_train, self.X_test = X_train, X_test
        self.y_train, self.classify, self.text = y_train, classify, text
        self.names = list(X_train.columns)
        self.keep = False
        self._kept = {}

    def __getitem__(self, column):
        if column in self._kept:
            return self._kept[column]
        encoded = _encoded(self.X_train[column], self.X_test[column], self.y_train,
                           self.classify, str(column) in self.text)
        if self.keep:
            self._kept[column] = encoded
        return encoded

    def values(self, columns):
        """The columns' values side by side: (train, test)."""
        parts = [self[c] for c in columns]
        return (np.column_stack([part[0] for part in parts]),
                np.column_stack([part[1] for part in parts]))

    def same_order(self, column, other) -> bool:
        """Whether two columns hold the same values in another scale: their training
        values in the same or the reverse order (|Spearman| at least :data:`COPY`),
        grams and pounds, or a status and its recoding."""
        mine, theirs = pd.Series(self[column][0]), pd.Series(self[other][0])
        both = mine.notna() & theirs.notna()
        if both.sum() < 2 or mine[both].nunique() < 2:
            return False
        return abs(mine[both].corr(theirs[both], method="spearman")) >= COPY

    def inputs(self, columns):
        """What a tree on these columns reads (:func:`_with_indicators`)."""
        return _with_indicators(*self.values(columns))


def _with_indicators(train, test):
    """The columns' values, then the missing indicator of each column with missing
    values (where it was filled in may be the leak)."""
    gaps = np.isnan(train).any(axis=0) | np.isnan(test).any(axis=0)
    if not gaps.any():
        return train, test
    return (np.column_stack([train, np.isnan(train[:, gaps])]),
            np.column_stack([test, np.isnan(test[:, gaps])]))


def _redundant(columns, column, copies, y_train, y_test, classify, error,
               random_state) -> bool:
    """Whether the other columns together predict the held-out target about as well as
    ``column`` alone (relative error within :data:`REDUNDANT` of its ``error``): then the
    column's skill is shared by honest ones (iris's petal length and width), not what
    a column recorded after the outcome gives. A leak's other columns fall far short.
    The column's ``copies`` are not among the others."""
    others = [c for c in columns.names if c != column and c not in copies]
    if not others:
        return False
    predicted = _fit_predict(*columns.values(others), y_train, classify, random_state)
    return _errors(y_test, predicted, classify)[0] <= error + REDUNDANT


def _leaked_set(columns, twins, alone, y_train, y_test, classify, model_error,
                near_perfect, near_model, random_state):
    """A set of columns that together do what no other column can (the module's rule,
    'A leak in several columns'): ``(members, error, upper, score, rest_score)``, or
    None. ``twins``: the near-perfect columns that hid each other, or None to search."""

    def fit(members):
        predicted = _fit_predict(*columns.inputs(members), y_train, classify, random_state)
        return _errors(y_test, predicted, classify)

    def near(error, upper):
        return error <= near_perfect / 2 and upper <= near_perfect and (
            model_error is None or error <= model_error + near_model)

    if twins is not None:
        members = list(twins)
        error, upper, score = fit(members)
    else:
        if model_error is not None and model_error > near_perfect:
            return None  # a model this far from perfect holds no leak to find
        if model_error is None and not near(*fit(columns.names)[:2]):
            return None
        strongest = sorted(alone, key=lambda c: alone[c][0])[:SEARCH]
        if not strongest:
            return None
        members = strongest[:1]
        error, upper, score = alone[members[0]]
        while not near(error, upper) and len(members) < MAX_SET:
            trials = [(fit(members + [c]), c) for c in strongest if c not in members]
            if not trials:
                break
            (error, upper, score), best = min(trials, key=lambda trial: trial[0][0])
            members.append(best)
    rest = [c for c in columns.names if c not in members]
    if len(members) < 2 or not rest or not near(error, upper):
        return None
    rest_error, _, rest_score = _errors(
        y_test, _fit_predict(*columns.values(rest), y_train, classify, random_state),
        classify)
    if rest_error <= error + REDUNDANT:
        return None  # the other columns share it: strong, not leaked
    return members, error, upper, score, rest_score


def relative_error(score, task, y_test=None):
    """The error left relative to a constant's, from a held-out score: 0 perfect, 1 a
    constant's. Balanced accuracy over K classes (K from ``y_test``, else 2):
    ``(1 - score) / (1 - 1/K)``; R²: ``sqrt(max(0, 1 - score))``."""
    if task == "classification":
        k = 2 if y_test is None else len(np.unique(y_test))
        return (1.0 - score) / (1.0 - 1.0 / k)
    return np.sqrt(max(0.0, 1.0 - score))


def _encoded(train: pd.Series, test: pd.Series, y_train, classify, text):
    """Both parts of a column as float64 (NaN missing); categories coded in the order of
    their training rows' majority class / mean target, unseen categories missing."""
    if not text:
        return numeric_values(train), numeric_values(test)
    train = train.astype(object).where(train.notna(), None)
    test = test.astype(object).where(test.notna(), None)
    keys = train.map(_key)
    present = keys.notna().to_numpy()
    frame = pd.DataFrame({"key": keys[present].to_numpy(), "y": y_train[present]})
    if classify:
        counts = pd.crosstab(frame["key"], frame["y"])
        share = counts.to_numpy() / counts.to_numpy().sum(axis=1, keepdims=True)
        majority = share.argmax(axis=1)
        order = np.lexsort((-share.max(axis=1), majority))
        levels = counts.index[order]
    else:
        levels = frame.groupby("key")["y"].mean().sort_values(kind="stable").index
    codes = {level: float(i) for i, level in enumerate(levels)}
    return (keys.map(codes).to_numpy(dtype=np.float64, na_value=np.nan),
            test.map(_key).map(codes).to_numpy(dtype=np.float64, na_value=np.nan))


def _key(value):
    """A category's key: its text (so 1 and "1" from two parts of a file agree)."""
    return None if value is None else str(value)


def _fit_predict(train, test, y_train, classify, random_state):
    learner = DecisionTreeClassifier if classify else DecisionTreeRegressor
    tree = learner(max_depth=DEPTH, min_samples_leaf=MIN_LEAF, random_state=random_state)
    return tree.fit(train, y_train).predict(test)


def _errors(y_test, predicted, classify):
    """(relative error, its one-sided upper confidence bound, score) on the held-out
    rows. Balanced accuracy: the mean of the per-class error rates, its variance summed
    over the classes with each rate taken as (errors + 1) / (rows + 2) so that a class
    without errors still counts its few rows. R²: the delta method on the log of the
    ratio of mean squared residual to mean squared deviation."""
    z = norm.ppf(CONFIDENCE)
    if classify:
        classes = np.unique(y_test)
        k = len(classes)
        rows = np.array([np.sum(y_test == c) for c in classes], dtype=np.float64)
        errors = np.array([np.sum((y_test == c) & (predicted != c)) for c in classes],
                          dtype=np.float64)
        balanced_error = float(np.mean(errors / rows))
        smooth = (errors + 1) / (rows + 2)
        sd = np.sqrt(np.sum(smooth * (1 - smooth) / rows)) / k
        scale = 1.0 - 1.0 / k
        return (balanced_error / scale, (balanced_error + z * sd) / scale,
                1.0 - balanced_error)
    residual = (y_test - predicted) ** 2
    deviation = (y_test - y_test.mean()) ** 2
    a, b = residual.mean(), deviation.mean()
    if b == 0:
        return np.inf, np.inf, np.nan
    ratio = a / b
    score = 1.0 - ratio
    if a == 0:
        return 0.0, 0.0, score
    n = len(y_test)
    cov = np.cov(residual, deviation)
    var_log = (cov[0, 0] / a ** 2 + cov[1, 1] / b ** 2 - 2 * cov[0, 1] / (a * b)) / n
    upper = ratio * np.exp(z * np.sqrt(max(var_log, 0.0)))
    return float(np.sqrt(ratio)), float(np.sqrt(upper)), float(score)


def _finding(name, score, score_name, n_test, error, upper, missing_share, indicator_score,
             model_score, model_error, near_perfect, near_model, copies=()):
    message = (f"{quoted(name)} alone predicts the held-out target almost perfectly "
               f"({score_name} {score:.3f} on {n_test:,} held-out rows, a depth-{DEPTH} "
               "tree on this column only")
    if copies:
        message += (f"; {_and([quoted(c) for c in copies])} "
                    f"{'holds' if len(copies) == 1 else 'hold'} the same values in "
                    "another scale")
    if model_score is not None:
        message += f"; the whole model: {float(model_score):.3f}"
    message += ")"
    if indicator_score is not None and indicator_score >= score - 0.01:
        message += (f"; whether it is missing ({missing_share:.0%} of training rows) "
                    f"carries it: {score_name} {indicator_score:.3f} from that alone")
    message += (": check that it is not derived from the target or recorded after it." if
                not copies else ": check that they are not derived from the target or "
                "recorded after it.")
    return Finding(
        kind="leakage", features=(name, *copies), message=message,
        details={"score": float(score), "score_name": score_name, "n_test": int(n_test),
                 "relative_error": float(error), "relative_error_upper": float(upper),
                 "copies": list(copies), "missing_share": missing_share,
                 "indicator_score": None if indicator_score is None else float(
                     indicator_score),
                 "model_score": None if model_score is None else float(model_score),
                 "model_relative_error": model_error,
                 "near_perfect": near_perfect, "near_model": near_model})


def _set_finding(leaked, alone, score_name, n_test, model_score, model_error, near_perfect,
                 near_model):
    members, error, upper, score, rest_score = leaked
    names = [str(c) for c in members]
    each = ", ".join(f"{quoted(str(c))} {alone[c][2]:.3f}" for c in members)
    message = (f"{_and([quoted(n) for n in names])} together predict the held-out target "
               f"almost perfectly ({score_name} {score:.3f} on {n_test:,} held-out rows, a "
               f"depth-{DEPTH} tree on these columns only; alone: {each}; every other "
               f"column together: {rest_score:.3f}")
    if model_score is not None:
        message += f"; the whole model: {float(model_score):.3f}"
    message += ("): no other column does what they do, so one column hides another from "
                "the check of each column alone: check that none of them is derived from "
                "the target or recorded after it.")
    return Finding(
        kind="leakage", features=tuple(names), message=message,
        details={"score": float(score), "score_name": score_name, "n_test": int(n_test),
                 "relative_error": float(error), "relative_error_upper": float(upper),
                 "alone": {str(c): float(alone[c][2]) for c in members},
                 "rest_score": float(rest_score),
                 "model_score": None if model_score is None else float(model_score),
                 "model_relative_error": model_error,
                 "near_perfect": near_perfect, "near_model": near_model})


def _and(items) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
