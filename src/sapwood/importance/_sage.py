"""SAGE: Shapley additive global importance, by permutation sampling (Covert et al.).

The game: a coalition S of features is worth the drop in expected loss when the model
knows the features in S and not the others, which are drawn from their marginal
distribution (a background sample B of rows: "marginal imputation")::

    f_S(x) = (1/|B|) sum_{b in B} f(x_S, b_{not S})          v(S) = E[L(y, f_{})] - E[L(y, f_S(x))]

and SAGE_j is feature j's Shapley value in it. The permutation estimator draws a row
(x, y) of the data (with replacement) and an order pi of the features, adds the
features one by one in that order and credits each with the fall in loss it brings::

    phi_pi(k) = L(y, f_{S_k-1}(x)) - L(y, f_{S_k}(x)),   S_k = {pi(1), ..., pi(k)}

SAGE_j is the mean of these draws, with standard error sd_j / sqrt(N). Rows are drawn
in batches, and sampling stops after the batch at which
``max_j se_j / (max_j SAGE_j - min_j SAGE_j) < thresh`` (the sage package's criterion),
or after ``n_permutations`` draws. The random stream is the sage package's (numpy's
``default_rng``: a batch of rows by ``choice``, then one shuffled order per row), so
the same seed and background give its numbers.

I. Covert, S. Lundberg, S.-I. Lee, "Understanding Global Feature Contributions With
Additive Importance Measures", NeurIPS 2020. doi:10.48550/arXiv.2004.00668
"""

from __future__ import annotations

import numbers
from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_array

from .._sklearn_compat import Interval, StrOptions, validate_params
from ..adapters import as_ensemble
from ..learners._inputs import check_rows
from ._mdi import feature_names_of
from ._result import ImportanceResult

__all__ = ["sage"]

LOSSES = ("squared_error", "log_loss")
# The sage package clips probabilities here before the logarithm.
PROBABILITY_FLOOR = 1e-12
# The smallest value range the criterion divides by (as the sage package).
MIN_GAP = 1e-12


@validate_params(
    {
        "model": "no_validation",
        "X": ["array-like"],
        "y": ["array-like"],
        "background": ["array-like", None],
        "n_background": [Interval(Integral, 1, None, closed="left")],
        "loss": [StrOptions(set(LOSSES)), None],
        "thresh": [Interval(Real, 0, 1, closed="neither")],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "n_permutations": [Interval(Integral, 1, None, closed="left"), None],
        "random_state": ["random_state"],
        "feature_names": [list, None],
    },
    prefer_skip_nested_validation=True,
)
def sage(model, X, y, *, background=None, n_background=128, loss=None, thresh=0.025,
         batch_size=512, n_permutations=None, random_state=None,
         feature_names=None) -> ImportanceResult:
    """SAGE values of a tree model's features, by permutation sampling until converged.

    Definition: docs/measures.md, section 'SAGE'.

    Parameters
    ----------
    model : fitted tree model in any format sapwood reads (its own ``predict`` /
        ``predict_proba`` are used when it has them)
    X, y : rows to explain (held-out rows: SAGE is the loss the features save there)
    background : array-like, optional
        Rows whose values stand in for the features left out (marginal imputation).
        Default: ``n_background`` rows of X drawn without replacement.
    n_background : int, default 128
    loss : {"squared_error", "log_loss"}, optional
        Default: squared error for regressions, log loss (probabilities clipped at
        1e-12) for classifiers.
    thresh : float in (0, 1), default 0.025
        Stop once the largest standard error is below ``thresh`` times the range of
        the values (the sage package's default).
    batch_size : int, default 512
        Rows (each with its own feature order) drawn between convergence checks.
    n_permutations : int, optional
        Stop after this many draws instead (at the end of a batch).
    random_state : int, Generator or None
        ``numpy.random.default_rng(random_state)`` draws the background, rows and
        orders.
    feature_names : list of str, optional

    Returns
    -------
    ImportanceResult
        ``importances_mean``: SAGE values (in loss units; they sum to the loss the
        model saves over the mean prediction); ``importances`` the draws (n_features,
        N); ``ci_low``/``ci_high`` the 95% t interval of the mean; ``extra``:
        ``std_error`` (sd / sqrt(N)), ``ratio`` (the criterion at the stop),
        ``converged`` and ``total`` (v of all features, estimated by the same draws).

    References
    ----------
    .. [1] I. Covert, S. Lundberg, S.-I. Lee, "Understanding Global Feature
       Contributions With Additive Importance Measures", NeurIPS 2020.
       doi:10.48550/arXiv.2004.00668
    """
    ensemble = as_ensemble(model)
    check_rows(X, y)
    names = feature_names_of(ensemble, feature_names, X)
    X = check_array(X, dtype=np.float64, ensure_all_finite="allow-nan")
    y = np.asarray(y)
    if X.shape[1] != ensemble.n_features:
        raise ValueError(f"X has {X.shape[1]} columns; the model has "
                         f"{ensemble.n_features} features")
    classify = ensemble.task == "classification"
    loss = ("log_loss" if classify else "squared_error") if loss is None else loss
    if loss == "log_loss" and not classify:
        raise ValueError("loss='log_loss' needs a classifier; this model is a regression")
    target = _targets(ensemble, y) if loss == "log_loss" else y.astype(np.float64)
    rng = np.random.default_rng(random_state)
    if background is None:
        size = min(n_background, X.shape[0])
        background = X[rng.choice(X.shape[0], size, replace=False)]
    else:
        background = check_array(background, dtype=np.float64, ensure_all_finite="allow-nan")
        if background.shape[1] != X.shape[1]:
            raise ValueError(f"background has {background.shape[1]} columns; X has "
                             f"{X.shape[1]}")
    # The model's own predict / predict_proba when it is a fitted estimator (the
    # numbers the model gives, at its own speed), else the tree format's (a model file,
    # a TreeEnsemble): the same predictions either way.
    source = model if hasattr(model, "predict_proba" if loss == "log_loss" else "predict") \
        else ensemble
    predict = source.predict_proba if loss == "log_loss" else source.predict
    limit = np.inf if n_permutations is None else n_permutations
    draws, n, ratio = [], 0, np.inf
    while n < limit:
        size = int(min(batch_size, limit - n))
        rows = rng.choice(X.shape[0], size)
        draws.append(_batch(predict, loss, X[rows], target[rows], background, rng))
        n += size
        scores = np.concatenate(draws)
        values = scores.mean(axis=0)
        std_error = scores.std(axis=0) / np.sqrt(n)
        ratio = std_error.max() / max(values.max() - values.min(), MIN_GAP)
        if n_permutations is None and ratio < thresh:
            break
    result = ImportanceResult.from_draws(
        scores.T, feature_names=names, method="sage",
        params={"loss": loss, "thresh": thresh, "batch_size": batch_size,
                "n_permutations": n, "n_background": background.shape[0],
                "random_state": random_state if isinstance(random_state, numbers.Integral)
                else None})
    result.extra.update(std_error=std_error, ratio=float(ratio),
                        converged=bool(ratio < thresh), total=float(values.sum()))
    return result



def _targets(ensemble, y):
    """Each label's column in ``predict_proba``."""
    classes = np.asarray(ensemble.classes)
    position = (y.reshape(-1, 1) == classes[None, :])
    if not position.any(axis=1).all():
        raise ValueError(f"y has labels the model does not know; its classes are "
                         f"{list(classes)}")
    return position.argmax(axis=1)


def _loss(loss, prediction, target):
    if loss == "squared_error":
        residual = prediction.reshape(len(target), -1) - target.reshape(len(target), -1)
        return (residual ** 2).sum(axis=1)
    picked = prediction[np.arange(len(target)), target]
    return -np.log(np.clip(picked, PROBABILITY_FLOOR, 1 - PROBABILITY_FLOOR))


def _batch(predict, loss, x, target, background, rng):
    """One draw per row of ``x``: each row gets its own order of the features, which
    join one at a time; a feature's draw is the fall in loss it brings. Features left
    out take every background row's values and the predictions are averaged."""
    m, p = x.shape
    n_background = background.shape[0]
    order = rng.permuted(np.tile(np.arange(p), (m, 1)), axis=1)
    known = np.zeros((m, p), dtype=bool)
    tiled = np.tile(background, (m, 1))
    rows = np.arange(m)

    def imputed_loss():
        filled = np.where(np.repeat(known, n_background, axis=0),
                          np.repeat(x, n_background, axis=0), tiled)
        prediction = np.asarray(predict(filled), dtype=np.float64)
        prediction = prediction.reshape(m, n_background, -1).mean(axis=1)
        return _loss(loss, prediction, target)

    scores = np.zeros((m, p))
    previous = imputed_loss()
    for k in range(p):
        known[rows, order[:, k]] = True
        current = imputed_loss()
        scores[rows, order[:, k]] = previous - current
        previous = current
    return scores
