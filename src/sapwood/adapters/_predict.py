"""Predictions of any model sapwood reads: raw margin, probabilities, labels.

:func:`as_ensemble` first, then the format's own prediction rules
(:mod:`sapwood._prediction`), which apply the ensemble's ``link`` the way the source
library does (``decision_function`` / ``output_margin``, ``predict_proba``, ``predict``).
"""

from __future__ import annotations

import numpy as np

from .. import _prediction
from .._prediction import _TIES_TO_POSITIVE, classes_per_output
from ._resolve import as_ensemble

__all__ = ["predict", "predict_proba", "predict_raw", "_TIES_TO_POSITIVE",
           "classes_per_output"]


def predict_raw(model, X) -> np.ndarray:
    """The raw output before the link (a boosting model's margin); see
    :func:`sapwood._prediction.predict_raw`.

    Parameters
    ----------
    model : anything :func:`sapwood.adapters.as_ensemble` accepts
    X : array-like of shape (n_samples, n_features)
    """
    return _prediction.predict_raw(as_ensemble(model), X)


def predict_proba(model, X):
    """Class probabilities, as the source library's ``predict_proba``: an ndarray of
    shape (n_samples, n_classes), or a list of such arrays (one per output) for a
    multi-output classification forest."""
    return _prediction.predict_proba(as_ensemble(model), X)


def predict(model, X) -> np.ndarray:
    """Predictions as the source library's ``predict``: class labels for classifiers,
    the link-transformed output (mean, rate, probability) for regressors."""
    return _prediction.predict(as_ensemble(model), X)
