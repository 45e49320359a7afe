"""Models with categorical splits (LightGBM categorical features, XGBoost
enable_categorical, HistGradientBoosting categorical_features): raw outputs and TreeSHAP
equal the native library's, pandas ``category`` columns and integer codes are read as
the model was trained, unseen and missing categories go where the library sends them,
and the measures, files and CLI run on them."""

import contextlib
import io
import json

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import get_scorer

import sapwood
from sapwood.adapters import from_model, predict_raw
from sapwood.adapters._xgboost import read_xgboost_file
from sapwood.cli import main
from sapwood.export import export_text
from sapwood.importance import native_importance, permutation_importance, tree_shap
from tests.reference.naive_categorical import naive_raw
from tests.reference.naive_permutation import as_opaque_model, naive_permutation_scores

from ._data import assert_close

lgb = pytest.importorskip("lightgbm")

COLOURS = list("abcdefghijklmnopqrstuvwxyz")


def _frame(seed, n=600):
    """A numeric column with NaN, a text category column (26 labels: over a word of
    LightGBM's bitset when the split needs it) and an integer-coded category column."""
    rng = np.random.RandomState(seed)
    frame = pd.DataFrame({
        "x": rng.normal(size=n),
        "colour": pd.Categorical(rng.choice(COLOURS[:20], n), categories=COLOURS[:20]),
        "code": rng.randint(0, 45, n),
    })
    frame.loc[rng.rand(n) < 0.1, "x"] = np.nan
    frame.loc[rng.rand(n) < 0.05, "colour"] = np.nan
    effect = np.where(frame["colour"].cat.codes.to_numpy() % 3 == 0, 1.0, -0.5)
    y = np.nan_to_num(frame["x"].to_numpy()) + effect + 0.8 * (frame["code"] % 4 == 1)
    return frame, y + 0.1 * rng.normal(size=n)


def _awkward_codes(frame, seed):
    """The frame as codes, with NaN, negative, fractional, unseen and huge codes."""
    rng = np.random.RandomState(seed)
    X = np.column_stack([frame["x"], frame["colour"].cat.codes.replace(-1, np.nan),
                         frame["code"]]).astype(np.float64)
    for j in (1, 2):
        kind = rng.randint(0, 8, len(X))
        X[kind == 0, j] = np.nan
        X[kind == 1, j] = rng.choice([-1.0, -7.0, -2.5], (kind == 1).sum())
        X[kind == 2, j] += 0.5
        X[kind == 3, j] = rng.choice([25.0, 60.0, 1e9, 1e12], (kind == 3).sum())
    return X


LIGHTGBM = {"n_estimators": 15, "num_leaves": 8, "min_data_per_group": 5, "cat_smooth": 1.0,
            "max_cat_to_onehot": 3, "verbose": -1, "random_state": 0}


def _lightgbm(task, seed=0):
    frame, y = _frame(seed)
    if task == "regression":
        model = lgb.LGBMRegressor(**LIGHTGBM)
    elif task == "binary":
        model = lgb.LGBMClassifier(**LIGHTGBM)
        y = (y > np.median(y)).astype(int)
    else:
        model = lgb.LGBMClassifier(**LIGHTGBM)
        y = np.digitize(y, np.quantile(y, [0.33, 0.66]))
    # "colour" is a pandas category column; "code" an integer column made categorical.
    model.fit(frame, y, categorical_feature=["colour", "code"])
    return model, frame, y


def _raw_lightgbm(model, X):
    return model.booster_.predict(X, raw_score=True)


@pytest.mark.parametrize("task", ["regression", "binary", "multiclass"])
def test_lightgbm_raw_output_and_shap_equal_native(task):
    model, frame, _ = _lightgbm(task)
    converted = from_model(model)
    assert converted.has_categorical
    X = _awkward_codes(frame, 1)
    # LightGBM truncates a code in (-1, 0) to category 0; the format sends it right
    # (docs/model-format.md). No such code here.
    assert not ((X[:, 1:] > -1) & (X[:, 1:] < 0)).any()
    assert_close(predict_raw(converted, X), _raw_lightgbm(model, X))
    assert_close(naive_raw(converted, X).reshape(predict_raw(converted, X).shape),
                 _raw_lightgbm(model, X))
    phi = np.asarray(tree_shap(model, X).extra["shap_values"])
    native = model.booster_.predict(X, pred_contrib=True)
    if task == "multiclass":
        native = native.reshape(len(X), 3, -1).transpose(0, 2, 1)[:, :-1]
    else:
        native = native[:, :-1]
    assert_close(phi, native)


def test_lightgbm_pandas_columns_map_by_the_models_categories():
    """Two category columns: LightGBM records both label lists, so a frame whose
    categories are in another order, or hold a label never seen, reads as LightGBM
    reads it (an unknown label is missing)."""
    frame, y = _frame(2)
    frame["code"] = pd.Categorical(frame["code"])
    model = lgb.LGBMRegressor(**LIGHTGBM).fit(frame, y)
    converted = from_model(model)
    assert converted.categories[0] is None
    assert converted.categories[1] == tuple(COLOURS[:20])
    test = frame.copy()
    test["colour"] = pd.Categorical(test["colour"].astype(object).where(
        np.arange(len(test)) % 9 != 0, "zz"), categories=["zz"] + COLOURS[:20][::-1])
    assert_close(predict_raw(model, test), model.predict(test, raw_score=True))
    # Integer codes are the model's own codes.
    codes = converted.encode(test)
    assert_close(predict_raw(model, codes), _raw_lightgbm(model, codes))


def test_lightgbm_measures_files_and_text_on_categorical_splits(tmp_path):
    model, frame, y = _lightgbm("regression")
    X = _awkward_codes(frame, 3)
    scoring = "neg_mean_squared_error"
    result = permutation_importance(model, X, y, scoring=scoring, n_repeats=2, random_state=0)
    assert result.params["evaluator"] == "tree"
    baseline, scores = naive_permutation_scores(as_opaque_model(model), X, y,
                                                get_scorer(scoring), [[0], [1], [2]], 2, 0)
    assert_close(result.importances, baseline - scores, atol=1e-9)
    on_frame = permutation_importance(model, frame, y, scoring=scoring, n_repeats=2,
                                      random_state=0)
    assert on_frame.params["evaluator"] == "tree"
    assert on_frame.feature_names == ["x", "colour", "code"]
    gains = native_importance(model, "gain").importances_mean
    assert_close(gains, model.booster_.feature_importance("gain"), atol=1e-6)
    path = tmp_path / "model.sapwood"
    sapwood.save(model, path)
    loaded = sapwood.load(path)
    assert loaded.categories == from_model(model).categories
    np.testing.assert_array_equal(predict_raw(loaded, X), predict_raw(model, X))
    text = export_text(loaded.trees[0], feature_names=["x", "colour", "code"])
    assert " in {" in text


def test_lightgbm_model_file_explained_from_a_csv(tmp_path):
    """``sapwood explain data.csv --model model.txt``: the text column is read as the
    model's categories (by label), so the held-out score is the model's own."""
    frame, y = _frame(4)
    frame["code"] = pd.Categorical(frame["code"])
    model = lgb.LGBMRegressor(**LIGHTGBM).fit(frame, y)
    model_path = tmp_path / "model.txt"
    model.booster_.save_model(str(model_path))
    data = tmp_path / "data.csv"
    frame.assign(y=y).to_csv(data, index=False)
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        code = main(["explain", str(data), "--target", "y", "--model", str(model_path),
                     "--json"])
    assert code == 0
    document = json.loads(stdout.getvalue())
    assert document["model"]["score"] > 0.5
    assert "permutation" in document["measures"]


def _hist(task, seed=0):
    from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor

    frame, y = _frame(seed)
    # Odd integer categories: tested as the integers themselves (not their positions).
    frame["code"] = frame["code"] * 2 + 1
    options = {"max_iter": 12, "categorical_features": ["colour", "code"], "random_state": 0}
    if task == "regression":
        return HistGradientBoostingRegressor(**options).fit(frame, y), frame, y
    classes = np.digitize(y, [-0.5, 0.5]) if task == "multiclass" else (y > 0).astype(int)
    return HistGradientBoostingClassifier(**options).fit(frame, classes), frame, classes


def _unseen(frame):
    """Unknown labels, missing values, and integer categories never seen, negative or
    huge."""
    test = frame.copy()
    rows = np.arange(len(test))
    test["colour"] = pd.Categorical(test["colour"].astype(object).where(rows % 9 != 0, "zz"))
    test.loc[rows % 7 == 0, "code"] = np.array([4.0, -3.0, 200.0, 1e9, np.nan])[
        (rows[rows % 7 == 0] // 7) % 5]
    return test


@pytest.mark.parametrize("task", ["regression", "binary", "multiclass"])
def test_hist_gradient_boosting_raw_output_and_shap_equal_native(task):
    model, frame, _ = _hist(task)
    converted = from_model(model)
    assert converted.has_categorical
    assert converted.categories[1] == tuple(COLOURS[:20])
    assert converted.categories[2] == tuple(range(90))
    test = _unseen(frame)
    native = model._raw_predict(test)
    native = native[:, 0] if native.shape[1] == 1 else native
    assert_close(predict_raw(converted, test), native)
    codes = converted.encode(test)
    assert_close(predict_raw(converted, codes), native)
    assert_close(naive_raw(converted, codes).reshape(native.shape), native)
    # TreeSHAP: the values add up to the raw output (shap does not read categorical
    # HistGradientBoosting models); the kernels equal the naive path-dependent values
    # in tests/kernels/test_categorical.py.
    result = tree_shap(model, test[:50])
    phi = np.asarray(result.extra["shap_values"])
    total = phi.sum(axis=1) + np.asarray(result.extra["expected_value"])
    assert_close(total.reshape(native[:50].shape), native[:50])


def test_hist_gradient_boosting_measures_run():
    model, frame, y = _hist("regression")
    test = _unseen(frame)
    scoring = "neg_mean_squared_error"
    result = permutation_importance(model, test, y, scoring=scoring, n_repeats=2,
                                    random_state=0)
    assert result.params["evaluator"] == "tree"
    generic = permutation_importance(as_opaque_model(model), test, y, scoring=scoring,
                                     n_repeats=2, random_state=0)
    assert_close(result.importances, generic.importances, atol=1e-9)
    text = export_text(model, feature_names=["x", "colour", "code"])
    assert "colour in {" in text or "colour not in {" in text


def _xgboost(task):
    xgb = pytest.importorskip("xgboost")
    frame, y = _frame(5)
    frame["code"] = pd.Categorical(frame["code"])
    options = {"n_estimators": 10, "max_depth": 4, "enable_categorical": True,
               "tree_method": "hist", "max_cat_to_onehot": 1, "random_state": 0}
    if task == "regression":
        return xgb.XGBRegressor(**options).fit(frame, y), frame, y
    classes = np.digitize(y, [-0.5, 0.5]) if task == "multiclass" else (y > 0).astype(int)
    return xgb.XGBClassifier(**options).fit(frame, classes), frame, classes


@pytest.mark.parametrize("task", ["regression", "binary", "multiclass"])
def test_xgboost_raw_output_shap_and_interactions_equal_native(task):
    xgb = pytest.importorskip("xgboost")
    model, frame, _ = _xgboost(task)
    converted = from_model(model)
    assert converted.has_categorical
    assert converted.categories[1] == tuple(COLOURS[:20])
    assert converted.categories[2] == tuple(range(45))
    booster = model.get_booster()
    X = _awkward_codes(frame, 6)
    native = booster.inplace_predict(X, predict_type="margin")
    # float32 rounding of the margin.
    assert_close(predict_raw(converted, X), native, atol=2e-6)
    assert_close(predict_raw(converted, frame), model.predict(frame, output_margin=True),
                 atol=2e-6)
    # The same model read from its UBJSON and JSON files.
    for raw_format in ("ubj", "json"):
        again = read_xgboost_file(bytes(booster.save_raw(raw_format=raw_format)))
        np.testing.assert_array_equal(predict_raw(again, X), predict_raw(converted, X))
        assert again.categories == converted.categories
    matrix = xgb.DMatrix(frame[:40], enable_categorical=True)
    contributions = booster.predict(matrix, pred_contribs=True)
    interactions = booster.predict(matrix, pred_interactions=True)
    result = tree_shap(model, frame[:40], interactions=True)
    ours = np.asarray(result.extra["interaction_values"])
    if task == "multiclass":
        contributions = contributions.transpose(0, 2, 1)
        interactions = interactions.transpose(0, 2, 3, 1)
    assert_close(ours.sum(axis=2), contributions[:, :-1], atol=2e-5)
    assert_close(ours, interactions[:, :-1, :-1], atol=2e-5)


def test_xgboost_unseen_labels_go_the_missing_way():
    """XGBoost refuses a frame with a category it never saw; sapwood reads it as
    missing, which is where XGBoost sends a missing value."""
    model, frame, _ = _xgboost("regression")
    test = frame.copy()
    test["colour"] = pd.Categorical(test["colour"].astype(object).where(
        np.arange(len(test)) % 9 != 0, "zz"))
    missing = test.copy()
    missing["colour"] = missing["colour"].cat.remove_categories(["zz"])
    assert_close(predict_raw(model, test), model.predict(missing, output_margin=True),
                 atol=2e-6)


def test_text_columns_are_read_by_the_models_labels():
    """A text (object) column of a feature whose labels the model records reads as
    that feature's categories, as a ``category`` column would."""
    model, frame, _ = _hist("regression")
    converted = from_model(model)
    as_text = frame.assign(colour=frame["colour"].astype(object))
    np.testing.assert_array_equal(converted.encode(as_text), converted.encode(frame))
    assert_close(predict_raw(model, as_text), model._raw_predict(frame)[:, 0])
