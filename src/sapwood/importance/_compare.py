"""Several importance measures of one model side by side, as one tidy table."""

from __future__ import annotations

from sklearn.base import clone

from ._air import impurity_corrected
from ._conditional import conditional_permutation_importance
from ._drop_column import drop_column_importance
from ._mdi import mdi
from ._native import native_importance
from ._oob import oob_permutation_importance
from ._permutation import permutation_importance
from ._result import ImportanceResult, side_by_side
from ._shap import tree_shap
from ._ufi import unbiased_mdi

__all__ = ["compare"]


def _mdi(model, X, y, X_test, y_test, random_state):
    return mdi(model, feature_names=_names(X))


def _native(model, X, y, X_test, y_test, random_state):
    return native_importance(model, feature_names=_names(X))


def _permutation(model, X, y, X_test, y_test, random_state):
    if X_test is None:
        return permutation_importance(model, X, y, random_state=random_state)
    return permutation_importance(model, X_test, y_test, random_state=random_state)


def _oob_permutation(model, X, y, X_test, y_test, random_state):
    return oob_permutation_importance(model, X, y, random_state=random_state)


def _drop_column(model, X, y, X_test, y_test, random_state):
    return drop_column_importance(clone(model), X, y, X_test, y_test)


def _unbiased_mdi(model, X, y, X_test, y_test, random_state):
    if getattr(model, "bootstrap", False):
        return unbiased_mdi(model, X, y)
    if X_test is None:
        raise ValueError("method 'unbiased_mdi' needs out-of-sample rows: a bagged forest "
                         "(bootstrap=True) or X_test / y_test")
    return unbiased_mdi(model, X_test, y_test, held_out=True)


def _conditional_permutation(model, X, y, X_test, y_test, random_state):
    if getattr(model, "bootstrap", False):
        return conditional_permutation_importance(model, X, y, random_state=random_state)
    if X_test is None:
        raise ValueError("method 'conditional_permutation' needs out-of-sample rows: a "
                         "bagged forest (bootstrap=True) or X_test / y_test")
    return conditional_permutation_importance(model, X_test, y_test,
                                              random_state=random_state)


def _impurity_corrected(model, X, y, X_test, y_test, random_state):
    return impurity_corrected(clone(model), X, y, random_state=random_state)


def _tree_shap(model, X, y, X_test, y_test, random_state):
    return tree_shap(model, X if X_test is None else X_test)


#: Measures ``compare`` knows by name.
METHODS = {
    "mdi": _mdi,
    "native": _native,
    "permutation": _permutation,
    "oob_permutation": _oob_permutation,
    "drop_column": _drop_column,
    "unbiased_mdi": _unbiased_mdi,
    "conditional_permutation": _conditional_permutation,
    "impurity_corrected": _impurity_corrected,
    "tree_shap": _tree_shap,
}


def _names(X):
    return [str(c) for c in X.columns] if hasattr(X, "columns") else None


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
        Names from:

        - ``"mdi"``: :func:`mdi` (training data, from the trees);
        - ``"native"``: :func:`native_importance` (the library's own kind);
        - ``"permutation"``: :func:`permutation_importance` (5 repeats) on
          ``X_test`` / ``y_test`` when given, else on (X, y), where an overfit model
          inflates it;
        - ``"oob_permutation"``: :func:`oob_permutation_importance` (bagged forests);
        - ``"drop_column"``: :func:`drop_column_importance` of ``clone(model)``, on
          the held-out data when given, else by 5-fold cross-validation;
        - ``"unbiased_mdi"``: :func:`unbiased_mdi` (UFI) on the out-of-bag rows of a
          bagged forest, else on ``X_test`` / ``y_test``;
        - ``"conditional_permutation"``: :func:`conditional_permutation_importance`
          (Strobl et al., party's default threshold 0.2) on the out-of-bag rows of a
          bagged forest, else on ``X_test`` / ``y_test``;
        - ``"impurity_corrected"``: :func:`impurity_corrected` (AIR) of a forest grown
          afresh from ``clone(model)`` on (X, y) plus shadow columns; the fitted model
          itself is not used;
        - ``"tree_shap"``: :func:`tree_shap`, the mean |SHAP value| on ``X_test`` when
          given, else on X.

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
        elif method in METHODS:
            result = METHODS[method](model, X, y, X_test, y_test, random_state)
            names.append(method)
        else:
            raise ValueError(f"methods must hold names from {sorted(METHODS)} or "
                             f"callables; got {method!r}")
        results.append(result)
    if len(set(names)) != len(names):
        raise ValueError(f"methods must be distinct; got {names}")
    return side_by_side(*results, names=names)
