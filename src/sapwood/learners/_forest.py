"""Random forests and extra-trees on sapwood's CART kernels.

For the same data, parameters and ``random_state`` these grow the same forest as
scikit-learn 1.9.1, tree by tree: each tree's integer seed is drawn from the forest's
``RandomState`` in order (``randint(2**31 - 1)`` per tree), the bootstrap sample of
tree t is ``RandomState(seed_t).randint(0, n, n_draws)`` (or ``.choice(n, n_draws,
p=w / sum(w))`` when sample or class weights are given), and the tree is grown with
the draw counts as sample weights (times the subsample's balanced class weights for
``class_weight="balanced_subsample"``). Without bootstrap every tree sees every row
with the given weights.

The in-bag counts behind every tree are public (:meth:`BaseForest.bootstrap_counts`,
:attr:`BaseForest.inbag_counts_`): out-of-bag importance measures read them.

X is validated and converted to float32 once per fit; the trees are grown by calling
:func:`grow_tree` directly, in parallel through joblib (threads by default: the
kernels release the GIL; any joblib backend, e.g. Dask, gives the same forest).
"""

from __future__ import annotations

import numbers
from warnings import warn

import numpy as np
from joblib import Parallel, delayed
from scipy.sparse import hstack as sparse_hstack
from scipy.sparse import issparse
from sklearn.base import (
    BaseEstimator,
    ClassifierMixin,
    MultiOutputMixin,
    RegressorMixin,
)
from sklearn.exceptions import DataConversionWarning
from sklearn.utils import check_random_state, compute_class_weight, compute_sample_weight
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from .._bootstrap import Bootstrap, bootstrap_indices
from .._format import ModelKind, TreeEnsemble
from .._impurity import combine_importances
from .._kernels._random import RAND_R_MAX
from .._progress import check_progress, counted, progress_bar
from .._sklearn_compat import (
    Interval,
    RealNotInt,
    StrOptions,
    _check_sample_weight,
    _fit_context,
)
from .._splits import labels
from .._version import __version__
from ._grow import column_facts, grow_tree, release_free_memory
from ._inputs import check_rows, reject_infinity, validate_predict_input
from ._parallel import resolve_n_jobs
from ._tree import BaseDecisionTree, DecisionTreeClassifier, DecisionTreeRegressor

__all__ = ["RandomForestClassifier", "RandomForestRegressor", "ExtraTreesClassifier",
           "ExtraTreesRegressor"]

# scikit-learn draws every tree's integer seed below the int32 maximum.
SEED_MAX = np.iinfo(np.int32).max

_TREE_PARAMETERS = ("criterion", "max_depth", "min_samples_split", "min_samples_leaf",
                    "min_weight_fraction_leaf", "max_features", "max_leaf_nodes",
                    "min_impurity_decrease", "ccp_alpha")


def n_bootstrap_draws(n_samples, max_samples, sample_weight):
    """Rows drawn per tree: all, ``max_samples`` rows, or a fraction of the total weight."""
    if max_samples is None:
        return n_samples
    if isinstance(max_samples, numbers.Integral):
        return int(max_samples)
    total = n_samples if sample_weight is None else float(np.sum(sample_weight))
    n_draws = max(int(max_samples * total), 1)
    if n_draws < max(10, n_samples ** (1 / 3)):
        warn(f"max_samples={max_samples} of a total weight of {total} gives only {n_draws} "
             "bootstrap draws per tree; pass max_samples as an integer instead.",
             stacklevel=3)
    return n_draws


def _grow_one(index, n_trees, seed, tree_template, X, y, sample_weight, draws, n_classes,
              criterion, facts, balanced_subsample, verbose, groups=None):
    """Grow tree ``index`` of the forest; runs in a joblib worker, returns TreeArrays."""
    if verbose > 1:
        print(f"building tree {index + 1} of {n_trees}")
    n_samples, n_features = X.shape
    if draws is None:
        weight = np.ones(n_samples) if sample_weight is None else sample_weight
    else:
        indices = bootstrap_indices(seed, n_samples, draws, sample_weight, groups)
        weight = np.bincount(indices, minlength=n_samples).astype(np.float64)
        if groups is not None and sample_weight is not None:
            weight *= sample_weight  # whole groups drawn; the weights weigh their rows
        if balanced_subsample:
            weight *= compute_sample_weight("balanced", y, indices=indices)
    options = tree_template._settle_options(n_samples, n_features, float(np.sum(weight)))
    splitter_seed = np.random.RandomState(seed).randint(0, RAND_R_MAX)
    return grow_tree(X, y, weight, criterion=criterion, n_classes=n_classes,
                     seed=splitter_seed, has_missing=facts[0],
                     tied_pairs=facts[1], **options)


class BaseForest(MultiOutputMixin, BaseEstimator):
    """Fitting, traversal, in-bag bookkeeping and OOB estimates shared by all forests."""

    _tree_class: type = DecisionTreeClassifier
    _splitter: str = "best"

    _parameter_constraints: dict = {
        **{k: v for k, v in BaseDecisionTree._parameter_constraints.items() if k != "splitter"},
        "n_estimators": [Interval(numbers.Integral, 1, None, closed="left")],
        "bootstrap": ["boolean"],
        "oob_score": ["boolean", callable],
        "n_jobs": [numbers.Integral, None],
        "verbose": ["verbose"],
        "warm_start": ["boolean"],
        "max_samples": [None, Interval(RealNotInt, 0.0, None, closed="neither"),
                        Interval(numbers.Integral, 1, None, closed="left")],
    }

    # -- fitting ---------------------------------------------------------------------
    def _tree_template(self, seed=None):
        params = {name: getattr(self, name) for name in _TREE_PARAMETERS}
        return self._tree_class(splitter=self._splitter, random_state=seed, **params)

    def _validate_training_data(self, X, y, sample_weight):
        if issparse(y):
            raise ValueError("sparse multilabel-indicator for y is not supported.")
        check_rows(X, y, sample_weight)
        X, y = validate_data(self, X, y, multi_output=True, dtype=np.float32, order="F",
                             ensure_all_finite="allow-nan")
        reject_infinity(X)
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64)
        y = np.atleast_1d(y)
        if y.ndim == 2 and y.shape[1] == 1:
            warn("A column-vector y was passed when a 1d array was expected. Please change "
                 "the shape of y to (n_samples,), for example using ravel().",
                 DataConversionWarning, stacklevel=3)
        if y.ndim == 1:
            y = y.reshape(-1, 1)
        return X, y, sample_weight

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None, progress=False, groups=None):
        """Grow the forest from the training set (X, y).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Converted to float32 once, as scikit-learn does; NaN marks a missing value.
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
        sample_weight : array-like of shape (n_samples,), optional
            With ``bootstrap=True`` rows are drawn with probability proportional to
            their weight (times class weight); the trees see only the draw counts.
        progress : bool, default=False
            A bar on stderr counting the trees as they are grown, with the time left.
            The trees do not depend on it.
        groups : array-like of shape (n_samples,), optional
            A label per row (a person, a firm): each tree's bootstrap draws whole
            groups, as many as there are, with replacement, so that a tree's
            out-of-bag rows are whole groups it never saw (weights, if any, weigh the
            drawn rows). Needs ``bootstrap=True`` and ``max_samples=None``.
        """
        check_progress(progress)
        X, y, sample_weight = self._validate_training_data(X, y, sample_weight)
        if groups is not None:
            if not self.bootstrap or self.max_samples is not None:
                raise ValueError("groups draws each tree's bootstrap by whole groups: it "
                                 "needs bootstrap=True and max_samples=None; got "
                                 f"bootstrap={self.bootstrap}, max_samples={self.max_samples}")
            groups = labels(groups, X.shape[0], "groups")
        self._groups = groups
        self._n_samples, self.n_outputs_ = y.shape
        y, n_classes, class_weight = self._encode_targets(y, sample_weight)
        if class_weight is not None:
            sample_weight = class_weight if sample_weight is None else (
                sample_weight * class_weight)
        self._sample_weight = sample_weight

        if not self.bootstrap and self.max_samples is not None:
            raise ValueError("`max_sample` cannot be set if `bootstrap=False`. Either switch "
                             "to `bootstrap=True` or set `max_sample=None`.")
        if not self.bootstrap and self.oob_score:
            raise ValueError("Out of bag estimation only available if bootstrap=True")
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
                # Skip the seeds of the trees already grown, as a cold fit would draw them.
                random_state.randint(SEED_MAX, size=len(self.estimators_))
            seeds = [random_state.randint(SEED_MAX) for _ in range(n_new)]
            self._grow(X, y, seeds, n_classes, progress)

        if self.oob_score and (n_new > 0 or not hasattr(self, "oob_score_")):
            target_type = type_of_target(y)
            if target_type == "unknown" or (
                    self._is_classifier and target_type == "multiclass-multioutput"):
                raise ValueError(
                    "The type of target cannot be used to compute OOB estimates. Got "
                    f"{target_type} while only the following are supported: continuous, "
                    "continuous-multioutput, binary, multiclass, multilabel-indicator.")
            self._set_oob_attributes(X, y, None if self.oob_score is True else self.oob_score)
        return self

    def _grow(self, X, y, seeds, n_classes, progress=False):
        template = self._tree_template()
        criterion = template._criterion_name(y)
        balanced_subsample = (self.bootstrap
                              and getattr(self, "class_weight", None) == "balanced_subsample")
        # Column-major once, so that each tree's per-column view needs no copy.
        X_columns = np.asfortranarray(X)
        facts = column_facts(X)
        first = len(self.estimators_)
        n_trees = first + len(seeds)
        grown = Parallel(n_jobs=resolve_n_jobs(self.n_jobs), verbose=self.verbose,
                         prefer="threads",
                         return_as="generator")(
            delayed(_grow_one)(first + i, n_trees, seed, template, X_columns, y,
                               self._sample_weight, self._n_samples_bootstrap, n_classes,
                               criterion, facts, balanced_subsample, self.verbose,
                               getattr(self, "_groups", None))
            for i, seed in enumerate(seeds))
        with progress_bar(len(seeds), "Growing trees", progress) as steps:
            trees = list(counted(grown, steps))
        for seed, tree in zip(seeds, trees, strict=True):
            self.estimators_.append(self._fitted_tree(seed, tree, template))
        release_free_memory()

    def _fitted_tree(self, seed, tree_arrays, template):
        """A fitted sapwood decision tree holding ``tree_arrays`` (as if fit on encoded y)."""
        tree = self._tree_template(seed)
        tree.tree_ = tree_arrays
        tree.n_features_in_ = self.n_features_in_
        tree.n_outputs_ = self.n_outputs_
        tree.max_features_ = template._settle_options(
            self._n_samples, self.n_features_in_, 1.0)["max_features"]
        if self._is_classifier:
            encoded = [np.arange(k, dtype=np.float64) for k in np.atleast_1d(self.n_classes_)]
            tree.classes_ = encoded[0] if self.n_outputs_ == 1 else encoded
            tree.n_classes_ = self.n_classes_
        return tree

    # -- in-bag rows -----------------------------------------------------------------
    def bootstrap_counts(self, i):
        """How many times each training row was drawn for tree ``i``.

        Returns an int array of shape (n_samples,): the multiplicity of every row in
        tree ``i``'s bootstrap sample (all ones when ``bootstrap=False``). Rows with
        count 0 are the tree's out-of-bag rows. Recomputed from the tree's seed, so the
        forest stores no per-tree row lists.
        """
        check_is_fitted(self)
        if not self.bootstrap:
            return np.ones(self._n_samples, dtype=np.intp)
        indices = bootstrap_indices(self.estimators_[i].random_state, self._n_samples,
                                    self._n_samples_bootstrap, self._sample_weight,
                                    getattr(self, "_groups", None))
        return np.bincount(indices, minlength=self._n_samples)

    @property
    def inbag_counts_(self):
        """In-bag counts of every tree, shape (n_estimators, n_samples).

        Row t is :meth:`bootstrap_counts` ``(t)``; ``inbag_counts_ == 0`` marks the
        out-of-bag rows. Computed on access.
        """
        check_is_fitted(self)
        return np.stack([self.bootstrap_counts(i) for i in range(len(self.estimators_))])

    @property
    def estimators_samples_(self):
        """The drawn row indices of every tree (scikit-learn's attribute), with repeats."""
        check_is_fitted(self)
        if not self.bootstrap:
            return [np.arange(self._n_samples, dtype=np.int32) for _ in self.estimators_]
        return [bootstrap_indices(tree.random_state, self._n_samples,
                                  self._n_samples_bootstrap, self._sample_weight,
                                  getattr(self, "_groups", None)
                                  ).astype(np.int32) for tree in self.estimators_]

    # -- out-of-bag estimates ----------------------------------------------------------
    def _oob_average(self, X, width):
        """Mean over trees of the per-tree predictions on each row's OOB trees.

        Returns (n_samples, width, n_outputs), accumulated in tree order.
        """
        n_samples = X.shape[0]
        total = np.zeros((n_samples, width, self.n_outputs_))
        n_trees = np.zeros((n_samples, self.n_outputs_), dtype=np.int64)
        for i, tree in enumerate(self.estimators_):
            oob = np.flatnonzero(self.bootstrap_counts(i) == 0)
            values = tree.tree_.predict(X[oob])  # (m, n_outputs, max_n_classes)
            total[oob] += values[:, :, :width].transpose(0, 2, 1)
            n_trees[oob] += 1
        if (n_trees == 0).any():
            warn("Some inputs do not have OOB scores. This probably means too few trees were "
                 "used to compute any reliable OOB estimates.", UserWarning, stacklevel=4)
            n_trees[n_trees == 0] = 1
        return total / n_trees[:, None, :]

    # -- traversal -------------------------------------------------------------------
    _validate_X_predict = validate_predict_input

    def _tree_values(self, X):
        """Each tree's leaf values for X, in tree order, computed ``n_jobs`` at a time."""
        return Parallel(n_jobs=resolve_n_jobs(self.n_jobs), require="sharedmem",
                        return_as="generator")(
            delayed(tree.tree_.predict)(X) for tree in self.estimators_)

    def apply(self, X):
        """Leaf index of every sample in every tree, shape (n_samples, n_estimators)."""
        X = self._validate_X_predict(X)
        return np.column_stack([tree.tree_.apply(X) for tree in self.estimators_])

    def decision_path(self, X):
        """Node indicator (n_samples, total nodes) and the column offsets of each tree."""
        X = self._validate_X_predict(X)
        paths = [tree.tree_.decision_path(X) for tree in self.estimators_]
        offsets = np.cumsum([0] + [p.shape[1] for p in paths])
        return sparse_hstack(paths).tocsr(), offsets

    @property
    def feature_importances_(self):
        """Mean decrease in impurity by scikit-learn's forest formula.

        The mean over trees with more than one node of each tree's normalised MDI,
        renormalised to sum 1 (zeros when no tree splits). Equal to
        ``sapwood.importance.mdi(forest).importances_mean``, which adds the per-node trace.
        """
        check_is_fitted(self)
        trees = [tree.tree_ for tree in self.estimators_]
        return combine_importances([tree.compute_feature_importances(normalize=False)
                                    for tree in trees],
                                   [tree.node_count > 1 for tree in trees], "mean")

    def to_ensemble(self) -> TreeEnsemble:
        """The forest in sapwood's format (``combine="mean"``)."""
        check_is_fitted(self)
        classes = None
        if self._is_classifier:
            classes = (self.classes_,) if self.n_outputs_ == 1 else tuple(self.classes_)
        names = getattr(self, "feature_names_in_", None)
        return TreeEnsemble(
            trees=tuple(tree.tree_ for tree in self.estimators_),
            task="classification" if self._is_classifier else "regression",
            n_features=self.n_features_in_, combine="mean", classes=classes,
            feature_names=None if names is None else tuple(names),
            kind=ModelKind(library="sapwood", model=type(self).__name__,
                           objective=self.criterion, library_version=__version__,
                           family="forest", bagged=bool(self.bootstrap)),
            bootstrap=Bootstrap(
                seeds=np.array([tree.random_state for tree in self.estimators_],
                               dtype=np.int64),
                n_samples=self._n_samples, n_draws=self._n_samples_bootstrap,
                sample_weight=self._sample_weight,
                groups=getattr(self, "_groups", None)) if self.bootstrap else None)

    def __len__(self):
        return len(self.estimators_)

    def __getitem__(self, index):
        return self.estimators_[index]

    def __iter__(self):
        return iter(self.estimators_)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags


class ForestClassifier(ClassifierMixin, BaseForest):
    """Class encoding, class weights, probabilities and OOB decision function."""

    _is_classifier = True
    _tree_class = DecisionTreeClassifier
    _parameter_constraints: dict = {
        **BaseForest._parameter_constraints,
        "criterion": [StrOptions({"gini", "entropy", "log_loss"})],
        "class_weight": [StrOptions({"balanced_subsample", "balanced"}), dict, list, None],
    }

    def _encode_targets(self, y, sample_weight):
        check_classification_targets(y)
        classes, n_classes = [], []
        encoded = np.zeros(y.shape, dtype=np.float64)
        for k in range(self.n_outputs_):
            classes_k, encoded[:, k] = np.unique(y[:, k], return_inverse=True)
            classes.append(classes_k)
            n_classes.append(classes_k.shape[0])
        if self.n_outputs_ == 1:
            self.classes_, self.n_classes_ = classes[0], n_classes[0]
        else:
            self.classes_, self.n_classes_ = classes, np.array(n_classes, dtype=np.intp)
        return encoded, np.array(n_classes, dtype=np.intp), self._class_weight(
            y, classes, sample_weight)

    def _class_weight(self, y, classes, sample_weight):
        """Per-row class weights for the whole training set (None when not given)."""
        if self.class_weight is None:
            return None
        if isinstance(self.class_weight, dict | list):
            return compute_sample_weight(self.class_weight, y)
        if self.warm_start:
            warn('class_weight presets "balanced" or "balanced_subsample" are not '
                 "recommended for warm_start if the fitted data differs from the full "
                 "dataset.", stacklevel=4)
        if self.class_weight == "balanced_subsample" and self.bootstrap:
            return None  # computed per tree on its bootstrap sample
        per_output = [dict(zip(classes[k], compute_class_weight(
            "balanced", classes=classes[k], y=y[:, k], sample_weight=sample_weight),
            strict=True)) for k in range(self.n_outputs_)]
        return compute_sample_weight(per_output[0] if self.n_outputs_ == 1 else per_output, y)

    def _set_oob_attributes(self, X, y, scoring_function):
        width = int(np.atleast_1d(self.n_classes_)[0])
        decision = self._oob_average(X, width)
        self.oob_decision_function_ = decision[..., 0] if self.n_outputs_ == 1 else decision
        if scoring_function is None:
            from sklearn.metrics import accuracy_score as scoring_function  # lazy: import time
        self.oob_score_ = scoring_function(y, np.argmax(self.oob_decision_function_, axis=1))

    def predict_proba(self, X):
        """Mean over trees of the leaf class fractions (summed in tree order)."""
        X = self._validate_X_predict(X)
        n_classes = np.atleast_1d(self.n_classes_)
        proba = [np.zeros((X.shape[0], k)) for k in n_classes]
        for values in self._tree_values(X):
            for k, p in enumerate(proba):
                p += values[:, k, : n_classes[k]]
        for p in proba:
            p /= len(self.estimators_)
        return proba[0] if self.n_outputs_ == 1 else proba

    def predict_log_proba(self, X):
        proba = self.predict_proba(X)
        if self.n_outputs_ == 1:
            return np.log(proba)
        return [np.log(p) for p in proba]

    def predict(self, X):
        """The class with the highest mean probability."""
        proba = self.predict_proba(X)
        if self.n_outputs_ == 1:
            return self.classes_.take(np.argmax(proba, axis=1))
        columns = [self.classes_[k].take(np.argmax(p, axis=1)) for k, p in enumerate(proba)]
        out = np.empty((proba[0].shape[0], self.n_outputs_), dtype=self.classes_[0].dtype)
        for k, column in enumerate(columns):
            out[:, k] = column
        return out

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_label = True
        return tags


class ForestRegressor(RegressorMixin, BaseForest):
    """Targets, mean prediction and OOB prediction of regression forests."""

    _is_classifier = False
    _tree_class = DecisionTreeRegressor
    _parameter_constraints: dict = {
        **BaseForest._parameter_constraints,
        "criterion": [StrOptions({"squared_error", "friedman_mse", "absolute_error",
                                  "poisson"})],
    }

    def _encode_targets(self, y, sample_weight):
        y = np.asarray(y, dtype=np.float64)
        if self.criterion == "poisson":
            if np.any(y < 0):
                raise ValueError("Some value(s) of y are negative which is not allowed for "
                                 "Poisson regression.")
            if np.sum(y) <= 0:
                raise ValueError("Sum of y is not strictly positive which is necessary for "
                                 "Poisson regression.")
        return y, np.ones(self.n_outputs_, dtype=np.intp), None

    def _set_oob_attributes(self, X, y, scoring_function):
        prediction = self._oob_average(X, 1)[:, 0, :]
        self.oob_prediction_ = prediction[:, 0] if self.n_outputs_ == 1 else prediction
        if scoring_function is None:
            from sklearn.metrics import r2_score as scoring_function  # lazy: import time
        self.oob_score_ = scoring_function(y, self.oob_prediction_)

    def predict(self, X):
        """Mean over trees of the leaf values (summed in tree order)."""
        X = self._validate_X_predict(X)
        total = np.zeros((X.shape[0], self.n_outputs_))
        for values in self._tree_values(X):
            total += values[:, :, 0]
        total /= len(self.estimators_)
        return total[:, 0] if self.n_outputs_ == 1 else total


_PARAMETERS_DOC = """
    Parameters
    ----------
    n_estimators : int, default=100
    criterion : str, default={criterion!r}
        As the sapwood decision tree of the same task.
    max_depth, min_samples_split, min_samples_leaf, min_weight_fraction_leaf, \
max_features, max_leaf_nodes, min_impurity_decrease, ccp_alpha
        Tree options, as :class:`sapwood.DecisionTreeClassifier`; ``max_features``
        defaults to {max_features!r}.
    bootstrap : bool, default={bootstrap}
        Grow each tree on a bootstrap sample (rows drawn with replacement; the draw
        counts become the tree's sample weights).
    oob_score : bool or callable, default=False
        Score the out-of-bag predictions (accuracy / R^2, or ``callable(y, pred)``).
    n_jobs : int, default=None
        Trees grown in parallel through joblib (threads unless a joblib backend is
        configured); ``None`` takes the ``n_jobs`` of an enclosing
        ``joblib.parallel_config`` and is one thread outside any, as in scikit-learn.
        The forest is the same for any value and any backend.
    random_state : int, RandomState instance or None, default=None
        One seed per tree is drawn from it, in tree order, as scikit-learn does.
    verbose : int, default=0
    warm_start : bool, default=False
        Keep the trees already grown and add trees up to ``n_estimators``.
    class_weight : dict, list of dict, "balanced" or "balanced_subsample", default=None
        Classifiers only. "balanced_subsample" recomputes balanced weights on every
        tree's bootstrap sample.
    max_samples : int or float, default=None
        Rows drawn per tree (a float is a fraction of the total sample weight).

    Attributes
    ----------
    estimators_ : list of fitted sapwood decision trees
        Each with ``tree_`` and its integer ``random_state`` (trees are fit on encoded
        classes, as in scikit-learn).
    feature_importances_ : ndarray of shape (n_features,)
    oob_score_ : float
    oob_decision_function_ / oob_prediction_ : ndarray
    inbag_counts_ : ndarray of shape (n_estimators, n_samples)
        Bootstrap draw counts of every tree (see :meth:`bootstrap_counts`).
    estimators_samples_ : list of ndarray
    classes_, n_classes_, n_features_in_, feature_names_in_, n_outputs_
"""


class _ClassifierParameters(ForestClassifier):
    def __init__(self, n_estimators=100, *, criterion="gini", max_depth=None,
                 min_samples_split=2, min_samples_leaf=1, min_weight_fraction_leaf=0.0,
                 max_features="sqrt", max_leaf_nodes=None, min_impurity_decrease=0.0,
                 bootstrap=True, oob_score=False, n_jobs=None, random_state=None, verbose=0,
                 warm_start=False, class_weight=None, ccp_alpha=0.0, max_samples=None):
        self.n_estimators = n_estimators
        self.criterion = criterion
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.max_features = max_features
        self.max_leaf_nodes = max_leaf_nodes
        self.min_impurity_decrease = min_impurity_decrease
        self.bootstrap = bootstrap
        self.oob_score = oob_score
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.warm_start = warm_start
        self.class_weight = class_weight
        self.ccp_alpha = ccp_alpha
        self.max_samples = max_samples


class _RegressorParameters(ForestRegressor):
    def __init__(self, n_estimators=100, *, criterion="squared_error", max_depth=None,
                 min_samples_split=2, min_samples_leaf=1, min_weight_fraction_leaf=0.0,
                 max_features=1.0, max_leaf_nodes=None, min_impurity_decrease=0.0,
                 bootstrap=True, oob_score=False, n_jobs=None, random_state=None, verbose=0,
                 warm_start=False, ccp_alpha=0.0, max_samples=None):
        self.n_estimators = n_estimators
        self.criterion = criterion
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.max_features = max_features
        self.max_leaf_nodes = max_leaf_nodes
        self.min_impurity_decrease = min_impurity_decrease
        self.bootstrap = bootstrap
        self.oob_score = oob_score
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.warm_start = warm_start
        self.ccp_alpha = ccp_alpha
        self.max_samples = max_samples


class RandomForestClassifier(_ClassifierParameters):
    __doc__ = ("A random forest classifier: scikit-learn 1.9's RandomForestClassifier, tree "
               "by tree, on sapwood's kernels.\n" + _PARAMETERS_DOC.format(
                   criterion="gini", max_features="sqrt", bootstrap=True))


class RandomForestRegressor(_RegressorParameters):
    __doc__ = ("A random forest regressor: scikit-learn 1.9's RandomForestRegressor, tree "
               "by tree, on sapwood's kernels.\n" + _PARAMETERS_DOC.format(
                   criterion="squared_error", max_features=1.0, bootstrap=True))


class ExtraTreesClassifier(_ClassifierParameters):
    __doc__ = ("Extremely randomized trees (random thresholds, no bootstrap by default): "
               "scikit-learn 1.9's ExtraTreesClassifier, tree by tree.\n"
               + _PARAMETERS_DOC.format(criterion="gini", max_features="sqrt", bootstrap=False))
    _splitter = "random"

    def __init__(self, n_estimators=100, *, criterion="gini", max_depth=None,
                 min_samples_split=2, min_samples_leaf=1, min_weight_fraction_leaf=0.0,
                 max_features="sqrt", max_leaf_nodes=None, min_impurity_decrease=0.0,
                 bootstrap=False, oob_score=False, n_jobs=None, random_state=None, verbose=0,
                 warm_start=False, class_weight=None, ccp_alpha=0.0, max_samples=None):
        super().__init__(
            n_estimators, criterion=criterion, max_depth=max_depth,
            min_samples_split=min_samples_split, min_samples_leaf=min_samples_leaf,
            min_weight_fraction_leaf=min_weight_fraction_leaf, max_features=max_features,
            max_leaf_nodes=max_leaf_nodes, min_impurity_decrease=min_impurity_decrease,
            bootstrap=bootstrap, oob_score=oob_score, n_jobs=n_jobs, random_state=random_state,
            verbose=verbose, warm_start=warm_start, class_weight=class_weight,
            ccp_alpha=ccp_alpha, max_samples=max_samples)


class ExtraTreesRegressor(_RegressorParameters):
    __doc__ = ("Extremely randomized trees (random thresholds, no bootstrap by default): "
               "scikit-learn 1.9's ExtraTreesRegressor, tree by tree.\n"
               + _PARAMETERS_DOC.format(criterion="squared_error", max_features=1.0,
                                        bootstrap=False))
    _splitter = "random"

    def __init__(self, n_estimators=100, *, criterion="squared_error", max_depth=None,
                 min_samples_split=2, min_samples_leaf=1, min_weight_fraction_leaf=0.0,
                 max_features=1.0, max_leaf_nodes=None, min_impurity_decrease=0.0,
                 bootstrap=False, oob_score=False, n_jobs=None, random_state=None, verbose=0,
                 warm_start=False, ccp_alpha=0.0, max_samples=None):
        super().__init__(
            n_estimators, criterion=criterion, max_depth=max_depth,
            min_samples_split=min_samples_split, min_samples_leaf=min_samples_leaf,
            min_weight_fraction_leaf=min_weight_fraction_leaf, max_features=max_features,
            max_leaf_nodes=max_leaf_nodes, min_impurity_decrease=min_impurity_decrease,
            bootstrap=bootstrap, oob_score=oob_score, n_jobs=n_jobs, random_state=random_state,
            verbose=verbose, warm_start=warm_start, ccp_alpha=ccp_alpha,
            max_samples=max_samples)
