"""ale of a pair: the second-order ALE, PyALE's (ALEPlot's) numbers on the same model
and rows; zero for a model additive in the pair."""

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import GradientBoostingRegressor, RandomForestRegressor

import sapwood
from sapwood.effects import ale

PyALE = pytest.importorskip("PyALE")


def _frame(n=400, seed=0):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(rng.uniform(-1, 1, size=(n, 3)), columns=["a", "b", "c"])
    y = frame["a"] * frame["b"] + frame["c"] + 0.1 * rng.normal(size=n)
    return frame, y.to_numpy()


def _pyale(model, frame, pair, grid_size):
    import matplotlib

    matplotlib.use("Agg")
    return PyALE.ale(frame, model, list(pair), grid_size=grid_size, plot=False)


@pytest.mark.parametrize(("n", "grid_size"), [(400, 5), (400, 10), (1000, 8)])
def test_equals_pyale(n, grid_size):
    frame, y = _frame(n)
    model = RandomForestRegressor(30, max_depth=6, random_state=0).fit(frame, y)
    theirs = _pyale(model, frame, ("a", "b"), grid_size)
    ours = ale(model, frame, ("a", "b"), grid_size=grid_size)
    assert ours.index.name == "a" and ours.columns.name == "b"
    np.testing.assert_allclose(ours.index.to_numpy(), theirs.index.to_numpy(), rtol=0)
    np.testing.assert_allclose(ours.columns.to_numpy(), theirs.columns.to_numpy(), rtol=0)
    np.testing.assert_allclose(ours.to_numpy(), theirs.to_numpy(), rtol=1e-10, atol=1e-12)


def test_equals_pyale_with_empty_cells():
    """b follows a closely: the cells far off the diagonal hold no rows and take the
    nearest non-empty cell's mean."""
    rng = np.random.default_rng(4)
    n = 500
    a = rng.uniform(-1, 1, size=n)
    frame = pd.DataFrame({"a": a, "b": a + 0.1 * rng.normal(size=n),
                          "c": rng.normal(size=n)})
    assert not ((frame["a"] < -0.5) & (frame["b"] > 0.5)).any()
    y = frame["a"] * frame["b"] + frame["c"]
    model = RandomForestRegressor(20, max_depth=5, random_state=0).fit(frame, y)
    theirs = _pyale(model, frame, ("a", "b"), 10)
    ours = ale(model, frame, ["a", "b"], grid_size=10)
    np.testing.assert_allclose(ours.to_numpy(), theirs.to_numpy(), rtol=1e-10, atol=1e-12)


def test_an_additive_model_has_no_second_order_effect():
    frame, _ = _frame(500, seed=1)
    y = np.sin(3 * frame["a"]) + frame["b"] ** 2 + frame["a"] * frame["c"]
    model = GradientBoostingRegressor(n_estimators=50, max_depth=1,  # stumps: additive
                                      random_state=0).fit(frame, y)
    table = ale(model, frame, ("a", "b"), grid_size=8)
    np.testing.assert_allclose(table.to_numpy(), 0.0, atol=1e-12)


def test_the_interaction_shows_and_sapwood_models_and_arrays_work():
    frame, y = _frame(600, seed=2)
    model = sapwood.RandomForestRegressor(n_estimators=20, max_depth=6,
                                          random_state=0).fit(frame, y)
    table = ale(model, frame.to_numpy(), [0, 1], grid_size=6)
    # a * b: high where both are high or both low, low on the other corners.
    assert table.iloc[-1, -1] > 0.1 and table.iloc[0, 0] > 0.1
    assert table.iloc[0, -1] < -0.1 and table.iloc[-1, 0] < -0.1


def test_refuses_three_features_and_a_constant():
    frame, y = _frame(100)
    model = RandomForestRegressor(5, random_state=0).fit(frame, y)
    with pytest.raises(ValueError, match="one feature or a pair"):
        ale(model, frame, ["a", "b", "c"])
    with pytest.raises(ValueError, match="constant"):
        ale(model, frame.assign(c=1.0), ["a", "c"])
