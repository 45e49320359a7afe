"""A survival target: each row's time and whether its event was seen (task "survival").

The forms :func:`sapwood.explain` accepts (docs/getting-started.md, "Survival targets"):

- ``y`` a structured array of a boolean event and a number time, as scikit-survival's
  ``Surv.from_arrays(event, time)`` makes (its field names name the columns);
- ``y`` a pair of column names of X, time first: ``explain(table, ("time", "status"))``
  (on the command line ``--target TIME --event EVENT``);
- ``y`` a DataFrame of two columns, time then event.

The event column holds booleans, 1/0, or the words true/false (yes/no); any other two
values need ``event_value``, the value that marks an event (``--event-value``). Rows
whose time or event is missing are left out with a note; a negative time, an event
column of more than two values, or one whose values cannot be read as event/censored is
refused in one line. Inside a run the target is a DataFrame of two columns (time as
float, event as bool) until the rows are split; the measures get scikit-survival's
structured array (:func:`structured`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._errors import InputError
from ..importance._engine._survival_scores import (
    SURVIVAL_SCORES,
    SurvivalScorer,
    is_survival_target,
)
from ._data import Prepared, encoded_features
from ._numbers import numbers_note, read_numbers

__all__ = ["KAPLAN_MEIER", "SURVIVAL_SCORES", "SurvivalScorer", "check_survival_scoring",
           "describe_target", "is_survival_form", "is_survival_model", "prepare_survival",
           "row_target", "structured", "survival_columns", "survival_frame", "survival_gain",
           "target_json"]

# Event values read without being named: the second of each pair is the event.
_EVENT_WORDS = ({"false", "true"}, {"no", "yes"}, {"0", "1"}, {"0.0", "1.0"})
KAPLAN_MEIER = "the Kaplan-Meier model (no features)"
# At least this many events for a survival score to mean anything.
MIN_EVENTS = 2


def is_survival_form(y) -> bool:
    """Whether ``y`` is given in one of the survival forms (module docstring), for which
    the task is survival."""
    if is_survival_target(y):
        return True
    if isinstance(y, tuple) and len(y) == 2 and all(isinstance(n, str) for n in y):
        return True
    return isinstance(y, pd.DataFrame) and y.shape[1] == 2


def is_survival_model(model) -> bool:
    """A fitted or unfitted model of survival: a survival tree model read by sapwood,
    or an estimator with scikit-survival's survival functions."""
    task = getattr(model, "task", None)
    if isinstance(task, str):
        return task == "survival"
    return hasattr(model, "predict_survival_function") or \
        hasattr(model, "predict_cumulative_hazard_function")


def survival_columns(X: pd.DataFrame, names) -> tuple:
    """``explain(table, (time, event))``: the features and the two target columns."""
    from ._data import did_you_mean

    columns = [str(column) for column in X.columns]
    for name in names:
        if name not in columns:
            raise InputError(f"y={tuple(names)!r}: {name!r} is not a column of X"
                             f"{did_you_mean(name, columns)}; a survival target is the "
                             "names of the time and event columns")
    if names[0] == names[1]:
        raise InputError(f"the time and the event must be two columns; got {names[0]!r} "
                         "twice")
    places = [columns.index(name) for name in names]
    return X.drop(columns=X.columns[places]), X.iloc[:, places]


def survival_frame(y, n_rows: int) -> pd.DataFrame:
    """The two target columns, time then event, as a DataFrame."""
    if is_survival_target(y):
        names = y.dtype.names
        kinds = [y.dtype[name].kind for name in names]
        event = kinds.index("b") if "b" in kinds else 0
        frame = pd.DataFrame({names[1 - event]: y[names[1 - event]],
                              names[event]: y[names[event]]})
    elif isinstance(y, pd.DataFrame):
        frame = y.reset_index(drop=True)
    else:
        raise InputError("a survival target is a structured array (scikit-survival's "
                         "Surv.from_arrays), a pair of column names (time, event) or a "
                         f"DataFrame of two columns; got {type(y).__name__}")
    if len(frame) != n_rows:
        raise InputError(f"y has {len(frame)} rows and its features {n_rows}")
    frame.columns = [str(column) for column in frame.columns]
    return frame


def _event(values: pd.Series, name: str, event_value) -> pd.Series:
    """The event column as booleans (True: the event was seen), or a one-line refusal."""
    distinct = pd.unique(values)
    if event_value is not None:
        text = values.astype(str)
        if str(event_value) not in set(text):
            shown = ", ".join(repr(str(value)) for value in distinct[:5])
            raise InputError(f"event value {event_value!r} does not occur in the event "
                             f"column {name!r} (its values: {shown})")
        if len(distinct) > 2:
            raise InputError(f"event column {name!r} has {len(distinct)} distinct values; an "
                             "event column holds two (event, censored)")
        return text == str(event_value)
    if pd.api.types.is_bool_dtype(values):
        return values.astype(bool)
    words = {str(value).strip().lower() for value in distinct}
    if pd.api.types.is_numeric_dtype(values):
        words = {f"{float(value):g}" for value in distinct}
    if len(words) > 2:
        raise InputError(f"event column {name!r} has {len(words)} distinct values; an "
                         "event column holds two (event, censored): 1/0, true/false, or two "
                         "values with --event-value (event_value=) naming the event's")
    for pair in _EVENT_WORDS:
        if words <= pair:
            event = sorted(pair)[1]
            if pd.api.types.is_numeric_dtype(values):
                return values.astype(np.float64) == 1.0
            return values.astype(str).str.strip().str.lower() == event
    shown = " and ".join(repr(str(value)) for value in distinct)
    raise InputError(f"event column {name!r} holds {shown}: say which marks an event "
                     "with --event-value (event_value=), e.g. --event-value "
                     f"{str(distinct[-1])!r}")


def prepare_survival(X: pd.DataFrame, y, event_value=None) -> Prepared:
    """The features encoded as :func:`~sapwood.report._data.prepare_xy` encodes them and
    the survival target ``y`` (any form of the module docstring) checked: a DataFrame of
    the time (float64) and the event (bool), named by their columns."""
    if X.shape[1] == 0:
        raise InputError("no feature columns: X has none")
    frame = survival_frame(y, len(X))
    time_name, event_name = frame.columns
    # A number column with a stray "?" is numbers, as for any target (report/_numbers.py).
    X, found = read_numbers(X)
    notes, kept = [numbers_note(found, len(X))] if found else [], None
    missing = frame.isna().any(axis=1).to_numpy()
    if missing.any():
        n_missing, n_left = int(missing.sum()), int((~missing).sum())
        kept = np.flatnonzero(~missing)
        X, frame = X.iloc[kept], frame.iloc[kept]
        notes.append(f"{n_missing} row(s) whose time {time_name!r} or event {event_name!r} "
                     f"is missing left out; {n_left} rows remain")
    time = frame[time_name]
    if not pd.api.types.is_numeric_dtype(time) or pd.api.types.is_bool_dtype(time):
        raise InputError(f"time column {time_name!r} is not numeric; a survival time is a "
                         "number (days, months, ...)")
    time = time.astype(np.float64)
    if not np.isfinite(time).all():
        raise InputError(f"time column {time_name!r} has infinite values; drop or fix "
                         "those rows")
    negative = np.flatnonzero(time.to_numpy() < 0)
    if negative.size:
        raise InputError(f"time column {time_name!r} has {negative.size} negative value(s) "
                         f"(the first {time.iloc[negative[0]]:g}); a survival time is at "
                         "least 0")
    event = _event(frame[event_name], event_name, event_value)
    if len(time) < 2:
        raise InputError(f"need at least 2 data rows to fit and evaluate a model; got "
                         f"{len(time)}")
    n_events = int(event.sum())
    if n_events < MIN_EVENTS:
        raise InputError(f"event column {event_name!r} marks {n_events} event(s) in "
                         f"{len(time)} rows; a survival model needs at least {MIN_EVENTS} "
                         "events to be judged"
                         + (" (is --event-value the event's value?)" if event_value
                            is not None else ""))
    X, encodings = encoded_features(X, notes)
    target = pd.DataFrame({time_name: time.to_numpy(), event_name: event.to_numpy()},
                          index=X.index)
    return Prepared(X=X, y=target, task="survival", target=time_name, encodings=encodings,
                    n_missing=int(X.isna().sum().sum()), notes=notes, kept=kept,
                    task_detected=False)


def structured(frame) -> np.ndarray | None:
    """The target rows ``frame`` (time, event) as scikit-survival's structured array
    (event first, named as the columns); None stays None."""
    if frame is None or is_survival_target(frame):
        return frame
    time_name, event_name = frame.columns
    target = np.empty(len(frame), dtype=[(event_name, bool), (time_name, np.float64)])
    target[event_name] = frame[event_name].to_numpy(dtype=bool)
    target[time_name] = frame[time_name].to_numpy(dtype=np.float64)
    return target


def row_target(row: pd.Series) -> str:
    """One row's survival target in words: ``2178 (censored)``, ``43 (event)``."""
    time, event = row.iloc[0], bool(row.iloc[1])
    return f"{time:g} ({'event' if event else 'censored'})"


def describe_target(data: Prepared) -> str:
    """``target 'lenfol', event 'fstat' (survival: 215 events, 57% censored)``."""
    time_name, event_name = data.y.columns
    event = data.y[event_name].to_numpy(dtype=bool)
    return (f"target {time_name!r}, event {event_name!r} (survival: {int(event.sum()):,} "
            f"events, {1 - event.mean():.0%} censored)")


def target_json(data: Prepared) -> dict:
    """The survival target's parts for the JSON report's ``data``."""
    time_name, event_name = data.y.columns
    event = data.y[event_name].to_numpy(dtype=bool)
    return {"time": time_name, "event": event_name, "n_events": int(event.sum()),
            "censored_share": float(1 - event.mean())}


def survival_gain(model, y_train, X_test, y_test, scoring):
    """``(constant, gain)``: the Kaplan-Meier model's held-out score (no features: one
    survival function for every row, so one risk: a concordance of 1/2) and each held-out
    row's gain of the model over it, whose mean is the model's gain: the difference of
    the two integrated Brier losses, or the row's share of the concordance, C + IF_i -
    1/2, from its first-order influence (docs/measures.md, section 'The Kaplan-Meier
    baseline'). Raises ValueError or TypeError where the score cannot be had."""
    scorer = scoring if isinstance(scoring, SurvivalScorer) else SurvivalScorer(
        scoring or SURVIVAL_SCORES[0], y_train=y_train)
    reference = y_train if y_train is not None and len(y_train) else y_test
    constant = scorer.constant(reference, y_test)
    loss = scorer.row_loss(model, y_test)
    if scorer.name == "neg_integrated_brier_score":
        functions = model.predict_survival_function(
            X_test, **({} if loss.grid is None else {"return_array": True}))
        losses = loss(loss.read({loss.method: functions}), None, np.arange(len(y_test)))
        return constant, scorer.constant_losses(reference, y_test) - losses
    value, influence = loss.influence(loss.read({"predict": model.predict(X_test)}))
    return constant, value + influence - constant


def check_survival_scoring(scoring, task: str, target: str):
    """A survival score for a survival target, and only there."""
    if scoring is None:
        return
    if task == "survival" and scoring not in SURVIVAL_SCORES:
        raise InputError(f"scoring {scoring!r} does not score survival; for the survival "
                         f"target {target!r} use one of {', '.join(SURVIVAL_SCORES)}")
    if task != "survival" and scoring in SURVIVAL_SCORES:
        raise InputError(f"scoring {scoring!r} scores a survival target (a time and an "
                         f"event); {target!r} is a {task} target")




