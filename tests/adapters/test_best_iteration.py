"""Boosters read as their libraries predict: an early-stopped XGBoost model saved to a
file, or held as a Booster, to its best iteration (as XGBoost's scikit-learn wrappers
predict it), all its trees on request; LightGBM to its best iteration; the Model line
says so (sapwood.adapters._iterations)."""

import json

import numpy as np
import pytest

import sapwood
from sapwood.adapters import predict_raw
from sapwood.adapters._iterations import stopped_early
from sapwood.report._models import describe_model, load_model

xgb = pytest.importorskip("xgboost")


@pytest.fixture(scope="module")
def stopped(tmp_path_factory):
    """An XGBoost classifier stopped early (best iteration well before the last), saved
    as JSON and UBJSON, and the data to predict."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 4))
    y = (X[:, 0] + 0.5 * X[:, 1] + rng.normal(size=400) > 0).astype(int)
    model = xgb.XGBClassifier(n_estimators=100, learning_rate=0.8, max_depth=3,
                              early_stopping_rounds=5, n_jobs=1, random_state=0)
    model.fit(X[:200], y[:200], eval_set=[(X[200:], y[200:])], verbose=False)
    assert model.best_iteration + 1 < model.get_booster().num_boosted_rounds()
    folder = tmp_path_factory.mktemp("stopped")
    for suffix in ("json", "ubj"):
        model.save_model(folder / f"model.{suffix}")
    return model, folder, X


@pytest.mark.parametrize("suffix", ["json", "ubj"])
def test_a_saved_early_stopped_model_reads_as_xgboost_predicts(stopped, suffix):
    model, folder, X = stopped
    path = folder / f"model.{suffix}"
    reference = xgb.XGBClassifier()
    reference.load_model(path)  # XGBoost's own reading of the file
    ensemble = sapwood.from_model(path)
    assert ensemble.n_trees == model.best_iteration + 1
    np.testing.assert_allclose(predict_raw(ensemble, X).ravel(),
                               reference.predict(X, output_margin=True), rtol=0, atol=1e-6)
    # All trees on request: the Booster's predict without an iteration range.
    booster = xgb.Booster(model_file=str(path))
    whole = sapwood.from_model(path, iteration_range=(0, 0))
    assert whole.n_trees == booster.num_boosted_rounds()
    np.testing.assert_allclose(predict_raw(whole, X).ravel(),
                               booster.predict(xgb.DMatrix(X), output_margin=True),
                               rtol=0, atol=1e-6)
    found = stopped_early(path)
    assert (found.read, found.total) == (model.best_iteration + 1,
                                         booster.num_boosted_rounds())
    assert found == stopped_early(booster) == stopped_early(model)


def test_old_files_with_best_ntree_limit(stopped, tmp_path):
    model, folder, X = stopped
    document = json.loads((folder / "model.json").read_text())
    attributes = document["learner"]["attributes"]
    attributes["best_ntree_limit"] = str(int(attributes.pop("best_iteration")) + 1)
    path = tmp_path / "old.json"
    path.write_text(json.dumps(document))
    np.testing.assert_allclose(predict_raw(sapwood.from_model(path), X).ravel(),
                               model.predict(X, output_margin=True), rtol=0, atol=1e-6)


def test_the_model_line_says_which_iterations(stopped):
    model, folder, _ = stopped
    path = folder / "model.json"
    text = describe_model(load_model(sapwood.from_model(path), path, stopped_early(path)))
    best = model.best_iteration
    assert f"{best + 1} trees" in text
    assert f"{best + 1} of {model.get_booster().num_boosted_rounds()} iterations, to early " \
           f"stopping's best_iteration {best}, as XGBoost predicts" in text
    assert f"best_iteration {best}" in describe_model(model)
    unstopped = xgb.XGBRegressor(n_estimators=3, n_jobs=1).fit(np.eye(4), np.arange(4.0))
    assert stopped_early(unstopped) is None and "iterations" not in describe_model(unstopped)


def test_lightgbm_reads_to_its_best_iteration():
    lgb = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(1)
    X = rng.normal(size=(400, 4))
    y = X[:, 0] + rng.normal(size=400)
    train, valid = lgb.Dataset(X[:200], y[:200]), lgb.Dataset(X[200:], y[200:])
    booster = lgb.train({"learning_rate": 0.8, "verbose": -1, "num_threads": 1}, train, 100,
                        valid_sets=[valid], keep_training_booster=True,
                        callbacks=[lgb.early_stopping(3, verbose=False)])
    found = stopped_early(booster)
    assert found.read == booster.best_iteration < found.total
    ensemble = sapwood.from_model(booster)
    np.testing.assert_allclose(sapwood.adapters.predict(ensemble, X), booster.predict(X),
                               rtol=1e-9, atol=1e-9)
    assert "as LightGBM predicts" in str(found)


def test_split_gains_count_every_tree_as_xgboost_does(stopped):
    from sapwood.importance import native_importance

    model, folder, _ = stopped
    path = folder / "model.json"
    score = xgb.Booster(model_file=str(path)).get_score(importance_type="total_gain")
    expected = [score.get(f"f{j}", 0.0) for j in range(4)]
    np.testing.assert_allclose(native_importance(path, "total_gain").importances_mean,
                               expected, rtol=1e-5)
