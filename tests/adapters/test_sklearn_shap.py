"""Every scikit-learn tree model the shap package reads: TreeSHAP equals shap's
TreeExplainer, and the values add up to the model's native raw output (probabilities
for a tree or forest classifier, decision_function for boosting)."""

import numpy as np
import pytest
import shap
from sklearn import ensemble, tree

from sapwood.adapters import predict_raw
from sapwood.importance import tree_shap

from ._data import make_data

MODELS = {
    "DecisionTreeClassifier": lambda: tree.DecisionTreeClassifier(max_depth=6, random_state=0),
    "DecisionTreeRegressor": lambda: tree.DecisionTreeRegressor(max_depth=6, random_state=0),
    "ExtraTreeClassifier": lambda: tree.ExtraTreeClassifier(max_depth=6, random_state=0),
    "ExtraTreeRegressor": lambda: tree.ExtraTreeRegressor(max_depth=6, random_state=0),
    "RandomForestClassifier": lambda: ensemble.RandomForestClassifier(
        8, max_depth=6, random_state=0),
    "RandomForestRegressor": lambda: ensemble.RandomForestRegressor(
        8, max_depth=6, random_state=0),
    "ExtraTreesClassifier": lambda: ensemble.ExtraTreesClassifier(
        8, max_depth=6, random_state=0),
    "ExtraTreesRegressor": lambda: ensemble.ExtraTreesRegressor(
        8, max_depth=6, random_state=0),
    "GradientBoostingClassifier": lambda: ensemble.GradientBoostingClassifier(
        n_estimators=10, random_state=0),
    "GradientBoostingRegressor": lambda: ensemble.GradientBoostingRegressor(
        n_estimators=10, random_state=0),
    "HistGradientBoostingClassifier": lambda: ensemble.HistGradientBoostingClassifier(
        max_iter=10, random_state=0),
    "HistGradientBoostingRegressor": lambda: ensemble.HistGradientBoostingRegressor(
        max_iter=10, random_state=0),
}
# GradientBoosting* does not accept NaN.
NO_NAN = ("GradientBoostingClassifier", "GradientBoostingRegressor")


def _fitted(name, n_classes):
    nan = 0.0 if name in NO_NAN else 0.1
    X, y_class, y_reg = make_data(1, n_samples=400, n_features=5, nan_fraction=nan,
                                  n_classes=n_classes)
    y = y_class if name.endswith("Classifier") else y_reg
    return MODELS[name]().fit(X[:300], y[:300]), X[300:]


def _native_raw(model, X):
    if hasattr(model, "decision_function"):
        return model.decision_function(X)
    if hasattr(model, "predict_proba"):
        return model.predict_proba(X)
    return model.predict(X)


CASES = [(name, 2) for name in MODELS] + [
    (name, 3) for name in MODELS if name.endswith("Classifier")]


@pytest.mark.parametrize(("name", "n_classes"), CASES)
def test_tree_shap_equals_shap_and_adds_up_to_the_native_raw_output(name, n_classes):
    model, X = _fitted(name, n_classes)
    result = tree_shap(model, X)
    values, expected = result.extra["shap_values"], result.extra["expected_value"]
    raw = _native_raw(model, X)
    np.testing.assert_allclose(predict_raw(model, X).reshape(raw.shape), raw, rtol=1e-12,
                               atol=1e-12)
    total = expected + values.sum(axis=1)
    np.testing.assert_allclose(total.reshape(raw.shape), raw, atol=1e-9)
    if name == "GradientBoostingClassifier" and n_classes > 2:
        with pytest.raises(Exception, match="only supported for binary"):
            shap.TreeExplainer(model)
        return  # shap reads binary GradientBoostingClassifier only; additivity above
    explainer = shap.TreeExplainer(model)
    theirs = np.asarray(explainer.shap_values(X))
    np.testing.assert_allclose(values, theirs.reshape(values.shape), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(np.squeeze(expected), np.squeeze(explainer.expected_value),
                               rtol=1e-12, atol=1e-12)


def test_hist_gradient_boosting_native_importance_defaults_to_total_gain():
    from sapwood.importance import native_importance

    model, _ = _fitted("HistGradientBoostingRegressor", 2)
    default = native_importance(model)
    assert default.method == "native_total_gain"
    np.testing.assert_array_equal(default.importances_mean,
                                  native_importance(model, "total_gain").importances_mean)
    assert default.importances_mean.sum() > 0
