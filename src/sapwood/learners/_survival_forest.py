"""Random survival forests and extra survival trees on sapwood's log-rank kernel, with
scikit-survival's API.

For the same data, options and ``random_state`` these grow scikit-survival 0.28's
forests tree by tree, with scikit-learn's random streams (as
:mod:`sapwood.learners._forest` does): tree t's integer seed is the t-th
``randint(2**31 - 1)`` of the forest's ``RandomState``, its bootstrap sample
``RandomState(seed_t).randint(0, n, n_draws)`` (the draw counts are the tree's
weights) and its splitter's XorShift seed ``RandomState(seed_t).randint(0, 2**31 - 1)``.
The forest's functions are the mean of its trees'; its risk score is the mean
cumulative hazard summed over the event times.
"""

from __future__ import annotations

import numbers
from warnings import warn

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from .._bootstrap import Bootstrap, bootstrap_indices
from .._kernels._random import RAND_R_MAX
from .._progress import check_progress, counted, progress_bar
from .._sklearn_compat import Interval, RealNotInt, _fit_context
from ._forest import SEED_MAX, n_bootstrap_draws
from ._grow import release_free_memory
from ._inputs import validate_predict_input
from ._parallel import resolve_n_jobs
from ._survival_data import harrell_concordance
from ._survival_tree import (
    _TREE_CONSTRAINTS,
    SurvivalFunctionsMixin,
    SurvivalTree,
    grow_survival,
    prepare_survival,
    survival_ensemble,
    survival_options,
)

__all__ = ["RandomSurvivalForest", "ExtraSurvivalTrees"]


def _grow_one(seed, X_columns, time_index, event, sample_weight, n_times, draws,
              splitter, options):
    n_samples = X_columns.shape[1]
    if draws is None:
        weight = np.ones(n_samples) if sample_weight is None else sample_weight
    else:
        indices = bootstrap_indices(seed, n_samples, draws, sample_weight)
        weight = np.bincount(indices, minlength=n_samples).astype(np.float64)
    return grow_survival(X_columns, time_index, event, weight, n_times, splitter=splitter,
                         seed=np.random.RandomState(seed).randint(0, RAND_R_MAX), **options)


class BaseSurvivalForest(SurvivalFunctionsMixin, BaseEstimator):
    """Fitting, prediction, in-bag rows and the out-of-bag score of both forests."""

    _splitter = "best"
    _parameter_constraints: dict = {
        **_TREE_CONSTRAINTS,
        "n_estimators": [Interval(numbers.Integral, 1, None, closed="left")],
        "bootstrap": ["boolean"],
        "oob_score": ["boolean"],
        "n_jobs": [numbers.Integral, None],
        "verbose": ["verbose"],
        "warm_start": ["boolean"],
        "max_samples": [None, Interval(RealNotInt, 0.0, 1.0, closed="right"),
                        Interval(numbers.Integral, 1, None, closed="left")],
    }

    def __init__(self, n_estimators=100, *, max_depth=None, min_samples_split=6,
                 min_samples_leaf=3, min_weight_fraction_leaf=0.0, max_features="sqrt",
                 max_leaf_nodes=None, bootstrap=True, oob_score=False, n_jobs=None,
                 random_state=None, verbose=0, warm_start=False, max_samples=None):
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.max_features = max_features
        self.max_leaf_nodes = max_leaf_nodes
        self.bootstrap = bootstrap
        self.oob_score = oob_score
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.warm_start = warm_start
        self.max_samples = max_samples

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None, progress=False):
        """Grow the forest from X and ``y``, a structured array (event, time) as
        ``sksurv.util.Surv.from_arrays`` makes it.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : structured array of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional
            With ``bootstrap=True`` rows are drawn with probability proportional to
            their weight.
        progress : bool, default=False
            A bar on stderr counting the trees as they are grown.
        """
        check_progress(progress)
        previous = getattr(self, "unique_times_", None) if self.warm_start else None
        X, time_index, event, sample_weight = prepare_survival(self, X, y, sample_weight)
        if previous is not None and getattr(self, "estimators_", None) and not \
                np.array_equal(previous, self.unique_times_):
            raise ValueError("warm_start needs the same training times as the first fit")
        self._n_samples = X.shape[0]
        self._sample_weight = sample_weight
        if not self.bootstrap and self.max_samples is not None:
            raise ValueError("max_samples cannot be set if bootstrap=False; set "
                             "bootstrap=True or max_samples=None")
        if not self.bootstrap and self.oob_score:
            raise ValueError("oob_score=True needs bootstrap=True (out-of-bag rows)")
        self._n_samples_bootstrap = (
            n_bootstrap_draws(X.shape[0], self.max_samples, sample_weight)
            if self.bootstrap else None)
        random_state = check_random_state(self.random_state)
        if not self.warm_start or not hasattr(self, "estimators_"):
            self.estimators_ = []
        n_new = self.n_estimators - len(self.estimators_)
        if n_new < 0:
            raise ValueError(f"n_estimators={self.n_estimators} must be larger or equal to "
                             f"len(estimators_)={len(self.estimators_)} when warm_start==True")
        if n_new == 0:
            warn("Warm-start fitting without increasing n_estimators does not fit new trees.",
                 stacklevel=2)
        else:
            if self.estimators_:
                random_state.randint(SEED_MAX, size=len(self.estimators_))
            seeds = [random_state.randint(SEED_MAX) for _ in range(n_new)]
            self._grow(X, time_index, event, seeds, progress)
        if self.oob_score:
            self._set_oob_score(X, event, self.unique_times_[time_index])
        return self

    def _tree_template(self, seed=None):
        return SurvivalTree(splitter=self._splitter, max_depth=self.max_depth,
                            min_samples_split=self.min_samples_split,
                            min_samples_leaf=self.min_samples_leaf,
                            min_weight_fraction_leaf=self.min_weight_fraction_leaf,
                            max_features=self.max_features,
                            max_leaf_nodes=self.max_leaf_nodes, random_state=seed)

    def _grow(self, X, time_index, event, seeds, progress):
        options = survival_options(self, *X.shape)
        X_columns = np.ascontiguousarray(X.T)
        n_times = self.unique_times_.shape[0]
        grown = Parallel(n_jobs=resolve_n_jobs(self.n_jobs), verbose=self.verbose,
                         prefer="threads", return_as="generator")(
            delayed(_grow_one)(seed, X_columns, time_index, event, self._sample_weight,
                               n_times, self._n_samples_bootstrap, self._splitter, options)
            for seed in seeds)
        with progress_bar(len(seeds), "Growing trees", progress) as steps:
            trees = list(counted(grown, steps))
        for seed, tree_arrays in zip(seeds, trees, strict=True):
            tree = self._tree_template(seed)
            tree.tree_ = tree_arrays
            tree.n_features_in_ = self.n_features_in_
            tree.max_features_ = options["max_features"]
            tree.unique_times_ = self.unique_times_
            tree.is_event_time_ = self.is_event_time_
            self.estimators_.append(tree)
        self.max_features_ = options["max_features"]
        release_free_memory()

    # -- in-bag rows -------------------------------------------------------------------
    def bootstrap_counts(self, i):
        """How many times each training row was drawn for tree ``i`` (0: out of bag)."""
        check_is_fitted(self)
        if not self.bootstrap:
            return np.ones(self._n_samples, dtype=np.intp)
        indices = bootstrap_indices(self.estimators_[i].random_state, self._n_samples,
                                    self._n_samples_bootstrap, self._sample_weight)
        return np.bincount(indices, minlength=self._n_samples)

    def _set_oob_score(self, X, event, time):
        """Each row's risk score from the trees it was out of bag for, and their
        Harrell's concordance (scikit-survival's ``oob_prediction_``, ``oob_score_``)."""
        predictions = np.zeros(self._n_samples)
        n_predictions = np.zeros(self._n_samples)
        for i, tree in enumerate(self.estimators_):
            oob = np.flatnonzero(self.bootstrap_counts(i) == 0)
            predictions[oob] += tree.predict(X[oob])
            n_predictions[oob] += 1
        if (n_predictions == 0).any():
            warn("Some inputs do not have OOB scores. This probably means too few trees were "
                 "used to compute any reliable OOB estimates.", UserWarning, stacklevel=3)
            n_predictions[n_predictions == 0] = 1
        self.oob_prediction_ = predictions / n_predictions
        self.oob_score_ = harrell_concordance(event.astype(bool), time, self.oob_prediction_)

    # -- prediction ----------------------------------------------------------------------
    def _functions(self, X):
        X = validate_predict_input(self, X)
        total = np.zeros((X.shape[0], self.unique_times_.shape[0], 2))
        parts = Parallel(n_jobs=resolve_n_jobs(self.n_jobs), require="sharedmem",
                         return_as="generator")(
            delayed(tree.tree_.predict)(X) for tree in self.estimators_)
        for values in parts:
            total += values
        return total / len(self.estimators_)

    def apply(self, X):
        """Leaf index of every row in every tree, shape (n_samples, n_estimators)."""
        X = validate_predict_input(self, X)
        return np.column_stack([tree.tree_.apply(X) for tree in self.estimators_])

    def to_ensemble(self):
        """This forest in sapwood's format (a survival model with vector leaves, and
        its bootstrap draws when bagged)."""
        check_is_fitted(self)
        bootstrap = None
        if self.bootstrap:
            bootstrap = Bootstrap(
                seeds=np.array([tree.random_state for tree in self.estimators_],
                               dtype=np.int64),
                n_samples=self._n_samples, n_draws=self._n_samples_bootstrap,
                sample_weight=self._sample_weight)
        return survival_ensemble(self, [tree.tree_ for tree in self.estimators_], "forest",
                                 bagged=bool(self.bootstrap), bootstrap=bootstrap)

    def __len__(self):
        return len(self.estimators_)

    def __getitem__(self, index):
        return self.estimators_[index]

    def __iter__(self):
        return iter(self.estimators_)


class RandomSurvivalForest(BaseSurvivalForest):
    """A random survival forest (scikit-survival's ``RandomSurvivalForest``): survival
    trees grown by log-rank splitting on bootstrap samples, a random subset of
    ``max_features`` features tried at every split.

    Parameters
    ----------
    n_estimators : int, default=100
    max_depth, min_samples_split, min_samples_leaf, min_weight_fraction_leaf
        As :class:`SurvivalTree` (defaults None, 6, 3, 0.0).
    max_features : int, float, {"sqrt", "log2"} or None, default="sqrt"
    max_leaf_nodes : int, default=None
        As :class:`SurvivalTree`.
    bootstrap : bool, default=True
    oob_score : bool, default=False
        Harrell's concordance of the out-of-bag risk scores (``oob_score_``, and
        ``oob_prediction_``).
    n_jobs : int, default=None
        Trees grown (and predictions made) in parallel threads; the forest does not
        depend on it.
    random_state : int, RandomState instance or None, default=None
    verbose : int, default=0
    warm_start : bool, default=False
    max_samples : int or float, default=None
        Rows drawn per tree (a fraction of the rows when a float).

    Attributes
    ----------
    estimators_ : list of SurvivalTree
    unique_times_, is_event_time_ : ndarray of shape (n_times,)
    n_features_in_, feature_names_in_, max_features_, oob_score_, oob_prediction_
    """

    _splitter = "best"


class ExtraSurvivalTrees(BaseSurvivalForest):
    """Extremely randomized survival trees (scikit-survival's ``ExtraSurvivalTrees``):
    each split tries one random threshold per drawn feature. Parameters as
    :class:`RandomSurvivalForest` (scikit-survival bags these trees too by default).
    """

    _splitter = "random"
