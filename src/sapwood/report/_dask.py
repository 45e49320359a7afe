""":func:`~sapwood.explain` on a Dask DataFrame: what needs the rows at once runs in memory
on the rows that fit, what adds up over rows runs block by block on Dask's workers.

What runs where:

- **The split** of the rows into training and held-out ones, by a seeded draw per
  partition (``numpy.random.default_rng([random_state, partition number])``): it depends
  on the seed, ``test_size`` and the partitioning (the same table in other partitions is
  split differently). Rows whose target is missing are left out first.
- **The training rows in memory**: all of them, up to :data:`MAX_TRAIN_ROWS`; beyond, a
  seeded sample of that many (a note says so). The model is fit there as
  :func:`~sapwood.explain` fits it; the learners follow joblib's configuration, so under
  ``joblib.parallel_config(backend="dask")`` their trees are grown on the cluster.
- **The held-out rows in memory**: all of them, up to :data:`MAX_HELD_OUT_ROWS`; beyond,
  a seeded sample of that many. The in-memory run of :func:`~sapwood.explain` reads them:
  every measure but permutation, the warnings, the skill test against a constant model,
  and the per-row draws the intervals over new rows rest on.
- **On every held-out row, block by block**: the model's score, the constant model's
  score and permutation importance (:func:`~sapwood.importance.permutation_importance`
  on Dask input: the same permutations as in memory). They replace the in-memory run's,
  and the verdict and warnings are then drawn again. Only scores that add up over rows
  are computed so: the Brier score (a classifier's default, as in memory), log loss,
  accuracy, balanced accuracy, R² and the squared and absolute errors.

Where every held-out row is in memory, the model and the numbers are those of
:func:`~sapwood.explain` called on the same training and held-out rows in memory (a
permutation importance by accuracy bit for bit; by the Brier score, log loss, R² or an
error up to the order of a float sum). Where only a sample is, the intervals over new
rows take the sample's per-row spread around the importances of all the rows, so they
are as wide as for the sample's rows: conservative, as all the rows would narrow them.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd

from .._errors import InputError
from ..importance._engine._dask import is_dask_collection
from . import _agreement, _measures, _verdict
from ._data import MIN_PER_SIDE, detect_task, did_you_mean
from ._models import LoadedModel

__all__ = ["MAX_HELD_OUT_ROWS", "MAX_TRAIN_ROWS", "DaskHeldOut", "in_memory"]

# At most this many training rows are read into memory to fit the model; beyond, a
# seeded sample of this many.
MAX_TRAIN_ROWS = 1_000_000
# At most this many held-out rows are read into memory for what needs them there; beyond,
# a seeded sample of this many.
MAX_HELD_OUT_ROWS = 100_000
# The share of rows held out when test_size is None: explain's.
DEFAULT_TEST_SIZE = 0.25

# The working columns of the Dask table: the target, whether a row is held out, and a
# uniform draw that picks the in-memory samples.
_TARGET = "__sapwood_target__"
_HELD = "__sapwood_held_out__"
_KEY = "__sapwood_draw__"


@dataclasses.dataclass
class DaskHeldOut:
    """The held-out rows of a Dask table, and what :meth:`complete` computes on them."""

    rows: object  # Dask DataFrame: the held-out rows' features and _TARGET
    target: str
    scoring: str | None
    n_held_out: int
    n_in_memory: int
    notes: list

    def complete(self, report, steps):
        """Replace the in-memory run's held-out score, constant score and permutation
        importance in ``report`` by those of every held-out row, block by block, and draw
        the agreement, warnings and verdict again."""
        data = report.data
        in_test = data.X.index.isin(report.held_out_index)
        X_test, y_test = data.X[in_test], data.y[in_test]
        X_train, y_train = data.X[~in_test], data.y[~in_test]
        X, y = self._features(list(data.X.columns)), self._target(data)
        model = report.model
        with steps.step(f"Scoring on all {self.n_held_out} held-out rows, block by block "
                        "on Dask's workers"):
            # The model's own score (scoring None) is scikit-learn's accuracy or R².
            name = self.scoring or ("accuracy" if data.task == "classification" else "r2")
            # Beside a probability score, the accuracy, read in the same pass.
            names = [name] + (["accuracy"] if report.accuracy is not None else [])
            scores = _summed(model, X, y, names)
            constant = _summed(_constant(data.task, X_train if len(y_train) else X_test,
                                         y_train if len(y_train) else y_test), X, y,
                               [name])[name]
        report.score, report.n_test = scores[name], self.n_held_out
        if report.accuracy is not None:
            report.accuracy = scores["accuracy"]
        if report.baseline is not None:
            report.baseline = dataclasses.replace(report.baseline, score=constant)
        if "permutation" in report.results:
            report.results["permutation"] = self._permutation(
                model, report, X_train, y_train, X, y, steps)
        if data.X.shape[1] > 1:
            report.agreement = _agreement.agreement(report.results, report.top_k)
        train_score = None
        if report.fitted_here:
            # As in memory: the accuracy beside a probability score, to see overfitting,
            # made only if a warning reads it.
            train_score = _verdict.TrainingScore(
                model, X_train, y_train, data.task,
                None if report.accuracy is not None else self.scoring, seed=report.seed)
        with steps.step("Checking the warnings again with the held-out numbers"):
            given = len(y_train) > 0
            report.warnings = _verdict.find_warnings(
                report, X_train=X_train if given else X_test,
                y_train=y_train if given else y_test, X_test=X_test, y_test=y_test,
                encodings=data.encodings, model=model, train_score=train_score, split=given)
        report.verdict = _verdict.verdict(report, report.warnings)
        report.notes[:0] = self.notes + [
            f"the Data line counts the {len(data.y)} rows held in memory (training rows, "
            "then held-out ones), not the Dask table's"]

    def _features(self, columns):
        return self.rows[columns]

    def _target(self, data):
        y = self.rows[_TARGET].rename(self.target)
        if data.task == "regression":
            return y.astype("float64")
        if not pd.api.types.is_numeric_dtype(y.dtype):
            # Labels compared as text, as in memory; numpy's objects, which Dask hands
            # to the blocks as they are.
            return y.astype(str).astype(object)
        return y

    def _permutation(self, model, report, X_train, y_train, X, y, steps):
        """Permutation importance on every held-out row, with the intervals over new rows
        of the in-memory run's per-row draws."""
        name = "permutation"
        inputs = _measures.Inputs(X_train=X_train, y_train=y_train, X_test=X, y_test=y,
                                  random_state=report.seed, scoring=self.scoring,
                                  progress=steps.shown)
        label = (f"Computing {name} importance on all {self.n_held_out} held-out rows, "
                 "block by block on Dask's workers")
        try:
            with steps.line(label):
                result = _measures.compute(name, model, inputs)
        except (ValueError, TypeError) as error:
            raise InputError(f"cannot compute permutation importance block by block: "
                             f"{_first_line(error)}") from None
        in_memory = report.results[name]
        draws = in_memory.rank_draws
        if draws is not None:
            if self.n_in_memory < self.n_held_out:
                # The sample's spread around the importances of all the rows.
                draws = (draws - draws.mean(axis=1, keepdims=True)
                         + result.importances_mean[:, None])
                covers = (f"the held-out rows and the shuffles (the per-row draws of the "
                          f"{self.n_in_memory} held-out rows in memory, around the "
                          f"importances of all {self.n_held_out})")
            else:
                covers = in_memory.extra["intervals"]["rank"]
            intervals = {**result.extra["intervals"], "rank": covers}
            result = result.replace(rank_draws=draws,
                                    extra={**result.extra, "intervals": intervals})
        if in_memory.pvalues is not None:
            result = self._pvalues(result, in_memory, report)
        return result

    def _pvalues(self, result, in_memory, report):
        from sapwood import importance

        if report.pvalues == "janitza":
            try:
                return importance.janitza_pvalues(result)
            except ValueError:
                return result.replace(pvalues=in_memory.pvalues)
        report.notes.append(f"altmann p-values of permutation importance: those of the "
                            f"{self.n_in_memory} held-out rows in memory (each refit's "
                            "permutation importance is computed in memory)")
        return result.replace(pvalues=in_memory.pvalues)


def in_memory(X, y, X_train, y_train, *, model, fitted, test_size, scoring, task,
              random_state, rows, steps):
    """Split a Dask table and read into memory what :func:`~sapwood.explain` runs there.

    Returns ``(held_out, X, y, X_train, y_train, scoring)``: the :class:`DaskHeldOut`
    whose :meth:`~DaskHeldOut.complete` finishes the report, the held-out rows in memory,
    the training rows in memory (None for a fitted model without them) and the score to
    judge the model by."""
    if list([rows] if isinstance(rows, int | np.integer) else rows):
        raise InputError(f"rows: explaining rows by position is not offered for a Dask "
                         f"DataFrame; got rows={rows!r}")
    if not fitted and test_size == 0:
        raise InputError("test_size=0 with a Dask DataFrame: the held-out rows are scored "
                         "block by block, so some must be held out; give a share in (0, 1)")
    if isinstance(model, LoadedModel) and model.ensemble.categories is not None:
        raise InputError("a model that records categories needs its columns recoded as it "
                         "codes them, which is not offered for a Dask DataFrame")
    import dask

    scoring = _checked_scoring(scoring)
    seed = _seed(random_state)
    table, target = _table(X, y, "X", "y")
    if X_train is not None:
        share = 1.0  # X, y are the held-out rows
    elif fitted:
        share = 1.0 if not test_size else test_size
    else:
        share = DEFAULT_TEST_SIZE if test_size is None else test_size
    marked = _marked(table, share, seed)
    n_rows, n_kept, n_held = (int(n) for n in dask.compute(
        table.map_partitions(len).sum(), marked.map_partitions(len).sum(),
        marked[_HELD].sum()))
    n_train = n_kept - n_held
    notes = [f"a Dask DataFrame of {n_rows} rows in {table.npartitions} partitions"
             + (f" ({n_rows - n_kept} rows whose target is missing left out)"
                if n_kept < n_rows else "")]
    if X_train is None and share < 1:
        notes[0] += (f", split by a seeded draw per partition (random_state "
                     f"{random_state}, test_size {share:g}): {n_train} training rows, "
                     f"{n_held} held out")
        if n_train < MIN_PER_SIDE or n_held < MIN_PER_SIDE:
            raise InputError(f"too little data: test_size {share:g} of {n_kept} rows leaves "
                             f"{n_held} held out and {n_train} to train on; each side needs "
                             f"at least {MIN_PER_SIDE}")
    elif n_held < MIN_PER_SIDE:
        raise InputError(f"too little data: {n_held} held-out rows; at least {MIN_PER_SIDE} "
                         "are needed")
    if X_train is not None:
        X_train, y_train, how = _given_training(X_train, y_train, seed, steps)
    elif share < 1:
        with steps.step("Reading the training rows that fit into memory"):
            train, sampled = _read(marked[~marked[_HELD]], n_train, MAX_TRAIN_ROWS)
        X_train, y_train = _split_columns(train, target)
        how = (f"a seeded sample of {len(train)} of the {n_train} training rows (at most "
               f"{MAX_TRAIN_ROWS} are read into memory)" if sampled
               else f"all {n_train} training rows")
    if fitted:
        notes.append(f"the model was not trained here: it is scored and permuted on the "
                     f"{n_held} held-out rows, which is only honest if it was not trained "
                     "on them" + (f"; {how} are in memory for the measures that read "
                                  "training rows" if X_train is not None else ""))
    else:
        notes.append(f"the model was fit in memory on {how}{_where_fit()}")
    with steps.step("Reading the held-out rows that fit into memory"):
        held, sampled = _read(marked[marked[_HELD]], n_held, MAX_HELD_OUT_ROWS)
    n_in_memory = len(held)
    notes.append(f"on all {n_held} held-out rows, block by block on Dask's workers: the "
                 "model's score, the constant model's and permutation importance")
    notes.append((f"a seeded sample of {n_in_memory} of the {n_held} held-out rows "
                  f"(at most {MAX_HELD_OUT_ROWS} are read into memory)" if sampled
                  else f"all {n_held} held-out rows") + " in memory: for every other "
                 "measure, the warnings, the skill test against a constant model and the "
                 "per-row draws of the intervals over new rows" + (
                     " (as wide as for these rows)" if sampled else ""))
    X_test, y_test = _split_columns(held, target)
    task = _model_task(model) if fitted else task
    if task == "auto":
        # As explain settles it: on the target of every row in memory.
        known = y_test if y_train is None else pd.concat(
            [pd.Series(np.asarray(y_train)), y_test], ignore_index=True)
        task = detect_task(known.dropna())
    if scoring is None:
        scoring = _default_scoring(model, task, notes)
    rest = marked[marked[_HELD]].drop(columns=[_HELD, _KEY])
    if not sampled:
        # Rows few enough for this machine's memory are kept in the workers' memory:
        # every pass that follows (the scores, each permuted column) reads them there
        # instead of splitting the table again.
        rest = rest.persist()
    return (DaskHeldOut(rest, target, scoring, n_held, n_in_memory, notes),
            X_test, y_test, X_train, y_train, scoring)


def _checked_scoring(scoring):
    from ..importance._engine._permutation_dask import EXACT_SCORERS

    if scoring is not None and scoring not in EXACT_SCORERS:
        raise InputError(f"scoring must be None or one of {', '.join(sorted(EXACT_SCORERS))} "
                         "for a Dask DataFrame (scores that add up over rows, computed block "
                         f"by block); got {scoring!r}")
    return scoring


def _default_scoring(model, task, notes):
    """What :func:`~sapwood.explain` judges the model by in memory: the Brier score for a
    classifier with probabilities (every model sapwood trains by name), accuracy for
    one without (with a note); the model's own R² for a regressor whose score is
    scikit-learn's, else ``"r2"``."""
    from sklearn.base import RegressorMixin

    from ._models import default_scoring

    if task == "classification":
        if model is None or isinstance(model, str):
            return "neg_brier_score"
        if default_scoring(model, task) is None:
            notes.append("scored by accuracy: the model gives no probabilities for the "
                         "Brier score")
            return "accuracy"
        return "neg_brier_score"
    if model is None or isinstance(model, str) \
            or getattr(type(model), "score", None) is RegressorMixin.score:
        return None
    return "r2"


def _seed(random_state) -> int:
    if isinstance(random_state, int | np.integer) and random_state >= 0:
        return int(random_state)
    from sklearn.utils import check_random_state

    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))


def _model_task(model) -> str:
    if isinstance(model, LoadedModel):
        return model.task
    from sklearn.base import is_classifier

    return "classification" if is_classifier(model) else "regression"


def _where_fit() -> str:
    from joblib.parallel import get_active_backend

    backend = type(get_active_backend()[0]).__name__
    return (" (its trees grown on the Dask cluster through joblib's Dask backend)"
            if "Dask" in backend else "")


def _table(X, y, x_name, y_name):
    """(table, target name): the features of ``X`` and the target as one Dask DataFrame
    whose target column is ``_TARGET``, matched to the features by position as
    :func:`~sapwood.explain` matches them."""
    import dask
    import dask.array as da
    import dask.dataframe as dd

    if isinstance(X, da.Array):
        if X.ndim != 2:
            raise InputError(f"{x_name} must be 2-D (rows by features); got {X.ndim} "
                             "dimension(s)")
        X = dd.from_dask_array(X, columns=[f"x{j}" for j in range(X.shape[1])])
    elif not (is_dask_collection(X) and hasattr(X, "columns")):
        raise InputError(f"{x_name} must be a Dask DataFrame or array when {y_name} is a "
                         f"Dask collection; got {type(X).__name__}")
    if isinstance(y, str):
        if y not in X.columns:
            raise InputError(f"{y_name}={y!r}: not a column of {x_name}"
                             f"{did_you_mean(y, X.columns)}; {y_name} is the target: a "
                             f"Dask Series, an array, or the name of a column of {x_name}")
        return _numeric(X.rename(columns={y: _TARGET}), x_name), y
    if isinstance(y, dd.DataFrame | pd.DataFrame):
        if len(y.columns) != 1:
            raise InputError(f"{y_name} must be one column; got {len(y.columns)}")
        y = y[y.columns[0]]
    name = "y" if getattr(y, "name", None) is None else str(y.name)
    X = _numeric(X, x_name)
    parts = [X.map_partitions(len)]
    if isinstance(y, dd.Series):
        parts.append(y.map_partitions(len))
    lengths = dask.compute(*parts)
    x_lengths = tuple(int(n) for n in lengths[0])
    if isinstance(y, dd.Series):
        y_lengths = tuple(int(n) for n in lengths[1])
        if sum(y_lengths) != sum(x_lengths):
            raise InputError(f"{y_name} has {sum(y_lengths)} rows and its features "
                             f"{sum(x_lengths)}")
        if y_lengths != x_lengths:
            # Re-cut through an array, a Series read from files was matched to the wrong
            # rows now and then (its array's steps and the features' are planned apart).
            raise InputError(f"{y_name} must be partitioned as {x_name}, the same number of "
                             f"rows in each partition (a column of the same table); got "
                             f"{_cut(y_lengths)} rows per partition against {x_name}'s "
                             f"{_cut(x_lengths)}; or give the target as the name of a "
                             f"column of {x_name}")
        # Glued block by block as it is.
        meta = X._meta.assign(**{_TARGET: y._meta.to_numpy()})
        return X.map_partitions(_glued, y, align_dataframes=False, meta=meta), name
    if isinstance(y, da.Array):
        values = y
    else:
        values = np.asarray(y)
    if values.ndim != 1:
        raise InputError(f"{y_name} must be 1-D; got shape {values.shape}")
    if values.shape[0] != sum(x_lengths):
        raise InputError(f"{y_name} has {values.shape[0]} rows and its features "
                         f"{sum(x_lengths)}")
    # The target in the features' blocks (chunks given: Dask cannot size text itself).
    values = values.rechunk((x_lengths,)) if isinstance(values, da.Array) \
        else da.from_array(values, chunks=(x_lengths,))
    target = dd.from_dask_array(values)
    meta = X._meta.assign(**{_TARGET: target._meta.to_numpy()})
    return X.map_partitions(_glued, target, align_dataframes=False, meta=meta), name


def _cut(lengths) -> str:
    shown = ", ".join(str(n) for n in lengths[:4])
    return f"[{shown}{', ...' if len(lengths) > 4 else ''}]"


def _glued(part, target):
    return part.assign(**{_TARGET: target.to_numpy()})


def _numeric(X, name):
    """``X`` with its feature columns checked: numbers and booleans only."""
    other = [str(column) for column, kind in X.dtypes.items()
             if column != _TARGET and kind.kind not in "biuf"]
    if other:
        shown = ", ".join(other[:5]) + (f" and {len(other) - 5} more" if len(other) > 5
                                        else "")
        raise InputError(f"{name}: the features of a Dask DataFrame must be numbers or "
                         f"booleans (its held-out rows are scored block by block as one "
                         f"numeric array); not numeric: {shown}. Encode them first (a "
                         "categorical column's cat.codes, for example)")
    return X


def _marked(table, share, seed):
    """``table`` without the rows whose target is missing, with each row's draws."""
    meta = table._meta.assign(**{_HELD: np.zeros(0, dtype=bool),
                                 _KEY: np.zeros(0, dtype=np.float64)})
    return table.map_partitions(_draw, share, seed, meta=meta)


def _draw(part, share, seed, partition_info=None):
    part = part[part[_TARGET].notna()]
    number = 0 if partition_info is None else int(partition_info["number"])
    rng = np.random.default_rng([seed, number])
    n = len(part)
    return part.assign(**{_HELD: rng.random(n) < share, _KEY: rng.random(n)})


def _read(rows, n_rows, limit):
    """(frame, sampled): the Dask ``rows`` in memory in their order, or when there are
    more than ``limit``, the ``limit`` with the smallest draws, in their order."""
    if n_rows <= limit:
        return rows.drop(columns=[_HELD, _KEY]).compute().reset_index(drop=True), False
    # Enough rows below a threshold on the uniform draws to hold the smallest ``limit``:
    # the threshold's expected count plus six standard deviations, raised if short.
    share = min(1.0, (limit + 6 * math.sqrt(limit) + 20) / n_rows)
    while True:
        found = rows[rows[_KEY] < share].compute()
        if len(found) >= limit or share >= 1.0:
            break
        share = min(1.0, share * 1.5)
    keep = np.sort(np.argsort(found[_KEY].to_numpy(), kind="stable")[:limit])
    return found.iloc[keep].drop(columns=[_HELD, _KEY]).reset_index(drop=True), True


def _split_columns(frame, target):
    return frame.drop(columns=[_TARGET]), frame[_TARGET].rename(target)


def _given_training(X_train, y_train, seed, steps):
    """The training rows given (X_train, y_train) in memory: as they are when in memory,
    else read (a seeded sample beyond :data:`MAX_TRAIN_ROWS`). Returns them and how
    many they are, in words."""
    if not (is_dask_collection(X_train) or is_dask_collection(y_train)):
        return X_train, y_train, f"the {len(X_train)} training rows given"
    table, target = _table(X_train, y_train, "X_train", "y_train")
    marked = _marked(table, 0.0, seed)
    n_rows = int(marked.map_partitions(len).sum().compute())
    with steps.step("Reading the training rows that fit into memory"):
        train, sampled = _read(marked, n_rows, MAX_TRAIN_ROWS)
    X_train, y_train = _split_columns(train, target)
    how = (f"a seeded sample of {len(train)} of the {n_rows} training rows given (at most "
           f"{MAX_TRAIN_ROWS} are read into memory)" if sampled
           else f"all {n_rows} training rows given")
    return X_train, y_train, how


def _constant(task, X, y):
    """The constant model the baseline compares with, fit on the training rows: the
    majority class (its class shares) or the mean."""
    from sklearn.dummy import DummyClassifier, DummyRegressor

    dummy = DummyClassifier(strategy="prior") if task == "classification" \
        else DummyRegressor()
    return dummy.fit(X, y)


def _summed(model, X, y, names) -> dict:
    """``model``'s scores ``names`` on the Dask rows X, y, summed block by block in one
    pass: ``name -> score``."""
    from ..importance._engine._permutation_dask import dask_scores

    try:
        baseline, _ = dask_scores(model, X, y, None, list(names), 0, 0, [], None)
    except (ValueError, TypeError) as error:
        raise InputError(f"cannot score the model block by block: "
                         f"{_first_line(error)}") from None
    return {name: float(value) for name, value in baseline.items()}


def _first_line(error) -> str:
    return str(error).splitlines()[0] if str(error) else type(error).__name__
