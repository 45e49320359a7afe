"""The seed examples run against scikit-learn (the reference, always) and against
sapwood's own learners."""

import importlib

import numpy as np
import pytest
from sklearn.base import is_classifier

import sapwood
from sapwood import TreeEnsemble
from tests.reference.sklearn_trees import tree_arrays_from_sklearn

_SKLEARN_HOME = {
    "DecisionTreeClassifier": "sklearn.tree",
    "DecisionTreeRegressor": "sklearn.tree",
    "RandomForestClassifier": "sklearn.ensemble",
    "RandomForestRegressor": "sklearn.ensemble",
    "GradientBoostingRegressor": "sklearn.ensemble",
}


@pytest.fixture(params=["sklearn", "sapwood"])
def learner(request):
    """``learner(name)`` is the estimator class ``name`` of the implementation under
    test."""

    def get(name):
        if request.param == "sklearn":
            return getattr(importlib.import_module(_SKLEARN_HOME[name]), name)
        return getattr(sapwood, name)

    return get


@pytest.fixture
def make_tree(learner):
    """``make_tree(**params)``: an unfitted DecisionTreeClassifier under test."""
    cls = learner("DecisionTreeClassifier")
    return lambda **params: cls(**params)


@pytest.fixture
def make_regressor(learner):
    """``make_regressor(**params)``: an unfitted DecisionTreeRegressor under test."""
    cls = learner("DecisionTreeRegressor")
    return lambda **params: cls(**params)


@pytest.fixture
def in_tree_format():
    """``in_tree_format(model)``: a fitted model of either implementation as a
    TreeEnsemble (sapwood's own ``to_ensemble``, or a field-for-field copy)."""

    def convert(model):
        if hasattr(model, "to_ensemble"):
            return model.to_ensemble()
        return _ensemble_from_sklearn(model)

    return convert


def _ensemble_from_sklearn(model):
    """Trees of a scikit-learn tree, forest or gradient-boosting model, combined as
    the model combines them: forests average, boosting sums its stage x class trees.
    Only what MDI reads is exact (no base score or link)."""
    if hasattr(model, "tree_"):
        estimators, combine = [model], "mean"
    elif isinstance(model.estimators_, np.ndarray):
        estimators, combine = list(model.estimators_.ravel()), "sum"
    else:
        estimators, combine = model.estimators_, "mean"
    task = "classification" if is_classifier(model) else "regression"
    return TreeEnsemble(trees=[tree_arrays_from_sklearn(e) for e in estimators], task=task,
                        n_features=model.n_features_in_, combine=combine,
                        classes=tuple(model.classes_) if task == "classification" else None)
