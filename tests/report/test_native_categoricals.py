"""explain on models fitted on pandas ``category`` columns, judged on held-out rows of
the same frame: scored as each library scores them on that frame (LightGBM, XGBoost's
``enable_categorical``, HistGradientBoosting's ``from_dtype``, CatBoost one-hot and
CTRs), and a CatBoost model with CTRs explained by CatBoost's own SHAP values."""

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.inspection import permutation_importance
from sklearn.metrics import brier_score_loss

import sapwood
from sapwood.importance import tree_shap

lightgbm = pytest.importorskip("lightgbm")
xgboost = pytest.importorskip("xgboost")
catboost = pytest.importorskip("catboost")


def _frame(n=400, seed=0):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "a": rng.normal(size=n), "b": rng.normal(size=n),
        "c": pd.Categorical(rng.choice(["w", "x", "y", "z"], n)),
        "d": pd.Categorical(rng.choice(["p", "q", "r"], n))})
    signal = frame.a + 2 * (frame.c == "x") + (frame.d == "p")
    frame["y"] = signal + rng.normal(scale=0.3, size=n)
    frame["label"] = (signal + rng.normal(scale=0.5, size=n) > 1).astype(int)
    return frame


FRAME = _frame()
TRAIN, TEST = FRAME.iloc[:300], FRAME.iloc[300:]
FEATURES = ["a", "b", "c", "d"]


def _regressor(kind):
    from sklearn.ensemble import HistGradientBoostingRegressor

    return {"lightgbm": lambda: lightgbm.LGBMRegressor(n_estimators=15, verbose=-1, n_jobs=1),
            "xgboost": lambda: xgboost.XGBRegressor(n_estimators=15, enable_categorical=True,
                                                    n_jobs=1),
            "hgb": lambda: HistGradientBoostingRegressor(
                max_iter=15, categorical_features="from_dtype"),
            "catboost_onehot": lambda: catboost.CatBoostRegressor(
                iterations=15, verbose=0, cat_features=["c", "d"], one_hot_max_size=10,
                thread_count=1, allow_writing_files=False),
            "catboost_ctr": lambda: catboost.CatBoostRegressor(
                iterations=15, verbose=0, cat_features=["c", "d"], random_seed=0,
                thread_count=1, allow_writing_files=False),
            }[kind]().fit(TRAIN[FEATURES], TRAIN.y)


KINDS = ["lightgbm", "xgboost", "hgb", "catboost_onehot", "catboost_ctr"]


@pytest.fixture(scope="module")
def regressors():
    return {kind: _regressor(kind) for kind in KINDS}


@pytest.mark.parametrize("kind", KINDS)
def test_explain_scores_as_the_library_does(regressors, kind):
    model = regressors[kind]
    report = sapwood.explain(TEST[FEATURES + ["y"]], "y", model=model,
                             methods="permutation")
    assert report.score == pytest.approx(model.score(TEST[FEATURES], TEST.y), abs=1e-12)
    assert report.model_text.startswith(type(model).__name__)
    # Permutation through the model's own predictions on its frame: scikit-learn's
    # permutation_importance of the frame, draw for draw (the same random stream).
    own = permutation_importance(model, TEST[FEATURES], TEST.y, n_repeats=5,
                                 random_state=0)
    np.testing.assert_allclose(report.results["permutation"].importances,
                               own.importances, atol=1e-9)


def test_tree_measures_read_the_trees_on_the_models_codes(regressors):
    """SHAP from sapwood's kernels on the codes equals the library's own SHAP values on
    the frame, and adds up to the model's own margin."""
    model = regressors["lightgbm"]
    report = sapwood.explain(TEST[FEATURES + ["y"]], "y", model=model, methods="shap")
    result = report.results["shap"]
    rows = result.extra["data"].index
    own = model.predict(TEST.loc[rows, FEATURES], pred_contrib=True)
    np.testing.assert_allclose(result.extra["shap_values"], own[:, :-1], atol=1e-6)
    # The codes as an array (as some measures hand them on) are read by column name.
    np.testing.assert_array_equal(report.model.predict(report.data.X.to_numpy()),
                                  model.predict(TEST[FEATURES]))


def test_held_out_categories_in_another_order(regressors):
    """The held-out frame's categories in another order (as re-reading a file gives):
    each label still means what it meant at the fit."""
    model = regressors["lightgbm"]
    test = TEST[FEATURES + ["y"]].copy()
    test["c"] = test["c"].cat.reorder_categories(["z", "y", "x", "w"])
    report = sapwood.explain(test, "y", model=model, methods="permutation")
    assert report.score == pytest.approx(model.score(TEST[FEATURES], TEST.y), abs=1e-12)


@pytest.mark.parametrize("kind", ["lightgbm", "catboost_ctr"])
def test_classifier_brier_score_and_accuracy(kind):
    if kind == "lightgbm":
        model = lightgbm.LGBMClassifier(n_estimators=15, verbose=-1, n_jobs=1)
    else:
        model = catboost.CatBoostClassifier(iterations=15, verbose=0, cat_features=["c", "d"],
                                            thread_count=1, allow_writing_files=False)
    model.fit(TRAIN[FEATURES], TRAIN.label)
    report = sapwood.explain(TEST[FEATURES + ["label"]], "label", model=model,
                             methods="permutation")
    probability = model.predict_proba(TEST[FEATURES])[:, 1]
    assert report.score == pytest.approx(-brier_score_loss(TEST.label, probability),
                                         abs=1e-12)
    assert report.accuracy == pytest.approx(model.score(TEST[FEATURES], TEST.label))


def test_catboost_ctr_shap_is_catboosts_own(regressors):
    """CatBoost's exact ShapValues, as sapwood's result, through explain and tree_shap;
    MDI is skipped saying why."""
    model = regressors["catboost_ctr"]
    own = model.get_feature_importance(
        data=catboost.Pool(TEST[FEATURES], cat_features=["c", "d"]), type="ShapValues")
    direct = tree_shap(model, TEST[FEATURES])
    np.testing.assert_allclose(direct.extra["shap_values"], own[:, :-1], atol=1e-6)
    assert direct.extra["expected_value"] == pytest.approx(own[0, -1], abs=1e-6)
    np.testing.assert_allclose(direct.importances_mean, np.abs(own[:, :-1]).mean(axis=0),
                               atol=1e-6)
    report = sapwood.explain(TEST[FEATURES + ["y"]], "y", model=model,
                             methods="mdi,permutation,shap")
    shap = report.results["shap"]
    assert shap.params["source"] == "catboost ShapValues"
    assert any(note.startswith("shap: the values are CatBoost's own") for note in report.notes)
    np.testing.assert_allclose(shap.extra["shap_values"], own[:, :-1], atol=1e-6)
    assert "mdi" not in report.results
    assert any(note.startswith("mdi importance skipped") and "CTRs" in note
               for note in report.notes)


def test_catboost_ctr_report_renders(regressors, tmp_path):
    """Every form of the report, without the first tree's picture it cannot draw."""
    report = sapwood.explain(TEST[FEATURES + ["y"]], "y", model=regressors["catboost_ctr"],
                             methods="permutation")
    assert "CatBoostRegressor" in str(report)
    assert json.loads(report.to_json())["model"]["score"] == pytest.approx(report.score)
    report.to_html(tmp_path / "report.html")
    assert "first tree" not in (tmp_path / "report.html").read_text()


def test_catboost_multiclass_ctr_shap():
    labels = np.array(["lo", "mid", "hi"])[np.digitize(TRAIN.y, [0.5, 1.5])]
    model = catboost.CatBoostClassifier(iterations=10, verbose=0, cat_features=["c", "d"],
                                        thread_count=1, allow_writing_files=False)
    model.fit(TRAIN[FEATURES], labels)
    own = model.get_feature_importance(
        data=catboost.Pool(TEST[FEATURES], cat_features=["c", "d"]), type="ShapValues")
    result = tree_shap(model, TEST[FEATURES])
    np.testing.assert_allclose(result.extra["shap_values"],
                               np.moveaxis(own[:, :, :-1], 1, 2), atol=1e-6)
    assert result.extra["output_names"] == list(model.classes_)


def test_catboost_text_features_are_refused_by_name():
    rng = np.random.default_rng(1)
    words = np.array(["good fine", "bad awful", "ok meh", "great good"])
    frame = pd.DataFrame({"a": rng.normal(size=120), "review": words[rng.integers(0, 4, 120)]})
    y = (frame.a + frame.review.str.contains("good") > 0.5).astype(int)
    model = catboost.CatBoostClassifier(iterations=5, verbose=0, text_features=["review"],
                                        thread_count=1, allow_writing_files=False)
    model.fit(frame, y)
    with pytest.raises(ValueError, match=r"text features \(review\)"):
        sapwood.explain(frame.assign(y=y), "y", model=model)
