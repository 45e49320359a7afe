"""The baseline: what a constant model scores on the same held-out rows, and whether the
model is significantly better (docs/measures.md, "The baseline").

A constant model predicts the training rows' majority class (classification) or their
mean (regression). Its held-out score is shown beside the model's, since an accuracy of
0.972 means little on a target with 3% positives, where the constant scores 0.967.

Whether the model beats it is a paired comparison over the held-out rows: per row,
``d_i`` = the model's gain over the constant (accuracy: whether the model is right minus
whether the constant is; R²: the constant's squared error minus the model's), and the
model has skill when the Student-t 95% interval of ``mean(d)`` lies above zero. When it
does not, the ``baseline`` warning is raised and the verdict relies on nothing; its words
follow the interval: "no skill" when the whole interval is at or below zero (the model
is shown to be no better than the constant), else "not shown to be better" with the
interval (more rows may show it). Other scores (ROC AUC of an anomaly detector) get
their constant's value (0.5) and no test. A classifier's accuracy is shown beside the
constant's (the majority class's share of the held-out rows).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from sapwood._splits import group_draws
from sapwood.diagnostics import Finding
from sapwood.importance._engine._permutation_rows import ProbabilityLoss
from sapwood.importance._engine._result import t_interval

from ._models import shown_score

__all__ = ["Baseline", "baseline", "baseline_warning"]


@dataclass(frozen=True)
class Baseline:
    """The constant model's held-out ``score``, and the 95% interval (``low``, ``high``)
    of the model's mean gain over it per row (None: no per-row test for this score)."""

    score: float
    low: float | None = None
    high: float | None = None
    # What the skill test compared: the score itself, or (a binary classifier scored by
    # accuracy) ROC AUC against a constant's 0.5.
    test: str = "score"
    # A classifier's constant's accuracy: the training majority class's share of the
    # held-out rows (None for a regressor).
    accuracy: float | None = None
    # The model without features, in words (a survival target's: Kaplan-Meier).
    model: str = "a constant model"

    @property
    def beaten(self) -> bool | None:
        """Whether the model is significantly better than the constant (None: untested)."""
        return None if self.low is None else bool(self.low > 0)

    @property
    def no_skill(self) -> bool:
        """Whether the model is shown no better than the constant: the whole interval of
        its gain at or below zero (not merely not shown to be better)."""
        return self.high is not None and bool(self.high <= 0)

    def to_dict(self) -> dict:
        return {"score": self.score, "gain_low": self.low, "gain_high": self.high,
                "beaten": self.beaten, "no_skill": self.no_skill, "test": self.test,
                "accuracy": self.accuracy, "model": self.model}


def baseline(model, y_train, X_test, y_test, task: str, score_name: str, score: float,
             scoring: str | None = None, groups=None) -> Baseline | None:
    """The constant model's held-out score (by ``scoring``, a scikit-learn scorer name,
    or the model's own score: accuracy, R²) and the paired test of the model against it;
    None when neither can be had. ``groups`` (one label per held-out row): the test
    treats each group as one draw (:func:`sapwood._splits.group_draws`). A survival
    target's constant is the Kaplan-Meier model
    (:func:`~sapwood.report._survival.survival_baseline`)."""
    if task == "survival":
        return _survival_baseline(model, y_train, X_test, y_test, scoring)
    y_test = np.asarray(y_test)
    reference = np.asarray(y_train) if y_train is not None and len(y_train) else y_test
    if len(y_test) < 2:
        return None
    found = _baseline(model, reference, X_test, y_test, task, score_name, score, scoring,
                      groups)
    if found is None or task != "classification":
        return found
    return dataclasses.replace(found, accuracy=_majority_accuracy(reference, y_test))


def _baseline(model, reference, X_test, y_test, task, score_name, score, scoring, groups):
    if score_name == "ROC AUC" or scoring == "roc_auc":
        return Baseline(0.5)
    kind = scoring or ("accuracy" if task == "classification" else "r2")
    try:
        if kind == "accuracy" and task == "classification" and len(np.unique(y_test)) == 2:
            found = _auc_skill(model, reference, X_test, y_test)
            if found is not None:
                return found
        if kind in ("neg_log_loss", "neg_brier_score"):
            gain, value = _probability_gain(model, reference, X_test, y_test, kind, score)
        elif task == "classification":
            gain, value = _accuracy_gain(model, reference, X_test, y_test, kind, score)
        else:
            gain, value = _error_gain(model, reference, X_test, y_test, kind)
    except (ValueError, TypeError, KeyError):
        return None
    if gain is None:
        return None if value is None else Baseline(value)
    if groups is not None:
        gain = group_draws(gain[None, :], groups)[0]
    low, high = t_interval(np.array([gain.mean()]), np.array([gain.std(ddof=1)]), len(gain))
    return Baseline(value, float(low[0]), float(high[0]))


def _survival_baseline(model, y_train, X_test, y_test, scoring) -> Baseline | None:
    """The Kaplan-Meier model's score and the interval of the model's gain over it
    (:func:`~sapwood.report._survival.survival_gain`)."""
    from ._survival import KAPLAN_MEIER, survival_gain

    try:
        constant, gain = survival_gain(model, y_train, X_test, y_test, scoring)
    except (ValueError, TypeError):
        return None
    if len(gain) < 2:
        return Baseline(constant, model=KAPLAN_MEIER)
    low, high = t_interval(np.array([gain.mean()]), np.array([gain.std(ddof=1)]), len(gain))
    return Baseline(constant, float(low[0]), float(high[0]), model=KAPLAN_MEIER)


def _auc_skill(model, reference, X_test, y_test) -> Baseline | None:
    """A binary classifier's skill by ROC AUC, which a constant cannot win (0.5) and a
    rare class does not hide as it hides in accuracy (97% for always "no" on 3%
    positives): the 95% interval of AUC - 0.5 from DeLong's variance. The constant's
    score shown is its accuracy, the model's score."""
    predict_proba = getattr(model, "predict_proba", None)
    if predict_proba is None:
        return None
    classes = [str(c) for c in getattr(model, "classes_", [])]
    truth = _labels(y_test)
    if len(classes) != 2 or not set(truth) <= set(classes):
        return None
    scores = np.asarray(predict_proba(X_test), dtype=np.float64)[:, 1]
    positive = truth == classes[1]
    auc, variance = _delong(scores[positive], scores[~positive])
    values, counts = np.unique(_labels(reference), return_counts=True)
    constant = float(np.mean(truth == values[np.argmax(counts)]))
    half = float(t_ppf(len(truth) - 1) * np.sqrt(variance))
    return Baseline(constant, auc - 0.5 - half, auc - 0.5 + half, test="roc_auc")


def t_ppf(dof: int) -> float:
    from scipy import stats

    return float(stats.t.ppf(0.975, max(dof, 1)))


def _delong(positives, negatives):
    """ROC AUC and DeLong's variance of it (DeLong et al. 1988)."""
    from scipy.stats import rankdata

    m, n = len(positives), len(negatives)
    if m < 2 or n < 2:
        return 0.5, np.inf
    both = rankdata(np.concatenate([positives, negatives]))
    own_positive, own_negative = rankdata(positives), rankdata(negatives)
    v10 = (both[:m] - own_positive) / n          # each positive's share of negatives below
    v01 = 1.0 - (both[m:] - own_negative) / m    # each negative's share of positives above
    auc = float(v10.mean())
    return auc, float(v10.var(ddof=1) / m + v01.var(ddof=1) / n)


def _majority_accuracy(reference, y_test) -> float:
    """The accuracy of always predicting the training rows' majority class."""
    values, counts = np.unique(_labels(reference), return_counts=True)
    return float(np.mean(_labels(y_test) == values[np.argmax(counts)]))


def _accuracy_gain(model, reference, X_test, y_test, kind, score):
    """Per row: the model right minus the constant (majority class) right."""
    values, counts = np.unique(reference.astype(str), return_counts=True)
    majority = values[np.argmax(counts)]
    constant = (y_test.astype(str) == majority).astype(np.float64)
    if kind != "accuracy":
        return None, _constant_score(kind, reference, X_test, y_test, "classification")
    right = (_labels(model.predict(X_test)) == _labels(y_test)).astype(np.float64)
    if abs(right.mean() - score) > 1e-9:
        return None, float(constant.mean())  # the score is not this per-row mean
    return right - constant, float(constant.mean())


def _error_gain(model, reference, X_test, y_test, kind):
    """Per row: the constant's (training mean's) loss minus the model's."""
    y = y_test.astype(np.float64)
    mean = float(np.mean(reference.astype(np.float64)))
    predicted = np.asarray(model.predict(X_test), dtype=np.float64)
    if kind in ("r2", "neg_mean_squared_error", "neg_root_mean_squared_error"):
        constant_loss, model_loss = (y - mean) ** 2, (y - predicted) ** 2
    elif kind == "neg_mean_absolute_error":
        constant_loss, model_loss = np.abs(y - mean), np.abs(y - predicted)
    else:
        return None, _constant_score(kind, reference, X_test, y_test, "regression")
    if kind == "r2":
        total = float(np.sum((y - y.mean()) ** 2))
        value = 1.0 - float(constant_loss.sum()) / total if total > 0 else 0.0
    elif kind == "neg_root_mean_squared_error":
        value = -float(np.sqrt(constant_loss.mean()))
    else:
        value = -float(constant_loss.mean())
    return constant_loss - model_loss, value


def _probability_gain(model, reference, X_test, y_test, kind, score):
    """Per row: the constant's (the training class shares') log loss or Brier score
    minus the model's."""
    y_test = np.asarray(y_test)
    loss = ProbabilityLoss.make(model, kind, y_test, True, None)
    if loss is None:
        return None, None
    classes = _labels(model.classes_)
    shares = np.array([np.mean(_labels(reference) == c) for c in classes])
    rows = np.arange(len(y_test))
    model_loss = loss(np.asarray(model.predict_proba(X_test)), y_test, rows)
    constant_loss = loss(np.tile(shares, (len(y_test), 1)), y_test, rows)
    if abs(-model_loss.mean() - score) > 1e-9 * max(1.0, abs(score)):
        return None, -float(constant_loss.mean())  # the score is not this per-row mean
    return constant_loss - model_loss, -float(constant_loss.mean())


def _constant_score(kind, reference, X_test, y_test, task):
    """A constant model's score by the scorer ``kind``: the training class shares
    (scikit-learn's DummyClassifier, "prior") or the training mean."""
    from sklearn.dummy import DummyClassifier, DummyRegressor
    from sklearn.metrics import get_scorer

    dummy = DummyClassifier(strategy="prior") if task == "classification" else (
        DummyRegressor())
    dummy.fit(np.zeros((len(reference), 1)), reference)
    return float(get_scorer(kind)(dummy, np.zeros((len(y_test), 1)), y_test))


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
    words, value, _ = shown_score(score_name, score)
    constant = shown_score(score_name, found.score)[1]
    interval = (f"95% interval of ROC AUC - 0.5, DeLong's: {found.low:.3g} to "
                f"{found.high:.3g}" if found.test == "roc_auc" else
                f"95% interval of the model's gain per row: {found.low:.3g} to "
                f"{found.high:.3g}")
    if found.no_skill:
        claim = "no better than"
        interval += ", at or below zero"
        conclusion = ("It has no skill to explain, so the verdict relies on nothing; the "
                      "importances describe noise.")
    else:
        claim = "not shown to be better than"
        interval += ", which includes zero"
        conclusion = ("Until it is (more rows may show it), the verdict relies on nothing: "
                      "the importances may describe noise.")
    return Finding(
        kind="baseline", features=(),
        message=(f"The model is {claim} {found.model} on the {n_test:,} held-out rows: "
                 f"held-out {words} {value:.3f} against {constant:.3f} for {found.model} "
                 f"fit on the training rows ({interval}). {conclusion}"),
        details={"baseline_score": found.score, "score": score, "score_name": score_name,
                 "gain_low": found.low, "gain_high": found.high,
                 "no_skill": found.no_skill, "test": found.test})
