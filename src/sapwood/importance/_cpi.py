"""Conditional predictive impact (CPI), with a test per feature (Watson & Wright 2021).

For a fitted model f, held-out rows (x_i, y_i), a per-row loss L and feature j (or a
group of features), with x~_i^(j) the row whose feature j is replaced by its
knockoff::

    delta_ij = L(y_i, f(x~_i^(j))) - L(y_i, f(x_i))        CPI_j = (1/n) sum_i delta_ij

A knockoff carries no information about y beyond the other features, so CPI_j > 0
means the model's predictions lean on what x_j says about y given the rest. The test
is one-sided, H0: E[delta_j] <= 0, on the n per-row differences: the paired t-test
t = CPI_j / (s_j / sqrt(n)) against Student's t with n - 1 degrees of freedom;
Fisher's exact test by sign flips (the share of B random sign patterns whose mean is
at least the observed one, (1 + #) / (B + 1)); or Wilcoxon's signed-rank test.

D. S. Watson, M. N. Wright, "Testing conditional independence in supervised learning
algorithms", Machine Learning 110, 2107-2129, 2021. doi:10.1007/s10994-021-06030-6
"""

from __future__ import annotations

import numbers
from numbers import Integral

import numpy as np
from scipy import stats
from sklearn.base import is_classifier
from sklearn.utils import check_array, check_random_state

from .._sklearn_compat import (
    HasMethods,
    Interval,
    StrOptions,
    validate_params,
)
from ..learners._inputs import check_rows
from ._engine._groups import feature_groups_given, resolve_groups
from ._engine._knockoff_sampler import GaussianKnockoffs, as_sampler, numeric_matrix, seed
from ._engine._result import ImportanceResult

__all__ = ["cpi"]

LOSSES = ("squared_error", "absolute_error", "log_loss", "zero_one")
TESTS = ("t", "fisher", "wilcoxon")

# Probabilities are clipped here before the logarithm (mlr3's classif.logloss, which
# the cpi R package uses, takes the same epsilon).
PROBABILITY_FLOOR = 1e-15

# Sign patterns drawn at a time by Fisher's test (bounds its memory to this many rows
# times n_samples).
FLIP_CHUNK = 256


def _per_row_loss(loss, model, X, y):
    """The loss of each row: a named loss or ``loss(model, X, y)``."""
    if callable(loss):
        values = np.asarray(loss(model, X, y), dtype=np.float64)
        if values.shape != (len(y),):
            raise ValueError(f"the loss callable of cpi must return one loss per row, "
                             f"shape ({len(y)},); got shape {values.shape}")
        return values
    if loss == "log_loss":
        # The predicted probability of each row's class (0 for a class the model
        # never saw).
        match = np.asarray(model.classes_)[None, :] == np.asarray(y)[:, None]
        picked = (model.predict_proba(X) * match).sum(axis=1)
        return -np.log(np.clip(picked, PROBABILITY_FLOOR, 1.0))
    prediction = model.predict(X)
    if loss == "zero_one":
        return (prediction != y).astype(np.float64)
    residual = np.asarray(prediction, dtype=np.float64) - np.asarray(y, dtype=np.float64)
    return residual ** 2 if loss == "squared_error" else np.abs(residual)


def _default_loss(model):
    if is_classifier(model):
        return "log_loss" if hasattr(model, "predict_proba") else "zero_one"
    return "squared_error"


def one_sided_pvalues(deltas, test, rng, n_permutations):
    """p-values of H0: E[delta] <= 0 for each row of ``deltas`` (n_units, n_samples).

    A row of exact zeros (the model does not use the feature) has p = 1."""
    n = deltas.shape[1]
    mean = deltas.mean(axis=1)
    if test == "t":
        sd = deltas.std(axis=1, ddof=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            statistic = mean / (sd / np.sqrt(n))
        p = stats.t.sf(statistic, n - 1)
        return np.where(sd > 0, p, np.where(mean > 0, 0.0, 1.0))
    if test == "wilcoxon":
        return np.array([stats.wilcoxon(row, alternative="greater").pvalue
                         if np.any(row != 0) else 1.0 for row in deltas])
    # Fisher: under H0 (symmetric about 0) each delta's sign is a fair coin. The
    # observed mean is lowered by a rounding margin so that a sign pattern giving the
    # same sum in another order (all +1, for one) counts as "at least".
    observed = (mean - 1e-12 * np.abs(mean))[:, None]
    at_least = np.zeros(deltas.shape[0])
    for start in range(0, n_permutations, FLIP_CHUNK):
        size = min(FLIP_CHUNK, n_permutations - start)
        signs = rng.randint(2, size=(size, n)) * 2.0 - 1.0
        at_least += (deltas @ signs.T / n >= observed).sum(axis=1)
    return (1.0 + at_least) / (n_permutations + 1.0)


def _column(X, position):
    return X.iloc[:, position].to_numpy() if hasattr(X, "iloc") else X[:, position]


def _replace(X, positions, columns):
    """A copy of X with the columns at ``positions`` set to ``columns`` (1-D arrays)."""
    if hasattr(X, "iloc"):
        X = X.copy()
        for position, values in zip(positions, columns, strict=True):
            X[X.columns[position]] = values   # replaced whole: takes the values' dtype
        return X
    X = np.array(X, dtype=np.result_type(X.dtype, *(c.dtype for c in columns)))
    for position, values in zip(positions, columns, strict=True):
        X[:, position] = values
    return X


@validate_params(
    {
        "model": [HasMethods(["predict"])],
        "X": ["array-like"],
        "y": ["array-like"],
        "sampler": [StrOptions({"knockoff", "gaussian_sdp", "permutation"}),
                    GaussianKnockoffs],
        "loss": [StrOptions(set(LOSSES)), callable, None],
        "test": [StrOptions(set(TESTS))],
        "n_repeats": [Interval(Integral, 1, None, closed="left")],
        "feature_groups": [dict, None],
        "n_permutations": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "groups": [dict, None],
    },
    prefer_skip_nested_validation=True,
)
def cpi(model, X, y, *, sampler="knockoff", loss=None, test="t", n_repeats=1,
        feature_groups=None, n_permutations=1999, random_state=None, groups=None):
    """Conditional predictive impact of each feature (or group), with a one-sided test.

    On held-out rows [1]_::

        delta_ij = L(y_i, f(x~_i^(j))) - L(y_i, f(x_i)),     CPI_j = (1/n) sum_i delta_ij

    where x~_i^(j) is row i with feature j (every column of group j) replaced by its
    knockoff, or by the values of a shuffled row with ``sampler="permutation"``.
    With ``n_repeats`` > 1, delta_ij is averaged over that many draws first. The
    p-value tests H0: E[delta_j] <= 0 against "the model's loss grows without x_j's
    own information":

    - ``"t"``: paired t-test, t = CPI_j / (s_j / sqrt(n)), p = P(T_{n-1} >= t);
    - ``"fisher"``: Fisher's exact sign-flip test, p = (1 + #{b : (1/n) sum_i
      sigma_bi delta_ij >= CPI_j}) / (B + 1) over B = ``n_permutations`` random sign
      vectors sigma_b in {-1, 1}^n (one set of sign vectors for all features);
    - ``"wilcoxon"``: Wilcoxon's signed-rank test (``scipy.stats.wilcoxon``, zeros
      dropped).

    A feature the model never uses has delta = 0 on every row and p = 1. The
    knockoffs are second-order Gaussian (:class:`GaussianKnockoffs`) with mean and
    covariance estimated from X (``GaussianKnockoffs(shrinkage="auto")``) unless the
    sampler carries them: the
    test is valid when they are exchangeable with X, exactly so for Gaussian X.
    Shuffled values break the dependence between correlated features too, so with
    ``sampler="permutation"`` a feature correlated with a relevant one can test
    positive without being conditionally relevant (the permutation importance's
    extrapolation); the knockoff sampler is the conditional test.

    Parameters
    ----------
    model : fitted estimator
        Anything with ``predict`` (and ``predict_proba`` for the log loss).
    X : array-like or DataFrame of shape (n_samples, n_features)
        Held-out rows, numeric for the knockoff samplers. Column names become the
        feature names.
    y : array-like of shape (n_samples,)
    sampler : {"knockoff", "gaussian_sdp", "permutation"} or GaussianKnockoffs, \
default="knockoff"
        ``"knockoff"``: equicorrelated Gaussian knockoffs fitted to X;
        ``"gaussian_sdp"``: the SDP construction (needs cvxpy); a
        :class:`GaussianKnockoffs` gives the construction and, optionally, a known (or
        training-set) mean and covariance; ``"permutation"``: each feature's (or
        group's) rows shuffled, one permutation per feature and repeat.
    loss : {"squared_error", "absolute_error", "log_loss", "zero_one"}, callable or \
None, default=None
        The per-row loss. None: squared error for regressors, log loss (probabilities
        clipped at 1e-15) for classifiers with ``predict_proba``, else 0/1 loss. A
        callable ``loss(model, X, y)`` returns one loss per row.
    test : {"t", "fisher", "wilcoxon"}, default="t"
    n_repeats : int, default=1
        Knockoff (or permutation) draws averaged per row.
    feature_groups : dict of str to list, default=None
        Named sets of columns (names for a DataFrame, else positions) replaced
        together; the result has one entry per group, in order. (``groups``, the former
        name, still works with a FutureWarning.)
    n_permutations : int, default=1999
        Sign vectors B for Fisher's test (the cpi R package's default).
    random_state : int, RandomState instance or None, default=None
        ``rng = check_random_state(random_state)``; each repeat takes one seed for the
        knockoffs of all columns (``rng.randint(2**31 - 1)``) or, with permutations,
        ``rng.permutation(n_samples)`` per feature; Fisher's signs come last.
    groups : dict, default=None
        The former name of ``feature_groups`` (a FutureWarning): ``groups`` is
        scikit-learn's word for one label per row.

    Returns
    -------
    ImportanceResult
        ``method="cpi"``; ``importances`` (n_features, n_samples) holds delta_ij,
        ``importances_mean`` the CPI, ``importances_std`` the standard deviation over
        rows (ddof=0), ``ci_low`` / ``ci_high`` the 95% Student-t interval of the
        mean and ``pvalues`` the one-sided p-values of ``test``. ``extra`` has
        ``loss`` (the baseline mean loss) and, for the t-test, ``statistic``.
        Definition: docs/measures.md, section 'Conditional predictive impact (CPI)'.

    References
    ----------
    .. [1] D. S. Watson, M. N. Wright, "Testing conditional independence in supervised
       learning algorithms", Machine Learning 110, 2107-2129, 2021.
       doi:10.1007/s10994-021-06030-6

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LinearRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((400, 3))
    >>> y = X[:, 0] + rng.standard_normal(400)
    >>> model = LinearRegression().fit(X[:200], y[:200])
    >>> result = cpi(model, X[200:], y[200:], random_state=0)
    >>> bool(result.pvalues[0] < 0.01)
    True
    """
    check_rows(X, y)
    if not hasattr(X, "iloc"):
        X = check_array(X, dtype=None, input_name="X")
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"cpi needs a single-output y of shape (n_samples,); got shape "
                         f"{y.shape}")
    n_samples = X.shape[0]
    if n_samples < 2:
        raise ValueError(f"cpi needs at least 2 held-out rows; got {n_samples}")
    groups = feature_groups_given(feature_groups, groups, "cpi")
    names, units = resolve_groups(X, model, groups)
    loss = _default_loss(model) if loss is None else loss
    rng = check_random_state(random_state)
    knockoff = sampler != "permutation"
    if knockoff:
        matrix = numeric_matrix(X, "cpi")
        fitted = as_sampler("gaussian" if sampler == "knockoff" else sampler, "cpi")
        fitted.fit(X)

    baseline = _per_row_loss(loss, model, X, y)
    deltas = np.zeros((len(units), n_samples))
    for _ in range(n_repeats):
        if knockoff:
            tilde = fitted.sample(matrix, seed(rng))
        for u, positions in enumerate(units):
            if knockoff:
                values = [tilde[:, j] for j in positions]
            else:
                order = rng.permutation(n_samples)
                values = [_column(X, j)[order] for j in positions]
            replaced = _per_row_loss(loss, model, _replace(X, positions, values), y)
            deltas[u] += replaced - baseline
    deltas /= n_repeats

    pvalues = one_sided_pvalues(deltas, test, rng, n_permutations)
    params = {
        "sampler": sampler if isinstance(sampler, str) else f"gaussian_{sampler.construction}",
        "loss": loss if isinstance(loss, str) else repr(loss),
        "test": test, "n_repeats": n_repeats,
        "feature_groups": None if groups is None else {k: list(v) for k, v in groups.items()},
        "n_permutations": n_permutations if test == "fisher" else None,
        "random_state": random_state if isinstance(random_state, numbers.Integral) else None,
    }
    extra = {"loss": float(baseline.mean())}
    if test == "t":
        with np.errstate(divide="ignore", invalid="ignore"):
            extra["statistic"] = deltas.mean(axis=1) / (deltas.std(axis=1, ddof=1)
                                                        / np.sqrt(n_samples))
    return ImportanceResult.from_draws(deltas, feature_names=names, method="cpi",
                                       params=params, pvalues=pvalues, extra=extra)
