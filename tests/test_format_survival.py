"""The survival form of the tree format: vector leaves over times, the risk score, the
cumulative hazard and survival functions, a boosted model's baseline, validation and
the model file."""

import io

import numpy as np
import pytest

from sapwood import _persist
from sapwood._format import FormatError, TreeArrays, TreeEnsemble

TIMES = np.array([1.0, 2.0, 4.0])
EVENTS = np.array([True, False, True])


def _stump(value):
    value = np.asarray(value, dtype=np.float64)
    return TreeArrays(children_left=[1, -1, -1], children_right=[2, -1, -1],
                      feature=[0, -2, -2], threshold=[0.5, -2.0, -2.0], impurity=np.zeros(3),
                      n_node_samples=[4, 2, 2], weighted_n_node_samples=[4.0, 2.0, 2.0],
                      value=value, missing_go_to_left=np.zeros(3), operator=np.zeros(3),
                      n_features=1)


def _leaves(hazard):
    """Node values [cumulative hazard, survival] from cumulative hazards per node."""
    hazard = np.asarray(hazard, dtype=np.float64)
    return np.stack([hazard, np.exp(-hazard)], axis=-1)


HAZARDS = ([[0.1, 0.2, 0.5], [0.0, 0.1, 0.2], [0.3, 0.3, 0.9]],
           [[0.2, 0.2, 0.4], [0.1, 0.1, 0.1], [0.4, 0.5, 1.0]])
X = np.array([[0.0], [1.0]])


@pytest.fixture(scope="module")
def forest():
    trees = [_stump(_leaves(h)) for h in HAZARDS]
    return TreeEnsemble(trees=trees, task="survival", n_features=1, combine="mean",
                        times=TIMES, is_event_time=EVENTS)


def test_forest_functions_and_risk(forest):
    left = (np.array(HAZARDS[0][1]) + HAZARDS[1][1]) / 2
    right = (np.array(HAZARDS[0][2]) + HAZARDS[1][2]) / 2
    np.testing.assert_allclose(forest.predict_cumulative_hazard(X), [left, right])
    np.testing.assert_allclose(forest.predict_survival(X),
                               (np.exp(-np.array([HAZARDS[0][1], HAZARDS[0][2]]))
                                + np.exp(-np.array([HAZARDS[1][1], HAZARDS[1][2]]))) / 2)
    # the risk score sums the cumulative hazard over the event times only
    np.testing.assert_allclose(forest.predict(X), [left[0] + left[2], right[0] + right[2]])
    assert forest.has_survival_functions and forest.n_times == 3


def test_boosted_survival_model():
    trees = [_stump([[[0.0]], [[-0.5]], [[0.5]]]), _stump([[[0.0]], [[0.25]], [[-0.1]]])]
    baseline = np.array([0.1, 0.1, 0.3])
    model = TreeEnsemble(trees=trees, task="survival", n_features=1, combine="sum",
                         tree_weights=[0.1, 0.1], base_score=0.2, times=TIMES,
                         is_event_time=EVENTS, baseline_cumulative_hazard=baseline)
    risk = 0.2 + 0.1 * np.array([-0.5 + 0.25, 0.5 - 0.1])
    np.testing.assert_allclose(model.predict(X), risk)
    np.testing.assert_allclose(model.predict_cumulative_hazard(X),
                               np.exp(risk)[:, None] * baseline)
    np.testing.assert_allclose(model.predict_survival(X), np.exp(-np.exp(risk)[:, None] * baseline))


def test_risk_only_models_say_they_have_no_functions():
    model = TreeEnsemble(trees=[_stump([1.0, 0.5, 2.0])], task="survival", n_features=1)
    np.testing.assert_allclose(model.predict(X), [0.5, 2.0])
    assert not model.has_survival_functions
    with pytest.raises(ValueError, match="low_memory=True"):
        model.predict_survival(X)
    boosted = TreeEnsemble(trees=[_stump([0.0, 0.5, 2.0])], task="survival", n_features=1,
                           combine="sum", link="exp")
    np.testing.assert_allclose(boosted.predict(X), np.exp([0.5, 2.0]))
    with pytest.raises(ValueError, match="no baseline hazard"):
        boosted.predict_cumulative_hazard(X)
    regression = TreeEnsemble(trees=[_stump([0.0, 0.5, 2.0])], task="regression", n_features=1)
    with pytest.raises(ValueError, match="needs a survival model"):
        regression.predict_survival(X)


@pytest.mark.parametrize("change, message", [
    ({"times": [1.0, 1.0, 2.0]}, "strictly increasing"),
    ({"times": [1.0, 2.0]}, "shape"),
    ({"is_event_time": [True, False]}, "is_event_time"),
    ({"link": "logistic"}, "link"),
    ({"base_score": 1.0}, "no base score"),
    ({"baseline_cumulative_hazard": [0.1, 0.2, 0.3]}, "boosted"),
    ({"task": "regression"}, "survival model's field"),
])
def test_validation(change, message):
    fields = dict(trees=[_stump(_leaves(HAZARDS[0]))], task="survival", n_features=1,
                  times=TIMES, is_event_time=EVENTS)
    fields.update(change)
    with pytest.raises(FormatError, match=message):
        TreeEnsemble(**fields)


def test_model_file_round_trip(forest):
    boosted = TreeEnsemble(trees=[_stump([0.0, -0.5, 0.5])], task="survival", n_features=1,
                           combine="sum", times=TIMES, is_event_time=EVENTS,
                           baseline_cumulative_hazard=[0.1, 0.1, 0.3])
    risk_only = TreeEnsemble(trees=[_stump([1.0, 0.5, 2.0])], task="survival", n_features=1)
    for model in (forest, boosted, risk_only):
        buffer = io.BytesIO()
        _persist.save(model, buffer)
        loaded = _persist._load_bytes(buffer.getvalue())
        assert loaded.task == "survival"
        np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
        if model.has_survival_functions:
            np.testing.assert_array_equal(loaded.times, model.times)
            np.testing.assert_array_equal(loaded.is_event_time, model.is_event_time)
            np.testing.assert_array_equal(loaded.predict_survival(X), model.predict_survival(X))
        else:
            assert loaded.times is None


def test_risk_model_predicts_the_risk_score(forest):
    risk = forest.risk_model()
    assert risk.task == "regression" and risk.trees[0].value.shape == (3, 1, 1)
    np.testing.assert_allclose(risk.predict(X), forest.predict(X))
