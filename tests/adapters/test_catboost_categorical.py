"""CatBoost models with one-hot categorical features, against CatBoost's own numbers.

CatBoost tests a one-hot split as ``hash(text) == value`` (the low 32 bits of
CityHash64 of the category's text); sapwood keeps the hashes as the features'
category labels and hashes the data's labels to match them, so models read from the
object, a .cbm file and a JSON file (with or without the training pool's hash map)
predict the same. Raw outputs are compared bit for bit (CatBoost's float64 sum, then
the bias: the ``float64_base_last`` accumulation).
"""

import json
import random

import numpy as np
import pandas as pd
import pytest
from sklearn.inspection import permutation_importance as sklearn_permutation
from sklearn.metrics import r2_score
from sklearn.model_selection import train_test_split

import sapwood
from sapwood import FormatError
from sapwood._cityhash import catboost_hash, city_hash64
from sapwood.adapters import from_model, predict, predict_proba, predict_raw
from sapwood.importance import permutation_importance, tree_shap
from sapwood.importance._gain import native_importance

from ._data import assert_close
from .test_fuzz_readers import _fuzz_json_values
from .test_hostile_files import check_refused

catboost = pytest.importorskip("catboost")

COMMON = dict(iterations=15, depth=4, verbose=0, thread_count=1, random_seed=0,
              allow_writing_files=False, one_hot_max_size=10)
POLICIES = ["SymmetricTree", "Depthwise", "Lossguide"]
CATEGORICAL = ["colour", "size"]
COLOURS = ["red", "green", "blue", "é", "日本"]
SIZES = [3, -7, 11, 123456789]


def frame(seed, n=400):
    """A float column with missing values, a text and an integer categorical column."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"x": rng.normal(size=n), "colour": rng.choice(COLOURS, n),
                      "size": rng.choice(SIZES, n), "z": rng.normal(size=n)})
    X.loc[rng.random(n) < 0.1, "x"] = np.nan
    signal = (np.nan_to_num(X["x"]) + 1.5 * (X["colour"] == "red") - (X["colour"] == "日本")
              + 0.8 * (X["size"] == -7) + 0.3 * X["z"])
    return X, signal.to_numpy()


def unseen(X):
    """``X`` with categories the model never saw in both categorical columns."""
    X = X.copy()
    X.loc[X.index[:25], "colour"] = "purple"
    X.loc[X.index[20:40], "size"] = 999
    return X


def fit(kind, seed=0, **options):
    X, signal = frame(seed)
    options = {**COMMON, **options}
    if kind == "regressor":
        model, y = catboost.CatBoostRegressor(**options), signal
    elif kind == "binary":
        model, y = catboost.CatBoostClassifier(**options), (signal > 0.3).astype(int)
    else:
        model = catboost.CatBoostClassifier(**options)
        y = np.digitize(signal, np.quantile(signal, [0.33, 0.66]))
    model.fit(X, y, cat_features=CATEGORICAL)
    return model, X, y


def raw(model, X):
    return model.predict(X, prediction_type="RawFormulaVal")


def catboost_shap(model, X):
    values = model.get_feature_importance(catboost.Pool(X, cat_features=CATEGORICAL),
                                          type="ShapValues")
    if values.ndim == 3:  # (n, classes, features + 1)
        return np.moveaxis(values[:, :, :-1], 1, 2), values[0, :, -1]
    return values[:, :-1], values[0, -1]


def test_city_hash_equals_catboost():
    # CatBoost hashes a group id's text with the full CityHash64 (numeric texts are
    # read as numbers there) and a categorical value's with its low 32 bits, which a
    # model saved with its pool lists next to the text.
    rng = random.Random(0)
    alphabet = "abcXYZ019 _-é日本語🙂\x00\n"
    texts = [""] + ["".join(rng.choice(alphabet) for _ in range(n))
                    for n in list(range(1, 80)) + [100, 127, 128, 129, 200, 300]]
    texts += ["x" * n for n in range(60, 200, 7)] + ["Größe", "🙂" * 20]
    texts = [t for t in texts if not _is_number(t)]
    theirs = [int(catboost.Pool(np.zeros((1, 1)), group_id=[t]).get_group_id_hash()[0])
              for t in texts]
    assert [city_hash64(t.encode("utf-8")) for t in texts] == theirs
    values = ["red", "é", "日本", "3", "-7", "123456789", "0", "a" * 70, "🙂", "nan"]
    X = pd.DataFrame({"c": values * 3})
    model = catboost.CatBoostRegressor(iterations=1, depth=1, verbose=0,
                                       allow_writing_files=False).fit(
        X, np.arange(30.0), cat_features=[0])
    document = json.loads(_saved_json(model, X))
    pairs = {e["value"]: e["hash"] for e in document["features_info"]["cat_features_hash"]}
    assert pairs == {value: catboost_hash(value) for value in values}


def _is_number(text):
    try:
        float(text)
    except ValueError:
        return False
    return True


def _saved_json(model, X=None):
    import os
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "model.json")
        pool = None if X is None else catboost.Pool(X, cat_features=list(
            model.get_cat_feature_indices()))
        model.save_model(path, format="json", pool=pool)
        with open(path) as stream:
            return stream.read()


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("kind", ["regressor", "binary", "multiclass"])
def test_raw_output_object_cbm_and_json(kind, policy, tmp_path):
    model, X, _ = fit(kind, grow_policy=policy)
    X_new = unseen(frame(1)[0])
    expected = raw(model, X_new)
    model.save_model(tmp_path / "model.cbm")
    model.save_model(tmp_path / "model.json", format="json")
    (tmp_path / "pool.json").write_text(_saved_json(model, X))
    converted = from_model(model)
    assert converted.has_categorical
    assert [c is not None for c in converted.categories] == [False, True, True, False]
    for source in (model, tmp_path / "model.cbm", tmp_path / "model.json",
                   tmp_path / "pool.json"):
        ensemble = from_model(source)
        assert ensemble.categories == converted.categories
        np.testing.assert_array_equal(predict_raw(ensemble, X_new), expected)
    # pandas category columns, and the categories as text of a sapwood file.
    as_category = X_new.astype({"colour": "category", "size": "category"})
    np.testing.assert_array_equal(predict_raw(converted, as_category), expected)
    sapwood.save(converted, tmp_path / "model.sapwood")
    np.testing.assert_array_equal(predict_raw(sapwood.load(tmp_path / "model.sapwood"), X_new),
                                  expected)
    if kind != "regressor":
        assert_close(predict_proba(converted, X_new), model.predict_proba(X_new), atol=1e-12)
        assert converted.classes == tuple(model.classes_)
    else:
        np.testing.assert_array_equal(predict(converted, X_new), model.predict(X_new))


def test_unseen_and_missing_categories_go_the_not_equal_way():
    model, X, _ = fit("regressor")
    converted = from_model(model)
    rows = X.iloc[:60].copy()
    # CatBoost refuses a missing categorical value: sapwood sends it where CatBoost
    # sends a category it never saw (every one-hot split's not-equal side).
    with pytest.raises(catboost.CatBoostError, match="NaN values should be converted"):
        raw(model, rows.assign(colour=np.nan))
    never_seen = raw(model, rows.assign(colour="never seen", size=424242))
    for missing in (rows.assign(colour=None, size=np.nan),
                    rows.astype({"colour": "category"}).assign(
                        colour=pd.Categorical([None] * 60), size=np.nan)):
        np.testing.assert_array_equal(predict_raw(converted, missing), never_seen)
    # Every one-hot category of the training data is among the labels; the others
    # (the model never split on them) behave like unseen ones.
    known = set(converted.categories[1])
    assert known <= {catboost_hash(c) for c in COLOURS}
    for colour in set(COLOURS) - {c for c in COLOURS if catboost_hash(c) in known}:
        np.testing.assert_array_equal(
            predict_raw(converted, rows.assign(colour=colour)),
            raw(model, rows.assign(colour="never seen")))


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("kind", ["regressor", "multiclass"])
def test_tree_shap_equals_catboost_shap_values(kind, policy):
    model, X, _ = fit(kind, grow_policy=policy)
    X_new = unseen(frame(2)[0])
    values, expected = catboost_shap(model, X_new)
    extra = tree_shap(model, X_new).extra
    assert np.isfinite(extra["shap_values"]).all()
    if policy == "SymmetricTree" or kind == "multiclass":
        assert_close(extra["expected_value"], expected, atol=1e-9)
        assert_close(extra["shap_values"], values, atol=1e-9)
        return
    # CatBoost's ShapValues of one-dimensional non-symmetric trees do not add up to its
    # prediction (catboost/catboost#2136; see test_catboost.py), and here its expected
    # value is not the trees' leaf-weighted mean either; sapwood's add up to the
    # prediction from that mean.
    document = json.loads(_saved_json(model))
    mean = document["scale_and_bias"][1][0] + sum(
        np.average([v for _, v in _leaves(tree)], weights=[w for w, _ in _leaves(tree)])
        for tree in document["trees"])
    assert_close(extra["expected_value"], mean, atol=1e-9)
    assert_close(extra["shap_values"].sum(axis=1) + extra["expected_value"],
                 raw(model, X_new), atol=1e-9)


def _leaves(node):
    """(weight, value) of a nested CatBoost JSON tree's leaves."""
    if "split" in node:
        return _leaves(node["left"]) + _leaves(node["right"])
    return [(node["weight"], node["value"])]


def test_interaction_values_equal_catboost():
    model, X, _ = fit("regressor")
    X = X.iloc[:40]
    theirs = model.get_feature_importance(catboost.Pool(X, cat_features=CATEGORICAL),
                                          type="ShapInteractionValues")
    ours = tree_shap(model, X, interactions=True).extra["interaction_values"]
    assert_close(ours, theirs[:, :-1, :-1], atol=1e-9)


@pytest.mark.parametrize("policy", POLICIES)
def test_prediction_values_change(policy, tmp_path):
    model, X, _ = fit("multiclass", grow_policy=policy)
    theirs = model.get_feature_importance(type="PredictionValuesChange")
    assert theirs[1] > 0 and theirs[2] > 0  # the categorical features matter
    assert_close(native_importance(model).importances_mean, theirs, atol=1e-9)
    model.save_model(tmp_path / "model.cbm")
    assert_close(native_importance(tmp_path / "model.cbm").importances_mean, theirs,
                 atol=1e-9)


def test_permutation_and_cli(tmp_path, capsys):
    from sapwood.cli import main

    model, X, y = fit("regressor")
    X_test, signal = frame(3, n=300)
    y_test = signal + 0.1 * np.random.default_rng(3).normal(size=300)
    ours = permutation_importance(model, X_test, y_test, scoring="r2", random_state=0)
    direct = sklearn_permutation(model, X_test, y_test, scoring="r2", n_repeats=5,
                                 random_state=0)
    assert_close(ours.importances_mean, direct.importances_mean, atol=1e-9)
    assert ours.importances_mean[1] > 0.05  # colour
    data = unseen(X_test).assign(y=y_test)
    data.loc[data.index[:5], "x"] = np.nan
    data.to_csv(tmp_path / "data.csv", index=False)
    model.save_model(tmp_path / "model.cbm")
    capsys.readouterr()
    assert main(["explain", str(tmp_path / "data.csv"), "--target", "y", "--model",
                 str(tmp_path / "model.cbm"), "--methods", "permutation,shap",
                 "--json", "--row", "50", "--row", "60"]) == 0
    report = json.loads(capsys.readouterr().out)
    # The CLI reads the text and integer categories as CatBoost does: its score on the
    # held-out rows (train_test_split, seed 0) is CatBoost's own.
    _, X_held, _, y_held = train_test_split(data.drop(columns="y"), data["y"],
                                            test_size=0.25, random_state=0)
    assert_close(report["model"]["score"], r2_score(y_held, model.predict(X_held)),
                 atol=1e-12)
    assert "colour" in json.dumps(report["measures"])
    # Explained rows show the data's labels (the model keeps only their hashes).
    shown = {(c["feature"], c["value"]) for row in report["rows"]
             for c in row["contributions"]}
    assert {("colour", data["colour"].iloc[k]) for k in (50, 60)} <= shown
    assert {("size", str(data["size"].iloc[k])) for k in (50, 60)} <= shown


def test_ctr_text_and_losses_are_refused_by_name():
    X, signal = frame(0)
    model = catboost.CatBoostRegressor(**{**COMMON, "one_hot_max_size": 2}).fit(
        X, signal, cat_features=CATEGORICAL)
    with pytest.raises(FormatError, match=r"CTRs .* \(column 1 \('colour'\), column 2 "
                                          r"\('size'\)\).*one_hot_max_size"):
        from_model(model)


def _document(model):
    return json.loads(_saved_json(model))


def test_values_read_from_the_file_are_checked(tmp_path):
    model, _, _ = fit("regressor", iterations=3)
    document = _document(model)
    path = tmp_path / "model.json"

    def refused(change, phrase):
        damaged = json.loads(json.dumps(document))
        change(damaged)
        path.write_text(json.dumps(damaged))
        with pytest.raises(FormatError, match=phrase):
            from_model(path)

    def one_hot(d):
        return next((t, s) for t, tree in enumerate(d["oblivious_trees"])
                    for s in tree["splits"] if s["split_type"] == "OneHotFeature")

    def unknown_value(d):
        one_hot(d)[1]["value"] = 12345

    def big_value(d):
        one_hot(d)[1]["value"] = 2**40

    def unknown_feature(d):
        one_hot(d)[1]["cat_feature_index"] = 7

    def repeated(d):
        values = d["features_info"]["categorical_features"][0]["values"]
        values.append(values[0])

    def text_value(d):
        d["features_info"]["categorical_features"][1]["values"][0] = "red"

    def same_column(d):
        d["features_info"]["categorical_features"][0]["flat_feature_index"] = 0

    tree = one_hot(document)[0]
    refused(unknown_value, rf"tree {tree}: splits\[\d\].value 12345 is not one of its "
                           "feature's values")
    refused(big_value, r"value must be a 32-bit integer; got 1099511627776")
    refused(unknown_feature, r"cat_feature_index 7 is not a listed categorical feature")
    refused(repeated, r"categorical_features\[0\].values repeats a value")
    refused(text_value, r"categorical_features\[1\].values\[0\] must be a 32-bit integer")
    refused(same_column, r"categorical_features\[0\] repeats feature_index 0 or "
                         "flat_feature_index 0")


def test_category_sets_are_bounded_by_the_file(tmp_path):
    # 20,000 one-hot values and 3,000 one-split trees on the last of them (480 KB):
    # each set takes 626 words, 1.9 million words in all, more than one per byte.
    values = list(range(20_000))
    split = {"cat_feature_index": 0, "split_type": "OneHotFeature", "value": values[-1]}
    document = {
        "features_info": {"categorical_features": [{
            "feature_index": 0, "flat_feature_index": 0, "feature_id": "c",
            "values": values}]},
        "model_info": {"params": {"loss_function": {"type": "RMSE"}}},
        "scale_and_bias": [1, [0]],
        "oblivious_trees": [{"leaf_values": [0.5, 1.5], "leaf_weights": [1, 1],
                             "splits": [split]}] * 3000}
    path = tmp_path / "model.json"
    path.write_text(json.dumps(document, separators=(",", ":")))
    check_refused(path, "category sets take 1878000 words, more than 1 per byte")
    # The same model with 10 trees reads, and routes by the hash.
    document["oblivious_trees"] = document["oblivious_trees"][:10]
    path.write_text(json.dumps(document))
    ensemble = from_model(path)
    assert ensemble.categories == (tuple(values),)
    X = pd.DataFrame({"c": pd.Categorical(["x", "y"])})
    np.testing.assert_array_equal(predict_raw(ensemble, X), [5.0, 5.0])


def test_fuzzed_one_hot_json(tmp_path_factory):
    model, _, _ = fit("binary", iterations=2, depth=2)
    document = _document(model)
    info = document["model_info"]
    _fuzz_json_values({**document, "model_info": {
        "params": {"loss_function": info["params"]["loss_function"]},
        "class_params": info["class_params"]}}, "catboost-json", tmp_path_factory)
