"""The losses of gradient boosting, one object each, as scikit-learn 1.9 computes them.

A boosting estimator picks its loss once per fit, ``make_loss(loss, alpha, n_classes)``,
and asks it everything that depends on the loss:

- ``default_init()``: the constant model used when ``init=None`` (scikit-learn's dummy
  estimators), and ``raw_from_init(init, X)``: its predictions through the link, the
  initial raw scores;
- ``gradient(y, raw)``: the per-row gradient, whose negative (the pseudo-residual)
  the trees are grown on, one column per tree of a stage;
- ``leaf_value(...)``: the line-search step that replaces a leaf's mean, for the losses
  whose ``updates_leaves`` is true;
- ``per_row_loss`` / ``mean_loss`` and ``score_factor`` for ``train_score_`` and the
  out-of-bag scores (scikit-learn reports squared error and binomial deviance doubled);
- ``link`` (and ``raw_scale``) for the tree format, ``proba(raw)`` for classifiers.

Row-by-row formulas are the Numba kernels of :mod:`sapwood._kernels._losses` (the C
library's exp/log, bit-identical to scikit-learn's compiled losses); the leaf steps use
NumPy and scikit-learn's weighted percentile in the order scikit-learn does, so every
number is scikit-learn's.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from scipy import special
from sklearn.dummy import DummyClassifier, DummyRegressor

from .._kernels import _losses as kernels
from .._sklearn_compat import _weighted_percentile

__all__ = ["CLASSIFICATION_LOSSES", "LOSSES", "REGRESSION_LOSSES", "make_loss"]

_EPS = np.finfo(np.float64).eps


def _safe_divide(numerator, denominator):
    # scikit-learn's guard for the Newton steps: a vanishing hessian gives a zero step.
    if abs(denominator) < 1e-150:
        return 0.0
    result = float(numerator) / float(denominator)
    if math.isinf(result):
        # stacklevel 3: the warning points at the estimator's leaf update.
        warnings.warn("overflow encountered in _safe_divide", RuntimeWarning, stacklevel=3)
    return result


class Loss:
    """What every loss answers; subclasses fill in the formulas."""

    #: the tree format's link from the summed raw score to the prediction
    link = "identity"
    #: the tree format's raw score is ``raw_scale`` times the estimator's
    raw_scale = 1.0
    #: ``train_score_`` is ``score_factor`` times the weighted mean loss
    score_factor = 1.0
    #: whether the line search replaces each leaf's mean of the residuals
    updates_leaves = True

    @classmethod
    def make(cls, alpha, n_classes):
        """The loss for this fit; ``alpha`` and ``n_classes`` for the losses that read them."""
        return cls()

    def before_stage(self, y, raw, sample_weight):
        """Set-up at the start of every stage (Huber's threshold)."""

    def mean_loss(self, y, raw, sample_weight):
        return float(np.average(self.per_row_loss(y, raw), weights=sample_weight))


class _RegressionLoss(Loss):
    """One column, identity link; subclasses give the row kernels on a 1-d raw score."""

    def default_init(self):
        return DummyRegressor(strategy="mean")

    def raw_from_init(self, init, X):
        return init.predict(X).astype(np.float64).reshape(-1, 1)

    def gradient(self, y, raw):
        return self._row_gradient(y, np.ascontiguousarray(raw[:, 0])).reshape(-1, 1)

    def per_row_loss(self, y, raw):
        return self._row_loss(y, np.ascontiguousarray(raw[:, 0]))


class SquaredError(_RegressionLoss):
    """Half squared error; the tree's leaf means are already the step."""

    score_factor = 2.0  # train_score_ is the mean squared error
    updates_leaves = False

    def _row_gradient(self, y, raw):
        return kernels.squared_gradient(y, raw)

    def _row_loss(self, y, raw):
        return kernels.squared_loss(y, raw)


class AbsoluteError(_RegressionLoss):
    """Absolute error; a leaf's value is the weighted median of its residuals."""

    def default_init(self):
        return DummyRegressor(strategy="quantile", quantile=0.5)

    def _row_gradient(self, y, raw):
        return kernels.absolute_gradient(y, raw)

    def _row_loss(self, y, raw):
        return kernels.absolute_loss(y, raw)

    def leaf_value(self, y, residual, raw, sample_weight, k):
        return _weighted_percentile(y - raw, sample_weight, 50)


class Quantile(_RegressionLoss):
    """Pinball loss of the ``alpha``-quantile; a leaf's value is the weighted
    ``alpha``-quantile of its residuals."""

    def __init__(self, alpha):
        self.alpha = alpha

    @classmethod
    def make(cls, alpha, n_classes):
        return cls(alpha)

    def default_init(self):
        return DummyRegressor(strategy="quantile", quantile=self.alpha)

    def _row_gradient(self, y, raw):
        return kernels.pinball_gradient(y, raw, float(self.alpha))

    def _row_loss(self, y, raw):
        return kernels.pinball_loss(y, raw, float(self.alpha))

    def leaf_value(self, y, residual, raw, sample_weight, k):
        return _weighted_percentile(y - raw, sample_weight, 100 * self.alpha)


class Huber(_RegressionLoss):
    """Huber loss whose threshold ``delta`` is, at every stage, the weighted
    ``alpha``-quantile of the absolute residuals (0.5 before the first stage, as
    scikit-learn's); a leaf's value is the median plus the mean clipped residual."""

    def __init__(self, alpha):
        self.alpha = alpha
        self.delta = 0.5

    @classmethod
    def make(cls, alpha, n_classes):
        return cls(alpha)

    def default_init(self):
        return DummyRegressor(strategy="quantile", quantile=0.5)

    def before_stage(self, y, raw, sample_weight):
        residual = np.abs(y - raw[:, 0])
        self.delta = float(_weighted_percentile(residual, sample_weight, 100 * self.alpha))

    def _row_gradient(self, y, raw):
        return kernels.huber_gradient(y, raw, self.delta)

    def _row_loss(self, y, raw):
        return kernels.huber_loss(y, raw, self.delta)

    def leaf_value(self, y, residual, raw, sample_weight, k):
        target = y - raw
        median = _weighted_percentile(target, sample_weight, 50)
        diff = target - median
        term = np.sign(diff) * np.minimum(self.delta, np.abs(diff))
        return median + np.average(term, weights=sample_weight)


class _BinaryLoss(Loss):
    """Two classes, one column: raw is a log-odds (times ``1 / raw_scale``); a leaf's
    value is one Newton step."""

    link = "logistic"

    def default_init(self):
        return DummyClassifier(strategy="prior")

    def raw_from_init(self, init, X):
        proba = np.clip(init.predict_proba(X)[:, 1], _EPS, 1 - _EPS, dtype=np.float64)
        # Dividing by a power of two is exact: the same bits as scikit-learn's 0.5 * logit.
        return (special.logit(proba) / self.raw_scale).reshape(-1, 1)

    def gradient(self, y, raw):
        return self._row_gradient(y, np.ascontiguousarray(raw[:, 0])).reshape(-1, 1)

    def per_row_loss(self, y, raw):
        return self._row_loss(y, np.ascontiguousarray(raw[:, 0]))

    def proba(self, raw):
        proba = np.empty((raw.shape[0], 2))
        proba[:, 1] = special.expit(self.raw_scale * raw[:, 0])
        proba[:, 0] = 1 - proba[:, 1]
        return proba


class BinomialLogLoss(_BinaryLoss):
    """Half binomial deviance (log loss); ``"log_loss"`` with more than two classes is
    the multinomial deviance."""

    score_factor = 2.0  # train_score_ is the binomial deviance

    @classmethod
    def make(cls, alpha, n_classes):
        return MultinomialLogLoss(n_classes) if n_classes > 2 else cls()

    def _row_gradient(self, y, raw):
        return kernels.binomial_gradient(y, raw)

    def _row_loss(self, y, raw):
        return kernels.binomial_loss(y, raw)

    def leaf_value(self, y, residual, raw, sample_weight, k):
        numerator = np.average(residual, weights=sample_weight)
        prob = y - residual
        return _safe_divide(numerator, np.average(prob * (1 - prob), weights=sample_weight))


class ExponentialLoss(_BinaryLoss):
    """AdaBoost's exponential loss, two classes only. Its raw score is half the log-odds,
    so the probability is ``expit(2 raw)`` and the tree format carries twice the raw."""

    raw_scale = 2.0

    @classmethod
    def make(cls, alpha, n_classes):
        if n_classes > 2:
            raise ValueError(
                f"loss='exponential' is only suitable for a binary classification "
                f"problem, you have n_classes={n_classes}. "
                "Please use loss='log_loss' instead.")
        return cls()

    def _row_gradient(self, y, raw):
        return kernels.exponential_gradient(y, raw)

    def _row_loss(self, y, raw):
        return kernels.exponential_loss(y, raw)

    def leaf_value(self, y, residual, raw, sample_weight, k):
        numerator = np.average(residual, weights=sample_weight)
        hessian = residual.copy()
        hessian[y == 0] *= -1
        return _safe_divide(numerator, np.average(hessian, weights=sample_weight))


class MultinomialLogLoss(Loss):
    """Half multinomial deviance: one column (tree) per class, softmax link; a leaf's
    value is a Newton step scaled by ``(K - 1) / K``."""

    link = "softmax"

    def __init__(self, n_classes):
        self.n_classes = n_classes

    def default_init(self):
        return DummyClassifier(strategy="prior")

    def raw_from_init(self, init, X):
        from scipy.stats import gmean  # lazy: scipy.stats is slow to import

        proba = np.clip(init.predict_proba(X), _EPS, 1 - _EPS, dtype=np.float64)
        return np.log(proba / gmean(proba, axis=1)[:, None])

    def gradient(self, y, raw):
        return kernels.multinomial_gradient(y, np.ascontiguousarray(raw))

    def per_row_loss(self, y, raw):
        return kernels.multinomial_loss(y, np.ascontiguousarray(raw))

    def leaf_value(self, y, residual, raw, sample_weight, k):
        y = (y == k).astype(np.float64)
        numerator = np.average(residual, weights=sample_weight)
        numerator *= (self.n_classes - 1) / self.n_classes
        prob = y - residual
        return _safe_divide(numerator, np.average(prob * (1 - prob), weights=sample_weight))

    def proba(self, raw):
        shifted = raw - raw.max(axis=1, keepdims=True)
        np.exp(shifted, out=shifted)
        shifted /= shifted.sum(axis=1, keepdims=True)
        return shifted


REGRESSION_LOSSES = {"squared_error": SquaredError, "absolute_error": AbsoluteError,
                     "huber": Huber, "quantile": Quantile}
CLASSIFICATION_LOSSES = {"log_loss": BinomialLogLoss, "exponential": ExponentialLoss}


LOSSES = {**REGRESSION_LOSSES, **CLASSIFICATION_LOSSES}


def make_loss(name, alpha=None, n_classes=None):
    """The loss object for a boosting estimator's ``loss`` parameter, for one fit."""
    return LOSSES[name].make(alpha, n_classes)
