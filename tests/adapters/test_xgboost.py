"""XGBoost models and saved files: margins, transformed predictions and get_score.

XGBoost accumulates margins in float32, sapwood in float64 from the same float32 leaf
values, so the two agree to float32 rounding: ``1e-6`` absolute plus ``1e-6`` relative.
"""

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from sapwood import FormatError
from sapwood.adapters import from_model, predict, predict_proba, predict_raw
from sapwood.importance._gain import native_importance

from ._data import assert_close, datasets, make_data

xgb = pytest.importorskip("xgboost")

SETTINGS = settings(max_examples=5, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
KINDS = ("weight", "gain", "cover", "total_gain", "total_cover")
REGRESSION = {
    "reg:squarederror": lambda y: y,
    "reg:absoluteerror": lambda y: y,
    "count:poisson": lambda y: np.exp(y / 4),
    "reg:gamma": lambda y: np.exp(y / 4),
    "reg:tweedie": lambda y: np.exp(y / 4),
    "reg:logistic": lambda y: 1 / (1 + np.exp(-y)),
}


def close(ours, theirs):
    assert_close(ours, theirs, rtol=1e-6, atol=1e-6)


def check_importances(model, booster, n_features):
    for kind in KINDS:
        score = booster.get_score(importance_type=kind)
        names = booster.feature_names or [f"f{j}" for j in range(n_features)]
        reference = np.array([score.get(name, 0.0) for name in names])
        close(native_importance(model, kind).importances_mean, reference)


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("booster", ["gbtree", "dart"])
@SETTINGS
@given(data=datasets)
def test_classifier(n_classes, booster, data):
    X, _, y_reg = data
    y = np.digitize(y_reg, np.quantile(y_reg, np.linspace(0, 1, n_classes + 1)[1:-1]))
    model = xgb.XGBClassifier(n_estimators=12, max_depth=3, booster=booster,
                              **({"rate_drop": 0.2} if booster == "dart" else {}),
                              n_jobs=1, random_state=0).fit(X, y)
    converted = from_model(model)
    close(predict_raw(converted, X), model.predict(X, output_margin=True))
    proba = predict_proba(converted, X)
    close(proba, model.predict_proba(X))
    top2 = np.sort(proba, axis=1)[:, -2:]
    clear = top2[:, 1] - top2[:, 0] > 1e-5  # labels only where float32 cannot flip them
    np.testing.assert_array_equal(predict(converted, X)[clear], model.predict(X)[clear])
    check_importances(model, model.get_booster(), X.shape[1])
    close(native_importance(model, "gain", normalize=True).importances_mean,
          model.feature_importances_)


@pytest.mark.parametrize("objective", sorted(REGRESSION))
@SETTINGS
@given(data=datasets)
def test_regressor(objective, data):
    X, _, y = data
    model = xgb.XGBRegressor(n_estimators=10, max_depth=3, objective=objective, n_jobs=1,
                             random_state=0).fit(X, REGRESSION[objective](y))
    converted = from_model(model)
    close(predict_raw(converted, X), model.predict(X, output_margin=True))
    close(predict(converted, X), model.predict(X))
    check_importances(model, model.get_booster(), X.shape[1])


def test_random_forest_mode_and_multi_target():
    X, y, y_reg = make_data(7, n_features=5)
    forest = xgb.XGBRFRegressor(n_estimators=6, max_depth=4, n_jobs=1).fit(X, y_reg)
    close(predict(from_model(forest), X), forest.predict(X))
    two = xgb.XGBRegressor(n_estimators=5, max_depth=3, n_jobs=1).fit(
        X, np.column_stack([y_reg, -2 * y_reg]))
    close(predict(from_model(two), X), two.predict(X))
    y3 = make_data(7, n_features=5, n_classes=3)[1]
    multi = xgb.XGBClassifier(n_estimators=4, objective="multi:softmax", n_jobs=1).fit(X, y3)
    np.testing.assert_array_equal(predict(from_model(multi.get_booster()), X),
                                  multi.get_booster().predict(xgb.DMatrix(X)))


@pytest.mark.parametrize("suffix", ["json", "ubj"])
def test_saved_files_convert_like_the_booster(tmp_path, suffix):
    X, y, _ = make_data(8, n_features=4)
    booster = xgb.train({"objective": "multi:softprob", "num_class": 2, "max_depth": 3,
                         "nthread": 1}, xgb.DMatrix(X, label=y, feature_names=list("abcd")),
                        num_boost_round=6)
    path = tmp_path / f"model.{suffix}"
    booster.save_model(path)
    from_file = from_model(str(path))
    assert from_file.feature_names == tuple("abcd")
    close(predict_raw(from_file, X),
          booster.predict(xgb.DMatrix(X, feature_names=list("abcd")), output_margin=True))
    for kind in KINDS:
        score = booster.get_score(importance_type=kind)
        close(native_importance(path, kind).importances_mean,
              [score.get(name, 0.0) for name in "abcd"])


def test_early_stopping():
    X, y, _ = make_data(9, n_samples=300, nan_fraction=0.0)
    X_valid, y_valid, _ = make_data(10, n_samples=200, nan_fraction=0.0)
    model = xgb.XGBClassifier(n_estimators=60, learning_rate=0.8, early_stopping_rounds=2,
                              max_depth=4, n_jobs=1).fit(
        X, y, eval_set=[(X_valid, 1 - y_valid)], verbose=False)
    assert model.best_iteration < 59
    # The wrapper predicts with the best iteration, and sapwood reads a Booster so too
    # (its best_iteration attribute); iteration_range=(0, 0) reads all, as a Booster's
    # own predict (and get_score) do.
    converted = from_model(model)
    assert converted.n_trees == model.best_iteration + 1
    close(predict_raw(converted, X), model.predict(X, output_margin=True))
    booster = model.get_booster()
    close(predict_raw(from_model(booster), X), model.predict(X, output_margin=True))
    close(predict_raw(from_model(booster, iteration_range=(0, 0)), X),
          booster.predict(xgb.DMatrix(X), output_margin=True))
    check_importances(model, booster, X.shape[1])


def test_refusals_name_the_problem():
    X, y, _ = make_data(11, n_features=3)
    # Categorical splits are read (tests/adapters/test_categorical_models.py).
    zero_missing = xgb.XGBRegressor(n_estimators=2, missing=0.0, n_jobs=1).fit(X, y)
    with pytest.raises(ValueError, match="missing"):
        from_model(zero_missing)
    hinge = xgb.XGBClassifier(n_estimators=2, objective="binary:hinge", n_jobs=1).fit(X, y)
    with pytest.raises(ValueError, match="binary:hinge"):
        from_model(hinge)
    linear = xgb.XGBRegressor(n_estimators=2, booster="gblinear", n_jobs=1).fit(
        np.nan_to_num(X), y)
    with pytest.raises(ValueError, match="gblinear"):
        from_model(linear)


def test_pruned_nodes_are_dropped():
    X, y, _ = make_data(12)
    model = xgb.XGBRegressor(n_estimators=3, max_depth=6, gamma=2.0, n_jobs=1).fit(X, y)
    document = json.loads(model.get_booster().save_raw("json"))
    converted = from_model(model)
    assert sum(t.node_count for t in converted.trees) <= sum(
        int(t["tree_param"]["num_nodes"]) for t in
        document["learner"]["gradient_booster"]["model"]["trees"])
    close(predict(converted, X), model.predict(X))


def test_damaged_files_raise_format_error(tmp_path):
    X, y, _ = make_data(13)
    booster = xgb.train({"max_depth": 2, "nthread": 1}, xgb.DMatrix(X, label=y), 3)
    rng = np.random.default_rng(0)
    for suffix in ("json", "ubj"):
        path = tmp_path / f"model.{suffix}"
        booster.save_model(path)
        data = path.read_bytes()
        for trial in range(60):
            damaged = bytearray(data[:rng.integers(1, len(data))] if trial % 2 else data)
            if trial % 2 == 0:
                for position in rng.integers(0, len(damaged), 3):
                    damaged[position] = rng.integers(0, 256)
            path.write_bytes(bytes(damaged))
            try:
                from_model(str(path))
            except (FormatError, ValueError):
                pass  # FormatError, or a clear refusal of what the damage now says


def test_the_kind_of_model_is_recorded():
    X, y, y_reg = make_data(8, n_features=4)
    booster = xgb.XGBClassifier(n_estimators=3, n_jobs=1).fit(X, y)
    kind = from_model(booster).kind
    assert (kind.library, kind.model, kind.objective, kind.family) == (
        "xgboost", "XGBClassifier", "binary:logistic", "boosting")
    assert kind.library_version == xgb.__version__
    assert not kind.bagged and not kind.node_impurity
    forest = from_model(xgb.XGBRFRegressor(n_estimators=3, n_jobs=1).fit(X, y_reg))
    assert forest.kind.family == "forest" and forest.bootstrap is None


def _same_trees(ours, theirs):
    assert len(ours.trees) == len(theirs.trees)
    for a, b in zip(ours.trees, theirs.trees, strict=True):
        for name, array in a.to_dict().items():
            other = b.to_dict()[name]
            if isinstance(array, np.ndarray):
                assert array.dtype == other.dtype and array.shape == other.shape, name
                assert np.array_equal(array, other, equal_nan=True), name
            else:
                assert array == other, name
    assert np.array_equal(ours.tree_output, theirs.tree_output)
    assert np.array_equal(ours.tree_weights, theirs.tree_weights)


def _with_orphans(document, rng):
    """The document with an unreachable split (and its two leaves) inserted at a random
    place in every other tree, the ids after it shifted, as XGBoost keeps pruned nodes."""
    for k, tree in enumerate(document["learner"]["gradient_booster"]["model"]["trees"]):
        n = len(tree["left_children"])
        if k % 2 or n < 3:
            continue
        at = int(rng.integers(1, n + 1))

        def shift(ids, at=at):
            return [i + 3 if i >= at else i for i in ids]

        left, right = shift(tree["left_children"]), shift(tree["right_children"])
        for key, values in tree.items():
            if isinstance(values, list) and len(values) == n:
                tree[key] = values[:at] + values[at - 1:at] * 3 + values[at:]
        tree["left_children"] = left[:at] + [at + 1, -1, -1] + left[at:]
        tree["right_children"] = right[:at] + [at + 2, -1, -1] + right[at:]
        tree["split_indices"][at] = 0
        tree["tree_param"]["num_nodes"] = str(n + 3)
    return document


def test_all_trees_at_once_equal_tree_by_tree(monkeypatch):
    # _plain_trees converts every tree in one NumPy pass; it must give exactly the trees
    # _tree gives one by one, unreachable nodes dropped and the rest renumbered.
    from sapwood.adapters import _xgboost
    from sapwood.adapters._ubjson import loads

    X, y, _ = make_data(14)
    booster = xgb.XGBRegressor(n_estimators=8, max_depth=5, n_jobs=1).fit(X, y).get_booster()
    rng = np.random.default_rng(0)
    documents = [json.loads(booster.save_raw("json")), loads(bytes(booster.save_raw("ubj"))),
                 _with_orphans(json.loads(booster.save_raw("json")), rng)]
    fast = [_xgboost.from_xgboost_dict(document) for document in documents]
    trees = documents[2]["learner"]["gradient_booster"]["model"]["trees"]
    assert _xgboost._plain_trees(trees, X.shape[1]) is not None  # the fast path ran
    assert sum(t.node_count for t in fast[2].trees) < sum(len(t["left_children"])
                                                         for t in trees)
    monkeypatch.setattr(_xgboost, "_plain_trees", lambda raws, n_features: None)
    for document, ours in zip(documents, fast, strict=True):
        _same_trees(ours, _xgboost.from_xgboost_dict(document))
    np.testing.assert_array_equal(predict_raw(fast[2], X), predict_raw(fast[0], X))


def test_a_malformed_tree_is_named_as_tree_by_tree():
    # Any problem in one pass over all trees leaves them to _tree, whose message names
    # the tree and the node.
    X, y, _ = make_data(15)
    booster = xgb.XGBRegressor(n_estimators=4, max_depth=3, n_jobs=1).fit(X, y).get_booster()
    document = json.loads(booster.save_raw("json"))
    trees = document["learner"]["gradient_booster"]["model"]["trees"]
    trees[2]["left_children"][0] = len(trees[2]["left_children"]) + 5
    with pytest.raises(FormatError, match="tree 2: node 0 has a left child out of range"):
        from_model_dict(document)
    trees[2]["left_children"][0] = 1
    trees[3]["split_indices"] = trees[3]["split_indices"][:-1]
    with pytest.raises(FormatError, match="tree 3: tree array split_indices has shape"):
        from_model_dict(document)


def from_model_dict(document):
    from sapwood.adapters._xgboost import from_xgboost_dict

    return from_xgboost_dict(document)
