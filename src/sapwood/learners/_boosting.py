"""Gradient boosting (Friedman 2001, doi:10.1214/aos/1013203451) on sapwood's CART kernels.

sapwood reproduces scikit-learn 1.9's algorithm number for number:

- the initial raw score comes from ``init`` (by default a prior / mean / median /
  quantile dummy estimator, as scikit-learn's), through the loss's link;
- every stage optionally draws an in-bag mask (``subsample < 1``, one
  ``uniform(size=n_samples)`` draw from the estimator's ``RandomState``), then fits one
  squared-error tree per output column to the negative gradient, each tree's splitter
  seed drawn in order from the same ``RandomState``;
- the gradients are evaluated by :mod:`sapwood._kernels._losses` with the C library's
  ``exp``/``log``/``log1p`` and scikit-learn's formulas, so they are bit-identical to
  scikit-learn's compiled losses (NumPy's ``exp`` is not);
- leaves are then replaced by the line-search step of each loss: one Newton step for
  log loss (``mean_w(g) / mean_w(p (1 - p))``, times ``(K - 1) / K`` for K > 2) and
  for the exponential loss; the weighted median (absolute error), the weighted
  ``alpha``-quantile (quantile) or median plus mean clipped residual (Huber) of the
  in-bag residuals in the leaf; squared error keeps the tree's means;
- ``raw += learning_rate * leaf value``.

Everything that depends on ``loss`` (gradient, leaf step, initial prediction, link) is
asked of one loss object, :mod:`sapwood.learners._losses`, chosen at the start of every
fit.

``feature_importances_`` uses scikit-learn's boosting formula (the mean of the
*unnormalised* per-tree MDI over trees with more than one node, renormalised).
Friedman's own importance is :func:`sapwood.importance.friedman_importance`.
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .._format import ModelKind, TreeEnsemble
from .._impurity import combine_importances
from .._kernels._random import RAND_R_MAX
from .._progress import check_progress, progress_bar
from .._sklearn_compat import (
    HasMethods,
    Interval,
    StrOptions,
    _check_sample_weight,
    _fit_context,
)
from .._version import __version__
from ._grow import column_facts, grow_tree, release_free_memory
from ._inputs import check_rows, reject_infinity, validate_predict_input
from ._losses import CLASSIFICATION_LOSSES, REGRESSION_LOSSES, make_loss
from ._tree import BaseDecisionTree, DecisionTreeRegressor

__all__ = ["GradientBoostingClassifier", "GradientBoostingRegressor"]


def _in_bag_mask(n_samples, n_in_bag, rng):
    """Sequential sampling without replacement of exactly ``n_in_bag`` rows, from one
    ``rng.uniform(size=n_samples)`` draw (Knuth's selection sampling, the draw
    scikit-learn's boosting makes)."""
    u = rng.uniform(size=n_samples)
    mask = np.zeros(n_samples, dtype=bool)
    taken = 0
    for i in range(n_samples):
        if u[i] * (n_samples - i) < (n_in_bag - taken):
            mask[i] = True
            taken += 1
    return mask


class BaseGradientBoosting(BaseEstimator):
    """Stage-wise fitting, raw scores, importances and the tree-format export."""

    _parameter_constraints: dict = {
        **{k: v for k, v in BaseDecisionTree._parameter_constraints.items()
           if k not in ("splitter", "max_depth")},
        "learning_rate": [Interval(numbers.Real, 0.0, None, closed="left")],
        "n_estimators": [Interval(numbers.Integral, 1, None, closed="left")],
        "max_depth": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "criterion": [StrOptions({"deprecated", "friedman_mse", "squared_error"})],
        "subsample": [Interval(numbers.Real, 0.0, 1.0, closed="right")],
        "verbose": ["verbose"],
        "warm_start": ["boolean"],
        "validation_fraction": [Interval(numbers.Real, 0.0, 1.0, closed="neither")],
        "n_iter_no_change": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "tol": [Interval(numbers.Real, 0.0, None, closed="left")],
    }

    def _tree_template(self):
        return DecisionTreeRegressor(
            max_depth=self.max_depth, min_samples_split=self.min_samples_split,
            min_samples_leaf=self.min_samples_leaf,
            min_weight_fraction_leaf=self.min_weight_fraction_leaf,
            max_features=self.max_features, max_leaf_nodes=self.max_leaf_nodes,
            min_impurity_decrease=self.min_impurity_decrease, ccp_alpha=self.ccp_alpha)

    # -- state -------------------------------------------------------------------------
    def _clear_state(self):
        for name in ("estimators_", "train_score_", "oob_improvement_", "oob_scores_",
                     "oob_score_", "init_", "_rng", "_base_score"):
            if hasattr(self, name):
                delattr(self, name)

    def _is_fitted(self):
        return len(getattr(self, "estimators_", [])) > 0

    def _init_state(self):
        self.init_ = self._loss.default_init() if self.init is None else self.init
        self.estimators_ = np.empty((self.n_estimators, self.n_trees_per_iteration_),
                                    dtype=object)
        self.train_score_ = np.zeros(self.n_estimators)
        if self.subsample < 1.0:
            self.oob_improvement_ = np.zeros(self.n_estimators)
            self.oob_scores_ = np.zeros(self.n_estimators)
            self.oob_score_ = np.nan

    def _resize_state(self):
        total = self.n_estimators
        self.estimators_ = np.resize(self.estimators_, (total, self.n_trees_per_iteration_))
        self.train_score_ = np.resize(self.train_score_, total)
        if hasattr(self, "oob_improvement_"):
            self.oob_improvement_ = np.resize(self.oob_improvement_, total)
            self.oob_scores_ = np.resize(self.oob_scores_, total)
            self.oob_score_ = np.nan
        elif self.subsample < 1.0:
            self.oob_improvement_ = np.zeros(total)
            self.oob_scores_ = np.zeros(total)
            self.oob_score_ = np.nan

    # -- fitting -----------------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, sample_weight=None, monitor=None, progress=False):
        """Fit the stages to (X, y).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Converted to float32 once; NaN marks a missing value.
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional
        monitor : callable, optional
            Called after every stage as ``monitor(i, self, locals())``; fitting stops
            when it returns True.
        progress : bool, default=False
            A bar on stderr counting the stages as they are fit, with the time left.
            The model does not depend on it.
        """
        check_progress(progress)
        if not self.warm_start:
            self._clear_state()
        check_rows(X, y, sample_weight)
        # Column-major float32 in one conversion: the trees scan columns.
        X, y = validate_data(self, X, y, dtype=np.float32, order="F",
                             ensure_all_finite="allow-nan",
                             y_numeric=not isinstance(self, ClassifierMixin))
        reject_infinity(X)
        weight_is_none = sample_weight is None
        sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64)
        y = self._encode_y(y, None if weight_is_none else sample_weight)
        self._loss = self._make_loss()

        if self.n_iter_no_change is not None:
            from sklearn.model_selection import train_test_split  # lazy: import time

            stratify = y if isinstance(self, ClassifierMixin) else None
            X_train, X_val, y_train, y_val, w_train, w_val = train_test_split(
                X, y, sample_weight, random_state=self.random_state,
                test_size=self.validation_fraction, stratify=stratify)
            if (isinstance(self, ClassifierMixin)
                    and self.n_classes_ != np.unique(y_train).shape[0]):
                raise ValueError("The training data after the early stopping split is "
                                 "missing some classes. Try using another random seed.")
        else:
            X_train, y_train, w_train = X, y, sample_weight
            X_val = y_val = w_val = None

        if not self._is_fitted():
            self._init_state()
            if not (isinstance(self.init_, str) and self.init_ == "zero"):
                X_init = X_train if self.init is None else np.ascontiguousarray(X_train)
                if weight_is_none:
                    self.init_.fit(X_init, y_train)
                else:
                    try:
                        self.init_.fit(X_init, y_train, sample_weight=w_train)
                    except TypeError as error:
                        if "unexpected keyword argument 'sample_weight'" in str(error):
                            raise ValueError(
                                f"The initial estimator {type(self.init_).__name__} does "
                                "not support sample weights.") from error
                        raise
            raw = self._raw_predict_init(X_train)
            self._base_score = (raw[0].copy() if self.init is None or
                                (isinstance(self.init, str) and self.init == "zero")
                                else None)
            begin = 0
            self._rng = check_random_state(self.random_state)
        else:
            if self.n_estimators < self.estimators_.shape[0]:
                raise ValueError(
                    f"n_estimators={self.n_estimators} must be larger or equal to "
                    f"estimators_.shape[0]={self.estimators_.shape[0]} when "
                    "warm_start==True")
            begin = self.estimators_.shape[0]
            raw = self._raw_predict_validated(X_train)
            self._resize_state()

        with progress_bar(self.n_estimators - begin, "Boosting stages", progress) as steps:
            def watched(i, estimator, variables):
                steps.advance()
                return bool(monitor(i, estimator, variables)) if monitor is not None \
                    else False

            n_stages = self._fit_stages(X_train, y_train, raw, w_train, X_val, y_val,
                                        w_val, begin, watched if progress else monitor)
            if n_stages < self.n_estimators:  # early stopping, or the monitor said stop
                steps.finish_early(f"Boosting stages (stopped after {n_stages})")
        if n_stages != self.estimators_.shape[0]:
            self.estimators_ = self.estimators_[:n_stages]
            self.train_score_ = self.train_score_[:n_stages]
            if hasattr(self, "oob_improvement_"):
                self.oob_improvement_ = self.oob_improvement_[:n_stages]
                self.oob_scores_ = self.oob_scores_[:n_stages]
                self.oob_score_ = self.oob_scores_[-1]
        self.n_estimators_ = n_stages
        release_free_memory()
        return self

    def _fit_stages(self, X, y, raw, sample_weight, X_val, y_val, w_val, begin, monitor):
        n_samples, n_features = X.shape
        rng = self._rng
        do_oob = self.subsample < 1.0
        mask = np.ones(n_samples, dtype=bool)
        n_in_bag = max(1, int(self.subsample * n_samples))
        template = self._tree_template()
        X_columns = np.asfortranarray(X)
        has_missing, tied_pairs = column_facts(X)
        loss = self._loss
        factor = loss.score_factor
        if self.n_iter_no_change is not None:
            history = np.full(self.n_iter_no_change, np.inf)
            val_raw = self._staged_raw_lazy(X_val)
        i = begin
        for i in range(begin, self.n_estimators):
            if do_oob:
                mask = _in_bag_mask(n_samples, n_in_bag, rng)
                if i == 0:
                    initial_oob = factor * loss.mean_loss(y[~mask], raw[~mask],
                                                          sample_weight[~mask])
            self._fit_stage(i, X_columns, y, raw, sample_weight, mask, rng, template,
                            has_missing, tied_pairs)
            if do_oob:
                self.train_score_[i] = factor * loss.mean_loss(y[mask], raw[mask],
                                                               sample_weight[mask])
                self.oob_scores_[i] = factor * loss.mean_loss(y[~mask], raw[~mask],
                                                              sample_weight[~mask])
                previous = initial_oob if i == 0 else self.oob_scores_[i - 1]
                self.oob_improvement_[i] = previous - self.oob_scores_[i]
                self.oob_score_ = self.oob_scores_[-1]
            else:
                self.train_score_[i] = factor * loss.mean_loss(y, raw, sample_weight)
            if self.verbose:
                line = f"stage {i + 1}: train loss {self.train_score_[i]:.6f}"
                if do_oob:
                    line += f", OOB improvement {self.oob_improvement_[i]:.6f}"
                print(line)
            if monitor is not None and monitor(i, self, locals()):
                break
            if self.n_iter_no_change is not None:
                validation_loss = factor * loss.mean_loss(y_val, next(val_raw), w_val)
                if np.any(validation_loss + self.tol < history):
                    history[i % len(history)] = validation_loss
                else:
                    break
        return i + 1

    def _fit_stage(self, i, X_columns, y, raw, sample_weight, mask, rng, template,
                   has_missing, tied_pairs):
        loss = self._loss
        loss.before_stage(y, raw, sample_weight)
        residual = -loss.gradient(y, raw)
        tree_weight = sample_weight * mask if self.subsample < 1.0 else sample_weight
        n_samples, n_features = X_columns.shape
        options = template._settle_options(n_samples, n_features, float(np.sum(tree_weight)))
        self.max_features_ = options["max_features"]
        # Every row is in the tree (no subsample, no zero weight) and no pruning: the
        # builder records each row's leaf, so X need not be routed through the tree.
        builder_leaves = (self.subsample >= 1.0 and self.ccp_alpha == 0.0
                          and bool(np.all(tree_weight != 0.0)))
        for k in range(self.n_trees_per_iteration_):
            leaves = np.empty(n_samples, dtype=np.intp) if builder_leaves else None
            tree = grow_tree(
                X_columns, residual[:, k : k + 1], tree_weight, criterion="squared_error",
                n_classes=np.ones(1, dtype=np.intp), seed=rng.randint(0, RAND_R_MAX),
                has_missing=has_missing, tied_pairs=tied_pairs, leaf_of=leaves, **options)
            if not builder_leaves:
                leaves = tree.apply(X_columns)
            if loss.updates_leaves:
                in_bag = leaves if self.subsample >= 1.0 else np.where(mask, leaves, -1)
                self._update_leaves(tree, in_bag, y, residual[:, k], raw, tree_weight, k)
            raw[:, k] += self.learning_rate * tree.value[:, 0, 0].take(leaves)
            self.estimators_[i, k] = self._fitted_tree(template, tree)

    def _update_leaves(self, tree, in_bag_leaves, y, residual, raw, sample_weight, k):
        order = np.argsort(in_bag_leaves, kind="stable")
        sorted_leaves = in_bag_leaves[order]
        for leaf in np.flatnonzero(tree.children_left == -1):
            lo, hi = np.searchsorted(sorted_leaves, [leaf, leaf + 1])
            rows = order[lo:hi]
            tree.value[leaf, 0, 0] = self._loss.leaf_value(
                y[rows], residual[rows], raw[rows, k], sample_weight[rows], k)

    def _fitted_tree(self, template, tree_arrays):
        tree = DecisionTreeRegressor(**template.get_params())
        tree.tree_ = tree_arrays
        tree.n_features_in_ = self.n_features_in_
        tree.n_outputs_ = 1
        tree.max_features_ = self.max_features_
        return tree

    # -- prediction ------------------------------------------------------------------
    _validate_X_predict = validate_predict_input

    def _raw_predict_init(self, X):
        if isinstance(self.init_, str) and self.init_ == "zero":
            return np.zeros((X.shape[0], self.n_trees_per_iteration_))
        if self.init is not None:
            # fit keeps X column-major; a user's estimator sees scikit-learn's row-major
            # X (a linear model's sums depend on the layout).
            X = np.ascontiguousarray(X)
        return self._loss.raw_from_init(self.init_, X)

    def _add_stage(self, raw, stage, X):
        for k, tree in enumerate(self.estimators_[stage]):
            raw[:, k] += self.learning_rate * tree.tree_.predict(X)[:, 0, 0]

    def _staged_raw_lazy(self, X):
        # Reads estimators_ when advanced, so early stopping can follow the fit.
        raw = self._raw_predict_init(X)
        for stage in range(self.estimators_.shape[0]):
            self._add_stage(raw, stage, X)
            yield raw.copy()

    def _staged_raw(self, X):
        X = self._validate_X_predict(X)
        yield from self._staged_raw_lazy(X)

    def _raw_predict_validated(self, X):
        raw = self._raw_predict_init(X)
        for stage in range(self.estimators_.shape[0]):
            self._add_stage(raw, stage, X)
        return raw

    def _raw_predict(self, X):
        return self._raw_predict_validated(self._validate_X_predict(X))

    def apply(self, X):
        """Leaf index of every sample in every tree, as floats (as scikit-learn), shape
        (n_samples, n_stages, n_columns); the regressor drops the last axis."""
        X = self._validate_X_predict(X)
        n_stages, n_columns = self.estimators_.shape
        leaves = np.zeros((X.shape[0], n_stages, n_columns))
        for i in range(n_stages):
            for k in range(n_columns):
                leaves[:, i, k] = self.estimators_[i, k].tree_.apply(X)
        return leaves

    @property
    def feature_importances_(self):
        """MDI by scikit-learn's boosting formula (mean of unnormalised per-tree vectors
        over trees with more than one node, renormalised)."""
        check_is_fitted(self)
        trees = [tree.tree_ for tree in self.estimators_.ravel()]
        return combine_importances([tree.compute_feature_importances(normalize=False)
                                    for tree in trees],
                                   [tree.node_count > 1 for tree in trees], "sum")

    def to_ensemble(self) -> TreeEnsemble:
        """The model in sapwood's format (``combine="sum"``, weights = learning rate).

        Needs a constant initial score (``init=None`` or ``"zero"``). A loss whose raw
        score is a multiple of the link's input (the exponential loss: half the log-odds)
        has its base score and tree weights scaled to it (exactly: a power of two)."""
        check_is_fitted(self)
        if getattr(self, "_base_score", None) is None:
            raise ValueError("to_ensemble needs a constant initial prediction (init=None "
                             f"or 'zero'); this model has init={self.init!r}.")
        n_stages, n_columns = self.estimators_.shape
        names = getattr(self, "feature_names_in_", None)
        scale = self._loss.raw_scale
        return TreeEnsemble(
            trees=tuple(tree.tree_ for tree in self.estimators_.ravel()),
            task="classification" if isinstance(self, ClassifierMixin) else "regression",
            n_features=self.n_features_in_, combine="sum",
            tree_weights=scale * np.full(n_stages * n_columns, self.learning_rate),
            tree_output=np.tile(np.arange(n_columns), n_stages),
            base_score=scale * self._base_score, link=self._loss.link,
            classes=(self.classes_,) if isinstance(self, ClassifierMixin) else None,
            feature_names=None if names is None else tuple(names),
            kind=ModelKind(library="sapwood", model=type(self).__name__,
                           objective=str(self.loss), library_version=__version__,
                           family="boosting"))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags


_TREE_DOC = """\
learning_rate : float, default=0.1
    n_estimators : int, default=100
        Number of stages.
    subsample : float in (0, 1], default=1.0
        Fraction of rows each stage's trees are grown on (drawn without replacement);
        below 1 the ``oob_*`` attributes are set.
    criterion : {"deprecated", "friedman_mse", "squared_error"}, default="deprecated"
        No effect: trees always use squared error, as in scikit-learn 1.9.
    max_depth : int or None, default=3
    min_samples_split, min_samples_leaf, min_weight_fraction_leaf, min_impurity_decrease, \
max_features, max_leaf_nodes, ccp_alpha
        Tree options, as :class:`sapwood.DecisionTreeRegressor`.
    init : estimator, "zero" or None, default=None
        Initial model; None uses the loss's constant (as scikit-learn's dummy models).
    random_state : int, RandomState instance or None, default=None
        Draws the in-bag masks, every tree's splitter seed (in that order) and the
        early-stopping split.
    verbose : int, default=0
    warm_start : bool, default=False
        Add stages to the fitted model instead of starting again.
    validation_fraction : float, default=0.1
    n_iter_no_change : int or None, default=None
        Stop when the validation loss has not improved by ``tol`` for that many stages.
    tol : float, default=1e-4"""


class GradientBoostingRegressor(RegressorMixin, BaseGradientBoosting):
    __doc__ = """Gradient boosting for regression, scikit-learn 1.9's algorithm and numbers.

    Parameters
    ----------
    loss : {"squared_error", "absolute_error", "huber", "quantile"}, default="squared_error"
    alpha : float in (0, 1), default=0.9
        The quantile of ``loss="quantile"``; for ``"huber"`` the quantile of the
        absolute residuals that sets the Huber threshold at every stage.
    """ + _TREE_DOC + """

    Attributes
    ----------
    estimators_ : ndarray of DecisionTreeRegressor, shape ``(n_estimators_, 1)``
    n_estimators_ : int
        Stages fitted (fewer than ``n_estimators`` after early stopping).
    init_ : estimator or "zero"
    train_score_ : ndarray of shape ``(n_estimators_,)``
        Loss on the (in-bag) training rows after each stage; squared error is reported
        as the mean squared error.
    oob_improvement_, oob_scores_ : ndarray of shape ``(n_estimators_,)``
        With ``subsample < 1``: out-of-bag loss decrease and out-of-bag loss per stage.
    oob_score_ : float
        The last out-of-bag loss.
    feature_importances_ : ndarray of shape (n_features,)
    max_features_ : int
    """

    _parameter_constraints: dict = {
        **BaseGradientBoosting._parameter_constraints,
        "loss": [StrOptions(set(REGRESSION_LOSSES))],
        "init": [StrOptions({"zero"}), None, HasMethods(["fit", "predict"])],
        "alpha": [Interval(numbers.Real, 0.0, 1.0, closed="neither")],
    }

    def __init__(self, *, loss="squared_error", learning_rate=0.1, n_estimators=100,
                 subsample=1.0, criterion="deprecated", min_samples_split=2,
                 min_samples_leaf=1, min_weight_fraction_leaf=0.0, max_depth=3,
                 min_impurity_decrease=0.0, init=None, random_state=None,
                 max_features=None, alpha=0.9, verbose=0, max_leaf_nodes=None,
                 warm_start=False, validation_fraction=0.1, n_iter_no_change=None,
                 tol=1e-4, ccp_alpha=0.0):
        self.loss = loss
        self.learning_rate = learning_rate
        self.n_estimators = n_estimators
        self.subsample = subsample
        self.criterion = criterion
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.max_depth = max_depth
        self.min_impurity_decrease = min_impurity_decrease
        self.init = init
        self.random_state = random_state
        self.max_features = max_features
        self.alpha = alpha
        self.verbose = verbose
        self.max_leaf_nodes = max_leaf_nodes
        self.warm_start = warm_start
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.ccp_alpha = ccp_alpha

    def _encode_y(self, y, sample_weight):
        self.n_trees_per_iteration_ = 1
        return np.asarray(y, dtype=np.float64)

    def _make_loss(self):
        return make_loss(self.loss, alpha=self.alpha)

    def predict(self, X):
        """Initial prediction plus the shrunken sum of the trees."""
        return self._raw_predict(X)[:, 0]

    def staged_predict(self, X):
        """Predictions after each stage."""
        for raw in self._staged_raw(X):
            yield raw[:, 0]

    def apply(self, X):
        """Leaf index of every sample in every tree, shape (n_samples, n_stages)."""
        leaves = super().apply(X)
        return leaves.reshape(leaves.shape[0], leaves.shape[1])


class GradientBoostingClassifier(ClassifierMixin, BaseGradientBoosting):
    __doc__ = """Gradient boosting for classification, scikit-learn 1.9's algorithm and numbers.

    One tree per stage for two classes, one per class and stage for more (multinomial).

    Parameters
    ----------
    loss : {"log_loss", "exponential"}, default="log_loss"
        ``"exponential"`` (AdaBoost's loss) needs two classes.
    """ + _TREE_DOC + """

    Attributes
    ----------
    estimators_ : ndarray of DecisionTreeRegressor, shape ``(n_estimators_, n_columns)``
    n_estimators_, init_, oob_improvement_, oob_scores_, oob_score_, max_features_
        As :class:`GradientBoostingRegressor`.
    classes_, n_classes_ : class labels and their number
    n_trees_per_iteration_ : int
    train_score_ : ndarray of shape ``(n_estimators_,)``
        Loss after each stage (binary log loss as twice the half binomial deviance).
    feature_importances_ : ndarray of shape (n_features,)
    """

    _parameter_constraints: dict = {
        **BaseGradientBoosting._parameter_constraints,
        "loss": [StrOptions(set(CLASSIFICATION_LOSSES))],
        "init": [StrOptions({"zero"}), None, HasMethods(["fit", "predict_proba"])],
    }

    def __init__(self, *, loss="log_loss", learning_rate=0.1, n_estimators=100,
                 subsample=1.0, criterion="deprecated", min_samples_split=2,
                 min_samples_leaf=1, min_weight_fraction_leaf=0.0, max_depth=3,
                 min_impurity_decrease=0.0, init=None, random_state=None,
                 max_features=None, verbose=0, max_leaf_nodes=None, warm_start=False,
                 validation_fraction=0.1, n_iter_no_change=None, tol=1e-4, ccp_alpha=0.0):
        self.loss = loss
        self.learning_rate = learning_rate
        self.n_estimators = n_estimators
        self.subsample = subsample
        self.criterion = criterion
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.max_depth = max_depth
        self.min_impurity_decrease = min_impurity_decrease
        self.init = init
        self.random_state = random_state
        self.max_features = max_features
        self.verbose = verbose
        self.max_leaf_nodes = max_leaf_nodes
        self.warm_start = warm_start
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.ccp_alpha = ccp_alpha

    def _encode_y(self, y, sample_weight):
        check_classification_targets(y)
        self.classes_, encoded = np.unique(y, return_inverse=True)
        self.n_classes_ = self.classes_.shape[0]
        self.n_trees_per_iteration_ = 1 if self.n_classes_ <= 2 else self.n_classes_
        n_kept = (self.n_classes_ if sample_weight is None
                  else np.count_nonzero(np.bincount(encoded, sample_weight)))
        if n_kept < 2:
            raise ValueError(f"y contains {n_kept} class after sample_weight trimmed classes "
                             "with zero weights, while a minimum of 2 classes are required.")
        return encoded.astype(np.float64)

    def _make_loss(self):
        return make_loss(self.loss, n_classes=self.n_classes_)

    def decision_function(self, X):
        """Raw scores: (n_samples,) for two classes, (n_samples, K) otherwise."""
        raw = self._raw_predict(X)
        return raw[:, 0] if raw.shape[1] == 1 else raw

    def staged_decision_function(self, X):
        """Raw scores after each stage."""
        for raw in self._staged_raw(X):
            yield raw[:, 0] if raw.shape[1] == 1 else raw

    def _labels(self, raw):
        encoded = (np.argmax(raw, axis=1) if raw.shape[1] > 1
                   else (raw[:, 0] >= 0).astype(int))
        return self.classes_.take(encoded)

    def predict_proba(self, X):
        """Class probabilities (logistic / softmax of the raw scores)."""
        raw = self._raw_predict(X)  # first: it checks the model is fitted
        return self._loss.proba(raw)

    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`."""
        return np.log(self.predict_proba(X))

    def predict(self, X):
        """The class with the largest raw score."""
        return self._labels(self._raw_predict(X))

    def staged_predict_proba(self, X):
        """Class probabilities after each stage."""
        for raw in self._staged_raw(X):
            yield self._loss.proba(raw)

    def staged_predict(self, X):
        """Predicted classes after each stage."""
        for raw in self._staged_raw(X):
            yield self._labels(raw)
