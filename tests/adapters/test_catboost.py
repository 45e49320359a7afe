"""CatBoost models and saved files: raw output, probabilities, TreeSHAP, the native
importance, permutation and the CLI, against CatBoost's own numbers.

CatBoost compares float32 features with float32 borders and sums leaf values in
float64, as sapwood does, so raw outputs agree to rounding (asserted to 1e-6).
"""

import json
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest
from sklearn.inspection import permutation_importance as sklearn_permutation

import sapwood
from sapwood import FormatError
from sapwood.adapters import from_model, predict, predict_proba, predict_raw
from sapwood.importance import permutation_importance, tree_shap
from sapwood.importance._gain import native_importance

from ._data import assert_close, make_data

catboost = pytest.importorskip("catboost")

COMMON = dict(iterations=12, depth=4, verbose=0, thread_count=1, random_seed=0,
              allow_writing_files=False)
POLICIES = ["SymmetricTree", "Depthwise", "Lossguide"]


def fit(kind, n_classes=2, seed=0, nan_mode="Min", **options):
    """A fitted CatBoost model and its data (NaN in X unless nan_mode is Forbidden,
    whose X gets NaN only after the fit)."""
    X, y_class, y_reg = make_data(seed, n_samples=300, n_features=5, n_classes=n_classes,
                                  nan_fraction=0.0 if nan_mode == "Forbidden" else 0.15)
    if kind == "regressor":
        model = catboost.CatBoostRegressor(nan_mode=nan_mode, **COMMON, **options)
        model.fit(X, y_reg)
        y = y_reg
    else:
        model = catboost.CatBoostClassifier(nan_mode=nan_mode, **COMMON, **options)
        model.fit(X, y_class)
        y = y_class
    X = X.copy()
    X[np.random.default_rng(seed + 1).random(X.shape) < 0.15] = np.nan
    return model, X, y


def raw(model, X):
    return model.predict(X, prediction_type="RawFormulaVal")


def catboost_shap(model, X, y):
    """CatBoost's ShapValues as (values (n, features[, classes]), expected value)."""
    values = model.get_feature_importance(catboost.Pool(X, y), type="ShapValues")
    if values.ndim == 3:  # (n, classes, features + 1)
        return np.moveaxis(values[:, :, :-1], 1, 2), values[0, :, -1]
    return values[:, :-1], values[0, -1]


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("nan_mode", ["Min", "Max", "Forbidden"])
def test_regressor(policy, nan_mode):
    model, X, y = fit("regressor", nan_mode=nan_mode, grow_policy=policy)
    assert np.isnan(X).any()
    converted = from_model(model)
    assert converted.kind.library == "catboost"
    assert_close(predict_raw(converted, X), raw(model, X))
    assert_close(predict(converted, X), model.predict(X))


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_classifier(policy, n_classes):
    model, X, y = fit("classifier", n_classes=n_classes, grow_policy=policy,
                      nan_mode="Max" if n_classes == 2 else "Min")
    converted = from_model(model)
    assert converted.link == ("logistic" if n_classes == 2 else "softmax")
    assert converted.classes == tuple(model.classes_)
    assert_close(predict_raw(converted, X), raw(model, X))
    proba = predict_proba(converted, X)
    assert_close(proba, model.predict_proba(X))
    top2 = np.sort(proba, axis=1)[:, -2:]
    clear = top2[:, 1] - top2[:, 0] > 1e-9
    np.testing.assert_array_equal(predict(converted, X)[clear],
                                  np.ravel(model.predict(X))[clear])


def test_cross_entropy_string_labels_scale_and_bias():
    X, y_class, y_reg = make_data(3, n_samples=300, n_features=4)
    probability = 1 / (1 + np.exp(-y_reg))
    model = catboost.CatBoost({"loss_function": "CrossEntropy", **COMMON}).fit(X, probability)
    assert_close(predict_raw(from_model(model), X), raw(model, X))
    labels = np.where(y_class == 1, "yes", "no")
    named = catboost.CatBoostClassifier(**COMMON).fit(X, labels)
    named.set_scale_and_bias(1.7, [-0.4])
    converted = from_model(named)
    assert converted.classes == ("no", "yes")
    assert_close(predict_raw(converted, X), raw(named, X))
    np.testing.assert_array_equal(predict(converted, X), named.predict(X))


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("kind,n_classes", [("regressor", 2), ("classifier", 2),
                                            ("classifier", 3)])
def test_tree_shap_equals_catboost_shap_values(policy, kind, n_classes):
    model, X, y = fit(kind, n_classes=n_classes, grow_policy=policy)
    values, expected = catboost_shap(model, X, y)
    extra = tree_shap(model, X).extra
    assert_close(extra["expected_value"], expected)
    if policy == "SymmetricTree" or n_classes > 2:
        assert_close(extra["shap_values"], values)
        return
    # CatBoost's ShapValues of a one-dimensional model with non-symmetric trees do not
    # add up to its prediction (catboost/catboost#2136, open), so they are no Shapley
    # decomposition to compare with; sapwood's add up.
    raw_output = raw(model, X)
    assert np.abs(values.sum(axis=1) + expected - raw_output).max() > 1e-3
    assert_close(extra["shap_values"].sum(axis=1) + extra["expected_value"], raw_output)


def test_tree_shap_with_scale_and_bias():
    # CatBoost refuses ShapValues when the scale is not 1; sapwood's are the scale times
    # CatBoost's for the unscaled model, and the expected value moves with the bias.
    model, X, y = fit("regressor")
    values, expected = catboost_shap(model, X, y)
    bias = model.get_scale_and_bias()[1]
    model.set_scale_and_bias(2.0, [0.5])
    with pytest.raises(catboost.CatBoostError, match="Non-identity"):
        catboost_shap(model, X, y)
    extra = tree_shap(model, X).extra
    assert_close(extra["shap_values"], 2.0 * values)
    assert_close(extra["expected_value"], 2.0 * (expected - bias) + 0.5)
    assert_close(extra["shap_values"].sum(axis=1) + extra["expected_value"], raw(model, X))


@pytest.mark.parametrize("kind,n_classes", [("regressor", 2), ("classifier", 3)])
def test_interaction_values_equal_catboost(kind, n_classes):
    model, X, y = fit(kind, n_classes=n_classes)
    X, y = X[:40], y[:40]
    theirs = model.get_feature_importance(catboost.Pool(X, y), type="ShapInteractionValues")
    ours = tree_shap(model, X, interactions=True).extra["interaction_values"]
    if theirs.ndim == 4:  # (n, classes, features + 1, features + 1)
        theirs = np.moveaxis(theirs, 1, 3)
    assert_close(ours, theirs[:, :-1, :-1])


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("kind,n_classes", [("regressor", 2), ("classifier", 3)])
def test_prediction_values_change(policy, kind, n_classes):
    model, X, y = fit(kind, n_classes=n_classes, grow_policy=policy)
    result = native_importance(model)
    assert result.method == "native_prediction_values_change"
    assert_close(result.importances_mean,
                 model.get_feature_importance(type="PredictionValuesChange"), atol=1e-9)
    assert_close(native_importance(model, normalize=True).importances_mean.sum(), 1.0)
    with pytest.raises(ValueError, match="no node impurities"):
        native_importance(model, "impurity")
    with pytest.raises(ValueError, match="CatBoost trees record no split gains, which "
                                         "kind 'gain' needs"):
        native_importance(model, "gain")


def test_files_json_and_cbm(tmp_path):
    model, X, y = fit("classifier", n_classes=3)
    model.save_model(tmp_path / "model.json", format="json")
    model.save_model(tmp_path / "model.cbm")
    reference = raw(model, X)
    for name in ("model.json", "model.cbm"):
        converted = from_model(tmp_path / name)
        assert_close(predict_raw(converted, X), reference)
        assert converted.classes == (0, 1, 2)
    # A sapwood file keeps what the importance needs.
    sapwood.save(from_model(tmp_path / "model.json"), tmp_path / "model.sapwood")
    assert_close(native_importance(tmp_path / "model.sapwood").importances_mean,
                 model.get_feature_importance(type="PredictionValuesChange"), atol=1e-9)
    assert_close(from_model(tmp_path / "model.json", iteration_range=(0, 5))
                 .raw_predict(X), model.predict(X, prediction_type="RawFormulaVal",
                                                ntree_end=5))


def test_json_reads_without_catboost_and_cbm_says_what_to_install(tmp_path):
    model, X, _ = fit("regressor")
    model.save_model(tmp_path / "model.json", format="json")
    model.save_model(tmp_path / "model.cbm")
    np.save(tmp_path / "X.npy", X)
    script = textwrap.dedent(f"""
        import sys
        sys.modules["catboost"] = None  # import catboost now raises ImportError
        import numpy as np
        import sapwood
        from sapwood.adapters import predict_raw
        folder = {str(tmp_path)!r}
        np.save(folder + "/ours.npy", predict_raw(sapwood.from_model(folder + "/model.json"),
                                                  np.load(folder + "/X.npy")))
        try:
            sapwood.from_model(folder + "/model.cbm")
        except ImportError as error:
            print(error)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert "pip install 'sapwood[catboost]'" in done.stdout
    assert_close(np.load(tmp_path / "ours.npy"), raw(model, X))


def test_json_files_are_told_apart(tmp_path):
    model, X, _ = fit("regressor")
    path = tmp_path / "model.json"
    model.save_model(path, format="json")
    assert from_model(path).kind.library == "catboost"
    unknown = tmp_path / "other.json"
    unknown.write_text(json.dumps({"trees": [], "name": "something"}))
    with pytest.raises(FormatError, match="not a model sapwood knows.*'trees', 'name'"):
        from_model(unknown)


def test_unrepresentable_features_and_losses_are_named(tmp_path):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x": rng.normal(size=200), "colour": rng.choice(list("rgb"), 200),
                          "shape": rng.choice(list("st"), 200)})
    y = frame["x"] + (frame["colour"] == "r")
    # CTRs of colour (one-hot splits are read: test_catboost_categorical.py).
    model = catboost.CatBoostRegressor(one_hot_max_size=2, **COMMON).fit(
        frame, y, cat_features=["colour", "shape"])
    with pytest.raises(ValueError, match=r"categorical features \(column 1 \('colour'\)"):
        from_model(model)
    text = pd.DataFrame({"x": frame["x"], "note": rng.choice(["a b", "b c", "c d"], 200)})
    model = catboost.CatBoostClassifier(**COMMON).fit(text, (y > 0.5).astype(int),
                                                      text_features=["note"])
    with pytest.raises(ValueError, match=r"takes text features \(note\)"):
        from_model(model)
    poisson = catboost.CatBoostRegressor(loss_function="Poisson", **COMMON).fit(
        frame[["x"]], rng.poisson(1.0, 200))
    with pytest.raises(ValueError, match="loss_function 'Poisson'"):
        from_model(poisson)


def test_values_that_change_predictions_are_checked(tmp_path):
    model, _, _ = fit("regressor")
    path = tmp_path / "model.json"
    model.save_model(path, format="json")
    document = json.loads(path.read_text())

    def refused(change, phrase):
        damaged = json.loads(json.dumps(document))
        change(damaged)
        path.write_text(json.dumps(damaged))
        with pytest.raises(FormatError, match=phrase):
            from_model(path)

    def leaf(d):
        d["oblivious_trees"][3]["leaf_values"][5] = float("nan")

    def border(d):
        d["oblivious_trees"][2]["splits"][1]["border"] = 1e300

    def treatment(d):
        d["features_info"]["float_features"][1]["nan_value_treatment"] = "AsMaybe"

    def weight(d):
        d["oblivious_trees"][0]["leaf_weights"][2] = -1

    def scale(d):
        d["scale_and_bias"][0] = float("inf")

    refused(leaf, r"tree 3: leaf_values\[5\] must be a finite number")
    refused(border, r"tree 2: splits\[1\].border 1e\+300 is outside float32")
    refused(treatment, r"float_features\[1\].nan_value_treatment must be one of")
    refused(weight, r"tree 0: leaf_weights\[2\] is negative")
    refused(scale, "scale_and_bias scale must be a finite number")


def test_permutation_and_cli(tmp_path):
    from sapwood.cli import main

    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"a": rng.normal(size=240), "b": rng.normal(size=240),
                          "noise": rng.normal(size=240)})
    frame["y"] = 2 * frame["a"] + frame["b"] + 0.1 * rng.normal(size=240)
    model = catboost.CatBoostRegressor(**COMMON).fit(frame[["a", "b", "noise"]], frame["y"])
    X, y = frame[["a", "b", "noise"]], frame["y"]
    result = permutation_importance(model, X, y, scoring="r2", random_state=0)
    direct = sklearn_permutation(model, X, y, scoring="r2", n_repeats=5, random_state=0)
    assert_close(result.importances_mean, direct.importances_mean, atol=1e-9)
    assert result.importances_mean[0] > result.importances_mean[1] > \
        abs(result.importances_mean[2])
    frame.to_csv(tmp_path / "data.csv", index=False)
    for name, options in (("model.cbm", {}), ("model.json", {"format": "json"})):
        model.save_model(tmp_path / name, **options)
        assert main(["explain", str(tmp_path / "data.csv"), "--target", "y", "--model",
                     str(tmp_path / name), "--methods", "permutation,shap",
                     "--json"]) == 0


def test_tree_shap_with_empty_nodes(monkeypatch):
    # Deep oblivious trees splitting one feature again and again hold nodes no training
    # row reaches (x > 1 then x <= 0): such a cold branch carries no weight, and its
    # leaves once gave 0 / 0 (NaN for every row). Both of TreeSHAP's paths (per-leaf
    # tables for many rows, Algorithm 2) equal CatBoost's ShapValues.
    import sapwood.importance._shap as shap_module

    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 2))
    y = np.sin(3 * X[:, 0]) + 0.1 * X[:, 1]
    model = catboost.CatBoostRegressor(**{**COMMON, "depth": 6}).fit(X, y)
    assert (from_model(model).trees[0].cover == 0).any()
    values, expected = catboost_shap(model, X, y)
    assert_close(tree_shap(model, X).extra["shap_values"], values, atol=1e-12)
    assert_close(tree_shap(model, X[:30]).extra["shap_values"], values[:30], atol=1e-12)
    monkeypatch.setattr(shap_module, "_TABLE_BUDGET", 0)
    assert_close(tree_shap(model, X).extra["shap_values"], values, atol=1e-12)
