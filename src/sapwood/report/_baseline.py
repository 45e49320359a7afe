"""The baseline: what a constant model scores on the same held-out rows, and whether the
model is significantly better (docs/measures.md, "The baseline").

A constant model predicts the training rows' majority class (classification) or their
mean (regression). Its held-out score is shown beside the model's, since an accuracy of
0.972 means little on a target with 3% positives, where the constant scores 0.967.

Whether the model beats it is a paired comparison over the held-out rows: per row,
``d_i`` = the model's gain over the constant (accuracy: whether the model is right minus
whether the constant is; R²: the constant's squared error minus the model's), and the
model has skill when the Student-t 95% interval of ``mean(d)`` lies above zero. When it
does not, the ``baseline`` warning is raised and the verdict relies on nothing: a model
without skill has nothing to explain. Other scores (ROC AUC of an anomaly detector) get
their constant's value (0.5) and no test.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sapwood.diagnostics import Finding
from sapwood.importance._result import t_interval

__all__ = ["Baseline", "baseline", "baseline_warning"]


@dataclass(frozen=True)
class Baseline:
    """The constant model's held-out ``score``, and the 95% interval (``low``, ``high``)
    of the model's mean gain over it per row (None: no per-row test for this score)."""

    score: float
    low: float | None = None
    high: float | None = None

    @property
    def beaten(self) -> bool | None:
        """Whether the model is significantly better than the constant (None: untested)."""
        return None if self.low is None else bool(self.low > 0)

    def to_dict(self) -> dict:
        return {"score": self.score, "gain_low": self.low, "gain_high": self.high,
                "beaten": self.beaten}


def baseline(model, y_train, X_test, y_test, task: str, score_name: str,
             score: float) -> Baseline | None:
    """The constant model's held-out score and the paired test of the model against it;
    None when neither can be had (no target values)."""
    y_test = np.asarray(y_test)
    reference = np.asarray(y_train) if y_train is not None and len(y_train) else y_test
    if len(y_test) < 2:
        return None
    if score_name == "ROC AUC":
        return Baseline(0.5)
    try:
        predicted = np.asarray(model.predict(X_test))
    except (ValueError, TypeError):
        return None
    if task == "classification":
        values, counts = np.unique(reference.astype(str), return_counts=True)
        majority = values[np.argmax(counts)]
        constant = (y_test.astype(str) == majority).astype(np.float64)
        right = (_labels(predicted) == _labels(y_test)).astype(np.float64)
        if score_name != "accuracy" or abs(right.mean() - score) > 1e-9:
            return Baseline(float(constant.mean()))  # the score is not this per-row mean
        gain = right - constant
        value = float(constant.mean())
    else:
        y = y_test.astype(np.float64)
        mean = float(np.mean(reference.astype(np.float64)))
        constant_error = (y - mean) ** 2
        model_error = (y - predicted.astype(np.float64)) ** 2
        total = float(np.sum((y - y.mean()) ** 2))
        value = 1.0 - float(constant_error.sum()) / total if total > 0 else 0.0
        if score_name != "R²":
            return Baseline(value)
        gain = constant_error - model_error
    n = len(gain)
    low, high = t_interval(np.array([gain.mean()]), np.array([gain.std(ddof=1)]), n)
    return Baseline(value, float(low[0]), float(high[0]))


def _labels(values) -> np.ndarray:
    """Labels compared as text, integral floats as integers (1.0 and 1 are one class)."""
    values = np.asarray(values)
    if values.dtype.kind == "f" and np.all(np.isfinite(values)) and np.all(
            values == np.round(values)):
        values = values.astype(np.int64)
    return values.astype(str)


def baseline_warning(found: Baseline | None, score_name: str, score: float,
                     n_test: int) -> Finding | None:
    """The ``baseline`` warning when the model is not significantly better than the
    constant model, else None."""
    if found is None or found.beaten is not False:
        return None
    return Finding(
        kind="baseline", features=(),
        message=(f"The model is not significantly better than a constant model on the "
                 f"{n_test:,} held-out rows: held-out {score_name} {score:.3f} against "
                 f"{found.score:.3f} for always predicting the training rows' "
                 f"{'majority class' if score_name == 'accuracy' else 'mean'} (95% interval "
                 f"of the model's gain per row: {found.low:.3g} to {found.high:.3g}). It "
                 "has no skill to explain, so the verdict relies on nothing; the "
                 "importances describe noise."),
        details={"baseline_score": found.score, "score": score, "gain_low": found.low,
                 "gain_high": found.high})
