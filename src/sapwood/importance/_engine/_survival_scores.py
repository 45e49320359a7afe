"""Scores of survival models, by name, beside scikit-learn's scorers.

A survival target is each row's observed time and whether the event was seen there (an
event) or the row left observation (censored). Three scores, greater is better as for
every scorer (definitions: docs/measures.md, section 'Survival scores'):

``concordance_index``
    Harrell's concordance index of the model's risk score (``predict``): the share of
    comparable pairs (the earlier time an event) whose earlier row has the higher risk,
    ties in risk one half. scikit-survival's ``concordance_index_censored``.
``concordance_index_ipcw``
    Uno's concordance: each pair weighted by the squared inverse probability of staying
    uncensored until the earlier row's event, ``1 / G(t_i)^2``, ``G`` the Kaplan-Meier
    estimate of the censoring distribution on the training rows. scikit-survival's
    ``concordance_index_ipcw``.
``neg_integrated_brier_score``
    minus the integrated Brier score of the model's survival function
    (``predict_survival_function``) over a grid of times, each row weighted by the
    inverse probability of censoring (Graf et al. 1999). scikit-survival's
    ``integrated_brier_score``.

The two concordances are ratios of sums over pairs; their first-order influence on the
rows (:class:`ConcordanceLoss`) gives held-out permutation importance its per-row draws,
as DeLong's does for ROC AUC. The integrated Brier score is a mean over rows of a loss
(:class:`BrierLoss`).

scikit-survival is the reference these are tested against, not a dependency.
"""

from __future__ import annotations

import numpy as np

from ..._kernels._concordance import concordance_pairs

__all__ = ["SURVIVAL_SCORES", "BrierLoss", "ConcordanceLoss", "SurvivalScorer",
           "brier_scores", "censoring_survival", "concordance_index",
           "concordance_index_ipcw", "evaluation_times", "integrated_brier_score",
           "is_survival_target", "kaplan_meier", "predicts_time", "risk_score",
           "survival_arrays", "survival_at", "survival_scorer"]

#: The survival scores by name; the first is the default.
SURVIVAL_SCORES = ("concordance_index", "concordance_index_ipcw",
                   "neg_integrated_brier_score")
# Risks closer than this are tied (scikit-survival's default tied_tol).
TIED_TOL = 1e-8
# The integrated Brier score's default grid: this many quantiles of the scored rows'
# times, from the first to the second share (the tails, where few rows remain under
# observation, would weigh the inverse probabilities of censoring most).
GRID_SIZE = 20
GRID_SHARES = (0.1, 0.9)


def is_survival_target(y) -> bool:
    """Whether ``y`` is a structured array of an event and a time (scikit-survival's
    ``Surv.from_arrays``)."""
    fields = getattr(getattr(y, "dtype", None), "fields", None)
    return isinstance(y, np.ndarray) and fields is not None and len(fields) == 2


def survival_arrays(y):
    """``(event, time)`` as bool and float64 arrays from a survival target: a structured
    array of a boolean field and a number field (in either order), or two columns, time
    then event (a DataFrame or an (n, 2) array)."""
    if is_survival_target(y):
        names = y.dtype.names
        kinds = [y.dtype[name].kind for name in names]
        event_at = kinds.index("b") if "b" in kinds else 0
        event, time = y[names[event_at]], y[names[1 - event_at]]
    else:
        values = y.to_numpy() if hasattr(y, "to_numpy") else np.asarray(y)
        if values.ndim != 2 or values.shape[1] != 2:
            raise ValueError("a survival target is a structured array (event, time), as "
                             "scikit-survival's Surv.from_arrays makes, or two columns: "
                             f"time, then event; got shape {np.shape(values)}")
        time, event = values[:, 0], values[:, 1]
    event = np.asarray(event)
    if event.dtype != bool:
        numbers = np.asarray(event, dtype=np.float64)
        if not np.isin(numbers, (0.0, 1.0)).all():
            raise ValueError("the event of a survival target must be boolean or 0/1")
        event = numbers == 1.0
    return event, np.asarray(time, dtype=np.float64)


def kaplan_meier(event, time, reverse=False):
    """``(times, probabilities)``: the Kaplan-Meier estimate of the survival function at
    each distinct time (with ``reverse``, of the censoring distribution: a censored row
    is its event, and rows with an event at a time leave before the censored ones), as
    scikit-survival's ``kaplan_meier_estimator``."""
    times, inverse = np.unique(time, return_inverse=True)
    n_events = np.bincount(inverse, weights=event, minlength=times.shape[0])
    n_total = np.bincount(inverse, minlength=times.shape[0]).astype(np.float64)
    n_at_risk = np.cumsum(n_total[::-1])[::-1]
    if reverse:
        n_at_risk = n_at_risk - n_events
        n_events = n_total - n_events
    ratio = np.divide(n_events, n_at_risk, out=np.zeros(times.shape[0]),
                      where=n_events != 0)
    return times, np.cumprod(1.0 - ratio)


class _Step:
    """A right-continuous step function known at ``times`` (``values`` there), 1 before
    them (scikit-survival's ``SurvivalFunctionEstimator.predict_proba``), its last value
    after them."""

    def __init__(self, times, values):
        self.times = np.r_[-np.inf, times]
        self.values = np.r_[1.0, values]

    def __call__(self, at):
        return self.values[np.searchsorted(self.times, at, side="right") - 1]


def censoring_survival(y_train) -> _Step:
    """``G``: the Kaplan-Meier estimate of the probability of remaining uncensored, from
    the training rows (1 everywhere when none is censored)."""
    event, time = survival_arrays(y_train)
    if event.all():
        times = np.unique(time)
        return _Step(times, np.ones(times.shape[0]))
    return _Step(*kaplan_meier(event, time, reverse=True))


def concordance_index(y, risk, *, weight=None, tied_tol=TIED_TOL) -> float:
    """Harrell's concordance index of ``risk`` on the survival target ``y`` (= scikit-
    survival's ``concordance_index_censored(event, time, risk)[0]``); ``weight``: each
    row's weight as the earlier row of a pair (Uno's: :func:`concordance_index_ipcw`)."""
    return _concordance(y, risk, weight, tied_tol)[0]


def _concordance(y, risk, weight, tied_tol):
    event, time = survival_arrays(y)
    risk = np.ascontiguousarray(risk, dtype=np.float64)
    if risk.shape != time.shape:
        raise ValueError(f"the risk score has shape {risk.shape}; the target "
                         f"{time.shape}")
    if time.shape[0] < 2:
        raise ValueError("a concordance index needs at least two rows")
    if not event.any():
        raise ValueError("every row is censored: no pair can be compared")
    weight = np.ones(time.shape[0]) if weight is None else np.ascontiguousarray(
        weight, dtype=np.float64)
    numerator, denominator, shares, weights, n_pairs = concordance_pairs(
        time, event, risk, weight, tied_tol)
    if n_pairs == 0:
        raise ValueError("no comparable pairs: no event time is followed by another row's "
                         "time")
    return numerator / denominator, shares, weights, denominator


def ipcw_weights(y_train, y, tau=None):
    """Uno's weights ``1 / G(t_i)^2`` of the rows with an event before ``tau`` (0 for the
    others), ``G`` from the training rows ``y_train``."""
    event, time = survival_arrays(y)
    censoring = censoring_survival(y_train)
    kept = event if tau is None else event & (time < tau)
    remaining = censoring(time[kept])
    if (remaining == 0).any():
        raise ValueError("the censoring distribution of the training rows is zero at an "
                         "event time of the scored rows")
    weight = np.zeros(time.shape[0])
    weight[kept] = 1.0 / remaining ** 2
    return weight


def concordance_index_ipcw(y_train, y, risk, *, tau=None, tied_tol=TIED_TOL) -> float:
    """Uno's concordance index of ``risk`` on ``y``, the censoring distribution
    estimated on ``y_train`` (= scikit-survival's ``concordance_index_ipcw(y_train, y,
    risk, tau)[0]``, also where it refuses a time past the training rows' last: there
    ``G`` keeps its last value)."""
    return concordance_index(y, risk, weight=ipcw_weights(y_train, y, tau),
                             tied_tol=tied_tol)


def evaluation_times(y) -> np.ndarray:
    """The integrated Brier score's default grid: :data:`GRID_SIZE` quantiles of the
    observed times of ``y``, from the 10% to the 90% one (distinct values)."""
    _, time = survival_arrays(y)
    return np.unique(np.quantile(time, np.linspace(*GRID_SHARES, GRID_SIZE)))


def survival_at(grid, survival, times):
    """The survival functions ``survival`` (rows by the times of ``grid``) at ``times``:
    each function's value at the last grid time at or before each time (its first value
    before the grid, as scikit-survival's ``StepFunction``)."""
    columns = np.clip(np.searchsorted(grid, times, side="right") - 1, 0, None)
    return np.asarray(survival, dtype=np.float64)[:, columns]


def _row_brier(y_train, y, survival, times):
    """Each row's Brier loss at each time (rows by times), inverse-probability-of-
    censoring weighted (Graf et al.): ``S(t)^2 / G(t_i)`` for a row whose event came by
    t, ``(1 - S(t))^2 / G(t)`` for a row still observed after t, 0 for a row censored
    by t."""
    event, time = survival_arrays(y)
    censoring = censoring_survival(y_train)
    at_time = censoring(times)
    at_time[at_time == 0] = np.inf
    at_row = censoring(time)
    at_row[at_row == 0] = np.inf
    case = (time[:, None] <= times[None, :]) & event[:, None]
    control = time[:, None] > times[None, :]
    return (np.square(survival) * case / at_row[:, None]
            + np.square(1.0 - survival) * control / at_time[None, :])


def _check_times(y, times):
    _, time = survival_arrays(y)
    times = np.unique(np.atleast_1d(np.asarray(times, dtype=np.float64)))
    if times.shape[0] < 2:
        raise ValueError("the integrated Brier score needs at least two times")
    if times.max() >= time.max() or times.min() < time.min():
        raise ValueError(f"every time must be within the scored rows' follow-up "
                         f"[{time.min():g}, {time.max():g})")
    return times


def brier_scores(y_train, y, survival, times) -> np.ndarray:
    """The Brier score at each of ``times`` of ``survival`` (rows of ``y`` by
    ``times``), = scikit-survival's ``brier_score(y_train, y, survival, times)[1]``."""
    times = _check_times(y, times)
    return _row_brier(y_train, y, np.asarray(survival, dtype=np.float64), times).mean(axis=0)


def integrated_brier_score(y_train, y, survival, times) -> float:
    """The Brier score integrated over ``times`` by the trapezoidal rule and divided by
    their range (= scikit-survival's ``integrated_brier_score``): ``survival`` holds the
    model's survival probability of each row of ``y`` at each time."""
    times = _check_times(y, times)
    return float(np.mean(_row_integrated(y_train, y, survival, times)))


def _row_integrated(y_train, y, survival, times):
    losses = _row_brier(y_train, y, np.asarray(survival, dtype=np.float64), times)
    return np.trapezoid(losses, times, axis=1) / (times[-1] - times[0])


# Objectives whose model predicts a time (greater: later, the lower risk), not a risk.
_TIME_OBJECTIVES = ("survival:aft", "ipcwls", "squared")


def predicts_time(model) -> bool:
    """Whether ``model.predict`` gives a time rather than a risk: scikit-survival's own
    flag (``_predict_risk_score`` False), or a survival tree model read from an
    objective of the time (XGBoost's ``survival:aft``, scikit-survival's ``ipcwls`` and
    ``squared`` boosting losses)."""
    if getattr(model, "_predict_risk_score", True) is False:
        return True
    ensemble = getattr(model, "ensemble", model)
    kind = getattr(ensemble, "kind", None)
    return getattr(ensemble, "task", None) == "survival" and kind is not None and \
        kind.objective in _TIME_OBJECTIVES


def risk_score(model, X) -> np.ndarray:
    """The model's risk score of each row of X: ``predict``, negated for a model that
    predicts a time (as scikit-survival's ``score`` does)."""
    predicted = np.asarray(model.predict(X), dtype=np.float64)
    return -predicted if predicts_time(model) else predicted


def _survival(model, X, times):
    """The model's survival function of each row of X at ``times``."""
    grid = getattr(model, "unique_times_", None)
    if grid is None:
        functions = model.predict_survival_function(X)
        return np.vstack([function(times) for function in functions])
    return survival_at(grid, model.predict_survival_function(X, return_array=True), times)


class SurvivalScorer:
    """The score ``name`` (:data:`SURVIVAL_SCORES`) as a scorer ``scorer(model, X, y)``
    of a fitted survival model, y a survival target.

    ``y_train``: the training rows, for the censoring distribution of Uno's concordance
    and the Brier score (None: the scored rows' own). ``times``: the Brier score's grid
    (None: :func:`evaluation_times` of the scored rows)."""

    def __init__(self, name, y_train=None, times=None):
        if name not in SURVIVAL_SCORES:
            raise ValueError(f"scoring must be one of {', '.join(SURVIVAL_SCORES)}; got "
                             f"{name!r}")
        self.name = name
        self.y_train = y_train
        self.times = times

    def __repr__(self):
        return self.name

    def _train(self, y):
        return y if self.y_train is None or len(self.y_train) == 0 else self.y_train

    def grid(self, y):
        return evaluation_times(y) if self.times is None else np.asarray(self.times)

    def __call__(self, model, X, y, sample_weight=None):
        if sample_weight is not None:
            raise ValueError(f"the {self.name} scorer takes no sample weights")
        if self.name == "concordance_index":
            return concordance_index(y, risk_score(model, X))
        if self.name == "concordance_index_ipcw":
            return concordance_index_ipcw(self._train(y), y, risk_score(model, X))
        times = _check_times(y, self.grid(y))
        return -integrated_brier_score(self._train(y), y, _survival(model, X, times), times)

    def row_loss(self, model, y, sample_weight=None):
        """The per-row loss or influence (:class:`ConcordanceLoss`,
        :class:`BrierLoss`) of ``model``'s permutation importance's per-row draws; None
        with weights."""
        if sample_weight is not None:
            return None
        sign = -1.0 if predicts_time(model) else 1.0
        if self.name == "concordance_index":
            return ConcordanceLoss(y, None, sign)
        if self.name == "concordance_index_ipcw":
            return ConcordanceLoss(y, ipcw_weights(self._train(y), y), sign)
        return BrierLoss(self, model, y)

    def constant(self, y_train, y) -> float:
        """The score of the Kaplan-Meier model of ``y_train``: the one survival function
        for every row, and one risk for all (a concordance of 1/2)."""
        if self.name != "neg_integrated_brier_score":
            return 0.5
        times = _check_times(y, self.grid(y))
        return -integrated_brier_score(self._train(y), y,
                                       kaplan_meier_rows(y_train, len(y), times), times)

    def constant_losses(self, y_train, y) -> np.ndarray | None:
        """Each row's loss under the Kaplan-Meier model (the Brier score), or None for a
        concordance (the constant's influence is zero on every row)."""
        if self.name != "neg_integrated_brier_score":
            return None
        times = _check_times(y, self.grid(y))
        return _row_integrated(self._train(y), y, kaplan_meier_rows(y_train, len(y), times),
                               times)


def kaplan_meier_rows(y_train, n_rows, times) -> np.ndarray:
    """The Kaplan-Meier survival function of ``y_train`` at ``times``, for ``n_rows``
    rows."""
    event, time = survival_arrays(y_train)
    at = _Step(*kaplan_meier(event, time))(times)
    return np.tile(at, (n_rows, 1))


class ConcordanceLoss:
    """The first-order influence of a concordance on the rows (as :class:`AucLoss`'s):
    with ``s_k`` and ``w_k`` row k's sums of concordance and weight over the comparable
    pairs it is in, and ``W`` the total weight of the pairs, ``n (s_k - C w_k) / W``,
    of mean zero (each pair is in two rows). Read from ``predict``, the risk."""

    def __init__(self, y, weight, sign=1.0):
        self.y = y
        self.weight = weight
        self.sign = sign  # -1: the model predicts a time (predicts_time)

    def influence(self, score):
        value, shares, weights, total = _concordance(self.y, score, self.weight, TIED_TOL)
        return value, shares.shape[0] * (shares - value * weights) / total

    method = "predict"

    def read(self, outputs):
        predicted = outputs.get("predict")
        return None if predicted is None else self.sign * np.asarray(predicted,
                                                                     dtype=np.float64)


class BrierLoss:
    """Each row's integrated Brier loss (a mean over rows), read from the survival
    functions the scorer had ``model`` predict (``predict_survival_function``), at the
    scorer's times."""

    method = "predict_survival_function"

    def __init__(self, scorer, model, y):
        event, time = survival_arrays(y)  # any form: rows are picked by position below
        self.y = np.empty(time.shape[0], dtype=[("event", bool), ("time", np.float64)])
        self.y["event"], self.y["time"] = event, time
        self.times = _check_times(y, scorer.grid(y))
        self.y_train = scorer._train(y)
        self.grid = getattr(model, "unique_times_", None)

    def __call__(self, survival, truth, index):
        return _row_integrated(self.y_train, self.y[index], survival, self.times)

    def read(self, outputs):
        functions = outputs.get(self.method)
        if functions is None:
            return None
        if self.grid is None:  # step functions
            return np.vstack([function(self.times) for function in functions])
        return survival_at(self.grid, functions, self.times)


def survival_scorer(scoring):
    """The :class:`SurvivalScorer` ``scoring`` names or is, else None."""
    if isinstance(scoring, SurvivalScorer):
        return scoring
    if isinstance(scoring, str) and scoring in SURVIVAL_SCORES:
        return SurvivalScorer(scoring)
    return None
