"""sapwood's survival trees and forests grow scikit-survival's trees (node for node, the
leaf functions bit for bit) and predict what scikit-survival predicts."""

import numpy as np
import pytest
from sklearn.base import clone

sksurv = pytest.importorskip("sksurv")

from sksurv.datasets import load_whas500  # noqa: E402
from sksurv.ensemble import ExtraSurvivalTrees as TheirExtra  # noqa: E402
from sksurv.ensemble import RandomSurvivalForest as TheirForest  # noqa: E402
from sksurv.metrics import concordance_index_censored  # noqa: E402
from sksurv.tree import SurvivalTree as TheirTree  # noqa: E402
from sksurv.util import Surv  # noqa: E402

from sapwood import ExtraSurvivalTrees, RandomSurvivalForest, SurvivalTree  # noqa: E402
from sapwood.learners._survival_data import StepFunction, harrell_concordance  # noqa: E402


@pytest.fixture(scope="module")
def whas500():
    X, y = load_whas500()
    return X.select_dtypes("number").to_numpy(np.float64), y


def simulated(censored, n=300, seed=0):
    """Exponential event times with hazard exp(x0 - x1), censored at random so that
    about ``censored`` of the rows are censored; times rounded to give ties."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    event_time = rng.exponential(np.exp(-(X[:, 0] - X[:, 1])))
    if censored == 0:
        return X, Surv.from_arrays(np.ones(n, bool), np.round(event_time, 2))
    # a censoring rate c of the event's: P(censored) = c / (1 + c)
    rate = censored / (1 - censored)
    censor_time = rng.exponential(np.exp(-(X[:, 0] - X[:, 1])) / rate)
    time = np.round(np.minimum(event_time, censor_time), 2)
    return X, Surv.from_arrays(event_time <= censor_time, time)


def assert_same_tree(ours, theirs):
    a, b = ours.tree_, theirs.tree_
    assert a.node_count == b.node_count
    for name in ("children_left", "children_right", "feature", "threshold",
                 "n_node_samples", "weighted_n_node_samples"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    np.testing.assert_array_equal(a.value, b.value)


@pytest.mark.parametrize("options", [
    {"random_state": 0},
    {"random_state": 1, "max_features": 3, "min_samples_leaf": 1, "min_samples_split": 2},
    {"random_state": 2, "splitter": "random", "max_depth": 6},
    {"random_state": 3, "min_samples_leaf": 0.05, "min_weight_fraction_leaf": 0.02},
    {"random_state": 4, "max_leaf_nodes": 12},
    {"random_state": 5, "max_leaf_nodes": 20, "splitter": "random", "max_depth": 5},
])
def test_tree_equals_sksurv(whas500, options):
    X, y = whas500
    ours = SurvivalTree(**options).fit(X, y)
    theirs = TheirTree(**options).fit(X, y)
    assert_same_tree(ours, theirs)
    np.testing.assert_array_equal(ours.unique_times_, theirs.unique_times_)
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))
    np.testing.assert_array_equal(ours.predict_survival_function(X, return_array=True),
                                  theirs.predict_survival_function(X, return_array=True))
    assert ours.tree_.gain[ours.tree_.children_left != -1].min() > 0


@pytest.mark.parametrize("censored", [0.0, 0.5, 0.9])
def test_censoring(censored):
    X, y = simulated(censored)
    assert abs(1 - y["event"].mean() - censored) < 0.1
    for splitter in ("best", "random"):
        ours = SurvivalTree(splitter=splitter, random_state=4).fit(X, y)
        assert_same_tree(ours, TheirTree(splitter=splitter, random_state=4).fit(X, y))
    ours = RandomSurvivalForest(n_estimators=3, random_state=5).fit(X, y)
    theirs = TheirForest(n_estimators=3, random_state=5).fit(X, y)
    for a, b in zip(ours.estimators_, theirs.estimators_, strict=True):
        assert_same_tree(a, b)


@pytest.mark.parametrize("Ours, Theirs", [(RandomSurvivalForest, TheirForest),
                                          (ExtraSurvivalTrees, TheirExtra)])
def test_forests_equal_sksurv(whas500, Ours, Theirs):
    X, y = whas500
    options = {"n_estimators": 6, "random_state": 0, "max_depth": 8, "oob_score": True}
    with pytest.warns(UserWarning, match="do not have OOB scores"):
        ours = Ours(**options).fit(X, y)
    with pytest.warns(UserWarning):
        theirs = Theirs(**options).fit(X, y)
    for a, b in zip(ours.estimators_, theirs.estimators_, strict=True):
        assert_same_tree(a, b)
    np.testing.assert_allclose(ours.predict(X), theirs.predict(X), rtol=1e-12)
    np.testing.assert_array_equal(
        ours.predict_cumulative_hazard_function(X, return_array=True),
        theirs.predict_cumulative_hazard_function(X, return_array=True))
    assert ours.oob_score_ == theirs.oob_score_
    ensemble = ours.to_ensemble()
    np.testing.assert_allclose(ensemble.predict(X), theirs.predict(X), rtol=1e-12)
    for t in range(ours.n_estimators):
        np.testing.assert_array_equal(ensemble.bootstrap.counts(t), ours.bootstrap_counts(t))
    functions = ours.predict_survival_function(X[:3])
    expected = theirs.predict_survival_function(X[:3])
    times = np.array([0.0, 1.5, 400.0, ours.unique_times_[-1]])
    for f, g in zip(functions, expected, strict=True):
        np.testing.assert_array_equal(f(times), g(times))


def test_scikit_learn_api(whas500):
    X, y = whas500
    forest = RandomSurvivalForest(n_estimators=2, max_depth=3, random_state=0)
    copy = clone(forest).fit(X, y)
    assert copy.get_params()["max_depth"] == 3 and len(copy) == 2
    assert 0.5 < copy.score(X, y) <= 1.0
    with pytest.raises(ValueError, match="structured array with two fields"):
        SurvivalTree().fit(X, y["lenfol"])
    with pytest.raises(ValueError, match="no event"):
        SurvivalTree().fit(X, Surv.from_arrays(np.zeros(len(y), bool), y["lenfol"]))
    with pytest.raises(ValueError, match="oob_score=True needs bootstrap=True"):
        RandomSurvivalForest(bootstrap=False, oob_score=True).fit(X, y)


def test_harrell_concordance_equals_sksurv():
    rng = np.random.default_rng(1)
    time = rng.integers(1, 30, 200).astype(float)
    event = rng.random(200) < 0.6
    estimate = np.round(rng.normal(size=200), 1)  # tied risks
    assert harrell_concordance(event, time, estimate) == pytest.approx(
        concordance_index_censored(event, time, estimate)[0], abs=1e-15)


def test_step_function():
    f = StepFunction(np.array([1.0, 2.0, 4.0]), np.array([0.9, 0.5, 0.1]))
    np.testing.assert_array_equal(f([0.0, 1.0, 1.5, 2.0, 4.0]), [0.9, 0.9, 0.9, 0.5, 0.1])
    with pytest.raises(ValueError, match="within"):
        f(5.0)
