"""Several importance measures of one model side by side, as one tidy table."""

from __future__ import annotations

from sklearn.base import clone

from ._engine._result import ImportanceResult, side_by_side
from ._registry import MEASURES, MeasureInputs, by_api_name

__all__ = ["compare"]


def compare(model, X, y, methods=("mdi", "permutation"), *, X_test=None, y_test=None,
            random_state=None):
    """Several importance measures of one fitted model as one tidy table.

    Each measure keeps its own definition (see its function for formula, paper and
    DOI); the table lays them side by side so that disagreements show, e.g. MDI's
    preference for features with many split points against permutation importance
    on held-out data (Strobl et al. 2007, doi:10.1186/1471-2105-8-25).

    Parameters
    ----------
    model : fitted estimator
    X : ndarray or DataFrame of shape (n_samples, n_features)
        The data the model was fit on.
    y : array-like of shape (n_samples,)
    methods : sequence of str or callable, default=("mdi", "permutation")
        Names of measures in :data:`MEASURES` (their ``names``), among them:

        - ``"mdi"``: :func:`mdi` (training data, from the trees);
        - ``"gain"``: :func:`native_importance`'s split gain; ``"native"``: the
          library's own kind;
        - ``"friedman"``: :func:`friedman_importance` (boosted ensembles);
        - ``"permutation"``: :func:`permutation_importance` (5 repeats) on
          ``X_test`` / ``y_test`` when given, else on (X, y), where an overfit model
          inflates it;
        - ``"oob"`` (or ``"oob_permutation"``): :func:`oob_permutation_importance`
          (bagged forests);
        - ``"drop"`` (or ``"drop_column"``): :func:`drop_column_importance` of
          ``clone(model)``, on the held-out data when given, else by 5-fold
          cross-validation;
        - ``"ufi"`` (or ``"unbiased_mdi"``): :func:`ufi` on the out-of-bag rows of a
          bagged forest, else on ``X_test`` / ``y_test``;
        - ``"conditional"`` (or ``"conditional_permutation"``):
          :func:`conditional_permutation_importance` (Strobl et al.) on the out-of-bag
          rows of a bagged forest, else on ``X_test`` / ``y_test``; ``"conditional"``
          with the report's threshold 0.95, ``"conditional_permutation"`` with party's
          default 0.2;
        - ``"air"`` (or ranger's name ``"impurity_corrected"``): :func:`air` of a forest
          grown afresh from ``clone(model)`` on (X, y) plus shadow columns; the fitted
          model itself is not used;
        - ``"shap"`` (or ``"tree_shap"``): :func:`tree_shap`, the mean ``|SHAP value|``
          on ``X_test`` when given, else on X;
        - ``"mdi_plus"``: :func:`mdi_plus` (MDI+, leave-one-out) on (X, y);
        - ``"cpi"``: :func:`cpi` (knockoffs, t-test) on ``X_test`` / ``y_test``, which
          it needs;
        - ``"sage"``: :func:`sage` on ``X_test`` / ``y_test`` when given, else on (X, y);

        and any measure added with :func:`register`. A measure that does not apply to
        the model (its ``Measure.why_not``) is a ValueError saying why.
        or callables ``measure(model, X, y) -> ImportanceResult`` (named by the
        result's ``method``).
    X_test, y_test : array-like, default=None
        Held-out data (both or neither).
    random_state : int, RandomState instance or None, default=None
        Passed to the measures that draw permutations (AIR's shadow columns too).

    Returns
    -------
    pandas.DataFrame
        Columns ``feature``, ``method``, ``importance``, ``std``, ``rank`` (1 = most
        important within the method); one row per feature and method, methods in the
        order given. Draw it with :func:`sapwood.plotting.plot_compare`.

    Examples
    --------
    >>> from sapwood import RandomForestClassifier
    >>> from sapwood.datasets import make_ground_truth
    >>> X, y, truth = make_ground_truth(300, random_state=0)
    >>> model = RandomForestClassifier(n_estimators=10, random_state=0).fit(X, y)
    >>> table = compare(model, X, y, methods=["mdi", "oob_permutation"], random_state=0)
    >>> table.columns.tolist()
    ['feature', 'method', 'importance', 'std', 'rank']
    """
    if isinstance(methods, str) or callable(methods):
        methods = [methods]
    if len(methods) == 0:
        raise ValueError("methods must name at least one measure; got an empty sequence")
    if (X_test is None) != (y_test is None):
        raise ValueError("compare needs both X_test and y_test, or neither")
    results, names = [], []
    for method in methods:
        if callable(method):
            result = method(model, X, y)
            if not isinstance(result, ImportanceResult):
                raise TypeError(f"a measure in methods must return an ImportanceResult; "
                                f"got {type(result).__name__}")
            names.append(result.method)
        else:
            found = by_api_name(method) if isinstance(method, str) else None
            if found is None:
                raise ValueError(f"methods must hold names from {sorted(_api_names())} or "
                                 f"callables; got {method!r}")
            result = _run(found, method, model, X, y, X_test, y_test, random_state)
            names.append(method)
        results.append(result)
    if len(set(names)) != len(names):
        raise ValueError(f"methods must be distinct; got {names}")
    return side_by_side(*results, names=names)


def _api_names() -> list:
    return [name for measure in MEASURES.values() for name in measure.names]


def _run(found, method, model, X, y, X_test, y_test, random_state):
    """Measure ``method`` of ``model``: the registry's entry, on the rows compare has."""
    measure, options = found
    # Refitting measures refit a clone: the fitted model's hyper-parameters, unfitted.
    estimator = clone(model) if measure.refits else None
    inputs = MeasureInputs(X_train=X, y_train=y, X_test=X_test, y_test=y_test,
                           random_state=random_state, estimator=estimator, max_rows=None)
    reason = measure.why_not(model, inputs, **options)
    if reason is not None:
        raise ValueError(f"method {method!r} does not apply: {reason}")
    return measure.run(model, inputs, **options)
