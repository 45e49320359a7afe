"""Converted boosted models give their library's raw outputs bit for bit.

Each library adds its trees its own way (``TreeEnsemble.accumulate``): XGBoost in
float32 from its float32 base margin, LightGBM in float64 from 0, CatBoost in float64
from 0 with the bias added last. The converted model must reproduce the native raw
prediction exactly (equality, not closeness), on models of several sizes, for
regression, binary and multiclass objectives, with missing values in the data, also
after a save and load.
"""

import numpy as np
import pytest

from sapwood import load, save
from sapwood.adapters import from_model, predict_raw
from sapwood.importance import tree_shap

SIZES = [(3, 2), (40, 4), (300, 6)]  # (trees, depth)


def data(seed, n_samples=1500, n_features=6, nan_fraction=0.1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_samples, n_features))
    signal = X[:, 0] + X[:, 1] * X[:, 2] + 0.3 * rng.normal(size=n_samples)
    X[rng.random(X.shape) < nan_fraction] = np.nan
    return X, signal


def targets(signal, task):
    if task == "regression":
        return signal
    n_classes = 2 if task == "binary" else 3
    return np.digitize(signal, np.quantile(signal, np.linspace(0, 1, n_classes + 1)[1:-1]))


def equal_raw(model, X, theirs, tmp_path):
    converted = from_model(model)
    ours = predict_raw(converted, X)
    np.testing.assert_array_equal(ours, np.asarray(theirs, dtype=np.float64).reshape(ours.shape))
    path = tmp_path / "model.sapwood"
    save(converted, path)
    loaded = load(path)
    assert loaded.accumulate == converted.accumulate
    np.testing.assert_array_equal(predict_raw(loaded, X), ours)
    return converted


@pytest.mark.parametrize("task", ["regression", "binary", "multiclass"])
@pytest.mark.parametrize("size", SIZES)
def test_xgboost_float32_sums(task, size, tmp_path):
    xgb = pytest.importorskip("xgboost")
    n_trees, depth = size
    X, signal = data(n_trees + depth)
    estimator = xgb.XGBRegressor if task == "regression" else xgb.XGBClassifier
    model = estimator(n_estimators=n_trees, max_depth=depth, n_jobs=1,
                      random_state=0).fit(X, targets(signal, task))
    converted = equal_raw(model, X, model.predict(X, output_margin=True), tmp_path)
    assert converted.accumulate == "float32"


@pytest.mark.parametrize("objective", ["count:poisson", "reg:logistic", "reg:gamma"])
def test_xgboost_base_margin_through_the_link(objective, tmp_path):
    """The base margin is XGBoost's float32 ``-logf(1/p - 1)`` / ``logf(p)``."""
    xgb = pytest.importorskip("xgboost")
    X, signal = data(11)
    y = 1 / (1 + np.exp(-signal)) if objective == "reg:logistic" else np.exp(signal / 4)
    model = xgb.XGBRegressor(n_estimators=50, max_depth=5, objective=objective, n_jobs=1,
                             random_state=0).fit(X, y)
    equal_raw(model, X, model.predict(X, output_margin=True), tmp_path)


@pytest.mark.parametrize("task", ["regression", "binary", "multiclass"])
@pytest.mark.parametrize("size", SIZES)
def test_lightgbm_float64_sums(task, size, tmp_path):
    lgb = pytest.importorskip("lightgbm")
    n_trees, depth = size
    X, signal = data(n_trees + depth + 100)
    estimator = lgb.LGBMRegressor if task == "regression" else lgb.LGBMClassifier
    model = estimator(n_estimators=n_trees, num_leaves=2**depth - 1, n_jobs=1, verbose=-1,
                      random_state=0).fit(X, targets(signal, task))
    converted = equal_raw(model, X, model.predict(X, raw_score=True), tmp_path)
    assert converted.accumulate == "float64"


@pytest.mark.parametrize("task", ["regression", "binary", "multiclass"])
@pytest.mark.parametrize("size", SIZES)
def test_catboost_bias_added_last(task, size, tmp_path):
    catboost = pytest.importorskip("catboost")
    n_trees, depth = size
    X, signal = data(n_trees + depth + 200)
    estimator = catboost.CatBoostRegressor if task == "regression" else \
        catboost.CatBoostClassifier
    model = estimator(iterations=n_trees, depth=depth, thread_count=1, verbose=0,
                      random_seed=0, allow_writing_files=False).fit(X, targets(signal, task))
    converted = equal_raw(model, X, model.predict(X, prediction_type="RawFormulaVal"), tmp_path)
    assert converted.accumulate == "float64_base_last"


@pytest.mark.parametrize("task", ["regression", "binary", "multiclass"])
@pytest.mark.parametrize("size", SIZES)
def test_lightgbm_dart_leaves_are_stored_scaled(task, size, tmp_path):
    """LightGBM's DART rescales the dropped trees' leaves in place when it normalises
    (``DART::Normalize`` calls ``Tree::Shrinkage``), so its model text holds the final
    leaf values and predicts as a gbdt model does: no tree weights."""
    lgb = pytest.importorskip("lightgbm")
    n_trees, depth = size
    X, signal = data(n_trees + depth + 300)
    estimator = lgb.LGBMRegressor if task == "regression" else lgb.LGBMClassifier
    model = estimator(boosting_type="dart", drop_rate=0.3, skip_drop=0.0,
                      n_estimators=n_trees, num_leaves=2**depth - 1, n_jobs=1, verbose=-1,
                      random_state=0).fit(X, targets(signal, task))
    converted = equal_raw(model, X, model.predict(X, raw_score=True), tmp_path)
    assert np.all(converted.tree_weights == 1.0)
    contributions = model.predict(X[:50], pred_contrib=True)
    shap = np.asarray(tree_shap(converted, X[:50]).extra["shap_values"])
    if task == "multiclass":
        contributions = contributions.reshape(50, 3, -1).transpose(0, 2, 1)
    np.testing.assert_allclose(shap, contributions[:, :-1], rtol=1e-7, atol=1e-9)
