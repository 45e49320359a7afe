"""XGBoost vector-leaf trees (multi_strategy="multi_output_tree") and model files of
XGBoost 2.x and 3.x in JSON and UBJSON: the raw margin equals XGBoost's to float32
rounding; TreeSHAP adds up to it and, with background data, equals the Shapley values
of XGBoost's own margin computed from their definition (XGBoost has no
pred_contribs for vector-leaf trees)."""

from pathlib import Path

import numpy as np
import pytest

from sapwood.adapters import from_model, predict_proba, predict_raw
from sapwood.importance import permutation_importance, tree_shap
from tests.reference.naive_shap_interventional import naive_interventional_shap

from ._data import assert_close

xgb = pytest.importorskip("xgboost")

FIXTURES = Path(__file__).parent / "xgboost_versions"
FILES = sorted(p.name for p in FIXTURES.glob("xgboost*") if p.suffix in (".json", ".ubj"))


@pytest.mark.parametrize("name", FILES)
def test_files_of_xgboost_2_and_3_predict_their_margin(name):
    X = np.load(FIXTURES / "X.npy")
    margin = np.load(FIXTURES / (name.rsplit(".", 1)[0] + ".margin.npy"))
    ensemble = from_model(FIXTURES / name)
    assert ensemble.kind.library_version.split(".")[0] == name[len("xgboost")]
    assert_close(predict_raw(ensemble, X).reshape(margin.shape), margin, atol=2e-6)
    vector = "multi_output" in name
    if vector and name.startswith("xgboost2"):
        # XGBoost 2.x records no hessian sums in vector-leaf trees: no cover.
        with pytest.raises(ValueError, match="records no cover"):
            tree_shap(ensemble, X[:5])
        return
    result = tree_shap(ensemble, X[:40])
    total = result.extra["expected_value"] + result.extra["shap_values"].sum(axis=1)
    # SHAP values add up to the float64 sum of the trees (XGBoost's own margin rounds
    # to float32 after every tree: checked above to float32 rounding).
    assert_close(total, ensemble.raw_predict(X[:40]).reshape(total.shape), atol=1e-9)


def _data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    X[rng.random(X.shape) < 0.1] = np.nan
    filled = np.nan_to_num(X)
    Y = np.c_[filled[:, 0] + 0.1 * rng.normal(size=n), 2 * filled[:, 1] - filled[:, 3]]
    classes = np.digitize(filled[:, 0] + filled[:, 2], [-0.5, 0.5])
    return X, Y, classes


def _fitted(task):
    X, Y, classes = _data()
    params = {"n_estimators": 5, "max_depth": 3, "tree_method": "hist",
              "multi_strategy": "multi_output_tree"}
    if task == "regression":
        return xgb.XGBRegressor(**params).fit(X, Y), X
    return xgb.XGBClassifier(**params).fit(X, classes), X


@pytest.mark.parametrize("task", ["regression", "classification"])
def test_vector_leaf_models_predict_like_xgboost(task, tmp_path):
    model, X = _fitted(task)
    ensemble = from_model(model)
    n_outputs = 2 if task == "regression" else 3
    assert ensemble.n_trees == 5 * n_outputs
    margin = model.get_booster().predict(xgb.DMatrix(X), output_margin=True)
    assert_close(predict_raw(ensemble, X), margin, atol=1e-6)
    if task == "classification":
        assert_close(predict_proba(ensemble, X), model.predict_proba(X), atol=1e-6)
    for suffix in ("json", "ubj"):
        path = tmp_path / f"model.{suffix}"
        model.save_model(path)
        assert_close(predict_raw(path, X), margin, atol=1e-6)
    # XGBoost computes no contributions for these trees (were it to, compare them here).
    with pytest.raises(xgb.core.XGBoostError, match="multi-target tree"):
        model.get_booster().predict(xgb.DMatrix(X[:2]), pred_contribs=True)


@pytest.mark.parametrize("task", ["regression", "classification"])
def test_tree_shap_on_vector_leaves(task):
    model, X = _fitted(task)
    booster = model.get_booster()
    rows, background = X[:6], X[100:104]
    # Path-dependent: adds up to XGBoost's margin.
    result = tree_shap(model, X[:50])
    total = result.extra["expected_value"] + result.extra["shap_values"].sum(axis=1)
    assert_close(total, booster.predict(xgb.DMatrix(X[:50]), output_margin=True), atol=1e-5)
    # Interventional: the definition, every subset predicted by XGBoost itself.
    ours = tree_shap(model, rows, data=background).extra["shap_values"]
    theirs = naive_interventional_shap(
        lambda Z: booster.predict(xgb.DMatrix(Z.astype(np.float32)), output_margin=True),
        rows, background)
    assert_close(ours, theirs.reshape(ours.shape), atol=1e-5)


def test_permutation_runs_on_a_vector_leaf_regressor():
    model, X = _fitted("regression")
    _, Y, _ = _data()
    result = permutation_importance(model, X, Y, n_repeats=2, random_state=0)
    from sklearn.inspection import permutation_importance as sklearn_permutation

    theirs = sklearn_permutation(model, X, Y, n_repeats=2, random_state=0)
    assert_close(result.importances, theirs.importances, atol=1e-12)


def test_the_command_line_explains_a_vector_leaf_classifier_file(tmp_path):
    import contextlib
    import io
    import json

    pd = pytest.importorskip("pandas")
    from sapwood.cli import main

    X, _, classes = _data()
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    model = xgb.XGBClassifier(n_estimators=5, max_depth=3, tree_method="hist",
                              multi_strategy="multi_output_tree").fit(frame, classes)
    model.save_model(tmp_path / "model.ubj")
    frame["label"] = classes
    frame.to_csv(tmp_path / "data.csv", index=False)
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main(["explain", str(tmp_path / "data.csv"), "--target", "label", "--model",
                     str(tmp_path / "model.ubj"), "--methods", "gain,permutation,shap",
                     "--json"])
    assert code == 0, stderr.getvalue()
    document = json.loads(stdout.getvalue())
    assert list(document["measures"]) == ["gain", "permutation", "shap"]
    gain = {row["feature"]: row["importance"] for row in document["measures"]["gain"]}
    score = model.get_booster().get_score(importance_type="gain")
    assert gain == pytest.approx({name: score.get(name, 0.0) for name in "abcd"}, rel=1e-6)


@pytest.mark.parametrize("task", ["regression", "classification"])
@pytest.mark.parametrize("kind", ["weight", "gain", "cover", "total_gain", "total_cover"])
def test_native_importance_counts_each_vector_leaf_split_once(task, kind):
    from sapwood.importance import native_importance

    model, _ = _fitted(task)
    score = model.get_booster().get_score(importance_type=kind)
    ours = native_importance(model, kind)
    assert_close(ours.importances_mean,
                 [score.get(f"f{j}", 0.0) for j in range(4)], rtol=1e-6, atol=0)


def test_iteration_range_selects_vector_leaf_trees():
    model, X = _fitted("classification")
    margin = model.get_booster().predict(xgb.DMatrix(X), output_margin=True,
                                         iteration_range=(1, 3))
    ensemble = from_model(model, iteration_range=(1, 3))
    assert ensemble.n_trees == 2 * 3
    assert_close(predict_raw(ensemble, X), margin, atol=1e-6)


# XGBoost >= 3.3 grows categorical splits in vector-leaf trees (partitions, and one-hot
# splits with max_cat_to_onehot); the files come from XGBoost 3.4.1 (the tests run with
# an older XGBoost, see make_late_fixtures.py).
CATEGORICAL = ["vector_leaf_categorical_regression", "vector_leaf_categorical_softprob"]


@pytest.mark.parametrize("stem", CATEGORICAL)
@pytest.mark.parametrize("suffix", ["json", "ubj"])
def test_vector_leaf_trees_with_categorical_splits_give_xgboosts_margin(stem, suffix):
    pd = pytest.importorskip("pandas")
    codes = np.load(FIXTURES / "vector_leaf_categorical.X.npy")
    margin = np.load(FIXTURES / f"{stem}.margin.npy")
    ensemble = from_model(FIXTURES / f"{stem}.{suffix}")
    assert ensemble.has_categorical
    labels = ensemble.categories[2]
    assert labels == tuple(f"c{k}" for k in range(8))
    ours = predict_raw(ensemble, codes)
    np.testing.assert_array_equal(ours, margin.astype(np.float64))
    # The frame XGBoost predicted (text categories; missing ones NaN), read by label.
    colour = pd.Categorical.from_codes(np.nan_to_num(codes[:, 2], nan=-1).astype(int),
                                       categories=list(labels))
    frame = pd.DataFrame({"a": codes[:, 0], "b": codes[:, 1], "colour": colour})
    np.testing.assert_array_equal(predict_raw(ensemble, frame), ours)
    # One-hot splits (softprob) list one category a node, partitions several.
    sets = [len(tree.categories_left(node)) for tree in ensemble.trees
            for node in np.flatnonzero(tree.operator == 2) if tree.children_left[node] >= 0]
    assert sets and (max(sets) == 1) == stem.endswith("softprob")
    result = tree_shap(ensemble, codes[:40])
    total = result.extra["expected_value"] + result.extra["shap_values"].sum(axis=1)
    assert_close(total, ensemble.raw_predict(codes[:40]).reshape(total.shape), atol=1e-9)


def test_a_vector_leaf_category_list_must_lie_inside_the_file(tmp_path):
    import json

    from sapwood import FormatError

    document = json.loads((FIXTURES / f"{CATEGORICAL[0]}.json").read_text())
    tree = document["learner"]["gradient_booster"]["model"]["trees"][0]
    tree["categories_segments"][-1] = len(tree["categories"])
    path = tmp_path / "model.json"
    path.write_text(json.dumps(document))
    with pytest.raises(FormatError, match="tree 0: categories_segments / categories_sizes"):
        from_model(path)
