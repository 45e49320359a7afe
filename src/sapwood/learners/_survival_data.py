"""What sapwood's survival learners read and report: the time-to-event target, the
distinct times their functions are given at, step functions over those times, and
Harrell's concordance index (their out-of-bag score)."""

from __future__ import annotations

import numpy as np

__all__ = ["StepFunction", "check_survival_target", "harrell_concordance", "unique_times"]


def check_survival_target(y, n_rows=None):
    """``(event, time)`` from ``y``: a structured array of two fields, the event
    indicator (bool) first and the time (float) second, as scikit-survival's
    ``Surv.from_arrays`` makes it. Times must be finite and non-negative, and at least
    one row must have an event."""
    y = np.asarray(y)
    names = y.dtype.names
    if names is None or len(names) != 2 or y.ndim != 1:
        raise ValueError("y must be a structured array with two fields, the event "
                         "indicator (bool) and the time (float), as "
                         "sksurv.util.Surv.from_arrays(event, time) makes it; got "
                         f"{y.dtype} of shape {y.shape}")
    event, time = y[names[0]], y[names[1]]
    if event.dtype != np.bool_:
        raise ValueError(f"the first field of y ({names[0]!r}) must be the event indicator "
                         f"as bool; got {event.dtype}")
    if time.dtype.kind not in "iuf":
        raise ValueError(f"the second field of y ({names[1]!r}) must be the time, a "
                         f"number; got {time.dtype}")
    time = time.astype(np.float64)
    if not np.isfinite(time).all() or (time < 0).any():
        raise ValueError(f"the times in y ({names[1]!r}) must be finite and >= 0")
    if n_rows is not None and y.shape[0] != n_rows:
        raise ValueError(f"y has {y.shape[0]} entries but X has {n_rows} rows; they must "
                         "describe the same samples")
    if not event.any():
        raise ValueError("y has no event (every row is censored): there is nothing to "
                         "learn a hazard from")
    return event.copy(), time


def unique_times(time, event):
    """The distinct times, ascending, and whether each had an event (scikit-survival's
    ``unique_times_`` and ``is_event_time_``)."""
    times, index = np.unique(time, return_inverse=True)
    has_event = np.zeros(times.shape[0], dtype=bool)
    has_event[index[event]] = True
    return times, has_event


class StepFunction:
    """A right-continuous step function: ``a * y[i] + b`` on ``x[i] <= t < x[i + 1]``
    (``y[0]`` from the domain's start to ``x[0]``), as scikit-survival's
    ``StepFunction`` evaluates it; defined on ``domain`` (default: 0 to the last
    ``x``)."""

    def __init__(self, x, y, *, a=1.0, b=0.0, domain=(0, None)):
        self.x = np.asarray(x)
        self.y = np.asarray(y)
        if self.x.shape != self.y.shape:
            raise ValueError(f"x and y must have the same shape; got {self.x.shape} and "
                             f"{self.y.shape}")
        self.a = a
        self.b = b
        lower = self.x[0] if domain[0] is None else domain[0]
        upper = self.x[-1] if domain[1] is None else domain[1]
        self.domain = (float(lower), float(upper))

    def __call__(self, t):
        t = np.atleast_1d(np.asarray(t, dtype=np.float64))
        if not np.isfinite(t).all():
            raise ValueError("the times must be finite")
        if t.min() < self.domain[0] or t.max() > self.domain[1]:
            raise ValueError(f"the times must lie within [{self.domain[0]:f}; "
                             f"{self.domain[1]:f}]")
        index = np.maximum(np.searchsorted(self.x, t, side="right") - 1, 0)
        value = self.a * self.y[index] + self.b
        return value[0] if value.shape[0] == 1 else value

    def __repr__(self):
        return f"StepFunction(x={self.x!r}, y={self.y!r}, a={self.a!r}, b={self.b!r})"


def harrell_concordance(event, time, estimate, tied_tol=1e-8):
    """Harrell's concordance index of risk scores ``estimate`` (higher: earlier event),
    as ``sksurv.metrics.concordance_index_censored`` counts it: a pair is comparable
    when the row with the earlier time had an event (or both have the same time and
    only the first had one); it is concordant when that row has the higher risk, and
    counts one half when their risks are within ``tied_tol``."""
    event = np.asarray(event, dtype=bool)
    time = np.asarray(time, dtype=np.float64)
    estimate = np.asarray(estimate, dtype=np.float64)
    order = np.argsort(time, kind="mergesort")
    time, event, estimate = time[order], event[order], estimate[order]
    # Rows an event at time t is compared with: later times, and censored rows at t.
    later = np.searchsorted(time, time, side="right")
    numerator = 0.0
    comparable = 0
    events = np.flatnonzero(event)
    block = max(1, 2**22 // max(1, time.shape[0]))
    for first in range(0, events.shape[0], block):
        rows = events[first:first + block]
        same = (time[None, :] == time[rows, None]) & ~event[None, :]
        mask = same | (np.arange(time.shape[0])[None, :] >= later[rows, None])
        difference = estimate[None, :] - estimate[rows, None]
        ties = np.abs(difference) <= tied_tol
        numerator += np.count_nonzero(mask & (difference < 0) & ~ties) + \
            0.5 * np.count_nonzero(mask & ties)
        comparable += np.count_nonzero(mask)
    if comparable == 0:
        raise ValueError("no comparable pairs of rows: Harrell's concordance is undefined")
    return numerator / comparable
