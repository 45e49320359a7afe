"""scikit-survival's tree models read into the survival tree format: the risk score,
cumulative hazard and survival function equal scikit-survival's own, and a random
survival forest's bootstrap draws its out-of-bag rows."""

import io

import numpy as np
import pytest

sksurv = pytest.importorskip("sksurv")

from sksurv.datasets import load_whas500  # noqa: E402
from sksurv.ensemble import (  # noqa: E402
    ComponentwiseGradientBoostingSurvivalAnalysis,
    ExtraSurvivalTrees,
    GradientBoostingSurvivalAnalysis,
    RandomSurvivalForest,
)
from sksurv.tree import SurvivalTree  # noqa: E402

from sapwood import _persist  # noqa: E402
from sapwood.adapters import from_model  # noqa: E402


@pytest.fixture(scope="module")
def whas500():
    X, y = load_whas500()
    return X.select_dtypes("number").to_numpy(np.float64), y


def _relative(actual, expected):
    return np.max(np.abs(actual - expected) / np.maximum(np.abs(expected), 1e-300))


MODELS = {
    "tree": lambda: SurvivalTree(max_depth=5, min_samples_leaf=3, random_state=0),
    "forest": lambda: RandomSurvivalForest(n_estimators=4, max_depth=4, random_state=0),
    "extra": lambda: ExtraSurvivalTrees(n_estimators=4, max_depth=4, max_features=0.5,
                                        random_state=1),
    "boosting": lambda: GradientBoostingSurvivalAnalysis(n_estimators=8, max_depth=2,
                                                         random_state=0),
    "dropout": lambda: GradientBoostingSurvivalAnalysis(n_estimators=8, dropout_rate=0.3,
                                                        subsample=0.8, random_state=0),
}


@pytest.mark.parametrize("name", MODELS)
def test_predictions_equal_sksurv(whas500, name):
    X, y = whas500
    model = MODELS[name]().fit(X, y)
    ensemble = from_model(model)
    assert ensemble.task == "survival" and ensemble.kind.library == "sksurv"
    assert _relative(ensemble.predict(X), model.predict(X)) <= 1e-9
    hazard = model.predict_cumulative_hazard_function(X, return_array=True)
    survival = model.predict_survival_function(X, return_array=True)
    assert _relative(ensemble.predict_cumulative_hazard(X), hazard) <= 1e-9
    assert _relative(ensemble.predict_survival(X), survival) <= 1e-9
    times = model.unique_times_
    np.testing.assert_array_equal(ensemble.times, times)
    buffer = io.BytesIO()
    _persist.save(ensemble, buffer)
    loaded = _persist._load_bytes(buffer.getvalue())
    np.testing.assert_array_equal(loaded.predict_survival(X), ensemble.predict_survival(X))


def test_forest_bootstrap_gives_sksurv_out_of_bag_rows(whas500):
    from sklearn.ensemble._forest import _generate_unsampled_indices

    X, y = whas500
    model = RandomSurvivalForest(n_estimators=3, max_depth=3, random_state=5).fit(X, y)
    bootstrap = from_model(model).bootstrap
    assert bootstrap is not None
    for t, tree in enumerate(model.estimators_):
        expected = _generate_unsampled_indices(tree.random_state, X.shape[0], X.shape[0], None)
        np.testing.assert_array_equal(np.flatnonzero(bootstrap.counts(t) == 0), expected)


def test_risk_only_models(whas500):
    X, y = whas500
    forest = RandomSurvivalForest(n_estimators=2, max_depth=3, low_memory=True,
                                  random_state=0).fit(X, y)
    ensemble = from_model(forest)
    assert _relative(ensemble.predict(X), forest.predict(X)) <= 1e-9
    assert not ensemble.has_survival_functions
    with pytest.raises(ValueError, match="low_memory=True"):
        ensemble.predict_cumulative_hazard(X)
    timed = GradientBoostingSurvivalAnalysis(loss="ipcwls", n_estimators=5,
                                             random_state=0).fit(X, y)
    assert _relative(from_model(timed).predict(X), timed.predict(X)) <= 1e-9


def test_componentwise_boosting_is_refused(whas500):
    X, y = whas500
    model = ComponentwiseGradientBoostingSurvivalAnalysis(n_estimators=3).fit(X, y)
    with pytest.raises(TypeError, match="linear models, not trees"):
        from_model(model)
