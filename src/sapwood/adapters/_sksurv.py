"""scikit-survival's tree models as survival :class:`TreeEnsemble` objects.

``SurvivalTree``, ``RandomSurvivalForest`` and ``ExtraSurvivalTrees`` keep scikit-learn
``Tree`` objects whose leaves hold, at each of the training set's distinct times
(``unique_times_``), the Nelson-Aalen cumulative hazard and the Kaplan-Meier survival
probability of the leaf's training rows: they become a ``combine="mean"`` survival
ensemble with those vector leaves (fitted with ``low_memory=True`` they keep only each
leaf's risk score, which is all that can be read then). A
``GradientBoostingSurvivalAnalysis`` with tree base learners sums regression trees
into a log hazard ratio: a ``combine="sum"`` survival ensemble, with the Breslow
baseline cumulative hazard it keeps for its functions of time (Cox loss only).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .._format import ModelKind, TreeEnsemble
from ._sklearn import _bootstrap, _copy_tree

__all__ = ["from_sksurv"]

_FORESTS = ("RandomSurvivalForest", "ExtraSurvivalTrees")
_SUPPORTED = "SurvivalTree, RandomSurvivalForest, ExtraSurvivalTrees and " \
             "GradientBoostingSurvivalAnalysis"


def from_sksurv(model, iteration_range=None) -> TreeEnsemble:
    """Convert a fitted scikit-survival tree model (see :func:`sapwood.from_model`)."""
    name = type(model).__name__
    converter = _CONVERTERS.get(name)
    if converter is None:
        what = " (its base learners are linear models, not trees)" if \
            name == "ComponentwiseGradientBoostingSurvivalAnalysis" else ""
        raise TypeError(f"sapwood cannot convert the scikit-survival model {name}{what}: "
                        f"supported are {_SUPPORTED}")
    if not hasattr(model, "n_features_in_"):
        raise ValueError(f"{name} is not fitted; call fit() first")
    if iteration_range is not None and name != "GradientBoostingSurvivalAnalysis":
        raise ValueError(f"iteration_range applies to boosting models, not to {name}")
    return converter(model, iteration_range)


def _from_tree(model, iteration_range):
    return _forest(model, [model], "tree", bootstrap=None, bagged=False)


def _from_forest(model, iteration_range):
    return _forest(model, model.estimators_, "forest", bootstrap=_bootstrap(model),
                   bagged=bool(model.bootstrap))


def _forest(model, estimators, family, bootstrap, bagged):
    n_features = model.n_features_in_
    # A survival tree records no node impurity (scikit-survival stores inf): zeros,
    # with the kind's node_impurity False, so that no measure reads them.
    trees = [replace(_copy_tree(e.tree_, n_features), impurity=np.zeros(e.tree_.node_count))
             for e in estimators]
    survival = {}
    if not model.low_memory:
        survival = {"times": model.unique_times_, "is_event_time": model.is_event_time_}
    return TreeEnsemble(trees=tuple(trees), task="survival", n_features=n_features,
                        combine="mean", feature_names=_names(model), input_dtype=np.float32,
                        kind=_kind(model, family, "logrank", bagged), bootstrap=bootstrap,
                        **survival)


def _from_gradient_boosting(model, iteration_range):
    from ._sklearn import _stages

    n_features = model.n_features_in_
    if model.estimators_.shape[1] != 1:
        raise ValueError(f"{type(model).__name__} has {model.estimators_.shape[1]} trees per "
                         "stage; a survival model has one")
    init = model.init_
    if not (init == "zero" or type(init).__name__ == "DummyRegressor"):
        raise ValueError(f"{type(model).__name__} was fitted with init={type(init).__name__}, "
                         "a model that is not a tree; sapwood can only represent a constant "
                         "initial prediction (the default init or init='zero')")
    base = model._raw_predict_init(np.zeros((1, n_features), dtype=np.float32))[0]
    stages = _stages(model.estimators_.shape[0], iteration_range)
    # Dropout rescales each stage (scikit-survival's _scale); without it every stage
    # counts with the learning rate.
    scale = getattr(model, "_scale", np.ones(model.estimators_.shape[0]))
    trees = [_copy_tree(model.estimators_[stage, 0].tree_, n_features) for stage in stages]
    weights = np.array([model.learning_rate * scale[stage] for stage in stages])
    survival = {}
    link = "identity"
    if model.loss == "coxph":
        baseline = model._baseline_model
        if baseline is not None and iteration_range is None:
            survival = {"times": baseline.unique_times_,
                        "baseline_cumulative_hazard": baseline.cum_baseline_hazard_.y}
    else:
        # Losses that model the time itself: scikit-survival predicts exp(raw), the time.
        link = "exp"
    return TreeEnsemble(trees=tuple(trees), task="survival", n_features=n_features,
                        combine="sum", tree_weights=weights, base_score=base, link=link,
                        feature_names=_names(model), input_dtype=np.float32,
                        kind=_kind(model, "boosting", model.loss, False), **survival)


def _names(model):
    names = getattr(model, "feature_names_in_", None)
    return None if names is None else tuple(str(n) for n in names)


def _kind(model, family, objective, bagged):
    import sksurv

    # MDI reads node impurities; scikit-survival's survival trees record none (inf).
    impurity = family == "boosting"
    return ModelKind(library="sksurv", model=type(model).__name__, objective=str(objective),
                     library_version=sksurv.__version__,
                     family=family, bagged=bagged, node_impurity=impurity)


_CONVERTERS = {"SurvivalTree": _from_tree, "RandomSurvivalForest": _from_forest,
               "ExtraSurvivalTrees": _from_forest,
               "GradientBoostingSurvivalAnalysis": _from_gradient_boosting}
