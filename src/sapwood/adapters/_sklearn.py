"""scikit-learn tree models into the tree format.

Single trees and forests copy ``tree_`` field by field (the format uses its names), so
``feature_importances_`` is reproduced by :func:`sapwood.importance.mdi`. scikit-learn
casts X to float32 before routing and sends a sample left when ``x <= threshold``.
Gradient boosting adds ``learning_rate`` times each stage's trees (one per class) to a
constant initial margin. Histogram gradient boosting routes float64 X on each node's
``num_threshold``; its leaf values already include the learning rate.

An IsolationForest reads as a forest (``combine="mean"``, a regression) whose raw
output is the mean path length ``E[h(x)]``: a tree's leaf holds its depth plus
``c(n)`` (:func:`average_path_length` of the leaf's n training rows), the quantity the
shap package explains. scikit-learn's scores follow from it:
``score_samples(X) = -2 ** (-E[h(x)] / c(max_samples_))`` and
``decision_function(X) = score_samples(X) - offset_``; ``predict`` of the converted
model is ``E[h(x)]`` itself, not the -1 / 1 labels. Its trees are grown on a random
target, so they carry no impurities or gains: no MDI, no native importance.

A bare ``tree_`` (scikit-learn's ``Tree`` object, without its estimator) reads as a
single tree, its ``value`` as scikit-learn stores it: a classifier's tree (more than one
class for some output, ``n_classes``) as a classification whose raw output is the
stored class fractions (weighted counts before scikit-learn 1.4) and whose classes are
the positions 0, 1, ... in the estimator's ``classes_`` (the tree does not record the
labels), any other tree as a regression of its leaf values. The one tree a ``Tree``
cannot tell apart is a classifier's fitted on a single class, which reads as the
regression of its constant fraction 1.0, the estimator's ``predict_proba``.
"""

from __future__ import annotations

import numbers

import numpy as np
import sklearn
from sklearn.base import is_classifier
from sklearn.dummy import DummyClassifier, DummyRegressor
from sklearn.ensemble import (
    BaseEnsemble,
    ExtraTreesClassifier,
    ExtraTreesRegressor,
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    IsolationForest,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.tree import (
    BaseDecisionTree,
    DecisionTreeClassifier,
    DecisionTreeRegressor,
    ExtraTreeClassifier,
    ExtraTreeRegressor,
)

from .._bootstrap import SEED_LIMIT, Bootstrap
from .._format import LEAF, OP_CAT, OP_LE, FormatError, ModelKind, TreeArrays, TreeEnsemble
from .._sklearn_compat import SklearnTree, hist_gradient_boosting_categories
from ._build import build_tree, category_sets, codes_to_words

__all__ = ["from_sklearn", "forest_estimators", "own_trees"]

_FORESTS = (RandomForestClassifier, RandomForestRegressor, ExtraTreesClassifier,
            ExtraTreesRegressor)
_TREES = (DecisionTreeClassifier, DecisionTreeRegressor, ExtraTreeClassifier,
          ExtraTreeRegressor)
_GRADIENT_BOOSTING = (GradientBoostingClassifier, GradientBoostingRegressor)
_HIST_GRADIENT_BOOSTING = (HistGradientBoostingClassifier, HistGradientBoostingRegressor)


def from_sklearn(model, iteration_range=None) -> TreeEnsemble:
    """Convert a fitted scikit-learn tree model (see :func:`sapwood.from_model`)."""
    if isinstance(model, SklearnTree):
        if iteration_range is not None:
            raise ValueError("iteration_range applies to boosting models, not to a Tree")
        return _from_tree_object(model)
    if not hasattr(model, "n_features_in_"):
        raise ValueError(f"{type(model).__name__} is not fitted; call fit() first")
    if iteration_range is not None and not isinstance(
            model, _GRADIENT_BOOSTING + _HIST_GRADIENT_BOOSTING):
        raise ValueError(f"iteration_range applies to boosting models, not to "
                         f"{type(model).__name__}")
    if isinstance(model, BaseDecisionTree):
        return _ensemble(model, [_copy_tree(model.tree_, model.n_features_in_)], "mean",
                         kind=_kind(model, "tree", model.criterion))
    if isinstance(model, _FORESTS):
        trees = [_copy_tree(e.tree_, model.n_features_in_) for e in model.estimators_]
        return _ensemble(model, trees, "mean",
                         kind=_kind(model, "forest", model.criterion,
                                    bagged=bool(model.bootstrap)),
                         bootstrap=_bootstrap(model))
    if isinstance(model, _GRADIENT_BOOSTING):
        return _from_gradient_boosting(model, iteration_range)
    if isinstance(model, _HIST_GRADIENT_BOOSTING):
        return _from_hist_gradient_boosting(model, iteration_range)
    if isinstance(model, IsolationForest):
        return _from_isolation_forest(model)
    kind = "ensemble" if isinstance(model, BaseEnsemble) else "model"
    raise TypeError(f"sapwood cannot convert the scikit-learn {kind} {type(model).__name__}: "
                    "supported are DecisionTree*, ExtraTree*, RandomForest*, ExtraTrees*, "
                    "GradientBoosting*, HistGradientBoosting*, IsolationForest and an "
                    "estimator's tree_")


def _from_tree_object(tree):
    """A bare scikit-learn ``Tree`` as a one-tree model (module docstring)."""
    if tree.node_count == 0:
        raise ValueError("the scikit-learn Tree has no nodes: it was never built (pass a "
                         "fitted estimator's tree_)")
    n_classes = np.asarray(tree.n_classes, dtype=np.int64).reshape(-1)
    classifier = bool((n_classes > 1).any())
    classes = None
    if classifier:
        groups = [tuple(range(int(k))) for k in n_classes]
        classes = groups[0] if len(groups) == 1 else tuple(groups)
    return TreeEnsemble(
        trees=(_copy_tree(tree, tree.n_features),),
        task="classification" if classifier else "regression", n_features=tree.n_features,
        combine="mean", classes=classes, input_dtype=np.float32,
        kind=ModelKind(library="sklearn", model="Tree", library_version=sklearn.__version__,
                       family="tree"))


def _copy_tree(tree, n_features) -> TreeArrays:
    return TreeArrays(
        children_left=tree.children_left, children_right=tree.children_right,
        feature=tree.feature, threshold=tree.threshold, impurity=tree.impurity,
        n_node_samples=tree.n_node_samples,
        weighted_n_node_samples=tree.weighted_n_node_samples, value=tree.value,
        missing_go_to_left=tree.missing_go_to_left,
        operator=np.full(tree.node_count, OP_LE, dtype=np.uint8), n_features=n_features)


def _ensemble(model, trees, combine, **fields) -> TreeEnsemble:
    classifier = is_classifier(model)
    classes = None
    if classifier:
        classes = model.classes_
        classes = (tuple(tuple(c.tolist()) for c in classes) if isinstance(classes, list)
                   else tuple(classes.tolist()))
    names = getattr(model, "feature_names_in_", None)
    fields.setdefault("input_dtype", np.float32)
    return TreeEnsemble(
        trees=tuple(trees), task="classification" if classifier else "regression",
        n_features=model.n_features_in_, combine=combine, classes=classes,
        feature_names=None if names is None else tuple(str(n) for n in names), **fields)


def _kind(model, family, objective, bagged=False, node_impurity=True):
    return ModelKind(library="sklearn", model=type(model).__name__, objective=str(objective),
                     library_version=sklearn.__version__, family=family, bagged=bagged,
                     node_impurity=node_impurity)


# private scikit-learn: a fitted forest keeps what regenerates its bootstrap samples only
# in private attributes (no public API gives the in-bag rows of a tree).
_BAGGING = ("_n_samples", "_n_samples_bootstrap", "_sample_weight")


def _bootstrap(forest):
    """The forest's bootstrap draws, regenerated as scikit-learn draws them (tree t:
    ``RandomState(estimators_[t].random_state)``, see :mod:`sapwood._bootstrap`), or
    None when it was not bagged or does not record them (scikit-learn < 1.4)."""
    if not forest.bootstrap or not all(hasattr(forest, name) for name in _BAGGING):
        return None
    seeds = [e.random_state for e in forest.estimators_]
    if not all(isinstance(s, numbers.Integral) and 0 <= s < SEED_LIMIT for s in seeds):
        return None
    return Bootstrap(seeds=np.array(seeds, dtype=np.int64), n_samples=forest._n_samples,
                     n_draws=forest._n_samples_bootstrap,
                     sample_weight=forest._sample_weight)


def forest_estimators(model):
    """The fitted trees (``estimators_``) of a scikit-learn forest, else None."""
    if not isinstance(model, _FORESTS):
        return None
    return list(getattr(model, "estimators_", None) or [])


def own_trees(model):
    """The ``tree_`` of each tree of a scikit-learn tree or forest whose class is
    scikit-learn's own (not a subclass, whose predictions may differ), in order; else
    None."""
    if type(model) in _FORESTS:
        return [e.tree_ for e in model.estimators_]
    if type(model) in _TREES:
        return [model.tree_]
    return None


def _stages(n_stages, iteration_range):
    begin, end = (0, n_stages) if iteration_range is None else iteration_range
    end = n_stages if end in (0, None) else end
    if not 0 <= begin < end <= n_stages:
        raise ValueError(f"iteration_range must satisfy 0 <= begin < end <= {n_stages}; "
                         f"got {iteration_range}")
    return range(begin, end)


def _from_gradient_boosting(model, iteration_range):
    init = model.init_
    if not (init == "zero" or isinstance(init, DummyClassifier | DummyRegressor)):
        raise ValueError(f"{type(model).__name__} was fitted with init={type(init).__name__}, "
                         "a model that is not a tree; sapwood can only represent a constant "
                         "initial prediction (the default init or init='zero')")
    n_features = model.n_features_in_
    # A dummy init predicts a constant, so its raw prediction on any one row is the
    # base score; scikit-learn's own helper applies the loss's link to it.
    base = model._raw_predict_init(np.zeros((1, n_features), dtype=np.float32))[0]
    stages = _stages(model.estimators_.shape[0], iteration_range)
    n_columns = model.estimators_.shape[1]
    trees, outputs = [], []
    for stage in stages:
        for k in range(n_columns):
            trees.append(_copy_tree(model.estimators_[stage, k].tree_, n_features))
            outputs.append(k)
    weight = model.learning_rate
    link = "identity"
    if is_classifier(model):
        link = "softmax" if n_columns > 1 else "logistic"
        if model.loss == "exponential":
            # scikit-learn's exponential loss gives P(y=1) = expit(2 * raw); doubling the
            # margin lets the logistic link reproduce that.
            weight, base = 2.0 * weight, 2.0 * base
    return _ensemble(model, trees, "sum", tree_weights=np.full(len(trees), weight),
                     tree_output=outputs, base_score=base, link=link,
                     kind=_kind(model, "boosting", model.loss))


def _from_hist_gradient_boosting(model, iteration_range):
    n_features = model.n_features_in_
    categorical = _hist_categorical(model, n_features)
    trees, outputs = [], []
    for stage in _stages(len(model._predictors), iteration_range):
        for k, predictor in enumerate(model._predictors[stage]):
            trees.append(_hist_tree(predictor, n_features, categorical))
            outputs.append(k)
    loss = model.loss
    if is_classifier(model):
        link = "softmax" if model.n_trees_per_iteration_ > 1 else "logistic"
    else:
        link = "exp" if loss in ("poisson", "gamma") else "identity"
    return _ensemble(model, trees, "sum", tree_output=outputs,
                     base_score=np.asarray(model._baseline_prediction).ravel(), link=link,
                     input_dtype=np.float64,
                     kind=_kind(model, "boosting", loss, node_impurity=False),
                     categories=None if categorical is None else categorical[2])


def _hist_categorical(model, n_features):
    """None without categorical features, else ``(columns, codes, categories)``: the
    user's column each tree feature reads, per categorical tree feature the code each
    encoder position stands for, and the ensemble's category labels per column.

    Categories that are all non-negative integers are tested as those integers (the
    labels are then 0, 1, ...: a number, or a pandas category of numbers, is its own
    code); other categories (text) by their position in the encoder's sorted list,
    which is their code, with the list as labels."""
    found = hist_gradient_boosting_categories(model)
    if found is None:
        return None
    columns, lists = found
    codes = {}
    categories = [None] * n_features
    for k, values in enumerate(lists):
        numbers = np.array([v if isinstance(v, int | float | np.number)
                            and not isinstance(v, bool) else np.nan for v in values],
                           dtype=np.float64)
        if values and (numbers >= 0).all() and (numbers == np.round(numbers)).all():
            codes[k] = numbers.astype(np.int64)
            categories[columns[k]] = tuple(range(int(numbers.max()) + 1))
        else:
            codes[k] = np.arange(len(values), dtype=np.int64)
            categories[columns[k]] = tuple(values)
    return np.asarray(columns, dtype=np.int64), codes, tuple(categories)


def _hist_tree(predictor, n_features, categorical):
    """One HistGradientBoosting predictor as a tree of the format.

    A categorical node sends NaN and every category the model never saw (unknown
    values reach it as NaN) the missing-value way, the categories of its left bitset
    left and the other known ones right. As a set split (what is in the set goes left,
    everything else, NaN included, right) it keeps its children when missing values go
    right, and otherwise swaps them around the known categories not in the left set."""
    nodes = predictor.nodes
    leaf = nodes["is_leaf"].astype(bool)
    left = np.where(leaf, LEAF, nodes["left"].astype(np.int64))
    right = np.where(leaf, LEAF, nodes["right"].astype(np.int64))
    feature = nodes["feature_idx"].astype(np.int64)
    threshold = nodes["num_threshold"].astype(np.float64)
    missing_left = nodes["missing_go_to_left"].astype(np.uint8)
    operator = np.full(len(nodes), OP_LE, dtype=np.uint8)
    cat_bitsets = None
    at_set = np.flatnonzero(~leaf & nodes["is_categorical"].astype(bool))
    if categorical is not None:
        columns, codes, _ = categorical
        if at_set.size:
            bits = np.asarray(predictor.raw_left_cat_bitsets, dtype=np.uint32)
            words = []
            for node in at_set:
                known = codes[int(feature[node])]
                positions = np.flatnonzero(np.unpackbits(
                    bits[nodes["bitset_idx"][node]].astype("<u4").view(np.uint8),
                    bitorder="little")[:known.shape[0]])
                members = known[positions]
                if missing_left[node]:
                    members = np.setdiff1d(known, members)
                    left[node], right[node] = right[node], left[node]
                    missing_left[node] = 0
                words.append(codes_to_words(members))
            threshold[at_set], cat_bitsets = category_sets(words)
            operator[at_set] = OP_CAT
        feature = np.where(leaf, feature, columns[np.clip(feature, 0, len(columns) - 1)])
    elif at_set.size:
        raise FormatError("a HistGradientBoosting tree has a categorical split but the "
                          "model has no categorical features")
    return build_tree(
        left, right, feature, threshold, missing_left, operator, nodes["value"],
        n_features=n_features, n_node_samples=nodes["count"],
        weighted_n_node_samples=nodes["count"], gain=nodes["gain"], cat_bitsets=cat_bitsets)


def _from_isolation_forest(model):
    """An IsolationForest as a forest whose raw output is the mean path length
    ``E[h(x)]``, the quantity the shap package explains (module docstring)."""
    n_features = model.n_features_in_
    # private scikit-learn: the forest routes each tree on its own feature subset only
    # when ``_max_features`` (the resolved max_features) is below n_features; with all
    # features it routes X as it is, whatever order ``estimators_features_`` lists.
    subset = model._max_features != n_features
    trees = [_isolation_tree(e.tree_, features if subset else None, n_features)
             for e, features in zip(model.estimators_, model.estimators_features_,
                                    strict=True)]
    return _ensemble(model, trees, "mean",
                     kind=_kind(model, "forest", "path_length", bagged=bool(model.bootstrap),
                                node_impurity=False))


def _isolation_tree(tree, features, n_features) -> TreeArrays:
    """One isolation tree with its leaves valued ``depth + c(n)`` (n: the leaf's training
    rows) and every split node the row-weighted mean of its leaves; ``features`` maps
    the tree's feature indices (of its subset) back to X's columns."""
    n_rows = tree.n_node_samples.astype(np.float64)
    leaf = tree.children_left == LEAF
    split = np.flatnonzero(~leaf)
    # scikit-learn numbers children after their parent: one pass down from the root
    # finds every parent's depth ready, one pass back up every child's value.
    depth = np.zeros(tree.node_count)
    for node in split:
        depth[tree.children_left[node]] = depth[tree.children_right[node]] = depth[node] + 1
    value = np.where(leaf, depth + average_path_length(n_rows), 0.0)
    for node in split[::-1]:
        left, right = tree.children_left[node], tree.children_right[node]
        value[node] = (n_rows[left] * value[left] + n_rows[right] * value[right]) / n_rows[node]
    feature = tree.feature
    if features is not None:
        feature = np.where(feature >= 0, np.asarray(features)[np.maximum(feature, 0)], feature)
    # The trees were grown on a random target: their impurities mean nothing about X.
    return TreeArrays(
        children_left=tree.children_left, children_right=tree.children_right,
        feature=feature, threshold=tree.threshold, impurity=np.zeros(tree.node_count),
        n_node_samples=tree.n_node_samples,
        weighted_n_node_samples=tree.weighted_n_node_samples, value=value,
        missing_go_to_left=tree.missing_go_to_left,
        operator=np.full(tree.node_count, OP_LE, dtype=np.uint8), n_features=n_features)


def average_path_length(n_rows) -> np.ndarray:
    """``c(n)``, the average path length of an unsuccessful search in a binary search
    tree of n points, which an isolation tree adds at a leaf of n training rows for the
    depth it did not grow (Liu, Ting & Zhou 2008, "Isolation Forest", ICDM,
    doi:10.1109/ICDM.2008.17): ``2 H(n - 1) - 2 (n - 1) / n`` with
    the harmonic number ``H(i) ~ ln(i) + Euler's constant``; 1 for n = 2, 0 for n <= 1
    (scikit-learn's and the shap package's approximation)."""
    n = np.asarray(n_rows, dtype=np.float64)
    out = np.where(n == 2, 1.0, 0.0)
    big = n > 2
    out[big] = 2.0 * (np.log(n[big] - 1.0) + np.euler_gamma) - 2.0 * (n[big] - 1.0) / n[big]
    return out
