"""Models that hold tree models: what sapwood reads of them, and what is said about it.

A search (``GridSearchCV`` and its relatives) predicts with its ``best_estimator_``;
imbalanced-learn's ``BalancedRandomForestClassifier`` is a scikit-learn forest grown on
under-sampled rows: their trees give their predictions exactly, so every measure reads
them as it reads a bare model. Other forms predict something their trees alone do not:
``CalibratedClassifierCV`` calibrates its base estimators' probabilities,
``TransformedTargetRegressor`` inverts a transform of the target, quantile-forest's
``RandomForestQuantileRegressor`` predicts a quantile of the training targets in the
leaves (its trees' mean is what ``predict(quantiles="mean")`` gives), a vote or a stack
combines several models. For those, the measures that go through predictions
(permutation, drop-column, the score) use the model itself, and the tree measures read
the trees with a note saying which trees and what they predict, or are skipped where
there are none to read.

:func:`unwrap` is the one place that knows these forms: :func:`sapwood.from_model`
reads a form whose trees give its predictions, and :func:`sapwood.explain` asks it which
model each measure reads.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

__all__ = ["Unwrapped", "unwrap"]


@dataclass(frozen=True)
class Unwrapped:
    """What sapwood reads of a model that holds tree models.

    ``estimator``: the model that predicts as the wrapper does, for the measures that go
    through predictions (the wrapper itself, or, where they predict alike, the model
    it holds: a search's ``best_estimator_``). ``trees``: the tree model the tree
    measures read (anything :func:`sapwood.from_model` reads, a
    :class:`~sapwood.TreeEnsemble` included), None where there is no one tree
    ensemble. ``exact``: the trees' predictions are the wrapper's. ``read_by_default``:
    the tree measures read the trees unless told not to (False: only when asked by
    name, as for a quantile forest, whose trees' mean is not its prediction).
    ``note``: what is said about it, in one sentence, for the report's notes.
    ``name``: the model as the report's Model line names it, and ``shown`` the model
    described after it (None: the wrapper is described as any estimator, or by
    ``name`` alone when that is not its class name). ``predicts``: what the
    wrapper predicts that its trees alone do not (for a refusal), "" when exact.
    """

    estimator: object
    trees: object | None
    exact: bool
    note: str
    name: str
    read_by_default: bool = True
    predicts: str = ""
    shown: object | None = None


def unwrap(model, read) -> Unwrapped | None:
    """What sapwood reads of ``model`` when it is a model form that holds tree models
    (module docstring); None for any other model, which the adapters read directly.

    ``read``: :func:`sapwood.from_model`, which reads the models a form holds where
    they are put together (a calibrated classifier's fold models as one forest)."""
    for applies, form in _FORMS:
        if applies(model):
            unwrapped = form(model, read)
            inner = unwrap(unwrapped.trees, read) if unwrapped.trees is not None else None
            if inner is None or unwrapped.trees is model:
                return unwrapped
            # A form inside a form (a search over calibrated forests): read through both.
            return dataclasses.replace(
                inner, estimator=unwrapped.estimator if not unwrapped.exact
                else inner.estimator, exact=unwrapped.exact and inner.exact,
                note=f"{unwrapped.note}; {inner.note}", name=unwrapped.name,
                read_by_default=unwrapped.read_by_default and inner.read_by_default,
                shown=unwrapped.shown)
    return None


def _package(model) -> str:
    return type(model).__module__.partition(".")[0]


def _is_a(model, module: str, class_name: str) -> bool:
    """Whether ``model`` is an instance of ``module.class_name``, importing nothing: an
    instance of that class (or of a subclass) has loaded its module already."""
    import sys

    cls = getattr(sys.modules.get(module), class_name, None)
    return isinstance(cls, type) and isinstance(model, cls)


def _fitted(model, attribute: str):
    """``model.attribute``, or a ValueError saying the model is not fitted."""
    try:
        return getattr(model, attribute)
    except AttributeError:
        raise ValueError(f"{type(model).__name__} is not fitted (it has no {attribute}); "
                         "call fit() first") from None


# ---- the forms ------------------------------------------------------------------------

def _is_search(model) -> bool:
    return _is_a(model, "sklearn.model_selection._search", "BaseSearchCV")


def _search(model, read) -> Unwrapped:
    name = type(model).__name__
    if hasattr(model, "cv_results_") and not hasattr(model, "best_estimator_"):
        raise ValueError(f"{name} was fitted with refit=False, so it has no "
                         "best_estimator_ to explain; fit it with refit=True")
    best = _fitted(model, "best_estimator_")
    params = getattr(model, "best_params_", {})
    chosen = ", ".join(f"{key}={value!r}" for key, value in params.items())
    return Unwrapped(
        estimator=best, trees=best, exact=True, name=f"{name} best_estimator_", shown=best,
        note=f"the model is {name}'s best_estimator_ ({type(best).__name__}"
             + (f", {chosen}" if chosen else "") + "), which it predicts with")


def _is_calibrated(model) -> bool:
    return _is_a(model, "sklearn.calibration", "CalibratedClassifierCV")


def _calibrated(model, read) -> Unwrapped:
    name = type(model).__name__
    fitted = [part.estimator for part in _fitted(model, "calibrated_classifiers_")]
    fitted = [getattr(inner, "estimator", inner) if type(inner).__name__ == "FrozenEstimator"
              else inner for inner in fitted]
    trees, which = _merged_forests(fitted, read)
    return Unwrapped(
        estimator=model, trees=trees, exact=False, name=name, shown=model.estimator,
        predicts="probabilities calibrated on its base estimators' ones",
        note=f"{name} predicts calibrated probabilities: the score and the measures that "
             "shuffle or drop features (permutation, drop) go through them, while the "
             f"tree measures (mdi, shap, ...) read {which}")


def _merged_forests(models, read):
    """(the tree model to read, what it is in words) of several fitted copies of one
    estimator (the fold models of a calibrated classifier): one model as it is;
    forests, each the mean of as many trees, as one forest of all their trees (whose
    prediction is the mean of theirs); else the first of them."""
    if len(models) == 1:
        return models[0], (f"its base estimator's trees ({type(models[0]).__name__}), "
                           "whose probabilities are not calibrated")
    try:
        ensembles = [read(model) for model in models]
    except (TypeError, ValueError):
        ensembles = None
    first = ensembles[0] if ensembles else None
    mergeable = first is not None and all(
        e.combine == "mean" and e.n_trees == first.n_trees
        and _total_weight(e) == _total_weight(first)
        and e.task == first.task and e.classes == first.classes and e.link == first.link
        and e.n_features == first.n_features and e.input_dtype == first.input_dtype
        for e in ensembles)
    if not mergeable:
        return models[0], (f"the first of its {len(models)} base estimators (one per "
                           "cross-validation fold; the only one read), whose "
                           "probabilities are not calibrated")
    import numpy as np

    trees = tuple(tree for ensemble in ensembles for tree in ensemble.trees)
    weights = None if first.tree_weights is None else np.concatenate(
        [np.ones(e.n_trees) if e.tree_weights is None else e.tree_weights
         for e in ensembles])
    outputs = None if first.tree_output is None else np.concatenate(
        [e.tree_output for e in ensembles])
    kind = dataclasses.replace(first.kind, bagged=False)
    merged = dataclasses.replace(first, trees=trees, tree_weights=weights,
                                 tree_output=outputs, bootstrap=None, kind=kind)
    return merged, (f"the trees of its {len(models)} base estimators (one per "
                    f"cross-validation fold) as one forest of {len(trees)} trees, the mean "
                    "of their uncalibrated probabilities")


def _total_weight(ensemble) -> float:
    weights = ensemble.tree_weights
    return float(ensemble.n_trees if weights is None else sum(weights))


def _is_transformed_target(model) -> bool:
    return _is_a(model, "sklearn.compose", "TransformedTargetRegressor")


def _transformed_target(model, read) -> Unwrapped:
    name = type(model).__name__
    regressor = _fitted(model, "regressor_")
    identity = model.func is None and model.inverse_func is None and model.transformer is None
    if identity:
        return Unwrapped(estimator=regressor, trees=regressor, exact=True,
                         name=f"{name} regressor_", shown=regressor,
                         note=f"the model is {name}'s regressor_, which it predicts with "
                              "(its target is not transformed)")
    transform = (type(model.transformer).__name__ if model.transformer is not None
                 else getattr(model.func, "__name__", "func"))
    return Unwrapped(
        estimator=model, trees=regressor, exact=False, name=name, shown=regressor,
        predicts=f"the inverse {transform} of its regressor_'s prediction",
        note=f"{name}: its regressor_ ({type(regressor).__name__}) predicts the target "
             f"transformed by {transform}, so the tree measures (mdi, shap, ...) explain "
             "the transformed target; the score and the measures that shuffle or drop "
             "features go through the model's own predictions, on the target's scale")


def _is_multi_output(model) -> bool:
    return _is_a(model, "sklearn.multioutput", "_MultiOutputEstimator")


def _multi_output(model, read) -> Unwrapped:
    name = type(model).__name__
    estimators = _fitted(model, "estimators_")
    raise ValueError(f"{name} predicts {len(estimators)} outputs, each with a model of its "
                     f"own: explain them one output at a time, passing "
                     f"{name}.estimators_[k] (output k) with the k-th column of the target")


def _is_quantile_forest(model) -> bool:
    return _is_a(model, "quantile_forest._quantile_forest",
                 "BaseForestQuantileRegressor")


def _quantile_forest(model, read) -> Unwrapped:
    from ._sklearn import _copy_tree, _ensemble, _kind

    name = type(model).__name__
    estimators = _fitted(model, "estimators_")
    trees = [_copy_tree(tree.tree_, model.n_features_in_) for tree in estimators]
    # The trees' leaf means averaged: what predict(quantiles="mean") gives; not bagged
    # for sapwood, which cannot regenerate quantile-forest's draws.
    mean = _ensemble(model, trees, "mean",
                     kind=_kind(model, "forest", model.criterion))
    quantiles = getattr(model, "default_quantiles", 0.5)
    return Unwrapped(
        estimator=model, trees=mean, exact=False, name=name, read_by_default=False,
        predicts=f"quantile {quantiles!r} of the training targets in a row's leaves",
        note=f"{name} predicts quantile {quantiles!r} of the training targets in the "
             "leaves a row reaches, not its trees' mean: the score and the measures that "
             "shuffle or drop features go through its own predictions; the tree "
             "measures (mdi, shap, ...), which would read the trees' mean (its "
             "predict(quantiles='mean')), are skipped; to explain the trees' mean, pass "
             "sapwood.from_model(model)")


def _is_combination(model) -> bool:
    return (_is_a(model, "sklearn.ensemble", "VotingClassifier")
            or _is_a(model, "sklearn.ensemble", "VotingRegressor")
            or _is_a(model, "sklearn.ensemble", "StackingClassifier")
            or _is_a(model, "sklearn.ensemble", "StackingRegressor"))


def _combination(model, read) -> Unwrapped:
    name = type(model).__name__
    estimators = _fitted(model, "estimators_")
    how = "a vote" if name.startswith("Voting") else "a stack"
    return Unwrapped(
        estimator=model, trees=None, exact=False, name=f"{name} of {len(estimators)} models",
        predicts=f"{how} of {len(estimators)} models",
        note=f"{name} is {how} of {len(estimators)} models: the score and the measures "
             "that shuffle or drop features go through the whole model; the tree "
             "measures (mdi, shap, ...) need one tree ensemble and are skipped")


def _is_balanced_forest(model) -> bool:
    return _package(model) == "imblearn" and _is_a(
        model, "sklearn.ensemble", "RandomForestClassifier")


def _balanced_forest(model, read) -> Unwrapped:
    from ._sklearn import from_sklearn

    ensemble = from_sklearn(model)
    # Its trees are grown on under-sampled rows that scikit-learn's bootstrap record
    # does not regenerate: no out-of-bag rows.
    ensemble = dataclasses.replace(ensemble, bootstrap=None, kind=dataclasses.replace(
        ensemble.kind, library="imblearn", library_version=_version("imblearn"),
        bagged=False))
    return Unwrapped(estimator=model, trees=ensemble, exact=True,
                     name=type(model).__name__, note="")


def _version(package: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("imbalanced-learn" if package == "imblearn" else package)
    except PackageNotFoundError:
        return ""


# (applies, read) in the order asked.
_FORMS = ((_is_search, _search), (_is_calibrated, _calibrated),
          (_is_transformed_target, _transformed_target),
          (_is_multi_output, _multi_output), (_is_quantile_forest, _quantile_forest),
          (_is_combination, _combination), (_is_balanced_forest, _balanced_forest))
