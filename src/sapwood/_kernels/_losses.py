"""Per-row losses and gradients of gradient boosting, computed with the C library.

scikit-learn's compiled losses (``sklearn/_loss/_loss.pyx.tp``) call ``exp``, ``log``
and ``log1p`` from ``libc.math``; NumPy's ``np.exp`` is its own (SIMD) implementation
and differs from the C library's in the last bit for some arguments. A last-bit
difference in a gradient is enough to flip a near-tie between two splits, so these
kernels evaluate the same formulas, with the same branches and the same order of
operations, through ``math.exp`` / ``math.log`` / ``math.log1p``, which Numba compiles
to calls of the C library's functions. That gives bit-identical gradients and hence
bit-identical trees.

Every function works row by row on float64 arrays; ``raw`` is (n_samples,) for the
one-column losses and (n_samples, n_classes) for the multinomial loss, whose ``y`` holds
the encoded class 0..K-1 as a float.
"""

import math

import numpy as np

from ._arrays import empty
from ._numba import kernel

__all__ = [
    "binomial_gradient", "binomial_loss", "exponential_gradient", "exponential_loss",
    "multinomial_gradient", "multinomial_loss", "absolute_gradient", "absolute_loss",
    "pinball_gradient", "pinball_loss", "huber_gradient", "huber_loss",
    "squared_gradient", "squared_loss",
]


@kernel
def _log1pexp(x):
    # log(1 + exp(x)) with the cut-offs of Maechler's note (Eq. 10) as scikit-learn
    # uses them: exact to double precision and free of overflow.
    if x <= -37.0:
        return math.exp(x)
    if x <= -2.0:
        return math.log1p(math.exp(x))
    if x <= 18.0:
        return math.log(1.0 + math.exp(x))
    if x <= 33.3:
        return x + math.exp(-x)
    return x


@kernel
def binomial_loss(y, raw):
    """Half binomial deviance ``log(1 + exp(raw)) - y raw`` per row."""
    out = empty(y.shape[0], np.float64)
    for i in range(y.shape[0]):
        out[i] = _log1pexp(raw[i]) - y[i] * raw[i]
    return out


@kernel
def binomial_gradient(y, raw):
    """``expit(raw) - y`` per row, evaluated as ``((1 - y) - y e) / (1 + e)`` with
    ``e = exp(-raw)`` (and ``exp(raw) - y`` far in the left tail)."""
    out = empty(y.shape[0], np.float64)
    for i in range(y.shape[0]):
        r = raw[i]
        if r > -37.0:
            e = math.exp(-r)
            out[i] = ((1.0 - y[i]) - y[i] * e) / (1.0 + e)
        else:
            out[i] = math.exp(r) - y[i]
    return out


@kernel
def exponential_loss(y, raw):
    """AdaBoost's exponential loss ``y / exp(raw) + (1 - y) exp(raw)`` per row."""
    out = empty(y.shape[0], np.float64)
    for i in range(y.shape[0]):
        e = math.exp(raw[i])
        out[i] = y[i] / e + (1.0 - y[i]) * e
    return out


@kernel
def exponential_gradient(y, raw):
    out = empty(y.shape[0], np.float64)
    for i in range(y.shape[0]):
        e = math.exp(raw[i])
        out[i] = -y[i] / e + (1.0 - y[i]) * e
    return out


@kernel
def _exp_minus_max(raw, i, p):
    # p[k] = exp(raw[i, k] - max_k raw[i, k]); returns (max, sum of p), summed in order.
    top = raw[i, 0]
    for k in range(1, raw.shape[1]):
        if top < raw[i, k]:
            top = raw[i, k]
    total = 0.0
    for k in range(raw.shape[1]):
        p[k] = math.exp(raw[i, k] - top)
        total += p[k]
    return top, total


@kernel
def multinomial_loss(y, raw):
    """Half multinomial deviance ``logsumexp(raw) - raw[y]`` per row."""
    out = empty(y.shape[0], np.float64)
    p = empty(raw.shape[1], np.float64)
    for i in range(y.shape[0]):
        top, total = _exp_minus_max(raw, i, p)
        out[i] = math.log(total) + top
        out[i] -= raw[i, int(y[i])]
    return out


@kernel
def multinomial_gradient(y, raw):
    """``softmax(raw)[k] - (y == k)`` per row and class."""
    n_classes = raw.shape[1]
    out = empty((y.shape[0], n_classes), np.float64)
    p = empty(n_classes, np.float64)
    for i in range(y.shape[0]):
        _, total = _exp_minus_max(raw, i, p)
        for k in range(n_classes):
            out[i, k] = p[k] / total - (1.0 if y[i] == k else 0.0)
    return out


@kernel
def squared_loss(y, raw):
    """Half squared error per row."""
    out = empty(y.shape[0], np.float64)
    for i in range(y.shape[0]):
        d = raw[i] - y[i]
        out[i] = 0.5 * d * d
    return out


@kernel
def squared_gradient(y, raw):
    out = empty(y.shape[0], np.float64)
    for i in range(y.shape[0]):
        out[i] = raw[i] - y[i]
    return out


@kernel
def absolute_loss(y, raw):
    out = empty(y.shape[0], np.float64)
    for i in range(y.shape[0]):
        out[i] = abs(raw[i] - y[i])
    return out


@kernel
def absolute_gradient(y, raw):
    out = empty(y.shape[0], np.float64)
    for i in range(y.shape[0]):
        out[i] = 1.0 if raw[i] > y[i] else -1.0
    return out


@kernel
def pinball_loss(y, raw, quantile):
    """Pinball (quantile) loss per row."""
    out = empty(y.shape[0], np.float64)
    for i in range(y.shape[0]):
        if y[i] >= raw[i]:
            out[i] = quantile * (y[i] - raw[i])
        else:
            out[i] = (1.0 - quantile) * (raw[i] - y[i])
    return out


@kernel
def pinball_gradient(y, raw, quantile):
    out = empty(y.shape[0], np.float64)
    for i in range(y.shape[0]):
        out[i] = -quantile if y[i] >= raw[i] else 1.0 - quantile
    return out


@kernel
def huber_loss(y, raw, delta):
    """Huber loss per row: quadratic within ``delta`` of y, linear outside."""
    out = empty(y.shape[0], np.float64)
    for i in range(y.shape[0]):
        a = abs(y[i] - raw[i])
        if a <= delta:
            out[i] = 0.5 * a * a
        else:
            out[i] = delta * (a - 0.5 * delta)
    return out


@kernel
def huber_gradient(y, raw, delta):
    out = empty(y.shape[0], np.float64)
    for i in range(y.shape[0]):
        r = raw[i] - y[i]
        if abs(r) <= delta:
            out[i] = r
        elif r >= 0:
            out[i] = delta
        else:
            out[i] = -delta
    return out
