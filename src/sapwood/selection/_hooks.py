"""scikit-learn's feature selectors with sapwood's measures.

- :class:`ImportanceGetter` — a callable for the ``importance_getter`` of scikit-learn's
  ``RFE``, ``RFECV`` and ``SelectFromModel``: any measure in
  :data:`sapwood.importance.MEASURES`, on the rows the measure reads.
- :class:`BorutaSelector` — :func:`~sapwood.selection.boruta` as a transformer
  (``fit`` / ``transform`` / ``support_``), for ``Pipeline`` and ``GridSearchCV``.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, clone
from sklearn.feature_selection import SelectorMixin
from sklearn.utils import get_tags
from sklearn.utils.validation import check_is_fitted, validate_data

from .._sklearn_compat import HasMethods, Interval, _fit_context
from ..importance import MEASURES, Measure, MeasureInputs
from ._boruta import CONFIRMED, REJECTED, TENTATIVE, _named_importances, boruta

__all__ = ["BorutaSelector", "ImportanceGetter"]


def _resolve(name):
    """``(Measure, options)`` for a :data:`MEASURES` key or an API name
    (``Measure.names``)."""
    if isinstance(name, str):
        if name in MEASURES:
            return MEASURES[name], dict(MEASURES[name].options)
        for record in MEASURES.values():
            if name in record.names:
                return record, dict(record.names[name])
    known = sorted(set(MEASURES) | {api for m in MEASURES.values() for api in m.names})
    raise ValueError(f"The 'measure' parameter of ImportanceGetter must be one of {known}; "
                     f"got {name!r}")


class ImportanceGetter:
    """A measure as scikit-learn's ``importance_getter``: one importance per feature
    of the fitted estimator it is called with.

    ``RFE(est, importance_getter=ImportanceGetter("permutation", X_test, y_test))``,
    and likewise ``RFECV`` and ``SelectFromModel``. Each call computes the measure's
    ``importances_mean`` with ``measure.run`` (the numbers its function gives with
    the measure's options, see :data:`sapwood.importance.MEASURES`).

    Definitions: the measure's own section of docs/measures.md, e.g. section
    'Held-out permutation importance' (``"permutation"``), section 'MDI (mean
    decrease in impurity)' (``"mdi"``), section 'Out-of-bag permutation importance'
    (``"oob"``).

    Which rows. ``X`` and ``y`` are the rows the measure reads (``Measure.rows``):

    - ``"held-out"`` (permutation, shap, cpi, sage) and ``"oob-or-held-out"``
      (conditional): rows the estimator was not fit on. Exception: conditional on a
      bagged forest scores each tree's out-of-bag rows, so it needs the training rows.
    - ``"oob"`` (oob, ufi), ``"refit"`` (drop) and ``"shadows"`` (air; these two refit
      ``sklearn.base.clone(estimator)``): the rows the estimator was fit on, in the
      same order. ``RFECV`` fits its selections on cross-validation folds, whose
      rows the getter is not told: these measures then fail with the measure's own
      "X has n rows; the forest was fit on m" error. Use them with ``RFE`` and
      ``SelectFromModel``.
    - ``"train"`` (mdi, gain, friedman): read from the fitted trees; ``X`` and ``y``
      are not needed.

    Per-row measures (SHAP) explain every row of ``X``.

    Which columns. scikit-learn gives the getter the fitted estimator only.
    ``SelectFromModel`` fits it on every column of X (or takes it prefit), ``RFE``
    on the columns still selected, as a NumPy array even when given a DataFrame
    (it validates X to an array first), so the estimator does not know its columns'
    names. The getter finds the estimator's columns in ``X`` thus:

    1. the estimator has ``feature_names_in_`` and ``X`` is a DataFrame: by name;
    2. it has as many features (``n_features_in_``) as ``X`` has columns: all;
    3. it has fewer than the previous call's: RFE's next step. RFE eliminates the
       features with the smallest squared importance (``np.argsort(importances ** 2,
       kind="stable")`` over the importances this getter returned last; RFE's rule,
       computed the same way on the same numbers), so the getter drops the same ones.
       A fresh RFE fit starts with all columns (rule 2), which resets this;
    4. anything else is an error saying so: give ``X`` with the estimator's
       columns only, or a DataFrame to an estimator fit on one.

    ``columns_`` holds the positions in ``X`` of the last call's columns. Scikit-learn
    clones (deep-copies) the getter with its selector, so each RFECV fold tracks its
    own steps.

    Parameters
    ----------
    measure : str
        A key of :data:`sapwood.importance.MEASURES` (``"permutation"``, ``"mdi"``,
        ``"oob"``, ...) with its options, or a name the measure accepts in
        ``compare`` (``Measure.names``: ``"oob_permutation"``, ``"tree_shap"``, ...).
        A measure of your own: :func:`~sapwood.importance.register` it first.
    X : array-like or DataFrame of shape (n_samples, n_features), default=None
        The rows (see above), with every column the selector is given.
    y : array-like of shape (n_samples,), default=None
    random_state : int, RandomState instance or None, default=None
        The measure's seed. An int gives every call the same permutations.
    n_jobs : int or None, default=None
        Threads, for measures that take them.
    **options
        Keyword arguments for the measure's function, over the measure's own
        (e.g. ``n_repeats=10``, ``scoring="r2"``).

    Attributes
    ----------
    columns_ : ndarray of int or None
        Positions in ``X`` of the columns of the last estimator (None before a call or
        without ``X``).

    Examples
    --------
    >>> from sklearn.feature_selection import RFE
    >>> from sapwood import RandomForestRegressor
    >>> from sapwood.datasets import make_ground_truth
    >>> X, y, truth = make_ground_truth(n_samples=400, task="regression", random_state=0)
    >>> getter = ImportanceGetter("permutation", X[300:], y[300:], random_state=0)
    >>> rfe = RFE(RandomForestRegressor(n_estimators=20, random_state=0),
    ...           n_features_to_select=3, importance_getter=getter).fit(X[:300], y[:300])
    >>> [name for name in rfe.get_feature_names_out() if name.startswith("noise")]
    []
    """

    def __init__(self, measure, X=None, y=None, *, random_state=None, n_jobs=None,
                 **options):
        # The name, not the Measure record (read-only mappings, which cannot be copied
        # or pickled as scikit-learn's clone and joblib must).
        _, defaults = _resolve(measure)
        self.name = measure
        self.options = {**defaults, **options}
        if X is None and self.measure.rows != "train":
            raise ValueError(f"ImportanceGetter({self.name!r}) needs X: the measure reads "
                             f"rows (Measure.rows is {self.measure.rows!r})")
        if y is None and "y" in self.measure.needs:
            raise ValueError(f"ImportanceGetter({self.name!r}) needs y: the measure scores "
                             "predictions against the target")
        if X is not None and y is not None and len(X) != len(y):
            raise ValueError(f"X and y passed to ImportanceGetter must have the same number "
                             f"of rows; got X with {len(X)} and y with {len(y)}")
        self.X, self.y = X, y
        self.random_state, self.n_jobs = random_state, n_jobs
        self.columns_ = None
        self._last = None

    def __repr__(self) -> str:
        return f"ImportanceGetter({self.name!r})"

    @property
    def measure(self) -> Measure:
        """The :class:`~sapwood.importance.Measure` record."""
        return _resolve(self.name)[0]

    def _columns(self, estimator, n_features):
        """Positions in X of the estimator's columns (the rules in the docstring)."""
        n_columns = self.X.shape[1]
        names = getattr(estimator, "feature_names_in_", None)
        if names is not None and hasattr(self.X, "columns"):
            positions = pd.Index(self.X.columns).get_indexer(list(names))
            if (positions < 0).any():
                missing = [str(n) for n, p in zip(names, positions, strict=True) if p < 0]
                raise ValueError(f"ImportanceGetter({self.name!r}): the estimator was fit "
                                 f"on columns X lacks: {missing}")
            return positions
        if n_features == n_columns:
            return np.arange(n_columns)
        if self.columns_ is not None and n_features < len(self.columns_):
            # RFE's elimination, recomputed on the numbers it was given (see docstring).
            dropped = np.argsort(self._last ** 2, kind="stable")[:len(self.columns_) - n_features]
            return np.delete(self.columns_, dropped)
        raise ValueError(
            f"ImportanceGetter({self.name!r}): the estimator has {n_features} features and "
            f"X has {n_columns} columns, and nothing says which columns it saw (it is not "
            "the next step of an RFE fit this getter followed). Give X with the "
            "estimator's columns only, or a DataFrame to an estimator fit on a DataFrame.")

    def __call__(self, estimator):
        n_features = getattr(estimator, "n_features_in_", None)
        if n_features is None:
            raise ValueError(f"ImportanceGetter({self.name!r}) takes a fitted estimator "
                             f"with n_features_in_; got {type(estimator).__name__}")
        X = None
        if self.X is not None:
            columns = self._columns(estimator, n_features)
            if hasattr(self.X, "iloc"):
                X = self.X.iloc[:, columns]
                # An estimator fit on an array (as inside RFE) is scored on one.
                if getattr(estimator, "feature_names_in_", None) is None:
                    X = X.to_numpy()
            else:
                X = np.asarray(self.X)[:, columns]
            self.columns_ = columns
        measure = self.measure
        held_out = measure.held_out
        inputs = MeasureInputs(
            X_train=X, y_train=self.y, X_test=X if held_out else None,
            y_test=self.y if held_out else None, random_state=self.random_state,
            max_rows=None,  # per-row measures (SHAP) explain every row of X
            estimator=clone(estimator) if measure.refits else None,
            n_jobs=self.n_jobs)
        reason = measure.why_not(estimator, inputs, **self.options)
        if reason is not None:
            raise ValueError(f"ImportanceGetter({self.name!r}) does not apply to "
                             f"{type(estimator).__name__}: {reason}")
        try:
            result = measure.run(estimator, inputs, **self.options)
        except ValueError as error:
            raise ValueError(f"ImportanceGetter({self.name!r}) on "
                             f"{type(estimator).__name__}: {error}") from error
        values = np.array(result.importances_mean, dtype=np.float64)
        if values.shape != (n_features,):
            raise ValueError(f"ImportanceGetter({self.name!r}): the measure gave "
                             f"{values.shape} importances for an estimator with "
                             f"{n_features} features")
        self._last = values.copy()
        return values


def _ranking(decision, decided_round):
    """BorutaPy's convention: 1 confirmed, 2 tentative, 3, 4, ... rejected, the later
    the round of rejection the lower (3: the last round that rejected any)."""
    ranking = np.where(decision == CONFIRMED, 1, 2)
    rejected = decision == REJECTED
    rounds = np.unique(decided_round[rejected])[::-1]      # latest first
    ranking[rejected] = 3 + np.searchsorted(-rounds, -decided_round[rejected])
    return ranking


class BorutaSelector(SelectorMixin, BaseEstimator):
    """Boruta as a scikit-learn transformer: keeps the features :func:`boruta`
    confirms.

    ``fit(X, y)`` runs ``boruta(X, y, estimator=estimator, importance=measure,
    max_rounds=max_rounds, alpha=alpha, random_state=random_state, n_jobs=n_jobs)``
    on X as a DataFrame (its column names, or ``x0, x1, ...``) and keeps its result
    in ``result_``; ``transform`` keeps the confirmed columns. The numbers are
    boruta's on the same data and seed.

    Definition: docs/measures.md, section 'Boruta'.

    Parameters
    ----------
    measure : str or callable, default="oob_permutation"
        ``boruta``'s ``importance``: a measure reading the training or out-of-bag
        rows by name (``"oob_permutation"``, ``"oob_permutation_raw"``, ``"mdi"``,
        ...), or ``importance(fitted_model, X, y)``.
    estimator : unfitted estimator or None, default=None
        Cloned every round; None: sapwood's random forest (classifier or regressor by
        ``type_of_target(y)``, 100 trees).
    max_rounds : int, default=100
    alpha : float in (0, 1), default=0.01
    random_state : int, RandomState instance or None, default=None
    n_jobs : int or None, default=None
    progress : bool, default=False

    Attributes
    ----------
    support_ : ndarray of bool, shape ``(n_features_in_,)``
        The confirmed features (what ``transform`` keeps).
    support_weak_ : ndarray of bool, shape ``(n_features_in_,)``
        The tentative ones (undecided after the last round), as in BorutaPy.
    ranking_ : ndarray of int, shape ``(n_features_in_,)``
        1 confirmed, 2 tentative, 3, 4, ... rejected: 3 for those rejected in the
        last round that rejected any, 4 for the round before that, and so on
        (BorutaPy's convention).
    result_ : BorutaResult
        boruta's result: decisions, hits, rounds and history.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        When X is a DataFrame with string column names.

    Notes
    -----
    X is validated as a numeric array (NaN allowed when the estimator allows it, as
    sapwood's forests do); columns of strings or categories need an estimator
    that takes them and :func:`boruta` itself.

    Examples
    --------
    >>> from sapwood import RandomForestClassifier
    >>> from sapwood.datasets import make_ground_truth
    >>> X, y, truth = make_ground_truth(n_samples=300, random_state=0)
    >>> selector = BorutaSelector(estimator=RandomForestClassifier(n_estimators=30),
    ...                           max_rounds=20, random_state=0).fit(X, y)
    >>> "noise_id" in selector.get_feature_names_out()
    False
    """

    _parameter_constraints: dict = {
        "measure": [str, callable],
        "estimator": [HasMethods(["fit"]), None],
        "max_rounds": [Interval(Integral, 1, None, closed="left")],
        "alpha": [Interval(Real, 0, 1, closed="neither")],
        "random_state": ["random_state"],
        "n_jobs": [Integral, None],
        "progress": ["boolean"],
    }

    def __init__(self, measure="oob_permutation", estimator=None, *, max_rounds=100,
                 alpha=0.01, random_state=None, n_jobs=None, progress=False):
        self.measure = measure
        self.estimator = estimator
        self.max_rounds = max_rounds
        self.alpha = alpha
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.progress = progress

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        # sapwood's forests (the default) take missing values; another estimator says.
        tags.input_tags.allow_nan = self.estimator is None or (
            hasattr(self.estimator, "__sklearn_tags__")
            and get_tags(self.estimator).input_tags.allow_nan)
        return tags

    @_fit_context(prefer_skip_nested_validation=False)  # the estimator is validated on fit
    def fit(self, X, y):
        """Run Boruta on X, y.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        if isinstance(self.measure, str) and self.measure not in _named_importances():
            raise ValueError(f"The 'measure' parameter of BorutaSelector must be a callable "
                             f"or a measure reading the training or out-of-bag rows, one of "
                             f"{sorted(_named_importances())}; got {self.measure!r}")
        allow_nan = get_tags(self).input_tags.allow_nan
        X, y = validate_data(self, X, y, ensure_all_finite="allow-nan" if allow_nan else True)
        names = getattr(self, "feature_names_in_", None)
        names = [f"x{j}" for j in range(X.shape[1])] if names is None else list(names)
        self.result_ = boruta(pd.DataFrame(X, columns=names), y, estimator=self.estimator,
                              importance=self.measure, max_rounds=self.max_rounds,
                              alpha=self.alpha, random_state=self.random_state,
                              n_jobs=self.n_jobs, progress=self.progress)
        decision = self.result_.decision
        self.support_ = decision == CONFIRMED
        self.support_weak_ = decision == TENTATIVE
        self.ranking_ = _ranking(decision, self.result_.decided_round)
        return self

    def _get_support_mask(self):
        check_is_fitted(self)
        return self.support_
