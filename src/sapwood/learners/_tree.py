"""CART decision trees with the scikit-learn estimator API, grown by sapwood's kernels.

For the same data, parameters and ``random_state`` they grow the same tree as
scikit-learn 1.9's ``DecisionTreeClassifier`` / ``DecisionTreeRegressor`` (node for
node, bit for bit), expose it as ``tree_`` in sapwood's :class:`TreeArrays`, and read
as any other model does through :meth:`to_ensemble`.
"""

from __future__ import annotations

import numbers
from math import ceil

import numpy as np
from sklearn.base import (
    BaseEstimator,
    ClassifierMixin,
    MultiOutputMixin,
    RegressorMixin,
)
from sklearn.utils import Bunch, check_random_state, compute_sample_weight
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (
    check_consistent_length,
    check_is_fitted,
    validate_data,
)

from .._format import ModelKind, TreeEnsemble
from .._kernels._prune import pruning_path
from .._kernels._random import RAND_R_MAX
from .._sklearn_compat import (
    Interval,
    RealNotInt,
    StrOptions,
    _check_sample_weight,
    _fit_context,
)
from .._version import __version__
from ._grow import INT32_MAX, column_facts, grow_tree, release_free_memory
from ._inputs import check_rows, reject_infinity, validate_predict_input

__all__ = ["DecisionTreeClassifier", "DecisionTreeRegressor"]


class BaseDecisionTree(MultiOutputMixin, BaseEstimator):
    """Options, fitting and traversal shared by both trees."""

    _parameter_constraints: dict = {
        "splitter": [StrOptions({"best", "random"})],
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
        "min_impurity_decrease": [Interval(numbers.Real, 0.0, None, closed="left")],
        "ccp_alpha": [Interval(numbers.Real, 0.0, None, closed="left")],
    }

    def __init__(self, *, criterion, splitter, max_depth, min_samples_split, min_samples_leaf,
                 min_weight_fraction_leaf, max_features, max_leaf_nodes, random_state,
                 min_impurity_decrease, class_weight=None, ccp_alpha=0.0):
        self.criterion = criterion
        self.splitter = splitter
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.max_features = max_features
        self.max_leaf_nodes = max_leaf_nodes
        self.random_state = random_state
        self.min_impurity_decrease = min_impurity_decrease
        self.class_weight = class_weight
        self.ccp_alpha = ccp_alpha

    # -- fitting ---------------------------------------------------------------------
    def _validate_training_data(self, X, y, sample_weight):
        check_rows(X, y, sample_weight)
        X, y = validate_data(self, X, y, validate_separately=(
            {"dtype": np.float32, "order": "F", "ensure_all_finite": "allow-nan"},
            {"ensure_2d": False, "dtype": None}))
        reject_infinity(X)
        y = np.atleast_1d(y)
        check_consistent_length(X, y)
        if y.ndim == 1:
            y = y.reshape(-1, 1)
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64)
        return X, y, sample_weight

    def _settle_options(self, n_samples, n_features, total_weight):
        """Turn fractions, names and None into the integers the kernels take."""
        if isinstance(self.min_samples_leaf, numbers.Integral):
            min_samples_leaf = self.min_samples_leaf
        else:
            min_samples_leaf = ceil(self.min_samples_leaf * n_samples)
        if isinstance(self.min_samples_split, numbers.Integral):
            min_samples_split = self.min_samples_split
        else:
            min_samples_split = max(2, ceil(self.min_samples_split * n_samples))
        min_samples_split = max(min_samples_split, 2 * min_samples_leaf)
        if self.max_features == "sqrt":
            max_features = max(1, int(np.sqrt(n_features)))
        elif self.max_features == "log2":
            max_features = max(1, int(np.log2(n_features)))
        elif self.max_features is None:
            max_features = n_features
        elif isinstance(self.max_features, numbers.Integral):
            max_features = self.max_features
        else:
            max_features = max(1, int(self.max_features * n_features))
        return {
            "max_depth": INT32_MAX if self.max_depth is None else self.max_depth,
            "min_samples_leaf": min_samples_leaf,
            "min_samples_split": min_samples_split,
            "max_features": max_features,
            "min_weight_leaf": self.min_weight_fraction_leaf * total_weight,
            "max_leaf_nodes": self.max_leaf_nodes,
            "min_impurity_decrease": self.min_impurity_decrease,
            "ccp_alpha": self.ccp_alpha,
            "splitter": self.splitter,
        }

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Grow the tree from the training set (X, y).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Converted to float32 as scikit-learn does; NaN marks a missing value.
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
        sample_weight : array-like of shape (n_samples,), optional
            Rows with zero weight are ignored.
        """
        random_state = check_random_state(self.random_state)
        X, y, sample_weight = self._validate_training_data(X, y, sample_weight)
        n_samples, n_features = X.shape
        self.n_outputs_ = y.shape[1]
        y_encoded, n_classes, class_weights = self._encode_targets(y)
        if class_weights is not None:
            sample_weight = class_weights if sample_weight is None else (
                sample_weight * class_weights)
        total_weight = n_samples if sample_weight is None else float(np.sum(sample_weight))
        options = self._settle_options(n_samples, n_features, total_weight)
        self.max_features_ = options["max_features"]
        if sample_weight is None:
            sample_weight = np.ones(n_samples)
        has_missing, tied_pairs = column_facts(X)
        self.tree_ = grow_tree(
            X, y_encoded, sample_weight, criterion=self._criterion_name(y), n_classes=n_classes,
            seed=random_state.randint(0, RAND_R_MAX), has_missing=has_missing,
            tied_pairs=tied_pairs, **options)
        release_free_memory()
        return self

    def _criterion_name(self, y):
        return self.criterion

    # -- traversal -------------------------------------------------------------------
    _validate_X_predict = validate_predict_input

    def apply(self, X):
        """Index of the leaf each sample ends up in."""
        X = self._validate_X_predict(X)
        return self.tree_.apply(X)

    def decision_path(self, X):
        """Sparse indicator (n_samples, n_nodes) of the nodes each sample passes."""
        X = self._validate_X_predict(X)
        return self.tree_.decision_path(X)

    def get_depth(self):
        check_is_fitted(self)
        return self.tree_.max_depth

    def get_n_leaves(self):
        check_is_fitted(self)
        return self.tree_.n_leaves

    @property
    def feature_importances_(self):
        """Mean decrease in impurity, normalised to sum 1 (see :func:`sapwood.importance.mdi`
        for the per-node trace behind it)."""
        check_is_fitted(self)
        return self.tree_.compute_feature_importances()

    def cost_complexity_pruning_path(self, X, y, sample_weight=None):
        """Effective alphas and total leaf impurities of minimal cost-complexity pruning.

        Returns a Bunch with ``ccp_alphas`` and ``impurities``, as scikit-learn does.
        """
        full = self.__class__(**{**self.get_params(), "ccp_alpha": 0.0})
        full.fit(X, y, sample_weight=sample_weight)
        tree = full.tree_
        alphas, impurities = pruning_path(tree.children_left, tree.children_right,
                                          tree.weighted_n_node_samples, tree.impurity)
        return Bunch(ccp_alphas=alphas, impurities=impurities)

    def to_ensemble(self) -> TreeEnsemble:
        """This tree in sapwood's format, for importance measures and export."""
        check_is_fitted(self)
        is_classifier = hasattr(self, "classes_")
        classes = None
        if is_classifier:
            classes = tuple(self.classes_) if self.n_outputs_ > 1 else (self.classes_,)
        names = getattr(self, "feature_names_in_", None)
        return TreeEnsemble(
            trees=(self.tree_,),
            task="classification" if is_classifier else "regression",
            n_features=self.n_features_in_, combine="mean", classes=classes,
            feature_names=None if names is None else tuple(names),
            kind=ModelKind(library="sapwood", model=type(self).__name__,
                           objective=self.criterion, library_version=__version__,
                           family="tree"))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags


class DecisionTreeClassifier(ClassifierMixin, BaseDecisionTree):
    """A CART classification tree (scikit-learn 1.9's parameters and results).

    Parameters
    ----------
    criterion : {"gini", "entropy", "log_loss"}, default="gini"
    splitter : {"best", "random"}, default="best"
    max_depth : int, default=None
    min_samples_split : int or float, default=2
    min_samples_leaf : int or float, default=1
    min_weight_fraction_leaf : float, default=0.0
    max_features : int, float, {"sqrt", "log2"} or None, default=None
    random_state : int, RandomState instance or None, default=None
        Features are visited in a random order even when ``max_features`` is None, so
        ties between equally good splits depend on it, exactly as in scikit-learn.
    max_leaf_nodes : int, default=None
        Grow best-first to at most this many leaves.
    min_impurity_decrease : float, default=0.0
    class_weight : dict, list of dict or "balanced", default=None
    ccp_alpha : float, default=0.0
        Minimal cost-complexity pruning strength.

    Attributes
    ----------
    tree_ : sapwood.TreeArrays
    classes_, n_classes_, n_outputs_, n_features_in_, feature_names_in_, max_features_
    feature_importances_ : ndarray of shape (n_features,)
    """

    _parameter_constraints: dict = {
        **BaseDecisionTree._parameter_constraints,
        "criterion": [StrOptions({"gini", "entropy", "log_loss"})],
        "class_weight": [dict, list, StrOptions({"balanced"}), None],
    }

    def __init__(self, *, criterion="gini", splitter="best", max_depth=None,
                 min_samples_split=2, min_samples_leaf=1, min_weight_fraction_leaf=0.0,
                 max_features=None, random_state=None, max_leaf_nodes=None,
                 min_impurity_decrease=0.0, class_weight=None, ccp_alpha=0.0):
        super().__init__(
            criterion=criterion, splitter=splitter, max_depth=max_depth,
            min_samples_split=min_samples_split, min_samples_leaf=min_samples_leaf,
            min_weight_fraction_leaf=min_weight_fraction_leaf, max_features=max_features,
            max_leaf_nodes=max_leaf_nodes, class_weight=class_weight,
            random_state=random_state, min_impurity_decrease=min_impurity_decrease,
            ccp_alpha=ccp_alpha)

    def _encode_targets(self, y):
        check_classification_targets(y)
        classes, n_classes = [], []
        y_encoded = np.zeros(y.shape, dtype=np.float64)
        for k in range(y.shape[1]):
            classes_k, y_encoded[:, k] = np.unique(y[:, k], return_inverse=True)
            classes.append(classes_k)
            n_classes.append(classes_k.shape[0])
        class_weights = None
        if self.class_weight is not None:
            class_weights = compute_sample_weight(self.class_weight, y)
        if self.n_outputs_ == 1:
            self.classes_ = classes[0]
            self.n_classes_ = n_classes[0]
        else:
            self.classes_ = classes
            self.n_classes_ = np.array(n_classes, dtype=np.intp)
        return y_encoded, np.array(n_classes, dtype=np.intp), class_weights

    def predict_proba(self, X):
        """Class probabilities: the weighted class fractions of the leaf reached."""
        X = self._validate_X_predict(X)
        proba = self.tree_.predict(X)
        if self.n_outputs_ == 1:
            return proba[:, 0, : self.n_classes_]
        return [proba[:, k, : self.n_classes_[k]] for k in range(self.n_outputs_)]

    def predict_log_proba(self, X):
        proba = self.predict_proba(X)
        if self.n_outputs_ == 1:
            return np.log(proba)
        return [np.log(p) for p in proba]

    def predict(self, X):
        """The most probable class (first in ``classes_`` order on ties)."""
        X = self._validate_X_predict(X)
        proba = self.tree_.predict(X)
        if self.n_outputs_ == 1:
            return self.classes_.take(np.argmax(proba[:, 0, : self.n_classes_], axis=1))
        columns = [self.classes_[k].take(np.argmax(proba[:, k, : self.n_classes_[k]], axis=1))
                   for k in range(self.n_outputs_)]
        return np.column_stack(columns)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_label = True
        return tags


class DecisionTreeRegressor(RegressorMixin, BaseDecisionTree):
    """A CART regression tree (scikit-learn 1.9's parameters and results).

    Parameters
    ----------
    criterion : {"squared_error", "friedman_mse", "absolute_error", "poisson"}, \
default="squared_error"
        ``friedman_mse`` grows the same tree as ``squared_error`` (scikit-learn 1.9 maps
        one to the other for single trees).
    splitter, max_depth, min_samples_split, min_samples_leaf, min_weight_fraction_leaf, \
max_features, random_state, max_leaf_nodes, min_impurity_decrease, ccp_alpha
        As :class:`DecisionTreeClassifier`.

    Attributes
    ----------
    tree_ : sapwood.TreeArrays
    n_outputs_, n_features_in_, feature_names_in_, max_features_
    feature_importances_ : ndarray of shape (n_features,)
    """

    _parameter_constraints: dict = {
        **BaseDecisionTree._parameter_constraints,
        "criterion": [StrOptions({"squared_error", "friedman_mse", "absolute_error",
                                  "poisson"})],
    }

    def __init__(self, *, criterion="squared_error", splitter="best", max_depth=None,
                 min_samples_split=2, min_samples_leaf=1, min_weight_fraction_leaf=0.0,
                 max_features=None, random_state=None, max_leaf_nodes=None,
                 min_impurity_decrease=0.0, ccp_alpha=0.0):
        super().__init__(
            criterion=criterion, splitter=splitter, max_depth=max_depth,
            min_samples_split=min_samples_split, min_samples_leaf=min_samples_leaf,
            min_weight_fraction_leaf=min_weight_fraction_leaf, max_features=max_features,
            max_leaf_nodes=max_leaf_nodes, random_state=random_state,
            min_impurity_decrease=min_impurity_decrease, ccp_alpha=ccp_alpha)

    def _encode_targets(self, y):
        y = np.asarray(y, dtype=np.float64)
        if self.criterion == "poisson":
            if np.any(y < 0):
                raise ValueError("Some value(s) of y are negative which is not allowed for "
                                 "Poisson regression.")
            if np.sum(y) <= 0:
                raise ValueError("Sum of y is not positive which is necessary for Poisson "
                                 "regression.")
        return y, np.ones(self.n_outputs_, dtype=np.intp), None

    def _criterion_name(self, y):
        return "squared_error" if self.criterion == "friedman_mse" else self.criterion

    def predict(self, X):
        """Mean (or median, for absolute_error) target of the leaf reached."""
        X = self._validate_X_predict(X)
        values = self.tree_.predict(X)[:, :, 0]
        return values[:, 0] if self.n_outputs_ == 1 else values
