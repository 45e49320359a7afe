"""What a run concludes: its warnings and the closing verdict, each backed by intervals.

The warnings are :class:`sapwood.diagnostics.Finding` objects (``kind``, ``features``,
``message``). ``identifier``, ``leakage`` and ``correlated`` come from
:mod:`sapwood.diagnostics`; this module adds the two that depend on which measures the
command line ran:

``disagreement``
    A training-data measure (MDI, split gain, Friedman) ranks feature j significantly
    above a feature k the model demonstrably relies on (see :func:`standing`), while j's
    held-out importance interval (the verdict's, over new rows) covers zero. Features in
    a correlated group are left to the ``correlated`` warning: there permutation loses
    credit for a reason that has nothing to do with MDI's bias. The cause is named when
    the data show it: high cardinality (j has at least :data:`MIN_CARDINALITY` distinct
    training values and :data:`CARDINALITY_RATIO` times as many as the features it
    outranks) or training-data overfit (training score at least :data:`OVERFIT_GAP`
    above the held-out score).
``small-data``
    Fewer than :data:`SMALL_HELD_OUT` held-out rows (or none held out).

The verdict sorts the features by the held-out measure it rests on (:func:`standing`),
from an interval of each importance over new rows (:func:`verdict_interval`): the
per-row draws the measure's rank intervals already rest on, not the ``ci_low`` /
``ci_high`` of its repeats or trees, which cover the shuffles or the trees only and let
test-set noise pass for reliance. Every rule and threshold, and the simulation that
checks them, is written out in ``docs/measures.md`` ("Warnings", "The verdict").
"""

from __future__ import annotations

import dataclasses
from contextlib import nullcontext

import numpy as np

from sapwood.diagnostics import (
    Finding,
    find_correlated,
    find_identifiers,
    find_leakage,
    find_repeated_units,
    find_survival_leakage,
)
from sapwood.importance._registry import ROWS

from .._progress import _Steps
from .._text import quoted, shorten
from ._agreement import significantly_above
from ._baseline import baseline_warning
from ._intervals import Interval, verdict_interval
from ._joint import with_joint
from ._measures import MEASURES, where
from ._models import score_model

__all__ = ["CHECK_ROWS", "Interval", "TrainingScore", "Verdict", "check_rows", "disagreement",
           "find_warnings", "small_data", "standing", "verdict", "verdict_interval",
           "verdict_measure", "verdict_measures"]

# An importance below this share of the largest one is negligible.
NEGLIGIBLE = 0.01
# A held-out accuracy drop must change the prediction of at least this many rows (net)
# to count: with m rows turned wrong and none turned right, the two-sided sign test
# (McNemar's exact test) rejects at 5% only from m = 6 (2 * 0.5**6 = 0.031). The t
# interval of the per-row draws is no guide there: it would rest on a normal
# approximation of a handful of nonzero draws.
MIN_NET_ROWS = 6
SMALL_HELD_OUT = 100
# Claiming a feature does not matter needs more rows than claiming it does: a small
# effect hides easily in a small sample, where the per-row draws of a rarely changed
# prediction are mostly zero and their t interval too narrow.
MIN_ROWS_FOR_ABSENCE = 500
MIN_CARDINALITY = 10
CARDINALITY_RATIO = 4
OVERFIT_GAP = 0.1
# Above this many training rows, the checks that fit or predict on them (the leakage
# check's one-column trees, the training score of the overfitting cause) read a seeded
# sample of this many: their answer hardly moves past it, while their time grows with
# the rows (the bound the default forest draws its rows by, for the same reason).
CHECK_ROWS = 100_000
# The checks' units of work besides the leakage check's one per column: the identifiers,
# the associations, the groups' joint importance.
CHECK_UNITS = 3


def check_rows(n_rows: int, seed: int) -> np.ndarray | None:
    """The positions of the training rows the leakage check and the training score read:
    None (all of them) up to :data:`CHECK_ROWS`, else a sample of that many drawn
    without replacement with ``seed``, in table order."""
    if n_rows <= CHECK_ROWS:
        return None
    return np.sort(np.random.default_rng(seed).choice(n_rows, CHECK_ROWS, replace=False))


def _rows_of(values, rows):
    if rows is None:
        return values
    return values.iloc[rows] if hasattr(values, "iloc") else np.asarray(values)[rows]


def _sample_note(n_rows: int) -> str:
    return (f"the warnings' checks that fit or predict on the training rows (the leakage "
            f"check's one-column trees, and the training score the disagreement warning "
            f"compares when it names overfitting) read a seeded sample of {CHECK_ROWS:,} "
            f"of the {n_rows:,} training rows, sapwood's default above {CHECK_ROWS:,}: "
            "on every row those warnings' numbers could differ slightly "
            "(docs/getting-started.md, section 'Large tables')")


class TrainingScore:
    """The model's score on its training rows (by ``scoring``, a scorer name, or the
    model's own), made the first time :attr:`value` is read: only the disagreement
    warning's overfitting cause reads it, and it predicts every training row, longer
    than the held-out score takes. Above :data:`CHECK_ROWS` training rows it is the
    score on the sample of :func:`check_rows` (:attr:`rows` says which rows)."""

    def __init__(self, model, X, y, task: str, scoring=None, *, seed: int = 0):
        self.model, self.X, self.y = model, X, y
        self.task, self.scoring = task, scoring
        self.sample = check_rows(len(X), seed)
        self._value = None

    @property
    def rows(self) -> str:
        """The rows scored, as the warning names them."""
        if self.sample is None:
            return "its training rows"
        return f"a sample of {len(self.sample):,} of its {len(self.X):,} training rows"

    @property
    def value(self) -> float:
        if self._value is None:
            self._value = score_model(self.model, _rows_of(self.X, self.sample),
                                      _rows_of(self.y, self.sample), self.task,
                                      self.scoring)
        return self._value


class _DistinctCounts:
    """Feature -> its distinct training values, counted when first asked for: the
    disagreement warning reads them only for the features it names."""

    def __init__(self, X):
        self.X = X
        self.columns = {str(column): column for column in X.columns}
        self.counts = {}

    def get(self, name, default=0):
        if name not in self.columns:
            return default
        if name not in self.counts:
            self.counts[name] = int(self.X[self.columns[name]].nunique())
        return self.counts[name]


@dataclasses.dataclass(frozen=True)
class Verdict:
    """Where each feature stands by the held-out measure ``measure`` (None: no such
    measure ran), the correlated groups, the warnings' kinds, and the summary lines."""

    measure: str | None
    relies_on: list
    does_not: list
    uncertain: list
    entangled: list
    warnings: list
    lines: list
    # Every feature placed: {"feature", "status" (relies_on, uncertain, does_not),
    # "importance", "low", "high" (the 95% interval over new rows that decides it),
    # "group" (its entangled group or None), "through_group" (relied on only as part
    # of a group whose joint interval lies above zero)}, in the verdict measure's order.
    features: list = dataclasses.field(default_factory=list)
    # Each entangled group: {"features", "joint_importance", "low", "high", "covers"}.
    groups: list = dataclasses.field(default_factory=list)

    @property
    def order(self) -> list:
        return [entry["feature"] for entry in self.features]

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def standing(result, *, n_rows=None, accuracy=False, used=None, name="permutation") -> dict:
    """Feature -> ``"relies"``, ``"not"`` or ``"uncertain"`` by the 95% interval over
    new rows (:func:`verdict_interval`) of the held-out measure ``name``, whose value is
    zero for a feature the model does not use.

    relies: the interval is above zero and the importance is at least
    :data:`NEGLIGIBLE` of the largest; for an accuracy drop on ``n_rows`` rows, also
    at least :data:`MIN_NET_ROWS` rows' worth. not: the model never splits on the
    feature (``used``), or the whole interval is below :data:`NEGLIGIBLE` of the
    largest importance, on at least :data:`MIN_ROWS_FOR_ABSENCE` rows, and for an accuracy
    drop even after adding 3/``n_rows`` (no changed row among n still allows a change
    rate up to 3/n at 95%: the rule of three). uncertain: anything else, and every
    feature the model splits on when the measure has no interval over new rows (an
    interval over the shuffles alone calls test-set noise reliance: docs/measures.md,
    "The verdict").
    """
    mean = result.importances_mean
    interval = verdict_interval(name, result)
    low, high = interval.low, interval.high
    top = max(float(np.nanmax(mean)), 0.0) if np.isfinite(mean).any() else 0.0
    floor = NEGLIGIBLE * top
    granularity = 3 / n_rows if accuracy and n_rows else 0.0
    enough_rows = n_rows is None or n_rows >= MIN_ROWS_FOR_ABSENCE
    out = {}
    for j, feature in enumerate(result.feature_names):
        if used is not None and used.get(feature) is False:
            out[feature] = "not"
        elif not (interval.rows and np.isfinite(low[j]) and np.isfinite(high[j])):
            out[feature] = "uncertain"
        elif low[j] > 0 and mean[j] >= floor and (
                not accuracy or n_rows is None or mean[j] * n_rows >= MIN_NET_ROWS):
            out[feature] = "relies"
        elif enough_rows and high[j] + granularity < floor:
            out[feature] = "not"
        else:
            out[feature] = "uncertain"
    return out


def verdict_measures() -> list:
    """The measures a verdict can rest on (their record gives ``"verdict"``: each reports
    an interval per feature and is zero for a feature the model does not use), in order
    of preference: by the rows they read, nearest to new data first (the order of
    ``ROWS``: held-out, out-of-bag, ..., refits), then as registered."""
    kinds = list(ROWS)
    named = [name for name, measure in MEASURES.items() if "verdict" in measure.gives]
    return sorted(named, key=lambda name: kinds.index(MEASURES[name].rows))


def verdict_measure(results: dict) -> str | None:
    """The first of :func:`verdict_measures` that ran with an interval over new rows
    (:func:`verdict_interval`), else the first that ran with any interval."""
    ran = [name for name in verdict_measures() if results.get(name) is not None]
    for rows in (True, False):
        for name in ran:
            interval = verdict_interval(name, results[name])
            if interval.rows == rows and np.isfinite(interval.low).any():
                return name
    return None


def _standing_of(run_like) -> dict | None:
    name = verdict_measure(run_like.results)
    if name is None:
        return None
    # A measure of the held-out rows by the run's score: an accuracy drop there counts
    # changed predictions among n_test rows.
    scored = MEASURES[name].rows == "held-out"
    accuracy = scored and getattr(run_like, "score_name", "") == "accuracy"
    n_rows = run_like.n_test if scored else None
    return standing(run_like.results[name], n_rows=n_rows, accuracy=accuracy,
                    used=_used(run_like.results) or None, name=name)


def disagreement(trained, held, standings: dict, *, n_distinct: dict, correlated: set,
                 train_score=None, test_score=None, name: str = "mdi",
                 held_name: str = "permutation") -> Finding | None:
    """The ``disagreement`` warning between a training-data measure ``trained`` (the
    registry's ``name``) and a held-out one ``held`` (``held_name``; both
    :class:`ImportanceResult`), or None. ``train_score``: a number, or a
    :class:`TrainingScore` (made only when the warning is raised)."""
    names = trained.feature_names
    above = significantly_above(trained, name)
    interval = verdict_interval(held_name, held)
    relied = [k for k, feature in enumerate(names) if standings.get(feature) == "relies"]
    flagged = []
    for j, feature in enumerate(names):
        if feature in correlated or not interval.low[j] <= 0:
            continue
        outranked = [k for k in relied if above[j, k]]
        if outranked:
            flagged.append((j, outranked))
    if not flagged:
        return None
    t_label = MEASURES[name].title
    h_label = held_name
    ranks = trained.ranks()
    intervals = trained.rank_intervals()
    outranked = sorted({k for _, ks in flagged for k in ks},
                       key=lambda k: -held.importances_mean[k])
    ranked = [f"{quoted(names[j])} #{ranks[j]} of {len(names)}" + (
        "" if intervals is None else
        f" (95% rank interval {intervals.low[j]}-{intervals.high[j]})") for j, _ in flagged]
    values = [f"{quoted(names[j])} {_g(held.importances_mean[j])}, {_g(interval.low[j])} to "
              f"{_g(interval.high[j])}" for j, _ in flagged]
    message = (f"{t_label} and {h_label} disagree beyond their uncertainty: {t_label} "
               f"ranks {_and(ranked)}, significantly above "
               f"{_and([quoted(names[k]) for k in outranked[:3]])}"
               f"{' and others' if len(outranked) > 3 else ''}, which the model clearly "
               f"relies on, while their {h_label} importances' 95% intervals (over "
               f"{interval.covers}) include zero ({'; '.join(values)}).")
    causes = []
    for j, ks in flagged:
        mine = n_distinct.get(names[j], 0)
        theirs = float(np.median([n_distinct.get(names[k], 0) for k in ks]))
        if mine >= MIN_CARDINALITY and mine >= CARDINALITY_RATIO * max(theirs, 1):
            causes.append(f"high cardinality ({quoted(names[j])} has {mine:,} distinct training "
                          f"values against a median of {theirs:,.0f} for the features it "
                          f"outranks; {t_label} favours features with many split points)")
    scored_rows = "its training rows"
    if isinstance(train_score, TrainingScore):
        scored_rows = train_score.rows
        train_score = train_score.value if test_score is not None else None
    if (train_score is not None and test_score is not None
            and train_score - test_score >= OVERFIT_GAP):
        causes.append(f"training-data overfit (the model scores {train_score:.3f} on "
                      f"{scored_rows} against {test_score:.3f} held out, and {t_label} is "
                      "measured on the training rows)")
    if causes:
        message += f" Likely cause{'s' if len(causes) > 1 else ''}: " + "; ".join(causes) + "."
    message += f" Trust {h_label} for what the model uses on new rows."
    kinds = sorted({"high cardinality" if c.startswith("high") else "training-data overfit"
                    for c in causes})
    return Finding(kind="disagreement", features=tuple(names[j] for j, _ in flagged),
                   message=message,
                   details={"training_measure": name, "held_out_measure":
                            h_label, "causes": kinds})


def small_data(n_test: int, held_out: bool, score_name: str) -> Finding | None:
    """The ``small-data`` warning, or None."""
    if not held_out:
        return Finding(kind="small-data", features=(), message=(
            "No rows were held out: the measures are computed on the rows the model was "
            "trained on, so their intervals say nothing about new data."),
            details={"n_test": 0})
    if n_test >= SMALL_HELD_OUT:
        return None
    text = (f"Only {n_test} held-out rows (fewer than {SMALL_HELD_OUT}): the choice of "
            "rows moves every held-out importance at this size, which the 95% CI column of "
            "held-out permutation does not show (it covers the shuffles; the rank "
            "intervals and the verdict include the rows)")
    if score_name == "accuracy":
        text += (f"; an accuracy drop below {MIN_NET_ROWS}/{n_test} = "
                 f"{MIN_NET_ROWS / n_test:.3f} cannot be told from chance")
    return Finding(kind="small-data", features=(), message=text + ". Use more data, or "
                   "read every ranking here as tentative.", details={"n_test": n_test})


def _ordered(identifier: Finding, standings: dict) -> Finding:
    """An identifier the model relies on for rows it was not trained on predicts by the
    rows' order: say so, as memorising rows cannot explain it."""
    (name,) = identifier.features
    if standings.get(name) != "relies":
        return identifier
    return dataclasses.replace(
        identifier, message=identifier.message + (
            f" Yet the model relies on {quoted(name)} for the held-out rows too: the rows' "
            "order carries the target (a file sorted by it, or a trend over time), which "
            "new rows in another order will not follow."),
        details={**identifier.details, "predicts_held_out": True})


def find_warnings(run_like, *, X_train, y_train, X_test, y_test, encodings, model,
                  train_score=None, split=True, predictions=None, steps=None) -> list:
    """Every warning that applies to a finished run, in the order they are shown.

    ``train_score``: None, a number or a :class:`TrainingScore`. ``predictions``: the
    model's :class:`~sapwood.report._models.KeptPredictions` of ``X_test``, if any. Above
    :data:`CHECK_ROWS` training rows the leakage check fits on a sample of them
    (:func:`check_rows`), which a note in ``run_like.notes`` says. ``steps``: a
    progress bar's steps (:data:`CHECK_UNITS` and one per column), or None."""
    steps = steps if steps is not None else _Steps()
    results = run_like.results
    standings = _standing_of(run_like) or {}
    found = []
    skill = baseline_warning(getattr(run_like, "baseline", None), run_like.score_name,
                             run_like.score, run_like.n_test)
    if skill is not None:
        found.append(skill)
    used = _used(results)
    found += [_ordered(finding, standings)
              for finding in find_identifiers(X_train, categorical=tuple(encodings),
                                              used=used)]
    found += _repeated_units(run_like, used)
    steps.advance()
    if run_like.held_out and split and run_like.task == "survival":
        sample = check_rows(len(X_train), run_like.seed)
        found += find_survival_leakage(_rows_of(X_train, sample), _rows_of(y_train, sample),
                                       X_test, y_test, categorical=tuple(encodings),
                                       random_state=run_like.seed)
    elif run_like.held_out and split:
        with predictions if predictions is not None else nullcontext():
            model_score = _leakage_score(model, X_test, y_test, run_like.task)
        sample = check_rows(len(X_train), run_like.seed)
        if sample is not None:
            _note(run_like, _sample_note(len(X_train)))
        found += find_leakage(_rows_of(X_train, sample), _rows_of(y_train, sample), X_test,
                              y_test, run_like.task, model_score=model_score,
                              categorical=tuple(encodings), random_state=run_like.seed,
                              steps=steps)
    else:
        steps.advance(X_train.shape[1])
    matters = {name: used.get(name, True) or standings.get(name) == "relies"
               for name in X_train.columns}
    groups = find_correlated(X_train, categorical=tuple(encodings), importance=matters)
    steps.advance()
    found += with_joint(groups, model, X_test, y_test, run_like)
    steps.advance()
    correlated = {name for finding in groups for name in finding.features}
    held_name = verdict_measure(results)
    if run_like.held_out and held_name is not None:
        n_distinct = _DistinctCounts(X_train)
        for name, result in results.items():
            if MEASURES[name].rows != "train":
                continue
            finding = disagreement(result, results[held_name], standings,
                                   n_distinct=n_distinct, correlated=correlated,
                                   train_score=train_score,
                                   test_score=run_like.score if getattr(
                                       run_like, "accuracy", None) is None
                                   else run_like.accuracy,
                                   name=name, held_name=held_name)
            if finding is not None:
                found.append(finding)
    small = small_data(run_like.n_test, run_like.held_out, run_like.score_name)
    if small is not None:
        found.append(small)
    return found


def _repeated_units(run_like, used) -> list:
    """The ``repeated units`` warnings of a run whose rows were split at random (no
    groups, no time order), on the table in its own row order, for columns the model
    uses."""
    data = getattr(run_like, "data", None)
    if data is None or getattr(run_like, "split", None) or not run_like.held_out:
        return []
    import shlex

    def command(name):
        if run_like.source:
            return (f"sapwood explain {shlex.quote(str(run_like.source))} --target "
                    f"{shlex.quote(data.target)} --groups {shlex.quote(name)}")
        return f"sapwood.explain(..., groups={name!r})"

    return [finding for finding in find_repeated_units(data.X, command=command)
            if used.get(finding.features[0], True)]


def _note(run_like, text: str) -> None:
    """Add ``text`` to the run's notes once (the warnings may be found again)."""
    notes = getattr(run_like, "notes", None)
    if notes is not None and text not in notes:
        notes.append(text)


def _leakage_score(model, X_test, y_test, task):
    """The model's held-out score in find_leakage's metric (balanced accuracy, R²), or
    None when its predictions cannot be had."""
    from sklearn.metrics import balanced_accuracy_score, r2_score

    try:
        predicted = model.predict(X_test)
        if task == "classification":
            return float(balanced_accuracy_score(np.asarray(y_test), np.asarray(predicted)))
        return float(r2_score(y_test, predicted))
    except (ValueError, TypeError):
        return None


def _used(results: dict) -> dict:
    """Feature -> whether the model splits on it, from a training-data measure (an
    unused feature has no impurity decrease or gain); everything when none ran."""
    for name, result in results.items():
        if MEASURES[name].rows == "train":
            return {f: bool(v > 0) for f, v in zip(result.feature_names,
                                                   result.importances_mean, strict=True)}
    return {}


def verdict(run_like, warnings: list) -> Verdict:
    """The closing summary: what the model clearly relies on, what it clearly does
    not, what is uncertain and what is entangled, and which warnings apply."""
    name = verdict_measure(run_like.results)
    groups = [f for f in warnings if f.kind == "correlated"]
    entangled = [list(f.features) for f in groups]
    kinds = list(dict.fromkeys(f.kind for f in warnings))
    groups_out = [_group(f) for f in groups]
    if name is None:
        lines = ["Verdict: none of the measures run is a held-out measure with intervals "
                 f"({', '.join(verdict_measures())}), so no claim here rests on new data; "
                 "add --methods permutation."]
        first = next(iter(run_like.results.values()))
        features = [_placed(f, "uncertain", None, None, None, entangled)
                    for f in first.feature_names]
        return Verdict(None, [], [], [], entangled, kinds, lines + _warning_line(warnings),
                       features, groups_out)
    standings = _standing_of(run_like)
    baseline = next((f for f in warnings if f.kind == "baseline"), None)
    no_skill = baseline is not None
    # A model not shown to beat a constant relies on nothing (docs/measures.md); the
    # features whose intervals lie above zero are not decided, and say so.
    undecided = [f for f, s in standings.items() if s == "relies"] if no_skill else []
    if no_skill:
        standings = {f: "uncertain" if s == "relies" else s for f, s in standings.items()}
    result = run_like.results[name]
    interval = verdict_interval(name, result)
    in_group = {feature for group in entangled for feature in group}
    order = result.to_frame()["feature"].tolist()
    index = {feature: j for j, feature in enumerate(result.feature_names)}
    relies = [f for f in order if standings[f] == "relies"]
    # A feature of a correlated group may look unused alone: the group speaks for it.
    does_not = [f for f in order if standings[f] == "not" and f not in in_group]
    uncertain = [f for f in order if standings[f] == "uncertain" and f not in in_group]
    undecided = [f for f in order if f in undecided]
    jointly = {f for g in groups_out if g["low"] is not None and g["low"] > 0
               for f in g["features"]} if interval.rows and not no_skill else set()
    status = {"relies": "relies_on", "not": "does_not", "uncertain": "uncertain"}
    features = []
    for f in order:
        j = index[f]
        placed = status[standings[f]]
        through = placed != "relies_on" and f in jointly
        features.append(_placed(f, "relies_on" if through else placed,
                                result.importances_mean[j], interval.low[j],
                                interval.high[j], entangled, through))
    lines = [f"Verdict ({name} importance {where(name, run_like.held_out)}; 95% "
             f"intervals over {interval.covers}):"]
    through = [e["feature"] for e in features if e["through_group"]]
    if no_skill:
        relied = _no_skill_text(baseline.details)
    elif interval.rows:
        # A key relied on for held-out rows predicts by the rows' order (its warning).
        leaks = {f.features[0] for f in warnings
                 if f.kind == "identifier" and f.details.get("predicts_held_out")}
        keys = [f"{shorten(name)} (a key: the rows' order)" for name in relies
                if name in leaks]
        others = [name for name in relies if name not in leaks]
        relied = ", ".join(keys + ([_names(others)] if others else [])) or (
            "no single feature (no interval lies above zero by a non-negligible amount)")
        if through:
            relied += f"; through their group: {_names(through)}"
    else:
        # Test-set noise would pass for reliance (docs/measures.md, "The verdict").
        lines.append("- These intervals do not cover new rows, so they decide nothing; "
                     "only features the model never splits on are called unused.")
        relied = "not decided (no interval over new rows)"
    lines.append("- The model clearly relies on: " + relied)
    if does_not:
        # "or negligibly": a tiny effect can be significant and still not matter.
        lines.append(f"- It does not rely on, or negligibly: {_names(does_not)} (never "
                     f"split on, or the whole interval below {NEGLIGIBLE:.0%} of the top "
                     "importance)")
    # An interval wholly below zero: shuffling the feature improved the score.
    below = [f for f in uncertain if interval.rows and interval.high[index[f]] < 0]
    unclear = [f for f in uncertain if f not in below and f not in undecided]
    if unclear:
        lines.append(f"- Uncertain: {_names(unclear)} (" + (
            "the interval includes zero or a negligible effect" if interval.rows else
            "no interval over new rows") + ")")
    if undecided:
        whose = "their intervals lie" if len(undecided) > 1 else "its interval lies"
        lines.append(f"- Above zero, not decided: {_names(undecided)} ({whose} above zero, "
                     "but the model is not shown to beat a constant)")
    if below:
        lines.append(f"- Better shuffled: {_names(below)} (the whole interval below zero: "
                     "the model does better without their values; noise it fits, or "
                     "chance)")
    for group in groups:
        text = f"- Entangled: {_names(group.features)} (strongly associated; read them as a group"
        if "joint_importance" in group.details:
            d = group.details
            text += (f": shuffled together {_g(d['joint_importance'])}, 95% interval "
                     f"{_g(d['joint_ci_low'])} to {_g(d['joint_ci_high'])} over "
                     f"{d['joint_interval_covers']}")
            if not d["joint_ci_low"] > 0:
                text += "; not distinguishable from zero even together"
        lines.append(text + ")")
    lines += _warning_line(warnings)
    return Verdict(name, relies, does_not, uncertain, entangled, kinds, lines, features,
                   groups_out)


def _no_skill_text(details) -> str:
    """What the model relies on when it is not shown to beat a constant: nothing, in the
    words its interval allows ("no skill" only when the interval says so)."""
    what = "ROC AUC - 0.5" if details.get("test") == "roc_auc" else "its gain per row"
    interval = (f"the 95% interval of {what}, {_g(details['gain_low'])} to "
                f"{_g(details['gain_high'])}")
    if details.get("no_skill"):
        return ("nothing: the model has no skill to explain (no better than a constant "
                f"model on the held-out rows: {interval}, is at or below zero)")
    return ("nothing yet: the model is not shown to be better than a constant model on "
            f"the held-out rows ({interval}, includes zero)")


def _placed(feature, status, importance, low, high, entangled, through=False) -> dict:
    group = next((list(g) for g in entangled if feature in g), None)
    return {"feature": feature, "status": status, "importance": _float(importance),
            "low": _float(low), "high": _float(high), "group": group,
            "through_group": through}


def _group(finding) -> dict:
    d = finding.details
    return {"features": list(finding.features),
            "joint_importance": _float(d.get("joint_importance")),
            "low": _float(d.get("joint_ci_low")), "high": _float(d.get("joint_ci_high")),
            "covers": d.get("joint_interval_covers")}


def _float(value):
    if value is None:
        return None
    value = float(value)
    return value if np.isfinite(value) else None


def _warning_line(warnings) -> list:
    if not warnings:
        return ["- No warnings."]
    return ["- Warnings: " + "; ".join(
        f"{f.kind}" + (f" ({_names(f.features)})" if f.features else "") for f in warnings)]


# A verdict line names at most this many features, then counts the rest (the JSON and
# Report.verdict.features list them all).
MAX_NAMED = 10


def _names(names) -> str:
    names = list(names)
    shown = ", ".join(shorten(name) for name in names[:MAX_NAMED])
    return shown + (f" and {len(names) - MAX_NAMED:,} more" if len(names) > MAX_NAMED
                    else "")


def _and(items) -> str:
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _g(value) -> str:
    return f"{value:.3g}"
