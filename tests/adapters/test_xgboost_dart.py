"""XGBoost DART models: every tree's output times its ``weight_drop``, bit for bit.

XGBoost's predictor multiplies a tree's float32 leaf value by the tree's float32 weight
in float32 and adds the product to the float32 margin, tree by tree from the base score
(``Dart::PredictBatchImpl``; from XGBoost 3.3 inside the predictor for every model with
tree weights): a Booster or file converts to ``Booster.predict(DMatrix)`` exactly.
XGBoost < 3.3 predicts DART models in place (the scikit-learn wrapper's ``predict``,
``Booster.inplace_predict``) another way: each tree's output is taken from a buffer
that starts at the base score, and the base score is subtracted again in float32
before the weighting (``Dart::InplacePredict``), which rounds the leaf value to the
base score's precision; a wrapper converted under such an XGBoost accumulates that way
(``accumulate="float32_rebased"``) and gives its ``predict`` exactly. XGBoost >= 3.3
predicts both ways alike and moved the weights into the tree model; its files
(``xgboost_versions``, written by make_late_fixtures.py with XGBoost 3.4.1) give both
margins bit for bit.
"""

import warnings
from pathlib import Path

import numpy as np
import pytest
from sklearn.inspection import permutation_importance as sklearn_permutation

from sapwood import load, save
from sapwood.adapters import from_model, predict_raw
from sapwood.importance import permutation_importance, tree_shap

from ._data import assert_close

xgb = pytest.importorskip("xgboost")

FIXTURES = Path(__file__).parent / "xgboost_versions"
SIZES = [(3, 2), (40, 4), (120, 6)]  # (trees per output, depth)
LATE_INPLACE = tuple(int(v) for v in xgb.__version__.split(".")[:2]) >= (3, 3)


def data(seed, n_samples=1200, n_features=6):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_samples, n_features))
    signal = X[:, 0] + X[:, 1] * X[:, 2] + 0.3 * rng.normal(size=n_samples)
    X[rng.random(X.shape) < 0.1] = np.nan
    return X, signal


def fitted(task, n_trees, depth, seed, **params):
    X, signal = data(seed)
    if task == "regression":
        estimator, y = xgb.XGBRegressor, signal + 3.0  # a base score far from 0
    else:
        n_classes = 2 if task == "binary" else 3
        estimator = xgb.XGBClassifier
        y = np.digitize(signal, np.quantile(signal, np.linspace(0, 1, n_classes + 1)[1:-1]))
    # one_drop: every round drops a tree, so that the weights differ from 1.
    model = estimator(booster="dart", rate_drop=0.3, skip_drop=0.0, one_drop=True,
                      n_estimators=n_trees, max_depth=depth, n_jobs=1, random_state=0,
                      **params).fit(X, y)
    return model, X


@pytest.mark.parametrize("task", ["regression", "binary", "multiclass"])
@pytest.mark.parametrize("size", SIZES)
def test_dart_margins_bit_for_bit(task, size, tmp_path):
    model, X = fitted(task, *size, seed=sum(size))
    booster = model.get_booster()
    # The wrapper: its in-place predict.
    wrapper = from_model(model)
    assert not np.all(wrapper.tree_weights == 1.0)  # the weights are in play
    assert wrapper.accumulate == ("float32" if LATE_INPLACE else "float32_rebased")
    ours = predict_raw(wrapper, X)
    inplace = model.predict(X, output_margin=True).reshape(ours.shape)
    np.testing.assert_array_equal(ours, inplace.astype(np.float64))
    path = tmp_path / "model.sapwood"
    save(wrapper, path)
    assert load(path).accumulate == wrapper.accumulate
    np.testing.assert_array_equal(predict_raw(load(path), X), ours)
    # The Booster and its files: predict from a DMatrix.
    dmatrix = booster.predict(xgb.DMatrix(X), output_margin=True).reshape(ours.shape)
    converted = from_model(booster)
    assert converted.accumulate == "float32"
    np.testing.assert_array_equal(predict_raw(converted, X), dmatrix.astype(np.float64))
    for raw_format in ("json", "ubj"):
        file = tmp_path / f"model.{raw_format}"
        booster.save_model(file)
        np.testing.assert_array_equal(predict_raw(from_model(file), X), dmatrix)


def test_dart_in_place_differs_from_the_dmatrix_path_only_through_the_base_score():
    """What the module docstring says of XGBoost < 3.3, checked against XGBoost itself:
    ``base + sum_t f32(f32(f32(base + leaf_t) - base) * w_t)`` in float32."""
    if LATE_INPLACE:
        pytest.skip("XGBoost >= 3.3 predicts DART models in place as from a DMatrix")
    model, X = fitted("regression", 40, 4, seed=5)
    converted = from_model(model.get_booster())
    leaves = converted.apply(X)
    base = np.float32(converted.base_score[0])
    margin = np.full(X.shape[0], base, dtype=np.float32)
    for t, tree in enumerate(converted.trees):
        leaf = tree.value[leaves[:, t], 0, 0].astype(np.float32)
        margin += ((base + leaf) - base) * np.float32(converted.tree_weights[t])
    np.testing.assert_array_equal(margin, model.predict(X, output_margin=True))
    assert (margin != predict_raw(converted, X)).any()  # the two paths differ


@pytest.mark.parametrize("task", ["regression", "binary"])
def test_permutation_on_dart_takes_the_tree_aware_engine(task):
    """Exact conversion lets the engine stand in for XGBoost's predict: no warning, the
    numbers of scikit-learn's permutation_importance with XGBoost's own predict."""
    model, X = fitted(task, 40, 4, seed=9)
    y = model.predict(X) + (0.5 if task == "regression" else 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours = permutation_importance(model, X, y, n_repeats=3, random_state=0)
    theirs = sklearn_permutation(model, X, y, n_repeats=3, random_state=0)
    np.testing.assert_array_equal(ours.importances, theirs.importances)


@pytest.mark.parametrize("task", ["regression", "binary", "multiclass"])
def test_dart_tree_shap_equals_pred_contribs(task):
    model, X = fitted(task, 40, 4, seed=7)
    rows = X[:60]
    contributions = model.get_booster().predict(xgb.DMatrix(rows), pred_contribs=True)
    result = tree_shap(model, rows)
    ours = np.asarray(result.extra["shap_values"])
    expected = np.asarray(result.extra["expected_value"])
    if task == "multiclass":
        contributions = contributions.transpose(0, 2, 1)
        np.testing.assert_allclose(expected, contributions[0, -1], atol=2e-5)
    else:
        np.testing.assert_allclose(expected, contributions[:, -1], atol=2e-5)
    assert_close(ours, contributions[:, :-1], atol=2e-5)


@pytest.mark.parametrize("name", ["regression", "softprob", "vector_leaf"])
@pytest.mark.parametrize("suffix", ["json", "ubj"])
def test_xgboost_3_4_files_keep_dart_weights_in_the_tree_model(name, suffix):
    X = np.load(FIXTURES / "X.npy")
    stem = f"xgboost3_4_dart_{name}"
    converted = from_model(FIXTURES / f"{stem}.{suffix}")
    assert converted.kind.library_version.startswith("3.4")
    assert not np.all(converted.tree_weights == 1.0)
    ours = predict_raw(converted, X)
    for margin in ("margin", "inplace_margin"):
        theirs = np.load(FIXTURES / f"{stem}.{margin}.npy").reshape(ours.shape)
        np.testing.assert_array_equal(ours, theirs.astype(np.float64))
