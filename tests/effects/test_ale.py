"""ale: PyALE's numbers on the same model and rows."""

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import GradientBoostingClassifier, RandomForestRegressor

import sapwood
from sapwood.effects import ale

PyALE = pytest.importorskip("PyALE")


def _frame(n=300, seed=0, ties=False):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(rng.normal(size=(n, 4)), columns=["a", "b", "c", "d"])
    if ties:
        frame["b"] = np.round(frame["b"], 1)
    frame["c"] = frame["a"] * 0.8 + 0.2 * rng.normal(size=n)  # correlated with a
    y = frame["a"] * frame["b"] + frame["c"] ** 2 + 0.1 * rng.normal(size=n)
    return frame, y.to_numpy()


def _pyale(model, frame, feature, **kwargs):
    import matplotlib

    matplotlib.use("Agg")
    return PyALE.ale(frame, model, [feature], feature_type="continuous", plot=False,
                     **kwargs)


@pytest.mark.parametrize("feature", ["a", "b", "c"])
@pytest.mark.parametrize(("grid_size", "ties"), [(20, False), (7, True), (50, True)])
def test_equals_pyale(feature, grid_size, ties):
    frame, y = _frame(ties=ties)
    model = RandomForestRegressor(30, max_depth=6, random_state=0).fit(frame, y)
    theirs = _pyale(model, frame, feature, grid_size=grid_size, include_CI=True, C=0.9)
    ours = ale(model, frame, feature, grid_size=grid_size, include_CI=True, C=0.9)
    np.testing.assert_allclose(ours.index.to_numpy(), theirs.index.to_numpy(), rtol=0)
    np.testing.assert_allclose(ours["eff"], theirs["eff"], rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(ours["size"], theirs["size"])
    for column in ("lowerCI_90%", "upperCI_90%"):
        np.testing.assert_allclose(ours[column], theirs[column], rtol=1e-12, atol=1e-12)
    assert list(ours.columns) == list(theirs.columns)


def test_equals_pyale_on_sapwoods_own_forest_and_an_array():
    frame, y = _frame(n=200, seed=2)
    model = sapwood.RandomForestRegressor(n_estimators=10, max_depth=5,
                                          random_state=0).fit(frame, y)
    theirs = _pyale(model, frame, "b", grid_size=10, include_CI=False)
    ours = ale(model, frame.to_numpy(), 1, grid_size=10)
    np.testing.assert_allclose(ours["eff"], theirs["eff"], rtol=1e-12, atol=1e-12)
    assert list(ours.columns) == ["eff", "size"]


def test_classifier_follows_the_positive_class_probability():
    frame, y = _frame()
    model = GradientBoostingClassifier(n_estimators=20, random_state=0).fit(frame, y > 0.5)

    class Probability:  # what PyALE needs to explain a classifier's probability
        def predict(self, X):
            return model.predict_proba(X)[:, 1]

    theirs = _pyale(Probability(), frame, "a", grid_size=10)
    ours = ale(model, frame, "a", grid_size=10)
    np.testing.assert_allclose(ours["eff"], theirs["eff"], rtol=1e-9, atol=1e-12)


def test_multiclass_needs_a_target_and_errors_name_the_parameter():
    frame, y = _frame(n=120)
    from sklearn.ensemble import RandomForestClassifier

    model = RandomForestClassifier(5, random_state=0).fit(frame, np.digitize(y, [0, 1]))
    with pytest.raises(ValueError, match=r"target must be one of the classes \[0, 1, 2\]"):
        ale(model, frame, "a")
    assert ale(model, frame, "a", target=2)["eff"].notna().all()
    with pytest.raises(ValueError, match="'grid_size' parameter of ale"):
        ale(model, frame, "a", grid_size=0, target=1)
    with pytest.raises(ValueError, match="'C' parameter of ale"):
        ale(model, frame, "a", C=1.5, target=1)
    with pytest.raises(ValueError, match="feature must be column names"):
        ale(model, frame, "zz", target=1)
