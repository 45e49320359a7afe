"""TreeSHAP equals the shap package's TreeExplainer and adds up to the model's output."""

import numpy as np
import pandas as pd
import pytest
import shap
from sklearn.datasets import make_classification, make_regression
from sklearn.ensemble import (
    ExtraTreesRegressor,
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

import sapwood
from sapwood.importance import tree_shap


def _regression(n=300, p=5, seed=0):
    X, y = make_regression(n_samples=n, n_features=p, n_informative=3, noise=1.0,
                           random_state=seed)
    X[:, 3] = np.round(X[:, 3])  # ties
    return X, y


def _classification(n=300, p=5, classes=3, seed=0):
    return make_classification(n_samples=n, n_features=p, n_informative=3, n_redundant=1,
                               n_classes=classes, random_state=seed)


MODELS = {
    "tree-reg": (DecisionTreeRegressor(max_depth=6, random_state=0), _regression),
    "forest-reg": (RandomForestRegressor(15, max_depth=8, random_state=0), _regression),
    "extra-reg": (ExtraTreesRegressor(10, max_depth=6, random_state=0), _regression),
    "boost-reg": (GradientBoostingRegressor(n_estimators=15, random_state=0), _regression),
    "tree-clf": (DecisionTreeClassifier(max_depth=5, random_state=0), _classification),
    "forest-clf": (RandomForestClassifier(15, random_state=0), _classification),
    "boost-clf": (GradientBoostingClassifier(n_estimators=15, random_state=0),
                  lambda: _classification(classes=2)),
}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_values_equal_shap_tree_explainer(name):
    estimator, data = MODELS[name]
    X, y = data()
    model = estimator.fit(X[:200], y[:200])
    explainer = shap.TreeExplainer(model)
    result = tree_shap(model, X[200:])
    np.testing.assert_allclose(result.extra["shap_values"], explainer.shap_values(X[200:]),
                               rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(result.extra["expected_value"],
                               np.squeeze(explainer.expected_value), rtol=1e-9, atol=1e-12)
    # The global importance is the mean |SHAP| (over the classes too).
    phi = np.abs(result.extra["shap_values"])
    expected = phi.mean(axis=0) if phi.ndim == 2 else phi.mean(axis=(0, 2))
    np.testing.assert_allclose(result.importances_mean, expected)


@pytest.mark.parametrize("name", ["forest-reg", "forest-clf", "boost-clf"])
def test_interaction_values_equal_shap(name):
    estimator, data = MODELS[name]
    X, y = data()
    model = estimator.fit(X[:200], y[:200])
    result = tree_shap(model, X[200:230], interactions=True)
    theirs = shap.TreeExplainer(model).shap_interaction_values(X[200:230])
    np.testing.assert_allclose(result.extra["interaction_values"], theirs, rtol=1e-6,
                               atol=1e-9)
    # Each row's interactions sum, over one axis, to its SHAP values.
    np.testing.assert_allclose(result.extra["interaction_values"].sum(axis=2),
                               result.extra["shap_values"], atol=1e-9)


@pytest.mark.parametrize("name", ["forest-reg", "forest-clf", "boost-clf"])
def test_values_add_up_to_the_model_output(name):
    estimator, data = MODELS[name]
    X, y = data()
    model = estimator.fit(X[:200], y[:200])
    result = tree_shap(model, X[200:])
    total = result.extra["expected_value"] + result.extra["shap_values"].sum(axis=1)
    if name == "forest-clf":
        output = model.predict_proba(X[200:])
    elif name == "boost-clf":
        output = model.decision_function(X[200:])
    else:
        output = model.predict(X[200:])
    np.testing.assert_allclose(total, output, atol=1e-9)


def test_sapwood_forest_equals_shap_on_the_same_scikit_learn_forest():
    # sapwood's learners grow scikit-learn's trees, so shap on scikit-learn's forest is
    # the reference for sapwood's.
    X, y = _classification()
    ours = sapwood.RandomForestClassifier(n_estimators=10, random_state=0).fit(X, y)
    theirs = RandomForestClassifier(n_estimators=10, random_state=0).fit(X, y)
    np.testing.assert_allclose(tree_shap(ours, X[:50]).extra["shap_values"],
                               shap.TreeExplainer(theirs).shap_values(X[:50]),
                               rtol=1e-6, atol=1e-9)


def test_missing_values_follow_the_trees_missing_direction():
    X, y = _regression()
    rng = np.random.RandomState(0)
    X[rng.rand(*X.shape) < 0.1] = np.nan
    model = RandomForestRegressor(10, max_depth=6, random_state=0).fit(X[:200], y[:200])
    result = tree_shap(model, X[200:])
    np.testing.assert_allclose(result.extra["shap_values"],
                               shap.TreeExplainer(model).shap_values(X[200:]),
                               rtol=1e-6, atol=1e-9)


def test_frame_names_threads_and_result():
    X, y = _regression()
    columns = [f"c{j}" for j in range(X.shape[1])]
    frame = pd.DataFrame(X, columns=columns)
    model = RandomForestRegressor(8, max_depth=5, random_state=0).fit(frame, y)
    one = tree_shap(model, frame, n_jobs=1)
    two = tree_shap(model, frame, n_jobs=2)
    assert one.feature_names == columns and one.method == "tree_shap"
    np.testing.assert_array_equal(one.extra["shap_values"], two.extra["shap_values"])
    # The draws are each row's |SHAP| (shap's own values), their mean the importance.
    reference = np.abs(shap.TreeExplainer(model).shap_values(frame)).T
    np.testing.assert_allclose(one.importances, reference, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(one.importances_mean, reference.mean(axis=1), rtol=1e-6)
    np.testing.assert_allclose(one.importances_std, reference.std(axis=1), rtol=1e-6,
                               atol=1e-12)
    assert list(one.to_frame()["feature"])[0] == columns[int(np.argmax(one.importances_mean))]


def test_bad_input_is_refused_with_the_reason():
    X, y = _regression()
    model = DecisionTreeRegressor(max_depth=3, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="X has 4 features; the model was fit on 5"):
        tree_shap(model, X[:, :4])
    with pytest.raises(TypeError, match="interactions must be True or False; got 'yes'"):
        tree_shap(model, X, interactions="yes")
    with pytest.raises(TypeError, match="cannot read a model of type object"):
        tree_shap(object(), X)


def test_tabulated_leaves_equal_algorithm_2(monkeypatch):
    # Many rows take the per-leaf tables; a zero table budget forces Algorithm 2 on
    # every tree. Deep and shallow trees, repeated features, ties and missing values;
    # SHAP values and interaction values.
    import sapwood.importance._shap as shap_module

    X, y = _regression(n=600, p=6)
    X[np.random.RandomState(1).rand(*X.shape) < 0.05] = np.nan
    model = RandomForestRegressor(12, max_depth=9, max_features=2, random_state=0).fit(
        X[:400], y[:400])
    tables = tree_shap(model, X[400:], interactions=True).extra
    monkeypatch.setattr(shap_module, "_TABLE_BUDGET", 0)
    recursion = tree_shap(model, X[400:], interactions=True).extra
    for name in ("shap_values", "interaction_values"):
        np.testing.assert_allclose(tables[name], recursion[name], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(tables["shap_values"],
                               shap.TreeExplainer(model).shap_values(X[400:]),
                               rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("library", ["xgboost", "lightgbm"])
@pytest.mark.parametrize("task", ["regression", "classification"])
def test_xgboost_and_lightgbm_equal_shap(library, task):
    # shap's covers: XGBoost's hessian sums, LightGBM's row counts (not its hessians).
    import lightgbm
    import xgboost

    X, y = _regression() if task == "regression" else _classification(classes=2)
    if library == "xgboost":
        cls = xgboost.XGBRegressor if task == "regression" else xgboost.XGBClassifier
        model = cls(n_estimators=15, max_depth=4, n_jobs=1).fit(X[:200], y[:200])
    else:
        cls = lightgbm.LGBMRegressor if task == "regression" else lightgbm.LGBMClassifier
        model = cls(n_estimators=15, num_leaves=12, min_child_samples=5, n_jobs=1,
                    verbose=-1).fit(X[:200], y[:200])
    ours = tree_shap(model, X[200:]).extra["shap_values"]
    theirs = shap.TreeExplainer(model).shap_values(X[200:])
    # XGBoost keeps its model in float32: equal to 1e-6 of the values' scale.
    np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-6 * np.abs(theirs).max())
