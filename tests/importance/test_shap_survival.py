"""TreeSHAP of survival models: the risk score, and time-dependent values of the
survival function and cumulative hazard (SurvSHAP(t)), equal to Shapley values over
every coalition and adding up to the model's functions at every time."""

import numpy as np
import pytest

sksurv = pytest.importorskip("sksurv")

from sklearn.ensemble import RandomForestRegressor  # noqa: E402
from sksurv.ensemble import GradientBoostingSurvivalAnalysis  # noqa: E402
from sksurv.ensemble import RandomSurvivalForest as TheirForest  # noqa: E402
from sksurv.util import Surv  # noqa: E402

from sapwood import RandomSurvivalForest  # noqa: E402
from sapwood.importance import tree_shap  # noqa: E402
from tests.reference.naive_categorical import naive_path_dependent_shap  # noqa: E402
from tests.reference.naive_shap_interventional import naive_interventional_shap  # noqa: E402


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(3)
    X = np.round(rng.normal(size=(160, 4)), 1)
    event_time = rng.exponential(np.exp(-(X[:, 0] - X[:, 1])))
    censor_time = rng.exponential(2.0, size=160)
    y = Surv.from_arrays(event_time <= censor_time,
                         np.round(np.minimum(event_time, censor_time), 1))
    return X, y


@pytest.fixture(scope="module")
def forest(data):
    X, y = data
    return RandomSurvivalForest(n_estimators=3, max_depth=3, random_state=0).fit(X, y)


FUNCTIONS = {"survival": ("predict_survival_function", 1),
             "cumulative_hazard": ("predict_cumulative_hazard_function", 0)}


@pytest.mark.parametrize("output", FUNCTIONS)
def test_time_dependent_values(data, forest, output):
    X, _ = data
    method, column = FUNCTIONS[output]
    result = tree_shap(forest, X[:25], model_output=output)
    phi = result.extra["shap_values"]
    assert phi.shape == (25, 4, forest.unique_times_.shape[0])
    np.testing.assert_array_equal(result.extra["times"], forest.unique_times_)
    predicted = getattr(forest, method)(X[:25], return_array=True)
    np.testing.assert_allclose(result.extra["expected_value"] + phi.sum(axis=1), predicted,
                               atol=1e-12)
    # Shapley values over every coalition, tree by tree (the forest's are their mean)
    for r in (0, 7):
        x = X[r].astype(np.float32).astype(np.float64)
        naive = np.mean([naive_path_dependent_shap(tree.tree_, x)[:, column::2]
                         for tree in forest.estimators_], axis=0)
        np.testing.assert_allclose(phi[r], naive, atol=1e-13)
    assert result.params["model_output"] == output
    np.testing.assert_allclose(result.importances_mean, np.abs(phi).mean(axis=(0, 2)))


def test_risk_score_values(data, forest):
    X, _ = data
    result = tree_shap(forest, X[:25])
    phi = result.extra["shap_values"]
    assert phi.shape == (25, 4) and result.extra["output"] == "risk score"
    np.testing.assert_allclose(result.extra["expected_value"] + phi.sum(axis=1),
                               forest.predict(X[:25]), rtol=1e-12)
    risk = forest.to_ensemble().risk_model()
    x = X[3].astype(np.float32).astype(np.float64)
    naive = np.mean([naive_path_dependent_shap(tree, x)[:, 0] for tree in risk.trees], axis=0)
    np.testing.assert_allclose(phi[3], naive, rtol=1e-12, atol=1e-12)


def test_interventional_values(data, forest):
    X, _ = data
    result = tree_shap(forest, X[:3], data=X[40:46], model_output="survival")
    expected = naive_interventional_shap(
        lambda rows: forest.predict_survival_function(rows, return_array=True), X[:3],
        X[40:46])
    np.testing.assert_allclose(result.extra["shap_values"], expected, atol=1e-13)
    risk = tree_shap(forest, X[:3], data=X[40:46])
    expected = naive_interventional_shap(forest.predict, X[:3], X[40:46])
    np.testing.assert_allclose(risk.extra["shap_values"], expected[..., 0], rtol=1e-12,
                               atol=1e-12)


def test_sksurv_models(data):
    X, y = data
    theirs = TheirForest(n_estimators=3, max_depth=3, random_state=1).fit(X, y)
    result = tree_shap(theirs, X[:10], model_output="survival")
    np.testing.assert_allclose(
        result.extra["expected_value"] + result.extra["shap_values"].sum(axis=1),
        theirs.predict_survival_function(X[:10], return_array=True), atol=1e-12)
    boosted = GradientBoostingSurvivalAnalysis(n_estimators=5, random_state=0).fit(X, y)
    result = tree_shap(boosted, X[:10])
    assert result.extra["output"] == "log hazard ratio"
    np.testing.assert_allclose(
        result.extra["expected_value"] + result.extra["shap_values"].sum(axis=1),
        boosted.predict(X[:10]), atol=1e-12)
    with pytest.raises(ValueError, match="only for a survival forest or tree"):
        tree_shap(boosted, X[:10], model_output="survival")


def test_refusals(data, forest):
    X, y = data
    regression = RandomForestRegressor(n_estimators=2, random_state=0).fit(X, y["time"])
    with pytest.raises(ValueError, match="needs a survival model"):
        tree_shap(regression, X[:5], model_output="survival")
    with pytest.raises(ValueError, match="explain model_output 'raw'"):
        tree_shap(forest, X[:5], data=X[:5], model_output="probability")
