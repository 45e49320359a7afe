"""Gradient boosting (Friedman 2001, doi:10.1214/aos/1013203451) on sapwood's CART kernels.

Scope of this first version: ``squared_error`` regression and ``log_loss``
classification (binary and multinomial) with ``subsample=1.0``. For these scikit-learn
1.9's algorithm is deterministic given ``random_state`` and sapwood reproduces it:

- the initial raw score is the weighted mean of y (regression) or the link of the
  weighted class priors (classification; symmetric multinomial logit for K > 2);
- every stage fits one squared-error tree per output column to the negative gradient,
  each tree's splitter seed drawn in order from one ``RandomState(random_state)``;
- log-loss leaves are replaced by one Newton step,
  ``mean_w(g) / mean_w(p (1 - p))`` (times ``(K - 1) / K`` for K > 2 classes);
- ``raw += learning_rate * leaf value``.

``feature_importances_`` uses scikit-learn's boosting formula (the mean of the
*unnormalised* per-tree MDI over trees with more than one node, renormalised).
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from .._format import TreeEnsemble
from .._kernels._random import RAND_R_MAX
from ._grow import column_facts, grow_tree
from ._tree import BaseDecisionTree, DecisionTreeRegressor

__all__ = ["GradientBoostingClassifier", "GradientBoostingRegressor"]

_EPS = np.finfo(np.float64).eps


def _expit_gradient(raw, y):
    """d/draw of the half binomial loss, ``expit(raw) - y``, without overflow."""
    out = np.empty_like(raw)
    big = raw > -37.0
    e = np.exp(-raw[big])
    out[big] = ((1.0 - y[big]) - y[big] * e) / (1.0 + e)
    out[~big] = np.exp(raw[~big]) - y[~big]
    return out


def _softmax(raw):
    shifted = np.exp(raw - raw.max(axis=1, keepdims=True))
    return shifted / shifted.sum(axis=1, keepdims=True)


class BaseGradientBoosting(BaseEstimator):
    """Stage-wise fitting, raw scores, importances and the tree-format export."""

    _parameter_constraints: dict = {
        **{k: v for k, v in BaseDecisionTree._parameter_constraints.items()
           if k not in ("splitter", "max_depth")},
        "learning_rate": [Interval(numbers.Real, 0.0, None, closed="left")],
        "n_estimators": [Interval(numbers.Integral, 1, None, closed="left")],
        "max_depth": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "verbose": ["verbose"],
    }

    def _tree_template(self):
        return DecisionTreeRegressor(
            max_depth=self.max_depth, min_samples_split=self.min_samples_split,
            min_samples_leaf=self.min_samples_leaf,
            min_weight_fraction_leaf=self.min_weight_fraction_leaf,
            max_features=self.max_features, max_leaf_nodes=self.max_leaf_nodes,
            min_impurity_decrease=self.min_impurity_decrease, ccp_alpha=self.ccp_alpha)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit ``n_estimators`` stages to (X, y).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Converted to float32 once; NaN marks a missing value.
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional
        """
        X, y = validate_data(self, X, y, dtype=np.float32, ensure_all_finite="allow-nan",
                             y_numeric=not isinstance(self, ClassifierMixin))
        if np.isinf(X).any():
            raise ValueError("Input X contains infinity or a value too large for "
                             "dtype('float32').")
        sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64)
        targets = self._encode_targets(y, sample_weight)  # (n_samples, n_columns)
        n_samples, n_features = X.shape
        self._base_score = self._initial_raw(targets, sample_weight)
        raw = np.tile(self._base_score, (n_samples, 1))
        template = self._tree_template()
        options = template._settle_options(n_samples, n_features, float(sample_weight.sum()))
        self.max_features_ = options["max_features"]
        rng = check_random_state(self.random_state)
        X_columns = np.asfortranarray(X)
        has_missing, tie_free = column_facts(X)
        n_columns = raw.shape[1]
        self.estimators_ = np.empty((self.n_estimators, n_columns), dtype=object)
        self.train_score_ = np.zeros(self.n_estimators)
        for stage in range(self.n_estimators):
            residual = self._negative_gradient(targets, raw)
            for k in range(n_columns):
                tree = grow_tree(
                    X_columns, residual[:, k : k + 1], sample_weight, criterion="squared_error",
                    n_classes=np.ones(1, dtype=np.intp), seed=rng.randint(0, RAND_R_MAX),
                    has_missing=has_missing, tie_free=tie_free, **options)
                leaves = tree.apply(X_columns)
                self._newton_leaves(tree, leaves, targets[:, k], residual[:, k],
                                    sample_weight)
                raw[:, k] += self.learning_rate * tree.value[:, 0, 0].take(leaves)
                self.estimators_[stage, k] = self._fitted_tree(template, tree)
            self.train_score_[stage] = self._loss(targets, raw, sample_weight)
            if self.verbose:
                print(f"stage {stage + 1}: train loss {self.train_score_[stage]:.6f}")
        self.n_estimators_ = self.n_estimators
        return self

    def _newton_leaves(self, tree, leaves, target, residual, sample_weight):
        """Squared error keeps the leaf means; other losses override this."""

    def _fitted_tree(self, template, tree_arrays):
        tree = DecisionTreeRegressor(**template.get_params())
        tree.tree_ = tree_arrays
        tree.n_features_in_ = self.n_features_in_
        tree.n_outputs_ = 1
        tree.max_features_ = self.max_features_
        return tree

    # -- prediction ------------------------------------------------------------------
    def _validate_X_predict(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float32, ensure_all_finite="allow-nan",
                          reset=False)
        if np.isinf(X).any():
            raise ValueError("Input X contains infinity or a value too large for "
                             "dtype('float32').")
        return X

    def _staged_raw(self, X):
        X = self._validate_X_predict(X)
        raw = np.tile(self._base_score, (X.shape[0], 1))
        for stage in self.estimators_:
            for k, tree in enumerate(stage):
                raw[:, k] += self.learning_rate * tree.tree_.predict(X)[:, 0, 0]
            yield raw.copy()

    def _raw_predict(self, X):
        *_, raw = self._staged_raw(X)
        return raw

    def apply(self, X):
        """Leaf index of every sample in every tree, shape (n_samples, n_stages, n_columns)."""
        X = self._validate_X_predict(X)
        return np.stack([[tree.tree_.apply(X) for tree in stage] for stage in self.estimators_],
                        axis=-1).transpose(2, 0, 1)

    @property
    def feature_importances_(self):
        """MDI by scikit-learn's boosting formula (mean of unnormalised per-tree vectors
        over trees with more than one node, renormalised)."""
        check_is_fitted(self)
        vectors = [tree.tree_.compute_feature_importances(normalize=False)
                   for stage in self.estimators_ for tree in stage
                   if tree.tree_.node_count > 1]
        if not vectors:
            return np.zeros(self.n_features_in_)
        mean = np.mean(vectors, axis=0, dtype=np.float64)
        return mean / np.sum(mean)

    def to_ensemble(self) -> TreeEnsemble:
        """The model in sapwood's format (``combine="sum"``, weights = learning rate)."""
        check_is_fitted(self)
        n_stages, n_columns = self.estimators_.shape
        names = getattr(self, "feature_names_in_", None)
        return TreeEnsemble(
            trees=tuple(tree.tree_ for tree in self.estimators_.ravel()),
            task="classification" if isinstance(self, ClassifierMixin) else "regression",
            n_features=self.n_features_in_, combine="sum",
            tree_weights=np.full(n_stages * n_columns, self.learning_rate),
            tree_output=np.tile(np.arange(n_columns), n_stages),
            base_score=self._base_score, link=self._link,
            classes=(self.classes_,) if isinstance(self, ClassifierMixin) else None,
            feature_names=None if names is None else tuple(names))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags


class GradientBoostingRegressor(RegressorMixin, BaseGradientBoosting):
    """Gradient boosting for regression with squared error (scikit-learn 1.9's numbers).

    Parameters
    ----------
    loss : {"squared_error"}, default="squared_error"
    learning_rate : float, default=0.1
    n_estimators : int, default=100
    max_depth : int or None, default=3
    min_samples_split, min_samples_leaf, min_weight_fraction_leaf, min_impurity_decrease, \
max_features, max_leaf_nodes, ccp_alpha
        Tree options, as :class:`sapwood.DecisionTreeRegressor`.
    random_state : int, RandomState instance or None, default=None
        Every tree's splitter seed is drawn from it in order (ties between equally good
        splits, and ``max_features`` draws, depend on it).
    verbose : int, default=0

    Attributes
    ----------
    estimators_ : ndarray of DecisionTreeRegressor, shape (n_estimators, 1)
    train_score_ : ndarray of shape (n_estimators,)
        Half squared error times 2 (the mean squared error) after each stage.
    feature_importances_ : ndarray of shape (n_features,)
    """

    _parameter_constraints: dict = {
        **BaseGradientBoosting._parameter_constraints,
        "loss": [StrOptions({"squared_error"})],
    }
    _link = "identity"

    def __init__(self, *, loss="squared_error", learning_rate=0.1, n_estimators=100,
                 min_samples_split=2, min_samples_leaf=1, min_weight_fraction_leaf=0.0,
                 max_depth=3, min_impurity_decrease=0.0, random_state=None,
                 max_features=None, verbose=0, max_leaf_nodes=None, ccp_alpha=0.0):
        self.loss = loss
        self.learning_rate = learning_rate
        self.n_estimators = n_estimators
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.max_depth = max_depth
        self.min_impurity_decrease = min_impurity_decrease
        self.random_state = random_state
        self.max_features = max_features
        self.verbose = verbose
        self.max_leaf_nodes = max_leaf_nodes
        self.ccp_alpha = ccp_alpha

    def _encode_targets(self, y, sample_weight):
        return np.asarray(y, dtype=np.float64).reshape(-1, 1)

    def _initial_raw(self, targets, sample_weight):
        return np.array([np.average(targets[:, 0], weights=sample_weight)])

    def _negative_gradient(self, targets, raw):
        return targets - raw

    def _loss(self, targets, raw, sample_weight):
        return float(np.average((targets[:, 0] - raw[:, 0]) ** 2, weights=sample_weight))

    def predict(self, X):
        """Initial mean plus the shrunken sum of the trees."""
        return self._raw_predict(X)[:, 0]

    def staged_predict(self, X):
        """Predictions after each stage."""
        for raw in self._staged_raw(X):
            yield raw[:, 0]


class GradientBoostingClassifier(ClassifierMixin, BaseGradientBoosting):
    """Gradient boosting for classification with log loss (scikit-learn 1.9's numbers).

    One tree per stage for two classes, one per class and stage for more (multinomial).

    Parameters
    ----------
    loss : {"log_loss"}, default="log_loss"
    learning_rate, n_estimators, max_depth, min_samples_split, min_samples_leaf, \
min_weight_fraction_leaf, min_impurity_decrease, max_features, max_leaf_nodes, ccp_alpha, \
random_state, verbose
        As :class:`GradientBoostingRegressor`.

    Attributes
    ----------
    estimators_ : ndarray of DecisionTreeRegressor, shape (n_estimators, n_columns)
    classes_, n_classes_ : class labels and their number
    train_score_ : ndarray of shape (n_estimators,)
        Log loss (binary: twice the half binomial loss) after each stage.
    feature_importances_ : ndarray of shape (n_features,)
    """

    _parameter_constraints: dict = {
        **BaseGradientBoosting._parameter_constraints,
        "loss": [StrOptions({"log_loss"})],
    }

    def __init__(self, *, loss="log_loss", learning_rate=0.1, n_estimators=100,
                 min_samples_split=2, min_samples_leaf=1, min_weight_fraction_leaf=0.0,
                 max_depth=3, min_impurity_decrease=0.0, random_state=None,
                 max_features=None, verbose=0, max_leaf_nodes=None, ccp_alpha=0.0):
        self.loss = loss
        self.learning_rate = learning_rate
        self.n_estimators = n_estimators
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.max_depth = max_depth
        self.min_impurity_decrease = min_impurity_decrease
        self.random_state = random_state
        self.max_features = max_features
        self.verbose = verbose
        self.max_leaf_nodes = max_leaf_nodes
        self.ccp_alpha = ccp_alpha

    @property
    def _link(self):
        return "logistic" if self.n_classes_ == 2 else "softmax"

    def _encode_targets(self, y, sample_weight):
        check_classification_targets(y)
        self.classes_, encoded = np.unique(y, return_inverse=True)
        self.n_classes_ = self.classes_.shape[0]
        if np.count_nonzero(np.bincount(encoded, weights=sample_weight)) < 2:
            raise ValueError("y contains fewer than 2 classes with positive weight; "
                             "classification needs at least 2.")
        if self.n_classes_ == 2:
            return encoded.astype(np.float64).reshape(-1, 1)
        return (encoded[:, None] == np.arange(self.n_classes_)).astype(np.float64)

    def _initial_raw(self, targets, sample_weight):
        if self.n_classes_ == 2:
            p = np.clip(np.average(targets[:, 0], weights=sample_weight), _EPS, 1 - _EPS)
            return np.array([np.log(p / (1 - p))])
        prior = np.clip(np.average(targets, axis=0, weights=sample_weight), _EPS, 1 - _EPS)
        log_prior = np.log(prior)
        return log_prior - log_prior.mean()

    def _negative_gradient(self, targets, raw):
        if self.n_classes_ == 2:
            return -_expit_gradient(raw, targets)
        return targets - _softmax(raw)

    def _newton_leaves(self, tree, leaves, target, residual, sample_weight):
        factor = 1.0 if self.n_classes_ == 2 else (self.n_classes_ - 1) / self.n_classes_
        for leaf in np.flatnonzero(tree.children_left == -1):
            rows = np.flatnonzero(leaves == leaf)
            g = residual[rows]
            prob = target[rows] - g
            w = sample_weight[rows]
            numerator = np.average(g, weights=w) * factor
            denominator = np.average(prob * (1 - prob), weights=w)
            tree.value[leaf, 0, 0] = (0.0 if abs(denominator) < 1e-150
                                      else float(numerator) / float(denominator))

    def _loss(self, targets, raw, sample_weight):
        if self.n_classes_ == 2:
            # log(1 + exp(raw)) - y raw, twice the half binomial loss
            per_row = np.logaddexp(0.0, raw[:, 0]) - targets[:, 0] * raw[:, 0]
            return 2.0 * float(np.average(per_row, weights=sample_weight))
        log_proba = raw - np.logaddexp.reduce(raw, axis=1, keepdims=True)
        return float(np.average(-(targets * log_proba).sum(axis=1), weights=sample_weight))

    def decision_function(self, X):
        """Raw scores: log-odds (n_samples,) for two classes, (n_samples, K) otherwise."""
        raw = self._raw_predict(X)
        return raw[:, 0] if self.n_classes_ == 2 else raw

    def _proba(self, raw):
        if self.n_classes_ == 2:
            p = 1.0 / (1.0 + np.exp(-raw[:, 0]))
            return np.column_stack([1.0 - p, p])
        return _softmax(raw)

    def predict_proba(self, X):
        """Class probabilities (logistic / softmax of the raw scores)."""
        return self._proba(self._raw_predict(X))

    def predict_log_proba(self, X):
        return np.log(self.predict_proba(X))

    def predict(self, X):
        """The most probable class."""
        return self.classes_.take(np.argmax(self.predict_proba(X), axis=1))

    def staged_predict_proba(self, X):
        for raw in self._staged_raw(X):
            yield self._proba(raw)

    def staged_predict(self, X):
        for raw in self._staged_raw(X):
            yield self.classes_.take(np.argmax(self._proba(raw), axis=1))
