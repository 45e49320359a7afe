"""Predictions of a model in the tree format: raw margin, probabilities, labels.

These apply a :class:`~sapwood._format.TreeEnsemble`'s ``link`` the way the source
library does, so an adapted model predicts what the library predicts
(``decision_function`` / ``output_margin``, ``predict_proba`` and ``predict``). They sit
at the format layer: ``TreeEnsemble.predict`` and ``predict_proba`` call them, and
:mod:`sapwood.adapters` wraps them for any model ``as_ensemble`` reads.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit, softmax

__all__ = ["RawOutputs", "classes_per_output", "predict", "predict_cumulative_hazard",
           "predict_proba", "predict_raw", "predict_survival", "risk_from_raw"]

# scikit-learn binary classifiers that predict the positive class at margin 0 (the
# rest, like argmax, pick the first class on a tie).
_TIES_TO_POSITIVE = {"GradientBoostingClassifier"}


class RawOutputs:
    """The ensemble as this module reads it, its raw outputs already computed (``raw``,
    as ``raw_predict(native=True)`` gives them): the measures and effects that sum the
    trees themselves turn their sums into the model's predictions here, as the model
    does."""

    def __init__(self, ensemble, raw):
        self._ensemble = ensemble
        self._raw = raw

    def raw_predict(self, X, native=False):
        return self._raw

    def __getattr__(self, name):
        return getattr(self._ensemble, name)


def ties_to_positive(ensemble) -> bool:
    """Whether a binary classifier predicts the positive class at margin 0."""
    return ensemble.kind.library == "sklearn" and ensemble.kind.model in _TIES_TO_POSITIVE


def predict_raw(ensemble, X) -> np.ndarray:
    """The raw output before the link (a boosting model's margin).

    Parameters
    ----------
    ensemble : TreeEnsemble
    X : array-like of shape (n_samples, n_features)

    Returns
    -------
    ndarray
        Boosting (``combine="sum"``): shape (n_samples,) with one output column, else
        (n_samples, n_columns). Averaging ensembles: the mean leaf value, shape
        (n_samples,) for one regression output, (n_samples, n_outputs) for several,
        (n_samples, n_classes) for single-output classification and
        (n_samples, n_outputs, max_n_classes) otherwise. A survival model: its risk
        score before the link, shape (n_samples,) (:func:`risk_from_raw`).
    """
    raw = ensemble.raw_predict(X, native=True)
    if ensemble.task == "survival":
        return risk_from_raw(ensemble, raw)
    if ensemble.combine == "sum":
        return raw[:, 0] if raw.shape[1] == 1 else raw
    if ensemble.task == "regression":
        raw = raw[:, :, 0]
        return raw[:, 0] if raw.shape[1] == 1 else raw
    return raw[:, 0, :] if raw.shape[1] == 1 else raw


def predict_proba(ensemble, X):
    """Class probabilities, as the source library's ``predict_proba``.

    Returns
    -------
    ndarray of shape (n_samples, n_classes), or a list of such arrays (one per output)
    for a multi-output classification forest.
    """
    if ensemble.task != "classification":
        raise ValueError("predict_proba needs a classification model; this model's task is "
                         f"{ensemble.task!r}")
    raw = ensemble.raw_predict(X, native=True)
    if ensemble.combine == "mean":
        classes = classes_per_output(ensemble, raw.shape[1])
        probas = []
        for k, labels in enumerate(classes):
            proba = raw[:, k, :len(labels)]
            total = proba.sum(axis=1, keepdims=True)
            total[total == 0.0] = 1.0
            probas.append(proba / total)
        return probas[0] if len(probas) == 1 else probas
    if ensemble.link == "logistic" and raw.shape[1] == 1:
        positive = expit(raw[:, 0])
        return np.column_stack([1.0 - positive, positive])
    if ensemble.link == "softmax":
        return softmax(raw, axis=1)
    raise ValueError(f"a boosting model with link {ensemble.link!r} and {raw.shape[1]} output "
                     "columns has no class probabilities")


def predict(ensemble, X) -> np.ndarray:
    """Predictions as the source library's ``predict``: class labels for classifiers,
    the link-transformed output (mean, rate, probability) for regressors, the risk
    score for survival models."""
    if ensemble.task == "survival":
        risk = predict_raw(ensemble, X)
        if ensemble.link != "exp":
            return risk
        if ensemble.accumulate != "float64":
            # XGBoost's survival objectives give expf of the float32 margin: the float64
            # exp rounded to float32 is that value (tests/adapters/test_xgboost_survival.py).
            return np.exp(risk).astype(np.float32).astype(np.float64)
        return np.exp(risk)
    if ensemble.task == "classification":
        proba = predict_proba(ensemble, X)
        if isinstance(proba, list):
            classes = classes_per_output(ensemble, len(proba))
            return np.column_stack([np.asarray(labels)[p.argmax(axis=1)]
                                    for labels, p in zip(classes, proba, strict=True)])
        labels = classes_per_output(ensemble, 1)[0]
        if ties_to_positive(ensemble) and proba.shape[1] == 2:
            return np.asarray(labels)[(predict_raw(ensemble, X) >= 0.0).astype(np.intp)]
        return np.asarray(labels)[proba.argmax(axis=1)]
    raw = predict_raw(ensemble, X)
    if ensemble.link == "identity":
        return raw
    if ensemble.link == "exp":
        return np.exp(raw)
    if ensemble.link == "logistic":
        return expit(raw)
    raise ValueError(f"a regression model cannot have link {ensemble.link!r}")


def classes_per_output(ensemble, n_outputs):
    """The class labels of each of a classifier's ``n_outputs`` outputs (its
    ``classes``, else 0, 1, ... as many as its trees' values hold)."""
    classes = ensemble.classes
    if classes is None:
        width = ensemble.trees[0].max_n_classes if ensemble.combine == "mean" else (
            max(2, int(ensemble.tree_output.max()) + 1))
        return [tuple(range(width))] * n_outputs
    if n_outputs == 1:
        return [tuple(classes)]
    return [tuple(labels) for labels in classes]


def risk_from_raw(ensemble, raw) -> np.ndarray:
    """A survival model's risk score from its ``raw_predict`` output, as
    scikit-survival computes it: a forest's cumulative hazard summed over the event
    times (``is_event_time``), or its leaves' risk score when it keeps no functions; a
    boosted model's log hazard ratio. Shape (n_samples,)."""
    if ensemble.combine == "sum":
        return raw[:, 0]
    if ensemble.times is None:
        return raw[:, 0, 0]
    return raw[:, ensemble.is_event_time, 0].sum(axis=1)


def predict_cumulative_hazard(ensemble, X) -> np.ndarray:
    """A survival model's cumulative hazard at each of its ``times``, shape
    (n_samples, n_times): a forest's mean leaf function, a boosted model's
    ``exp(risk) * baseline_cumulative_hazard`` (as scikit-survival's Breslow
    estimator)."""
    _check_functions(ensemble, "cumulative hazard")
    raw = ensemble.raw_predict(X, native=True)
    if ensemble.combine == "mean":
        return np.ascontiguousarray(raw[:, :, 0])
    return np.exp(raw[:, :1]) * ensemble.baseline_cumulative_hazard


def predict_survival(ensemble, X) -> np.ndarray:
    """A survival model's survival probability at each of its ``times``, shape
    (n_samples, n_times): a forest's mean leaf function, a boosted model's
    ``exp(-baseline) ** exp(risk)`` (as scikit-survival's Breslow estimator)."""
    _check_functions(ensemble, "survival function")
    raw = ensemble.raw_predict(X, native=True)
    if ensemble.combine == "mean":
        return np.ascontiguousarray(raw[:, :, 1])
    return np.power(np.exp(-ensemble.baseline_cumulative_hazard), np.exp(raw[:, :1]))


def _check_functions(ensemble, what):
    if ensemble.task != "survival":
        raise ValueError(f"a {what} needs a survival model; this model's task is "
                         f"{ensemble.task!r}")
    if not ensemble.has_survival_functions:
        reason = ("its trees keep only the risk score (scikit-survival's low_memory=True; "
                  "refit with low_memory=False)" if ensemble.combine == "mean" else
                  "it has no baseline hazard (only a Cox-type loss gives one)")
        raise ValueError(f"this survival model has no {what}: {reason}")
