"""Survival trees grown by log-rank splitting (sapwood's kernels), with
scikit-survival's ``SurvivalTree`` API.

For the same data, options and ``random_state`` a :class:`SurvivalTree` grows the tree
scikit-survival 0.28 grows (node for node; see :mod:`sapwood._kernels._logrank`). Each
leaf holds the Nelson-Aalen cumulative hazard and the Kaplan-Meier survival function of
its training rows at the distinct training times (``unique_times_``); ``predict`` gives
the risk score, the cumulative hazard summed over the event times.
"""

from __future__ import annotations

import numbers
from math import ceil

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from .._format import ModelKind, TreeArrays, TreeEnsemble
from .._kernels._logrank import grow_survival_tree
from .._kernels._random import RAND_R_MAX
from .._sklearn_compat import (
    Interval,
    RealNotInt,
    StrOptions,
    _check_sample_weight,
    _fit_context,
)
from .._version import __version__
from ._grow import INT32_MAX, release_free_memory
from ._inputs import check_rows, reject_infinity, validate_predict_input
from ._survival_data import StepFunction, check_survival_target, unique_times

__all__ = ["SurvivalTree", "grow_survival", "survival_options"]

_TREE_CONSTRAINTS: dict = {
    "max_depth": [Interval(numbers.Integral, 1, None, closed="left"), None],
    "min_samples_split": [Interval(numbers.Integral, 2, None, closed="left"),
                          Interval(RealNotInt, 0.0, 1.0, closed="right")],
    "min_samples_leaf": [Interval(numbers.Integral, 1, None, closed="left"),
                         Interval(RealNotInt, 0.0, 1.0, closed="neither")],
    "min_weight_fraction_leaf": [Interval(numbers.Real, 0.0, 0.5, closed="both")],
    "max_features": [Interval(numbers.Integral, 1, None, closed="left"),
                     Interval(RealNotInt, 0.0, 1.0, closed="right"),
                     StrOptions({"sqrt", "log2"}), None],
    "random_state": ["random_state"],
    "max_leaf_nodes": [Interval(numbers.Integral, 2, None, closed="left"), None],
}


def survival_options(estimator, n_samples, n_features):
    """The estimator's options as the kernel takes them (scikit-survival's
    ``_check_params`` and ``_check_max_features``)."""
    if isinstance(estimator.min_samples_leaf, numbers.Integral):
        min_samples_leaf = estimator.min_samples_leaf
    else:
        min_samples_leaf = ceil(estimator.min_samples_leaf * n_samples)
    if isinstance(estimator.min_samples_split, numbers.Integral):
        min_samples_split = estimator.min_samples_split
    else:
        min_samples_split = max(2, ceil(estimator.min_samples_split * n_samples))
    max_features = estimator.max_features
    if max_features == "sqrt":
        max_features = max(1, int(np.sqrt(n_features)))
    elif max_features == "log2":
        max_features = max(1, int(np.log2(n_features)))
    elif max_features is None:
        max_features = n_features
    elif not isinstance(max_features, numbers.Integral):
        max_features = max(1, int(max_features * n_features))
    if not 0 < max_features <= n_features:
        raise ValueError(f"max_features must be in (0, n_features={n_features}]; got "
                         f"{estimator.max_features!r}")
    return {
        "max_depth": INT32_MAX if estimator.max_depth is None else estimator.max_depth,
        "min_samples_leaf": min_samples_leaf,
        "min_samples_split": max(min_samples_split, 2 * min_samples_leaf),
        "max_features": max_features,
        # scikit-survival's fraction of the number of rows, weights or not
        "min_weight_leaf": estimator.min_weight_fraction_leaf * n_samples,
        "max_leaf_nodes": -1 if estimator.max_leaf_nodes is None else estimator.max_leaf_nodes,
    }


def grow_survival(X_columns, time_index, event, sample_weight, n_times, *, splitter, seed,
                  max_features, min_samples_split, min_samples_leaf, min_weight_leaf,
                  max_depth, max_leaf_nodes) -> TreeArrays:
    """Grow one survival tree on prepared inputs: ``X_columns`` float32 (n_features,
    n_samples), ``time_index`` each row's index into the distinct times, ``event``
    uint8, ``sample_weight`` float64 (rows of weight 0 take no part); ``seed`` the
    tree's XorShift seed; ``max_leaf_nodes`` -1 grows depth-first, else best-first. The
    split statistics go into the tree's ``gain``."""
    nodes, gain = grow_survival_tree(
        X_columns, time_index, event, sample_weight, int(n_times),
        np.array([seed], dtype=np.int64), int(max_features), int(min_samples_split),
        int(min_samples_leaf), float(min_weight_leaf), int(max_depth), int(max_leaf_nodes),
        splitter == "random")
    left, right, feature, threshold, impurity, n_samples, weighted, missing, value = nodes
    return TreeArrays(
        children_left=left, children_right=right, feature=feature, threshold=threshold,
        impurity=impurity, n_node_samples=n_samples, weighted_n_node_samples=weighted,
        value=value, missing_go_to_left=missing,
        operator=np.zeros(left.shape[0], dtype=np.uint8), n_features=X_columns.shape[0],
        gain=gain[:left.shape[0]].copy())


class SurvivalFunctionsMixin:
    """Risk score, cumulative hazard and survival function from ``_functions(X)``
    (the mean leaf functions, shape (n_samples, n_times, 2)), with scikit-survival's
    conventions."""

    def predict(self, X):
        """The risk score: the cumulative hazard summed over the event times (higher:
        earlier event)."""
        hazard = self._functions(X)[:, :, 0]
        return hazard[:, self.is_event_time_].sum(axis=1)

    def predict_cumulative_hazard_function(self, X, return_array=False):
        """Each row's cumulative hazard: step functions over ``unique_times_``, or with
        ``return_array`` an array (n_samples, n_times) of its values there."""
        return self._as_functions(self._functions(X)[:, :, 0], return_array)

    def predict_survival_function(self, X, return_array=False):
        """Each row's survival function: step functions over ``unique_times_``, or with
        ``return_array`` an array (n_samples, n_times) of its values there."""
        return self._as_functions(self._functions(X)[:, :, 1], return_array)

    def _as_functions(self, array, return_array):
        array = np.ascontiguousarray(array)
        if return_array:
            return array
        functions = np.empty(array.shape[0], dtype=object)
        for i, row in enumerate(array):
            functions[i] = StepFunction(self.unique_times_, row)
        return functions

    def score(self, X, y):
        """Harrell's concordance index of the risk scores on (X, y)."""
        from ._survival_data import harrell_concordance

        event, time = check_survival_target(y)
        return harrell_concordance(event, time, self.predict(X))


def prepare_survival(estimator, X, y, sample_weight):
    """Validated float32 X, the target as the kernel reads it (each row's time index and
    event flag), the sample weights; sets the fitted times."""
    check_rows(X, y, sample_weight)
    X = validate_data(estimator, X, dtype=np.float32, ensure_min_samples=2)
    reject_infinity(X)
    event, time = check_survival_target(y, X.shape[0])
    estimator.unique_times_, estimator.is_event_time_ = unique_times(time, event)
    time_index = np.searchsorted(estimator.unique_times_, time).astype(np.intp)
    if sample_weight is not None:
        sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64)
    return X, time_index, event.astype(np.uint8), sample_weight


class SurvivalTree(SurvivalFunctionsMixin, BaseEstimator):
    """A survival tree grown by log-rank splitting (scikit-survival's ``SurvivalTree``).

    Parameters
    ----------
    splitter : {"best", "random"}, default="best"
    max_depth : int, default=None
    min_samples_split : int or float, default=6
    min_samples_leaf : int or float, default=3
    min_weight_fraction_leaf : float, default=0.0
    max_features : int, float, {"sqrt", "log2"} or None, default=None
    random_state : int, RandomState instance or None, default=None
    max_leaf_nodes : int, default=None
        Grow best-first (the leaf whose split has the largest log-rank statistic first)
        to at most this many leaves.

    Attributes
    ----------
    tree_ : sapwood.TreeArrays
        Values (n_nodes, n_times, 2): cumulative hazard and survival at each time;
        ``gain``: each split's log-rank statistic.
    unique_times_, is_event_time_ : ndarray of shape (n_times,)
        The distinct training times and whether each had an event.
    n_features_in_, feature_names_in_, max_features_
    """

    _parameter_constraints: dict = {"splitter": [StrOptions({"best", "random"})],
                                    **_TREE_CONSTRAINTS}

    def __init__(self, *, splitter="best", max_depth=None, min_samples_split=6,
                 min_samples_leaf=3, min_weight_fraction_leaf=0.0, max_features=None,
                 random_state=None, max_leaf_nodes=None):
        self.splitter = splitter
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.max_features = max_features
        self.random_state = random_state
        self.max_leaf_nodes = max_leaf_nodes

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Grow the tree from X and ``y``, a structured array (event, time) as
        ``sksurv.util.Surv.from_arrays`` makes it. Rows with zero weight are ignored."""
        random_state = check_random_state(self.random_state)
        X, time_index, event, sample_weight = prepare_survival(self, X, y, sample_weight)
        n_samples, n_features = X.shape
        options = survival_options(self, n_samples, n_features)
        self.max_features_ = options["max_features"]
        if sample_weight is None:
            sample_weight = np.ones(n_samples)
        self.tree_ = grow_survival(
            np.ascontiguousarray(X.T), time_index, event, sample_weight,
            self.unique_times_.shape[0], splitter=self.splitter,
            seed=random_state.randint(0, RAND_R_MAX), **options)
        release_free_memory()
        return self

    def _functions(self, X):
        X = validate_predict_input(self, X)
        return self.tree_.predict(X)

    def apply(self, X):
        """Index of the leaf each row ends up in."""
        return self.tree_.apply(validate_predict_input(self, X))

    def decision_path(self, X):
        """Sparse indicator (n_samples, n_nodes) of the nodes each row passes."""
        return self.tree_.decision_path(validate_predict_input(self, X))

    def get_depth(self):
        check_is_fitted(self)
        return self.tree_.max_depth

    def get_n_leaves(self):
        check_is_fitted(self)
        return self.tree_.n_leaves

    def to_ensemble(self) -> TreeEnsemble:
        """This tree in sapwood's format (a survival model with vector leaves)."""
        check_is_fitted(self)
        return survival_ensemble(self, [self.tree_], "tree", bagged=False, bootstrap=None)


def survival_ensemble(estimator, trees, family, bagged, bootstrap):
    names = getattr(estimator, "feature_names_in_", None)
    return TreeEnsemble(
        trees=tuple(trees), task="survival", n_features=estimator.n_features_in_,
        combine="mean", feature_names=None if names is None else tuple(names),
        times=estimator.unique_times_, is_event_time=estimator.is_event_time_,
        bootstrap=bootstrap,
        kind=ModelKind(library="sapwood", model=type(estimator).__name__,
                       objective="logrank", library_version=__version__, family=family,
                       bagged=bagged, node_impurity=False))
