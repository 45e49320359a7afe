"""p-values for importances: Janitza's fast test and Altmann's permutation test (PIMP).

Janitza, Celik, Boulesteix (2018), doi:10.1007/s11634-016-0276-4: the importances of
irrelevant features scatter symmetrically around zero, so the negative ones, their
mirror images and the zeros form a null sample M::

    p_j = #{m in M : m >= imp_j} / |M|

Altmann, Tolosi, Sander, Lengauer (2010), doi:10.1093/bioinformatics/btq134: refit on
S permutations of the response and recompute the importance each time::

    p_j = (#{s : null_j(s) >= observed_j} + 1) / (S + 1)
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.base import clone
from sklearn.utils import check_random_state
from sklearn.utils.parallel import Parallel, delayed

from .._progress import progress_bar
from .._sklearn_compat import HasMethods, Interval, _safe_indexing, validate_params
from ..learners._parallel import resolve_n_jobs
from ._engine._result import ImportanceResult
from ._registry import MEASURES, MeasureInputs, by_api_name

__all__ = ["adjust_pvalues", "altmann_pvalues", "janitza_pvalues"]

# MeasureInputs fields a caller of altmann_pvalues may pass among measure_kwargs.
_INPUT_FIELDS = ("n_jobs", "progress")


def _altmann_names() -> list:
    """The names ``altmann_pvalues`` accepts: every registered measure that offers
    Altmann's test, by its ``names``."""
    return sorted(name for measure in MEASURES.values() if measure.altmann is not False
                  for name in measure.names)


def _named(name, estimator, seed):
    """``measure(model, X, y, **kwargs) -> ImportanceResult`` for a registered name: the
    measure's own recomputation for the test (MDI: before normalisation), else the
    measure on (X, y) with ``seed`` as its random_state."""
    measure, options = by_api_name(name)
    if callable(measure.altmann):
        return measure.altmann

    def compute(model, X, y, **kwargs):
        fields = {key: kwargs.pop(key) for key in _INPUT_FIELDS if key in kwargs}
        kwargs.pop("random_state", None)
        inputs = MeasureInputs(X_train=X, y_train=y, random_state=seed,
                               estimator=estimator, **fields)
        reason = measure.why_not(model, inputs, **options)
        if reason is not None:
            raise ValueError(f"measure {name!r} does not apply: {reason}")
        return measure.run(model, inputs, **{**options, **kwargs})

    return compute


@validate_params({"result": [ImportanceResult]}, prefer_skip_nested_validation=True)
def janitza_pvalues(result):
    """Janitza's p-values from the non-positive importances of the same result.

    For importances that scatter symmetrically around zero for irrelevant features
    (held-out or out-of-bag permutation importance, AIR), the negative values, their
    mirror images and the exact zeros make up a sample M from the null distribution
    [1]_::

        M   = {imp_j : imp_j < 0} + {-imp_j : imp_j < 0} + {imp_j : imp_j = 0}
        p_j = #{m in M : m >= imp_j} / |M|

    No refitting is needed, but the test is only as good as M is large: Janitza et
    al. designed it for high-dimensional data with many irrelevant features (ranger
    warns below 100 negative values). It is not meant for MDI, which is never
    negative. ranger's ``importance_pvalues(method = "janitza")`` counts the same
    ``m >= imp_j`` (one minus the share of M strictly below imp_j, its
    ``numSmaller``), ties included, so the p-values agree; ranger only refuses
    results without a negative importance, where this function accepts exact zeros
    alone.

    Definition: docs/measures.md, section 'Janitza p-values'.

    Parameters
    ----------
    result : ImportanceResult

    Returns
    -------
    ImportanceResult
        A copy of ``result`` with ``pvalues`` set, ``params["pvalues"] = "janitza"``
        and ``extra["null_importances"]`` = M (sorted).

    Raises
    ------
    ValueError
        If no importance is negative or zero: M is empty and there is no null sample.

    References
    ----------
    .. [1] S. Janitza, E. Celik, A.-L. Boulesteix, "A computationally fast variable
       importance test for random forests for high-dimensional data", Advances in
       Data Analysis and Classification 12, 885-915, 2018.
       doi:10.1007/s11634-016-0276-4
    """
    importances = result.importances_mean
    negative = importances[importances < 0]
    null = np.sort(np.concatenate([negative, -negative, importances[importances == 0]]))
    if null.shape[0] == 0:
        raise ValueError(
            f"janitza_pvalues needs negative or zero importances to build its null "
            f"distribution, and all {result.n_features} importances of this "
            f"{result.method!r} result are positive (or NaN); use altmann_pvalues, which "
            f"refits on permuted responses instead")
    # Count of null values >= imp_j, by binary search in the sorted null sample.
    counts = null.shape[0] - np.searchsorted(null, importances, side="left")
    pvalues = counts / null.shape[0]
    pvalues[np.isnan(importances)] = np.nan
    return result.replace(pvalues=pvalues, params={**result.params, "pvalues": "janitza"},
                          extra={**result.extra, "null_importances": null})


@validate_params(
    {
        "estimator": [HasMethods(["fit"])],
        "X": ["array-like"],
        "y": ["array-like"],
        "measure": [str, callable],
        "n_permutations": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "n_jobs": [Integral, None],
        "progress": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def altmann_pvalues(estimator, X, y, *, measure, n_permutations=100, random_state=None,
                    n_jobs=None, progress=False, **measure_kwargs):
    """Altmann's permutation p-values (PIMP) for any importance measure.

    Fit a clone of ``estimator`` on (X, y) and compute the observed importances; then,
    S times, permute y, refit a clone on the permuted response and recompute the
    importances, giving a null distribution per feature [1]_::

        p_j = (#{s : null_j(s) >= observed_j} + 1) / (S + 1)

    This is the non-parametric variant of PIMP (Altmann et al. also fit normal,
    log-normal or gamma distributions to the null values). It works for any measure
    and removes the bias of MDI toward features with many split points from the
    test, because the null importances carry the same bias; it costs S refits.

    Definition: docs/measures.md, section 'Altmann p-values (PIMP)'.

    Parameters
    ----------
    estimator : unfitted estimator
        Refit (``sklearn.base.clone``: same hyper-parameters and ``random_state``) on
        the data and on every permutation of y.
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    measure : str or callable
        ``measure(model, X, y, **measure_kwargs) -> ImportanceResult``, called with
        the fitted model and the response it was fit on; or the name of a measure in
        :data:`~sapwood.importance.MEASURES` that offers Altmann's test (its
        ``names``), computed on (X, y) as given; among them:

        - ``"mdi"``: :func:`mdi` *before* normalisation, the mean over trees of
          ``sum (w_i I_i - w_L I_L - w_R I_R) / w_root`` (``importances`` per tree),
          as Altmann et al. used randomForest's unnormalised Gini importance.
          Normalised shares would not do: with y permuted the informative features'
          share passes to the noise features, inflating their null;
        - ``"permutation"``: :func:`permutation_importance` on (X, y) as given (the
          training data);
        - ``"oob_permutation"``: :func:`oob_permutation_importance` (bagged forests);
        - ``"conditional_permutation"``, ``"ufi"``, ``"air"``
          (refits a clone of ``estimator`` with shadow columns), ``"friedman"``.
    n_permutations : int, default=100
        S, the number of permutations of y. The smallest attainable p-value is
        1 / (S + 1).
    random_state : int, RandomState instance or None, default=None
        The one source of randomness: ``rng = check_random_state(random_state)``
        draws the S row permutations up front, ``rng.permutation(n_samples)`` S times
        in a row, then, for a measure given by name, one seed
        ``rng.randint(2**31 - 1)`` that it receives as its ``random_state`` in every
        call (observed and null alike; measures that draw nothing ignore it). A
        callable measure handles its own randomness.
    n_jobs : int or None, default=None
        Refits run in parallel with joblib (threads preferred); the numbers do not
        depend on it.
    progress : bool, default=False
        Show a bar on stderr counting the refits on permuted responses.
    **measure_kwargs
        Passed to ``measure`` (for instance ``n_repeats``).

    Returns
    -------
    ImportanceResult
        The observed result with ``pvalues`` set, ``params["pvalues"] = "altmann"``,
        ``params["n_permutations"]`` and ``extra["null_importances"]`` of shape
        (n_features, S).

    References
    ----------
    .. [1] A. Altmann, L. Tolosi, O. Sander, T. Lengauer, "Permutation importance: a
       corrected feature importance measure", Bioinformatics 26(10), 1340-1347, 2010.
       doi:10.1093/bioinformatics/btq134

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from sapwood import RandomForestClassifier
    >>> X, y = make_classification(n_samples=100, n_features=4, random_state=0)
    >>> forest = RandomForestClassifier(n_estimators=5, random_state=0)
    >>> result = altmann_pvalues(forest, X, y, measure="mdi", n_permutations=9,
    ...                          random_state=0)
    >>> bool(result.pvalues.min() >= 0.1)
    True
    """
    if isinstance(measure, str) and measure not in _altmann_names():
        raise ValueError(f"The 'measure' parameter of altmann_pvalues must be a str among "
                         f"{_altmann_names()} or a callable. Got {measure!r} instead.")
    rng = check_random_state(random_state)
    n_samples = X.shape[0] if hasattr(X, "shape") else len(X)
    permutations = [rng.permutation(n_samples) for _ in range(n_permutations)]
    compute = measure
    if isinstance(measure, str):
        compute = _named(measure, estimator, int(rng.randint(np.iinfo(np.int32).max)))

    def importances(y_fit):
        model = clone(estimator).fit(X, y_fit)
        result = compute(model, X, y_fit, **measure_kwargs)
        if not isinstance(result, ImportanceResult):
            raise TypeError(f"measure must return an ImportanceResult; got "
                            f"{type(result).__name__}")
        return result

    observed = importances(y)
    null = []
    with progress_bar(n_permutations, "refits on permuted y", progress) as steps:
        for result in Parallel(n_jobs=resolve_n_jobs(n_jobs), prefer="threads",
                                 return_as="generator")(
                delayed(importances)(_safe_indexing(y, order)) for order in permutations):
            null.append(result.importances_mean)
            steps.advance()
    null = np.column_stack(null)
    exceed = np.sum(null >= observed.importances_mean[:, None], axis=1)
    pvalues = (exceed + 1) / (n_permutations + 1)
    params = {**observed.params, "pvalues": "altmann", "n_permutations": n_permutations,
              "pvalues_random_state": random_state if isinstance(random_state, Integral)
              else None}
    return observed.replace(pvalues=pvalues, params=params,
                            extra={**observed.extra, "null_importances": null})


def adjust_pvalues(pvalues, method="holm") -> np.ndarray:
    """p-values adjusted for testing many features at once (NaN stays NaN).

    ``"holm"``: Holm's step-down adjustment, which bounds the family-wise error rate
    (the chance of any false finding) at the level read: with the m p-values sorted,
    ``p_(i) * (m - i + 1)`` made non-decreasing and capped at 1. ``"bh"``:
    Benjamini-Hochberg's, which bounds the false discovery rate (the expected share of
    false findings among those called): ``p_(i) * m / i`` made non-increasing from the
    largest, capped at 1. Both as R's ``p.adjust`` and statsmodels' ``multipletests``.

    Definition: docs/measures.md, section 'Multiplicity'.
    """
    if method not in ("holm", "bh"):
        raise ValueError(f"method must be 'holm' or 'bh'; got {method!r}")
    p = np.asarray(pvalues, dtype=np.float64)
    out = np.full(p.shape, np.nan)
    finite = np.flatnonzero(np.isfinite(p))
    m = finite.size
    if m == 0:
        return out
    order = finite[np.argsort(p[finite], kind="stable")]
    ranked = p[order]
    if method == "holm":
        adjusted = np.maximum.accumulate(ranked * (m - np.arange(m)))
    else:
        adjusted = np.minimum.accumulate((ranked * m / np.arange(1, m + 1))[::-1])[::-1]
    out[order] = np.minimum(adjusted, 1.0)
    return out
